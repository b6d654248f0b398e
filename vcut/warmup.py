"""Compile every cached kernel once, ahead of the first real command (``vcut compile``).

vcut's kernels are cached on disk (`vcut_base.jitcache`): numba compiles each
signature on its first call and keeps the machine code on disk, so the first command
after an install spends 20-70 s compiling. `warm_up` runs a fixed list of tiny,
deterministic workloads (`workloads`) that reach every kernel with the signatures the
commands hit: every graph format read, every vertex cut of the registry `vcut.cuts`,
the multilevel edge cut and its refiners, BFS / SSSP with every strategy, the MST,
statistics, the scheduler's job kinds on simulated devices, and trace, graph, analyze
and compare of the smallest sample program.

Each workload is a command line of ``vcut`` and `warm_up` is handed the function that
runs one (`vcut.cli.main`, which no library module imports): the commands' own paths
from the file to the kernels, so the dtypes of every array are the ones users meet.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from runtime.multilevel import SCHEMES
from runtime.multilevel.refinement import REFINERS
from runtime.traversal import BFS_STRATEGIES, SSSP_STRATEGIES
from vcut_base.errors import InputError, VcutError

from .cuts import CUTS

__all__ = ["GROUPS", "GROUP_SECONDS", "WarmUp", "Workload", "WorkloadFailed", "split",
           "warm_up", "workloads", "write_inputs"]

#: The sample program traced by the ``programs`` group (the smallest; traced in < 1 s).
SAMPLE = "mandel.c"


@dataclass(frozen=True)
class Workload:
    """One command line of `workloads`: ``{d}`` in ``argv`` is the scratch directory,
    ``{samples}`` the sample programs' directory."""

    group: str
    name: str
    argv: tuple


def _partitions():
    out = [Workload("partition", f"partition {a}",
                    ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", a, "-o", "{d}/p.part"))
           for a in CUTS]
    out += [
        Workload("partition", "partition wb-libra (weighted)",
                 ("partition", "{d}/g.edgelist", "-p", "4", "--algo", "wb-libra", "-o",
                  "{d}/w.part")),
        Workload("partition", "partition hdrf --refine",
                 ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", "hdrf", "--refine", "-o",
                  "{d}/r.part")),
        Workload("partition", "partition spac --backend multilevel",
                 ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", "spac", "--backend",
                  "multilevel", "-o", "{d}/s.part")),
        Workload("partition", "partition best --preset strong",
                 ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", "best", "--preset",
                  "strong", "-o", "{d}/q.part")),
        Workload("partition", "partition wb-libra --batch 8",
                 ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", "wb-libra", "--batch", "8",
                  "-o", "{d}/b.part")),
    ]
    for refiner in REFINERS:
        out.append(Workload("multilevel", f"multilevel --refiner {refiner}",
                            ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", "multilevel",
                             "--refiner", refiner, "-o", "{d}/m.part")))
    for scheme in SCHEMES[1:]:  # the first, k-way, is the refiners' runs above
        out.append(Workload("multilevel", f"multilevel --scheme {scheme}",
                            ("partition", "{d}/g.txt.gz", "-p", "4", "--algo", "multilevel",
                             "--scheme", scheme, "-o", "{d}/m.part")))
    return out


_FORMATS = [Workload("formats", f"stats {f}", ("stats", "{d}/" + f))
            for f in ("g.txt.gz", "g.edgelist", "g.graph", "g.mtx", "g.lg")]
_TRAVERSALS = (
    [Workload("traversal", f"bfs {s}", ("bfs", "{d}/g.edgelist", "--source", "0", "--strategy", s))
     for s in BFS_STRATEGIES]
    + [Workload("traversal", f"sssp {s}",
                ("sssp", "{d}/g.edgelist", "--source", "0", "--strategy", s))
       for s in SSSP_STRATEGIES]
    + [Workload("traversal", "mst", ("mst", "{d}/g.edgelist"))])
_SIM = "sim:cpu,sim:gpu,sim:gpu:speed=2"
_SCHEDULES = [
    Workload("schedule", "schedule string-search",
             ("schedule", "--job", "string-search", "--size", "65536", "--units", "8",
              "--rounds", "2", "--policy", "all", "--devices", _SIM)),
    Workload("schedule", "schedule matmul",
             ("schedule", "--job", "matmul", "--size", "32", "--units", "4", "--rounds", "2",
              "--policy", "all", "--devices", _SIM)),
    Workload("schedule", "schedule bfs-batch",
             ("schedule", "--job", "bfs-batch", "--size", "8", "--units", "8", "--rounds", "2",
              "--policy", "all", "--devices", _SIM)),
    Workload("schedule", "schedule partition-batch",
             ("schedule", "--job", "partition-batch", "--size", "4", "--units", "4",
              "--rounds", "2", "--policy", "all", "--devices", _SIM)),
]
_PROGRAM = ("{samples}/" + SAMPLE,)
_PROGRAMS = [
    Workload("programs", "trace", ("trace", *_PROGRAM, "-o", "{d}/t.npz", "--json")),
    Workload("programs", "graph", ("graph", *_PROGRAM, "-o", "{d}/g.npz")),
    Workload("programs", "stats .npz", ("stats", "{d}/g.npz")),
    Workload("programs", "graph --control cd", ("graph", *_PROGRAM, "-o", "{d}/c.npz",
                                                "--control", "cd")),
    Workload("programs", "analyze", ("analyze", *_PROGRAM, "-p", "8", "--machine", "mesh:4x4",
                                     "-o", "{d}/analysis")),
    Workload("programs", "compare", ("compare", *_PROGRAM, "-p", "4")),
]

