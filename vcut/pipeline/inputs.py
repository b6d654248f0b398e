"""The pipeline's input: a program traced (`vcut.pipeline.tracing`), a trace or a graph
file read, the graph of the analysis built (cut to a window, within the memory budget).

::

    from vcut.pipeline import AnalysisOptions, analysis_input
    graph, object_bytes, source = analysis_input(["samples/strassen.c"], AnalysisOptions())
"""

import contextlib
import json
import os

import numpy as np

from vcut_base.arrays import spill_directory, spilling
from vcut_base.errors import InputError
from vcut_base.npzfile import member_shape
from frontend import load_trace
from ir_graph import build_graph, read_graph
from ir_graph.windows import NodeWindow, RoiWindow, roi_bounds
from mapping.budget import check_budget

from .control import branch_latency, parse_controls, refuse_graph_file
from .options import is_source
from .tracing import note_truncated, trace_sources, warn_about_run

__all__ = ["parse_window", "parse_window_size", "analysis_input", "spill_context",
           "npz_format"]


def parse_window(text):
    """``--window``: ``START:END`` nodes or ``roi:K``, ``roi:K:L`` ROI activations.

    Returns an `ir_graph.windows.NodeWindow` (a pair ``(start, end or None)``:
    either side of ``START:END`` may be empty) or a ``RoiWindow`` (``roi:K``
    is activation K alone; in ``roi:K:L`` either side may be empty: from the
    first, to the last).
    """
    head, colon, rest = text.partition(":")
    if colon and head.strip().lower() == "roi":
        k, sep, l_ = rest.partition(":")
        try:
            first = int(k) if k.strip() or not sep else 0
            stop = (int(l_) if l_.strip() else None) if sep else first + 1
        except ValueError:
            first = stop = -1
        if first < 0 or (stop is not None and stop <= first):
            raise InputError(f"--window {text!r}: give roi:K (activation K of the --roi "
                             "function(s), from 0) or roi:K:L (activations K..L-1; either may "
                             "be left out: roi:5: or roi::5)")
        return RoiWindow(first, stop)
    lo, sep, hi = head, colon, rest
    try:
        start = int(lo) if lo.strip() else 0
        end = int(hi) if hi.strip() else None
    except ValueError:
        start = end = -1
    if not sep or start < 0 or (end is not None and end <= start):
        raise InputError(f"--window {text!r}: give START:END, node indices with "
                         "0 <= START < END (either may be left out: 1000000: or :5000000), "
                         "or roi:K for the K-th activation of the --roi function(s)")
    return NodeWindow(start, end)


def parse_window_size(text):
    """``--window-size``: ``S`` nodes or ``roi:M`` ROI activations -> ``(unit, count)``."""
    unit, value = ("roi", text.partition(":")[2]) if text.strip().lower().startswith("roi:") \
        else ("nodes", text)
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise InputError(f"--window-size {text!r}: give a positive number of nodes, or roi:M "
                         "for M activations of the --roi function(s) per window")
    return unit, size


def spill_context(spill):
    """``vcut_base.arrays.spilling(spill)`` for a scratch folder ``spill``; a no-op for None."""
    return spilling(spill) if spill else contextlib.nullcontext()


