"""``vcut analyze``: trace, partition, map and simulate."""

import sys

from vcut_base.errors import InputError

from ._common import (
    add_analysis_options,
    add_common,
    add_trace_options,
    check_inputs,
    help_groups,
    int_option,
    options_from_args,
    print_json,
    print_rows,
    progress_lines,
)
from ._parser import UsageError, command_parser
from ._progress import add_progress_option

__all__ = ["register", "run", "batch_options"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    an = sub.add_parser(
        "analyze",
        help="trace, partition, map onto a machine and simulate: the whole pipeline",
        description="Run trace -> graph -> partition -> memory-centric mapping -> simulation "
        "for a C program (or a trace .npz, or a graph file) and write OUTDIR/mapping.json and "
        "OUTDIR/report.html. Program arguments follow '--'.",
    )
    inputs, sandbox, cut, mapping, outputs = help_groups(
        an, "inputs and tracing", "sandbox", "partitioning", "mapping and machine", "outputs")
    inputs.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="PROGRAM.c [...], TRACE.npz or GRAPH")
    add_trace_options(inputs, sandbox)
    cut.add_argument("-p", type=int_option("-p", 1, 2**31 - 1), required=True,
                     help="number of clusters")
    add_analysis_options(cut, inputs=inputs, mapping=mapping)
    inputs.add_argument("--windows", type=int_option("--windows", 1, 2**31 - 1), metavar="N",
                        help="sample the run: analyse N evenly spaced windows on their own and "
                        "print their figures and spread (min, median, max, coefficient of "
                        "variation); within --window if given")
    inputs.add_argument("--window-size", metavar="S|roi:M",
                        help="size of each --windows window: S nodes, or roi:M for M activations "
                        "of the --roi function(s) (default: the run split into N equal parts)")
    cut.add_argument("--partition", metavar="FILE",
                     help="use this partition (from 'vcut partition -o') instead of partitioning")
    cut.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"],
                     help="the greedy vertex cuts (--algo wb-libra, pg, ...): decide their "
                     "batches on the GPU (the CPU batches' result; see vcut partition --device)")
    cut.add_argument("--compare-methods", action="store_true",
                     help="also partition, map and simulate with other methods at the same p and "
                     "show them in the report and mapping.json (needs -o)")
    cut.add_argument("--control-models", action="store_true",
                     help="also partition, map and simulate every other control model "
                     "(--control) at the same p, for the models table's simulated speed-ups "
                     "(one analysis each)")
    cut.add_argument("--methods", metavar="M1,M2,...",
                     default="compnet,metis,pg,w-pg,wb-pg,libra,w-libra,wb-libra,par",
                     help="the methods of --compare-methods (default: the eight of Tables 6-9 "
                     "and par)")
    mapping.add_argument("--no-baselines", action="store_true",
                         help="do not also simulate the baseline mappings (faster on large "
                         "programs)")
    outputs.add_argument("-o", "--output", metavar="OUTDIR",
                         help="directory for mapping.json and report.html (with --windows: "
                         "windows.json)")
    add_common(outputs)
    add_progress_option(outputs)
    an.set_defaults(func=run)


def run(args, program_args):
    check_inputs(args, program_args)
    options = options_from_args(args, program_args)
    if args.windows or args.window_size:
        return _run_windows(args, options)
    from mapping.report import control_lines, metric_text, utilization_rows  # lazy: start-up
    from vcut.pipeline.report import analyze  # lazy: start-up (mapping, numba)

    say = progress_lines(not args.json)
    # the budget's estimate is printed (stderr) whenever a result is not JSON
    note = None if args.json else (say or (lambda line: print(line, file=sys.stderr)))
    done = analyze(args.inputs, options, say=say, note=note)
    if args.json:
        print_json(done.summary)
        return 0
    a, graph, source, ins = done.analysis, done.graph, done.source, done.insights
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
    for m in done.methods or []:
        rows.append((f"  method {m['method']}", f"makespan {m['makespan']:,.0f}, without waits "
                     f"{m['independent_time']:,.0f}, communication "
                     f"{m['communication_bytes']:,.0f} bytes"))
    rows.append(("phases", ", ".join(f"{k} {v:.2f} s" for k, v in a.phases.items())))
    if done.files:
        rows.append(("written", ", ".join(done.files)))
    print_rows(rows, sys.stdout)
    if "control" in done.summary:
        print()
        print("\n".join(control_lines(done.summary["control"])))
    return 0


def batch_options(argv):
    """``(inputs, AnalysisOptions)`` of ``vcut analyze ARGV``: how a batch row reads its
    command line (`vcut.pipeline.batch.run_job`'s ``options_of``). ``ARGV`` as on the
    command line (program arguments after ``--``); raises `InputError` for what the
    command would refuse before any work."""
    argv = list(argv)
    program_args = []
    if "--" in argv:
        k = argv.index("--")
        argv, program_args = argv[:k], argv[k + 1:]
    try:
        args = command_parser([register]).parse_args(["analyze", *argv])
    except UsageError as exc:
        raise InputError(str(exc)) from None
    args.command_line = ["analyze", *argv]
    check_inputs(args, program_args)
    if args.windows or args.window_size:
        raise InputError("a batch row is one whole analysis; drop --windows / --window-size")
    return args.inputs, options_from_args(args, program_args)


def _activations(acts):
    """``"ROI activations K..L-1 of C: "`` of a window's ``roi_activations`` ("" for None)."""
    if acts is None:
        return ""
    first, last = acts["first"], acts["stop"] - 1
    which = f"activation {first}" if first == last else f"activations {first}..{last}"
    return f"ROI {which} of {acts['of']:,}: "


def _run_windows(args, options):
    """``--windows N``: the analysis of N evenly spaced windows (`vcut.pipeline.windows`)."""
    from mapping.report import windows_tables  # lazy: start-up
    from vcut.pipeline.windows import sample_windows  # lazy: start-up (mapping, numba)

    say = progress_lines(not args.json)
    note = None if args.json else (say or (lambda line: print(line, file=sys.stderr)))
    done = sample_windows(args.inputs, options, say=say, note=note)
    if args.json:
        print_json(done.summary)
        return 0
    graph, source, sample, unit, files = done.graph, done.source, done.sample, done.unit, \
        done.files
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
