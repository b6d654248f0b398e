"""HASS against min-min, greedy and Qilin (seed 004, Chapter 3).

    python bench/bench_schedule.py                 # simulated devices, the four job kinds
    python bench/bench_schedule.py --gpu           # also the host CPU + CUDA GPU 0 (real)
    python bench/bench_schedule.py --report DIR    # HTML report per job kind
    python bench/bench_schedule.py --rates         # this machine's CPU rates of the jobs

The first table is ``vcut schedule`` as users meet it: each job kind at the command's
defaults (its size and sub-loads, 10 rounds) on the default simulated devices
(``sim:cpu,sim:gpu`` and ``sim:cpu,sim:gpu,sim:gpu``), HASS and Qilin over the ideal
split, with the targets beside them (HASS <= 1.05 x the ideal on every kind, within
3 % of Qilin with one GPU).

Hand-set simulated machines (every device computes its sub-loads' real results with
the CPU implementation; time is the device model's, see runtime/scheduler/devices.py):

- ``cpu2gpu``: sim:cpu (speed 1, 20 us a call) + two GPUs of speed 4 and 2, 0.1 ms launch, 10 us
  transfer start-up, 12 GB/s; a GPU call is full from one sub-load on (the
  source sizes sub-loads to at least the GPU's core count);
- ``cpu1gpu``: sim:cpu + the speed-4 GPU, for Qilin (one CPU and one GPU only);
- card-shaped: a CPU and a GPU at the speeds measured on the H200 host (matmul
  6000², string search 50 MB), the GPU's fixed cost of a call swept;
- random machines: a CPU and 1-3 GPUs of random speed, launch and fill, random
  job sizes and rounds (``--random N`` per regime).

Tables: makespan of each policy / the ideal equal-finish split (solved exactly
for the model), and HASS / each baseline. Qilin's training is offline (not in
its makespan); the "Qilin + training" column adds it. A last table sweeps
Qilin's training fraction on a GPU that fills only from 20 sub-loads (Qilin's
smaller training run, f N / 6 sub-loads, reaches that at f = 30 %): the
steady-state round makespan (last round) of Qilin over HASS's.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from runtime.scheduler import SimDevice, schedule  # noqa: E402
from runtime.scheduler.jobs import make_job  # noqa: E402
from runtime.scheduler.jobs.base import Job  # noqa: E402
from runtime.scheduler.profiler import ideal_split  # noqa: E402
from vcut import partition_batch  # noqa: E402,F401 (registers the partition-batch job kind)

JOBS = {  # kind: (size, units): 64 MB of text, order 2048, 4096 BFS sources on RMAT 14, 64 graphs
    "string-search": (64e6, 4096),
    "matmul": (2048, 2048),
    "bfs-batch": (14, 4096),
    "partition-batch": (64, 64),
}


def machine(job, gpus=(4.0, 2.0), saturation_units=1.0):
    """The hand-set machine: every figure given, none from the defaults."""
    sat = saturation_units * job.unit_work()
    devs = [SimDevice("cpu", name="cpu", speed=1.0, overhead=2e-5)]
    for i, s in enumerate(gpus):
        devs.append(SimDevice("gpu", name=f"gpu{i}", speed=s, launch=1e-4, latency=1e-5,
                              bandwidth=12e9, saturation=sat))
    return devs


def row(cells, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))


#: The targets of the defaults table: HASS / the ideal split, HASS / Qilin (one GPU).
TARGET_IDEAL, TARGET_QILIN = 1.05, 1.03


def at_defaults(kinds, report):
    """``vcut schedule --job KIND --devices ... --policy all`` at the command's defaults."""
    from runtime.scheduler import parse_devices
    from runtime.scheduler.report import write_report

    print("## At the command's defaults (vcut schedule --job KIND --devices sim:cpu,sim:gpu"
          "[,sim:gpu]: default size, sub-loads and 10 rounds; default simulated devices)\n")
    head = ["job", "GPUs", "hass/ideal", "target", "qilin/ideal", "hass/qilin", "target",
            "ok"]
    w = [16, 4, 10, 6, 11, 10, 6, 3]
    print(row(head, w))
    misses = 0
    for kind in kinds:
        job = make_job(kind)
        for gpus in (1, 2) if job.gpu_capable else (1,):  # GPUs are left out of it
            spec = "sim:cpu" + ",sim:gpu" * gpus
            h = schedule(job, parse_devices(spec), "hass")
            q = None
            if gpus == 1 and job.gpu_capable:
                q = schedule(job, parse_devices(spec), "qilin")
            ok = h.makespan <= TARGET_IDEAL * h.ideal and \
                (q is None or h.makespan <= TARGET_QILIN * q.makespan)
            misses += not ok
            print(row([kind, gpus if job.gpu_capable else "-", f"{h.makespan / h.ideal:.3f}",
                       f"<= {TARGET_IDEAL:g}",
                       f"{q.makespan / h.ideal:.3f}" if q else "-",
                       f"{h.makespan / q.makespan:.3f}" if q else "-",
                       f"<= {TARGET_QILIN:g}" if q else "", "yes" if ok else "NO"], w))
            if report:
                runs = [h] + ([q] if q else [])
                write_report(runs, os.path.join(report, f"{kind}-defaults-{gpus}gpu.html"))
    print(f"\ntargets missed: {misses}")


