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

import numpy as np

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
    _add_trace_options(t)
    _add_common(t)
    t.set_defaults(func=_cmd_trace)

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
    g.add_argument("--weights", choices=["measured", "model"], default="measured",
                   help="edge weights: cycles measured in the trace, or the cache model "
                   "(deterministic) (default measured)")
    g.add_argument("--war", action="store_true", help="add write-after-read memory edges")
    g.add_argument("--waw", action="store_true", help="add write-after-write memory edges")
    g.add_argument("--save-trace", metavar="TRACE", help="also keep the trace of a C input")
    _add_trace_options(g)
    _add_common(g)
    g.set_defaults(func=_cmd_graph)

    st = sub.add_parser(
        "stats",
        help="statistics of a graph: sizes, power-law fit, path lengths, critical path",
        description="Print |V|, |E|, the degree power-law fit (Clauset-Shalizi-Newman), "
        "average shortest-path length, critical path and total weight of a graph file.",
    )
    st.add_argument("graph", metavar="GRAPH", help="graph file (.npz, .graph, .edgelist, .txt, .mtx, .lg; .gz ok)")
    st.add_argument("--format", choices=["metis", "edgelist", "mtx", "lg", "npz"],
                    help="file format (default: from the suffix)")
    st.add_argument("--plot", metavar="PNG", help="write a log-log degree distribution plot")
    st.add_argument("--path-samples", type=int, default=32, metavar="K",
                    help="BFS sources for the average path length of graphs over 2000 nodes (default 32)")
    st.add_argument("--seed", type=int, default=0, help="seed of the sampled sources (default 0)")
    _add_common(st)
    st.set_defaults(func=_cmd_stats)

    pa = sub.add_parser(
        "partition",
        help="edge-partition a graph into p clusters (vertex cut)",
        description="Assign every edge of GRAPH to one of p clusters with a vertex-cut "
        "partitioner. Writes OUT (one cluster id per input edge, in input order) and "
        "OUT.replicas.npz (replica lists, masters, loads, metrics). Self-loops and repeated "
        "edges are merged before partitioning (repeats get their representative's cluster, "
        "a self-loop its vertex's master cluster) and reported.",
    )
    pa.add_argument("graph", metavar="GRAPH", help="graph file (.npz, .graph, .edgelist, .txt, .mtx, .lg; .gz ok)")
    pa.add_argument("-p", type=int, required=True, help="number of clusters")
    pa.add_argument("--algo", default="wb-libra",
                    choices=["random", "pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra", "dbh",
                             "hdrf", "spac", "wvp-random", "wvp-greedy", "hypergraph"],
                    help="partitioner (default wb-libra)")
    pa.add_argument("--backend", default="metis", choices=["metis", "kahip", "multilevel"],
                    help="vertex partitioner of spac (default metis)")
    pa.add_argument("--variant", default="contracted", choices=["contracted", "split"],
                    help="split-and-connect form for spac (default contracted)")
    pa.add_argument("--imbalance", type=float, default=1.03,
                    help="balance tolerance of spac / wvp / hypergraph (default 1.03)")
    pa.add_argument("--lambda", dest="lam", type=float, default=1.0,
                    help="balance bound of the WB variants, >= 1 (default 1)")
    pa.add_argument("--order", default="given", choices=["given", "random", "bfs", "dfs"],
                    help="edge stream order (default: as given)")
    pa.add_argument("--seed", type=int, default=0, help="seed of random choices (default 0)")
    pa.add_argument("--capacities", metavar="C1,C2,...",
                    help="relative cluster capacities (default: equal shares)")
    pa.add_argument("--units", metavar="S1:M1,S2:M2,...",
                    help="processing units as speed:memory, memory as a fraction of the graph's "
                    "total weight; capacities by Algorithm 1 of Tzovas et al. (HiPC 2020)")
    pa.add_argument("--format", choices=["metis", "edgelist", "mtx", "lg", "npz"],
                    help="graph file format (default: from the suffix)")
    pa.add_argument("-o", "--output", metavar="OUT", help="assignment file to write")
    _add_common(pa)
    pa.set_defaults(func=_cmd_partition)

    an = sub.add_parser(
        "analyze",
        help="trace, partition, map onto a machine and simulate: the whole pipeline",
        description="Run trace -> graph -> partition -> memory-centric mapping -> simulation "
        "for a C program (or a trace .npz, or a graph file) and write OUTDIR/mapping.json and "
        "OUTDIR/report.html. Program arguments follow '--'.",
    )
    an.add_argument("inputs", nargs="+", metavar="INPUT", help="PROGRAM.c [...], TRACE.npz or GRAPH")
    an.add_argument("-p", type=int, required=True, help="number of clusters")
    _add_analysis_options(an)
    an.add_argument("--partition", metavar="FILE",
                    help="use this partition (from 'vcut partition -o') instead of partitioning")
    an.add_argument("--no-baselines", action="store_true",
                    help="do not also simulate the baseline mappings (faster on large programs)")
    an.add_argument("--compare-methods", action="store_true",
                    help="also partition, map and simulate with other methods at the same p and "
                    "show them in the report and mapping.json (needs -o)")
    an.add_argument("--methods", metavar="M1,M2,...",
                    default="compnet,metis,pg,w-pg,wb-pg,libra,w-libra,wb-libra",
                    help="the methods of --compare-methods (default: the eight of Tables 6-9)")
    an.add_argument("-o", "--output", metavar="OUTDIR", help="directory for mapping.json and report.html")
    _add_trace_options(an)
    _add_common(an)
    an.set_defaults(func=_cmd_analyze)

    co = sub.add_parser(
        "compare",
        help="compare edge cuts and vertex cuts at several cluster counts (Tables 6-9)",
        description="Partition, map and simulate INPUT with every method (CompNet-style and "
        "METIS edge cuts; PG, W-PG, WB-PG, Libra, W-Libra, WB-Libra vertex cuts) for each p, "
        "and print execution time and communication relative to the first method.",
    )
    co.add_argument("inputs", nargs="+", metavar="INPUT", help="PROGRAM.c [...], TRACE.npz or GRAPH")
    co.add_argument("-p", required=True, metavar="P1,P2,...", help="cluster counts, e.g. 8,64,1024")
    co.add_argument("--methods", metavar="M1,M2,...",
                    help="methods in column order (default: compnet,metis,pg,w-pg,wb-pg,libra,"
                    "w-libra,wb-libra)")
    _add_analysis_options(co, algo=False)
    co.add_argument("-o", "--output", metavar="OUTDIR", help="directory for compare.json and compare.png")
    _add_trace_options(co)
    _add_common(co)
    co.set_defaults(func=_cmd_compare)

    for kind in ("bfs", "sssp"):
        tr = sub.add_parser(
            kind,
            help=f"{'breadth-first hop distances' if kind == 'bfs' else 'single-source shortest paths'} "
            "from a source, under a load-balancing strategy",
            description="Traverse GRAPH from --source with a load-balancing strategy (Raval et al.): "
            "bs node-based, ep edge-based (work chunking), ep-nochunk, wd workload decomposition, "
            "ns node splitting, hp hierarchical processing. Edge lists are undirected unless "
            "--directed; unweighted graphs have unit weights.",
        )
        tr.add_argument("graph", metavar="GRAPH")
        tr.add_argument("--source", type=int, required=True, help="source vertex (0-based)")
        tr.add_argument("--strategy", default="bs",
                        choices=["bs", "ep", "ep-nochunk", "wd", "ns", "hp", "auto"],
                        help="load-balancing strategy, or auto (from the device and the graph; "
                        "default bs)")
        tr.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"],
                        help="cpu, gpu (numba.cuda), or auto: the GPU when there is one (default cpu)")
        tr.add_argument("--directed", action="store_true", help="follow edges in their direction only")
        tr.add_argument("--format", choices=["metis", "edgelist", "mtx", "lg", "npz"])
        tr.add_argument("-o", "--output", metavar="DIST", help="distances, one per line (inf: unreachable)")
        _add_common(tr)
        tr.set_defaults(func=_cmd_traverse, kind=kind)
    return parser


