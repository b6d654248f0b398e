"""``vcut graph``: the weighted dependency graph of a C program or trace."""

import os
import sys
import time

from ._common import (
    add_common,
    add_trace_options,
    check_inputs,
    note_truncated,
    print_json,
    print_rows,
    run_trace,
)
from ._outputs import check_command_outputs, summary_stream

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    g = sub.add_parser(
        "graph",
        help="build the weighted dependency graph of a C program or of a trace",
        description="Build the dynamic dependency graph (nodes: executed IR instructions in "
        "execution order; edges: register and memory dependencies; weights: memory transfer "
        "cycles). INPUT is C source(s) (traced first; program arguments follow '--') or a "
        "trace (.npz). The output format follows the suffix of -o: .npz (vcut's own), "
        ".graph (METIS), .edgelist, .mtx (optionally .gz).",
    )
    g.add_argument("inputs", nargs="+", metavar="INPUT", help="PROGRAM.c [...] or TRACE.npz")
    g.add_argument("-o", "--output", required=True, metavar="GRAPH", help="output graph file")
    g.add_argument("--weights", choices=["model", "measured"], default="model",
                   help="edge weights: the cache model (deterministic; works on traces made "
                   "with --no-timing; the default of every command) or the cycles measured in "
                   "the trace (default model)")
    g.add_argument("--war", action="store_true", help="add write-after-read memory edges")
    g.add_argument("--waw", action="store_true", help="add write-after-write memory edges")
    g.add_argument("--save-trace", metavar="TRACE", help="also keep the trace of a C input")
    add_trace_options(g)
    add_common(g)
    g.set_defaults(func=run)


def run(args, program_args):
    from frontend import load_trace
    from vcut_base.errors import InputError
    from ir_graph import build_graph, fit_power_law, write_graph
    from ir_graph.formats import detect_format

    check_inputs(args, program_args)
    traces = [p for p in args.inputs if p.lower().endswith(".npz")]
    check_command_outputs(args, [args.output, None if traces else args.save_trace],
                          None if traces or args.json else "the program's output")
    fmt = detect_format(args.output)
    if fmt == "lg":
        raise InputError("vcut graph writes .npz, .graph, .edgelist or .mtx; not .lg")
    t0 = time.perf_counter()
    if traces:
        trace = load_trace(traces[0])
    else:
        trace = run_trace(args, program_args)
        if args.save_trace:
            trace.save(args.save_trace)
    note_truncated(trace.meta, "the graph")
    g = build_graph(trace, weights=args.weights, war=args.war, waw=args.waw)
    report = write_graph(g, args.output, fmt)
    fit = fit_power_law(g.degrees())
    seconds = time.perf_counter() - t0
    result = {
        "nodes": g.n, "edges": g.m, "total_weight": g.total_weight, "alpha": fit.alpha,
        "x_min": fit.x_min, "weights": args.weights, "format": fmt,
        "output": os.path.abspath(args.output), "seconds": round(seconds, 3),
        "truncated": trace.truncated,
    }
    result.update(report)
    if args.json:
        print_json(result)
        return 0
    print_rows([
        ("nodes", f"{g.n:,}"), ("edges", f"{g.m:,}"), ("total weight", f"{g.total_weight:,.0f}"),
        ("alpha (x_min)", f"{fit.alpha:.3f} ({fit.x_min})"), ("weights", args.weights),
        ("graph", f"{result['output']} ({fmt})"), ("seconds", f"{seconds:.2f}"),
    ], summary_stream(args.output))
    for k, v in report.items():
        if v:
            print(f"note: {fmt} output: {k.replace('_', ' ')}: {v}", file=sys.stderr)
    return 0
