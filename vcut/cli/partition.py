"""``vcut partition``: vertex-cut partitioning of a graph file."""

import os
import sys

from vcut.capacities import capacities_from_units
from vcut.output import write_partition
from vcut_base.atomic import output_kind
from vcut_base.errors import InputError

from ._cluster import add_cluster_options, client_for
from ._common import (
    MAX_SEED,
    add_common,
    add_graph_options,
    help_groups,
    int_list_option,
    int_option,
    merged_on_read,
    note_merged,
    parse_numbers,
    print_json,
    print_rows,
    progress_lines,
    read_graph_file,
    spill_context,
)
from ._outputs import check_command_outputs, summary_stream
from ._progress import add_progress_option

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    pa = sub.add_parser(
        "partition",
        help="edge-partition a graph into p clusters (vertex cut)",
        description="Assign every edge of GRAPH to one of p clusters with a vertex-cut "
        "partitioner. Writes OUT (one cluster id per input edge, in input order) and "
        "OUT.replicas.npz (replica lists, masters, loads, metrics). Self-loops and repeated "
        "edges are merged before partitioning (repeats get their representative's cluster, "
        "a self-loop its vertex's master cluster) and reported. Several graphs or cluster "
        "counts (vcut partition G1 G2 -p 8,32,128) run in one process, each graph read "
        "once: one table row per run (one JSON line with --json), -o an existing directory "
        "or a pattern with {graph}, {p} and {algo}.",
    )
    inputs, cut, par, others, where, outputs = help_groups(
        pa, ("inputs", "the graphs and how their files are read"), "partitioning",
        ("par", "knobs of --algo par, the parallelism-aware vertex cut"),
        ("spac, hep and multilevel", "knobs of these --algo values"),
        ("devices, distributed and out-of-core",
         "where the cut runs: a GPU, batches, a Dask cluster, scratch files"),
        "outputs")
    inputs.add_argument("graph", metavar="GRAPH", nargs="+",
                        help="graph file (.npz, .graph, .edgelist, .txt, .mtx, .lg; .gz ok); "
                        "several: every one is cut for every p")
    add_graph_options(inputs)
    cut.add_argument("-p", type=int_list_option("-p", 1, 2**31 - 1), required=True,
                     help="number of clusters; several, comma-separated (8,32,128): a run each")
    # the names of `vcut.cuts.ALGORITHMS` and multilevel, written out: importing the registry
    # loads numba, which the parser must not (tests/vcut/test_registry.py checks they agree)
    cut.add_argument("--algo", default="wb-libra",
                     choices=["random", "pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra",
                              "dbh", "hdrf", "spac", "wvp-random", "wvp-greedy", "hypergraph",
                              "par", "ne", "hep", "best", "graphx-1d", "graphx-2d",
                              "graphx-crvc", "multilevel"],
                     help="partitioner (default wb-libra); best: the quality mode (neighbour "
                     "expansions, and a METIS cut too on mesh-like graphs, refined); "
                     "multilevel: an edge cut, written as a METIS .part file")
    cut.add_argument("--seed", type=int_option("--seed", 0, MAX_SEED), default=0,
                     help="seed of random choices (default 0)")
    cut.add_argument("--imbalance", type=float, default=1.03,
                     help="balance tolerance of spac / wvp / hypergraph / best / par / "
                     "multilevel (above 1 there) / --refine (default 1.03)")
    cut.add_argument("--lambda", dest="lam", type=float, default=1.0,
                     help="balance bound of the WB variants, >= 1 (default 1)")
    cut.add_argument("--order", default="given", choices=["given", "random", "bfs", "dfs"],
                     help="edge stream order (default: as given)")
    cut.add_argument("--capacities", metavar="C1,C2,...",
                     help="relative cluster capacities (default: equal shares)")
    cut.add_argument("--units", metavar="S1:M1,S2:M2,...",
                     help="processing units as speed:memory, memory as a fraction of the graph's "
                     "total weight; capacities by Algorithm 1 of Tzovas et al. (HiPC 2020)")
    cut.add_argument("--refine", action="store_true",
                     help="refine the result: replica-dissolving passes, then FM searches, that "
                     "lower the replication factor within --imbalance (best always refines)")
    cut.add_argument("--preset", choices=["fast", "default", "strong"],
                     help="knob presets of par and best (default: default); par: fast schedules "
                     "once at the lowest replica price, strong keeps the best --gamma of 0, "
                     "0.25, 0.5, 1; best: fast refines 1 expansion, strong 8 and a METIS cut on "
                     "every graph; a knob given overrides it")
    par.add_argument("--latency", type=float, metavar="CYCLES",
                     help="cycles a value takes between two clusters (default: the mean over "
                     "the core pairs of the Table 2 machine with p cores)")
    par.add_argument("--beta", type=float, metavar="PRICE",
                     help="price of a new replica in message latencies (default: per graph, "
                     "the highest of 1.5, 6, 24, 96, 384, 1536 costing at most 2 %% more time)")
    par.add_argument("--gamma", type=float, metavar="G",
                     help="priority of a ready vertex, its bottom level minus G times its "
                     "top level (default 0; vcut analyze and --preset strong try 0, 0.25, 0.5, "
                     "1)")
    par.add_argument("--chain-slack", type=float, default=0.0, metavar="S",
                     help="keep each dependency chain within the share S of the longest "
                     "path on a cluster of its own (default 0: the longest only; vcut analyze "
                     "also tries 0.3, 0.4)")
    par.add_argument("--grains", type=float, default=0.0, metavar="S",
                     help="on an IR graph: each basic-block run whose paths are within the "
                     "share S of the bound is one task group on one cluster (default 0: off; "
                     "vcut analyze also tries 0.5)")
    par.add_argument("--grain-unit", default="runs", choices=["runs", "calls"],
                     help="grains of --grains: basic-block runs, or calls (with callees) of at "
                     "most 1/16 of the bound's work, other instructions alone (default runs; "
                     "vcut analyze tries both)")
    others.add_argument("--backend", default="metis", choices=["metis", "kahip", "multilevel"],
                        help="vertex partitioner of spac (default metis)")
    others.add_argument("--variant", default="contracted", choices=["contracted", "split"],
                        help="split-and-connect form for spac (default contracted)")
    others.add_argument("--tau", type=float, metavar="T",
                        help="hep: degree threshold in mean degrees (default 10)")
    others.add_argument("--refiner", choices=["fm", "jet", "greedy"],
                        help="multilevel: refinement after each level's greedy moves: k-way FM "
                        "(CPU default), Jet (GPU default; on the CPU slower than FM, lower cuts "
                        "on power-law graphs) or none (greedy)")
    others.add_argument("--scheme", choices=["kway", "rb"],
                        help="multilevel: k-way (default) or recursive bisection (METIS's "
                        "-ptype=rb; CPU only, about twice the time, lower cuts on RMAT-like "
                        "graphs)")
    where.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"],
                       help="where multilevel, spac --backend multilevel and the greedy cuts' "
                       "batches run (default cpu; auto: the GPU when usable; there --apply "
                       "rounds and --batch 65536 by default)")
    where.add_argument("--apply", choices=["recheck", "rounds"],
                       help="batched greedy cuts: recheck (CPU default) applies a batch in "
                       "stream order, deciding again each edge that would add a replica; rounds "
                       "(GPU default): in parallel rounds, on the CPU with the same result")
    where.add_argument("--batch", type=int_option("--batch", 1, 2**31 - 1), metavar="EDGES",
                       help="greedy cuts: with --workers/--scheduler, edges a worker places "
                       "between merges of the shared state (default 8192); else batches decided "
                       "in parallel from their start state (p <= 128; 1: sequential)")
    add_cluster_options(where, "partition on a Dask cluster of N workers, a chunk of the edge "
                        "stream each (hash cuts: the same result; greedy cuts, hdrf: coordinated "
                        "ingress, see --batch)")
    where.add_argument("--out-of-core", action="store_true",
                       help="with --workers/--scheduler: the workers read GRAPH (edge list, "
                       "METIS or .npz on a path all see) in pieces and hold its edges, merged "
                       "per --duplicates; here per-vertex state only; no OUT.replicas.npz")
    where.add_argument("--spill", metavar="DIR",
                       help="disk-backed: map a .npz graph (text: read into scratch files) and "
                       "keep the edge-sized arrays memory-mapped in scratch files in DIR; memory "
                       "holds per-vertex state")
    outputs.add_argument("-o", "--output", metavar="OUT",
                         help="assignment file, OUT.replicas.npz beside it (a FIFO, device or - "
                         "gets the assignment only); several runs: an existing DIR "
                         "(DIR/GRAPH.ALGO.pP.parts) or a pattern, e.g. "
                         "out/{graph}.{algo}.{p}.parts")
    add_common(outputs)
    add_progress_option(outputs)
    pa.set_defaults(func=run)


