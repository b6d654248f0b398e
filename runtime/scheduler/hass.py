"""HASS: heterogeneous adaptive scheduling over the CPU and GPUs (Algorithm 3.1).

Per round, with the ratios of the previous round (round 0: profiling):

- each GPU gets round(ratio_g x m) sub-loads, bundled into one call launched at once;
- the CPU buffer gets the rest; the CPU runs them one at a time from the front;
- a GPU that falls idle steals one sub-load at a time from the back of the CPU
  buffer (GPUs never steal from each other);
- adaptation: the next round's ratios are the shares each device actually ran.
  When they move by at most one sub-load two rounds in a row they are final.

Additions to the source, each measured in `bench/bench_schedule.py` (docs/runtime.md):

- Profiling fits a call-time model T_d(n) = a_d + b_d n per device instead of one
  rate: each GPU runs its sample as two calls, of 2k and k sub-loads, whose two
  sizes give the fixed cost of a call (launch, transfer start-up, an unfilled GPU;
  a simulated device's one-off setup transfer is left out of its call's time;
  where the fit finds none, as when the first call carried one-off costs no device
  reported, the k call alone gives the rate, see `_profile_round`; a fit is
  trusted up to 4 x the largest call seen, `profiler.call_model`); the CPU runs
  one sub-load a call (a remote CPU: k) for as long as a GPU's sample runs. A
  device whose sample is done while another's is not takes more (a GPU: k
  sub-loads a call) from the rest of round 0, so none idles through profiling
  (a slow GPU's sample can outlast the whole round). What is left of round 0 gets
  the equal-finish split of the models; with a single rate a GPU whose sample is
  mostly launch looks several times slower than it is, and round 0 ran at up to
  twice the ideal.
- An idle GPU steals only when its model says the sub-load ends before the CPUs
  would have emptied their buffer (the source's GPUs are always the faster).
- The executed shares are the next ratios only after a balanced round. Stealing
  only moves work *to* the GPUs, so a round in which the GPUs got too much (the CPU
  empties its buffer and idles, for longer than its longest call and ``slack`` of
  the round, while a GPU is still busy) does not show in the shares; a GPU that
  idles at the end for longer than ``slack`` of the round while the CPU runs its
  last sub-loads does not either; and after a round in which GPUs stole, the shares
  understate them (each stolen sub-load paid a whole launch). After such rounds the
  next ratios are the equal-finish split of the models fitted to every call so far
  (each device's first call left out), whose fixed point is the ideal split. So
  are they before a round of another size than this one (after round 0, whose
  profiling leaves a smaller rest, and before a shorter last round): with a fixed
  cost per call the shares of m sub-loads are not those of m' (bench_schedule's
  random machines at >= 32 sub-loads a round: 16 -> 13 of 150 slower than one device).
- Sub-loads are dealt by earliest finish (`distribute`), not by largest remainder:
  with a few slow CPU sub-loads a round, one more CPU sub-load can cost more than
  the GPU gains.

The profiling sample k defaults to what fills the largest GPU (simulated GPUs:
their saturation; the source: "the number of SPs"), or a tenth of a round's even
share when that is more, at most half a round over all samples.
Devices that fail are retired; their sub-loads go back to the CPU buffer.
A remote CPU (a Dask worker's, `runtime.scheduler.workers`) pays a round trip
per call, so it takes guided self-scheduling chunks from the front of the
buffer (ceil(left / (2 x CPUs)) sub-loads, down to one) instead of one at a time.
"""

from collections import deque

import numpy as np

from .bundler import Bundler
from .profiler import call_model, profile, ratios_from_rates, split_by_models

__all__ = ["run_hass", "distribute"]


def distribute(ratios, m, caps=None):
    """Split ``m`` sub-loads by ``ratios``, at most ``caps[d]`` each.

    Read as rates, the ratios make a device's time for n sub-loads proportional to
    n / ratio; the split is the one with the earliest finish, max_d n_d / ratio_d:
    each device first gets floor(ratio_d m), which no such split goes below, and
    each sub-load left goes where it ends first (ties: the first device)."""
    keys = list(ratios)
    rate = np.array([ratios[k] for k in keys], dtype=float)
    counts = np.floor(rate * m).astype(np.int64)
    safe = np.where(rate > 0, rate, 1.0)
    for _ in range(m - int(counts.sum())):
        counts[int(np.argmin(np.where(rate > 0, (counts + 1) / safe, np.inf)))] += 1
    out = dict(zip(keys, counts.tolist()))
    if caps:
        for k in keys:
            out[k] = min(out[k], caps.get(k, out[k]))
    return out


