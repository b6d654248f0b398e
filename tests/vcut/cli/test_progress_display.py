"""The --progress display of the command line (vcut/cli/_progress.py)."""

import argparse
import io

import pytest

from vcut.cli._progress import LINE_EVERY, add_progress_option, format_progress, progress_sink


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _args(*argv, json=False):
    ap = argparse.ArgumentParser()
    add_progress_option(ap)
    ns = ap.parse_args(list(argv))
    ns.json = json
    return ns


def test_format_progress():
    assert format_progress("partition", 4_100_000, 10_000_000, "edges", 1.78) == \
        "partition [#########...............]  41%  2.3 M edges/s  ETA 0:03"
    assert format_progress("simulation", 123, 10**6, "tasks", 0.5, bar=False) == \
        "simulation: 123 of 1,000,000 tasks   0%  246 tasks/s  ETA 1:07:45"
    assert format_progress("x", 0, 10, "tasks", 0.0) == \
        "x [........................]   0%  0 tasks/s  ETA ?"
    assert format_progress("x", 10, 10, "tasks", 2.0) == \
        "x [########################] 100%  5 tasks/s  ETA 0:00"


def test_auto_is_a_bar_on_a_terminal_only_and_never_with_json():
    assert progress_sink(_args(), io.StringIO()) is None
    assert progress_sink(_args(), _Tty(), ) is not None
    assert progress_sink(_args(json=True), _Tty()) is None
    assert progress_sink(_args("--progress", "none"), _Tty()) is None
    assert progress_sink(_args("--progress", "lines"), io.StringIO()) is not None


def test_the_bar_is_redrawn_in_place_and_erased_at_the_end():
    out = _Tty()
    sink = progress_sink(_args("--progress", "bar"), out)
    sink("partition", 5, 10, "edges", 1.0, False)
    sink("partition", 10, 10, "edges", 2.0, True)
    assert out.getvalue() == ("\r  partition [############............]  50%  5 edges/s  ETA 0:01"
                              "\x1b[K\r\x1b[K")


def test_plain_lines_come_every_few_seconds():
    out = io.StringIO()
    sink = progress_sink(_args("--progress", "lines"), out)
    for t in (0.1, LINE_EVERY - 0.1, LINE_EVERY + 0.1, LINE_EVERY + 1, 2 * LINE_EVERY + 0.2):
        sink("simulation", int(100 * t), 10**4, "tasks", t, False)
    sink("simulation", 10**4, 10**4, "tasks", 30.0, True)
    lines = out.getvalue().splitlines()
    assert lines == [format_progress("simulation", int(100 * t), 10**4, "tasks", t, bar=False)
                     for t in (LINE_EVERY + 0.1, 2 * LINE_EVERY + 0.2)]


def test_a_bad_mode_is_refused():
    with pytest.raises(SystemExit):
        _args("--progress", "sometimes")


def test_partition_reports_plain_lines_of_its_kernel(tmp_path, monkeypatch, capsys):
    import re

    import numpy as np

    from vcut_base import progress
    from vcut.cli import _progress, main

    rng = np.random.default_rng(1)
    m = 1 << 20
    np.savetxt(tmp_path / "g.txt", np.stack([rng.integers(0, 50_000, m),
                                             rng.integers(50_000, 100_000, m)], 1), fmt="%d")
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # report at every look
    monkeypatch.setattr(_progress, "LINE_EVERY", 0.0)  # and print every report
    assert main(["partition", str(tmp_path / "g.txt"), "-p", "4", "--progress", "lines",
                 "-o", str(tmp_path / "a.txt")]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [x for x in err if x.startswith("partition: ")]
    assert lines and len(lines) == len([x for x in err if "ETA" in x])
    m_simple = None
    done = []
    for line in lines:
        got = re.fullmatch(r"partition: ([\d,]+) of ([\d,]+) edges +(\d+)%  .* edges/s  ETA \S+",
                           line)
        assert got, line
        done.append(int(got.group(1).replace(",", "")))
        m_simple = int(got.group(2).replace(",", ""))
    assert done == sorted(done) and done[-1] <= m_simple <= m
