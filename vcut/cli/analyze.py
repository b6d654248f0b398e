"""``vcut analyze``: trace, partition, map and simulate."""

import os
import sys
import time

from ._common import (
    add_analysis_options,
    add_common,
    add_trace_options,
    analysis_input,
    check_inputs,
    int_option,
    json_text,
    print_json,
    print_rows,
    progress_lines,
    spill_context,
)
from ._outputs import output_directory
from ._progress import add_progress_option

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    an = sub.add_parser(
        "analyze",
        help="trace, partition, map onto a machine and simulate: the whole pipeline",
        description="Run trace -> graph -> partition -> memory-centric mapping -> simulation "
        "for a C program (or a trace .npz, or a graph file) and write OUTDIR/mapping.json and "
        "OUTDIR/report.html. Program arguments follow '--'.",
    )
    an.add_argument("inputs", nargs="+", metavar="INPUT", help="PROGRAM.c [...], TRACE.npz or GRAPH")
    an.add_argument("-p", type=int_option("-p", 1, 2**31 - 1), required=True,
                    help="number of clusters")
    add_analysis_options(an)
    an.add_argument("--partition", metavar="FILE",
                    help="use this partition (from 'vcut partition -o') instead of partitioning")
    an.add_argument("--no-baselines", action="store_true",
                    help="do not also simulate the baseline mappings (faster on large programs)")
    an.add_argument("--compare-methods", action="store_true",
                    help="also partition, map and simulate with other methods at the same p and "
                    "show them in the report and mapping.json (needs -o)")
    an.add_argument("--methods", metavar="M1,M2,...",
                    default="compnet,metis,pg,w-pg,wb-pg,libra,w-libra,wb-libra,par",
                    help="the methods of --compare-methods (default: the eight of Tables 6-9 and par)")
    an.add_argument("--windows", type=int_option("--windows", 1, 2**31 - 1), metavar="N",
                    help="sample the run: analyse N evenly spaced windows of it, each on its own "
                    "with the same options, and print each window's figures and how they vary "
                    "(min, median, max, coefficient of variation); within --window when given")
    an.add_argument("--window-size", metavar="S|roi:M",
                    help="size of each --windows window: S nodes, or roi:M for M activations "
                    "of the --roi function(s) (default: the run split into N equal parts)")
    an.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"],
                    help="the greedy vertex cuts (--algo wb-libra, pg, ...): decide their "
                    "batches on the GPU (the CPU batches' result; see vcut partition --device)")
    an.add_argument("-o", "--output", metavar="OUTDIR",
                    help="directory for mapping.json and report.html (with --windows: "
                    "windows.json)")
    add_trace_options(an)
    add_progress_option(an)
    add_common(an)
    an.set_defaults(func=run)


def run(args, program_args):
    check_inputs(args, program_args)
    with spill_context(args):
        return _run(args, program_args)


def _run(args, program_args):
    if args.windows or args.window_size:
        return _run_windows(args, program_args)
    from mapping.report import metric_text, utilization_rows

    summary, a, graph, source, ins, methods, files = _analyse(args, program_args)
    if args.json:
        print_json(summary)
        return 0
    r = a.result
    win = graph.meta.get("window")
    rows = [
        ("graph", f"{graph.n:,} nodes, {graph.m:,} edges, {graph.meta.get('weights', 'given')} "
                  f"weights ({source})"),
    ]
    if win:
        roi = _activations(win.get("roi_activations"))
        rows.append(("window", f"{roi}nodes {win['start']:,}..{win['end'] - 1:,} of "
                               f"{win['nodes_of_run']:,}; {win['edges_in']:,} edges into and "
                               f"{win['edges_out']:,} out of the window dropped"))
    rows += [
        ("partitioning", f"{a.method}, p = {a.p}: " + ", ".join(
            f"{k.replace('_', ' ')} {metric_text(v)}" for k, v in a.partition.items()
            if k != "kind")),
        ("machine", f"{a.machine.name} ({a.machine.cores} cores, {a.machine.mesh_rows} x "
                    f"{a.machine.mesh_cols} mesh, {a.machine.numa_nodes} NUMA nodes)"),
        ("mapping", a.placement.method),
        ("makespan", f"{r.makespan:,.0f} cycles = {r.seconds * 1e3:.3f} ms"),
        ("lower bound", a.bound.text(r.makespan)),
        ("without dependency waits", f"{a.independent_time:,.0f} cycles (messages charged one "
                                     "after another: not a bound of the makespan)"),
        ("communication", f"{r.communication_bytes:,.0f} bytes ({r.messages:,} messages)"),
        ("network bytes / hop-bytes", f"{r.network_bytes:,.0f} / {r.hop_bytes:,.0f}"),
        *utilization_rows(r, a.machine.cores),
        ("reading", ins.reading),
    ]
    for m in a.mappers:
        if m["mapping"] != a.placement.method:
            rows.append((f"  vs {m['mapping']}", f"makespan {m['makespan']:,.0f}, hop-bytes "
                         f"{m['hop_bytes']:,.0f}"))
    for m in methods or []:
        rows.append((f"  method {m['method']}", f"makespan {m['makespan']:,.0f}, without waits "
                     f"{m['independent_time']:,.0f}, communication "
                     f"{m['communication_bytes']:,.0f} bytes"))
    rows.append(("phases", ", ".join(f"{k} {v:.2f} s" for k, v in a.phases.items())))
    if files:
        rows.append(("written", ", ".join(files)))
    print_rows(rows, sys.stdout)
    return 0


