"""Sampling a long run: the analysis of N evenly spaced windows, and how its figures vary.

::

    from vcut.pipeline import analyze_windows
    s = analyze_windows(graph, 8, 10, 100_000, baselines=False)   # 10 windows of 100 k nodes
    s.rows[3]["makespan"], s.statistics["replication_factor"]["cv"]
    s = analyze_windows(graph, 8, 4, 1, unit="roi")                # 4 of the ROI activations

Each window is a contiguous slice of the graph (`ir_graph.Graph.window`: edges
into or out of it are dropped and counted), placed by
`ir_graph.windows.spaced_windows`, and analysed on its own by
`vcut.pipeline.analyze_graph` with the same options and the same seed, so a
window's figures are exactly those of ``vcut analyze --window START:END`` on
it. One window is in memory at a time, besides the graph.
"""

import time
from dataclasses import dataclass

import numpy as np

from vcut_base.errors import InputError, VcutError
from ir_graph.windows import spaced_windows, unit_spans
from mapping.machine import load_machine
from mapping.memory_centric import THRESHOLD

from .analysis import analyze_graph, check_names
from .inputs import analysis_input, parse_window_size, spill_context
from .outputs import json_text, prepare_output_dir, write_files

__all__ = ["WindowSample", "WindowsRun", "analyze_windows", "sample_windows", "variation",
           "FIGURES", "UNITS"]

#: Units a window size is counted in: graph nodes, or activations of the region of interest.
UNITS = {"nodes": "nodes", "roi": "ROI activations"}

#: Figures of every window's analysis whose variation is reported, in report order, after
#: the partitioner's own (``replication_factor``, ``vertex_copies``, ``work_imbalance`` of a
#: vertex cut; ``cut_edges``, ``work_imbalance`` of an edge cut). ``speedup``: the tasks'
#: total cycles (their time one after another on one core) over the makespan;
#: ``utilization_used_cores`` averages over the ``cores_used`` cores holding a cluster,
#: ``utilization_all_cores`` over every core of the machine.
PARTITION_FIGURES = ("replication_factor", "vertex_copies", "cut_edges", "work_imbalance")
FIGURES = ("communication_bytes", "messages", "network_bytes", "hop_bytes", "makespan",
           "makespan_seconds", "independent_time", "speedup", "cores_used",
           "utilization_used_cores", "utilization_all_cores")


@dataclass(frozen=True, eq=False)
class WindowSample:
    """The analyses of evenly spaced windows of one graph (see `analyze_windows`).

    Attributes
    ----------
    count, size : int
        Windows, and units per window.
    unit : str
        ``"nodes"`` or ``"roi"`` (ROI activations).
    rows : list of dict
        One per window, in run order: ``index``, ``start``, ``end`` (nodes
        ``start .. end - 1`` of the sampled graph), ``nodes``, ``edges``,
        ``edges_in``, ``edges_out``, with ``unit == "roi"`` also
        ``roi_first``, ``roi_stop``; every name of `figures`; ``mappers``
        (the baseline mappings, when simulated) and ``phases``.
    figures : tuple of str
        The figures compared between windows.
    statistics : dict
        Figure -> `variation` of its values over the windows.
    method, p, machine, mapping : str, int, str, str
        The analysis every window had.

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions
    >>> from vcut.pipeline import analysis_input, analyze_windows
    >>> graph, object_bytes, _ = analysis_input(
    ...     ["samples/strassen.c"], AnalysisOptions(trace=TraceOptions(defines=("N=2",))))
    >>> s = analyze_windows(graph, 2, 3, object_bytes=object_bytes, baselines=False)
    >>> s.count, s.size, s.unit, s.method, s.p, s.machine, s.mapping
    (3, 662, 'nodes', 'par', 2, 'table2:2', 'memory-centric')
    >>> [(r["index"], r["start"], r["end"], r["edges"], r["edges_in"], r["edges_out"])
    ...  for r in s.rows]
    [(0, 0, 662, 880, 0, 377), (1, 662, 1324, 737, 160, 52), (2, 1324, 1986, 701, 269, 0)]
    >>> s.figures[:4]
    ('replication_factor', 'vertex_copies', 'work_imbalance', 'communication_bytes')
    >>> {k: round(v, 2) for k, v in s.statistics["makespan"].items()}
    {'min': 703.2, 'median': 825.68, 'max': 3514.92, 'mean': 1681.27, 'cv': 0.77}
    >>> sorted(s.summary())
    ['clusters', 'count', 'figures', 'machine', 'mapping', 'method', 'size', 'statistics',
     'unit', 'windows']
    """

    count: int
    size: int
    unit: str
    rows: list
    figures: tuple
    statistics: dict
    method: str
    p: int
    machine: str
    mapping: str

    def summary(self):
        """The JSON object ``vcut analyze --windows N --json`` prints (less ``graph``,
        ``source``, ``seconds`` and ``files``)."""
        return {"count": self.count, "size": self.size, "unit": self.unit,
                "method": self.method, "clusters": self.p, "machine": self.machine,
                "mapping": self.mapping, "figures": list(self.figures),
                "statistics": self.statistics, "windows": self.rows}


