"""HASS: heterogeneous adaptive scheduling over the CPU and GPUs (Algorithm 3.1).

Per round, with the ratios of the previous round (round 0: profiling):

- each GPU gets round(ratio_g x m) sub-loads, bundled into one call launched at once;
- the CPU buffer gets the rest; the CPU runs them one at a time from the front;
- a GPU that falls idle steals from the back of the CPU buffer (GPUs never steal
  from each other);
- adaptation: the next round's ratios are the shares each device actually ran.
  When they move by at most one sub-load two rounds in a row they are final.

Additions to the source, each measured in `bench/bench_schedule.py` (the runs:
docs/notes/runtime-scheduler.md; the reference: docs/runtime.md, "HASS (`hass.py`) and the
baselines (`baselines.py`)"):

- **Call-time models.** Every device's calls fit T_d(n) = a_d + b_d n (`call_model`:
  least squares over every call so far, trusted up to 4 x the largest), so that a
  GPU's fixed cost of a call (launch, transfer start-up, a GPU not yet full) is not
  spread over its sub-loads as one rate would spread it. Calls of one size cannot
  show a fixed cost: a GPU's are read as ``(T, 0, n)`` (`one_size_model`), a call of
  up to n sub-loads costing T, more costing T per n (an upper bound whatever the
  fixed cost; n is at least the sub-loads that fill the GPU where the device says,
  since below them a call costs the same); a CPU's as a rate.
- **Round 0 is a round.** Each GPU's bundle is its profile sample, k_d sub-loads
  from the front (`sample_sizes`); the CPUs run the rest from the buffer one at a
  time, and a GPU whose sample is done steals from the back, so no device waits
  for another's sample and round 0 pays one call per GPU more than a modelled round
  at most. (Two sample calls a GPU, of 2k and k, gave its fixed cost at once but
  paid two: at the command's defaults a GPU call was the whole round's ideal
  time, and round 0 took twice it.)
- **Steals in chunks.** An idle GPU steals only when its model says one sub-load
  ends before the CPUs would have emptied the buffer (the source's GPUs are always
  the faster), and then its share of the buffer in the equal-finish split of its
  model and the CPUs', not one sub-load a call: each call pays the fixed cost.
- **Ratios.** The executed shares are the next ratios only after a balanced round.
  Stealing only moves work *to* the GPUs, so a round in which the GPUs got too much
  (the CPU empties its buffer and idles, for longer than its longest call and
  ``slack`` of the round, while a GPU is still busy) does not show in the shares; a
  GPU that idles at the end for longer than ``slack`` of the round while the CPU runs
  its last sub-loads does not either; and after a round in which GPUs stole, the
  shares understate them. After such rounds, after round 0, and before a round of
  another size (with a fixed cost per call the shares of m sub-loads are not those
  of m'), the next ratios are the equal-finish split of the models, whose fixed
  point is the ideal split.
- Sub-loads are dealt by earliest finish (`distribute`), not by largest remainder:
  with a few slow CPU sub-loads a round, one more CPU sub-load can cost more than
  the GPU gains.

Devices that fail are retired; their sub-loads go back to the CPU buffer.
A remote CPU (a Dask worker's, `runtime.scheduler.workers`) pays a round trip
per call, so it takes guided self-scheduling chunks from the front of the
buffer (ceil(left / (2 x CPUs)) sub-loads, down to one) instead of one at a time.
"""

from collections import deque

import numpy as np

from .bundler import Bundler
from .profiler import call_model, finish_time, ratios_from_rates, split_by_models

__all__ = ["run_hass", "distribute", "sample_sizes", "one_size_model", "device_model"]


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


