"""Profiling, call-time models and the ideal split of simulated devices.

`profile` runs a sample on each device; its rate is S_d = size / makespan_d and its
share ratio_d = S_d / sum S (the source's equations 3.2-3.5; min-min's expected
times). HASS fits each device's calls to T_d(n) = a_d + b_d n instead (`call_model`)
and splits a round where the models finish together (`split_by_models`).
`ideal_split` solves the equal-finish split T(ratio_c L) = T(ratio_g1 L) = ...
exactly for simulated devices, whose time model is known: the reference HASS should
reach.
"""

import math

import numpy as np

__all__ = ["profile", "ratios_from_rates", "ideal_split", "fit_call_time", "call_model",
           "split_by_models", "finish_time", "EXTRAPOLATE"]


def ratios_from_rates(rates):
    total = sum(rates.values())
    if total <= 0:
        return {d: 1.0 / len(rates) for d in rates}
    return {d: s / total for d, s in rates.items()}


def profile(engine, devices, calls):
    """Run each device's sample, all devices at once; return ``(rates, ratios, took)``:
    rates and ratios keyed by device (work per second), and ``took[d]``, the
    ``(sub-loads, seconds)`` of each of its calls (seconds less the job's one-off setup
    the device reported, `engine._Done.seconds`).

    ``calls``: one entry per device, an id array (one call) or a list of them (run
    back to back). A rate is over all the device's calls (sub-loads / busy seconds).
    A failed device's sample goes to a device that can run the job and has no sample
    waiting, else after the sample waiting for the first such device."""
    todo = {d: [c] if isinstance(c, np.ndarray) else list(c) for d, c in zip(devices, calls)}
    todo = {d: [c for c in cs if len(c)] for d, cs in todo.items()}
    took = {}

    def next_call(d):
        if todo.get(d):
            return todo[d].pop(0), "profile"
        return None

    def on_done(done):
        took.setdefault(done.device, []).append((len(done.units), done.seconds))

    def on_fault(d, u):
        able = [x for x in engine.alive if x.can_run(engine.job)]
        free = [x for x in able if not todo.get(x)]
        todo.setdefault((free or able)[0], []).extend([u] + todo.pop(d, []))

    engine.drive(next_call, on_done, on_fault)
    work = engine.job.unit_work()
    took = {d: t for d, t in took.items() if d in engine.alive}
    rates = {d: sum(n for n, _ in t) * work / max(sum(s for _, s in t), 1e-12)
             for d, t in took.items()}
    return rates, ratios_from_rates(rates), took


def fit_call_time(calls):
    """``(a, b)`` of T(n) = a + b n from one device's ``(sub-loads, seconds)`` calls:
    least squares when they have two sizes or more, else a = 0 (b: seconds per
    sub-load over all the calls). A fit with a < 0 or b <= 0 (noise) falls back to
    a = 0; a is at most the shortest call."""
    n = np.array([c[0] for c in calls], float)
    t = np.array([c[1] for c in calls], float)
    prop = (0.0, t.sum() / max(n.sum(), 1e-300))
    if len(set(n.tolist())) < 2:
        return prop
    b = float(((n - n.mean()) * (t - t.mean())).sum() / ((n - n.mean()) ** 2).sum())
    a = float(t.mean() - b * n.mean())
    if not (b > 0 and a >= 0):
        return prop
    return min(a, float(t.min())), b


#: `call_model` extrapolates a fit up to this many times the largest call it saw
EXTRAPOLATE = 4


def call_model(calls):
    """``(a, b, n_cap)``: `fit_call_time` of ``calls``, trusted up to n_cap, `EXTRAPOLATE`
    times the largest call they hold. Past n_cap each further sub-load costs what one
    does on average at n_cap, a / n_cap + b: a fit of small calls misses costs that only
    large calls show (a GPU not yet full; or timing noise: calls of 1 and 2 sub-loads
    that cost the same fit b ~ 1e-19), and a device it makes look fast gets more than it
    can do, while nothing steals from a GPU. (Measured: a factor of 1 cost 0.5 % of the
    makespan over bench_schedule.py's random machines; with no limit, HASS on GPUs that
    fill from 4 sub-loads took 1.23 x the ideal instead of 1.07 x.)"""
    a, b = fit_call_time(calls)
    return a, b, EXTRAPOLATE * max(c[0] for c in calls)


def split_by_models(models, m, delays=None):
    """Ratios of the equal-finish split of ``m`` sub-loads over devices whose call of n
    sub-loads takes a + b n (``models``: device -> (a, b), or a `call_model`'s (a, b,
    n_cap), past which a sub-load costs a / n_cap + b): T with sum_d n_d(T) = m,
    ratio_d = its share of m. ``delays``: device -> seconds before it can start (a call
    in flight)."""
    return _equal_finish(models, m, delays)[1]


def finish_time(models, m, delays=None):
    """The T of `split_by_models`: when the devices, splitting ``m`` sub-loads, end."""
    return _equal_finish(models, m, delays)[0]


def _equal_finish(models, m, delays):
    delays = delays or {}

    def inverse(model, T):
        a, b = model[0], max(model[1], 1e-300)
        cap = model[2] if len(model) > 2 else math.inf
        if T <= a:
            return 0.0
        if T <= a + b * cap:
            return (T - a) / b
        return cap + (T - a - b * cap) / (a / cap + b)

    def units(T):
        return {d: inverse(md, T - delays.get(d, 0.0)) for d, md in models.items()}

    lo, hi = 0.0, 1e-9
    while sum(units(hi).values()) < m:
        lo, hi = hi, hi * 2
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if sum(units(mid).values()) < m else (lo, mid)
    got = units(hi)
    total = sum(got.values())
    if not total > 0:   # m = 0
        return hi, {d: 1.0 / len(got) for d in got}
    return hi, {d: g / total for d, g in got.items()}


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
