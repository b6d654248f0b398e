"""The graph step on its own: ``vcut graph``'s graph file of a program or a trace.

::

    from vcut.pipeline import TraceOptions, program_graph
    result, notes = program_graph(["samples/fft.c"], "fft.graph", TraceOptions())

The module imports what that step needs only (the tracer, the graph builder and the
writers): the traced program's child starts from this process's heap.
"""

import os
import time

from vcut_base.errors import InputError
from frontend import load_trace
from ir_graph import build_graph, fit_power_law, write_graph
from ir_graph.control import check_model
from ir_graph.formats import detect_format

from .tracing import note_truncated, trace_sources

__all__ = ["program_graph"]


def program_graph(inputs, output, options, *, weights="model", war=False, waw=False,
                  save_trace=None, control="oracle", branch_latency=None):
    """Write the dependency graph of a program or of a trace to ``output``: ``vcut graph``.

    The sources are traced (`trace_sources`), or the trace read; its graph is built
    (`ir_graph.build_graph`), written whole in the format the suffix names
    (`ir_graph.write_graph`) and its degrees fitted to a power law
    (`ir_graph.fit_power_law`). A trace cut at its instruction budget is noted on
    stderr.

    Parameters
    ----------
    inputs : list of str
        C sources (traced with ``options``) or one trace (.npz).
    output : str
        The graph file; its suffix names the format (`ir_graph.formats.detect_format`):
        ``.npz``, ``.graph`` (METIS), ``.edgelist`` or ``.mtx``.
    options : TraceOptions
        How the sources are traced.
    weights : {"model", "measured"}
        The edge weights (`ir_graph.build_graph`).
    war, waw : bool
        Also write-after-read, write-after-write memory edges.
    save_trace : str, optional
        Also keep the trace of a C input there.
    control : str
        The control model (`ir_graph.control`): its control edges are in the graph
        (kind 128); default ``oracle``, none.
    branch_latency : float, optional
        Cycles of a control edge (default 1).

    Returns
    -------
    result : dict
        The figures ``vcut graph --json`` prints: ``nodes``, ``edges``,
        ``total_weight``, ``alpha`` and ``x_min`` (the power-law fit), ``weights``,
        ``format``, ``output`` (absolute path), ``seconds``, ``truncated``, ``control``
        (the model, the branch latency, branches, mispredicted branches and control
        edges) and the writer's notes.
    notes : dict
        The writer's notes alone (for a METIS file: ``self_loops_dropped``,
        ``parallel_edges_merged``, ``weights_rounded``; none for ``.npz``).

    Raises
    ------
    InputError
        An output format the graph cannot be written in (``.lg``), or what the trace or
        the writer refuses.
    CompileError, ProgramError
        As `trace_sources`, for C inputs.

    Examples
    --------
    >>> import os, tempfile
    >>> from vcut.pipeline import TraceOptions, program_graph
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result, notes = program_graph(
    ...         ["samples/strassen.c"], os.path.join(tmp, "strassen.graph"),
    ...         TraceOptions(defines=("N=2",)), save_trace=os.path.join(tmp, "strassen.npz"))
    ...     again, _ = program_graph([os.path.join(tmp, "strassen.npz")],
    ...                              os.path.join(tmp, "again.graph"), TraceOptions())
    >>> result["nodes"], result["edges"], result["format"], result["truncated"]
    (1986, 2747, 'metis', False)
    >>> notes
    {'self_loops_dropped': 0, 'parallel_edges_merged': 0, 'weights_rounded': False}
    >>> again["nodes"], again["edges"], again["total_weight"] == result["total_weight"]
    (1986, 2747, True)

    The format is checked before the program runs:

    >>> program_graph(["samples/strassen.c"], "strassen.lg", TraceOptions())
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: vcut graph writes .npz, .graph, .edgelist or .mtx; not .lg
    """
    check_model(control)
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
    g = build_graph(trace, weights=weights, war=war, waw=waw, control=control,
                    branch_latency=branch_latency)
    report = write_graph(g, output, fmt)
    fit = fit_power_law(g.degrees())
    seconds = time.perf_counter() - t0
    result = {
        "nodes": g.n, "edges": g.m, "total_weight": g.total_weight, "alpha": fit.alpha,
        "x_min": fit.x_min, "weights": weights, "format": fmt,
        "output": os.path.abspath(output), "seconds": round(seconds, 3),
        "truncated": trace.truncated, "control": g.meta["control"],
    }
    result.update(report)
    return result, report
