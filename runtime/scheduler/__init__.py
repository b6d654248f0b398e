"""Job scheduling over the CPU and GPUs: HASS and its baselines (seed 004, Chapter 3).

``schedule(job, devices="auto", policy="hass")`` runs a divisible job (a
`runtime.scheduler.jobs.Job`, or a job kind name) in rounds over the devices and
returns a `ScheduleResult`: the job's result, the makespan, the per-round
ratios, each device's busy time, the sub-loads stolen, the faults survived and
the timeline of every call. Modules: `pool` (rounds of sub-loads), `devices`
(CPU, CUDA GPUs, simulated devices), `workers` (a Dask cluster's devices),
`device_specs` (``--devices`` specs to devices), `engine` (the event loop),
`profiler` (round-0 rates, the ideal split), `bundler`, `hass`, `baselines`
(min-min, greedy, Qilin), `report` (plots), `jobs` (the job kinds).
"""

from dataclasses import dataclass, field

import numpy as np

from vcut_base.errors import InputError

from . import baselines, hass
from .device_specs import parse_devices
from .devices import CpuDevice, CudaDevice, Device, DeviceFault, SimDevice
from .engine import DevicesRefused, Engine, Fault, SchedulingError, Span
from .jobs import Job, make_job
from .pool import WorkPool
from .profiler import ideal_split

__all__ = ["schedule", "ScheduleResult", "POLICIES", "SchedulingError", "DevicesRefused", "Device",
           "CpuDevice", "CudaDevice", "SimDevice", "DeviceFault", "parse_devices", "Span", "Fault"]

POLICIES = ("hass", "min-min", "greedy", "qilin")


@dataclass(frozen=True, eq=False)
class ScheduleResult:
    policy: str
    job: dict
    devices: tuple
    makespan: float
    rounds: tuple
    busy: dict
    units: dict
    stolen: int
    spans: tuple
    faults: tuple
    excluded: dict
    virtual: bool
    result: object = None
    final_round: object = None
    profiling_seconds: float = 0.0
    training_seconds: float = 0.0
    ideal: object = None
    info: dict = field(default_factory=dict)

    def skipped(self):
        """The devices left out of the run and why: ``[{"device", "reason"}]``."""
        return [{"device": k, "reason": v} for k, v in self.excluded.items()]

    def summary(self):
        """JSON-able figures (everything but the job's result and the timeline)."""
        return {
            "policy": self.policy, "job": self.job, "devices": list(self.devices),
            "makespan": self.makespan, "ideal": self.ideal,
            "makespan_over_ideal": self.makespan / self.ideal if self.ideal else None,
            "busy": self.busy, "units": self.units, "stolen": self.stolen,
            "final_round": self.final_round, "profiling_seconds": self.profiling_seconds,
            "training_seconds": self.training_seconds, "rounds": list(self.rounds),
            "faults": [vars(f) for f in self.faults], "excluded": self.excluded,
            "devices_skipped": self.skipped(),
            "clock": "virtual" if self.virtual else "wall", **self.info,
        }


def _devices(devices, client=None):
    if isinstance(devices, str):
        return parse_devices(devices, client)
    devices = list(devices)
    if not devices or not all(isinstance(d, Device) for d in devices):
        raise InputError("devices: give a spec string (e.g. 'cpu,gpu:0') or Device objects")
    return devices