def analyze_windows(graph, p, count, size=None, *, unit="nodes", method="par",
                    machine=None, mapper="memory-centric", threshold=THRESHOLD, seed=0, lam=1.0,
                    order="given", object_bytes=None, baselines=True, progress=None,
                    steering="auto"):
    """Partition, map and simulate ``count`` evenly spaced windows of ``graph``.

    The windows are placed by `ir_graph.windows.spaced_windows` (each centred in one
    of ``count`` equal parts of the run), cut from the graph one at a time
    (`ir_graph.Graph.window`: edges into or out of a window are dropped and counted)
    and analysed on their own by `analyze_graph`. `sample_windows` (``vcut analyze
    --windows N``) calls it. The method and mapping names are checked before the
    first window.

    Parameters
    ----------
    graph : ir_graph.Graph
        Usually an IR graph (nodes in execution order).
    p : int
        Number of clusters of every window.
    count : int
        Number of windows, >= 1.
    size : int, optional
        Units per window (`spaced_windows`); default: ``units // count``, so
        that the windows tile the run.
    unit : {"nodes", "roi"}
        Count ``size`` in graph nodes or in ROI activations
        (``graph.roi_starts``: graphs of traces made with ``--roi``).
    method, machine, mapper, threshold, seed, lam, order, object_bytes, baselines
        As for `vcut.pipeline.analyze_graph`; the same for every window
        (the same ``seed`` too: each window's analysis is what
        ``analyze_graph`` gives on that window alone).
    progress : callable(str), optional
        Called with a line before each window.

    Returns
    -------
    WindowSample
        Every window's figures (``rows``) and their variation (``statistics``).

    Raises
    ------
    InputError
        An unknown method or mapping, ``count`` or ``size`` out of range,
        ``unit="roi"`` on a graph without ROI activations, or a window the
        analysis refuses (no edges, fewer edges than ``p``): the message names
        the window.

    Notes
    -----
    Time: the sum of the windows' analyses, each linear in its nodes and
    edges, plus O(count * m) to cut the windows. Memory: the graph and one
    window's analysis.

    Examples
    --------
    A program traced with ``--roi add`` (its ten calls of ``add`` only):

    >>> from ir_graph import build_graph
    >>> from vcut.pipeline import TraceOptions, analyze_windows, trace_sources
    >>> trace = trace_sources(["samples/strassen.c"],
    ...                       TraceOptions(defines=("N=2",), roi=("add",)), stdout_sink=None)
    >>> graph = build_graph(trace)
    >>> graph.n, graph.m, graph.roi_starts.tolist()
    (790, 1030, [0, 79, 158, 237, 316, 395, 474, 553, 632, 711])

    Three windows that split the run, each analysed with the baseline mappings:

    >>> s = analyze_windows(graph, 2, 3, object_bytes=trace.obj_size, progress=print)
    window 1 of 3: nodes 0..262
    window 2 of 3: nodes 264..526
    window 3 of 3: nodes 527..789
    >>> s.size, [(r["start"], r["end"], r["edges"], round(r["makespan"], 2)) for r in s.rows]
    (263, [(0, 263, 326, 1018.48), (264, 527, 315, 293.52), (527, 790, 327, 306.6)])
    >>> len(s.rows[0]["mappers"]), round(s.statistics["makespan"]["median"], 2)
    (6, 306.6)

    Two windows of one ROI activation each:

    >>> s = analyze_windows(graph, 2, 2, 1, unit="roi", object_bytes=trace.obj_size,
    ...                     baselines=False)
    >>> [(r["roi_first"], r["roi_stop"], r["start"], r["end"]) for r in s.rows]
    [(2, 3, 158, 237), (7, 8, 553, 632)]

    >>> analyze_windows(graph, 2, 3, 10_000)
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: a window of 10,000 nodes does not fit in the run's 790 nodes; ...
    """
    # before any window: a misspelt name is not the window's fault
    check_names((method,), mapper, steering)
    total, to_nodes = unit_spans(graph, unit)
    spans = spaced_windows(total, count, size, UNITS[unit])
    size = spans[0][1] - spans[0][0]
    say = progress or (lambda line: None)
    rows = []
    first = None  # what every window's analysis shares: method, p, machine, mapping, figures
    for i, (ulo, uhi) in enumerate(spans):
        lo, hi = to_nodes(ulo, uhi)
        say(f"window {i + 1} of {count}: nodes {lo:,}..{hi - 1:,}")
        t = time.perf_counter()
        try:
            w = graph.window(lo, hi)
            a = analyze_graph(w, p, method, machine, mapper=mapper, threshold=threshold,
                              seed=seed, lam=lam, order=order, object_bytes=object_bytes,
                              baselines=baselines, steering=steering)
        except VcutError as exc:
            raise type(exc)(f"window {i} (nodes {lo:,}..{hi - 1:,}): {exc.message}",
                            exc.details) from None
        info = w.meta["window"]
        row = {"index": i, "start": lo, "end": hi, "nodes": w.n, "edges": w.m,
               "edges_in": info["edges_in"], "edges_out": info["edges_out"]}
        if unit == "roi":
            row.update(roi_first=ulo, roi_stop=uhi)
        figures = _figures(a)
        row.update(figures)
        if baselines:
            row["mappers"] = a.mappers
        row["phases"] = dict(a.phases, total=time.perf_counter() - t)
        rows.append(row)
        if first is None:
            first = {"method": a.method, "p": a.p, "machine": a.machine.name,
                     "mapping": a.placement.method, "figures": tuple(figures)}
        del w, a
    stats = {k: variation([r[k] for r in rows]) for k in first["figures"]}
    return WindowSample(count=count, size=size, unit=unit, rows=rows, statistics=stats, **first)