def _add_analysis_options(p, algo=True):
    if algo:
        p.add_argument("--algo", default="wb-libra", metavar="METHOD",
                       help="partitioning: a vertex cut (wb-libra, w-libra, libra, wb-pg, w-pg, pg, "
                       "hdrf, dbh, spac, ...) or an edge cut (metis, compnet) (default wb-libra)")
    p.add_argument("--machine", metavar="SPEC",
                   help="table2:P, mesh:RxC, host, hwloc:FILE.xml or a JSON machine file "
                   "(default: table2:P, one core per cluster)")
    p.add_argument("--mapping", default="memory-centric",
                   choices=["memory-centric", "round-robin", "random", "comm-greedy",
                            "recursive-bisection"],
                   help="cluster-to-core mapping (default memory-centric)")
    p.add_argument("--threshold", type=int, default=4,
                   help="most clusters the memory-centric mapping puts on one core (default 4)")
    p.add_argument("--lambda", dest="lam", type=float, default=1.0,
                   help="balance bound of the WB variants, >= 1 (default 1)")
    p.add_argument("--order", default="given", choices=["given", "random", "bfs", "dfs"],
                   help="edge stream order of the streaming vertex cuts (default: as given, "
                   "i.e. execution order for IR graphs)")
    p.add_argument("--seed", type=int, default=0, help="seed of random choices (default 0)")
    p.add_argument("--weights", choices=["measured", "model"], default="model",
                   help="edge weights of a C program or trace: the cache model (deterministic, "
                   "default) or the cycles measured in the trace")


