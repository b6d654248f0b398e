"""Dask workers as scheduling devices: HASS and its baselines over a cluster.

`worker_devices(client)` turns the workers of a Dask cluster (`runtime.dask_cluster`)
into devices of the scheduler:

- one GPU device per unit of a worker's ``GPU`` resource (``dask worker ADDRESS
  --resources GPU=1``; dask-cuda's one worker per GPU), named
  ``dask:NAME:gpu:I``: its calls run the job's GPU implementation on that
  worker's CUDA device I, one bundle per call, as a local `CudaDevice` does;
- one CPU device per worker with a thread beyond its GPUs, ``dask:NAME:cpu``:
  its calls run the job's CPU implementation there.

The policies see them as they see local devices: HASS profiles them, splits each
round by their ratios, bundles the GPUs' shares, lets idle GPUs steal from the
CPU buffer (which every CPU device empties; a worker's CPU in guided
self-scheduling chunks, as its calls pay a round trip), and adapts. A call is a task pinned
to its worker; the job itself crosses to each worker once, before the worker's
first call (``client.scatter``), so a call ships only its sub-load ids. The
clock is the driver's wall clock: a call's time includes its round trip.

A worker that leaves the cluster while it holds a call (a crash, a kill, a lost
network) faults the call with `DeviceFault` within `POLL` seconds: the policy
retires the device and runs the call's sub-loads on the devices left, so
nothing is lost. An exception raised by the job on the worker faults the call
the same way.
"""

import threading
import time

from vcut_base.errors import InputError

from .devices import CudaDevice, Device, DeviceFault

__all__ = ["WorkerDevice", "worker_devices", "POLL"]

#: Seconds between the checks that a worker holding a call is still in the cluster.
POLL = 0.25

# in a worker process: GPU index -> the CudaDevice its calls run on
_GPUS = {}


def _gpu_device(gpu):
    """On the worker: the `CudaDevice` of CUDA index ``gpu``, made on first use."""
    if gpu not in _GPUS:
        _GPUS[gpu] = CudaDevice(gpu)
    return _GPUS[gpu]


def _run_call(job, units, gpu):
    """On the worker: run one call of ``job``; ``gpu`` is None (CPU) or a CUDA index."""
    if gpu is None:
        return job.run_cpu(units)
    return _gpu_device(gpu).execute(job, units)[0]


def _gpu_memory(gpu):
    """On the worker: the free bytes of CUDA device ``gpu``."""
    return _gpu_device(gpu).memory()


class _Worker:
    """What the devices of one worker share: its address and the job scattered to it."""

    def __init__(self, client, address, name):
        self.client = client
        self.address = address
        self.name = name
        self._lock = threading.Lock()
        self._job = None        # (job, future of it on the worker)

    def job_data(self, job):
        with self._lock:
            if self._job is None or self._job[0] is not job:
                future = self.client.scatter(job, workers=[self.address], hash=False)
                self._job = (job, future)
            return self._job[1]

    def present(self):
        return self.address in self.client.nthreads()

    def _left(self):
        return DeviceFault(f"worker {self.name} ({self.address}) left the cluster during a call")

    def call(self, fn, *args, resources=None):
        """Run ``fn(*args)`` on this worker and return its value; `DeviceFault` when
        the worker leaves the cluster first or the call raises."""
        future = self.client.submit(fn, *args, workers=[self.address], allow_other_workers=False,
                                    pure=False, resources=resources)
        try:
            while True:
                try:
                    return future.result(timeout=POLL)
                except TimeoutError:
                    if not self.present():
                        raise self._left() from None
        except DeviceFault:
            raise
        except Exception as exc:  # the job raised, or the worker's death cancelled the call
            if not self.present():
                raise self._left() from None
            raise DeviceFault(f"on worker {self.name}: {type(exc).__name__}: {exc}") from exc
        finally:
            future.cancel()


class WorkerDevice(Device):
    """A CPU or one GPU of a Dask worker (see the module)."""

    remote = True

    def __init__(self, worker, gpu=None):
        where = f"dask:{worker.name}"
        super().__init__(f"{where}:cpu" if gpu is None else f"{where}:gpu:{gpu}")
        self.kind = "cpu" if gpu is None else "gpu"
        self.worker = worker
        self.gpu = gpu
        self._memory = None

    def memory(self):
        if self.gpu is None:
            return None
        if self._memory is None:
            self._memory = self.worker.call(_gpu_memory, self.gpu, resources={"GPU": 1})
        return self._memory

    def execute(self, job, units):
        self.calls += 1
        if self.kind == "gpu":
            self.transfers += 1
            self.launches += 1
        data = self.worker.job_data(job)
        t0 = time.perf_counter()
        results = self.worker.call(_run_call, data, units, self.gpu,
                                   resources=None if self.gpu is None else {"GPU": 1})
        return results, time.perf_counter() - t0

    def describe(self, job=None):
        d = super().describe(job)
        d.update(worker=self.worker.address)
        return d


def worker_devices(client):
    """The devices of every worker of ``client``'s cluster, ordered by worker name."""
    info = client.scheduler_info()["workers"]
    if not info:
        raise InputError("the Dask cluster has no workers; start some with 'dask worker "
                         "ADDRESS', or use a local cluster (--workers N)")
    devices = []
    for address, w in sorted(info.items(), key=lambda kv: str(kv[1].get("name", kv[0]))):
        worker = _Worker(client, address, w.get("name", address))
        gpus = int(w.get("resources", {}).get("GPU", 0))
        if w.get("nthreads", 1) > gpus:
            devices.append(WorkerDevice(worker))
        devices.extend(WorkerDevice(worker, i) for i in range(gpus))
    return devices
