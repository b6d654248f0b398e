"""Progress display of the compiled phases (`vcut_base.progress` sinks).

``--progress bar`` (the default on a terminal): one line redrawn in place,
``  partition [########............]  41%  2.3 M edges/s  ETA 0:04``, erased
when the phase ends. ``--progress lines`` (for logs): a plain line when a
phase has run for `LINE_EVERY` seconds and every `LINE_EVERY` seconds after.
``--progress none`` (the default otherwise): nothing.
"""

import sys

__all__ = ["LINE_EVERY", "add_progress_option", "format_progress", "progress_sink"]

#: Seconds between two plain progress lines (and before the first).
LINE_EVERY = 5.0
_BAR = 24


def add_progress_option(parser):
    """``--progress`` on ``parser`` (a parser or one of its groups)."""
    parser.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                        help="progress of long phases on stderr: bar (redrawn in place), lines "
                        "(for logs) or none (default auto: a bar on a terminal, else none; none "
                        "with --json)")


def _rate(x):
    for div, suffix in ((1e9, " G "), (1e6, " M "), (1e3, " k ")):
        if x >= div:
            return f"{x / div:.1f}{suffix}"
    return f"{x:.0f} "


def _clock(seconds):
    s = round(seconds)
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def format_progress(name, done, total, unit, elapsed, bar=True):
    """One progress line: bar (or counts), percent, rate and ETA."""
    frac = min(done / total, 1.0) if total > 0 else 1.0
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = _clock((total - done) / rate) if rate > 0 else "?"
    if bar:
        filled = int(frac * _BAR)
        head = f"{name} [{'#' * filled}{'.' * (_BAR - filled)}]"
    else:
        head = f"{name}: {done:,} of {total:,} {unit}"
    return f"{head} {100 * frac:3.0f}%  {_rate(rate)}{unit}/s  ETA {eta}"


def progress_sink(args, stream=None):
    """The sink ``--progress`` asks for (None: no display)."""
    stream = sys.stderr if stream is None else stream
    mode = getattr(args, "progress", "auto")
    if mode == "auto":
        mode = "bar" if stream.isatty() and not getattr(args, "json", False) else "none"
    if mode == "bar":
        return _bar(stream)
    if mode == "lines":
        return _lines(stream)
    return None


def _bar(stream):
    shown = [False]

    def sink(name, done, total, unit, elapsed, final):
        if final:
            if shown[0]:
                stream.write("\r\x1b[K")
                stream.flush()
                shown[0] = False
            return
        stream.write("\r  " + format_progress(name, done, total, unit, elapsed) + "\x1b[K")
        stream.flush()
        shown[0] = True

    return sink


def _lines(stream):
    last = {}

    def sink(name, done, total, unit, elapsed, final):
        if final:
            last.pop(name, None)
            return
        if elapsed < LINE_EVERY or elapsed - last.get(name, 0.0) < LINE_EVERY:
            return
        last[name] = elapsed
        stream.write(format_progress(name, done, total, unit, elapsed, bar=False) + "\n")
        stream.flush()

    return sink