def _analysis_input(args, program_args):
    """(graph, object sizes or None, description) of the command's input."""
    from frontend import load_trace
    from frontend.errors import InputError
    from ir_graph import build_graph, read_graph

    inputs = args.inputs
    if all(p.lower().endswith(".c") for p in inputs):
        trace = _run_trace(args, program_args)
        return build_graph(trace, weights=args.weights), trace.obj_size, " ".join(inputs)
    if len(inputs) != 1:
        raise InputError("give C sources, or one trace (.npz), or one graph file")
    path = inputs[0]
    if path.lower().endswith(".npz") and _npz_format(path) == "vcut-trace":
        trace = load_trace(path)
        return build_graph(trace, weights=args.weights), trace.obj_size, path
    return read_graph(path), None, path


def _npz_format(path):
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"])).get("format") if "meta" in z.files else None
    except Exception:
        return None  # read_graph reports what is wrong with it


def _say(enabled):
    if not enabled or not sys.stderr.isatty():
        return None
    t0 = time.perf_counter()

    def say(line):
        sys.stderr.write(f"[{time.perf_counter() - t0:7.1f} s] {line}\n")
        sys.stderr.flush()

    return say


def _output_dir(path, names):
    """Create OUTDIR if needed and check that its files can be written."""
    from frontend.atomic import check_output_path
    from frontend.errors import OutputError

    if os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"output directory {path} exists and is not a directory; "
                          "give a directory for -o")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output directory {path}: {exc.strerror}") from None
    for name in names:
        check_output_path(os.path.join(path, name))


