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
from mapping.placement import MAPPERS

from ..edge_cut import EDGE_CUTS
from ..partition import ALGORITHMS
from .analysis import analyze_graph
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
        """The JSON object ``vcut analyze --windows N --json`` prints (less ``graph`` and ``files``)."""
        return {"count": self.count, "size": self.size, "unit": self.unit,
                "method": self.method, "clusters": self.p, "machine": self.machine,
                "mapping": self.mapping, "figures": list(self.figures),
                "statistics": self.statistics, "windows": self.rows}


def analyze_windows(graph, p, count, size=None, *, unit="nodes", method="par",
                    machine=None, mapper="memory-centric", threshold=THRESHOLD, seed=0, lam=1.0,
                    order="given", object_bytes=None, baselines=True, progress=None):
    """Partition, map and simulate ``count`` evenly spaced windows of ``graph``.

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

    Raises
    ------
    InputError
        ``count`` or ``size`` out of range, ``unit="roi"`` on a graph without
        ROI activations, or a window the analysis refuses (no edges, fewer
        edges than ``p``): the message names the window.

    Notes
    -----
    Time: the sum of the windows' analyses, each linear in its nodes and
    edges, plus O(count * m) to cut the windows. Memory: the graph and one
    window's analysis.
    """
    _check_names(method, mapper)  # before any window: a misspelt name is not the window's fault
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
                              baselines=baselines)
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
        The files written (absolute paths).
    """

    summary: dict
    sample: WindowSample
    graph: object
    source: str
    unit: str
    files: list


def sample_windows(inputs, options, *, say=None, note=None):
    """Analyse ``options.windows`` evenly spaced windows of the input's run, each on its own.

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

    Raises
    ------
    InputError
        No ``windows``, a partition file or ``compare_methods`` (neither combines with a
        sample), or what `analyze_windows` refuses.
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
                             baselines=options.baselines, progress=say)
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


def _check_names(method, mapper):
    if method not in EDGE_CUTS + ALGORITHMS:
        raise InputError(f"unknown partitioning method {method!r}; use one of "
                         f"{', '.join(EDGE_CUTS + ALGORITHMS)}")
    if mapper not in MAPPERS:
        raise InputError(f"unknown mapping {mapper!r}; use one of {', '.join(MAPPERS)}")


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
