"""The pipeline's first steps: a program traced, a trace or a graph file read, the graph
of the analysis built (cut to a window, within the memory budget).

::

    from vcut.pipeline import AnalysisOptions, TraceOptions, analysis_input, trace_sources
    trace = trace_sources(["samples/strassen.c"], TraceOptions(defines=("N=8",)))
    graph, object_bytes, source = analysis_input(["samples/strassen.c"], AnalysisOptions())

Notes on the run (a trace cut at its budget, a program that failed or did almost
nothing, files ``--keep-files`` did not keep, a run without a sandbox) go to stderr, as
lines of their own, whatever else the caller prints.
"""

import contextlib
import json
import os
import sys
import time

import numpy as np

from vcut_base.arrays import spill_directory, spilling
from vcut_base.errors import InputError
from frontend import RunLimits, compile_program, load_trace, trace_program
from ir_graph import build_graph, fit_power_law, read_graph, write_graph
from ir_graph.formats import detect_format
from ir_graph.windows import NodeWindow, RoiWindow, roi_bounds
from mapping.budget import check_budget

from .options import is_source

__all__ = ["parse_window", "parse_window_size", "analysis_input", "spill_context",
           "trace_sources", "program_graph", "note_truncated",
           "warn_about_run", "npz_format", "keep_notes", "KEEP_NOTES_SHOWN", "TINY_TRACE"]


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


def analysis_input(inputs, options, budget=None, say=None):
    """(graph, object sizes or None, description) of the analysis' input.

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

    Returns
    -------
    tuple
        ``(graph, object sizes or None, description of the input)``.

    Raises
    ------
    InputError
        A bad window, an input that is not one file besides sources, a trace over the
        memory budget.
    """
    window = parse_window(options.window) if options.window else None
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
            slice_size = span[1] - span[0] if window is not None else None
            if count:
                slice_size = _sample_size(span, count, unit, size, roi)
            check_budget(n, budget[0], budget[1], window=slice_size, windows=count or 1,
                         say=say, spill=options.spill)
        g = build_graph(trace, weights=options.weights)
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
        return from_trace(load_trace(path, mmap=spill_directory() is not None), path)
    g = read_graph(path, None, duplicates=options.duplicates)
    note_truncated(g.meta, "the analysis")
    return _cut(g), None, path


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


def note_truncated(meta, covers):
    """Say on stderr, whatever the output (``--json`` too), that the trace behind a result
    was cut at its instruction budget (``meta``: the trace's, or a graph's built from one),
    so that ``covers`` ("the graph", "the analysis") only the start of the run."""
    if not meta.get("truncated"):
        return
    budget = meta.get("max_instructions")
    at = f"the budget of {budget:,} instructions" if budget else "its instruction budget"
    print(f"note: the trace was cut at {at} (--max-instructions); {covers} covers only the "
          "start of the run", file=sys.stderr)


#: A trace with fewer dynamic instructions than this is worth a warning before analysis.
TINY_TRACE = 1000


def warn_about_run(trace):
    """Warn (stderr) when a traced program failed or did almost nothing: a mistyped input
    file name otherwise gives a tiny analysis that looks like a result."""
    code = trace.exit_code
    if code not in (0, None):
        print(f"warning: the program exited with status {code} (its output is above); check "
              "its arguments and input files", file=sys.stderr)
    if trace.dynamic_instructions < TINY_TRACE:
        print(f"warning: the trace has only {trace.dynamic_instructions:,} instructions; did the "
              "program find its input?", file=sys.stderr)


def npz_format(path):
    """``meta["format"]`` of a vcut ``.npz``; None when it is not one (or not a regular file)."""
    if not os.path.isfile(path):
        return None  # a FIFO would block np.load; read_graph refuses it with a message
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"])).get("format") if "meta" in z.files else None
    except Exception:
        return None  # read_graph reports what is wrong with it


def progress_printer(label):
    if not sys.stderr.isatty():
        return None

    def report(elapsed, nbytes):
        sys.stderr.write(f"\r{label}: {elapsed:6.1f} s, {nbytes / 1e6:8.1f} MB of events")
        sys.stderr.flush()

    return report


