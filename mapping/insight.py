"""What an analysis means for the program: clusters, timeline and critical path on the source.

`insight` reads an `vcut.pipeline.Analysis`, its graph and the trace's
`frontend.source.SourceMap` (``graph.source``) and returns an `Insight`:

* per cluster, the source lines and functions it executes with their share
  of its work, the data objects it touches most (name, bytes) with the other
  clusters touching each (Algorithm 2's factor 1: clusters sharing memory),
  and its communication partners by bytes both ways;
* the simulated timeline of the cores (`task_intervals`), binned into about
  a thousand columns of busy share per core (`Insight.occupancy`);
* the critical path (`critical_path`): the longest chain of task durations
  through the task DAG, with its top lines and functions and the clusters
  it hands values between;
* a paragraph naming the biggest reasons the makespan exceeds the lower
  bound (`Insight.reading`).

A task (a dependency ``u -> v``) is charged to the instruction its weight
comes from (`ir_graph.build`'s rule): ``v`` when it accesses memory, else
``u`` when that does, else ``v``. Without a trace (a graph file) there are no
lines, functions or object names; the rest is the same.

::

    from mapping.insight import insight
    ins = insight(a, graph)             # a = analyze_graph(graph, ...)
    ins.reading, ins.to_json()["critical_path"]["lines"]

Every pass is linear in the tasks (numba kernels in
`mapping.insight_kernels`) except the sort of the distinct (cluster, line)
pairs, which are few.
"""

from dataclasses import dataclass

import numpy as np

from ir_graph.graph import index_dtype

from . import insight_kernels as _k
from .bounds import memory_delta
from .machine import MEMORY_CYCLES

__all__ = ["Insight", "insight", "task_intervals", "critical_path", "task_labels", "TOP", "BINS"]

#: Entries per ranked list (lines, functions, objects, partners).
TOP = 5
#: Time columns of the timeline.
BINS = 1000
#: Clusters listed as sharing one object.
SHARERS = 8

_NO_SOURCE = ("no source lines or object names: the graph has no trace (analyse the C program "
              "or its trace .npz to see them)")


@dataclass(frozen=True, eq=False)
class Insight:
    """`insight`'s figures (cycles and bytes).

    Attributes
    ----------
    clusters : list of dict
        Per cluster: ``id``, ``core``, ``work_cycles``, ``tasks``, ``lines``
        and ``functions`` (``{"name", "cycles", "share"}``, top first; share of
        the cluster's work), ``objects`` (``{"id", "name", "bytes", "tasks",
        "clusters", "shared_with"}``: memory tasks on it, clusters touching
        it, up to `SHARERS` of the others), ``objects_touched`` and
        ``partners`` (``{"cluster", "sent_bytes", "received_bytes", "bytes"}``).
    shared_objects : list of dict
        The objects touched by the most clusters (``id``, ``name``, ``bytes``,
        ``tasks``, ``clusters``: their ids).
    critical_path : dict
        ``cycles``, ``tasks``, ``share_of_makespan``, ``lines``, ``functions``,
        ``clusters`` (share of the path per cluster), ``handoffs`` (pairs of
        clusters the path passes values between: ``{"clusters", "count",
        "object", "line"}``).
    timeline : dict
        ``bins``, ``bin_cycles``, ``cores`` (the rows of `occupancy`: cores
        holding clusters), ``idle_share`` (of those cores' time).
    occupancy : float64 (cores, bins)
        Busy share of each shown core in each time bin.
    reading : str
        The plain-English paragraph.
    source : bool
        Whether lines, functions and object names are known.
    note : str
        Why they are not ("" when they are).
    """

    clusters: list
    shared_objects: list
    critical_path: dict
    timeline: dict
    occupancy: np.ndarray
    reading: str
    source: bool
    note: str = ""

    def to_json(self):
        """The ``insights`` object of ``mapping.json`` and ``--json`` (no arrays)."""
        return {"source": self.source, "note": self.note, "reading": self.reading,
                "clusters": self.clusters, "shared_objects": self.shared_objects,
                "critical_path": self.critical_path, "timeline": self.timeline}


