"""The baselines HASS is measured against (Chapter 3.4).

- **min-min** (static): the expected time of one sub-load on each device (ETC)
  is measured once, with one sub-load per device; each round's sub-loads are
  then assigned one by one to the device that completes them first under the
  ETC, and every device runs its list one sub-load per call (no bundling).
- **greedy** (dynamic): an idle device takes the next sub-load from the round's
  load, one per call.
- **Qilin** (adaptive mapping, Luk et al. 2009): an offline training run on a
  fraction of the input fits a linear time T_d(n) = a_d + b_d n per device from
  two runs (n = f N / 6 and f N / 3 sub-loads on each device); each round is
  then split in two so that the fitted times are equal, each part one call.
  The training is offline in Qilin (its results go to a database for later
  runs): its time is reported apart (``training_seconds``) and not in the
  makespan, and its results are discarded. One CPU and one GPU only.

On a device failure the failed call's sub-loads go to whichever device is idle.
"""

from collections import deque

import numpy as np

from .engine import DevicesRefused, Engine
from .profiler import profile

__all__ = ["run_min_min", "run_greedy", "run_qilin", "qilin_devices"]


def _round_loop(engine, pool, plan):
    """Drive each round: ``plan(round, load)`` returns per-device call queues."""
    rounds = []
    for rnd, load in pool:
        engine.round = rnd
        t0 = engine.now()
        queues, shared = plan(rnd, load)
        orphans = deque()
        executed = {}

        def next_call(d):
            if orphans:
                return np.array([orphans.popleft()], np.int64), "unit"
            q = queues.get(d)
            if q:
                return q.popleft()
            if shared is not None and shared:
                return np.array([shared.popleft()], np.int64), "unit"
            return None

        def on_done(done):
            executed[done.device.name] = executed.get(done.device.name, 0) + len(done.units)

        def on_fault(d, units):
            orphans.extend(units.tolist())
            for units2, _ in queues.pop(d, ()):
                orphans.extend(units2.tolist())

        engine.drive(next_call, on_done, on_fault)
        m = len(load)
        rounds.append({"round": rnd, "start": t0, "end": engine.now(),
                       "makespan": engine.now() - t0, "units": m,
                       "executed": {k: v / m for k, v in executed.items()}})
    return rounds


def run_greedy(engine, pool):
    return {"rounds": _round_loop(engine, pool, lambda rnd, load: ({}, deque(load.tolist())))}


def run_min_min(engine, pool):
    job = engine.job
    devices = [d for d in engine.alive if d.can_run(job)]
    state = {"etc": None, "skip": 0}
    profiling = [0.0]

    def plan(rnd, load):
        load = load.tolist()
        if state["etc"] is None:  # measure the ETC on the first sub-loads of round 0
            k = min(len(devices), len(load))
            t0 = engine.now()
            rates, _, _ = profile(engine, devices[:k], [np.array([u], np.int64) for u in load[:k]])
            profiling[0] = engine.now() - t0
            etc = {d: job.unit_work() / rates[d] for d in rates}
            for d in devices:  # a device without a sample (tiny rounds) takes the slowest ETC
                etc.setdefault(d, max(etc.values()))
            state["etc"] = etc
            load = load[k:]
        etc = {d: t for d, t in state["etc"].items() if d in engine.alive}
        ready = {d: 0.0 for d in etc}
        queues = {d: deque() for d in etc}
        for u in load:  # equal sub-loads: min-min assigns each to the earliest completion
            d = min(etc, key=lambda x: (ready[x] + etc[x], devices.index(x)))
            ready[d] += etc[d]
            queues[d].append((np.array([u], np.int64), "unit"))
        return queues, None

    rounds = _round_loop(engine, pool, plan)
    return {"rounds": rounds, "profiling_seconds": profiling[0]}


def qilin_devices(engine):
    job = engine.job
    devices = [d for d in engine.alive if d.can_run(job)]
    cpus = [d for d in devices if d.kind != "gpu"]
    gpus = [d for d in devices if d.kind == "gpu"]
    if len(cpus) != 1 or len(gpus) != 1:
        raise DevicesRefused(
            f"qilin splits a load between one CPU and one GPU; these devices give "
            f"{len(cpus)} CPU(s) and {len(gpus)} GPU(s) able to run {job.kind}: "
            f"use --policy hass, min-min or greedy")
    return cpus[0], gpus[0]


def run_qilin(engine, pool, *, training=0.3):
    job = engine.job
    cpu, gpu = qilin_devices(engine)
    if not 0 < training < 1:
        raise DevicesRefused(f"--training {training}: use a fraction in (0, 1)")
    n1 = max(1, round(training * job.n_units / 6))
    n2 = max(n1 + 1, round(training * job.n_units / 3))
    if n2 > job.n_units:
        raise DevicesRefused(f"qilin: the job has {job.n_units} sub-loads, too few to train "
                              f"on {training:.0%} of them; use more --units")
    trainer = Engine([cpu, gpu], job)   # offline: its own clock, results discarded
    todo = {cpu: deque([n1, n2]), gpu: deque([n1, n2])}
    times = {cpu: {}, gpu: {}}

    def next_call(d):
        if todo.get(d):
            return np.arange(todo[d].popleft(), dtype=np.int64), "training"
        return None

    def on_done(done):
        times[done.device][len(done.units)] = done.seconds

    try:
        trainer.drive(next_call, on_done, lambda d, units: todo.pop(d, None))
        training_seconds = trainer.now()
    finally:
        trainer.close()
    for f in trainer.faults:   # a device that fails in training is retired for the run
        engine.faults.append(f)
        engine.alive = [d for d in engine.alive if d.name != f.device]
    fit = {}
    for d in (cpu, gpu):
        if len(times[d]) < 2:
            fit[d] = (0.0, 1.0)
            continue
        b = (times[d][n2] - times[d][n1]) / (n2 - n1)
        b = max(b, 1e-15)       # a flat fit: the device looks free for more work
        fit[d] = (times[d][n1] - b * n1, b)

    def plan(rnd, load):
        m = len(load)
        (ac, bc), (ag, bg) = fit[cpu], fit[gpu]
        x = int(round(min(max((ag - ac + bg * m) / (bc + bg), 0.0), m)))
        if gpu not in engine.alive:
            x = m
        elif cpu not in engine.alive:
            x = 0
        queues = {cpu: deque([(load[:x], "call")] if x else []),
                  gpu: deque([(load[x:], "bundle")] if x < m else [])}
        return queues, None

    rounds = _round_loop(engine, pool, plan)
    return {"rounds": rounds, "training_seconds": training_seconds,
            "fit": {d.name: {"a": a, "b": b} for d, (a, b) in fit.items()},
            "training_units": [n1, n2]}
