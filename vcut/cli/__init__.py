"""The ``vcut`` command line: a thin layer that parses arguments and calls the
packages' APIs. Each subcommand lives in its own module of this package with
``register(sub)`` (its parser) and ``run(args, program_args)`` (its action).

Conventions shared by every subcommand:

* ``--json`` prints exactly one JSON object with the command's results on
  stdout (nothing else goes to stdout then);
* errors print one line ``error: ...`` on stderr (the compiler's own
  diagnostics above it when there are any) and exit non-zero with the
  error's code; ``--verbose`` adds the Python traceback; with ``--json``,
  stdout then carries ``{"error": MESSAGE, "exit_code": CODE}`` instead of
  the results;
* outputs are written to a temporary file and renamed, so a failed run
  leaves nothing half-written; an output that is one of the inputs is refused
  before any work (see `vcut_base.atomic` for what ``-o`` accepts);
* SIGINT and SIGTERM end the run with ``error: interrupted`` (exit 130) or
  ``error: terminated`` (exit 143), no traceback, and with ``--json`` the same
  error object on stdout as every other error; a closed stdout (``| head``)
  ends it quietly with exit 141;
* long runs show progress on stderr when it is a terminal;
* the ``vcut`` program watches the machine's memory (`vcut_base.oom.MemoryGuard`):
  when it runs short while vcut holds a large share of it, vcut ends with
  ``error: out of memory ...`` and exit 11 before the kernel's out-of-memory
  killer would end it without a word (``VCUT_MEMORY_RESERVE=0`` turns this off).
"""

import _thread
import atexit
import contextlib
import json
import os
import shlex
import signal
import sys
import threading
import traceback

from vcut_base import memory
from vcut_base.ahead import cold, spawn
from vcut_base.errors import OutOfMemory, VcutError
from vcut_base.oom import MemoryGuard
from vcut_base.progress import noting_compiles, reporting

from . import (analyze, batch, compare, datasets, graph, mst, partition, schedule, stats,
               trace, traverse)
from . import compile as compile_kernels
from ._parser import UsageError, command_parser
from ._progress import progress_sink

__all__ = ["main", "build_parser"]

#: Subcommand modules in the order of ``vcut --help``.
COMMANDS = (trace, graph, stats, partition, analyze, batch, compare, traverse, mst, schedule,
            datasets, compile_kernels)

#: Said once on stderr when a command starts compiling kernels (numba's cache is cold).
COMPILE_NOTE = "compiling kernels, first run only (vcut compile does it ahead)"


def build_parser():
    """The ``vcut`` parser of every subcommand (`COMMANDS`)."""
    return command_parser([module.register for module in COMMANDS])


def main(argv=None):
    """Run the ``vcut`` command line; returns the exit status.

    One SIGTERM (and, for the ``vcut`` program itself, one SIGINT) ends the
    command with exit 143 (130); the handler disarms itself at the first
    signal and when the command returns, so a late or second signal cannot
    turn the exit into a traceback. With ``argv`` None (the program) the
    signals stay ignored until the process ends; a call with ``argv``
    restores the previous handlers instead.
    """
    entry = argv is None
    outer = _SIGNALS.armed  # a main inside a running one (vcut compile's workloads)
    previous = _install(entry)
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        program_args = []
        if "--" in argv:
            k = argv.index("--")
            argv, program_args = argv[:k], argv[k + 1 :]
        parser = build_parser()
        args = None
        try:
            args = parser.parse_args(argv)  # option types raise InputError for bad numbers
            args.command_line = argv  # as typed, for messages that correct it
            args.vcut_main = main  # for a command that runs others (vcut compile's workloads)
            note = _compile_note(entry, args)
            if note is not None:
                note.early()
            with reporting(progress_sink(args)), noting_compiles(note), \
                    _memory_guard(entry, args.command, argv):
                code = args.func(args, program_args)
            if entry:  # a reader gone by now is found here, not at the interpreter's exit
                sys.stdout.flush()
            return code
        except BrokenPipeError:
            return _closed_stdout()
        except UsageError as exc:
            message = _program_arguments(exc, argv, program_args) or str(exc)
            print(f"error: {message}", file=sys.stderr)
            _json_error(argv, message, 2)
            return 2
        except (VcutError, MemoryError) as caught:
            exc = (_out_of_memory(getattr(args, "command", None))
                   if isinstance(caught, MemoryError) else caught)
            if exc.details:
                print(exc.details, file=sys.stderr)
            if getattr(args, "verbose", False):
                traceback.print_exc()
            print(f"error: {exc.message}", file=sys.stderr)
            _json_error(argv, exc.message, exc.exit_code)
            return exc.exit_code
    except (KeyboardInterrupt, Terminated, Exception) as exc:
        stop = _interruption(exc)
        if stop is None:
            raise
        _SIGNALS.armed = False
        message, code = ("interrupted", 130) if isinstance(stop, KeyboardInterrupt) \
            else ("terminated", 143)
        print(f"error: {message}", file=sys.stderr)
        try:  # argv is None when the signal came before it was read
            _json_error(sys.argv[1:] if argv is None else argv, message, code)
        except BrokenPipeError:
            return _closed_stdout()
        return code
    finally:
        # First statement of every way out (no call before it, so no signal
        # handler can run in between): from here on a signal is ignored.
        _SIGNALS.armed = False
        if entry:
            _ignore_late_signals()
        elif previous is not None:
            _restore(previous)
        if outer and not entry:  # the running main's signals interrupt it again
            _SIGNALS.armed = True


