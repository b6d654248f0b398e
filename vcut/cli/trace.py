"""``vcut trace``: compile, instrument and run a C program; write its trace."""

import os
import sys
import time

from vcut_base.atomic import atomic_output
from vcut_base.errors import ProgramError

from ._common import (add_common, add_trace_options, check_inputs, help_groups, print_json,
                      print_rows, trace_options)
from ._outputs import check_command_outputs

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    t = sub.add_parser(
        "trace",
        help="compile, instrument and run a C program; write its dynamic IR trace",
        description="Compile C source(s) to LLVM IR, instrument, JIT-run in a child process "
        "and write the dynamic trace (.npz). Program arguments follow '--'.",
    )
    inputs, sandbox, outputs = help_groups(t, "inputs and tracing", "sandbox", "outputs")
    inputs.add_argument("sources", nargs="+", metavar="PROGRAM.c",
                        help="C source files (linked together)")
    add_trace_options(inputs, sandbox)
    outputs.add_argument("-o", "--output", required=True, metavar="TRACE",
                         help="output trace file (.npz)")
    outputs.add_argument("--stdout", dest="stdout_file", metavar="FILE",
                         help="write the program's stdout to FILE (byte for byte) instead of ours")
    add_common(outputs)
    t.set_defaults(func=run)


def run(args, program_args):
    from vcut.pipeline.tracing import note_truncated, trace_sources  # lazy: start-up (frontend)

    check_inputs(args, program_args)
    options = trace_options(args, program_args)
    to_file = args.stdout_file
    check_command_outputs(args, [args.output, *([to_file] if to_file else [])],
                          None if args.json or to_file else "the program's output")
    t0 = time.perf_counter()
    sink = to_file or (None if args.json else "-")  # where the program's stdout goes
    if sink:  # a failed write to it (a full disk) is one OutputError line naming it
        failure = None
        sys.stdout.flush()
        with atomic_output(sink, "wb") as fh:
            fh.flush()
            try:  # '-': our descriptor 1 (sys.stdout may be a test's capture)
                fd = 1 if sink == "-" else fh.fileno()
                trace = trace_sources(args.sources, options, stdout_sink=fd)
            except ProgramError as exc:  # what it wrote before failing is kept
                failure = exc
        if failure is not None:
            raise failure
    else:
        trace = trace_sources(args.sources, options, stdout_sink=None)
    trace.save(args.output)
    seconds = time.perf_counter() - t0
    summary = trace.summary()
    summary["seconds"] = round(seconds, 3)
    summary["output"] = os.path.abspath(args.output)
    if args.json:
        # the first MiB of each stream; all of stdout is in --stdout FILE when given
        for name in ("stdout", "stderr"):
            summary[name] = trace.meta.get(name, "")
            summary[name + "_bytes"] = trace.meta.get(name + "_bytes", 0)
            summary[name + "_truncated"] = trace.meta.get(name + "_truncated", False)
        summary["stdout_file"] = os.path.abspath(to_file) if to_file else None
        note_truncated(trace.meta, "it")
        summary["kept_replaced"] = trace.meta.get("kept_replaced", [])
        summary["not_kept"] = trace.meta.get("not_kept", [])
        print_json(summary)
        return 0
    print_rows([  # on stderr: our stdout carries the program's own output
        ("dynamic instructions", f"{summary['dynamic_instructions']:,}"),
        ("blocks executed", f"{summary['blocks_executed']:,}"),
        ("memory operations", f"{summary['memory_operations']:,}"),
        ("objects", f"{summary['objects']:,}"),
        ("activations", f"{summary['activations']:,}"),
        ("end", summary["end_reason"]),
        ("exit code", "none (stopped)" if summary["exit_code"] is None else str(summary["exit_code"])),
        ("sandbox", summary["sandbox"] + "".join(f"; {n}" for n in summary["sandbox_notes"])),
        ("trace", summary["output"]),
        ("seconds", f"{seconds:.2f}"),
    ], sys.stderr)
    written = trace.meta.get("written_files", [])
    if written and not args.keep_files:
        size = sum(f[1] for f in written)
        print(f"note: the program wrote {len(written)} file(s) ({size:,} bytes) in its private "
              "working directory; they were discarded (--keep-files DIR keeps them)",
              file=sys.stderr)
    failed = trace.meta.get("failed_allocations", 0)
    if failed:
        print(f"note: {failed} heap allocation(s) of the program returned NULL under the "
              f"{args.memory_limit} MiB memory limit (--memory-limit)", file=sys.stderr)
    note_truncated(trace.meta, "it")
    return 0