def analysis_input(inputs, options, budget=None, say=None, control=None, latency=None):
    """The graph an analysis works on, its memory objects' sizes and what it came from.

    C sources are traced (`trace_sources`; a run that failed or did almost nothing is
    warned about on stderr), a trace (.npz from ``vcut trace``) is read, and the graph
    of either is built with ``options.weights``; any other file is read as a graph file
    (`ir_graph.read_graph`). ``options.window`` then cuts the graph to a slice of the
    run. `analyze`, `compare` and `sample_windows` read their input with it.

    Parameters
    ----------
    inputs : list of str
        C sources (traced with ``options.trace``), or one trace (.npz from ``vcut
        trace``) or graph file.
    options : AnalysisOptions
        ``window`` cuts the graph to a slice of the run (an ROI window of a trace is
        checked against its activations before the graph is built); ``windows`` and
        ``window_size`` are the sampling that follows, for the budget; ``weights`` the
        edge weights of a trace's graph; ``duplicates`` how a graph file is read.
    budget : tuple, optional
        ``(p, baselines)`` of the analysis that follows: refuse a trace whose estimate
        exceeds the memory before building its graph (`mapping.budget`).
    say : callable(str), optional
        Where the budget's estimate is told.
    control : str, optional
        The control model of a trace's graph (`ir_graph.build_graph`'s ``control``:
        its control edges, and the control dependences in ``graph.control``); default
        ``options.control`` when it names one model. A graph file is taken as it is,
        under ``oracle`` only.
    latency : float, optional
        Cycles of a control edge (default: ``options.branch_latency``, else 1).

    Returns
    -------
    graph : ir_graph.Graph
        The graph (cut to the window; ``graph.meta["window"]`` says which).
    object_bytes : ndarray or None
        Sizes of the trace's memory objects (``Trace.obj_size``); None for a graph file.
    source : str
        Description of the input: the sources joined by spaces, or the file's path.

    Raises
    ------
    InputError
        A bad window (or window size), an ROI window without ``--roi``, an input that
        is not one file besides sources, a trace over the memory budget, a graph file
        its reader refuses.
    CompileError, ProgramError
        As `trace_sources`, for C inputs.

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, analysis_input
    >>> opts = AnalysisOptions(window="0:1000", trace=TraceOptions(defines=("N=2",)))
    >>> graph, object_bytes, source = analysis_input(["samples/strassen.c"], opts)
    >>> graph.n, graph.m, source, object_bytes.shape
    (1000, 1346, 'samples/strassen.c', (306,))
    >>> graph.meta["window"]
    {'start': 0, 'end': 1000, 'nodes_of_run': 1986, 'edges_in': 0, 'edges_out': 311}

    A graph file has no memory objects:

    >>> graph, object_bytes, source = analysis_input(["tests/data/power.graph.gz"],
    ...                                              AnalysisOptions())
    >>> graph.n, graph.m, object_bytes, source
    (4941, 6594, None, 'tests/data/power.graph.gz')

    The window is checked before the program runs:

    >>> analysis_input(["samples/strassen.c"], AnalysisOptions(window="5:2"))
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: --window '5:2': give START:END, node indices with ...
    """
    window = parse_window(options.window) if options.window else None
    if control is None:
        control = parse_controls(options.control)[0]
    if latency is None:
        latency = branch_latency(options)
    count = options.windows
    unit, size = parse_window_size(options.window_size) if options.window_size \
        else ("nodes", None)

    def from_trace(trace, source):
        note_truncated(trace.meta, "the analysis")
        n = trace.dynamic_instructions
        roi = None
        if isinstance(window, RoiWindow) or unit == "roi":
            roi = trace.roi_activation_starts()
        span = window.bounds(n, roi) if window is not None else (0, n)
        if budget is not None:
            _check_trace_budget(n, span, window is not None, roi, count, unit, size, budget,
                                options, say)
        g = build_graph(trace, weights=options.weights, control=control,
                        branch_latency=latency)
        return _cut(g), trace.obj_size, source

    def _cut(g):
        return g if window is None else window.cut(g)

    inputs = [os.fspath(p) for p in inputs]
    if all(is_source(p) for p in inputs):
        if (isinstance(window, RoiWindow) or unit == "roi") and not options.trace.roi:
            roi_bounds(None, 0, 0, None)  # its message, before the program runs
        trace = trace_sources(inputs, options.trace).spilled()
        warn_about_run(trace)
        return from_trace(trace, " ".join(inputs))
    if len(inputs) != 1:  # (the command line names the mix in its own words first)
        raise InputError("an analysis takes C sources, or one trace or graph file; not "
                         f"several: got {', '.join(inputs)}")
    path = inputs[0]
    if path.lower().endswith(".npz") and npz_format(path) == "vcut-trace":
        if budget is not None:
            _budget_before_reading(path, window, count, unit, size, budget, options)
        return from_trace(load_trace(path, mmap=spill_directory() is not None), path)
    if control != "oracle":
        refuse_graph_file(control, path)
    g = read_graph(path, None, duplicates=options.duplicates)
    note_truncated(g.meta, "the analysis")
    return _cut(g), None, path


def _budget_before_reading(path, window, count, unit, size, budget, options):
    """Refuse a trace file whose analysis cannot fit before any of its arrays is read:
    its instruction count from the ``.npy`` header of ``dyn_sid`` alone, the same budget
    `analysis_input` checks once the trace is read (an ROI window, which needs the
    trace's activations, is checked then only)."""
    shape = member_shape(path, "dyn_sid")
    if shape is None or len(shape) != 1 or isinstance(window, RoiWindow) or unit == "roi":
        return  # the full read names what is wrong, or checks with the activations
    n = shape[0]
    span = window.bounds(n, None) if window is not None else (0, n)
    _check_trace_budget(n, span, window is not None, None, count, unit, size, budget, options,
                        None)


def _check_trace_budget(n, span, windowed, roi, count, unit, size, budget, options, say):
    """`check_budget` of an analysis of a trace of ``n`` instructions (ROI activations
    beginning at ``roi``) cut to the slice ``span`` (``windowed``: a --window) or sampled
    in ``count`` windows of it."""
    slice_size = span[1] - span[0] if windowed else None
    if count:
        slice_size = _sample_size(span, count, unit, size, roi)
    check_budget(n, budget[0], budget[1], window=slice_size, windows=count or 1, say=say,
                 spill=options.spill)


def _sample_size(span, count, unit, size, roi):
    """Instructions in the largest of ``count`` sampled windows of the slice ``span`` of a
    trace whose ROI activations begin at ``roi`` (for the budget)."""
    lo, hi = span
    if unit == "nodes":
        return min(size, hi - lo) if size else max((hi - lo) // count, 1)
    if roi is None or len(roi) == 0:
        return hi - lo  # the sampler names the problem once the graph is there
    bounds = np.append(roi[(roi >= lo) & (roi < hi)], hi)
    m = min(size, len(bounds) - 1)
    return int((bounds[m:] - bounds[:-m]).max()) if m >= 1 else hi - lo


def npz_format(path):
    """``meta["format"]`` of a vcut ``.npz``; None when it is not one (or not a regular file)."""
    if not os.path.isfile(path):
        return None  # a FIFO would block np.load; read_graph refuses it with a message
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"])).get("format") if "meta" in z.files else None
    except Exception:
        return None  # read_graph reports what is wrong with it
