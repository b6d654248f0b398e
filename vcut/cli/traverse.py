"""``vcut bfs`` and ``vcut sssp``: traversal under a load-balancing strategy."""

import numpy as np

from vcut_base.atomic import atomic_output
from vcut_base.errors import InputError

from ._common import add_common, add_graph_options, print_json, print_rows, read_graph_file
from ._outputs import check_command_outputs, summary_stream

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    for kind in ("bfs", "sssp"):
        tr = sub.add_parser(
            kind,
            help=f"{'breadth-first hop distances' if kind == 'bfs' else 'single-source shortest paths'} "
            "from a source, under a load-balancing strategy",
            description="Traverse GRAPH from --source with a load-balancing strategy (Raval et al.): "
            "bs node-based, ep edge-based (work chunking), ep-nochunk, wd workload decomposition, "
            "ns node splitting, hp hierarchical processing"
            + ("; do direction-optimising BFS (top-down / bottom-up)" if kind == "bfs"
               else "; delta delta-stepping (near/far worklists)")
            + "; each on the CPU or the GPU (--device)"
            + ". Edge lists are undirected unless "
            "--directed; unweighted graphs have unit weights.",
        )
        tr.add_argument("graph", metavar="GRAPH")
        tr.add_argument("--source", type=int, required=True,
                        help="source vertex, by its id in the graph file (METIS, .mtx, .lg: from 1; "
                        "edge lists: the ids as written)")
        tr.add_argument("--strategy", default="bs",
                        choices=["bs", "ep", "ep-nochunk", "wd", "ns", "hp"]
                        + (["do"] if kind == "bfs" else ["delta"]) + ["auto"],
                        help="load-balancing strategy, or auto (from the device and the graph; "
                        "default bs)")
        if kind == "sssp":
            tr.add_argument("--delta", type=float, metavar="W",
                            help="bucket width of --strategy delta (default: 32 x the mean "
                            "weight / the mean degree)")
        tr.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"],
                        help="cpu, gpu (numba.cuda), or auto: the GPU when there is one (default cpu)")
        tr.add_argument("--directed", action="store_true", help="follow edges in their direction only")
        add_graph_options(tr)
        tr.add_argument("-o", "--output", metavar="DIST",
                        help="'id distance' per vertex, ids as in the graph file (inf: unreachable)")
        add_common(tr)
        tr.set_defaults(func=run, kind=kind)


def run(args, program_args):
    from runtime.traversal import bfs, sssp  # lazy: start-up

    check_command_outputs(args, [args.output])
    # --directed: u v and v u are two arcs of the file, not one edge
    g = read_graph_file(args, directed=True if args.directed else None)
    run = bfs if args.kind == "bfs" else sssp
    extra = {"delta": args.delta} if args.kind == "sssp" else {}
    if extra.get("delta") is not None and args.strategy != "delta":
        raise InputError("--delta is the bucket width of --strategy delta; drop it or add that")
    r = run(g, g.index_of(args.source), args.strategy, device=args.device,
            directed=True if args.directed else None, **extra)
    if args.output:
        ids = g.vertex_ids().tolist()
        with atomic_output(args.output, "w") as fh:
            fh.write("".join(f"{v} {'inf' if np.isinf(d) else f'{d:.17g}'}\n"
                             for v, d in zip(ids, r.dist.tolist())))
    reached = int(np.isfinite(r.dist).sum())
    result = {"kind": args.kind, "strategy": r.strategy, "device": r.device, "seconds": r.seconds,
              "mteps": r.mteps, "edges_relaxed": r.edges_relaxed, "iterations": r.iterations,
              "reached": reached, "memory_bytes": r.info["memory_bytes"],
              **{k: v for k, v in r.info.items() if k != "memory_bytes"}}
    if args.json:
        print_json(result)
        return 0
    rows = [("strategy", f"{r.strategy} on {r.device}" + (" (auto)" if r.info.get("auto") else "")),
            ("seconds", f"{r.seconds:.4f}" + (f" kernels + {r.info['overhead_seconds']:.4f} overhead"
                                              if "overhead_seconds" in r.info else "")),
            ("MTEPS", f"{r.mteps:.1f}"), ("edges relaxed", f"{r.edges_relaxed:,}"),
            ("iterations", f"{r.iterations:,}"), ("reached", f"{reached:,} of {g.n:,}"),
            ("memory", f"{r.info['memory_bytes'] / 2**20:.1f} MiB")]
    if "mdt" in r.info:
        rows.append(("MDT", str(r.info["mdt"])))
    if "fraction_split" in r.info:
        rows.append(("nodes split", f"{r.info['nodes_split']:,} ({100 * r.info['fraction_split']:.2f} %)"))
    print_rows(rows, summary_stream(args.output))
    return 0
