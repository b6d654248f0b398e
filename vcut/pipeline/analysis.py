"""Partition, map and simulate one graph: `analyze_graph` and its result, `Analysis`.

::

    from frontend import trace_program
    from ir_graph import build_graph
    from mapping import load_machine
    from vcut.pipeline import analyze_graph
    trace = trace_program("samples/fft.c", timing=False)
    g = build_graph(trace, weights="model")
    a = analyze_graph(g, 8, "wb-libra", load_machine("mesh:4x4"), object_bytes=trace.obj_size)
    a.result.makespan, a.result.hop_bytes

Partitioning methods: every vertex cut of `vcut.partition.ALGORITHMS` and the
edge cuts of `vcut.edge_cut.EDGE_CUTS` (`vcut.clustering.cluster_graph`); ``par``'s
candidates are judged by the simulator (`vcut.par_steering`).
"""

import time
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np

from vcut_base.errors import InputError
from vcut_base.memory import check_memory
from vcut_base.progress import run_parallel
from mapping.bounds import lower_bound
from mapping.interactions import VALUE_BYTES, interactions
from mapping.machine import BYTES_PER_CORE_PAIR, table2
from mapping.memory_centric import THRESHOLD
from mapping.placement import MAPPERS, independent_time, place, placement_of
from mapping.simulate import release_layout, simulate, simulation_jobs

from .. import par_steering
from ..clustering import DEFAULT_METHOD, cluster_graph
from ..edge_cut import EDGE_CUTS
from ..par_steering import (finalist, first_simulations, mapping_evaluations, pair_replays,
                            par_numa, refine, replay, replay_pair, steer)
from ..partition import ALGORITHMS, check_clusters

__all__ = ["Analysis", "analyze_graph", "MAPPING_FORMAT_VERSION"]

MAPPING_FORMAT_VERSION = 1