def rates(gpu):
    """The jobs' work units a second at the command's defaults on this machine's CPU (the
    CpuDevice, a call at a time), and with ``gpu`` on CUDA GPU 0 (one bundle of a round's
    share): the figures `Job.sim_rates` cites."""
    from runtime.scheduler import CpuDevice

    print("## Rates of the jobs' code on this machine (work units a second)\n")
    print(row(["job", "unit", "cpu", "gpu"], [16, 6, 10, 10]))
    units = {"string-search": "bytes", "matmul": "flops", "bfs-batch": "edges",
             "partition-batch": "edges"}
    for kind in JOBS:
        job = make_job(kind)
        cpu = CpuDevice()
        ids = np.arange(min(job.n_units, 26), dtype=np.int64)
        cpu.execute(job, ids[:1])   # compile first
        best = min(sum(cpu.execute(job, ids[i:i + 1])[1] for i in range(len(ids)))
                   for _ in range(3))
        cells = [kind, units[kind], f"{len(ids) * job.unit_work() / best:.3g}"]
        if gpu and job.gpu_capable:
            from runtime.scheduler import CudaDevice

            dev = CudaDevice(0)
            dev.execute(job, ids[:1])
            t = min(dev.execute(job, ids)[1] for _ in range(3))
            cells.append(f"{len(ids) * job.unit_work() / t:.3g}")
        else:
            cells.append("-")
        print(row(cells, [16, 6, 10, 10]))


def simulated(kinds, rounds, report):
    from runtime.scheduler.report import write_report

    print("## Simulated CPU + 2 GPUs (speeds 1 : 4 : 2)\n")
    head = ["job", "hass/ideal", "last round/ideal", "min-min/ideal", "greedy/ideal",
            "hass/min-min", "hass/greedy", "final round", "stolen", "check"]
    w = [16, 10, 16, 13, 12, 12, 11, 11, 7, 6]
    print(row(head, w))
    for kind in kinds:
        size, units = JOBS[kind]
        job = make_job(kind, size=size, units=units, seed=1)
        ref = job.reference()
        res = {p: schedule(job, machine(job), p, rounds=rounds) for p in ("hass", "min-min", "greedy")}
        ok = all(job.same(r.result, ref) for r in res.values())
        h = res["hass"]
        last = h.rounds[-1]
        ideal_last = ideal_split(machine(job), job, last["units"])[0]
        print(row([kind, f"{h.makespan / h.ideal:.3f}", f"{last['makespan'] / ideal_last:.3f}",
                   f"{res['min-min'].makespan / h.ideal:.3f}",
                   f"{res['greedy'].makespan / h.ideal:.3f}",
                   f"{h.makespan / res['min-min'].makespan:.3f}",
                   f"{h.makespan / res['greedy'].makespan:.3f}",
                   "-" if h.final_round is None else h.final_round, h.stolen,
                   "ok" if ok else "DIFF"], w))
        if h.excluded:
            print(f"{'':16}  ({'; '.join(f'{k}: {v}' for k, v in h.excluded.items())})")
        if report:
            write_report(list(res.values()), os.path.join(report, f"{kind}-cpu2gpu.html"))
    print("\n## Simulated CPU + 1 GPU (speeds 1 : 4), with Qilin (training 30 %)\n")
    head = ["job", "hass/ideal", "qilin/ideal", "qilin+train/ideal", "hass/qilin",
            "hass/(qilin+train)", "last round hass/qilin"]
    w = [16, 10, 11, 17, 10, 18, 21]
    print(row(head, w))
    for kind in kinds:
        size, units = JOBS[kind]
        job = make_job(kind, size=size, units=units, seed=1)
        if not job.gpu_capable:
            print(f"{kind:>16}  (no GPU implementation: Qilin has no GPU to split with)")
            continue
        h = schedule(job, machine(job, (4.0,)), "hass", rounds=rounds)
        q = schedule(job, machine(job, (4.0,)), "qilin", rounds=rounds, training=0.3)
        print(row([kind, f"{h.makespan / h.ideal:.3f}", f"{q.makespan / h.ideal:.3f}",
                   f"{(q.makespan + q.training_seconds) / h.ideal:.3f}",
                   f"{h.makespan / q.makespan:.3f}",
                   f"{h.makespan / (q.makespan + q.training_seconds):.3f}",
                   f"{h.rounds[-1]['makespan'] / q.rounds[-1]['makespan']:.3f}"], w))
    sweep()