def sample_sizes(devices, job, m, profile_units=None):
    """Each GPU's profile sample in a round 0 of ``m`` sub-loads.

    ``profile_units`` when given; else what fills the GPU (`Device.saturation_units`;
    the source: "the number of SPs"), or a tenth of an even share when that is more,
    at most an even share (m over the devices). A GPU that is not full from an even
    share costs as much for it as for its fill, so its sample is its fill, up to the
    round less one sub-load per CPU shared among such GPUs. At least one sub-load."""
    gpus = [d for d in devices if d.kind == "gpu"]
    cpus = len(devices) - len(gpus)
    even = m // max(len(devices), 1)
    tenth = m // (10 * max(len(devices), 1))
    room = (m - cpus) // max(len(gpus), 1)
    sizes = {}
    for g in gpus:
        fill = g.saturation_units(job)
        if profile_units:
            k = profile_units
        elif fill and fill > even:
            k = min(2 * fill, room)
        else:
            k = min(max(fill or 1, tenth), even)
        sizes[g] = max(1, min(k, g.capacity(job)))
    return sizes


def one_size_model(calls):
    """``(T, 0, n)``: the call-time model of calls of one size n (mean time T). A call of
    up to n sub-loads costs at most T (a + b n' <= a + b n), a larger one at most T per n
    sub-loads ((a / n + b) n'): exact where the cost is all fixed and where it is all per
    sub-load, an upper bound between."""
    return float(np.mean([t for _, t in calls])), 0.0, calls[0][0]


def device_model(device, calls, job):
    """The call-time model ``(a, b, n_cap)`` of ``device`` from its ``(sub-loads, seconds)``
    calls: `call_model` where they have two sizes or more; for one size, a GPU's
    `one_size_model`, a CPU's rate (`call_model`). A GPU call below the sub-loads that
    fill the GPU costs as much as one of its fill, and counts as one."""
    if device.kind != "gpu":
        return call_model(calls)
    fill = device.saturation_units(job) or 1
    calls = [(max(n, fill), t) for n, t in calls]
    if len({n for n, _ in calls}) == 1:
        return one_size_model(calls)
    return call_model(calls)


def _models(calls, alive, job):
    """Each alive device's model from its calls so far (`device_model`); a device that
    has run nothing yet gets the slowest time per sub-load of the others (at the size
    each model is trusted to), so that it is tried."""
    models = {d: device_model(d, calls[d], job) for d in alive if calls.get(d)}
    slowest = max((_cost(md, md[2]) / md[2] for md in models.values()), default=1.0)
    return {d: models.get(d, (0.0, slowest)) for d in alive}


def _cost(model, n):
    """What ``model`` says a call of ``n`` sub-loads costs."""
    a, b = model[0], model[1]
    cap = model[2] if len(model) > 2 else np.inf
    return a + b * n if n <= cap else a + b * cap + (n - cap) * (a / cap + b)