#: The groups, in the order they run (``vcut compile --only GROUP,...``).
GROUPS = ("formats", "partition", "multilevel", "traversal", "schedule", "programs")

#: Seconds each group took in a cold ``vcut compile --progress lines`` on the 2-core
#: development host (2026-12-04): how `split` shares the groups among processes.
GROUP_SECONDS = {"formats": 14, "partition": 69, "multilevel": 12, "traversal": 37,
                 "schedule": 4, "programs": 65}


def split(groups, jobs):
    """``groups`` shared among at most ``jobs`` processes: the longest (`GROUP_SECONDS`)
    first, each onto the share with the least time so far (ties: the earlier share); each
    share in `GROUPS` order, no share empty, the first share the longest."""
    shares = [[] for _ in range(max(1, min(jobs, len(groups))))]
    load = [0] * len(shares)
    for g in sorted(groups, key=lambda g: (-GROUP_SECONDS[g], GROUPS.index(g))):
        i = load.index(min(load))
        shares[i].append(g)
        load[i] += GROUP_SECONDS[g]
    order = sorted(range(len(shares)), key=lambda i: -load[i])
    return [sorted(shares[i], key=GROUPS.index) for i in order]


def workloads(only=None):
    """The workloads of the groups ``only`` (None: all), in `GROUPS` order."""
    unknown = sorted(set(only or ()) - set(GROUPS))
    if unknown:
        raise InputError(f"unknown workload group {', '.join(unknown)}; use "
                         f"{', '.join(GROUPS)}")
    every = _FORMATS + _partitions() + _TRAVERSALS + _SCHEDULES + _PROGRAMS
    return [w for g in GROUPS if only is None or g in only for w in every if w.group == g]


class WorkloadFailed(VcutError):
    """One workload of `warm_up` failed: its name and the command's last error line."""


@dataclass
class WarmUp:
    """What `warm_up` did: workloads run, kernel signatures compiled and loaded from
    numba's cache, seconds in all."""

    workloads: int
    compiled: int
    loaded: int
    seconds: float
    cache_dir: str

    def to_dict(self):
        return {"workloads": self.workloads, "kernels_compiled": self.compiled,
                "kernels_loaded": self.loaded, "seconds": round(self.seconds, 2),
                "cache_dir": self.cache_dir}


def _graph_edges(n=96, extra=160, seed=12345):
    """A connected, deterministic graph: a ring with chords from a linear congruential
    generator; ``(u, v, w)`` triples, each pair once."""
    edges, seen, x = [], set(), seed
    for u in range(n):
        edges.append((u, (u + 1) % n))
    while len(edges) < n + extra:
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        u, v = (x >> 33) % n, (x >> 13) % n
        if u != v and (u, v) not in seen and (v, u) not in seen:
            edges.append((u, v))
    out = []
    for k, (u, v) in enumerate(edges):
        if (u, v) in seen or (v, u) in seen:
            continue
        seen.add((u, v))
        out.append((u, v, 1 + k % 7))
    return n, out


def write_inputs(directory):
    """The small graph in every text format of `ir_graph.formats`, into ``directory``."""
    n, edges = _graph_edges()
    d = directory
    # as SNAP's email-Enron.txt.gz: each edge both ways (merged into one when read)
    body = "".join(f"{u}\t{v}\n{v}\t{u}\n" for u, v, _ in edges)
    with gzip.open(os.path.join(d, "g.txt.gz"), "wt") as f:
        f.write(f"# a graph of vcut compile\n# Nodes: {n} Edges: {2 * len(edges)}\n"
                f"# FromNodeId\tToNodeId\n{body}")
    with open(os.path.join(d, "g.edgelist"), "w") as f:  # a repeated edge too
        f.writelines(f"{u} {v} {w}\n" for u, v, w in [*edges, edges[0]])
    adj = [[] for _ in range(n)]
    for u, v, _ in edges:
        adj[u].append(v + 1)
        adj[v].append(u + 1)
    with open(os.path.join(d, "g.graph"), "w") as f:
        f.write(f"{n} {len(edges)}\n")
        f.writelines(" ".join(map(str, a)) + "\n" for a in adj)
    with open(os.path.join(d, "g.mtx"), "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real general\n{n} {n} {len(edges) + 1}\n")
        back = (edges[1][1], edges[1][0], 9)  # an arc both ways (the file is directed)
        f.writelines(f"{u + 1} {v + 1} {w}.5\n" for u, v, w in [*edges, back])
    with open(os.path.join(d, "g.lg"), "w") as f:
        f.write(f"{n},{len(edges)},u,graph,1,Int64,simplegraph\n")
        f.writelines(f"{u + 1},{v + 1}\n" for u, v, _ in edges)