def sweep(rounds=8):
    """Qilin's training fraction against HASS, the steady-state round (last round)."""
    print("\n## Qilin's training fraction (matmul n = 400 in 400 sub-loads, 8 rounds; the GPU "
          "fills from 20 sub-loads, 40 % of a round)\n")
    job = make_job("matmul", size=400, units=400, seed=1)
    h = schedule(job, machine(job, (4.0,), 20), "hass", rounds=rounds)
    print(row(["training", "smaller training run", "qilin last round / hass last round"],
              [9, 20, 34]))
    for f in (0.05, 0.1, 0.2, 0.3, 0.4):
        q = schedule(job, machine(job, (4.0,), 20), "qilin", rounds=rounds, training=f)
        print(row([f"{f:.0%}", f"{q.info['training_units'][0]} sub-loads",
                   f"{q.rounds[-1]['makespan'] / h.rounds[-1]['makespan']:.3f}"], [9, 20, 34]))


class Timed(Job):
    """A job of ``n`` sub-loads with a real job's work and bytes and no computation (its
    result: the ids), for studies of a machine's time model alone."""
    kind = "timed"

    def __init__(self, n, work, unit_bytes, setup_bytes):
        self.n_units, self.work, self.ub, self.sb = n, work, unit_bytes, setup_bytes

    def unit_work(self):
        return self.work

    def unit_bytes(self):
        return self.ub

    def setup_bytes(self):
        return self.sb

    def run_cpu(self, units):
        return units.tolist()

    def combine(self, results):
        return sorted(results)

    def reference(self):
        return list(range(self.n_units))


#: The H200 host's measured makespans (docs/notes/gpu-h200.md): job, sub-loads, CPU
#: alone, GPU alone (seconds), and the job's work / bytes per sub-load and setup bytes.
CARD = (("matmul 6000²", 375, 2.443, 0.341, 2.0 * 16 * 6000 ** 2, 16 * 6000 * 8, 6000 ** 2 * 8),
        ("string-search 50 MB", 500, 0.221, 0.156, 1e5, 1e5, 0))