def run(args, program_args):
    with spill_context(args):
        if len(args.graph) > 1 or len(args.p) > 1:
            return _many(args)
        args.graph, args.p = args.graph[0], args.p[0]
        return _run(args, program_args)


def _many(args):
    """Every graph x every p in this process (`vcut.pipeline.partitions.partition_files`):
    a table row per run as it ends, or one JSON line each."""
    from vcut.pipeline.partitions import partition_files  # lazy: the partitioners load numba

    for flag, given in (("--workers / --scheduler", args.workers or args.scheduler),
                        ("--out-of-core", args.out_of_core),
                        ("--algo multilevel", args.algo == "multilevel")):
        if given:
            raise InputError(f"{flag} cuts one graph for one p; give one GRAPH and one -p "
                             "with it")
    if args.output and not os.path.isdir(args.output) and output_kind(args.output) != "file":
        raise InputError(f"-o {args.output}: several runs write a file each; give an existing "
                         "directory or a pattern with {graph}, {p} and {algo}")
    caps = _capacities(args)
    options = _options(args, args.p[0])
    runs = partition_files(args.graph, args.p, args.algo, options, output=args.output,
                           seed=args.seed, capacities=caps, device=args.device,
                           read=lambda path: _read(args, path))
    width = max(len(g) for g in args.graph)
    if not args.json:
        print(f"{'graph':<{width}}  {'p':>6}  {'RF':>8}  {'imbalance':>9}  {'seconds':>8}  "
              "written", flush=True)
    for r in runs:
        if args.json:
            print_json({"graph": r.graph, **_result(args, r.p, r.partition, r.files,
                                                    r.merged)})
        else:
            m = r.partition.metrics
            print(f"{r.graph:<{width}}  {r.p:>6}  {m.replication_factor:>8.4f}  "
                  f"{m.edge_weight_imbalance:>9.5f}  {r.partition.info['seconds']:>8.3f}  "
                  f"{', '.join(r.files) or '-'}")
        sys.stdout.flush()
    return 0