def insight(a, graph, source=None, top=TOP, bins=BINS):
    """The `Insight` of analysis ``a`` of ``graph``.

    Parameters
    ----------
    a : vcut.pipeline.Analysis
    graph : ir_graph.Graph
        The analysed graph (its nodes are the clustering's).
    source : frontend.source.SourceMap, optional
        Default ``graph.source``; None (a graph without its trace): no lines,
        functions or object names.
    top : int
        Entries per ranked list.
    bins : int
        Time columns of the timeline.

    Returns
    -------
    Insight

    Notes
    -----
    O(tasks + cores x bins + objects) time and a few arrays of the tasks'
    length; the distinct (cluster, line) pairs are sorted.
    """
    source = graph.source if source is None else source
    cl, inter = a.clustering, a.interactions
    line_of, fn_of, line_names, fn_names = task_labels(cl, graph, source)
    names = _object_namer(source)
    clusters = _clusters(a, line_of, fn_of, line_names, fn_names, names, top)
    shared = _shared_objects(inter, names, top)
    start, finish, core = task_intervals(a)
    timeline, occ = _timeline(a, start, finish, core, bins)
    length, path, d = _critical(a)
    cp = _path_figures(a, path, d, length, line_of, fn_of, line_names, fn_names, names, top)
    has = line_of is not None
    ins = Insight(clusters=clusters, shared_objects=shared, critical_path=cp, timeline=timeline,
                  occupancy=occ, reading="", source=has, note="" if has else _NO_SOURCE)
    return Insight(**{**ins.__dict__, "reading": reading(a, ins)})


def task_labels(cl, graph, source):
    """``(line_of_task, function_of_task, line_names, function_names)``: each
    task's source line and function (int32 indices into the names), or four
    Nones when ``source`` is None or the graph has no instruction ids."""
    if source is None or graph.node_sid is None:
        return None, None, None, None
    node = cl.dst
    if graph.node_opclass is not None:  # the instruction the task's weight comes from
        mem = graph.node_opclass == 0
        node = np.where(mem[cl.dst] | ~mem[cl.src], cl.dst, cl.src)
    sid = graph.node_sid[node]
    line_names, line_of_sid = source.lines()
    fn_names, fn_of_sid = source.functions()
    return line_of_sid[sid], fn_of_sid[sid], line_names, fn_names


def task_intervals(a):
    """``(start, finish, core)`` of every task of analysis ``a`` (task order).

    ``start = finish - duration`` with the simulator's duration on its core
    ``k``: ``(w + f * (L[n, b] - L[n, n])) / speed[k]``, ``n`` the core's
    NUMA node, ``b`` the node of the task's object and ``f = min(1, w /
    100)`` (`mapping.simulate`). ``b`` is the node of the task that touched
    the object first, found as the earliest start with every task costed
    locally: exact while a remote access costs no less than a local one (as
    on every machine vcut builds: the first toucher's own start is exact and
    every other task's local start is no earlier than its real one); tasks of
    one object starting at the same cycle on different nodes are resolved
    by task order, where the simulator uses its event order.
    """
    cl, m = a.clustering, a.machine
    finish = np.asarray(a.result.finish, dtype=np.float64)
    obj = np.asarray(cl.obj)
    n_obj = int(obj.max()) + 1 if len(obj) and obj.max() >= 0 else 0
    # one compiled pass over the tasks (18.65 M of them: 0.3 s; the array expressions
    # took seconds and a gigabyte of temporaries)
    start, core = _k.task_starts(
        np.asarray(cl.cluster), np.asarray(a.placement.core, dtype=np.int64),
        np.asarray(m.core_speed, dtype=np.float64), np.asarray(m.numa_of_core, dtype=np.int64),
        np.asarray(cl.weight, dtype=np.float64), finish, obj, n_obj,
        np.asarray(m.numa_latency, dtype=np.float64), float(MEMORY_CYCLES))
    return start, finish, core


def critical_path(a):
    """``(cycles, tasks)``: the longest chain of task durations through the
    dependencies of analysis ``a``'s tasks, and its tasks from first to last.

    The durations are the lower bound's (`mapping.bounds`): each task's cycles
    on the fastest core with the most favourable memory latency, messages
    free; so ``cycles`` is ``a.bound.critical_path``. One pass over the tasks
    in execution order.
    """
    length, path, _ = _critical(a)
    return length, path