@dataclass(frozen=True, eq=False)
class WindowsRun:
    """The sample of an input's run as ``vcut analyze --windows N`` reports it (see
    `sample_windows`).

    Attributes
    ----------
    summary : dict
        The JSON object ``vcut analyze --windows N --json`` prints.
    sample : WindowSample
        The windows' analyses.
    graph : ir_graph.Graph
        The graph sampled (cut to ``options.window`` when given).
    source : str
        What the graph came from.
    unit : str
        ``"nodes"`` or ``"roi"``: what a window's size counts.
    files : list of str
        The files written (absolute paths); empty without ``options.output``.

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, sample_windows
    >>> run = sample_windows(["samples/strassen.c"], AnalysisOptions(
    ...     p=2, windows=3, baselines=False, trace=TraceOptions(defines=("N=2",))))
    >>> run.source, run.unit, run.graph.n, run.sample.count, run.sample.size, run.files
    ('samples/strassen.c', 'nodes', 1986, 3, 662, [])
    >>> run.summary["graph"]
    {'nodes': 1986, 'edges': 2747, 'weights': 'model', 'window': None}
    >>> run.summary["windows"] is run.sample.rows
    True
    """

    summary: dict
    sample: WindowSample
    graph: object
    source: str
    unit: str
    files: list


def sample_windows(inputs, options, *, say=None, note=None):
    """Analyse ``options.windows`` evenly spaced windows of the input's run, each on its own.

    ``vcut analyze --windows N``: the input is read as `analysis_input` reads it (cut
    to ``options.window`` when given), then `analyze_windows` samples it with
    ``options.algo``, ``mapping`` and the other options of an analysis.

    Parameters
    ----------
    inputs : list of str
        C sources (traced with ``options.trace``), or one trace or graph file.
    options : AnalysisOptions
        ``windows`` (required) and ``window_size`` the sample, within ``window`` when
        given; the rest as for `vcut.pipeline.analyze`. With ``output``,
        ``windows.json`` is written there.
    say : callable(str), optional
        A progress line before each window.
    note : callable(str), optional
        Where the memory budget's estimate of a trace is told.

    Returns
    -------
    WindowsRun
        The sample, its JSON summary (``vcut analyze --windows N --json``), the graph
        and the files written.

    Raises
    ------
    InputError
        No ``windows``, a partition file or ``compare_methods`` (neither combines with a
        sample), a bad window size, or what `analysis_input` and `analyze_windows`
        refuse.
    OutputError
        An output folder that cannot be written, or a file in it that is an input.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, sample_windows
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     run = sample_windows(["samples/strassen.c"], AnalysisOptions(
    ...         p=2, windows=3, window_size="500", baselines=False, output=tmp,
    ...         trace=TraceOptions(defines=("N=2",))))
    ...     with open(os.path.join(tmp, "windows.json")) as fh:
    ...         written = json.load(fh)
    >>> [os.path.basename(f) for f in run.files], written["count"], written["size"]
    (['windows.json'], 3, 500)
    >>> [(r["start"], r["end"]) for r in run.sample.rows]
    [(81, 581), (743, 1243), (1405, 1905)]
    >>> sorted(run.summary)
    ['clusters', 'count', 'figures', 'files', 'graph', 'machine', 'mapping', 'method',
     'seconds', 'size', 'source', 'statistics', 'unit', 'windows']

    A window size needs a number of windows:

    >>> sample_windows(["samples/strassen.c"], AnalysisOptions(window_size="500"))
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: --window-size sets the size of the --windows sample; ...
    """
    with spill_context(options.spill):
        return _sample(inputs, options, say, note)


