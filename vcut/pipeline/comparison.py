"""Every method at every cluster count: makespan and communication (the source's Tables 6-9).

::

    from vcut.pipeline import AnalysisOptions, compare, compare_methods
    rows = compare_methods(g, [8, 64], object_bytes=trace.obj_size)
    c = compare(["samples/fft.c"], AnalysisOptions(ps=(8, 64), mapping="memory-centric"))

`METHODS` is the comparison of the source's Tables 6-9 in its column order.
"""

import time
from dataclasses import dataclass

import numpy as np

from ir_graph.control import model_table, with_control
from mapping.machine import load_machine, table2
from mapping.memory_centric import THRESHOLD
from mapping.placement import independent_time
from mapping.report import compare_figure, control_figure, figure_png

from .analysis import analyze_graph, check_names
from .control import branch_latency, parse_controls, refuse_graph_file
from .inputs import analysis_input, spill_context
from .outputs import json_text, prepare_output_dir, write_files

__all__ = ["METHODS", "COMPARE_FILES", "Comparison", "compare", "compare_methods"]

#: The files a comparison writes into ``options.output``.
COMPARE_FILES = ("compare.json", "compare.png")

METHODS = ("compnet", "metis", "pg", "w-pg", "wb-pg", "libra", "w-libra", "wb-libra")


def compare_methods(graph, ps, methods=METHODS, machine=None, *, mapper="memory-centric",
                    threshold=THRESHOLD, seed=0, lam=1.0, order="given", object_bytes=None,
                    progress=None, steering="auto"):
    """Every method at every p: makespan and communication (Tables 6-9).

    Each (p, method) is one `analyze_graph` of ``graph`` without baselines, in the
    order p outer, ``methods`` inner. `compare` (``vcut compare``) and ``vcut analyze
    --compare-methods`` call it.

    Parameters
    ----------
    graph : ir_graph.Graph
        The graph, as `analyze_graph` takes it.
    ps : list of int
        Cluster counts.
    methods : sequence of str
        Partitioning methods, in column order; default `METHODS`, the eight of the
        source's Tables 6-9.
    machine : mapping.machine.Machine, optional
        None uses the Table 2 machine with p cores for each p.
    mapper : str
        The mapping of every run (`mapping.placement.MAPPERS`); default
        ``memory-centric``, the source's.
    threshold, seed, lam, order, object_bytes
        As for `analyze_graph`.
    progress : callable(str), optional
        Called with ``"p = P: METHOD"`` before each run.

    Returns
    -------
    list of dict
        One row per run: ``p``, ``method``, ``makespan``, ``independent_time``,
        ``makespan_seconds``, ``communication_bytes``, ``network_bytes``,
        ``hop_bytes``, ``messages``, ``machine``, ``seconds`` and the partitioner's
        figures (`Analysis.partition`: ``kind``, ``replication_factor``, ...).

    Raises
    ------
    InputError
        An unknown method or mapping (checked before the first run), or what
        `analyze_graph` refuses (more clusters than edges).

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions
    >>> from vcut.pipeline import analysis_input, compare_methods
    >>> graph, object_bytes, _ = analysis_input(
    ...     ["samples/strassen.c"], AnalysisOptions(trace=TraceOptions(defines=("N=2",))))
    >>> rows = compare_methods(graph, [2, 4], ["pg", "metis"], object_bytes=object_bytes,
    ...                        progress=print)
    p = 2: pg
    p = 2: metis
    p = 4: pg
    p = 4: metis
    >>> [(r["p"], r["method"], r["machine"], round(r["makespan"], 2)) for r in rows]
    [(2, 'pg', 'table2:2', 8099.48), (2, 'metis', 'table2:2', 7361.56),
     (4, 'pg', 'table2:4', 5773.4), (4, 'metis', 'table2:4', 4318.64)]
    >>> [(r["kind"], r["communication_bytes"]) for r in rows[:2]]
    [('vertex-cut', 7936.0), ('edge-cut', 2272.0)]
    >>> compare_methods(graph, [2], ["pg", "metiss"])
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: unknown partitioning method 'metiss'; use one of ...
    """
    check_names(methods, mapper, steering)
    rows = []
    for p in ps:
        for method in methods:
            if progress:
                progress(f"p = {p}: {method}")
            t = time.perf_counter()
            a = analyze_graph(graph, p, method, machine, mapper=mapper, threshold=threshold,
                              seed=seed, lam=lam, order=order, object_bytes=object_bytes,
                              baselines=False, steering=steering)
            r = a.result
            indep = independent_time(a.interactions, a.placement.core, a.machine, r.busy)
            rows.append({"p": int(p), "method": method, "makespan": r.makespan,
                         "independent_time": indep,
                         "makespan_seconds": r.seconds,
                         "communication_bytes": r.communication_bytes,
                         "network_bytes": r.network_bytes, "hop_bytes": r.hop_bytes,
                         "messages": r.messages, "machine": a.machine.name,
                         "seconds": time.perf_counter() - t, **a.partition})
    return rows


