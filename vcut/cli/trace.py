"""``vcut trace``: compile, instrument and run a C program; write its trace."""

import json
import os
import sys
import time

from ._common import add_common, add_trace_options, print_rows, run_trace

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
    from frontend.atomic import check_output_path

    check_output_path(args.output)
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
        print(json.dumps(summary))
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
        ("trace", summary["output"]),
        ("seconds", f"{seconds:.2f}"),
    ])
    if summary["truncated"]:
        print(f"note: the trace was cut at the budget of {args.max_instructions:,} instructions "
              "(--max-instructions)", file=sys.stderr)
    return 0
