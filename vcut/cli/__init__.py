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
  leaves nothing half-written;
* long runs show progress on stderr when it is a terminal.
"""

import argparse
import sys
import traceback

from . import analyze, compare, graph, partition, stats, trace, traverse

__all__ = ["main", "build_parser"]

#: Subcommand modules in the order of ``vcut --help``.
COMMANDS = (trace, graph, stats, partition, analyze, compare, traverse)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="vcut",
        description="Trace C programs into LLVM IR dependency graphs, partition them with "
        "vertex cuts, and map the clusters onto multi-core machines.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv=None):
    """Run the ``vcut`` command line; returns the exit status."""
    from frontend.errors import VcutError

    argv = list(sys.argv[1:] if argv is None else argv)
    program_args = []
    if "--" in argv:
        k = argv.index("--")
        argv, program_args = argv[:k], argv[k + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args, program_args)
    except VcutError as exc:
        if exc.details:
            print(exc.details, file=sys.stderr)
        if getattr(args, "verbose", False):
            traceback.print_exc()
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