@dataclass(frozen=True, eq=False)
class Comparison:
    """Every method at every cluster count on one input (see `compare`).

    ``summary()`` is the JSON object ``vcut compare --json`` prints (``source``,
    ``methods``, ``rows``, ``files``).

    Attributes
    ----------
    source : str
        What the graph came from.
    methods : tuple of str
        The methods, in column order.
    rows : list of dict
        `compare_methods`' rows; comparing control models, each also has ``control``
        (its model) and ``speedup`` (the data work on one core over the makespan).
    graph : ir_graph.Graph
        The graph compared on (data dependences only).
    files : list of str
        The files written (absolute paths); empty without ``options.output``.
    models : list of dict, optional
        Comparing control models (``--control`` other than ``oracle``): each model's
        `ir_graph.control.model_table` row (critical path, parallelism, control edges).

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, compare
    >>> c = compare(["samples/strassen.c"], AnalysisOptions(
    ...     ps=(4,), methods=("pg", "metis"), trace=TraceOptions(defines=("N=2",))))
    >>> c.source, c.methods, len(c.rows), c.graph.n, c.files
    ('samples/strassen.c', ('pg', 'metis'), 2, 1986, [])
    >>> sorted(c.summary())
    ['files', 'methods', 'rows', 'source']
    >>> c.summary()["rows"] is c.rows
    True
    """

    source: str
    methods: tuple
    rows: list
    graph: object
    files: list
    models: list = None

    def summary(self):
        """The JSON object ``vcut compare --json`` prints (with ``models`` when several
        control models were compared)."""
        out = {"source": self.source, "methods": list(self.methods), "rows": self.rows,
               "files": self.files}
        if self.models:
            out["models"] = self.models
        return out


def compare(inputs, options, *, say=None):
    """Partition, map and simulate ``inputs`` with every method at every p: ``vcut compare``.

    Parameters
    ----------
    inputs : list of str
        C sources (traced with ``options.trace``), or one trace or graph file.
    options : AnalysisOptions
        ``ps`` the cluster counts, ``control`` the control models (one, several
        comma-separated, or ``all``; each model's graph gets every method at every p),
        ``methods`` the methods in column order (None:
        `METHODS`), ``mapping`` the mapping of every run; with ``output`` the files
        `COMPARE_FILES` (the rows as JSON, a figure) are written there.
    say : callable(str), optional
        A progress line before each run.

    Returns
    -------
    Comparison
        The rows (`compare_methods`), the graph and the files written.

    Raises
    ------
    InputError
        A bad input, machine, method or window (a method is checked when its turn
        comes, after the program is traced).
    OutputError
        An output folder that cannot be written, or a file in it that is an input.
    CompileError, ProgramError
        As `trace_sources`, for C inputs.

    See Also
    --------
    compare_methods : the same on a graph already built.

    Examples
    --------
    >>> import os, tempfile
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions, compare
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     c = compare(["samples/strassen.c"], AnalysisOptions(
    ...         ps=(2, 4), methods=("pg", "metis"), mapping="memory-centric", output=tmp,
    ...         trace=TraceOptions(defines=("N=2",))))
    ...     written = sorted(os.listdir(tmp))
    >>> written, [os.path.basename(f) for f in c.files]
    (['compare.json', 'compare.png'], ['compare.json', 'compare.png'])
    >>> [(r["p"], r["method"], round(r["makespan"], 2)) for r in c.rows]
    [(2, 'pg', 8099.48), (2, 'metis', 7361.56), (4, 'pg', 5773.4), (4, 'metis', 4318.64)]
    """
    with spill_context(options.spill):
        methods = METHODS if options.methods is None else tuple(options.methods)
        check_names(methods, options.mapping, options.steering)  # before the program is traced
        controls = parse_controls(options.control, several=True)
        if options.output:
            prepare_output_dir(options.output, COMPARE_FILES, options.input_paths(inputs))
        machine = load_machine(options.machine) if options.machine else None
        latency = branch_latency(options, machine)
        graph, obj_bytes, source = analysis_input(inputs, options, control="oracle",
                                                  latency=latency)
        models = None
        if controls != ("oracle",):
            if graph.control is None:
                refuse_graph_file(options.control, source)
            models = model_table(graph, graph.control, latency, controls)
        rows = []
        for model in controls:
            g = graph if model == "oracle" else with_control(graph, graph.control, model,
                                                             latency)
            if models and say:
                say(f"the {model} model")
            got = compare_methods(g, list(options.ps), methods, machine,
                                  mapper=options.mapping, threshold=options.threshold,
                                  seed=options.seed, lam=options.lam, order=options.order,
                                  object_bytes=obj_bytes, progress=say,
                                  steering=options.steering)
            if models:
                work = next(r["work"] for r in models if r["model"] == model)
                for r in got:
                    speed = float(np.max((machine or table2(r["p"])).core_speed))
                    r["control"] = model
                    r["speedup"] = work / speed / r["makespan"] if r["makespan"] > 0 else 1.0
            rows += got
        files = []
        if options.output:
            if models:
                fig = control_figure(models, rows, methods, f"{source}: {graph.n:,} nodes")
                doc = {"source": source, "controls": list(controls), "branch_latency": latency,
                       "models": models, "rows": rows}
            else:
                fig = compare_figure(rows, methods, f"{source}: {graph.n:,} nodes")
                doc = {"source": source, "rows": rows}
            files = write_files(options.output, [
                ("compare.json", json_text(doc, indent=1)), ("compare.png", figure_png(fig))])
        return Comparison(source=source, methods=methods, rows=rows, graph=graph, files=files,
                          models=models)

