"""The lower bound of a simulated schedule: no mapping of the tasks runs faster.

For the tasks of a `Clustering` (a DAG: task ``(u, v)`` needs the value of
``u``, which is final once every task into ``u`` has finished) on a machine
with P cores, no schedule of the cost model (`mapping.simulate`) beats

    LB = max(CP, W / P'),    P' = min(P, clusters)

with every task at its shortest possible duration ``d``: its cycles at the
fastest core's speed, with the most favourable memory latency (a remote node
never costs less than the local one on the machines vcut builds, so ``d`` is
then ``w / speed_max``), and messages free:

* W, the work: the sum of ``d`` over all tasks, i.e. one fastest core's time;
* CP, the critical path: the longest chain of ``d`` through the dependencies,
  one pass over the tasks in execution order (`ir_graph.edge_lists.execution_order`).

Clusters, not tasks, are what a core runs, so at most P' cores are ever busy.
``makespan / LB`` says how far a schedule is from ideal (1 is optimal) and
``W / makespan`` is its speed-up over one core.
"""

from dataclasses import dataclass

import numpy as np

from vcut_base.jitcache import njit

from .machine import MEMORY_CYCLES

__all__ = ["Bound", "lower_bound", "memory_delta"]


@dataclass(frozen=True)
class Bound:
    """`lower_bound`'s figures (cycles)."""

    work: float
    critical_path: float
    cores: int
    lower_bound: float

    def text(self, makespan):
        """One line: the bound, what sets it, and the schedule of ``makespan`` against it."""
        f = self.figures(makespan)
        return (f"{self.lower_bound:,.0f} cycles (critical path {self.critical_path:,.0f}, work "
                f"{self.work:,.0f} / {self.cores} cores {self.work / max(self.cores, 1):,.0f}); "
                f"makespan / bound {f['makespan_over_bound']:.2f}, speed-up over one core "
                f"{f['speedup']:.2f}")

    def figures(self, makespan):
        """The JSON-able figures of a schedule of ``makespan`` cycles against the bound."""
        return {"lower_bound": self.lower_bound, "critical_path": self.critical_path,
                "work": self.work, "cores_usable": self.cores,
                "makespan_over_bound": makespan / self.lower_bound if self.lower_bound > 0
                else 1.0,
                "speedup": self.work / makespan if makespan > 0 else 1.0}


@njit(cache=True, nogil=True)
def _chain(order, src, dst, weight, obj, n, delta, mem_cycles, speed):
    """(critical path, work): tasks read in execution order (``order``; empty: as
    they are), each at its shortest duration."""
    ready = np.zeros(n)
    cp = 0.0
    work = 0.0
    for k in range(len(src)):
        e = k if len(order) == 0 else order[k]
        w = weight[e]
        if obj[e] >= 0 and delta < 0.0:
            w = w + min(1.0, weight[e] / mem_cycles) * delta
        d = w / speed
        work += d
        f = ready[src[e]] + d
        if f > ready[dst[e]]:
            ready[dst[e]] = f
        if f > cp:
            cp = f
    return cp, work


def memory_delta(machine):
    """The most favourable memory latency's difference from the local one
    (cycles, <= 0): what a memory task gains at best on ``machine``."""
    lat = np.asarray(machine.numa_latency, dtype=np.float64)
    return float(min(0.0, (lat - np.diag(lat)[:, None]).min())) if lat.size else 0.0


def lower_bound(cl, machine):
    """The `Bound` of `Clustering` ``cl`` on ``machine`` (see the module docstring)."""
    delta = memory_delta(machine)
    speed = float(np.max(machine.core_speed))
    order = cl.order
    order = np.empty(0, dtype=np.int32) if order is None else order
    cp, work = _chain(order, cl.src, cl.dst, np.asarray(cl.weight, dtype=np.float64), cl.obj,
                      int(cl.n), delta, float(MEMORY_CYCLES), speed)
    cores = int(min(machine.cores, cl.p))
    return Bound(work=float(work), critical_path=float(cp), cores=cores,
                 lower_bound=float(max(cp, work / cores)) if cores else float(cp))