def _analyse(args, program_args):
    """Run the analysis of the command line (writing -o's files): ``(summary, analysis,
    graph, source, insights, methods, files)``."""
    from vcut_base.atomic import atomic_output
    from mapping.analyze import analyze_graph
    from mapping.insight import insight
    from mapping.machine import load_machine
    from mapping.report import analysis_html
    from vcut.output import read_assignment

    if args.compare_methods and not args.output:
        from vcut_base.errors import InputError

        raise InputError("--compare-methods puts the comparison in the report; give -o OUTDIR "
                         "(or use 'vcut compare' for a table)")
    if args.output:
        output_directory(args, ["mapping.json", "report.html"])
    machine = load_machine(args.machine) if args.machine else None
    assignment = read_assignment(args.partition) if args.partition else None
    say = progress_lines(not args.json)
    t0 = time.perf_counter()
    if say:
        say("tracing and building the graph")
    # the budget's estimate is printed (stderr) whenever a result is not JSON
    note = None if args.json else (say or (lambda line: print(line, file=sys.stderr)))
    graph, obj_bytes, source = analysis_input(
        args, program_args, budget=(args.p, not args.no_baselines), say=note)
    front = time.perf_counter() - t0
    a = analyze_graph(graph, args.p, args.algo, machine, mapper=args.mapping,
                      threshold=args.threshold, seed=args.seed, lam=args.lam, order=args.order,
                      object_bytes=obj_bytes, assignment=assignment,
                      baselines=not args.no_baselines, progress=say, device=args.device)
    a.phases["trace_and_graph"] = front
    ins = insight(a, graph)  # lines and object names from graph.source (a traced program)
    files = []
    methods = None
    if args.output:
        if say:
            say("writing the report")
        t = time.perf_counter()
        if args.compare_methods:
            from mapping.analyze import compare_methods

            names = [m.strip() for m in args.methods.split(",") if m.strip()]
            methods = compare_methods(graph, [args.p], names, machine, mapper=args.mapping,
                                      threshold=args.threshold, seed=args.seed, lam=args.lam,
                                      order=args.order, object_bytes=obj_bytes, progress=say)
        page = analysis_html(a, graph, source, methods, ins)
        a.phases["report"] = time.perf_counter() - t
        a.phases["total"] = time.perf_counter() - t0
        doc = a.to_json(source)
        doc["insights"] = ins.to_json()
        if methods:
            doc["methods"] = methods
        doc["graph"] = {"nodes": graph.n, "edges": graph.m, "weights": graph.meta.get("weights"),
                        "window": graph.meta.get("window")}
        for name, text in (("mapping.json", json_text(doc, indent=1)), ("report.html", page)):
            path = os.path.join(args.output, name)
            with atomic_output(path, "w") as fh:
                fh.write(text)
            files.append(os.path.abspath(path))
    a.phases.setdefault("total", time.perf_counter() - t0)
    summary = a.summary()
    summary["files"] = files
    summary["insights"] = ins.to_json()
    if methods:
        summary["methods"] = methods
    summary["graph"] = {"nodes": graph.n, "edges": graph.m, "window": graph.meta.get("window")}
    return summary, a, graph, source, ins, methods, files