def _sample(inputs, options, say, note):
    if not options.windows:
        raise InputError("--window-size sets the size of the --windows sample; give --windows N")
    for given, option, why in ((options.partition, "--partition", "a partition of the whole "
                                "graph fits none of the windows"),
                               (options.compare_methods, "--compare-methods", "it compares the "
                                "methods on one analysis; run 'vcut compare --window ...' on a "
                                "window")):
        if given:
            raise InputError(f"{option} does not combine with --windows: {why}")
    unit, size = parse_window_size(options.window_size) if options.window_size \
        else ("nodes", None)
    check_names((options.algo,), options.mapping, options.steering)
    if options.output:
        prepare_output_dir(options.output, ["windows.json"], options.input_paths(inputs))
    machine = load_machine(options.machine) if options.machine else None
    t0 = time.perf_counter()
    graph, obj_bytes, source = analysis_input(
        inputs, options, budget=(options.p, options.baselines), say=note)
    sample = analyze_windows(graph, options.p, options.windows, size, unit=unit,
                             method=options.algo, machine=machine, mapper=options.mapping,
                             threshold=options.threshold, seed=options.seed, lam=options.lam,
                             order=options.order, object_bytes=obj_bytes,
                             baselines=options.baselines, progress=say,
                             steering=options.steering)
    doc = sample.summary()
    doc["source"] = source
    doc["graph"] = {"nodes": graph.n, "edges": graph.m, "weights": graph.meta.get("weights"),
                    "window": graph.meta.get("window")}
    doc["seconds"] = time.perf_counter() - t0
    files = []
    if options.output:
        files = write_files(options.output, [("windows.json", json_text(doc, indent=1))])
    doc["files"] = files
    return WindowsRun(summary=doc, sample=sample, graph=graph, source=source, unit=unit,
                      files=files)


def variation(values):
    """``{"min", "median", "max", "mean", "cv"}`` of ``values``.

    ``cv`` is the coefficient of variation, the standard deviation of the
    values (population: ``ddof=0``, the windows measured are the whole
    sample described) over their mean; 0 when every value is 0, None
    (JSON null) when the mean is 0 otherwise or a value is not finite.
    """
    x = np.asarray(values, dtype=np.float64)
    if not np.isfinite(x).all():
        nan = None
        return {"min": nan, "median": nan, "max": nan, "mean": nan, "cv": nan}
    mean = float(x.mean())
    sd = float(x.std())
    cv = sd / abs(mean) if mean != 0 else (0.0 if sd == 0 else None)
    return {"min": float(x.min()), "median": float(np.median(x)), "max": float(x.max()),
            "mean": mean, "cv": cv}


def _figures(a):
    """The figures of one window's `Analysis`, the partitioner's first."""
    r = a.result
    work = float(a.clustering.weight.sum())
    out = {k: v for k, v in a.partition.items() if k in PARTITION_FIGURES}
    values = {"communication_bytes": r.communication_bytes, "messages": r.messages,
              "network_bytes": r.network_bytes, "hop_bytes": r.hop_bytes,
              "makespan": r.makespan, "makespan_seconds": r.seconds,
              "independent_time": a.independent_time,
              "speedup": work / r.makespan if r.makespan > 0 else float("nan"),
              **r.utilization_figures()}
    out.update((k, values[k]) for k in FIGURES)
    return out
