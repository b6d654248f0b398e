"""``vcut stats``: statistics of a graph file."""

import os
import time

from ._common import (MAX_SEED, add_common, add_graph_options, int_option, merged_on_read,
                      print_json, print_rows, read_graph_file)
from ._outputs import check_command_outputs, check_suffix, summary_stream

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    st = sub.add_parser(
        "stats",
        help="statistics of a graph: sizes, power-law fit, path lengths, critical path",
        description="Print |V|, |E|, the degree power-law fit (Clauset-Shalizi-Newman), "
        "average shortest-path length, critical path and total weight of a graph file.",
    )
    st.add_argument("graph", metavar="GRAPH", help="graph file (.npz, .graph, .edgelist, .txt, .mtx, .lg; .gz ok)")
    add_graph_options(st, "file format (default: from the suffix)")
    st.add_argument("--plot", metavar="PNG", help="write a log-log degree distribution plot")
    st.add_argument("--path-samples", type=int_option("--path-samples", 1, 2**31 - 1), default=32,
                    metavar="K",
                    help="BFS sources for the average path length of graphs over 2000 nodes (default 32)")
    st.add_argument("--seed", type=int_option("--seed", 0, MAX_SEED), default=0,
                    help="seed of the sampled sources (default 0)")
    add_common(st)
    st.set_defaults(func=run)


def run(args, program_args):
    from ir_graph import degree_plot, graph_stats  # lazy: start-up (scipy)
    from ir_graph.stats import PowerLawFit  # lazy: start-up (scipy)

    check_command_outputs(args, [args.plot])
    check_suffix(args.plot, "--plot", (".png",), "the plot is a PNG image")
    t0 = time.perf_counter()
    g = read_graph_file(args)
    merged = merged_on_read(g)
    s = graph_stats(g, path_samples=args.path_samples, seed=args.seed)
    if args.plot:
        degree_plot(g, args.plot, PowerLawFit(s.alpha, s.x_min, s.ks, s.n_tail))
    result = s.to_dict()
    result["seconds"] = round(time.perf_counter() - t0, 3)
    result["directed"] = g.directed
    result["merged_on_read"] = merged
    if args.json:
        print_json(result)
        return 0
    apl = f"{s.avg_path_length:.2f}" + (" (exact)" if s.path_exact else
                                         f" +- {s.avg_path_length_stderr:.2f} ({s.path_sources} sources)")
    rows = [
        ("nodes", f"{s.nodes:,}"), ("edges", f"{s.edges:,}"),
        ("self-loops / repeated edges", f"{s.self_loops:,} / {s.duplicate_edges:,}"),
        ("degree max / mean", f"{s.max_degree:,} / {s.mean_degree:.2f}"),
        ("power law alpha (x_min, KS, tail)", f"{s.alpha:.3f} ({s.x_min}, {s.ks:.3f}, {s.n_tail:,} nodes)"),
        ("alpha over all degrees", f"{s.alpha_all:.3f}"),
        ("avg shortest path (undirected)", apl),
    ]
    if g.directed:
        rows.append(("avg directed path", f"{s.avg_directed_path_length:.2f}"))
        rows.append(("critical path (weight / edges)",
                     f"{s.critical_path_weight:,.0f} / {s.critical_path_edges:,}"))
    rows.append(("total weight", f"{s.total_weight:,.0f}"))
    if args.plot:
        rows.append(("degree plot", os.path.abspath(args.plot)))
    print_rows(rows, summary_stream(args.plot))
    return 0