def card_shaped():
    """CPU + 1 GPU with the H200 host's measured speeds (a sub-load's time: the device's
    makespan alone / sub-loads); the GPU's fixed cost of a call (launch + an unfilled
    GPU), on top, is not known from those figures, so it is swept."""
    print("\n## CPU + 1 GPU at the H200 host's measured speeds (simulated; the GPU's cost of "
          "a call swept)\n")
    head = ["job", "launch", "full from", "rounds", "cpu only", "gpu only", "hass",
            "hass/ideal", "best single / hass"]
    w = [20, 7, 10, 6, 9, 9, 9, 10, 18]
    print(row(head, w))
    gains = []
    for name, n, cpu_s, gpu_s, work, ub, sb in CARD:
        job = Timed(n, work, ub, sb)
        for launch, full in ((5e-5, 1), (2e-4, 4), (2e-3, 10)):
            def devices():
                return [SimDevice("cpu", name="cpu", speed=work * n / cpu_s / 1e9, overhead=0),
                        SimDevice("gpu", name="gpu", speed=work * n / gpu_s / 1e9, launch=launch,
                                  latency=1e-5, bandwidth=25e9, saturation=full * work)]
            for rounds in (4, 8, 32):
                cpu, gpu = devices()   # alone: the CPU a sub-load a call, the GPU a bundle
                one = [schedule(job, [cpu], "greedy", rounds=rounds).makespan,
                       schedule(job, [gpu], "hass", rounds=rounds).makespan]
                h = schedule(job, devices(), "hass", rounds=rounds)
                gains.append(min(one) / h.makespan)
                print(row([name, f"{launch * 1e3:g} ms", f"{full} s-l", rounds,
                           f"{one[0]:.3f}", f"{one[1]:.3f}", f"{h.makespan:.3f}",
                           f"{h.makespan / h.ideal:.3f}", f"{gains[-1]:.2f}"], w))
    print(f"\nbest single / hass: geometric mean {np.exp(np.mean(np.log(gains))):.3f}, "
          f"least {min(gains):.3f}")