def trace_sources(sources, options, stdout_sink=2, stderr_sink=2):
    """Compile and trace the C ``sources``.

    Parameters
    ----------
    sources : list of str
        C sources (or LLVM IR), linked together.
    options : TraceOptions
        The compilation, the limits, the sandbox and the program's arguments.
    stdout_sink, stderr_sink : int, str or None
        Where the program's stdout and stderr go as it writes them: file
        descriptors (default: both to our stderr, so that a command's own stdout
        carries only its results), or None (kept in the trace only).

    Returns
    -------
    frontend.Trace

    Raises
    ------
    CompileError, ProgramError, InputError
        What the compiler or the run reports.
    """
    limits = RunLimits(
        timeout=options.timeout,
        memory=options.memory_limit << 20,
        max_instructions=options.max_instructions,
        file_size=options.file_limit << 20,
    )
    limits.validate()
    sandbox = options.sandbox
    if sandbox == "none":
        print("warning: no sandbox: the traced program runs with your rights (it can read and "
              "write your files, start processes and use the network)", file=sys.stderr)
    cm = compile_program(
        [os.fspath(s) for s in sources],
        opt=f"-O{options.opt}",
        defines=list(options.defines),
        include_dirs=list(options.include_dirs),
        extra_flags=list(options.cflags),
        keep_out_of_line=list(options.roi),
    )
    if cm.diagnostics and options.verbose:
        print(cm.diagnostics, file=sys.stderr)
    stdin = None
    if options.stdin == "-":
        stdin = sys.stdin.buffer.read()
    elif options.stdin:
        stdin = options.stdin
    progress = progress_printer("tracing")
    trace = trace_program(
        cm,
        args=list(options.args),
        stdin=stdin,
        cwd=options.cwd,
        roi=list(options.roi),
        limits=limits,
        timing=options.timing,
        libs=list(options.libs),
        progress=progress,
        sandbox=sandbox,
        env=list(options.env),
        keep_files=options.keep_files,
        stdout_sink=stdout_sink,
        stderr_sink=stderr_sink,
    )
    if progress:
        sys.stderr.write("\n")
    if options.keep_files:
        keep_notes(trace.meta, options.keep_files)
    return trace


def program_graph(inputs, output, options, *, weights="model", war=False, waw=False,
                  save_trace=None):
    """Write the dependency graph of a program or of a trace to ``output``: ``vcut graph``.

    Parameters
    ----------
    inputs : list of str
        C sources (traced with ``options``) or one trace (.npz).
    output : str
        The graph file; its suffix names the format (`ir_graph.formats.detect_format`).
    options : TraceOptions
        How the sources are traced.
    weights : {"model", "measured"}
        The edge weights (`ir_graph.build_graph`).
    war, waw : bool
        Also write-after-read, write-after-write memory edges.
    save_trace : str, optional
        Also keep the trace of a C input there.

    Returns
    -------
    tuple
        ``(result, notes)``: the figures ``vcut graph --json`` prints (the writer's notes
        among them) and the writer's notes alone.

    Raises
    ------
    InputError
        An output format the graph cannot be written in (``.lg``), or what the trace or
        the writer refuses.
    """
    fmt = detect_format(output)
    if fmt == "lg":
        raise InputError("vcut graph writes .npz, .graph, .edgelist or .mtx; not .lg")
    t0 = time.perf_counter()
    traces = [p for p in inputs if p.lower().endswith(".npz")]
    if traces:
        trace = load_trace(traces[0])
    else:
        trace = trace_sources(inputs, options)
        if save_trace:
            trace.save(save_trace)
    note_truncated(trace.meta, "the graph")
    g = build_graph(trace, weights=weights, war=war, waw=waw)
    report = write_graph(g, output, fmt)
    fit = fit_power_law(g.degrees())
    seconds = time.perf_counter() - t0
    result = {
        "nodes": g.n, "edges": g.m, "total_weight": g.total_weight, "alpha": fit.alpha,
        "x_min": fit.x_min, "weights": weights, "format": fmt,
        "output": os.path.abspath(output), "seconds": round(seconds, 3),
        "truncated": trace.truncated,
    }
    result.update(report)
    return result, report


#: Lines of each kind of --keep-files note printed; the rest are counted.
KEEP_NOTES_SHOWN = 10


def keep_notes(meta, keep_dir):
    """The entries of ``--keep-files DIR`` replaced by the program's files, and its files not
    kept, one note line each on stderr (the first `KEEP_NOTES_SHOWN`), whatever the
    command and with ``--json`` too."""
    replaced = [f"note: --keep-files replaced {os.path.join(keep_dir, rel)}, a {what}, with the "
                "program's file (never written through)"
                for rel, what in meta.get("kept_replaced", [])]
    refused = [f"note: --keep-files did not keep the program's file {rel}: {why}"
               for rel, why in meta.get("not_kept", [])]
    for lines in (replaced, refused):
        for line in lines[:KEEP_NOTES_SHOWN]:
            print(line, file=sys.stderr)
        if len(lines) > KEEP_NOTES_SHOWN:
            print(f"note: ... and {len(lines) - KEEP_NOTES_SHOWN} more like it (vcut trace --json "
                  "lists them all)", file=sys.stderr)


