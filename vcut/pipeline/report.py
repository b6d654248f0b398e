"""The whole analysis of a program, trace or graph file, and its report: ``vcut analyze``.

::

    from vcut.pipeline import AnalysisOptions, TraceOptions, analyze
    run = analyze(["samples/strassen.c"], AnalysisOptions(
        p=8, output="out", trace=TraceOptions(defines=("N=8",))))
    run.summary["makespan"], run.files          # out/mapping.json, out/report.html

trace -> graph (`vcut.pipeline.inputs`) -> partition, map, simulate
(`vcut.pipeline.analysis`) -> insights (`mapping.insight`) -> the report
(`mapping.report`) and ``mapping.json``.
"""

import time
from dataclasses import dataclass

from vcut_base.errors import InputError
from vcut_base.lazy import background
from mapping.insight import insight
from mapping.machine import load_machine
from mapping.report import analysis_html, degree_png, plotting

from ..output import read_assignment
from .analysis import Analysis, analyze_graph, check_names
from .comparison import compare_methods
from .control import branch_latency, control_models, models_sentence, parse_controls
from .inputs import analysis_input, spill_context
from .options import ANALYZE_METHODS
from .outputs import json_text, prepare_output_dir, write_files

__all__ = ["AnalysisRun", "analyze", "REPORT_FILES"]

#: The files an analysis writes into ``options.output``.
REPORT_FILES = ("mapping.json", "report.html")


@dataclass(frozen=True, eq=False)
class AnalysisRun:
    """One analysis of an input as ``vcut analyze`` reports it (see `analyze`).

    Made by `analyze`; frozen.

    Attributes
    ----------
    summary : dict
        The JSON object ``vcut analyze --json`` prints.
    analysis : Analysis
        The partition, mapping and simulation.
    graph : ir_graph.Graph
        The graph analysed (cut to the window when one was given).
    source : str
        What the graph came from (the sources, the trace or the graph file).
    insights : mapping.insight.Insight
        The report's reading of the analysis (``reading``: its summary in words).
    methods : list of dict or None
        The rows of ``compare_methods`` at the same p (``options.compare_methods``).
    files : list of str
        The files written (absolute paths); empty without ``options.output``.

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, analyze
    >>> run = analyze(["samples/strassen.c"], AnalysisOptions(
    ...     p=4, baselines=False, trace=TraceOptions(defines=("N=2",))))
    >>> run.source, run.graph.n, run.graph.m, run.files, run.methods
    ('samples/strassen.c', 1986, 2747, [], None)
    >>> run.analysis.method, run.analysis.p, round(run.analysis.result.makespan, 2)
    ('par', 4, 2867.04)
    >>> run.summary["graph"]
    {'nodes': 1986, 'edges': 2747, 'window': None}
    >>> run.summary["makespan"] == run.analysis.result.makespan
    True
    >>> type(run.insights).__name__, isinstance(run.insights.reading, str)
    ('Insight', True)
    """

    summary: dict
    analysis: Analysis
    graph: object
    source: str
    insights: object
    methods: list
    files: list


def analyze(inputs, options, *, say=None, note=None):
    """Trace, partition, map, simulate and report: ``vcut analyze``'s work.

    The input is read by `analysis_input` (a trace's size checked against the memory
    for ``options.p`` first), analysed by `analyze_graph` with the options' method,
    machine and mapping, and read by `mapping.insight.insight`; with
    ``options.output`` the report (``report.html``) and ``mapping.json`` are written
    there, each whole, after the folder is checked (before any work). A batch row
    (`run_job`) is one call.

    Parameters
    ----------
    inputs : list of str
        C sources (traced with ``options.trace``), or one trace or graph file.
    options : AnalysisOptions
        What to do; with ``output`` the files `REPORT_FILES` are written there.
    say : callable(str), optional
        Progress lines, one at the start of each phase.
    note : callable(str), optional
        Where the memory budget's estimate of a trace is told.

    Returns
    -------
    AnalysisRun
        The summary ``vcut analyze --json`` prints, the analysis, the graph, the
        insights and the files written.

    Raises
    ------
    InputError
        ``compare_methods`` without ``output``, a bad input, machine, partition file,
        method or window.
    OutputError
        An output folder that cannot be written, or a file in it that is an input.
    CompileError, ProgramError
        As `trace_sources`, for C inputs.

    See Also
    --------
    analyze_graph : the analysis of a graph already built.
    sample_windows : ``vcut analyze --windows N``.

    Examples
    --------
    >>> import dataclasses, json, os, tempfile
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, analyze
    >>> opts = AnalysisOptions(p=4, baselines=False, trace=TraceOptions(defines=("N=2",)))
    >>> def phase(line):  # a phase's line; one that took a second adds an indented rate
    ...     if not line.startswith(" "):
    ...         print(line)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     run = analyze(["samples/strassen.c"], dataclasses.replace(opts, output=tmp),
    ...                   say=phase)
    ...     with open(os.path.join(tmp, "mapping.json")) as fh:
    ...         mapping = json.load(fh)
    tracing and building the graph
    partitioning 2,747 edges into 4 clusters (par)
    extracting cluster interactions
    mapping onto table2:4 (time-aware)
    writing the report
    >>> [os.path.basename(f) for f in run.files]
    ['mapping.json', 'report.html']
    >>> s = run.summary
    >>> s["method"], s["mapping"], s["machine"], round(s["makespan"], 2), s["lower_bound"]
    ('par', 'time-aware', 'table2:4', 2867.04, 2823.5)
    >>> mapping["format"], mapping["p"], mapping["graph"]["nodes"], mapping["graph"]["edges"]
    ('vcut-mapping', 4, 1986, 2747)

    ``compare_methods`` puts its table in the report, so it needs ``output``:

    >>> analyze(["samples/strassen.c"], dataclasses.replace(opts, compare_methods=True))
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: --compare-methods puts the comparison in the report; ...
    """
    with spill_context(options.spill):
        return _analyze(inputs, options, say, note)