@dataclass(frozen=True, eq=False)
class Analysis:
    """One partition of a graph, mapped and simulated (see `analyze_graph`).

    Made by `analyze_graph` (and so by `analyze`, `compare_methods` and
    `analyze_windows`); frozen. Besides its fields: ``bound`` (the
    `mapping.bounds.Bound` no mapping of these tasks beats), ``independent_time``
    (the makespan without dependency waits, cycles), `summary` (``vcut analyze
    --json``'s object) and `to_json` (``mapping.json``).

    Attributes
    ----------
    method : str
        The partitioning method.
    p : int
        Number of clusters.
    machine : mapping.machine.Machine
        The machine mapped onto.
    clustering : mapping.interactions.Clustering
        The tasks (edges) with their clusters, as simulated (after ``par``'s
        refinement and replays).
    interactions : mapping.interactions.ClusterInteractions
        Per cluster: work, tasks, footprint; bytes sent between clusters.
    placement : mapping.placement.Placement
        The core of every cluster (``core``), the mapping (``method``) and its rule.
    result : mapping.simulate.SimResult
        The simulation: ``makespan`` (cycles), ``seconds``, ``hop_bytes``,
        ``communication_bytes``, ``messages``, per-core ``busy`` and ``utilization``.
    partition : dict
        The partitioner's figures: ``kind`` (``vertex-cut`` or ``edge-cut``),
        ``replication_factor``, ``vertex_copies``, ``work_imbalance`` of a vertex cut
        (``cut_edges`` of an edge cut); ``par``'s steering besides.
    phases : dict
        Seconds of each phase (``partition``, ``interactions``, ``mapping``,
        ``simulation``, ``baselines``, ...).
    mappers : list of dict
        With baselines: one row per mapping of `mapping.placement.MAPPERS` (``mapping``,
        ``makespan``, ``hop_bytes``, ``network_bytes``, ``cores_used``,
        ``utilization_used_cores``, ``utilization_all_cores``); else empty.

    Examples
    --------
    >>> from ir_graph import build_graph
    >>> from vcut.pipeline import TraceOptions, analyze_graph, trace_sources
    >>> trace = trace_sources(["samples/strassen.c"], TraceOptions(defines=("N=2",)),
    ...                       stdout_sink=None)
    >>> a = analyze_graph(build_graph(trace), 4, object_bytes=trace.obj_size,
    ...                   baselines=False)
    >>> a.method, a.p, a.machine.name, a.placement.method, a.placement.core.tolist()
    ('par', 4, 'table2:4', 'time-aware', [2, 3, 0, 1])
    >>> round(a.result.makespan, 2), a.bound.lower_bound, a.partition["kind"]
    (2867.04, 2823.5, 'vertex-cut')
    >>> a.mappers
    []

    The ``vcut analyze --json`` object, and ``mapping.json``:

    >>> s = a.summary()
    >>> s["clusters"], s["cores"], s["makespan"] == a.result.makespan, s["lower_bound"]
    (4, 4, True, 2823.5)
    >>> doc = a.to_json("samples/strassen.c")
    >>> doc["format"], doc["format_version"], len(doc["clusters"]), len(doc["cores"])
    ('vcut-mapping', 1, 4, 4)
    >>> sorted(doc["clusters"][0])
    ['core', 'footprint_bytes', 'id', 'received_bytes', 'rule', 'sent_bytes', 'tasks',
     'work_cycles']
    """

    method: str
    p: int
    machine: object
    clustering: object
    interactions: object
    placement: object
    result: object
    partition: dict
    phases: dict
    mappers: list = field(default_factory=list)

    @cached_property
    def bound(self):
        """The `mapping.bounds.Bound` of the tasks on this machine: no mapping beats it."""
        return lower_bound(self.clustering, self.machine)

    @cached_property
    def independent_time(self):
        """`mapping.placement.independent_time` of this analysis (cycles)."""
        return independent_time(self.interactions, self.placement.core, self.machine,
                                self.result.busy)

    def summary(self):
        """The JSON object ``vcut analyze --json`` prints."""
        r = self.result
        return {
            "clusters": self.p, "cores": self.machine.cores, "machine": self.machine.name,
            "method": self.method, "mapping": self.placement.method,
            "core_of_cluster": self.placement.core.tolist(),
            "makespan": r.makespan, "makespan_seconds": r.seconds,
            "independent_time": self.independent_time,
            "communication_bytes": r.communication_bytes, "network_bytes": r.network_bytes,
            "hop_bytes": r.hop_bytes, "messages": r.messages,
            "remote_memory_tasks": r.remote_memory_tasks,
            **r.utilization_figures(),
            **self.bound.figures(r.makespan),
            "partition": self.partition, "phases": self.phases,
            "mappers": self.mappers,
        }

    def to_json(self, source=None):
        """The content of ``mapping.json`` (format "vcut-mapping", version 1)."""
        inter, r = self.interactions, self.result
        sent = inter.comm.sum(axis=1)
        received = inter.comm.sum(axis=0)
        rule = self.placement.rule or [None] * self.p
        clusters = [
            {"id": c, "core": int(self.placement.core[c]), "work_cycles": float(inter.work[c]),
             "tasks": int(inter.tasks[c]), "footprint_bytes": float(inter.footprint[c]),
             "sent_bytes": float(sent[c]), "received_bytes": float(received[c]),
             "rule": rule[c]}
            for c in range(self.p)
        ]
        per_core = self.placement.clusters_of(self.machine.cores)
        cores = [
            {"id": k, "clusters": per_core[k], "busy_cycles": float(r.busy[k]),
             "utilization": float(r.utilization[k]),
             "numa_node": int(self.machine.numa_of_core[k])}
            for k in range(self.machine.cores)
        ]
        out = {"format": "vcut-mapping", "format_version": MAPPING_FORMAT_VERSION,
               "source": source, "method": self.method, "p": self.p,
               "mapping": self.placement.method,
               "threshold": self.placement.info.get("threshold"),
               "machine": self.machine.to_dict(), "clusters": clusters, "cores": cores,
               "metrics": {**r.to_dict(), "independent_time_cycles": self.independent_time,
                           **self.bound.figures(r.makespan), "partition": self.partition},
               "phases": self.phases, "mappers": self.mappers}
        return out


def _simulated(held, core):
    """The `SimResult` of placement ``core`` among ``held`` (``(core, SimResult)`` pairs of
    the same clustering and messages), whatever it was simulated as, else None."""
    return next((r for c, r in held if np.array_equal(c, core)), None)


def _mapping_figures(r):
    """The comparison table's figures of one simulation (`SimResult`)."""
    return {"makespan": r.makespan, "hop_bytes": r.hop_bytes, "network_bytes": r.network_bytes,
            **r.utilization_figures()}


def check_names(methods, mapper, steering="auto"):
    """Refuse (`InputError`) a partitioning method, a mapping or a steering
    (`vcut.par_steering.STEERING`) vcut does not know, before any work: a misspelt name is
    not the program's or the graph's fault."""
    for method in methods:
        if method not in EDGE_CUTS + ALGORITHMS:
            raise InputError(f"unknown partitioning method {method!r}; use one of "
                             f"{', '.join(EDGE_CUTS + ALGORITHMS)}")
    if mapper not in MAPPERS:
        raise InputError(f"unknown mapping {mapper!r}; use one of {', '.join(MAPPERS)}")
    par_steering.check_steering(steering)