def _read(args, path):
    """The graph at ``path`` as `read_graph_file` reads it, its merges noted on stderr."""
    g = read_graph_file(args, path, directed=False)
    merged_on_read(g)
    return g


def _run(args, program_args):
    # lazy: the partitioners load numba, which `vcut --help` and the other commands do
    # without (tests/vcut/cli/test_cli_imports.py)
    from vcut.partition import partition_graph

    # OUT.replicas.npz goes beside a regular OUT; a stream (FIFO, device, -) gets OUT only
    details = (bool(args.output) and output_kind(args.output) == "file"
               and args.algo != "multilevel" and not args.out_of_core)
    check_command_outputs(args, [args.output, args.output + ".replicas.npz" if details else None])
    if args.device == "gpu" and (args.workers or args.scheduler or args.out_of_core):
        raise InputError("--device gpu runs in this process; the Dask workers (--workers, "
                         "--scheduler, --out-of-core) partition on their CPUs: drop one")
    if args.refiner and args.algo != "multilevel":
        raise InputError(f"--refiner is for --algo multilevel (SPAC's multilevel backend takes "
                         f"its device's default: fm on the CPU, jet on the GPU); drop it for "
                         f"--algo {args.algo}")
    if args.scheme and args.algo != "multilevel":
        raise InputError(f"--scheme is for --algo multilevel; drop it for --algo {args.algo}")
    if args.out_of_core and not (args.workers or args.scheduler):
        raise InputError("--out-of-core reads the graph on a Dask cluster; give --workers N "
                         "or --scheduler ADDRESS with it")
    caps = _capacities(args)
    files = merged = None
    if args.out_of_core:  # the workers read the graph; the file is written as it comes
        part = _distributed(args, None, caps)
        n, files = part.n, [args.output] if args.output else []
        merged = _merged_by_workers(args, part.info)
    else:
        # the partitioners cut undirected graphs: a directed file's arcs u v and v u are one edge
        g = read_graph_file(args, directed=False)
        merged = merged_on_read(g)
        n = g.n
        if args.algo == "multilevel":
            from .multilevel import run_multilevel  # lazy: the runtime's multilevel cut

            return run_multilevel(args, g, caps)
        existing = args.scheduler or os.environ.get("VCUT_SCHEDULER")  # a cluster running
        if existing or (args.workers and _local_cluster_pays(args, g)):
            part = _distributed(args, g, caps)
        else:
            part = partition_graph(g, args.p, args.algo, _options(args), seed=args.seed,
                                   capacities=caps, device=args.device)
    if files is None:
        files = write_partition(part, args.output, details) if args.output else []
    m = part.metrics
    info = part.info
    if args.json:
        print_json(_result(args, args.p, part, files, merged))
        return 0
    rows = [
        ("algorithm", f"{args.algo} (p = {args.p}, lambda = {args.lam:g}, order = {args.order})"),
        ("edges / vertices", f"{info['simple_edges']:,} / {n:,}"),
        ("replication factor", f"{m.replication_factor:.4f}"),
        ("vertex copies", f"{m.vertex_copies:,}"),
        ("edge weight imbalance", f"{m.edge_weight_imbalance:.5f}"),
        ("edge-count imbalance", f"{m.edge_imbalance:.5f}"),
        ("cut vertices (avg degree)", f"{m.cut_vertices:,} ({m.avg_cut_degree:.2f})"),
        ("Eq. 10 random bound (alpha)", f"{info['rf_random_bound']:.4f} ({info['alpha']:.3f})"
         if info["rf_random_bound"] is not None else "n/a"),
        ("seconds", f"{info['seconds']:.3f}"),
    ]
    if args.algo == "par":
        rows.insert(-1, ("replica price (model makespan)",
                         f"{info['beta']:g} latencies of {info['latency']:g} cycles "
                         f"({info['model_makespan']:,.0f} cycles; tried "
                         + ", ".join(f"{b:g}" for b, _ in info["prices"]) + ")"))
    if "tau" in info:
        rows.insert(-1, ("HEP threshold", f"tau = {info['tau']:g}: "
                         f"{info['high_degree_vertices']:,} high-degree vertices, "
                         f"{info['streamed_edges']:,} edges streamed"))
    if "refine_moves" in info:
        rows.insert(-1, ("refinement", f"{info['refine_moves']:,} group moves in "
                         f"{info['refine_passes']} passes, {info['fm_moves']:,} FM moves kept of "
                         f"{info['fm_tried']:,} tried in {info['fm_passes']} "
                         f"pass{'es' if info['fm_passes'] != 1 else ''}: "
                         f"{info['replicas_before']:,} -> "
                         f"{_after_refinement(info):,} vertex copies"))
    if "vcycles" in info:
        finalists = info["finalists"].replace(", ", " and ") if "finalists" in info else ""
        rows.insert(-1, ("multilevel cycles", f"{info['vcycles']} cycles, "
                         f"{info['vcycles_kept']} kept: {info['vcycles_from']:,} -> "
                         f"{info.get('perturb_from', info['replicas_after']):,} vertex copies"
                         + (f" (run from {finalists} each, {info['best_of']} kept)"
                            if finalists else "")))
    elif "vcycles_skipped" in info:
        rows.insert(-1, ("multilevel cycles", f"skipped: {info['vcycles_skipped']}"))
    if "perturb_rounds" in info:
        rows.insert(-1, ("iterated search", f"{info['perturb_rounds']} rounds, "
                         f"{info['perturb_kept']} kept: {info['perturb_from']:,} -> "
                         f"{info['replicas_after']:,} vertex copies"))
    elif "perturb_skipped" in info:
        rows.insert(-1, ("iterated search", f"skipped: {info['perturb_skipped']}"))
    if args.algo == "spac" and "auxiliary_cut" in info:
        rows.insert(-1, ("SPAC", f"{info['backend']}"
                         + (" on the GPU" if info.get("device") == "gpu" else "")
                         + f", {info['variant']}: {info['transformed_vertices']:,} vertices, "
                         f"{info['auxiliary_cut']:,} of {info['auxiliary_edges']:,} auxiliary "
                         "edges cut"))
    if "best_of" in info:
        from vcut.quality import CUT_NAMES  # loaded already: best ran
        names = dict(CUT_NAMES, metis="the METIS cut")
        ran = info["candidates"].split(", ")
        skipped = "; ".join(f"{names[c]} skipped: {info[f'{c}_skipped']}" for c in names
                            if f"{c}_skipped" in info)
        rows.insert(-1, ("quality mode", f"{info['starts']} expansion"
                         + ("s" if info["starts"] != 1 else "")
                         + "".join(f" and {names[c]}" for c in names if c in ran)
                         + f": {info['best_of']} kept" + (f" ({skipped})" if skipped else "")))
    if info.get("distributed"):
        rows.insert(-1, ("distributed", f"{info['workers']} workers"
                         + (f", out of core ({info['pieces']} pieces)" if info.get("out_of_core") else "") + (
            f", {info['rounds']} rounds of {info['batch']:,} edges each"
            if info["batch"] else " (hash: the sequential result)")))
    elif "batch" in info:
        rows.insert(-1, ("batches", f"{info['batch']:,} edges each, decided in parallel"
                                    + (" on the GPU" if info.get("device") == "gpu" else "")
                                    + (f"; applied in {info['apply_rounds']:,} rounds, "
                                       f"{info['redecided']:,} re-decisions"
                                       if "apply_rounds" in info else
                                       f"; {info['redecided']:,} decided again when applied")))
    if files:
        rows.append(("written", ", ".join(files)))
    print_rows(rows, summary_stream(args.output))
    if info["self_loops"] or info["repeated_edges"]:
        print(f"note: merged {info['repeated_edges']:,} repeated edges and set aside "
              f"{info['self_loops']:,} self-loops before partitioning", file=sys.stderr)
    return 0