def summary_for(argv):
    """The JSON summary ``vcut analyze ARGV --json`` prints, without printing it: one
    row of a batch (`runtime.batch`). ``ARGV`` as on the command line (program
    arguments after ``--``); raises what the command would report as an error."""
    from vcut_base.errors import InputError

    from . import UsageError, build_parser

    argv = list(argv)
    program_args = []
    if "--" in argv:
        k = argv.index("--")
        argv, program_args = argv[:k], argv[k + 1:]
    try:
        args = build_parser().parse_args(["analyze", *argv])
    except UsageError as exc:
        raise InputError(str(exc)) from None
    args.command_line = ["analyze", *argv]
    check_inputs(args, program_args)
    if args.windows or args.window_size:
        raise InputError("a batch row is one whole analysis; drop --windows / --window-size")
    args.json = True  # no progress lines
    with spill_context(args):
        return _analyse(args, program_args)[0]


def _activations(acts):
    """``"ROI activations K..L-1 of C: "`` of a window's ``roi_activations`` ("" for None)."""
    if acts is None:
        return ""
    first, last = acts["first"], acts["stop"] - 1
    which = f"activation {first}" if first == last else f"activations {first}..{last}"
    return f"ROI {which} of {acts['of']:,}: "


def _run_windows(args, program_args):
    """``--windows N``: the analysis of N evenly spaced windows (`mapping.sampling`)."""
    from vcut_base.atomic import atomic_output
    from vcut_base.errors import InputError
    from mapping.machine import load_machine
    from mapping.report import windows_tables
    from mapping.sampling import analyze_windows

    from ._common import parse_window_size

    if not args.windows:
        raise InputError("--window-size sets the size of the --windows sample; give --windows N")
    for given, option, why in ((args.partition, "--partition", "a partition of the whole graph "
                                "fits none of the windows"),
                               (args.compare_methods, "--compare-methods", "it compares the "
                                "methods on one analysis; run 'vcut compare --window ...' on a "
                                "window")):
        if given:
            raise InputError(f"{option} does not combine with --windows: {why}")
    unit, size = parse_window_size(args.window_size) if args.window_size else ("nodes", None)
    if args.output:
        output_directory(args, ["windows.json"])
    machine = load_machine(args.machine) if args.machine else None
    say = progress_lines(not args.json)
    t0 = time.perf_counter()
    note = None if args.json else (say or (lambda line: print(line, file=sys.stderr)))
    graph, obj_bytes, source = analysis_input(
        args, program_args, budget=(args.p, not args.no_baselines), say=note)
    sample = analyze_windows(graph, args.p, args.windows, size, unit=unit, method=args.algo,
                             machine=machine, mapper=args.mapping, threshold=args.threshold,
                             seed=args.seed, lam=args.lam, order=args.order,
                             object_bytes=obj_bytes, baselines=not args.no_baselines,
                             progress=say)
    doc = sample.summary()
    doc["source"] = source
    doc["graph"] = {"nodes": graph.n, "edges": graph.m, "weights": graph.meta.get("weights"),
                    "window": graph.meta.get("window")}
    doc["seconds"] = time.perf_counter() - t0
    files = []
    if args.output:
        path = os.path.join(args.output, "windows.json")
        with atomic_output(path, "w") as fh:
            fh.write(json_text(doc, indent=1))
        files.append(os.path.abspath(path))
    doc["files"] = files
    if args.json:
        print_json(doc)
        return 0
    win = graph.meta.get("window")
    rows = [("graph", f"{graph.n:,} nodes, {graph.m:,} edges, "
                      f"{graph.meta.get('weights', 'given')} weights ({source})")]
    if win:
        rows.append(("window", f"nodes {win['start']:,}..{win['end'] - 1:,} of "
                               f"{win['nodes_of_run']:,} (the windows below count from its "
                               "first node)"))
    rows += [("analysis", f"{sample.method}, p = {sample.p}, {sample.mapping} mapping on "
                          f"{sample.machine}, seed {args.seed}"),
             ("windows", f"{sample.count} of {sample.size:,} "
                         f"{'node' if unit == 'nodes' else 'ROI activation'}"
                         f"{'s' if sample.size > 1 else ''} each, centred in {sample.count} "
                         "equal parts of the run")]
    print_rows(rows, sys.stdout)
    print()
    print("\n".join(windows_tables(sample)))
    if files:
        print("written: " + ", ".join(files), file=sys.stderr)
    return 0