def run_hass(engine, pool, *, profile_units=None, slack=0.02, steal_rates=True):
    job = engine.job
    bundler = Bundler()
    ratios, final, final_round, steady = None, False, None, 0
    rounds, profiling = [], 0.0
    calls = {}          # device -> (sub-loads, seconds) of every call so far
    for rnd, load in pool:
        engine.round = rnd
        t0 = engine.now()
        devices = [d for d in engine.alive if d.can_run(job)]
        load = list(load.tolist())
        m = len(load)
        gpus = [d for d in devices if d.kind == "gpu"]
        cpus = [d for d in devices if d.kind != "gpu"]
        first = ratios is None
        if first:   # round 0: a GPU's bundle is its profile sample
            counts = sample_sizes(devices, job, m, profile_units)
            counts.update({c: 0 for c in cpus})
        else:       # with no CPU the buffer is the host's, emptied by steals alone
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
        finish = {d: t0 for d in devices}
        longest = [0.0]     # the CPU's longest call: the granularity of its finish time
        sampled = [0.0]     # when the last profile sample ended
        running = {}        # device -> (start, sub-loads) of its call in flight
        assigned = {d.name: counts[d] / m if m else 0.0 for d in devices}

        def busy(ds):
            """``(models, delays)`` of the devices ``ds`` that have run a call: each one's
            model, and the time left of its call in flight (what its model says the call
            costs, less the time it has run)."""
            now = engine.now()
            models = _models(calls, [d for d in ds if calls.get(d) and d in engine.alive], job)
            delays = {}
            for d, md in models.items():
                if d in running:
                    since, n = running[d]
                    delays[d] = max(0.0, _cost(md, n) - (now - since))
            return models, delays

        def worth_stealing(g, cm, cd):
            """A steal that ends before the CPUs would have emptied the buffer (always
            without CPUs, or before one has finished a call); a call below the GPU's
            fill costs as much as its fill."""
            if not cm:
                return True
            fill = g.saturation_units(job) or 1
            return _cost(_models(calls, [g], job)[g], fill) < finish_time(cm, len(buffer), cd)

        def steal_size(g, cm, cd):
            """An idle GPU's share of the buffer in the equal-finish split of its model, the
            CPUs' and the other GPUs' (each once its call in flight ends; one that has not
            finished a call yet counts as this one, free now), the nearer whole number
            that ends first; without CPU models, what its model says costs no more than
            one sub-load. At least its fill (a smaller call costs the same), at most the
            buffer and what it holds."""
            gm = _models(calls, [g], job)[g]
            fill = g.saturation_units(job) or 1
            if cm:
                om, od = busy([x for x in gpus if x is not g])
                om.update({x: gm for x in gpus
                           if x is not g and x not in om and x in engine.alive})
                share = split_by_models({g: gm, **om, **cm}, len(buffer),
                                        {**od, **cd})[g] * len(buffer)

                def ends(n):  # the later of the steal's end and the CPUs'
                    rest = len(buffer) - n
                    return max(_cost(gm, max(n, fill)), finish_time(cm, rest, cd) if rest else 0)
                n = min((int(share), int(share) + 1), key=ends)
            else:
                n = int(gm[2]) if gm[1] == 0 else 1
            return max(1, min(max(n, fill), len(buffer), g.capacity(job)))

        def next_call(d):
            if d.kind == "gpu":
                if d not in started:
                    started.add(d)
                    if len(bundles.get(d, ())):
                        running[d] = (engine.now(), len(bundles[d]))
                        return bundles[d], "profile" if first else "bundle"
                cm, cd = busy(cpus) if buffer else ({}, {})
                if buffer and worth_stealing(d, cm, cd):
                    n = steal_size(d, cm, cd)
                    running[d] = (engine.now(), n)
                    stolen[d] += n
                    return np.array([buffer.pop() for _ in range(n)][::-1], np.int64), "steal"
                return None
            if buffer:
                k = 1
                if d.remote:  # guided self-scheduling: a round trip per call, not per sub-load
                    k = max(1, -(-len(buffer) // (2 * len(cpus))))
                running[d] = (engine.now(), k)
                return np.array([buffer.popleft() for _ in range(k)], np.int64), "unit"
            return None

        def on_done(done):
            running.pop(done.device, None)
            executed[done.device] += len(done.units)
            finish[done.device] = done.end
            calls.setdefault(done.device, []).append((len(done.units), done.seconds))
            longest[0] = max(longest[0], done.end - done.start if done.what == "unit" else 0.0)
            if done.what == "profile":
                sampled[0] = max(sampled[0], done.end - t0)

        def on_fault(d, units):
            running.pop(d, None)
            buffer.extendleft(reversed(units.tolist()))

        engine.drive(next_call, on_done, on_fault)
        end = engine.now()
        if first:
            profiling = sampled[0]
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
            new = ratios or ratios_from_rates(shares)
        elif first or unbalanced or nxt != m:
            new = split_by_models(_models(calls, alive, job), nxt)
        else:
            new = ratios_from_rates(shares)
        if not first and not final and m:
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
            "rate_correction": bool(unbalanced) and not first and not final,
        })
        ratios = {d: new.get(d, 0.0) for d in alive}
    models = _models(calls, [d for d in engine.alive if calls.get(d)], job)
    return {"rounds": rounds, "final_round": final_round, "profiling_seconds": profiling,
            "ratios": {d.name: r for d, r in ratios.items()},
            "models": {d.name: {"call_seconds": a, "seconds_per_subload": b, "trusted_to": n}
                       for d, (a, b, n) in models.items()}}
