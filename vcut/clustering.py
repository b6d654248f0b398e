"""The clusters of a graph by any partitioning method: a vertex cut or an edge cut.

`cluster_graph` is where the analysis (`vcut.pipeline`) and par's steering
(`vcut.par_steering`) partition: a vertex cut of `vcut.partition.ALGORITHMS`, an
edge cut of `vcut.edge_cut.EDGE_CUTS` or a given assignment, turned into the
`mapping.interactions.Clustering` the mapping and the simulator take, with the
partition's figures.
"""

import numpy as np

from vcut_base.errors import InputError
from mapping.interactions import from_edge_partition, from_vertex_partition

from .edge_cut import EDGE_CUTS, edge_cut
from .cuts import ALGORITHMS, GREEDY, option_names
from .partition import check_arguments, partition_from_assignment, partition_graph, simplify

__all__ = ["DEFAULT_METHOD", "cluster_graph"]

#: The partitioning of `vcut.pipeline.analyze_graph` and ``vcut analyze`` by default: the
#: parallelism-aware vertex cut (`vcut.parallel`).
DEFAULT_METHOD = "par"


def cluster_graph(graph, p, method=DEFAULT_METHOD, *, lam=1.0, seed=0, order="given",
                  assignment=None, latency=None, device="cpu", beta=None, gamma=0.0,
                  numa=None, chain_slack=0.0, grains=0.0, grain_unit="runs"):
    """The `Clustering` of ``graph`` into ``p`` clusters by ``method``.

    ``assignment`` (a cluster per input edge, e.g. from a partition file)
    replaces the partitioner. ``latency``: the cycles a value takes between
    two cores, ``beta`` the replica price, ``gamma`` the priority, ``chain_slack``
    the chains protected, ``grains`` the block runs (``grain_unit`` "runs") or calls
    ("calls") scheduled whole and ``numa`` the
    memory model (`vcut.par_steering.par_numa`), for ``par``
    (`vcut.parallel.par_assign`).
    ``device``: the greedy family's batched stream on the GPU
    (`vcut.partition.partition_graph`). Returns ``(clustering, metrics dict)``.
    """
    if assignment is not None:
        part = partition_from_assignment(graph, assignment, p, algo=method)
        metrics = _vertex_cut_metrics(part)
        return from_edge_partition(part, graph.node_object, method), metrics
    if method in EDGE_CUTS:
        if device == "gpu":
            raise InputError(f"--device gpu runs the greedy family's vertex cuts; the {method} "
                             "edge cut runs on the CPU: drop --device")
        src, dst, weight, _, _, _ = simplify(graph)
        if len(src) == 0:
            raise InputError("the graph has no edges (other than self-loops); nothing to partition")
        parts = edge_cut(src, dst, weight, graph.n, p, method, seed=seed)
        cl = from_vertex_partition(src, dst, weight, parts, p, graph.node_object, method)
        work = np.bincount(cl.cluster, weights=cl.weight, minlength=p)
        metrics = {"kind": "edge-cut", "cut_edges": int(np.count_nonzero(parts[src] != parts[dst])),
                   "work_imbalance": float(work.max() / work.mean()) if work.sum() > 0 else 1.0}
        return cl, metrics
    if method not in ALGORITHMS:
        raise InputError(f"unknown partitioning method {method!r}; use one of "
                         f"{', '.join(EDGE_CUTS + ALGORITHMS)}")
    # the recheck on the GPU too: a trace's graph is often a single batch, which then
    # gives the sequential stream's cut (the rounds trade a little replication for speed)
    gpu = device != "cpu" and method in GREEDY
    check_arguments(p, seed, lam)  # lambda is checked whatever the cut
    knobs = {"lam": lam, "order": order, "latency": latency, "beta": beta, "gamma": gamma,
             "chain_slack": chain_slack, "grain_unit": grain_unit,
             "numa": numa if method == "par" else None, "apply": "recheck" if gpu else None}
    names = option_names(method)
    options = {k: v for k, v in knobs.items() if k in names}
    if grains:  # par's: another cut says it takes none
        options["grains"] = grains
    part = partition_graph(graph, p, method, options, seed=seed, device=device)
    return from_edge_partition(part, graph.node_object, method), _vertex_cut_metrics(part)


def _vertex_cut_metrics(part):
    """The analysis' figures of a vertex cut `vcut.partition.Partition` (par's settings too)."""
    m = part.metrics
    out = {"kind": "vertex-cut", "replication_factor": m.replication_factor,
           "vertex_copies": m.vertex_copies, "work_imbalance": m.edge_weight_imbalance}
    if "beta" in part.info:  # par: the replica price it kept and the ones it tried
        out.update(replica_price=part.info["beta"], model_makespan=part.info["model_makespan"],
                   prices=part.info["prices"], priority_gamma=part.info["gamma"],
                   chain_slack=part.info["chain_slack"], numa_model=part.info["numa"])
        if "grain_share" in part.info:
            out.update({k: part.info[k] for k in ("grain_share", "grains", "grain_vertices",
                                                  "call_share") if k in part.info})
    return out
