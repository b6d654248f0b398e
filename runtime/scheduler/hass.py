"""HASS: heterogeneous adaptive scheduling over the CPU and GPUs (Algorithm 3.1).

Per round, with the ratios of the previous round (round 0: profiling):

- each GPU gets round(ratio_g x m) sub-loads, bundled into one call launched at once;
- the CPU buffer gets the rest; the CPU runs them one at a time from the front;
- a GPU that falls idle steals one sub-load at a time from the back of the CPU
  buffer (GPUs never steal from each other);
- adaptation: the next round's ratios are the shares each device actually ran.
  When they move by at most one sub-load two rounds in a row they are final.

One addition to the source: the executed shares are the next ratios only after
a balanced round. Stealing only moves work *to* the GPUs, so a round in which the
GPUs got too much (the CPU empties its buffer and idles, for longer than its
longest call and ``slack`` of the round, while a GPU is still busy) does not show
in the shares; and after a round in which GPUs stole, the shares understate them
(each stolen sub-load paid a whole launch). After such rounds the next ratios are
the rates the round measured (a GPU's sub-loads / seconds of its bundle, the
CPU's over its busy time), whose fixed point is the equal-finish split.
The profiling sample per device defaults to what fills the largest GPU (simulated
GPUs: their saturation; the source: "the number of SPs"), or a tenth of a
round's even share when that is more.
Devices that fail are retired; their sub-loads go back to the CPU buffer.
A remote CPU (a Dask worker's, `runtime.scheduler.workers`) pays a round trip
per call, so it takes guided self-scheduling chunks from the front of the
buffer (ceil(left / (2 x CPUs)) sub-loads, down to one) instead of one at a time.
"""

from collections import deque

import numpy as np

from .bundler import Bundler
from .profiler import profile, ratios_from_rates

__all__ = ["run_hass", "distribute"]


def distribute(ratios, m, caps=None):
    """Split ``m`` sub-loads by ``ratios`` (largest remainder), at most ``caps[d]`` each."""
    keys = list(ratios)
    share = np.array([ratios[k] for k in keys], dtype=float) * m
    counts = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - counts), kind="stable")
    for i in order[: m - int(counts.sum())]:
        counts[i] += 1
    out = dict(zip(keys, counts.tolist()))
    if caps:
        for k in keys:
            out[k] = min(out[k], caps.get(k, out[k]))
    return out


def _rate(d, executed, busy, bulk):
    """Sub-loads per second: a GPU's from its bundle (steals pay a whole launch for
    one sub-load), the CPU's over its busy time."""
    if d in bulk and bulk[d][1] > 0:
        return bulk[d][0] / bulk[d][1]
    return executed[d] / busy[d] if busy[d] > 0 else 0.0


def run_hass(engine, pool, *, profile_units=None, slack=0.02, steal_rates=True):
    job = engine.job
    bundler = Bundler()
    ratios, final, final_round, steady = None, False, None, 0
    rounds, profiling = [], 0.0
    for rnd, load in pool:
        engine.round = rnd
        t0 = engine.now()
        devices = [d for d in engine.alive if d.can_run(job)]
        load = list(load.tolist())
        if ratios is None:
            k = profile_units or max([d.saturation_units(job) or 1 for d in devices] +
                                     [len(load) // (10 * len(devices))])
            k = max(1, min(k, len(load) // (len(devices) + 1)))
            samples = [np.array(load[i * k:(i + 1) * k], np.int64) for i in range(len(devices))]
            load = load[k * len(devices):]
            _, ratios = profile(engine, devices, samples)
            profiling = engine.now() - t0
            devices = [d for d in engine.alive if d.can_run(job)]
            ratios = {d: ratios.get(d, 0.0) for d in devices}
        m = len(load)
        gpus = [d for d in devices if d.kind == "gpu"]
        cpus = [d for d in devices if d.kind != "gpu"]
        if not cpus and gpus:
            pass  # no CPU: the buffer is the host's, emptied by steals alone
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
        bulk = {}           # device -> (sub-loads, seconds) of its bundle
        finish = {d: t0 for d in devices}
        longest = [0.0]     # the CPU's longest call: the granularity of its finish time
        assigned = {d.name: counts[d] / m if m else 0.0 for d in devices}

        def next_call(d):
            if d.kind == "gpu":
                if d not in started:
                    started.add(d)
                    if len(bundles.get(d, ())):
                        return bundles[d], "bundle"
                if buffer:
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
            if done.what == "bundle":
                bulk[done.device] = (len(done.units), done.end - done.start)
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
        unbalanced = idle_cpu or (steal_rates and sum(stolen.values()) > 0)
        if final:
            new = ratios
        elif unbalanced:
            new = ratios_from_rates({d: _rate(d, executed, busy, bulk) for d in alive})
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
    return {"rounds": rounds, "final_round": final_round, "profiling_seconds": profiling,
            "ratios": {d.name: r for d, r in ratios.items()}}
