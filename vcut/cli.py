"""The ``vcut`` command line: a thin layer that parses arguments and calls the
packages' APIs.

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
import json
import os
import sys
import time
import traceback

__all__ = ["main", "build_parser"]


def _add_common(p):
    p.add_argument("--json", action="store_true", help="print one JSON object of results on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and compiler warnings")


def _add_compile_options(p):
    p.add_argument("-O", dest="opt", default="0", choices=["0", "1", "2", "3", "s", "z", "g"],
                   help="optimisation level of the C compilation (default 0)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro (repeatable)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add an include directory (repeatable)")
    p.add_argument("-l", dest="libs", action="append", default=[], metavar="LIB",
                   help="load a shared library the program needs, e.g. -l z (repeatable)")
    p.add_argument("--cflag", dest="cflags", action="append", default=[], metavar="FLAG",
                   help="pass a further flag to the C compiler (repeatable)")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="vcut",
        description="Trace C programs into LLVM IR dependency graphs, partition them with "
        "vertex cuts, and map the clusters onto multi-core machines.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    t = sub.add_parser(
        "trace",
        help="compile, instrument and run a C program; write its dynamic IR trace",
        description="Compile C source(s) to LLVM IR, instrument, JIT-run in a child process "
        "and write the dynamic trace (.npz). Program arguments follow '--'.",
    )
    t.add_argument("sources", nargs="+", metavar="PROGRAM.c", help="C source files (linked together)")
    t.add_argument("-o", "--output", required=True, metavar="TRACE", help="output trace file (.npz)")
    t.add_argument("--roi", action="append", default=[], metavar="FUNC",
                   help="trace only FUNC and what it calls (repeatable; default: everything)")
    t.add_argument("--max-instructions", type=int, default=50_000_000, metavar="N",
                   help="dynamic-instruction budget; the trace is cut and flagged past it "
                   "(default 50000000)")
    t.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="wall-clock limit in seconds (default 120)")
    t.add_argument("--memory-limit", type=int, default=4096, metavar="MiB",
                   help="address-space limit of the traced program in MiB (default 4096)")
    t.add_argument("--cwd", metavar="DIR", help="working directory of the program (for input files)")
    t.add_argument("--stdin", metavar="FILE", help="file to feed the program on stdin ('-': ours)")
    t.add_argument("--no-timing", action="store_true",
                   help="do not time memory operations with the cycle counter")
    _add_compile_options(t)
    _add_common(t)
    t.set_defaults(func=_cmd_trace)
    return parser


def _progress_printer(label):
    if not sys.stderr.isatty():
        return None

    def report(elapsed, nbytes):
        sys.stderr.write(f"\r{label}: {elapsed:6.1f} s, {nbytes / 1e6:8.1f} MB of events")
        sys.stderr.flush()

    return report


def _check_output_path(path):
    from frontend.errors import OutputError

    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise OutputError(f"output path {path} is a directory; give a file name")
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise OutputError(f"cannot write {path}: directory {directory} is not writable")


def _cmd_trace(args, program_args):
    from frontend import RunLimits, compile_program, trace_program

    _check_output_path(args.output)
    limits = RunLimits(
        timeout=args.timeout,
        memory=args.memory_limit << 20,
        max_instructions=args.max_instructions,
    )
    limits.validate()
    cm = compile_program(
        args.sources,
        opt=f"-O{args.opt}",
        defines=args.defines,
        include_dirs=args.include_dirs,
        extra_flags=args.cflags,
    )
    if cm.diagnostics and args.verbose:
        print(cm.diagnostics, file=sys.stderr)
    stdin = None
    if args.stdin == "-":
        stdin = sys.stdin.buffer.read()
    elif args.stdin:
        stdin = args.stdin
    progress = _progress_printer("tracing")
    t0 = time.perf_counter()
    trace = trace_program(
        cm,
        args=program_args,
        stdin=stdin,
        cwd=args.cwd,
        roi=args.roi,
        limits=limits,
        timing=not args.no_timing,
        libs=args.libs,
        progress=progress,
    )
    if progress:
        sys.stderr.write("\n")
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
    rows = [
        ("dynamic instructions", f"{summary['dynamic_instructions']:,}"),
        ("blocks executed", f"{summary['blocks_executed']:,}"),
        ("memory operations", f"{summary['memory_operations']:,}"),
        ("objects", f"{summary['objects']:,}"),
        ("activations", f"{summary['activations']:,}"),
        ("end", summary["end_reason"]),
        ("exit code", "none (stopped)" if summary["exit_code"] is None else str(summary["exit_code"])),
        ("trace", summary["output"]),
        ("seconds", f"{seconds:.2f}"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}", file=sys.stderr)
    if summary["truncated"]:
        print(f"note: the trace was cut at the budget of {args.max_instructions:,} instructions "
              "(--max-instructions)", file=sys.stderr)
    return 0


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