def _cmd_analyze(args, program_args):
    from frontend.atomic import atomic_output
    from mapping.analyze import analyze_graph
    from mapping.machine import load_machine
    from mapping.report import analysis_html
    from vcut.output import read_assignment

    if args.compare_methods and not args.output:
        from frontend.errors import InputError

        raise InputError("--compare-methods puts the comparison in the report; give -o OUTDIR "
                         "(or use 'vcut compare' for a table)")
    if args.output:
        _output_dir(args.output, ["mapping.json", "report.html"])
    machine = load_machine(args.machine) if args.machine else None
    assignment = read_assignment(args.partition) if args.partition else None
    say = _say(not args.json)
    t0 = time.perf_counter()
    if say:
        say("tracing and building the graph")
    graph, obj_bytes, source = _analysis_input(args, program_args)
    front = time.perf_counter() - t0
    a = analyze_graph(graph, args.p, args.algo, machine, mapper=args.mapping,
                      threshold=args.threshold, seed=args.seed, lam=args.lam, order=args.order,
                      object_bytes=obj_bytes, assignment=assignment,
                      baselines=not args.no_baselines, progress=say)
    a.phases["trace_and_graph"] = front
    files = []
    if args.output:
        if say:
            say("writing the report")
        t = time.perf_counter()
        methods = None
        if args.compare_methods:
            from mapping.analyze import compare_methods

            names = [m.strip() for m in args.methods.split(",") if m.strip()]
            methods = compare_methods(graph, [args.p], names, machine, mapper=args.mapping,
                                      threshold=args.threshold, seed=args.seed, lam=args.lam,
                                      order=args.order, object_bytes=obj_bytes, progress=say)
        page = analysis_html(a, graph, source, methods)
        a.phases["report"] = time.perf_counter() - t
        a.phases["total"] = time.perf_counter() - t0
        doc = a.to_json(source)
        if methods:
            doc["methods"] = methods
        doc["graph"] = {"nodes": graph.n, "edges": graph.m, "weights": graph.meta.get("weights")}
        for name, text in (("mapping.json", json.dumps(doc, indent=1)), ("report.html", page)):
            path = os.path.join(args.output, name)
            with atomic_output(path, "w") as fh:
                fh.write(text)
            files.append(os.path.abspath(path))
    a.phases.setdefault("total", time.perf_counter() - t0)
    summary = a.summary()
    summary["files"] = files
    summary["graph"] = {"nodes": graph.n, "edges": graph.m}
    if args.json:
        print(json.dumps(summary))
        return 0
    r = a.result
    rows = [
        ("graph", f"{graph.n:,} nodes, {graph.m:,} edges ({source})"),
        ("partitioning", f"{a.method}, p = {a.p}: " + ", ".join(
            f"{k.replace('_', ' ')} {v:.4f}" if isinstance(v, float) else f"{k.replace('_', ' ')} {v}"
            for k, v in a.partition.items() if k != "kind")),
        ("machine", f"{a.machine.name} ({a.machine.cores} cores, {a.machine.mesh_rows} x "
                    f"{a.machine.mesh_cols} mesh, {a.machine.numa_nodes} NUMA nodes)"),
        ("mapping", a.placement.method),
        ("makespan", f"{r.makespan:,.0f} cycles = {r.seconds * 1e3:.3f} ms"),
        ("without dependency waits", f"{a.independent_time:,.0f} cycles"),
        ("communication", f"{r.communication_bytes:,.0f} bytes ({r.messages:,} messages)"),
        ("network bytes / hop-bytes", f"{r.network_bytes:,.0f} / {r.hop_bytes:,.0f}"),
        ("mean core utilisation", f"{r.utilization.mean():.3f}"),
    ]
    for m in a.mappers:
        if m["mapping"] != a.placement.method:
            rows.append((f"  vs {m['mapping']}", f"makespan {m['makespan']:,.0f}, hop-bytes "
                         f"{m['hop_bytes']:,.0f}"))
    rows.append(("phases", ", ".join(f"{k} {v:.2f} s" for k, v in a.phases.items())))
    if files:
        rows.append(("written", ", ".join(files)))
    _print_rows(rows, sys.stdout)
    return 0


def _cmd_compare(args, program_args):
    from frontend.atomic import atomic_output
    from frontend.errors import InputError
    from mapping.analyze import METHODS, compare_methods
    from mapping.machine import load_machine
    from mapping.report import compare_figure, compare_tables, figure_png

    try:
        ps = [int(x) for x in args.p.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"-p takes comma-separated cluster counts, e.g. 8,64,1024; got {args.p!r}") from None
    if not ps:
        raise InputError("-p needs at least one cluster count")
    methods = tuple(m.strip() for m in args.methods.split(",")) if args.methods else METHODS
    if args.output:
        _output_dir(args.output, ["compare.json", "compare.png"])
    machine = load_machine(args.machine) if args.machine else None
    say = _say(not args.json)
    graph, obj_bytes, source = _analysis_input(args, program_args)
    rows = compare_methods(graph, ps, methods, machine, mapper=args.mapping,
                           threshold=args.threshold, seed=args.seed, lam=args.lam,
                           order=args.order, object_bytes=obj_bytes, progress=say)
    files = []
    if args.output:
        png = figure_png(compare_figure(rows, methods, f"{source}: {graph.n:,} nodes"))
        for name, data, mode in (("compare.json", json.dumps({"source": source, "rows": rows},
                                                             indent=1), "w"),
                                 ("compare.png", png, "wb")):
            path = os.path.join(args.output, name)
            with atomic_output(path, mode) as fh:
                fh.write(data)
            files.append(os.path.abspath(path))
    if args.json:
        print(json.dumps({"source": source, "methods": list(methods), "rows": rows, "files": files}))
        return 0
    print("\n".join(compare_tables(rows, methods)))
    if files:
        print("written: " + ", ".join(files), file=sys.stderr)
    return 0


