"""The ``vcut`` command line: a thin layer that parses arguments and calls the
packages' APIs. Each subcommand lives in its own module of this package with
``register(sub)`` (its parser) and ``run(args, program_args)`` (its action).

Conventions shared by every subcommand:

* ``--json`` prints exactly one JSON object with the command's results on
  stdout (nothing else goes to stdout then);
* errors print one line ``error: ...`` on stderr (the compiler's own
  diagnostics above it when there are any) and exit non-zero with the
  error's code; ``--verbose`` adds the Python traceback;
* outputs are written to a temporary file and renamed, so a failed run
  leaves nothing half-written; an output that is one of the inputs is refused
  before any work (see `frontend.atomic` for what ``-o`` accepts);
* SIGINT and SIGTERM end the run with ``error: interrupted`` (exit 130) or
  ``error: terminated`` (exit 143), no traceback;
* long runs show progress on stderr when it is a terminal.
"""

import argparse
import signal
import sys
import threading
import traceback

from . import analyze, compare, datasets, graph, partition, stats, trace, traverse

__all__ = ["main", "build_parser"]

#: Subcommand modules in the order of ``vcut --help``.
COMMANDS = (trace, graph, stats, partition, analyze, compare, traverse, datasets)


class UsageError(Exception):
    """A command line argparse cannot parse (exit 2, one line)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``error: vcut trace: ...`` and what to do."""

    def error(self, message):
        hint = ""
        if message.startswith("unrecognized arguments"):
            hint = ("; arguments for the traced program go after '--' "
                    "(vcut trace prog.c -o t.npz -- ARG ...)")
        elif "expected one argument" in message:
            hint = "; a value that starts with '-' is written --option=-VALUE"
        elif message.startswith("the following arguments are required"):
            hint = f"; see '{self.prog} --help'"
        raise UsageError(f"{self.prog}: {message}{hint}")


def build_parser():
    parser = _Parser(
        prog="vcut",
        description="Trace C programs into LLVM IR dependency graphs, partition them with "
        "vertex cuts, and map the clusters onto multi-core machines.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv=None):
    """Run the ``vcut`` command line; returns the exit status.

    With ``argv`` None (the ``vcut`` program itself) SIGINT and SIGTERM are
    ignored once the command has finished, so a late signal cannot turn a
    completed run into a traceback; a call with ``argv`` restores the
    previous SIGTERM handler instead.
    """
    entry = argv is None
    previous = _on_sigterm(_raise_terminated)
    try:
        from frontend.errors import VcutError

        argv = list(sys.argv[1:] if argv is None else argv)
        program_args = []
        if "--" in argv:
            k = argv.index("--")
            argv, program_args = argv[:k], argv[k + 1 :]
        parser = build_parser()
        args = None
        try:
            args = parser.parse_args(argv)  # option types raise InputError for bad numbers
            return args.func(args, program_args)
        except UsageError as exc:
            print(f"error: {exc}", file=sys.stderr)
            _json_error(argv, str(exc), 2)
            return 2
        except (VcutError, MemoryError) as caught:
            exc = _out_of_memory() if isinstance(caught, MemoryError) else caught
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
        _settle(entry)
        if isinstance(stop, KeyboardInterrupt):
            print("error: interrupted", file=sys.stderr)
            return 130
        print("error: terminated", file=sys.stderr)
        return 143
    finally:
        if entry:
            _settle(entry)
        elif previous is not None:
            _on_sigterm(previous)


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


def _out_of_memory():
    """The `OutOfMemory` error a ``MemoryError`` in any phase becomes."""
    from frontend.errors import OutOfMemory
    from frontend.memory import available_bytes, format_bytes

    return OutOfMemory(
        f"out of memory ({format_bytes(available_bytes())} available now); analyse a "
        "slice (--window START:END), trace fewer instructions (--max-instructions) or "
        "a region (--roi FUNC), use fewer clusters (-p), or a machine with more memory")


def _json_error(argv, message, code):
    """With --json, a failure is a JSON object on stdout too (scripts read one object)."""
    if "--json" in argv:
        import json

        sys.stdout.write(json.dumps({"error": message, "exit_code": code}) + "\n")
        sys.stdout.flush()


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread, as SIGINT raises KeyboardInterrupt."""


def _raise_terminated(signum, frame):
    raise Terminated()


def _on_sigterm(handler):
    """Install ``handler`` for SIGTERM (main thread only); returns the previous one."""
    if threading.current_thread() is not threading.main_thread():
        return None
    old = signal.signal(signal.SIGTERM, handler)
    return signal.SIG_DFL if old is None else old


def _settle(entry):
    """The program is ending: a further SIGINT / SIGTERM must not interrupt its exit.

    A signal can arrive while the handlers are being replaced (its Python handler
    then raises here): try again until both are ignored."""
    if not (entry and threading.current_thread() is threading.main_thread()):
        return
    while True:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            return
        except (KeyboardInterrupt, Terminated):
            continue


if __name__ == "__main__":
    sys.exit(main())