def _critical(a):
    """`critical_path` and the durations of the path's tasks."""
    cl, m = a.clustering, a.machine
    w = np.asarray(cl.weight, dtype=np.float64)
    delta = memory_delta(m)
    if delta:
        w = w + np.where(cl.obj >= 0, np.minimum(1.0, w / MEMORY_CYCLES) * delta, 0.0)
    d = w / float(np.max(m.core_speed))
    order = cl.order
    order = np.empty(0, dtype=np.int64) if order is None else order
    pred = np.full(int(cl.n), -1, dtype=index_dtype(len(w)))
    length, path = _k.longest_path(order, cl.src, cl.dst, d, int(cl.n), pred)
    return float(length), path, d[path]


def reading(a, ins):
    """One paragraph: the makespan against the lower bound and its biggest
    reasons, largest first (each reason's size is the share of the makespan
    or of the work it stands for: the critical path's share of the makespan,
    the idle share, the excess of the busiest cluster, the share of the
    clusters touching the most shared object, and the heaviest pair's share
    of the communication, halved: messages delay but do not occupy cores)."""
    r, bound = a.result, a.bound
    cp = ins.critical_path
    if r.makespan <= 0:
        return "The program has no work to schedule."
    ratio = r.makespan / bound.lower_bound if bound.lower_bound > 0 else 1.0
    binding = "the critical path" if bound.critical_path >= bound.work / max(bound.cores, 1) \
        else f"the work over {bound.cores} cores"
    head = (f"The makespan, {r.makespan:,.0f} cycles, is {ratio:.2f}x the lower bound of "
            f"{bound.lower_bound:,.0f} (set by {binding}).")
    reasons = []
    chain = (f"The longest dependency chain takes {cp['cycles']:,.0f} cycles, "
             f"{100 * cp['share_of_makespan']:.0f}% of the makespan")
    if cp["lines"]:
        where = cp["lines"][0]
        fn = f" (`{cp['functions'][0]['name']}`)" if cp["functions"] else ""
        chain += f"; {100 * where['share']:.0f}% of it is at {where['name']}{fn}"
    chain += "."
    if cp["handoffs"]:
        h = cp["handoffs"][0]
        on = f" on `{h['object']}`" if h["object"] else ""
        at = f" at {h['line']}" if h["line"] else ""
        what = "they serialise" if cp["share_of_makespan"] >= 0.5 \
            else "the chain crosses between them"
        chain += (f" Along it, clusters {h['clusters'][0]} and {h['clusters'][1]} pass values "
                  f"to each other {_times(h['count'])}"
                  + (f", most often{on}{at}" if on or at else "") + f": {what}.")
    reasons.append((cp["share_of_makespan"], chain))
    idle = ins.timeline["idle_share"]
    if idle > 0.005:
        reasons.append((idle, f"The {len(ins.timeline['cores'])} cores holding clusters are idle "
                              f"{100 * idle:.0f}% of the time."))
    work = a.interactions.work
    if len(work) > 1 and work.mean() > 0:
        c = int(np.argmax(work))
        imb = float(work[c] / work.mean())
        if imb > 1.01:
            reasons.append(((imb - 1) / imb, f"Cluster {c} has {imb:.2f}x the mean work "
                                             f"({work[c]:,.0f} cycles): the others wait for it."))
    if ins.shared_objects and len(ins.shared_objects[0]["clusters"]) > 1:
        o = ins.shared_objects[0]
        k = len(o["clusters"])
        size = f" ({o['bytes']:,.0f} bytes)" if o["bytes"] else ""
        reasons.append((k / max(a.p, 1) * 0.5,
                        f"`{o['name']}`{size} is touched by {k} of the {a.p} clusters "
                        f"({_list(o['clusters'])}): they share its memory."))
    comm = a.interactions.comm
    total = float(comm.sum())
    if total > 0:
        both = comm + comm.T
        i, j = np.unravel_index(int(np.argmax(np.triu(both, 1))), both.shape)
        share = float(both[i, j]) / total
        reasons.append((0.5 * share, f"Clusters {i} and {j} exchange the most data: "
                                     f"{both[i, j]:,.0f} bytes, {_percent(share)} of all "
                                     "communication."))
    reasons.sort(key=lambda x: -x[0])
    tail = "" if ins.source else " (No source lines: the graph has no trace.)"
    return " ".join([head] + [text for _, text in reasons]) + tail