def _profile_round(engine, devices, load, k):
    """HASS's round 0 profile: ``(ratios for the rest of load, rest of load,
    each device's calls but its first, each device's model of its profile calls)``.

    A GPU's sample runs its 2k call first. A call's time is less the one-off setup a
    device reports (`engine._Done.seconds`: a simulated device's setup transfer; a
    real device's compilation and setup go in its untimed warm-up call); one-off
    costs S left in the first call then steepen the fit (slope b + S / k, fixed cost
    a - S) and make the GPU look slower, which the next rounds correct (an idle GPU
    steals, or the round counts as unbalanced), or give a fixed cost below 0, when
    the k call alone gives the rate. With the k call first they would flatten it
    (b - S / k, a + 2S): the GPU would look faster for large calls and get more than
    it can do, which nothing corrects within the round (nothing steals from a GPU)."""
    sizes = {d: 1 if d.kind != "gpu" and not d.remote else k for d in devices}
    queue = deque(load)

    def take(n):
        return np.array([queue.popleft() for _ in range(min(n, len(queue)))], np.int64)

    samples = [[take(n) for n in ((2 * k, k) if d.kind == "gpu" else (sizes[d],))]
               for d in devices]
    _, ratios, took = profile(engine, devices, samples, queue, sizes)
    rest = list(queue)
    history = {d: list(t[1:]) for d, t in took.items()}

    def model(t):
        """The model of all the calls; where the fit finds no fixed cost (noise, or a
        first call that carried one-off costs), of the calls but the first."""
        md = call_model(t)
        return call_model(t[1:]) if md[0] == 0 and len(t) > 1 else md

    models = {d: model(t) for d, t in took.items()}
    if took:   # the split of what is left, or of a round like this one when nothing is
        ratios = split_by_models(models, len(rest) or len(load))
    return ratios, rest, history, models


def _models(history, alive, profiled=None):
    """Each alive device's call-time model from its calls so far; a device that has
    run nothing yet gets the slowest per-sub-load time of the others (it is tried).
    Calls of one size cannot show a fixed cost per call: a device whose calls so far
    (its first left out) all had one size keeps its model from the profile round
    (``profiled``), which saw two."""
    def fitted(d):
        calls = history[d]
        if profiled and profiled.get(d, (0.0,))[0] > 0 and len({n for n, _ in calls}) < 2:
            return profiled[d]
        return call_model(calls)

    models = {d: fitted(d) for d in alive if history.get(d)}
    slowest = max((md[1] for md in models.values()), default=1.0)
    return {d: models.get(d, (0.0, slowest)) for d in alive}