def _after_refinement(info):
    """The vertex copies after best's refinement: before its multilevel cycles or iterated
    search, where either ran."""
    return info.get("vcycles_from", info.get("perturb_from", info["replicas_after"]))


def _result(args, p, part, files, merged):
    """The JSON summary of one run (``--json``)."""
    m, info = part.metrics, part.info
    result = {
        "algo": args.algo, "p": p, "lambda": args.lam, "order": args.order,
        "replication_factor": m.replication_factor, "vertex_copies": m.vertex_copies,
        "edge_weight_imbalance": m.edge_weight_imbalance, "edge_imbalance": m.edge_imbalance,
        "cut_vertices": m.cut_vertices, "avg_cut_degree": m.avg_cut_degree,
        "alpha": info["alpha"], "rf_random_bound": info["rf_random_bound"],
        "self_loops": info["self_loops"], "repeated_edges": info["repeated_edges"],
        "seconds": round(info["seconds"], 4), "files": files,
        "merged_on_read": merged,
    }
    if args.algo == "par":
        result.update({k: info[k] for k in ("latency", "beta", "gamma", "chain_slack",
                                            "model_makespan", "prices")})
        result.update({k: info[k] for k in ("grain_share", "grains", "grain_vertices",
                                            "call_share") if k in info})
    if info.get("distributed"):
        result.update({k: info[k] for k in ("workers", "batch", "rounds")})
        if info.get("out_of_core"):
            result["pieces"] = info["pieces"]
    elif "batch" in info:
        result.update({k: info[k] for k in ("batch", "redecided")})
        result["device"] = info.get("device", "cpu")
        result["apply"] = info.get("apply", "recheck")
        if "apply_rounds" in info:
            result["apply_rounds"] = info["apply_rounds"]
    extra = [k for k in ("tau", "high_degree_vertices", "streamed_edges", "refine_moves",
                         "refine_passes", "fm_moves", "fm_tried", "fm_passes", "replicas_before",
                         "replicas_after", "starts", "candidates", "best_of", "metis_skipped",
                         "spac_skipped", "hep_skipped", "ml_skipped", "perturb_rounds",
                         "perturb_kept", "perturb_from", "perturb_skipped", "vcycles",
                         "vcycles_kept", "vcycles_from", "vcycles_skipped", "finalists")
             if k in info]
    result.update({k: info[k] for k in extra})
    if p <= 64:
        result["loads"] = m.loads
    return result


