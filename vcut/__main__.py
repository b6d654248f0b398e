"""The ``vcut`` program: the console script (`run`) and ``python -m vcut``.

`vcut.cli.main` is the command line as a function (the tests and ``vcut compile``
call it); `run` is the program around it, which owns the process and so may do
what a library must not:

* the garbage collector is paused while the command line's modules are imported
  (numba's start-up makes ~10^5 objects and no garbage; the collections it would
  trigger cost ~25 ms of a 0.6 s command), then the imported objects are frozen
  out of later collections (`gc.freeze`);
* when the command is done, the program ends without tearing the interpreter
  down: stdout and stderr are flushed, the ``atexit`` handlers run (temporary
  directories, logging, multiprocessing), then ``os._exit``. Freeing numba's and
  LLVM's objects one by one at the interpreter's exit costs 0.1-0.15 s, a fifth
  of a warm ``vcut partition``, for memory the process gives back anyway. Where
  another non-daemon thread still runs, or a stream cannot be flushed, the
  interpreter's own exit is taken instead (it joins the thread; it reports the
  stream).

``bench/bench_cli.py`` measures the command as users run it, this included.
"""

import atexit
import gc
import os
import sys
import threading


def run():
    """Run the ``vcut`` command line as a program; never returns."""
    gc.disable()
    try:
        from vcut.cli import main  # lazy: imported with the collector paused (docstring)
    finally:
        gc.enable()
    gc.freeze()
    code = main()
    _leave(0 if code is None else code)


def _leave(code):
    """End the process with ``code``, skipping the interpreter's teardown where safe."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or failing stream: the interpreter's exit reports it
        sys.exit(code)
    main_thread = threading.main_thread()
    if any(t is not main_thread and t.is_alive() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)  # the interpreter joins them first
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
