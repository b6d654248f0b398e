"""``vcut mst``: the minimum spanning forest of a graph (Borůvka, CPU or GPU)."""

from vcut_base.atomic import atomic_output

from ._common import add_common, add_graph_options, print_json, print_rows, read_graph_file
from ._outputs import check_command_outputs, summary_stream

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    p = sub.add_parser(
        "mst",
        help="minimum spanning forest (Borůvka's algorithm, on the CPU or a GPU)",
        description="The minimum spanning forest of GRAPH by Borůvka's algorithm: edges taken "
        "as undirected, self-loops ignored, ties broken by the edges' order in the file (so the "
        "forest is unique and the same on both devices). Unweighted graphs have unit weights.",
    )
    p.add_argument("graph", metavar="GRAPH")
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"],
                   help="cpu, gpu (numba.cuda), or auto: the GPU when there is one (default cpu)")
    add_graph_options(p)
    p.add_argument("-o", "--output", metavar="EDGES",
                   help="the forest's edges, 'u v weight' per line, ids as in the graph file")
    add_common(p)
    p.set_defaults(func=run)


def run(args, program_args):
    from runtime.mst import minimum_spanning_forest  # lazy: start-up

    check_command_outputs(args, [args.output])
    g = read_graph_file(args)
    f = minimum_spanning_forest(g, device=args.device)
    if args.output:
        ids = g.vertex_ids()
        u, v, w = ids[g.src[f.edges]], ids[g.dst[f.edges]], g.weight[f.edges]
        with atomic_output(args.output, "w") as fh:
            fh.write("".join(f"{a} {b} {c:.17g}\n" for a, b, c in zip(u.tolist(), v.tolist(),
                                                                        w.tolist())))
    result = {"device": f.device, "weight": f.weight, "edges": int(len(f.edges)),
              "components": f.components, "rounds": f.rounds, "seconds": f.seconds, **f.info}
    if args.json:
        print_json(result)
        return 0
    rows = [("device", f.device), ("total weight", f"{f.weight:.17g}"),
            ("forest edges", f"{len(f.edges):,} of {g.m:,}"),
            ("trees", f"{f.components:,} (isolated vertices included)"),
            ("rounds", str(f.rounds)),
            ("seconds", f"{f.seconds:.4f} rounds + {f.info['prepare_seconds']:.4f} ranking"
                        + (f" + {f.info['overhead_seconds']:.4f} transfers"
                           if "overhead_seconds" in f.info else "")),
            ("edges examined", f"{f.info['edges_examined']:,}")]
    if args.output:
        rows.append(("written", args.output))
    print_rows(rows, summary_stream(args.output))
    return 0