def _options(args, p=None):
    """The options of ``--algo`` (`vcut.cuts.make_options` takes the mapping): the knobs
    its family has, and those given that belong to another family (tau, grains, batch,
    apply, refine, preset), so that it says which."""
    from vcut.cuts import option_names  # lazy: the registry loads numba
    from vcut.partition import check_arguments  # lazy: as the registry

    check_arguments(args.p if p is None else p, args.seed, args.lam)  # --lambda: any cut
    names = option_names(args.algo)
    knobs = {"lam": args.lam, "order": args.order, "backend": args.backend,
             "variant": args.variant, "imbalance": args.imbalance, "latency": args.latency,
             "beta": args.beta, "chain_slack": args.chain_slack, "grain_unit": args.grain_unit}
    options = {k: v for k, v in knobs.items() if k in names and v is not None}  # None: unset
    given = {"tau": args.tau, "batch": args.batch, "apply": args.apply, "gamma": args.gamma,
             "grains": args.grains or None, "refine": args.refine or None,
             "preset": args.preset}
    options.update({k: v for k, v in given.items() if v is not None
                    and (k in names or k != "gamma")})
    return options


def _capacities(args):
    """The capacities of ``--capacities`` or ``--units`` (None: equal shares)."""
    if args.capacities and args.units:
        raise InputError("give --capacities or --units, not both")
    if args.capacities:
        return parse_numbers(args.capacities, "--capacities")
    if args.units:
        pairs = [u.split(":") for u in args.units.split(",") if u.strip()]
        if any(len(pr) != 2 for pr in pairs):
            raise InputError(f"--units must be speed:memory pairs, got {args.units!r}")
        speeds = parse_numbers(",".join(pr[0] for pr in pairs), "unit speeds")
        mems = parse_numbers(",".join(pr[1] for pr in pairs), "unit memories")
        return capacities_from_units(speeds, mems, 1.0)
    return None