def run_hass(engine, pool, *, profile_units=None, slack=0.02, steal_rates=True):
    job = engine.job
    bundler = Bundler()
    ratios, final, final_round, steady = None, False, None, 0
    rounds, profiling = [], 0.0
    history = {}        # device -> (sub-loads, seconds) of its calls but the first
    profiled = {}       # device -> its call model from the profile round
    for rnd, load in pool:
        engine.round = rnd
        t0 = engine.now()
        devices = [d for d in engine.alive if d.can_run(job)]
        load = list(load.tolist())
        if ratios is None:
            k = profile_units or max([d.saturation_units(job) or 1 for d in devices] +
                                     [len(load) // (10 * len(devices))])
            weight = sum(3 if d.kind == "gpu" else 1 for d in devices)
            k = max(1, min(k, len(load) // (2 * weight)))
            ratios, load, history, profiled = _profile_round(engine, devices, load, k)
            profiling = engine.now() - t0
            devices = [d for d in engine.alive if d.can_run(job)]
            ratios = {d: ratios.get(d, 0.0) for d in devices}
        m = len(load)
        gpus = [d for d in devices if d.kind == "gpu"]
        cpus = [d for d in devices if d.kind != "gpu"]
        # with no CPU the buffer is the host's, emptied by steals alone
        counts = distribute({d: ratios.get(d, 0.0) for d in devices}, m,
                            {d: d.capacity(job) for d in gpus})
        pos, bundles = 0, {}
        for g in gpus:
            bundles[g] = bundler.bundle(rnd, g, [load[pos:pos + counts[g]]])
            pos += counts[g]
        buffer = deque(load[pos:])
        started = set()
        executed = {d: 0 for d in devices}
        stolen = {d: 0 for d in devices}
        busy = {d: 0.0 for d in devices}
        finish = {d: t0 for d in devices}
        longest = [0.0]     # the CPU's longest call: the granularity of its finish time
        assigned = {d.name: counts[d] / m if m else 0.0 for d in devices}

        model = _models(history, devices, profiled) if history else {}
        cpu_rate = sum(1.0 / max(model[c][1], 1e-300) for c in cpus if c in model)

        def worth_stealing(g):
            """A steal that ends before the CPUs would have emptied the buffer (always
            without CPUs or models: cpu_rate is then 0). A GPU's model is refitted now,
            with this round's bundle in it."""
            if not cpu_rate:
                return True
            a, b = (_models(history, [g], profiled) if history.get(g) else model)[g][:2]
            return a + b < len(buffer) / cpu_rate

        def next_call(d):
            if d.kind == "gpu":
                if d not in started:
                    started.add(d)
                    if len(bundles.get(d, ())):
                        return bundles[d], "bundle"
                if buffer and worth_stealing(d):
                    stolen[d] += 1
                    return np.array([buffer.pop()], np.int64), "steal"
                return None
            if buffer:
                k = 1
                if d.remote:  # guided self-scheduling: a round trip per call, not per sub-load
                    k = max(1, -(-len(buffer) // (2 * len(cpus))))
                return np.array([buffer.popleft() for _ in range(k)], np.int64), "unit"
            return None

        def on_done(done):
            executed[done.device] += len(done.units)
            busy[done.device] += done.end - done.start
            finish[done.device] = done.end
            history.setdefault(done.device, []).append((len(done.units), done.seconds))
            longest[0] = max(longest[0], done.end - done.start if done.what == "unit" else 0.0)

        def on_fault(d, units):
            buffer.extendleft(reversed(units.tolist()))

        engine.drive(next_call, on_done, on_fault)
        end = engine.now()
        alive = [d for d in devices if d in engine.alive]
        shares = {d: executed[d] / m if m else 0.0 for d in alive}
        last = max(finish.values())
        cpu_end = max((finish[d] for d in cpus if d in engine.alive), default=last)
        idle_cpu = cpus and any(finish[g] >= last for g in gpus) and \
            last - cpu_end > max(slack * (end - t0), longest[0])
        idle_gpu = cpus and any(last - finish[g] > slack * (end - t0)
                                for g in gpus if g in engine.alive)
        unbalanced = idle_cpu or idle_gpu or (steal_rates and sum(stolen.values()) > 0)
        nxt = len(pool.loads[rnd + 1]) if rnd + 1 < len(pool) else m
        if final or not m:
            new = ratios
        elif unbalanced or nxt != m:
            new = split_by_models(_models(history, alive, profiled), nxt)
        else:
            new = ratios_from_rates(shares)
        if not final and m:
            moved = max(abs(new.get(d, 0.0) - ratios.get(d, 0.0)) for d in alive)
            steady = steady + 1 if moved <= 1.0 / m + 1e-12 else 0
            if steady >= 2:
                final, final_round = True, rnd
        rounds.append({
            "round": rnd, "start": t0, "end": end, "makespan": end - t0, "units": m,
            "assigned": assigned,
            "executed": {d.name: executed[d] / m if m else 0.0 for d in devices},
            "stolen": {d.name: stolen[d] for d in devices},
            "bundles": {d.name: bundler.count[(rnd, d.name)] for d in gpus},
            "rate_correction": bool(unbalanced) and not final,
        })
        ratios = {d: new.get(d, 0.0) for d in alive}
    models = _models(history, [d for d in engine.alive if history.get(d)], profiled)
    return {"rounds": rounds, "final_round": final_round, "profiling_seconds": profiling,
            "ratios": {d.name: r for d, r in ratios.items()},
            "models": {d.name: {"call_seconds": a, "seconds_per_subload": b, "trusted_to": n}
                       for d, (a, b, n) in models.items()}}