def schedule(job, devices="auto", policy="hass", seed=0, *, rounds=10, profile_units=None,
             training=0.3, slack=0.02, warm_up=True, client=None):
    """Run ``job`` over ``devices`` under ``policy``; return a `ScheduleResult`.

    A divisible job (sub-loads that can run anywhere, in any order) is dealt
    out in rounds over the CPU and GPUs (real, simulated, or a Dask cluster's
    workers); the policy decides each round's split. Devices that cannot run
    the job (no GPU implementation, too little memory, a failed warm-up call)
    are left out, and said so in ``excluded``. With only simulated devices the
    clock is virtual (modelled times, deterministic); otherwise it is the wall
    clock.

    Parameters
    ----------
    job : Job or str
        A `runtime.scheduler.jobs.Job`, or a kind name (``string-search``,
        ``matmul``, ``bfs-batch``, or one registered from above once its module
        is imported: ``partition-batch`` by `vcut.partition_batch`), built with
        its defaults and ``seed``.
    devices : str or sequence of Device, default "auto"
        A spec (``auto``, ``cpu``, ``gpu:N``, ``sim:cpu[:key=value...]``,
        ``sim:gpu[:key=value...]``, ``dask``, comma-separated: `parse_devices`)
        or `Device` objects.
    policy : {"hass", "min-min", "greedy", "qilin"}, default "hass"
        HASS (`hass`) or one of its baselines (`baselines`).
    seed : int, default 0
        Seed of a job built from its kind name.
    rounds : int, default 10
        Loads the pool deals the job into.
    profile_units : int, optional
        HASS's profiling sample k (a GPU runs calls of 2k and k sub-loads);
        default: what fills the largest GPU, or a tenth of a round's even
        share.
    training : float, default 0.3
        Qilin's training fraction.
    slack : float, default 0.02
        HASS's idle-CPU threshold for the rate correction (see `hass`).
    warm_up : bool, default True
        Run one sub-load on each real device first, untimed and discarded, so
        that kernel compilation and setup transfers are not in the makespan;
        a simulated GPU's setup transfer is then made before the clock starts
        too (`SimDevice.warm_up`).
    client : distributed.Client, optional
        The client whose workers the spec ``dask`` names.

    Returns
    -------
    ScheduleResult
        ``result`` (the job's combined result), ``makespan`` (seconds),
        ``rounds`` (each round's split and times), ``busy`` and ``units``
        per device, ``stolen`` sub-loads, ``spans`` (the timeline of every
        call), ``faults`` survived, ``excluded`` devices and why,
        ``virtual`` (the clock), ``ideal`` (the ideal makespan on a virtual
        clock, else None); ``summary()`` is the JSON-able part.

    Raises
    ------
    InputError
        An unknown policy, job kind or device spec, or invalid job sizes.
    DevicesRefused
        None of the devices can run the job.
    SchedulingError
        The schedule could not complete (every device failed).

    Examples
    --------
    A 64 x 64 matrix product in 16 sub-loads on a simulated CPU and a
    simulated GPU three times as fast (modelled times: a virtual clock):

    >>> import numpy as np
    >>> from runtime import schedule
    >>> from runtime.scheduler.jobs import make_job
    >>> job = make_job("matmul", size=64, units=16)
    >>> r = schedule(job, "sim:cpu:speed=1,sim:gpu:speed=3:saturation=0:launch=0:latency=0")
    >>> r.policy, r.virtual, r.units
    ('hass', True, {'sim:cpu': 1, 'sim:gpu': 15})
    >>> bool(np.array_equal(r.result, job.reference())), round(r.makespan / r.ideal, 2)
    (True, 1.41)
    >>> schedule(job, "sim:cpu", policy="fifo")
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: --policy 'fifo': use one of hass, min-min, greedy, qilin
    """
    if policy not in POLICIES:
        raise InputError(f"--policy {policy!r}: use one of {', '.join(POLICIES)}")
    if isinstance(job, str):
        job = make_job(job, seed=seed)
    if not isinstance(job, Job):
        raise InputError("job: give a Job or a job kind name")
    devices = _devices(devices, client)
    excluded = {}
    for d in devices:
        if d.kind == "gpu" and not job.gpu_capable:
            excluded[d.name] = f"{job.kind} has no GPU implementation" + (
                f" ({job.no_gpu_because})" if job.no_gpu_because else "")
        elif not d.can_run(job):
            excluded[d.name] = (f"one sub-load needs {job.setup_bytes() + job.unit_bytes():,} "
                                f"bytes, the device has {int(d.memory()):,}")
    for d in devices:  # compile kernels and move setup data before the clock starts
        if d.name not in excluded and d.simulated and warm_up:
            d.warm_up(job)
        if d.name not in excluded and not d.simulated and warm_up:
            try:
                d.execute(job, np.arange(1, dtype=np.int64))
            except Exception as exc:
                excluded[d.name] = f"failed its warm-up call: {type(exc).__name__}: {exc}"
    usable = [d for d in devices if d.name not in excluded]
    if not usable:
        raise DevicesRefused(f"{job.kind} fits none of the devices: " +
                              "; ".join(f"{k}: {v}" for k, v in excluded.items()))
    wall_clock = not all(d.simulated for d in usable)
    for d in usable:  # modelled times the clocks can hold (before anything runs)
        if isinstance(d, SimDevice):
            d.check_model(job, wall_clock)
    pool = WorkPool(job, rounds)
    engine = Engine(usable, job)
    try:
        if policy == "hass":
            out = hass.run_hass(engine, pool, profile_units=profile_units, slack=slack)
        elif policy == "min-min":
            out = baselines.run_min_min(engine, pool)
        elif policy == "greedy":
            out = baselines.run_greedy(engine, pool)
        else:
            out = baselines.run_qilin(engine, pool, training=training)
        makespan = engine.now()
    finally:
        engine.close()
    missing = job.n_units - len(engine.results)
    if missing:
        raise SchedulingError(f"{missing} sub-loads of {job.kind} were not run (policy bug)")
    busy = {d.name: 0.0 for d in usable}
    units = {d.name: 0 for d in usable}
    for s in engine.spans:
        if s.what != "training":
            busy[s.device] += s.end - s.start
            units[s.device] += s.units
    stolen = sum(s.units for s in engine.spans if s.what == "steal")
    ideal = None
    if engine.virtual:
        ideal = sum(ideal_split(usable, job, len(load))[0] for _, load in pool)
    extra = {k: v for k, v in out.items()
             if k not in ("rounds", "final_round", "profiling_seconds", "training_seconds")}
    return ScheduleResult(
        policy=policy, job=job.describe(), devices=tuple(d.describe(job) for d in usable),
        makespan=makespan, rounds=tuple(out["rounds"]), busy=busy, units=units, stolen=stolen,
        spans=tuple(engine.spans), faults=tuple(engine.faults), excluded=excluded,
        virtual=engine.virtual, result=job.combine(engine.results),
        final_round=out.get("final_round"), profiling_seconds=out.get("profiling_seconds", 0.0),
        training_seconds=out.get("training_seconds", 0.0), ideal=ideal, info=extra)