def _merged_by_workers(args, info):
    """What the workers merged reading the file with --out-of-core (None: a file vcut
    wrote, read as written), noted on stderr as for a graph read here."""
    return note_merged(info["merged"], os.path.abspath(args.graph))


def _check_stream(args):
    """A distributed run streams the edges as given, unrefined: refuse what says otherwise."""
    if args.order != "given" or args.refine or args.tau is not None:
        raise InputError("a distributed run streams the edges as given, without refinement; "
                         "drop --order / --refine / --tau or --workers")


def _local_cluster_pays(args, g):
    """``--workers N``: whether the graph is large enough for a local cluster
    (`vcut.distributed.local_cluster_pays`); when not, says so on stderr."""
    from vcut.distributed import (  # lazy: the distributed cuts' kernels
        DEFAULT_BATCH,
        check_distributed,
        local_cluster_pays,
    )

    # what a distributed run refuses is refused whatever the size
    _check_stream(args)
    check_distributed(args.algo, args.p, args.seed, args.lam, args.batch or DEFAULT_BATCH,
                      args.workers, None)
    why = local_cluster_pays(g.m, args.algo)
    if why is not None:
        print(f"note: --workers {args.workers}: {why}", file=sys.stderr)
        args.batch = None  # the workers' round size: the stream here is not batched
    return why is None


def _distributed(args, g, caps):
    """The partition of ``g`` on a Dask cluster (`vcut.distributed`); with
    --out-of-core (``g`` None) of the file, read by the workers (`vcut.outofcore`)."""
    from vcut.distributed import DEFAULT_BATCH, partition_distributed  # lazy: Dask

    _check_stream(args)
    say = progress_lines(not args.json)
    if g is None:
        from vcut.outofcore import partition_file  # lazy: as vcut.distributed

        if args.algo == "multilevel":
            raise InputError("--out-of-core runs the vertex cuts of --workers; multilevel reads "
                             "the graph here: drop --out-of-core")
        with client_for(args) as client:
            return partition_file(args.graph, args.p, args.algo, client=client, fmt=args.format,
                                  duplicates=args.duplicates, workers=args.workers,
                                  batch=args.batch or DEFAULT_BATCH, lam=args.lam,
                                  seed=args.seed, capacities=caps, output=args.output,
                                  progress=say)
    with client_for(args) as client:
        return partition_distributed(g, args.p, args.algo, client=client, workers=args.workers,
                                     batch=args.batch or DEFAULT_BATCH, lam=args.lam,
                                     seed=args.seed, capacities=caps, progress=say)
