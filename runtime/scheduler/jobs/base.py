"""The job interface the scheduler drives.

A job is a divisible load: ``n_units`` equal, independent sub-loads numbered
``0 .. n_units - 1`` (the source's partitioner plug-in splits each round's load
into such sub-loads; here the job's constructor fixes the split). A device runs
a *call*: an int64 array of unit ids, in one go. On a GPU one call is one
bundle: one host-to-device transfer of all its units' inputs, one kernel
launch over all of them, one copy back (the load bundler of Chapter 3).

Every job has two implementations of a call (``run_cpu`` and ``run_gpu``) and
one plain reference for the whole job (``reference``, an independent code
path: numpy / scipy / the CPU library), so tests can check that every device
and policy gives the reference's result.
"""

import numpy as np

__all__ = ["Job"]


class Job:
    """Base class. Subclasses set ``kind`` and ``n_units`` and implement the methods."""

    #: the CLI name of the job kind
    kind = "job"
    #: total sub-loads of the job (over all rounds)
    n_units = 0
    #: False when the job has no GPU implementation (GPU devices then get none of it)
    gpu_capable = True
    #: Why a job that is not ``gpu_capable`` has no GPU implementation ("": not said),
    #: for the line that tells which devices were left out
    no_gpu_because = ""

    def unit_work(self):
        """Abstract work of one sub-load (bytes scanned, flops, edges ...): the size
        unit of the profiling rates S_d = size / makespan_d and of simulated devices."""
        raise NotImplementedError

    def unit_bytes(self):
        """Bytes a GPU call moves host -> device per sub-load (inputs of the unit)."""
        raise NotImplementedError

    #: Work units a second the job's own code does on the machine the default simulated
    #: devices model: ``{"cpu": ..., "gpu": ...}`` (None: a generic speed; docs/runtime.md,
    #: "The default simulated devices", gives each job's figures and their source)
    sim_rates = None

    def unit_threads(self):
        """GPU threads one sub-load occupies in the job's kernel (None: not said): a
        simulated GPU is full from the sub-loads that reach its ``threads``."""
        return None

    def setup_bytes(self):
        """Bytes moved once per GPU before its first call (data every unit shares:
        the matrix B, the graph, the pattern)."""
        return 0

    def run_cpu(self, units):
        """Run the sub-loads ``units`` on the CPU; return a list of per-unit results
        in the order of ``units``."""
        raise NotImplementedError

    def run_gpu(self, units, gpu):
        """Run the sub-loads ``units`` as one bundle on the GPU ``gpu`` (a
        `runtime.scheduler.devices.CudaDevice`: ``gpu.cuda`` is numba.cuda,
        ``gpu.stream`` its stream, ``gpu.cache`` a dict for data kept on the
        device between calls, e.g. by `setup_bytes`). One transfer, one launch.
        Return a list of per-unit results in the order of ``units``."""
        raise NotImplementedError

    def combine(self, results):
        """The job's result from ``results``: a dict unit id -> per-unit result
        holding every unit exactly once."""
        raise NotImplementedError

    def reference(self):
        """The job's result computed by a plain CPU code path, for checking."""
        raise NotImplementedError

    def same(self, a, b):
        """True when two job results are equal (exactly: every job is built so that
        its arithmetic is exact)."""
        return _equal(a, b)

    def describe(self):
        """JSON-able parameters of the job, for reports."""
        return {"kind": self.kind, "units": int(self.n_units)}


def _equal(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.array_equal(a, b))
    return a == b