def _times(k):
    return "once" if k == 1 else "twice" if k == 2 else f"{k:,} times"


def _percent(x):
    """``"12%"``; one decimal below 10%, ``"<0.1%"`` below that."""
    return f"{100 * x:.0f}%" if x >= 0.1 else f"{100 * x:.1f}%" if x >= 0.001 else "<0.1%"


def _list(ids, most=SHARERS):
    """``"1, 4, 7"``, or the first ``most`` and ``"... (12 in all)"``."""
    head = ", ".join(str(i) for i in ids[:most])
    return head if len(ids) <= most else f"{head}, ... ({len(ids)} in all)"


def _object_namer(source):
    if source is None:
        return lambda o: f"object {int(o)}"
    return source.object_name


def _ranked(group, key, weight, groups, keys, top):
    """Per group, the ``top`` keys by summed weight: a list (one per group) of
    ``(key, sum)`` lists, largest first (ties: lower key). Zero sums are left out."""
    code = group.astype(np.int64) * keys + key
    if groups * keys <= max(4 * len(code), 1 << 20):
        sums = np.bincount(code, weights=weight, minlength=groups * keys)
        ids = np.flatnonzero(sums)
        sums = sums[ids]
    else:  # many lines and clusters: only the pairs that occur
        ids, inv = np.unique(code, return_inverse=True)
        sums = np.bincount(inv, weights=weight, minlength=len(ids))
    g, k = ids // keys, ids % keys
    o = np.lexsort((k, -sums, g))
    g, k, sums = g[o], k[o], sums[o]
    first = np.searchsorted(g, np.arange(groups + 1))
    return [list(zip(k[first[c]:min(first[c + 1], first[c] + top)].tolist(),
                     sums[first[c]:min(first[c + 1], first[c] + top)].tolist()))
            for c in range(groups)]


def _shares(ranked, names, total):
    return [{"name": names[k], "cycles": s, "share": s / total if total > 0 else 0.0}
            for k, s in ranked]


def _clusters(a, line_of, fn_of, line_names, fn_names, names, top):
    cl, inter = a.clustering, a.interactions
    p = a.p
    w = np.asarray(cl.weight, dtype=np.float64)
    lines = fns = [[] for _ in range(p)]
    if line_of is not None:
        lines = _ranked(cl.cluster, line_of, w, p, len(line_names), top)
        fns = _ranked(cl.cluster, fn_of, w, p, len(fn_names), top)
    acc = inter.access.tocsr()
    by_obj = inter.access.tocsc()
    sent, received = inter.comm, inter.comm.T
    both = sent + received
    out = []
    for c in range(p):
        lo, hi = acc.indptr[c], acc.indptr[c + 1]
        objs, cnt = acc.indices[lo:hi], acc.data[lo:hi]
        pick = np.lexsort((objs, -cnt))[:top]
        objects = []
        for o, t in zip(objs[pick].tolist(), cnt[pick].tolist()):
            holders = by_obj.indices[by_obj.indptr[o]:by_obj.indptr[o + 1]]
            others = np.sort(holders[holders != c])
            objects.append({"id": o, "name": names(o), "bytes": float(inter.object_bytes[o]),
                            "tasks": int(t), "clusters": int(len(holders)),
                            "shared_with": others[:SHARERS].tolist()})
        row = both[c].copy()
        row[c] = 0.0
        mates = [int(b) for b in np.lexsort((np.arange(p), -row))[:top] if row[b] > 0]
        total = float(inter.work[c])
        out.append({
            "id": c, "core": int(a.placement.core[c]), "work_cycles": total,
            "tasks": int(inter.tasks[c]),
            "lines": _shares(lines[c], line_names, total),
            "functions": _shares(fns[c], fn_names, total),
            "objects": objects, "objects_touched": int(hi - lo),
            "partners": [{"cluster": b, "sent_bytes": float(sent[c, b]),
                          "received_bytes": float(received[c, b]), "bytes": float(row[b])}
                         for b in mates],
        })
    return out


