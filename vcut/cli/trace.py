"""``vcut trace``: compile, instrument and run a C program; write its trace."""

import os
import sys
import time

from ._common import add_common, add_trace_options, print_json, print_rows, run_trace
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
    t.add_argument("sources", nargs="+", metavar="PROGRAM.c", help="C source files (linked together)")
    t.add_argument("-o", "--output", required=True, metavar="TRACE", help="output trace file (.npz)")
    add_trace_options(t)
    add_common(t)
    t.set_defaults(func=run)


def run(args, program_args):
    check_command_outputs(args, [args.output], None if args.json else "the program's output")
    t0 = time.perf_counter()
    trace = run_trace(args, program_args)
    trace.save(args.output)
    seconds = time.perf_counter() - t0
    summary = trace.summary()
    summary["seconds"] = round(seconds, 3)
    summary["output"] = os.path.abspath(args.output)
    if args.json:
        summary["stdout"] = trace.meta.get("stdout", "")[:65536]
        summary["stderr"] = trace.meta.get("stderr", "")[:65536]
        print_json(summary)
        return 0
    sys.stdout.write(trace.meta.get("stdout", ""))
    sys.stderr.write(trace.meta.get("stderr", ""))
    print_rows([
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
    ])
    written = trace.meta.get("written_files", [])
    if written and not args.keep_files:
        size = sum(f[1] for f in written)
        print(f"note: the program wrote {len(written)} file(s) ({size:,} bytes) in its private "
              "working directory; they were discarded (--keep-files DIR keeps them)",
              file=sys.stderr)
    if summary["truncated"]:
        print(f"note: the trace was cut at the budget of {args.max_instructions:,} instructions "
              "(--max-instructions)", file=sys.stderr)
    return 0