def _analyze(inputs, options, say, note):
    if options.compare_methods and not options.output:
        raise InputError("--compare-methods puts the comparison in the report; give -o OUTDIR "
                         "(or use 'vcut compare' for a table)")
    model = parse_controls(options.control)[0]  # before the output folder is made
    check_names((), options.mapping, options.steering)
    if options.output:
        prepare_output_dir(options.output, REPORT_FILES, options.input_paths(inputs))
        background(plotting)  # the report's figures: matplotlib loads while the program runs
    machine = load_machine(options.machine) if options.machine else None
    assignment = read_assignment(options.partition) if options.partition else None
    latency = branch_latency(options, machine)
    t0 = time.perf_counter()
    if say:
        say("tracing and building the graph")
    graph, obj_bytes, source = analysis_input(
        inputs, options, budget=(options.p, options.baselines), say=note, control=model,
        latency=latency)
    front = time.perf_counter() - t0
    # the degree figure needs the graph only: drawn while the kernels partition and map
    degrees = background(lambda: degree_png(graph)) if options.output else None
    a = analyze_graph(graph, options.p, options.algo, machine, mapper=options.mapping,
                      threshold=options.threshold, seed=options.seed, lam=options.lam,
                      order=options.order, object_bytes=obj_bytes, assignment=assignment,
                      baselines=options.baselines, progress=say, device=options.device,
                      steering=options.steering)
    a.phases["trace_and_graph"] = front
    control = None
    if graph.control is not None:
        t = time.perf_counter()
        rows = control_models(a, graph, latency, simulate=options.control_models,
                              progress=say, mapper=options.mapping,
                              threshold=options.threshold, seed=options.seed, lam=options.lam,
                              order=options.order, object_bytes=obj_bytes,
                              device=options.device, steering=options.steering)
        control = {"model": model, "branch_latency": latency,
                   "sentence": models_sentence(model, latency),
                   "branches": graph.control.branches,
                   "mispredicted": graph.control.mispredicted,
                   "control_edges": graph.meta["control"]["control_edges"], "models": rows}
        a.phases["control_models"] = time.perf_counter() - t
    ins = insight(a, graph)  # lines and object names from graph.source (a traced program)
    files = []
    methods = None
    if options.output:
        if say:
            say("writing the report")
        t = time.perf_counter()
        if options.compare_methods:
            names = list(ANALYZE_METHODS if options.methods is None else options.methods)
            methods = compare_methods(graph, [options.p], names, machine,
                                      mapper=options.mapping, threshold=options.threshold,
                                      seed=options.seed, lam=options.lam, order=options.order,
                                      object_bytes=obj_bytes, progress=say,
                                      steering=options.steering)
        page = analysis_html(a, graph, source, methods, ins, degrees.result(), control)
        a.phases["report"] = time.perf_counter() - t
        a.phases["total"] = time.perf_counter() - t0
        doc = a.to_json(source)
        doc["insights"] = ins.to_json()
        if methods:
            doc["methods"] = methods
        if control:
            doc["control"] = control
        doc["graph"] = {"nodes": graph.n, "edges": graph.m, "weights": graph.meta.get("weights"),
                        "window": graph.meta.get("window")}
        files = write_files(options.output, [("mapping.json", json_text(doc, indent=1)),
                                             ("report.html", page)])
    a.phases.setdefault("total", time.perf_counter() - t0)
    summary = a.summary()
    summary["files"] = files
    summary["insights"] = ins.to_json()
    if methods:
        summary["methods"] = methods
    if control:
        summary["control"] = control
    summary["graph"] = {"nodes": graph.n, "edges": graph.m, "window": graph.meta.get("window")}
    return AnalysisRun(summary=summary, analysis=a, graph=graph, source=source, insights=ins,
                       methods=methods, files=files)