def _shared_objects(inter, names, top):
    by_obj = inter.access.tocsc()
    holders = np.diff(by_obj.indptr)
    tasks = np.asarray(by_obj.sum(axis=0)).ravel()
    ids = np.flatnonzero(holders > 0)
    pick = ids[np.lexsort((ids, -tasks[ids], -holders[ids]))[:top]]
    return [{"id": int(o), "name": names(o), "bytes": float(inter.object_bytes[o]),
             "tasks": int(tasks[o]),
             "clusters": np.sort(by_obj.indices[by_obj.indptr[o]:by_obj.indptr[o + 1]]).tolist()}
            for o in pick]


def _timeline(a, start, finish, core, bins):
    """The `Insight.timeline` figures and the occupancy of the cores holding clusters."""
    m, r = a.machine, a.result
    shown = np.unique(np.asarray(a.placement.core, dtype=np.int64))
    row = np.full(m.cores, -1, dtype=np.int64)
    row[shown] = np.arange(len(shown))
    bins = max(1, int(bins))
    width = r.makespan / bins if r.makespan > 0 else 1.0
    occ = _k.occupancy(start, finish, row[core], len(shown), width, bins)
    idle = 1.0 - float(r.busy[shown].sum()) / (len(shown) * r.makespan) \
        if r.makespan > 0 and len(shown) else 0.0
    return {"bins": bins, "bin_cycles": width, "cores": shown.tolist(),
            "idle_share": max(0.0, idle)}, occ


def _path_figures(a, path, d, length, line_of, fn_of, line_names, fn_names, names, top):
    cl = a.clustering
    one = np.zeros(len(path), dtype=np.int64)
    lines = fns = []
    if line_of is not None and len(path):
        lines = _shares(_ranked(one, line_of[path], d, 1, len(line_names), top)[0], line_names,
                        length)
        fns = _shares(_ranked(one, fn_of[path], d, 1, len(fn_names), top)[0], fn_names, length)
    c = np.asarray(cl.cluster)[path].astype(np.int64)
    per = np.bincount(c, weights=d, minlength=a.p) if len(path) else np.zeros(a.p)
    held = np.flatnonzero(per)
    held = held[np.lexsort((held, -per[held]))][:top]
    return {"cycles": length, "tasks": int(len(path)),
            "share_of_makespan": length / a.result.makespan if a.result.makespan > 0 else 0.0,
            "lines": lines, "functions": fns,
            "clusters": [{"cluster": int(k), "cycles": float(per[k]),
                          "share": float(per[k] / length) if length > 0 else 0.0} for k in held],
            "handoffs": _handoffs(cl, path, c, line_of, line_names, names, top)}


def _handoffs(cl, path, c, line_of, line_names, names, top):
    """The pairs of clusters the path passes a value between, most often first,
    with the object and line most often at the receiving task."""
    if len(path) < 2:
        return []
    at = np.flatnonzero(c[1:] != c[:-1]) + 1
    if len(at) == 0:
        return []
    lo, hi = np.minimum(c[at - 1], c[at]), np.maximum(c[at - 1], c[at])
    pairs, inv, count = np.unique(lo * cl.p + hi, return_inverse=True, return_counts=True)
    out = []
    for i in np.lexsort((pairs, -count))[:top]:
        tasks = path[at[inv == i]]
        obj = np.asarray(cl.obj)[tasks]
        obj = obj[obj >= 0]
        o = _mode(obj)
        ln = _mode(line_of[tasks]) if line_of is not None else None
        out.append({"clusters": [int(pairs[i] // cl.p), int(pairs[i] % cl.p)],
                    "count": int(count[i]), "object": names(o) if o is not None else None,
                    "line": line_names[ln] if ln is not None else None})
    return out


def _mode(x):
    """The most frequent value of ``x`` (the smallest of equals), None when empty."""
    if len(x) == 0:
        return None
    v, n = np.unique(x, return_counts=True)
    return int(v[np.argmax(n)])
