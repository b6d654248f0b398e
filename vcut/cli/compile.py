"""``vcut compile``: compile every cached kernel once, so later commands start warm."""

import contextlib
import io
import os
import signal
import sys
import tempfile
import time

from vcut_base.errors import InputError

from ._common import add_common, int_option, print_json, print_rows
from ._progress import format_progress

__all__ = ["register", "run"]

#: vcut.warmup.GROUPS, spelled out so that ``vcut --help`` imports no library module
GROUPS = ("formats", "partition", "multilevel", "traversal", "schedule", "programs")


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    co = sub.add_parser(
        "compile",
        help="compile every kernel once, ahead of the first run (numba's on-disk cache)",
        description="Run tiny workloads through every command path (each graph format, every "
        "partitioner, BFS/SSSP, MST, the scheduler, trace and analyze of a sample) so that "
        "numba compiles and caches every kernel now; later commands then start warm. The "
        "cache is NUMBA_CACHE_DIR, else __pycache__ beside the kernel modules.",
    )
    co.add_argument("--only", metavar="GROUP,...", type=_groups,
                    help=f"compile the kernels of these workload groups only: {', '.join(GROUPS)}")
    co.add_argument("--jobs", metavar="N", type=int_option("--jobs", 1, 64),
                    help="compile in up to N processes, the groups shared among them "
                    "(default: the CPUs this process may use)")
    co.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                    help="progress on stderr: a bar redrawn in place, a line per workload, or "
                    "none (default auto: a bar on a terminal, lines otherwise, none with --json)")
    add_common(co)
    co.set_defaults(func=run)


def _groups(text):
    names = [g.strip() for g in text.split(",") if g.strip()]
    unknown = [g for g in names if g not in GROUPS]
    if unknown or not names:
        raise InputError(f"--only: unknown group {', '.join(unknown) or repr(text)}; use "
                         f"{', '.join(GROUPS)}")
    return names


@contextlib.contextmanager
def _quiet_descriptors():
    """Descriptors 1 and 2 into a scratch file for the block: what a traced program
    prints (vcut passes its output on) is no part of vcut compile's."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with tempfile.TemporaryFile() as scratch:
            os.dup2(scratch.fileno(), 1)
            os.dup2(scratch.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        os.close(saved[0])
        os.close(saved[1])


def _commands(main):
    """``run(argv)`` for `vcut.warmup.warm_up`: one workload through the command line's
    ``main`` (which hands itself over as ``args.vcut_main``: this module is one of its
    own), its output kept; returns ``(status, last error line)``."""

    def run(argv):
        err = io.StringIO()
        with _quiet_descriptors(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err):
            code = main(argv)
        if code == 143:  # the signal that ended the workload ends vcut compile
            signal.raise_signal(signal.SIGTERM)
        if code in (130, 143):
            raise KeyboardInterrupt()
        lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("error:")]
        return code, lines[-1][len("error: "):] if lines else None

    return run


def _display(mode, stream):
    """``step(k, total, workload, seconds)`` for `vcut.warmup.warm_up`, or None."""
    if mode == "none":
        return None
    bar = mode == "bar"
    t0 = time.perf_counter()

    def step(k, total, w, seconds):
        if bar:
            line = format_progress("compile", k, total, "workloads", time.perf_counter() - t0)
            stream.write(f"\r  {line}  {w.name}\x1b[K")
            if k == total and seconds is not None:
                stream.write("\r\x1b[K")
        elif seconds is not None:
            stream.write(f"[{k}/{total}] {w.name}: {seconds:.1f} s\n")
        stream.flush()

    return step


def run(args, program_args):
    from vcut.warmup import warm_up  # lazy: start-up
    from vcut_base.ahead import cores

    mode = args.progress
    if mode == "auto":
        mode = "none" if args.json else ("bar" if sys.stderr.isatty() else "lines")
    jobs = args.jobs or cores()
    done = warm_up(_commands(args.vcut_main), args.only, _display(mode, sys.stderr), jobs)
    if args.json:
        print_json(done.to_dict())
        return 0
    print_rows([
        ("workloads", f"{done.workloads}"),
        ("kernels compiled", f"{done.compiled:,} signatures (now in numba's cache)"),
        ("kernels loaded", f"{done.loaded:,} signatures (already in the cache)"),
        ("time", f"{done.seconds:.1f} s"),
        ("cache", done.cache_dir),
    ])
    return 0
