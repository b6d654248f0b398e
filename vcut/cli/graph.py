"""``vcut graph``: the weighted dependency graph of a C program or trace."""

import sys

from ._common import (add_common, add_control_options, add_trace_options, check_inputs,
                      help_groups, print_json, print_rows, trace_options)
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
    inputs, sandbox, edges, outputs = help_groups(
        g, "inputs and tracing", "sandbox",
        ("graph", "which dependencies become edges, and their weights"), "outputs")
    inputs.add_argument("inputs", nargs="+", metavar="INPUT", help="PROGRAM.c [...] or TRACE.npz")
    add_trace_options(inputs, sandbox)
    edges.add_argument("--weights", choices=["model", "measured"], default="model",
                       help="edge weights: the cache model (deterministic; works on traces made "
                       "with --no-timing) or the cycles measured in the trace (default model)")
    edges.add_argument("--war", action="store_true", help="add write-after-read memory edges")
    edges.add_argument("--waw", action="store_true", help="add write-after-write memory edges")
    add_control_options(edges, machine=False)
    outputs.add_argument("-o", "--output", required=True, metavar="GRAPH",
                         help="output graph file")
    outputs.add_argument("--save-trace", metavar="TRACE", help="also keep the trace of a C input")
    add_common(outputs)
    g.set_defaults(func=run)


def run(args, program_args):
    from vcut.pipeline.graph import program_graph  # lazy: start-up (frontend, ir_graph)

    check_inputs(args, program_args)
    traces = [p for p in args.inputs if p.lower().endswith(".npz")]
    check_command_outputs(args, [args.output, None if traces else args.save_trace],
                          None if traces or args.json else "the program's output")
    result, report = program_graph(args.inputs, args.output, trace_options(args, program_args),
                                   weights=args.weights, war=args.war, waw=args.waw,
                                   save_trace=args.save_trace, control=args.control,
                                   branch_latency=args.branch_latency)
    if args.json:
        print_json(result)
        return 0
    fmt = result["format"]
    ctrl = result["control"]
    print_rows([
        ("nodes", f"{result['nodes']:,}"), ("edges", f"{result['edges']:,}"),
        ("total weight", f"{result['total_weight']:,.0f}"),
        ("alpha (x_min)", f"{result['alpha']:.3f} ({result['x_min']})"),
        ("weights", args.weights),
        *([("control", (f"{ctrl['model']}: {ctrl['control_edges']:,} control edges of "
                        f"{ctrl['branch_latency']:g} "
                        f"{'cycle' if ctrl['branch_latency'] == 1 else 'cycles'} "
                        f"({ctrl['branches']:,} branches, {ctrl['mispredicted']:,} "
                        "mispredicted)"))]
          if ctrl["model"] != "oracle" else []),
        ("graph", f"{result['output']} ({fmt})"),
        ("seconds", f"{result['seconds']:.2f}"),
    ], summary_stream(args.output))
    for k, v in report.items():
        if v:
            print(f"note: {fmt} output: {k.replace('_', ' ')}: {v}", file=sys.stderr)
    return 0