def _add_trace_options(t):
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


def _progress_printer(label):
    if not sys.stderr.isatty():
        return None

    def report(elapsed, nbytes):
        sys.stderr.write(f"\r{label}: {elapsed:6.1f} s, {nbytes / 1e6:8.1f} MB of events")
        sys.stderr.flush()

    return report


def _run_trace(args, program_args):
    """Compile and trace the C sources named on the command line."""
    from frontend import RunLimits, compile_program, trace_program

    limits = RunLimits(
        timeout=args.timeout,
        memory=args.memory_limit << 20,
        max_instructions=args.max_instructions,
    )
    limits.validate()
    sources = getattr(args, "sources", None) or args.inputs
    cm = compile_program(
        sources,
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
    return trace


def _cmd_trace(args, program_args):
    from frontend.atomic import check_output_path

    check_output_path(args.output)
    t0 = time.perf_counter()
    trace = _run_trace(args, program_args)
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
    _print_rows([
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


def _print_rows(rows, stream=None):
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}", file=stream or sys.stderr)


def _cmd_graph(args, program_args):
    from frontend import load_trace
    from frontend.atomic import check_output_path
    from frontend.errors import InputError
    from ir_graph import build_graph, fit_power_law, write_graph
    from ir_graph.formats import detect_format

    check_output_path(args.output)
    fmt = detect_format(args.output)
    if fmt == "lg":
        raise InputError("vcut graph writes .npz, .graph, .edgelist or .mtx; not .lg")
    t0 = time.perf_counter()
    traces = [p for p in args.inputs if p.lower().endswith(".npz")]
    if traces:
        if len(args.inputs) != 1:
            raise InputError("give either one trace (.npz) or C sources, not both")
        trace = load_trace(traces[0])
    else:
        if args.save_trace:
            check_output_path(args.save_trace)
        trace = _run_trace(args, program_args)
        if args.save_trace:
            trace.save(args.save_trace)
        if not args.json:
            sys.stdout.write(trace.meta.get("stdout", ""))
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
        print(json.dumps(result))
        return 0
    _print_rows([
        ("nodes", f"{g.n:,}"), ("edges", f"{g.m:,}"), ("total weight", f"{g.total_weight:,.0f}"),
        ("alpha (x_min)", f"{fit.alpha:.3f} ({fit.x_min})"), ("weights", args.weights),
        ("graph", f"{result['output']} ({fmt})"), ("seconds", f"{seconds:.2f}"),
    ])
    for k, v in report.items():
        if v:
            print(f"note: {fmt} output: {k.replace('_', ' ')}: {v}", file=sys.stderr)
    return 0


def _cmd_stats(args, program_args):
    from ir_graph import degree_plot, graph_stats, read_graph
    from ir_graph.stats import PowerLawFit

    if args.plot:
        from frontend.atomic import check_output_path

        check_output_path(args.plot)
    t0 = time.perf_counter()
    g = read_graph(args.graph, args.format)
    s = graph_stats(g, path_samples=args.path_samples, seed=args.seed)
    if args.plot:
        degree_plot(g, args.plot, PowerLawFit(s.alpha, s.x_min, s.ks, s.n_tail))
    result = s.to_dict()
    result["seconds"] = round(time.perf_counter() - t0, 3)
    result["directed"] = g.directed
    if args.json:
        print(json.dumps(result))
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
    _print_rows(rows)
    return 0


def _parse_numbers(text, what):
    from frontend.errors import InputError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{what} must be comma-separated numbers, got {text!r}") from None


def _cmd_partition(args, program_args):
    from frontend.atomic import check_output_path
    from frontend.errors import InputError
    from ir_graph import read_graph
    from vcut.capacities import capacities_from_units
    from vcut.output import write_partition
    from vcut.partition import partition_graph

    if args.output:
        check_output_path(args.output)
        check_output_path(args.output + ".replicas.npz")
    g = read_graph(args.graph, args.format)
    caps = None
    if args.capacities and args.units:
        raise InputError("give --capacities or --units, not both")
    if args.capacities:
        caps = _parse_numbers(args.capacities, "--capacities")
    elif args.units:
        pairs = [u.split(":") for u in args.units.split(",") if u.strip()]
        if any(len(pr) != 2 for pr in pairs):
            raise InputError(f"--units must be speed:memory pairs, got {args.units!r}")
        speeds = _parse_numbers(",".join(pr[0] for pr in pairs), "unit speeds")
        mems = _parse_numbers(",".join(pr[1] for pr in pairs), "unit memories")
        caps = capacities_from_units(speeds, mems, 1.0)
    part = partition_graph(g, args.p, args.algo, lam=args.lam, order=args.order, seed=args.seed,
                           capacities=caps, backend=args.backend, spac_variant=args.variant,
                           imbalance=args.imbalance)
    files = write_partition(part, args.output) if args.output else []
    m = part.metrics
    info = part.info
    result = {
        "algo": args.algo, "p": args.p, "lambda": args.lam, "order": args.order,
        "replication_factor": m.replication_factor, "vertex_copies": m.vertex_copies,
        "edge_weight_imbalance": m.edge_weight_imbalance, "edge_imbalance": m.edge_imbalance,
        "cut_vertices": m.cut_vertices, "avg_cut_degree": m.avg_cut_degree,
        "alpha": info["alpha"], "rf_random_bound": info["rf_random_bound"],
        "self_loops": info["self_loops"], "repeated_edges": info["repeated_edges"],
        "seconds": round(info["seconds"], 4), "files": files,
    }
    if args.json:
        if args.p <= 64:
            result["loads"] = m.loads
        print(json.dumps(result))
        return 0
    rows = [
        ("algorithm", f"{args.algo} (p = {args.p}, lambda = {args.lam:g}, order = {args.order})"),
        ("edges / vertices", f"{info['simple_edges']:,} / {g.n:,}"),
        ("replication factor", f"{m.replication_factor:.4f}"),
        ("vertex copies", f"{m.vertex_copies:,}"),
        ("edge weight imbalance", f"{m.edge_weight_imbalance:.5f}"),
        ("edge-count imbalance", f"{m.edge_imbalance:.5f}"),
        ("cut vertices (avg degree)", f"{m.cut_vertices:,} ({m.avg_cut_degree:.2f})"),
        ("Eq. 10 random bound (alpha)", f"{info['rf_random_bound']:.4f} ({info['alpha']:.3f})"
         if info["rf_random_bound"] is not None else "n/a"),
        ("seconds", f"{info['seconds']:.3f}"),
    ]
    if files:
        rows.append(("written", ", ".join(files)))
    _print_rows(rows)
    if info["self_loops"] or info["repeated_edges"]:
        print(f"note: merged {info['repeated_edges']:,} repeated edges and set aside "
              f"{info['self_loops']:,} self-loops before partitioning", file=sys.stderr)
    return 0


def _cmd_traverse(args, program_args):
    from frontend.atomic import atomic_output, check_output_path
    from ir_graph import read_graph
    from runtime.traversal import bfs, sssp

    if args.output:
        check_output_path(args.output)
    g = read_graph(args.graph, args.format)
    run = bfs if args.kind == "bfs" else sssp
    r = run(g, args.source, args.strategy, device=args.device,
            directed=True if args.directed else None)
    if args.output:
        with atomic_output(args.output, "w") as fh:
            fh.write("\n".join("inf" if np.isinf(d) else f"{d:.17g}" for d in r.dist.tolist()) + "\n")
    reached = int(np.isfinite(r.dist).sum())
    result = {"kind": args.kind, "strategy": r.strategy, "device": r.device, "seconds": r.seconds,
              "mteps": r.mteps, "edges_relaxed": r.edges_relaxed, "iterations": r.iterations,
              "reached": reached, "memory_bytes": r.info["memory_bytes"],
              **{k: v for k, v in r.info.items() if k != "memory_bytes"}}
    if args.json:
        print(json.dumps(result))
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
    _print_rows(rows)
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
