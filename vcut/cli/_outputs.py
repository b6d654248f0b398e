"""What a subcommand writes, checked against what it reads before any work is done.

Every subcommand calls `check_command_outputs` (or `output_directory` for
``-o OUTDIR``) first: an output that is one of its inputs (the same file,
through links too), two outputs naming one file, ``-`` while standard output
carries something else, or a path that cannot be written is refused with one
`OutputError` line (exit 9). What ``-o`` accepts: `vcut_base.atomic`.
"""

import os
import sys

from vcut_base.atomic import check_outputs, output_kind
from vcut_base.errors import OutputError
from vcut.pipeline.outputs import output_dir

__all__ = ["input_paths", "check_command_outputs", "check_suffix", "output_directory",
           "summary_stream"]


def input_paths(args):
    """Every file the command reads, as named on its command line.

    The C sources, traces or graph files, ``--stdin``, ``--partition`` and a
    ``--machine`` file (JSON or ``hwloc:FILE``); ``-`` is not a file.
    """
    paths = []
    for name in ("sources", "inputs"):
        paths += getattr(args, name, None) or []
    for name in ("graph", "stdin", "partition"):
        value = getattr(args, name, None)
        paths += value if isinstance(value, list) else [value]  # partition: GRAPH ...
    machine = getattr(args, "machine", None)
    if machine:
        paths.append(machine.split(":", 1)[1] if machine.startswith("hwloc:") else machine)
    return [p for p in paths if p and p != "-"]


def check_command_outputs(args, outputs, stdout_use=None):
    """Refuse the command's ``outputs`` (None entries skipped) unless all can be written.

    ``stdout_use`` says what else the command prints on standard output (then
    ``-o -`` is refused); by default the JSON summary when ``--json`` is given.
    """
    if stdout_use is None and getattr(args, "json", False):
        stdout_use = "the JSON summary"
    check_outputs(outputs, input_paths(args), stdout_use)


def check_suffix(path, flag, suffixes, what):
    """Refuse an output ``path`` of option ``flag`` whose name does not end in one of
    ``suffixes`` (any case; ``-``, standard output, passes): an image or a page written
    under another name, e.g. over a ``trace.npz`` given by mistake, would replace a data
    file with a picture. ``what`` says what the option writes, e.g. ``"the plot is a PNG
    image"``."""
    if path is None or path == "-" or str(path).lower().endswith(tuple(suffixes)):
        return
    raise OutputError(f"{flag} {path}: {what}; give a path ending in {', '.join(suffixes)} "
                      "(nothing was written)")


def summary_stream(*outputs):
    """Where a command prints its summary: stdout, unless an output goes there (``-o -``)."""
    for path in outputs:
        if path is not None and output_kind(path) == "stdout":
            return sys.stderr
    return sys.stdout


def output_directory(args, names):
    """Create ``-o OUTDIR`` if needed and check the files ``names`` in it."""
    output_dir(args.output, names)
    check_command_outputs(args, [os.path.join(args.output, name) for name in names])
