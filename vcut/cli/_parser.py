"""The ``vcut`` argument parser: argparse with one-line errors (`UsageError`)."""

import argparse

__all__ = ["UsageError", "command_parser"]


class UsageError(Exception):
    """A command line argparse cannot parse (exit 2, one line); ``unrecognized``: the
    words argparse did not take, when that was the problem."""

    def __init__(self, message, unrecognized=()):
        super().__init__(message)
        self.unrecognized = list(unrecognized)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``error: vcut trace: ...`` and what to do."""

    def parse_args(self, args=None, namespace=None):
        """argparse's, keeping the words it did not take as they were typed."""
        args, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error("unrecognized arguments: " + " ".join(extras), extras)
        return args

    def error(self, message, unrecognized=()):
        hint = ""
        if message.startswith("unrecognized arguments"):
            hint = ("; arguments for the traced program go after '--' "
                    "(vcut trace prog.c -o t.npz -- ARG ...)")
        elif "expected one argument" in message:
            hint = "; a value that starts with '-' is written --option=-VALUE"
        elif message.startswith("the following arguments are required"):
            hint = f"; see '{self.prog} --help'"
        raise UsageError(f"{self.prog}: {message}{hint}", unrecognized)


def command_parser(registers):
    """The ``vcut`` parser with the subcommands ``registers`` add (each a subcommand
    module's ``register(sub)``)."""
    parser = _Parser(
        prog="vcut",
        description="Trace C programs into LLVM IR dependency graphs, partition them with "
        "vertex cuts, and map the clusters onto multi-core machines.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for register in registers:
        register(sub)
    return parser
