"""The control-flow models side by side: parallelism and simulated speed-up under each.

::

    from vcut.pipeline import analyze, AnalysisOptions
    run = analyze(["samples/fft.c"], AnalysisOptions(p=8, control="cd"))
    run.summary["control"]["models"]      # one row per model of ir_graph.control

The headline analysis (``vcut analyze --control MODEL``) partitions, maps and
simulates the graph of one model (`ir_graph.control`). `control_models` sets every
model beside it: its critical path and parallelism (the data work over the critical
path, `ir_graph.control.model_table`), the speed-up bound at p, and (``vcut analyze
--control-models``) the simulated speed-up of each model's own analysis at the same p.
"""

import dataclasses

import numpy as np

from vcut_base.errors import InputError
from ir_graph.control import (BRANCH_CYCLES, CONTROL_MODELS, KIND_CTRL, check_latency,
                              check_model, has_control_edges, model_table, with_control)

__all__ = ["parse_controls", "branch_latency", "data_edges", "control_models",
           "models_sentence", "refuse_graph_file"]


def parse_controls(text, several=False):
    """The models ``text`` names: one model, or (``several``) a comma-separated list
    or ``all``; `InputError` for anything else."""
    text = "oracle" if text is None else str(text).strip()
    if text == "all":
        if not several:
            raise InputError("--control all compares the models: use it with 'vcut compare'; "
                             f"'vcut analyze' takes one of {', '.join(CONTROL_MODELS)}")
        return CONTROL_MODELS
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if not names or (len(names) > 1 and not several):
        raise InputError(f"--control takes one of {', '.join(CONTROL_MODELS)}"
                         + (" (or several, comma-separated, or all)" if several else "")
                         + f"; got {text!r}")
    for name in names:
        check_model(name)
    if len(set(names)) != len(names):
        raise InputError(f"--control names a model twice: {text!r}")
    return names


def refuse_graph_file(control, path):
    """The `InputError` of ``--control CONTROL`` (models other than ``oracle``) on the graph
    file ``path``: the control dependences come from a trace."""
    raise InputError(f"--control {control} needs the program's control flow: give the C "
                     f"sources or a trace (.npz), not a graph file ({path})")


def branch_latency(options, machine=None):
    """The branch-resolution latency (cycles) of an analysis: ``options.branch_latency``,
    else the machine's ``branch_cycles``, else `ir_graph.control.BRANCH_CYCLES`."""
    if options.branch_latency is not None:
        return check_latency(options.branch_latency)
    return float(machine.branch_cycles) if machine is not None else BRANCH_CYCLES


def data_edges(graph):
    """``graph`` without its control edges (itself when it has none)."""
    if not has_control_edges(graph):
        return graph
    kind = graph.edge_kind
    keep = np.flatnonzero((kind & KIND_CTRL) == 0)
    return dataclasses.replace(graph, src=graph.src[keep], dst=graph.dst[keep],
                               weight=graph.weight[keep], edge_kind=kind[keep])


def control_models(analysis, graph, latency, models=CONTROL_MODELS, simulate=False,
                   progress=None, **analysis_options):
    """Every model's critical path, parallelism and speed-up bound beside the headline
    analysis; with ``simulate``, each model's own analysis at the same p.

    Parameters
    ----------
    analysis : vcut.pipeline.Analysis
        The headline analysis of ``graph``.
    graph : ir_graph.Graph
        The graph analysed, with its control dependences (``graph.control``, from
        `ir_graph.build_graph`'s ``control``) and the headline model's control edges.
    latency : float
        Cycles of a control edge.
    models : sequence of str
        The models, in table order.
    simulate : bool
        Also partition, map and simulate every other model's graph as the headline
        was (`analyze_graph` with ``analysis``'s method, machine and
        ``analysis_options``, without baselines): the time of one analysis per model.
    progress : callable(str), optional
        A line before each model's analysis.
    **analysis_options
        Passed on to `analyze_graph` (mapper, threshold, seed, lam, order,
        object_bytes, device).

    Returns
    -------
    list of dict
        Per model: ``model``, ``critical_path``, ``work`` (the data work, cycles),
        ``parallelism`` (work / critical path), ``control_edges``, ``bound_speedup``
        (work over the lower bound at p: max(critical path, work / p)); for the
        headline model and, with ``simulate``, every model: ``makespan`` and
        ``speedup`` (the data work on the fastest core over the simulated makespan).
    """
    from .analysis import analyze_graph

    flow = graph.control
    if flow is None:
        raise InputError("the graph has no control dependences: build it from a trace "
                         "(C sources or a .npz trace), not from a graph file")
    headline = (graph.meta.get("control") or {}).get("model", "oracle")
    data = data_edges(graph)
    rows = model_table(data, flow, latency, models)
    speed = float(np.max(analysis.machine.core_speed))
    cores = max(min(analysis.machine.cores, analysis.p), 1)
    for row in rows:
        work = row["work"] / speed
        row["bound_speedup"] = work / max(row["critical_path"] / speed, work / cores) \
            if work > 0 else 1.0
        a = None
        if row["model"] == headline:
            a = analysis
        elif simulate:
            if progress:
                progress(f"the {row['model']} model at p = {analysis.p}")
            a = analyze_graph(with_control(data, flow, row["model"], latency), analysis.p,
                              analysis.method, analysis.machine, baselines=False,
                              **analysis_options)
        if a is not None:
            row["makespan"] = a.result.makespan
            row["speedup"] = work / a.result.makespan if a.result.makespan > 0 else 1.0
    return rows


def models_sentence(model, latency):
    """The sentence that says which model the headline figures use."""
    what = {
        "oracle": "the dataflow limit: every branch is known before it runs (data "
                  "dependences only)",
        "sp-cd-mf": "instructions wait for the mispredicted branches that control them; "
                    "independent control regions run at once",
        "sp-cd": "instructions wait for the mispredicted branches that control them; "
                 "mispredicted branches resolve in order",
        "sp": "everything after a mispredicted branch waits for it",
        "cd-mf": "instructions wait for the branches that control them; independent "
                 "control regions run at once",
        "cd": "instructions wait for the branches that control them; branches resolve "
              "in order",
        "base": "everything after a branch waits for it",
    }[check_model(model)]
    unit = "cycle" if latency == 1 else "cycles"
    tail = "" if model == "oracle" else f" (a branch resolves in {latency:g} {unit})"
    return f"The headline figures use the {model.upper()} model: {what}{tail}."
