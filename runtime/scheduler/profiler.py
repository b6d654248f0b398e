"""Profiling (HASS round 0) and the ideal split of simulated devices.

Each device runs a small sample of the load; its rate is S_d = size / makespan_d
and its share ratio_d = S_d / sum S (equations 3.2-3.5). `ideal_split` solves the
equal-finish split T(ratio_c L) = T(ratio_g1 L) = ... exactly for simulated
devices, whose time model is known: the reference HASS should reach.
"""

import numpy as np

__all__ = ["profile", "ratios_from_rates", "ideal_split"]


def ratios_from_rates(rates):
    total = sum(rates.values())
    if total <= 0:
        return {d: 1.0 / len(rates) for d in rates}
    return {d: s / total for d, s in rates.items()}


def profile(engine, devices, units):
    """Run ``units`` (a list of id arrays, one per device) once on each device,
    all at once; return ``(rates, ratios)`` keyed by device (work per second)."""
    todo = dict(zip(devices, units))
    took = {}

    def next_call(d):
        u = todo.pop(d, None)
        return None if u is None or not len(u) else (u, "profile")

    def on_done(done):
        took[done.device] = (len(done.units), done.end - done.start)

    def on_fault(d, u):
        """The sample of a failed device goes to a device that can run the job and has
        no sample waiting (it runs it once idle), else onto the sample waiting for the
        first such device: every capable device may hold one already (the engine has
        checked that one is alive)."""
        able = [x for x in engine.alive if x.can_run(engine.job)]
        free = [x for x in able if x not in todo]
        if free:
            todo[free[0]] = u
        else:
            todo[able[0]] = np.concatenate([todo[able[0]], u])

    engine.drive(next_call, on_done, on_fault)
    work = engine.job.unit_work()
    rates = {d: n * work / max(sec, 1e-12) for d, (n, sec) in took.items() if d in engine.alive}
    return rates, ratios_from_rates(rates)


def ideal_split(devices, job, m):
    """``(seconds, shares)``: the shortest time in which simulated ``devices`` finish
    ``m`` sub-loads with one call each, and each device's share of them."""
    devices = [d for d in devices if d.can_run(job)]
    lo, hi = 0.0, 1e-9
    while sum(d.units_by(job, hi) for d in devices) < m:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if sum(d.units_by(job, mid) for d in devices) < m else (lo, mid)
    got = np.array([d.units_by(job, hi) for d in devices])
    return hi, {d.name: float(g / got.sum()) for d, g in zip(devices, got)}
