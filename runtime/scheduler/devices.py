"""The devices a schedule runs on: the CPU, CUDA GPUs, and simulated devices.

A device runs one *call* at a time: an array of sub-load ids of one job. The
CPU runs its calls with the job's CPU implementation (numba / BLAS, all
cores); a GPU runs a call as one bundle (one transfer, one launch; see
`runtime.scheduler.bundler`). A simulated device computes the call's results
with the job's CPU implementation, so that they can be checked, but charges
the time of its model instead of the time it took:

- a simulated CPU: ``overhead`` seconds per sub-load + work / rate;
- a simulated GPU: ``latency`` (message start-up) + bytes / ``bandwidth`` +
  ``launch`` (kernel start-up) + max(work, ``saturation``) / rate. A call with
  less than ``saturation`` work leaves cores idle and costs as much as one
  with ``saturation`` work (the under-utilisation the source's bundler
  exists for). The job's setup bytes cross once, before the device's first call;
  ``memory`` bytes bound what one call may hold.

``rate`` = ``speed`` x 1e9 work units per second. Left unset, the rate is what the
job's own code does on the machine the defaults model (`Job.sim_rates`: a CPU core
of the H200 host, the H200; docs/runtime.md, "The default simulated devices"), and
a GPU's ``saturation`` is the work of the sub-loads that give ``threads`` GPU
threads (`Job.unit_threads`: 33,792 = one block of 256 on each of the H200's 132
SMs). ``fail=N`` makes the N-th call (counting from 1) raise `DeviceFault`, for
fault-injection tests and studies.

Spec strings (``--devices``): ``cpu``, ``gpu:0`` (CUDA device 0),
``sim:cpu`` / ``sim:gpu`` followed by ``:key=value`` parameters, e.g.
``sim:gpu:speed=5:launch=2e-4:bandwidth=12e9``, and ``dask``: the CPU and GPUs
of every worker of a Dask cluster (`runtime.scheduler.workers`).
"""

import math
import sys
import threading
import time
from dataclasses import dataclass

from vcut_base.errors import InputError
from runtime import gpu as runtime_gpu

__all__ = ["Device", "CpuDevice", "CudaDevice", "SimDevice", "DeviceFault",
           "BASE_RATE", "MAX_WALL_CALL", "MAX_MODELLED"]

#: work units per second of a simulated device of speed 1
BASE_RATE = 1e9

#: Longest modelled call (seconds) of a simulated device in a run with real devices, where
#: the wall clock waits modelled time out (an hour: a longer wait is a typo, not a study).
MAX_WALL_CALL = 3600.0
#: Longest modelled time (seconds) of a whole job on a simulated device: past it sums of
#: call times, the ideal split's search and the report's figures lose their meaning.
MAX_MODELLED = 1e300
#: The parameters that may be infinite (their defaults are: no limit).
_UNBOUNDED = ("bandwidth", "memory")

#: The default simulated devices: the H200 host the scheduler was measured on (its CPU
#: running the jobs' code a call at a time, an NVIDIA H200 on PCIe 5 through numba.cuda);
#: docs/runtime.md, "The default simulated devices", gives each figure's source. None:
#: from the job (``speed``: `Job.sim_rates`; ``saturation``: `Job.unit_threads`).
SIM_DEFAULTS = {
    "cpu": dict(speed=None, overhead=2e-6, latency=0.0, bandwidth=math.inf, launch=0.0,
                saturation=0.0, threads=0.0, memory=math.inf),
    "gpu": dict(speed=None, overhead=0.0, latency=1e-5, bandwidth=25e9, launch=3e-5,
                saturation=None, threads=33792.0, memory=141e9),
}
#: Speed of a simulated device on a job that states no `Job.sim_rates` (x 1e9 work / s).
GENERIC_SPEED = {"cpu": 1.0, "gpu": 4.0}


class DeviceFault(RuntimeError):
    """A device failed while running a call (injected, or raised by the device)."""