def _compile_note(entry, args):
    """What runs when the first kernel is compiled rather than loaded (a cold numba cache;
    `vcut_base.progress.noting_compiles`), for the ``vcut`` program itself (not a call of
    `main` from Python, nor vcut compile's own workloads): `COMPILE_NOTE` on stderr
    unless VCUT_COMPILE_NOTE=0, and the helper that compiles the command's later kernels
    beside it (`vcut_base.ahead.spawn`; VCUT_COMPILE_AHEAD=0 turns it off) where the
    command has a manifest (`ahead_manifest`)."""
    if not entry or args.command == "compile":
        return None
    say = os.environ.get("VCUT_COMPILE_NOTE") != "0"
    manifest = ahead_manifest(args)

    def helper():
        started = spawn(manifest) if manifest is not None else None
        if started is not None:
            atexit.register(_stop_helper, started)

    def note():
        helper()
        if say:
            sys.stderr.write(COMPILE_NOTE + "\n")
            sys.stderr.flush()

    def early():  # a cold cache seen before the first compile: the helper starts now
        if manifest is not None and cold(manifest):
            helper()

    note.early = early
    return note


#: The folder of the manifests of `vcut_base.ahead`: the kernels a command compiles on a
#: first run, in order, recorded by ``python -m vcut_base.ahead record``.
AHEAD_DIR = os.path.join(os.path.dirname(__file__), "ahead")


def ahead_manifest(args):
    """The manifest of `vcut_base.ahead` for the command ``args``: ``COMMAND.txt`` in
    `AHEAD_DIR` (``analyze.txt`` for ``vcut analyze``), ``partition-ALGO.txt`` for ``vcut
    partition --algo ALGO``; None where there is none."""
    name = args.command
    if name == "partition":
        name = f"partition-{getattr(args, 'algo', '')}"
    path = os.path.join(AHEAD_DIR, f"{name}.txt")
    return path if os.path.isfile(path) else None


def _stop_helper(helper):
    """At the command's exit: end the helper of `vcut_base.ahead`, whose work (the kernels
    this command did not need yet) is of no use now. numba writes each cache file whole
    or not at all, so a kill at any time leaves the cache sound."""
    if helper.poll() is None:
        helper.kill()
        helper.wait()


#: The commands that run a program, and so take its arguments after ``--``.
_RUN_PROGRAMS = ("trace", "graph", "analyze", "compare")


def _program_arguments(exc, argv, program_args):
    """For words argparse left over that are no options (``vcut trace p.c -o t.npz 20``)
    of a command that runs programs: that program arguments go after ``--``, with the
    corrected command; else None."""
    words = exc.unrecognized
    if (not words or any(w.startswith("-") for w in words) or not argv
            or argv[0] not in _RUN_PROGRAMS):
        return None
    rest = list(argv)
    for w in reversed(words):  # argparse lists them in order; the last ones are theirs
        k = len(rest) - 1 - rest[::-1].index(w) if w in rest else None
        if k is None or k == 0:
            return None
        del rest[k]
    return (f"vcut {rest[0]}: unrecognized arguments: {shlex.join(words)}; program arguments "
            f"go after --: vcut {shlex.join([*rest, '--', *words, *program_args])}")


def _closed_stdout():
    """The reader of stdout went away (``vcut ... | head``): no traceback and no error
    line; stdout goes to /dev/null so that no later flush fails; exit 141, as a
    process ended by SIGPIPE (which Python ignores)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # stdout is no file (a test's capture)
        pass
    return 141


def _interruption(exc):
    """The SIGINT / SIGTERM behind ``exc``, or None.

    The signal's exception is raised wherever the main thread is; inside the
    initialisation of an extension module (an ``import`` of scipy, say) it
    comes out as an ``ImportError`` whose cause is the signal's exception.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


#: what each command can do with less memory (`_out_of_memory`); the rest: a larger machine
_LESS_MEMORY = {
    "trace": "trace fewer instructions (--max-instructions) or a region (--roi FUNC)",
    "analyze": "analyse a slice (--window START:END), trace fewer instructions "
               "(--max-instructions) or a region (--roi FUNC), keep the large arrays on disk "
               "(--spill DIR), use fewer clusters (-p)",
    "partition": "use fewer parts (-p); a vertex cut can keep its edge arrays on disk "
                 "(--spill DIR) or hold the graph on a cluster (--out-of-core --workers N)",
    "batch": "run fewer jobs at once (--workers N)",
    "schedule": "give the job a smaller --size or more sub-loads (--units)",
}
_LESS_MEMORY["graph"] = _LESS_MEMORY["trace"]
_LESS_MEMORY["compare"] = _LESS_MEMORY["analyze"]