def analyze_graph(graph, p, method=DEFAULT_METHOD, machine=None, *, mapper="time-aware",
                  threshold=THRESHOLD, seed=0, lam=1.0, order="given", object_bytes=None,
                  assignment=None, baselines=True, progress=None, jobs=None, device="cpu",
                  steering="auto"):
    """Partition, map and simulate ``graph``: the analysis of one graph at one p.

    The graph is cut into ``p`` clusters (`vcut.clustering.cluster_graph`; ``par``'s
    candidates judged by the simulator, `vcut.par_steering`), the clusters' interactions
    extracted, the clusters mapped onto the machine's cores (`mapping.placement.place`)
    and the run simulated (`mapping.simulate.simulate`). `analyze`, `compare_methods`
    and `analyze_windows` call it.

    Parameters
    ----------
    graph : ir_graph.Graph
        The graph; usually an IR graph (`ir_graph.build_graph`), nodes in execution
        order.
    p : int
        Number of clusters (at most the graph's edges for a vertex cut).
    method : str
        A vertex cut (`vcut.partition.ALGORITHMS`) or an edge cut
        (``metis``, ``compnet``); default ``par``, the parallelism-aware
        vertex cut, told the machine's mean message latency.
    machine : mapping.machine.Machine, optional
        Default: the Table 2 machine with ``p`` cores.
    mapper : str
        One of `mapping.placement.MAPPERS` (default ``time-aware``).
    threshold : int
        Most clusters the memory-centric mapping puts on one core (default 4).
    seed : int
        Seed of the random choices (default 0).
    lam : float
        Balance bound of the WB variants, >= 1 (default 1).
    order : str
        Edge stream order of the streaming vertex cuts (`vcut.cuts.base.ORDERS`).
    object_bytes : array, optional
        Sizes of the trace's memory objects (``Trace.obj_size``).
    assignment : int array, optional
        A given cluster per input edge instead of partitioning.
    baselines : bool
        Also map and simulate with every other mapper (the report's comparison).
    progress : callable(str), optional
        Called with a line at the start of each phase.
    jobs : int, optional
        Independent runs at once (threads; no result depends on it): ``par``'s
        other priorities with their simulations (`steer`), the time-aware
        mapping's starts and the baseline simulations. Default: the CPUs this
        process may use, as far as the available memory holds that many
        simulations (`mapping.simulate.simulation_jobs`).
    device : {"cpu", "gpu", "auto"}
        Where the greedy family's batched stream decides (`cluster_graph`).
    steering : {"auto", "full"}
        How far ``par``'s candidates are searched (`vcut.par_steering.STEERING`):
        ``auto`` (default) searches on data graphs and lets the replay alone steer on
        graphs with control edges; ``full`` searches on every graph.

    Returns
    -------
    Analysis
        The partition, mapping and simulation (with ``mappers``, the baselines' rows).

    Raises
    ------
    InputError
        An unknown mapping or method, more clusters than edges (a vertex cut), a given
        ``assignment`` that does not fit the graph.
    InputTooLarge
        A ``p`` whose cluster-pair matrices do not fit in memory.

    See Also
    --------
    analyze : the same from a program, a trace or a graph file, with the report.
    compare_methods : several methods and cluster counts.

    Examples
    --------
    >>> from ir_graph import build_graph
    >>> from mapping import load_machine
    >>> from vcut.pipeline import TraceOptions, analyze_graph, trace_sources
    >>> trace = trace_sources(["samples/strassen.c"], TraceOptions(defines=("N=2",)),
    ...                       stdout_sink=None)
    >>> graph = build_graph(trace, weights="model")
    >>> graph.n, graph.m
    (1986, 2747)
    >>> def phase(line):  # a phase's line; one that took a second adds an indented rate
    ...     if not line.startswith(" "):
    ...         print(line)
    >>> a = analyze_graph(graph, 4, "wb-libra", load_machine("mesh:2x2"),
    ...                   object_bytes=trace.obj_size, progress=phase)
    partitioning 2,747 edges into 4 clusters (wb-libra)
    extracting cluster interactions
    mapping onto mesh:2x2 (time-aware)
    >>> a.method, a.machine.name, round(a.result.makespan, 2), a.result.hop_bytes
    ('wb-libra', 'mesh:2x2', 5067.04, 11040.0)
    >>> round(a.partition["replication_factor"], 3)
    1.142

    With ``baselines`` (the default) every other mapping is simulated too:

    >>> [(m["mapping"], round(m["makespan"], 2)) for m in a.mappers]
    [('time-aware', 5067.04), ('memory-centric', 5074.44), ('round-robin', 5067.04),
     ('random', 5067.2), ('comm-greedy', 5074.44), ('recursive-bisection', 5067.2)]

    >>> analyze_graph(graph, 4, mapper="fastest")
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: unknown mapping 'fastest'; use one of time-aware, ...
    """
    check_names((), mapper, steering)  # the method: where it is clustered (`cluster_graph`)
    say = progress or (lambda line: None)
    phases = {}

    def done(name, t, count=None, unit="nodes"):
        phases[name] = time.perf_counter() - t
        if phases[name] >= 1.0:  # the rate of a phase worth waiting for
            count = graph.n if count is None else count
            say(f"  {name}: {phases[name]:.1f} s, {count / phases[name]:,.0f} {unit}/s")

    t = time.perf_counter()
    say(f"partitioning {graph.m:,} edges into {p} clusters ({method})")
    # par's message latency: the machine's (default: the Table 2 machine of p cores)
    latency = machine.mean_message_cycles(VALUE_BYTES) if machine is not None else None
    if assignment is None and method not in EDGE_CUTS:
        # (the partitioner checks the simple graph too, but par needs the machine first,
        # and it is p x p)
        check_clusters(p, graph.m)
    # cluster-pair matrices (communication, interactions), then the machine's core pairs
    check_memory(BYTES_PER_CORE_PAIR * float(p) ** 2, f"mapping {int(p):,} clusters",
                 "use fewer clusters (-p)")
    machine = machine if machine is not None else table2(int(p))
    numa = par_numa(machine, p) if method == "par" and assignment is None \
        and par_steering.PAR_NUMA else None

    cl, metrics = cluster_graph(graph, p, method, lam=lam, seed=seed, order=order,
                                assignment=assignment, latency=latency, device=device, numa=numa)
    sims = {}  # simulations run so far: (core, SimResult) by mapping, for reuse
    grain = early = judged = None
    if method == "par" and assignment is None:
        # the same for every clustering of these tasks (their chains and work): the
        # steering's and the refinement's yardstick
        bound = lower_bound(cl, machine).lower_bound
        # the steering's first simulation, and beside it the mapping's first start
        compact_sim, early = first_simulations(cl, machine, threshold, object_bytes, jobs) \
            if mapper == "time-aware" else (None, None)
        judged = cl
        cl, metrics, sims = steer(graph, p, cl, metrics, machine, latency, bound, say, jobs,
                                   numa, steering, compact_sim)
        grain = sims.pop("grains", [])  # the block runs' and calls' finalists (`steer`)
        cl, metrics, sims = refine(cl, metrics, machine, bound, sims, say)
        if early is not None and cl is judged:  # kept: its memory-centric start is simulated
            sims["memory-centric"] = early[1]
        else:
            early = None
    done("partition", t)
    par = method == "par" and assignment is None

    def mapped(cl, metrics, sims, done, jobs=jobs):  # interactions, mapping, simulation, replays
        t = time.perf_counter()
        say("extracting cluster interactions")
        inter = early[0] if early is not None and cl is judged else interactions(cl, object_bytes)
        done("interactions", t)
        t = time.perf_counter()
        say(f"mapping onto {machine.name} ({mapper})")
        if inter.value_bytes != VALUE_BYTES:
            sims = {}  # the steering's messages were of another size
        evals = mapping_evaluations(cl, metrics, bound) if par else None
        kept, spans, n = cl, [], 0
        if par and mapper == "time-aware" and pair_replays(evals, "compact" in sims):
            # two placements to judge: after their replays (`replay_pair`)
            say("  the memory-centric and compact placements, judged after their replays")
            done("mapping", t)
            t = time.perf_counter()
            core, kept, res, spans, n = replay_pair(cl, inter, machine, threshold,
                                                    sims["compact"], say, jobs)
            start = sims["compact"][1].makespan
            pl = placement_of(inter, machine, core, mapper, threshold, makespan_start=start,
                              makespan=res.makespan, evaluations=2, accepted=0)
            fresh = True
        else:
            pl = place(inter, machine, mapper, threshold=threshold, seed=seed, clustering=cl,
                       simulations=sims, jobs=jobs, evals=evals)
            done("mapping", t)
            t = time.perf_counter()
            # the mapping's own simulation of its result, or the steering's of the same
            # placement (a mapping other than time-aware can give the compact one)
            res = _simulated(sims.values(), pl.core)
            fresh = res is None
            if fresh:
                say(f"simulating {len(cl.src):,} tasks")
                res = simulate(cl, pl.core, machine, inter.value_bytes)
            if par:
                start = res.makespan
                kept, res, spans, n = replay(
                    cl, pl.core, machine, res, inter.value_bytes, bound, say,
                    0 if metrics.get("steering") == "replay" else None)
        if spans:
            metrics = {**metrics, "replays_from": start, "replays": spans, "replayed": n}
        if n:  # the other mappings' simulations ran the order it had
            cl, sims = kept, {}
        done("simulation", t, len(cl.src) + res.messages, "events")
        return cl, metrics, sims, inter, pl, res, fresh

    cl, metrics, sims, inter, pl, res, fresh = mapped(cl, metrics, sims, done)
    if grain:
        t = time.perf_counter()
        what = {"latency": "at the other latency", "runs": "on whole block runs",
                "calls": "on whole calls"}
        workers = simulation_jobs(cl, len(grain)) if jobs is None else int(jobs)
        say("par " + ", ".join(what[unit] for unit, *_ in grain) + ": refining and mapping "
            "those clusters too" + (f", {workers} at a time" if workers > 1 else ""))

        def mapped_finalist(c, m, sim):  # independent of the others: side by side, quietly
            return mapped(*refine(c, m, machine, bound, {"compact": sim}, lambda line: None),
                          lambda *a, **k: None, jobs=1 if workers > 1 else jobs)

        ready = run_parallel([partial(mapped_finalist, *f) for _, *f in grain], workers)
        for (unit, *_), kept in zip(grain, ready):  # judged one after another
            cl, metrics, sims, inter, pl, res, fresh = finalist(
                (cl, metrics, sims, inter, pl, res, fresh), kept, bound, unit)
        done("finalists", t)
    rows = []
    if baselines:
        t = time.perf_counter()
        others = [other for other in MAPPERS if other != mapper]
        cores = [place(inter, machine, other, threshold=threshold, seed=seed, clustering=cl).core
                 for other in others]
        # a placement simulated already (by the mapping, the steering or as the result),
        # whatever it was simulated as (on table2:8 at p = 8 round-robin is the compact one)
        held = [*(sims or {}).values(), (pl.core, res)]
        reused = {o: _simulated(held, core) for o, core in zip(others, cores)}
        reused = {o: None if r is None else _mapping_figures(r) for o, r in reused.items()}
        # the figures are all the comparison needs: the steering's and the mapping's
        # simulations (a finish time per task each) go before the others run
        sims = None
        todo = [(o, core) for o, core in zip(others, cores) if reused[o] is None]
        workers = simulation_jobs(cl, len(todo)) if jobs is None else int(jobs)
        # one simulation's time: the last phase's, or the mapping's per simulation it ran
        one = phases["simulation"] if fresh \
            else phases["mapping"] / max(pl.info.get("evaluations", 1), 1)
        eta = one * -(-len(todo) // max(workers, 1))
        if todo:
            say(f"simulating the {', '.join(o for o, _ in todo)} mappings for comparison"
                + (f", {workers} at a time" if workers > 1 else "")
                + (f" (about {eta:,.0f} s; --no-baselines skips them)" if eta >= 1.0 else ""))

        def figures(core):  # the figures alone: no finish time per task kept
            return lambda: _mapping_figures(simulate(cl, core, machine, inter.value_bytes,
                                                     finish=False))

        got = dict(zip([o for o, _ in todo], run_parallel([figures(c) for _, c in todo], workers)))
        got.update((o, r) for o, r in reused.items() if r is not None)
        got[mapper] = _mapping_figures(res)
        rows = [{"mapping": other, **got[other]} for other in MAPPERS]
        done("baselines", t)
    # the simulator's layout of the clustering is the simulations' alone: the control
    # models and the report after this ran with it at the peak (the 74 M-node dijkstra
    # trace: 17.6 GB there, 16.5 GB in the simulations)
    release_layout(cl)
    return Analysis(method=method, p=int(p), machine=machine, clustering=cl, interactions=inter,
                    placement=pl, result=res, partition=metrics, phases=phases, mappers=rows)
