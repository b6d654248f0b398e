"""Time one ``vcut`` command inside a warm process, beside bench_cli.py's whole-command runs.

Usage: python bench/_inprocess.py REPEAT OUTROOT -- ARG... (``{out}`` in an argument: a fresh
empty directory per run, under OUTROOT)

Imports the command line once (`vcut.cli.main`), runs the command once untimed (imports on
first use, cache loading), then REPEAT times, each call timed from the call to its return,
its stdout and stderr discarded. Prints one JSON line: the walls, their median, min and
max, and the exit status. This is the in-process figure of a command: what the library
call costs once the process is warm, without interpreter start-up, imports and exit.
"""

import contextlib
import json
import os
import shutil
import statistics
import sys
import time


def main(argv):
    repeat, root, sep, args = int(argv[0]), argv[1], argv[2], argv[3:]
    if sep != "--":
        raise SystemExit("usage: python bench/_inprocess.py REPEAT OUTROOT -- ARG...")
    from vcut.cli import main as cli

    walls, rc = [], 0
    with open(os.devnull, "w") as sink:
        for i in range(repeat + 1):
            out = os.path.join(root, f"run{i}")
            os.makedirs(out)
            call = [a.replace("{out}", out) for a in args]
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                t0 = time.perf_counter()
                try:
                    rc = cli(call) or 0
                except SystemExit as exc:  # argparse's --help and usage errors
                    rc = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
                wall = time.perf_counter() - t0
            shutil.rmtree(out, ignore_errors=True)
            if rc:
                break
            if i:
                walls.append(round(wall, 4))
    print(json.dumps({"rc": rc, "walls_s": walls,
                      "median_s": round(statistics.median(walls), 4) if walls else None,
                      "min_s": min(walls, default=None), "max_s": max(walls, default=None)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