def random_machines(cases, seed=1):
    """HASS on random simulated machines: a CPU and 1-3 GPUs of random speed (0.5-10 x the
    CPU), launch (10 us - 5 ms), fill (0-16 sub-loads), jobs of 64-4096 sub-loads in up to
    32 rounds, with or without setup transfers. Two regimes: rounds of at least 128
    sub-loads, and of at least 32 (where a GPU's fill and launch can outweigh a round)."""
    print(f"\n## Random simulated machines ({cases} per regime, seed {seed})\n")
    head = ["sub-loads a round", "hass/ideal gmean", "p90", "max", "best single/hass gmean",
            "least", "hass slower than one device", "greedy/hass least"]
    w = [17, 16, 6, 6, 22, 6, 28, 17]
    print(row(head, w))
    work = 1e6
    for floor, sizes in ((128, (1000, 4096)), (32, (64, 256, 1000, 4096))):
        rng = np.random.default_rng(seed)
        out = []
        for case in range(cases):
            n = int(rng.choice(sizes))
            rounds = max(1, min(int(rng.choice([2, 4, 8, 16, 32])), n // floor))
            job = Timed(n, work, float(rng.choice([0, 1e4, 1e6])), float(rng.choice([0, 1e7, 1e8])))
            gpus = [(float(rng.uniform(0.5, 10)), float(rng.choice([1e-5, 1e-4, 1e-3, 5e-3])),
                     float(rng.choice([0, 1, 4, 16]))) for _ in range(int(rng.integers(1, 4)))]
            overhead = float(rng.choice([0, 2e-5, 2e-4]))

            def devices():
                return [SimDevice("cpu", name="cpu", speed=1.0, overhead=overhead)] + [
                    SimDevice("gpu", name=f"g{i}", speed=s, launch=l, latency=1e-5,
                              bandwidth=12e9, saturation=f * work)
                    for i, (s, l, f) in enumerate(gpus)]
            h = schedule(job, devices(), "hass", rounds=rounds)
            g = schedule(job, devices(), "greedy", rounds=rounds)
            alone = min(schedule(job, [d], "greedy" if d.kind == "cpu" else "hass",
                                 rounds=rounds).makespan for d in devices())
            out.append((h.makespan / h.ideal, alone / h.makespan, g.makespan / h.makespan))
        a = np.array(out)
        gm = np.exp(np.log(a).mean(0))
        print(row([f">= {floor}", f"{gm[0]:.3f}", f"{np.quantile(a[:, 0], 0.9):.3f}",
                   f"{a[:, 0].max():.3f}", f"{gm[1]:.3f}", f"{a[:, 1].min():.3f}",
                   f"{int((a[:, 1] < 1).sum())} of {cases}", f"{a[:, 2].min():.3f}"], w))


def diagnose(h, cpu_alone, cpu_name):
    """Lines on a real HASS run: its profiling, each device's fitted call model, each
    round's makespan, and a CPU sub-load's time beside the GPU against alone (``cpu_alone``
    seconds; a ratio above 1: the CPU computes slower while it shares the host with the
    thread driving the GPU)."""
    models = h.info.get("models", {})
    out = [f"hass: profiling {h.profiling_seconds:.3f} s, {h.stolen} stolen, ratios final "
           f"{'never' if h.final_round is None else f'after round {h.final_round}'}; "
           "rounds " + ", ".join(f"{r['makespan']:.3f}" for r in h.rounds) + " s",
           "call models: " + "; ".join(
               f"{d} {m['call_seconds'] * 1e3:.3g} ms + {m['seconds_per_subload'] * 1e3:.3g} ms "
               f"a sub-load (to {m['trusted_to']})" for d, m in models.items())]
    if cpu_name in models and cpu_alone > 0:
        beside = models[cpu_name]["seconds_per_subload"]
        out.append(f"a CPU sub-load: {cpu_alone * 1e3:.3g} ms alone, {beside * 1e3:.3g} ms beside "
                   f"the GPU (x {beside / cpu_alone:.2f}; above 1: the CPU slows while the GPU "
                   "runs)")
    return out


def real(rounds, report):
    """The host CPU and CUDA GPU 0: measured makespans, the source's two workloads."""
    from runtime.scheduler import CpuDevice, CudaDevice
    from runtime.scheduler.report import write_report

    print("\n## Host CPU + CUDA GPU 0 (wall clock)\n")
    head = ["job", "cpu only", "gpu only", "hass", "min-min", "greedy", "qilin",
            "best single / hass", "check"]
    w = [16, 9, 9, 9, 9, 9, 9, 18, 6]
    print(row(head, w))
    for kind, size, units in (("string-search", 50e6, 500), ("matmul", 6000, 375)):
        job = make_job(kind, size=size, units=units, seed=1)
        ref = job.reference()
        cpu, gpu = CpuDevice(), CudaDevice(0)
        job.run_gpu(np.arange(1), gpu)  # compile the kernels and cache the setup data first
        job.run_cpu(np.arange(1))
        t = {}
        for name, devs in (("cpu only", [cpu]), ("gpu only", [gpu])):
            t[name] = schedule(job, devs, "greedy" if name == "cpu only" else "hass",
                               rounds=rounds).makespan
        res = {p: schedule(job, [cpu, gpu], p, rounds=rounds)
               for p in ("hass", "min-min", "greedy", "qilin")}
        ok = all(job.same(r.result, ref) for r in res.values())
        print(row([kind, f"{t['cpu only']:.3f}", f"{t['gpu only']:.3f}"]
                  + [f"{res[p].makespan:.3f}" for p in ("hass", "min-min", "greedy", "qilin")]
                  + [f"{min(t.values()) / res['hass'].makespan:.2f}", "ok" if ok else "DIFF"], w))
        for line in diagnose(res["hass"], t["cpu only"] / units, cpu.name):
            print(f"{'':16}  {line}")
        if report:
            write_report(list(res.values()), os.path.join(report, f"{kind}-real.html"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default=",".join(JOBS), help="comma-separated job kinds")
    ap.add_argument("--rounds", type=int, default=32)
    ap.add_argument("--gpu", action="store_true", help="also run on the host CPU + CUDA GPU 0")
    ap.add_argument("--real-only", action="store_true",
                    help="with --gpu: only the host CPU + CUDA GPU 0 table")
    ap.add_argument("--report", metavar="DIR", help="write an HTML report per job here")
    ap.add_argument("--random", type=int, default=150, metavar="N",
                    help="random simulated machines per regime (default 150)")
    ap.add_argument("--rates", action="store_true",
                    help="only the jobs' rates on this machine's CPU (and GPU 0 with --gpu)")
    ap.add_argument("--defaults-only", action="store_true",
                    help="only the table at the command's defaults")
    args = ap.parse_args()
    if args.report:
        os.makedirs(args.report, exist_ok=True)
    if args.rates:
        rates(args.gpu)
        return
    t0 = time.perf_counter()
    if not (args.gpu and args.real_only):
        at_defaults(args.jobs.split(","), args.report)
    if args.defaults_only:
        print(f"\n({time.perf_counter() - t0:.0f} s)")
        return
    if not (args.gpu and args.real_only):
        print()
        simulated(args.jobs.split(","), args.rounds, args.report)
        card_shaped()
        random_machines(args.random)
    if args.gpu:
        real(args.rounds, args.report)
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