def _out_of_memory(command=None):
    """The `OutOfMemory` error a ``MemoryError`` in any phase of ``command`` becomes: the
    memory available now and what that command can do with less."""
    return OutOfMemory(
        f"out of memory ({memory.format_bytes(memory.available_bytes())} available now); "
        + _less_memory(command))


def _less_memory(command):
    """What ``command`` can do with less memory (`_LESS_MEMORY`), or a larger machine."""
    advice = _LESS_MEMORY.get(command)
    return f"{advice}, or use a machine with more memory" if advice \
        else "use a machine with more memory"


def _memory_guard(entry, command, argv):
    """For the ``vcut`` program itself (not a call of `main` from Python, whose process
    is not vcut's to end): a `MemoryGuard` that ends the process with one line and exit 11
    when memory runs short (`memory_exhausted`)."""
    if not entry:
        return contextlib.nullcontext()
    return MemoryGuard(lambda available, resident:
                       memory_exhausted(command, argv, available, resident))


def memory_exhausted(command, argv, available, resident, *, leave=os._exit):
    """Print why the process stops (one line; with ``--json`` the error object too), then
    end it with exit 11 (`leave`): called by the memory guard's thread, while the main
    thread may be inside compiled code that no exception can interrupt."""
    message = (f"out of memory: {memory.format_bytes(available)} left on this machine while "
               f"vcut held {memory.format_bytes(resident)}; stopped before the system would "
               "end it; " + _less_memory(command))
    try:
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.flush()
        _json_error(argv, message, OutOfMemory.exit_code)
    except (OSError, ValueError):
        pass  # a closed stream: the exit status still says it
    finally:
        leave(OutOfMemory.exit_code)


def _json_error(argv, message, code):
    """With --json, a failure is a JSON object on stdout too (scripts read one object)."""
    if "--json" in argv:
        sys.stdout.write(json.dumps({"error": message, "exit_code": code}) + "\n")
        sys.stdout.flush()


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread, as SIGINT raises KeyboardInterrupt."""


class _Signals:
    """Whether a SIGINT / SIGTERM still interrupts the command (`main` is running)."""

    armed = False
    resending = False  # inside `_unraisable`: a signal now is sent again
    hook = staticmethod(sys.__unraisablehook__)  # the unraisablehook `_install` replaced


_SIGNALS = _Signals()


def _on_signal(signum, frame):
    """Interrupt the command once: the handler disarms itself, so a second signal
    cannot interrupt the exit, and a signal after `main` has finished is ignored."""
    if not _SIGNALS.armed:
        return
    if _SIGNALS.resending:
        _send_again(signum)
        return
    _SIGNALS.armed = False
    raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated()


def _send_again(signum):
    """Send ``signum`` to this process from a new thread (whose start is not
    waited for), so its handler runs in the main thread's next Python code."""
    _thread.start_new_thread(os.kill, (os.getpid(), signum))


def _install(entry):
    """Arm `_on_signal` for SIGTERM (and SIGINT for the ``vcut`` program itself),
    with `_unraisable` as ``sys.unraisablehook``.

    Returns what to put back when `main` returns: nothing for the program
    itself (its disarmed handlers ignore late signals until the process ends),
    nor outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None
    signals = (signal.SIGINT, signal.SIGTERM) if entry else (signal.SIGTERM,)
    previous = {sig: signal.getsignal(sig) for sig in signals}
    previous["unraisablehook"] = sys.unraisablehook
    if sys.unraisablehook is not _unraisable:  # a main inside a main keeps the outer's hook
        _SIGNALS.hook = sys.unraisablehook
    sys.unraisablehook = _unraisable
    for sig in signals:
        signal.signal(sig, _on_signal)
    _SIGNALS.armed = True
    return None if entry else previous


def _unraisable(unraisable):
    """The signal's exception raised where it cannot propagate (inside a ctypes
    callback of llvmlite's, say) is not printed but raised again: the signal is
    sent once more, to arrive in the command's own code once this hook has
    returned (a signal handled in here is sent again in turn)."""
    kind = unraisable.exc_type
    if kind is KeyboardInterrupt or kind is Terminated:
        _SIGNALS.resending = True
        _SIGNALS.armed = True
        _send_again(signal.SIGINT if kind is KeyboardInterrupt else signal.SIGTERM)
        _SIGNALS.resending = False
        return
    _SIGNALS.hook(unraisable)


def _ignore_late_signals():
    """SIG_IGN for SIGINT / SIGTERM until the process ends: the interpreter's
    finalisation puts back the default action, which would kill it with the
    signal. `_on_signal` is disarmed here, so these calls cannot be interrupted."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _restore(previous):
    """Put back the handlers and the hook `_install` replaced."""
    sys.unraisablehook = previous.pop("unraisablehook")
    for sig, handler in previous.items():
        signal.signal(sig, signal.SIG_DFL if handler is None else handler)


if __name__ == "__main__":
    sys.exit(main())