class Device:
    """Common interface. ``execute(job, units)`` runs one call and returns
    ``(results, seconds)``: the per-unit results in the order of ``units`` and
    the call's duration (measured, or modelled for a simulated device)."""

    kind = "cpu"          # "cpu" or "gpu": the role the device plays in the policies
    simulated = False
    remote = False        # a call costs a network round trip (a Dask worker's device)
    last_setup = 0.0      # seconds of the last call that were the job's one-off setup transfer
                          # (simulated devices; a real device's goes in its warm-up call)

    def __init__(self, name):
        self.name = name
        self.calls = 0
        self.transfers = 0   # host -> device transfers (GPU calls)
        self.launches = 0    # kernel launches (GPU calls)

    def can_run(self, job):
        return (self.kind == "cpu" or job.gpu_capable) and self.capacity(job) >= 1

    def saturation_units(self, job):
        """Sub-loads of ``job`` that fill the device (None: unknown)."""
        return None

    def memory(self):
        """Bytes a call may occupy on the device (None: the job's data is in host memory)."""
        return None

    def capacity(self, job):
        """Most sub-loads of ``job`` one call can hold in the device's memory."""
        mem = self.memory()
        if mem is None:
            return sys.maxsize
        room = mem - job.setup_bytes()
        if room < job.unit_bytes():
            return 0
        return sys.maxsize if job.unit_bytes() == 0 else int(room // job.unit_bytes())

    def execute(self, job, units):
        raise NotImplementedError

    def describe(self, job=None):
        """JSON-able facts of the device (``job``: as it runs that job)."""
        return {"name": self.name, "kind": self.kind, "simulated": self.simulated}

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


class CpuDevice(Device):
    """The host CPU: the job's CPU implementation, timed with a wall clock."""

    def __init__(self, name="cpu"):
        super().__init__(name)

    def execute(self, job, units):
        self.calls += 1
        t0 = time.perf_counter()
        results = job.run_cpu(units)
        return results, time.perf_counter() - t0


class CudaDevice(Device):
    """One CUDA GPU through numba.cuda, with its own stream and a cache of the data
    a job keeps on the device between calls."""

    kind = "gpu"

    def __init__(self, index=0):
        super().__init__(f"gpu:{index}")
        # not require_gpu's words: those are --device's (vcut partition ...)
        if not runtime_gpu._device_present():
            raise InputError(f"--devices gpu:{index}: no CUDA GPU is available here (numba.cuda "
                             "found none); use cpu, a simulated GPU (sim:gpu[:key=value...]) "
                             "or auto (the CPU and every GPU found)")
        self.cuda = runtime_gpu.require_gpu()
        if index >= len(self.cuda.gpus):
            raise InputError(f"--devices gpu:{index}: there are {len(self.cuda.gpus)} CUDA "
                             f"device(s) here; use gpu:0 .. gpu:{len(self.cuda.gpus) - 1}")
        self.index = index
        self.cache = {}
        self._lock = threading.Lock()
        with self.cuda.gpus[index]:
            self.stream = self.cuda.stream()

    def memory(self):
        with self.cuda.gpus[self.index]:
            return runtime_gpu.device_memory()

    def execute(self, job, units):
        self.calls += 1
        self.transfers += 1
        self.launches += 1
        with self._lock, self.cuda.gpus[self.index]:
            t0 = time.perf_counter()
            results = job.run_gpu(units, self)
            self.stream.synchronize()
            return results, time.perf_counter() - t0


@dataclass
class SimModel:
    speed: object        # float, or None: the job's `Job.sim_rates`
    overhead: float
    latency: float
    bandwidth: float
    launch: float
    saturation: object   # float, or None: from ``threads`` and the job's `Job.unit_threads`
    threads: float
    memory: float
    fail: int = 0


class SimDevice(Device):
    """A device that runs the CPU implementation and charges modelled time."""

    simulated = True

    def __init__(self, kind="gpu", name=None, **params):
        if kind not in SIM_DEFAULTS:
            raise InputError(f"simulated device kind {kind!r}: use sim:cpu or sim:gpu")
        super().__init__(name or f"sim:{kind}")
        self.kind = kind
        values = dict(SIM_DEFAULTS[kind])
        fail = int(params.pop("fail", 0))
        for key, value in params.items():
            if key not in values:
                raise InputError(f"simulated device {self.name}: unknown parameter {key!r}; "
                                 f"use {', '.join(sorted(values))} or fail")
            values[key] = float(value)
        for key, value in values.items():
            if value is None:  # a default taken from the job
                continue
            if not value >= 0 or (key == "speed" and not value > 0) or \
                    (key == "bandwidth" and not value > 0):
                raise InputError(f"simulated device {self.name}: {key}={value} must be "
                                 f"{'positive' if key in ('speed', 'bandwidth') else '>= 0'}")
            if value == math.inf and key not in _UNBOUNDED:
                raise InputError(f"simulated device {self.name}: {key}={value} must be a finite "
                                 "number (only bandwidth and memory may be inf)")
        if fail < 0:
            raise InputError(f"simulated device {self.name}: fail={fail} must be >= 0")
        self.model = SimModel(fail=fail, **values)
        self._setup_done = set()

    def memory(self):
        return None if self.model.memory == math.inf else self.model.memory

    def saturation_units(self, job):
        fill = self.saturation(job)
        if self.kind != "gpu" or not fill:
            return None
        return max(1, math.ceil(fill / job.unit_work()))

    def rate(self, job):
        """Work units a second on ``job``: ``speed`` x 1e9, else the job's own
        (`Job.sim_rates`), else `GENERIC_SPEED` x 1e9."""
        if self.model.speed is not None:
            return self.model.speed * BASE_RATE
        rate = (getattr(job, "sim_rates", None) or {}).get(self.kind)
        return float(rate) if rate else GENERIC_SPEED[self.kind] * BASE_RATE

    def saturation(self, job):
        """Work below which a GPU call costs as much as one of this work: ``saturation``,
        else the work of the sub-loads whose GPU threads (`Job.unit_threads`) reach
        ``threads``; 0 for a CPU, or a job that does not say."""
        if self.kind != "gpu":
            return 0.0
        if self.model.saturation is not None:
            return self.model.saturation
        per = job.unit_threads() if hasattr(job, "unit_threads") else None
        if not per or not self.model.threads:
            return 0.0
        return job.unit_work() * self.model.threads / per

    def call_seconds(self, job, n, first=False):
        """Modelled duration of a call of ``n`` sub-loads of ``job``."""
        m = self.model
        work = n * job.unit_work()
        rate = self.rate(job)
        if self.kind == "cpu":
            return n * m.overhead + work / rate
        moved = n * job.unit_bytes() + (job.setup_bytes() if first else 0)
        return m.latency + moved / m.bandwidth + m.launch + max(work, self.saturation(job)) / rate

    def warm_up(self, job):
        """Make the job's setup transfer before the clock starts, as a real device's
        warm-up call does: no call of ``job`` pays it."""
        self._setup_done.add(id(job))

    def execute(self, job, units):
        self.calls += 1
        if self.model.fail and self.calls == self.model.fail:
            raise DeviceFault(f"{self.name}: injected fault on call {self.calls}")
        first = id(job) not in self._setup_done
        self._setup_done.add(id(job))
        if self.kind == "gpu":
            self.transfers += 1
            self.launches += 1
        results = job.run_cpu(units)
        seconds = self.call_seconds(job, len(units), first)
        self.last_setup = seconds - self.call_seconds(job, len(units)) if first else 0.0
        return results, seconds

    def check_model(self, job, wall_clock=False):
        """Refuse a model whose times ``job`` cannot run under: a whole job modelled past
        `MAX_MODELLED` seconds (an overflow: huge latency, tiny speed), or, on the wall clock
        (``wall_clock``: real devices in the run), one call of one sub-load modelled past
        `MAX_WALL_CALL` seconds, which the run would really wait out."""
        n = max(int(job.n_units), 1)
        whole = n * self.call_seconds(job, n, first=True)
        if not whole <= MAX_MODELLED:
            raise InputError(
                f"simulated device {self.name}: {job.kind}'s {n:,} sub-loads are modelled at "
                f"{whole:.3g} s on it, past the {MAX_MODELLED:.0e} s a schedule can add up; use "
                "a smaller overhead, latency, launch or saturation, or a larger speed or "
                "bandwidth")
        one = self.call_seconds(job, 1, first=True)
        if wall_clock and one > MAX_WALL_CALL:
            raise InputError(
                f"simulated device {self.name}: one call is modelled at {one:.3g} s, and with a "
                f"real device in --devices the wall clock waits modelled time out (at most "
                f"{MAX_WALL_CALL:.0f} s a call); use simulated devices only (sim:cpu: a "
                "virtual clock) or a faster model")

    def units_by(self, job, seconds):
        """Largest (fractional) number of sub-loads one call finishes within
        ``seconds`` (setup excluded): the inverse of `call_seconds`, for the ideal split."""
        if not math.isfinite(seconds):
            return math.inf
        if self.call_seconds(job, 1e-12) > seconds:
            return 0.0
        lo, hi = 0.0, 1.0
        while self.call_seconds(job, hi) <= seconds:
            lo, hi = hi, hi * 2
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.call_seconds(job, mid) <= seconds else (lo, mid)
        return lo

    def describe(self, job=None):
        d = super().describe()
        d.update({k: v for k, v in vars(self.model).items()})
        if job is not None:  # what the defaults came to on this job
            d.update(rate=self.rate(job), saturation=self.saturation(job))
        return d