def cache_dir():
    """Where numba keeps the compiled kernels: ``NUMBA_CACHE_DIR``, else the
    ``__pycache__`` beside each kernel module."""
    return os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside each kernel module"


def _samples():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, "samples")


def _start(share):
    """A ``python -m vcut compile`` of the groups ``share`` with this vcut
    (`vcut_base.ahead.tree_env`), its JSON on a pipe."""
    from vcut_base.ahead import tree_env

    argv = [sys.executable, "-P", "-m", "vcut", "compile", "--only", ",".join(share),
            "--jobs", "1", "--json", "--progress", "none"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=tree_env())


def _finish(proc, share):
    """What the process of ``share`` did, as a dict of `WarmUp.to_dict`; `WorkloadFailed`
    with its error line if it failed."""
    out, err = proc.communicate()
    if proc.returncode != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit {proc.returncode}, no message"
        raise WorkloadFailed(f"the process compiling {','.join(share)} failed: "
                             f"{last.removeprefix('error: ')}")
    return json.loads(out)


def warm_up(run, only=None, step=None, jobs=1):
    """Run the workloads of the groups ``only`` (None: all) through ``run(argv)``, in a
    scratch directory. ``run`` runs one command line (`vcut.cli.main`) and returns
    ``(exit status, its last error line)``.

    With ``jobs`` > 1 the groups are shared among that many processes at most (`split`):
    this one runs the first share, each other share is a ``python -m vcut compile --only``
    of its own, started first and waited for last (numba's cache takes their kernels side
    by side: `vcut_base.jitcache` locks its index).

    ``step(k, total, workload, seconds)`` is called before each workload of this process
    (``seconds`` None) and after it, and once after each other process ends (a `Workload`
    naming its groups; ``k`` counts its workloads done). A workload that fails (an exit
    status other than 0, or an exception) raises `WorkloadFailed`, one line naming it.
    Returns a `WarmUp`, the counts summed over the processes."""
    t0 = time.perf_counter()
    total = len(workloads(only))  # (checks the group names)
    shares = split(list(GROUPS) if only is None else list(dict.fromkeys(only)), jobs)
    others = [(share, _start(share)) for share in shares[1:]]
    try:
        done = _warm(run, shares[0], step, total)
        for share, proc in others:
            got = _finish(proc, share)
            done.workloads += got["workloads"]
            done.compiled += got["kernels_compiled"]
            done.loaded += got["kernels_loaded"]
            if step is not None:
                w = Workload(",".join(share), f"{','.join(share)} (another process)", ())
                step(done.workloads, total, w, got["seconds"])
    finally:
        for _, proc in others:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
    done.seconds = time.perf_counter() - t0
    return done


def _warm(run, only, step, total):
    """`warm_up` of the groups ``only`` in this process (``total`` for ``step``)."""
    from vcut_base.jitcache import kernel_counts  # lazy: numba (vcut compile --help)

    chosen = workloads(only)
    compiled0, _ = kernel_counts()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vcut-compile-") as d:
        write_inputs(d)
        fill = {"d": d, "samples": _samples()}
        for k, w in enumerate(chosen):
            if step is not None:
                step(k, total, w, None)
            t = time.perf_counter()
            argv = [a.format(**fill) for a in w.argv]
            try:
                code, error = run(argv)
            except Exception as exc:  # a bug's traceback, as one line naming the workload
                raise WorkloadFailed(f"workload {w.name!r} failed ({type(exc).__name__}: "
                                     f"{str(exc).splitlines()[0] if str(exc) else ''}): "
                                     f"vcut {' '.join(argv)}") from exc
            if code != 0:
                raise WorkloadFailed(f"workload {w.name!r} failed (exit {code}: "
                                     f"{error or 'no message'}): vcut {' '.join(argv)}")
            if step is not None:
                step(k + 1, total, w, time.perf_counter() - t)
    compiled, loaded = kernel_counts()
    return WarmUp(len(chosen), compiled - compiled0, loaded, time.perf_counter() - t0,
                  cache_dir())
