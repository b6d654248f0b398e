"""A batch of vertex cuts: one edge partition per (graph, k), the scheduler's
``partition-batch`` job kind (registered with `runtime.scheduler.jobs` on import).

Sub-load u is one (graph, k) pair, run by vcut's CPU partitioner; its result is
the cluster of every edge. There is no GPU implementation: a sub-load is vcut's
sequential edge stream, which runs on the CPU (the GPU runs the greedy family's
batched stream, another assignment, and a job's result must not depend on the
device), so GPU devices are left out of this job and the command says so.
Sub-loads are equal when the graphs are (the generator makes RMAT graphs of one
scale).
"""

import numpy as np

from vcut_base.errors import InputError
from runtime.generators import rmat
from runtime.scheduler.jobs import Job, register_job

from .partition import partition_graph

__all__ = ["PartitionBatch"]


class PartitionBatch(Job):
    kind = "partition-batch"
    gpu_capable = False
    no_gpu_because = "its sub-loads are vcut's sequential stream, which runs on the CPU"
    #: edges a second: wb-libra on RMAT-12 graphs, one core (measured:
    #: bench/bench_schedule.py --rates)
    sim_rates = {"cpu": 1e7}

    def __init__(self, graphs, ks, algo="wb-libra", seed=0):
        graphs, ks = list(graphs), [int(k) for k in ks]
        if not graphs or not ks:
            raise ValueError("partition batch: give at least one graph and one k")
        if min(ks) < 2:
            raise ValueError(f"partition batch: k = {min(ks)}; use k >= 2")
        self.graphs, self.ks, self.algo, self.seed = graphs, ks, algo, seed
        self.pairs = [(g, k) for g in range(len(graphs)) for k in ks]
        self.n_units = len(self.pairs)

    @classmethod
    def generate(cls, n_graphs=8, scale=12, ks=(8,), seed=0, algo="wb-libra"):
        n_graphs = int(n_graphs)
        if n_graphs < 1:
            raise InputError(f"--size {n_graphs}: partition-batch needs at least one graph")
        return cls([rmat(scale, 8, seed=seed + i) for i in range(n_graphs)], ks, algo, seed)

    def _one(self, u):
        g, k = self.pairs[u]
        return partition_graph(self.graphs[g], k, self.algo, seed=self.seed).assignment

    def unit_work(self):
        return float(np.mean([len(g.src) for g in self.graphs]))

    def unit_bytes(self):
        return int(16 * self.unit_work())

    def run_cpu(self, units):
        return [self._one(u) for u in units.tolist()]

    def run_gpu(self, units, gpu):
        raise NotImplementedError(f"partition-batch has no GPU implementation: "
                                  f"{self.no_gpu_because}")

    def combine(self, results):
        return [results[u] for u in range(self.n_units)]

    def reference(self):
        return [partition_graph(self.graphs[g], k, self.algo, seed=self.seed).assignment
                for g, k in self.pairs]

    def describe(self):
        return {"kind": self.kind, "units": self.n_units, "graphs": len(self.graphs),
                "ks": self.ks, "algo": self.algo}


def _build(size, units, given, seed, **kw):
    kw.setdefault("ks", (8,))
    if given and units != size * len(kw["ks"]):
        raise InputError(f"--units {units}: a partition batch has one sub-load per graph "
                         f"and k, here {size * len(kw['ks'])}; set --size (graphs) instead")
    return PartitionBatch.generate(size, seed=seed, **kw)


#: size: the number of RMAT graphs (of scale 12, with their cuts: about 4 MiB each)
register_job("partition-batch", PartitionBatch, size=16, units=16, limits=(1, 4096),
             peak_bytes=lambda size, units: size * (4 << 20), build=_build)
