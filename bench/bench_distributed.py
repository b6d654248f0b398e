"""Benchmark vcut's scale-out on Dask (LocalCluster worker processes on this machine).

Three tables, with the targets of the issue (Dask scale-out) beside them:

1. **batch**: the ten samples x p in {8, 64} as ``vcut analyze --no-baselines``
   rows, sequentially in this process and as ``vcut batch`` on 2 workers; wall
   times and their ratio (target <= 0.6), and whether every row's figures are
   equal.
2. **distributed partitioning**: WB-Libra and HDRF on the largest shared graph
   (cnr-2000, 2.7 M edges) and ego-Twitter with 2, 4 and 8 workers (simulated
   by processes; this machine has 2 cores, so 4 and 8 share them): replication
   factor over the sequential run's (target: within 5 %), balance, wall time
   and edges per second per worker; then the projection for 10^9 edges on 32
   workers from the measured per-worker rate.
3. **faults**: ``--faults`` runs of a distributed partition, each with one
   worker process killed (SIGKILL) at a random moment, with the graph read by
   the driver and out of core; results that differ from the undisturbed run
   (target: 0 lost).
4. **hass**: the scheduler's jobs (string search, matrix product) under HASS,
   greedy and min-min over the workers of a 2-process cluster (``--devices
   dask``) beside the host CPU alone: makespans, each worker's share, whether
   the result is the job's reference; then ``--faults`` HASS runs with one
   worker killed at a random moment (target: 0 lost).
5. **out-of-core**: cnr-2000 and wave (METIS), gunzipped, and an R-MAT edge list of 2^21
   vertices and 16.8 M edges (repeats and self-loops kept) partitioned on 2
   workers with the graph read by this process (`partition_distributed`) and
   read in pieces by the workers (`partition_file`, ``--out-of-core``), each
   in a fresh process: wall time, edges/s, this process's and the largest
   worker's peak resident memory, and whether the two wrote the same file.

Usage: python bench/bench_distributed.py [--datasets DIR]
       [--skip batch,partition,faults,hass,outofcore] [--ps 8,64] [--faults 20] [--p 32]
       [--batch 8192] [--scratch DIR] [--rmat-scale 21]
"""

import argparse
import json
import os
import signal
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import read_graph  # noqa: E402
from runtime.dask_cluster import dask_client  # noqa: E402
from vcut.distributed import partition_distributed  # noqa: E402
from vcut.cli.analyze import batch_options  # noqa: E402
from vcut.partition import partition_graph  # noqa: E402
from vcut.pipeline.batch import BatchJob, run_batch, run_job  # noqa: E402

FIGURES = ("makespan", "lower_bound", "speedup", "communication_bytes", "hop_bytes")
GRAPHS = ("cnr-2000.arcs.txt.gz", "ego-Twitter-undirected.lg.gz")


def bench_batch(ps):
    with open(os.path.join(ROOT, "samples", "manifest.json")) as fh:
        samples = json.load(fh)["samples"]
    jobs = [BatchJob(s["name"], (os.path.join(ROOT, "samples", s["source"]),), (), p,
                     ("--no-baselines",) + tuple(o for d in s["defines"] for o in ("-D", d)))
            for s in samples for p in ps]
    run_job(jobs[0], batch_options)  # compile the kernels here once, as the workers will on their first row
    t = time.perf_counter()
    seq = [run_job(j, batch_options) for j in jobs]
    t_seq = time.perf_counter() - t
    with dask_client(workers=2) as client:
        client.run(run_job, jobs[0], batch_options)  # the workers' first row compiles their kernels
        t = time.perf_counter()
        rows = run_batch(jobs, client, options_of=batch_options)
        t_par = time.perf_counter() - t
    same = all({k: a.get(k) for k in FIGURES} == {k: b.get(k) for k in FIGURES}
               for a, b in zip(seq, rows))
    print(f"\n## batch: {len(samples)} samples x p in {ps} = {len(jobs)} runs "
          "(vcut analyze --no-baselines)\n")
    print("| run | status | seconds (sequential) |")
    print("|---|---|---:|")
    for r in seq:
        print(f"| {r['job']} p={r['p']} | {r['status']} | {r['seconds']:.1f} |")
    print(f"\n| | wall s | ratio | target |\n|---|---:|---:|---|\n"
          f"| sequential | {t_seq:.1f} | 1.00 | |\n"
          f"| vcut batch, 2 workers | {t_par:.1f} | {t_par / t_seq:.2f} | <= 0.6 |\n"
          f"\nrows equal to the sequential runs: {same}")


def bench_partition(datasets, p, batch):
    print(f"\n## distributed partitioning, p = {p}, batch {batch:,} edges per worker per round\n")
    print("| graph | algo | workers | RF | RF / sequential | imbalance | wall s | "
          "edges/s per worker | target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    rates = []
    for name in GRAPHS:
        path = os.path.join(datasets, name)
        if not os.path.exists(path):
            print(f"| {name} | missing | | | | | | | |")
            continue
        g = read_graph(path)
        for algo in ("wb-libra", "hdrf"):
            partition_graph(g, p, algo)  # warm-up (compilation)
            t = time.perf_counter()
            seq = partition_graph(g, p, algo)
            ts = time.perf_counter() - t
            m = len(seq.src)

            def imbalance(part):
                return (part.metrics.edge_imbalance if algo == "hdrf"
                        else part.metrics.edge_weight_imbalance)

            print(f"| {name} | {algo} | sequential | {seq.metrics.replication_factor:.3f} | 1 | "
                  f"{imbalance(seq):.4f} | {ts:.2f} | {m / ts:,.0f} | |")
            for workers in (2, 4, 8):
                with dask_client(workers=workers) as client:
                    partition_distributed(g, p, algo, client=client, batch=batch)  # warm-up
                    t = time.perf_counter()
                    d = partition_distributed(g, p, algo, client=client, batch=batch)
                    td = time.perf_counter() - t
                ratio = d.metrics.replication_factor / seq.metrics.replication_factor
                rates.append(m / td / workers)
                print(f"| {name} | {algo} | {workers} | {d.metrics.replication_factor:.3f} | "
                      f"{ratio:.3f} | {imbalance(d):.4f} | {td:.2f} | {m / td / workers:,.0f} | "
                      f"RF within 5 %: {'met' if ratio <= 1.05 else 'MISSED'} |")
    if rates:
        rate = min(rates)
        print(f"\nprojection: 10^9 edges on 32 workers at the slowest measured per-worker rate "
              f"({rate:,.0f} edges/s) = {1e9 / (rate * 32):,.0f} s, if the driver's merge kept "
              "up (it does not: see docs/vcut.md)")


def bench_faults(datasets, faults, scratch):
    import gzip
    import shutil

    from vcut.outofcore import partition_file

    src = os.path.join(ROOT, "tests", "data", "wiki-Vote.txt.gz")
    g = read_graph(src)
    os.makedirs(scratch, exist_ok=True)
    plain = os.path.join(scratch, "wiki-Vote.txt")
    with gzip.open(src, "rb") as fh, open(plain, "wb") as out:
        shutil.copyfileobj(fh, out)
    rng = np.random.default_rng(0)

    def in_memory(client):
        return partition_distributed(g, 8, "wb-libra", client=client, batch=512).assignment

    def out_of_core(client):
        out = os.path.join(scratch, "faults.parts")
        partition_file(plain, 8, "wb-libra", client=client, batch=512, output=out,
                       piece_bytes=100_000)
        return np.loadtxt(out, dtype=np.int64)

    print(f"\n## faults: {faults} runs of wb-libra on wiki-Vote per path (2 workers, batch 512), "
          "one worker killed (SIGKILL) at a random moment of each\n")
    print("| path | run s | faults (killed mid-run) | results lost or changed | target |\n"
          "|---|---:|---:|---:|---|")
    import contextlib

    stack = contextlib.ExitStack()
    client = stack.enter_context(dask_client(workers=2))
    try:
        for name, run in (("graph read by the driver", in_memory),
                          ("out of core (read by the workers)", out_of_core)):
            want = run(client)
            t = time.perf_counter()
            run(client)
            span = time.perf_counter() - t
            lost = injected = fresh = 0
            for k in range(faults):
                pids, wait = [], time.perf_counter()
                while len(pids) < 2:  # both workers back (the scheduler may still list a dead one)
                    time.sleep(0.1)
                    pids = list(client.run(os.getpid).values())
                    if len(pids) < 2 and time.perf_counter() - wait > 30:
                        # a nanny that did not bring its worker back (seen with distributed
                        # 2026.8 now and then): the runs went on without it; a fresh
                        # cluster for the next fault
                        fresh += 1
                        stack.close()
                        client = stack.enter_context(dask_client(workers=2))
                        wait = time.perf_counter()
                got = {}
                th = threading.Thread(target=lambda: got.update(a=run(client)))
                th.start()
                time.sleep(rng.uniform(0.1, 0.8) * span)
                try:
                    os.kill(pids[k % 2], signal.SIGKILL)
                    injected += th.is_alive()
                except ProcessLookupError:
                    pass
                th.join()
                if "a" not in got or not np.array_equal(got["a"], want):
                    lost += 1
            print(f"| {name} | {span:.1f} | {injected} of {faults} mid-run | {lost} | 0 |"
                  + (f" ({fresh} workers not brought back by their nanny: fresh cluster)"
                     if fresh else ""), flush=True)
    finally:
        stack.close()


def _hass_run(job, devices, policy, client):
    from runtime.scheduler import schedule

    r = schedule(job, devices, policy, rounds=8, client=client)
    return r, job.same(r.result, job.reference())


def bench_hass(faults):
    from runtime.scheduler.jobs import make_job

    jobs = [make_job("string-search", size=64e6, units=256), make_job("matmul", size=1536,
                                                                        units=256)]
    print("\n## HASS over the workers of a 2-process cluster (this machine: 2 cores)\n")
    print("| job | devices | policy | makespan s | sub-loads per device | result = reference |")
    print("|---|---|---|---:|---|---|")
    with dask_client(workers=2) as client:
        for job in jobs:
            for devices, policy in (("cpu", "hass"), ("dask", "hass"), ("dask", "greedy"),
                                    ("dask", "min-min")):
                r, same = _hass_run(job, devices, policy, client)
                shares = ", ".join(f"{k} {v}" for k, v in r.units.items())
                print(f"| {job.kind} {job.n_units} | {devices} | {policy} | {r.makespan:.3f} | "
                      f"{shares} | {same} |")
        job = make_job("string-search", size=16e6, units=256)
        t = time.perf_counter()
        _hass_run(job, "dask", "hass", client)
        span = time.perf_counter() - t
        rng = np.random.default_rng(1)
        lost = survived = 0
        for k in range(faults):
            pids = []
            while len(pids) < 2:  # both workers up (the nanny restarts a killed one)
                time.sleep(0.1)
                try:
                    pids = list(client.run(os.getpid).values())
                except OSError:  # a worker still leaving
                    pids = []
            got = {}

            def run():
                try:
                    got["r"] = _hass_run(job, "dask", "hass", client)
                except Exception as exc:  # noqa: BLE001 - counted as lost
                    got["error"] = exc

            th = threading.Thread(target=run, daemon=True)
            th.start()
            time.sleep(rng.uniform(0.2, 0.8) * span)
            os.kill(pids[k % 2], signal.SIGKILL)
            th.join(20 * span)  # a run still going by then counts as lost
            if "r" not in got or not got["r"][1]:
                lost += 1
            elif got["r"][0].faults:
                survived += 1
    print(f"\n{faults} HASS runs of string-search 16 MB / 256 sub-loads ({span:.1f} s each), one "
          f"worker killed in each: {survived} faults seen and survived, {lost} results lost or "
          "wrong (target 0)")


def _peak_rss():
    """This process's peak resident memory in bytes (VmHWM: unlike ru_maxrss it does
    not carry the parent's peak over exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _ooc_child(mode, path, algo, p, batch, out):
    """One partitioning in this (fresh) process; prints its figures as JSON."""
    from vcut.outofcore import partition_file
    from vcut.output import write_partition

    warm = os.path.join(os.path.dirname(out), "warm.txt")
    with open(warm, "w") as fh:
        fh.write("".join(f"{i} {(7 * i + 3) % 500}\n" for i in range(2000)))
    with dask_client(workers=2) as client:
        partition_file(warm, p, algo, client=client, batch=batch, piece_bytes=4000)  # compile
        t = time.perf_counter()
        if mode == "memory":
            g = read_graph(path)
            part = partition_distributed(g, p, algo, client=client, batch=batch)
            write_partition(part, out, details=False)
            m, rf = len(part.src), part.metrics.replication_factor
            del g, part
        else:
            r = partition_file(path, p, algo, client=client, batch=batch, output=out)
            m, rf = r.simple_edges, r.metrics.replication_factor
        wall = time.perf_counter() - t
        workers = max(client.run(_peak_rss).values())
    print(json.dumps({"wall": wall, "m": m, "rf": rf, "driver": _peak_rss(), "worker": workers}))


def bench_outofcore(datasets, scratch, scale, p, batch):
    import gzip
    import shutil
    import subprocess

    from ir_graph import write_graph
    from runtime.generators import rmat

    os.makedirs(scratch, exist_ok=True)
    inputs = []
    for name, gz in (("cnr-2000", "cnr-2000.arcs.txt.gz"), ("wave (METIS)", "wave.graph.gz")):
        src = os.path.join(datasets, gz)
        if os.path.exists(src):
            plain = os.path.join(scratch, gz[:-3])
            if not os.path.exists(plain):
                with gzip.open(src, "rb") as fh, open(plain, "wb") as out:
                    shutil.copyfileobj(fh, out)
            inputs.append((name, plain))
    synth = os.path.join(scratch, f"rmat{scale}.edgelist")
    if not os.path.exists(synth):
        write_graph(rmat(scale, 8, seed=1, simple=False), synth)
    inputs.append((f"rmat{scale} (ef 8, repeats kept)", synth))
    print(f"\n## out-of-core partitioning, 2 workers, p = {p}, batch {batch:,}\n")
    print("| graph | file MB | algo | read by | wall s | edges/s | this process peak MB | "
          "largest worker peak MB | same file |")
    print("|---|---:|---|---|---:|---:|---:|---:|---|")
    for name, path in inputs:
        mb = os.path.getsize(path) / 1e6
        for algo in ("dbh", "hdrf"):
            outs = {}
            for mode in ("memory", "pieces"):
                out = os.path.join(scratch, f"{mode}.parts")
                got = subprocess.run([sys.executable, __file__, "--ooc-child", mode, path, algo,
                                      str(p), str(batch), out], capture_output=True, text=True)
                if got.returncode:
                    print(f"| {name} | {mb:.0f} | {algo} | {mode} | failed: "
                          f"{got.stderr.strip().splitlines()[-1][:80]} | | | | |")
                    continue
                r = json.loads(got.stdout.strip().splitlines()[-1])
                outs[mode] = out
                same = ""
                if mode == "pieces" and "memory" in outs:
                    same = "yes" if subprocess.run(["cmp", "-s", outs["memory"], out]).returncode == 0 \
                        else "NO"
                who = "this process" if mode == "memory" else "the workers (out of core)"
                print(f"| {name} | {mb:.0f} | {algo} | {who} | {r['wall']:.1f} | "
                      f"{r['m'] / r['wall']:,.0f} | {r['driver'] / 1e6:,.0f} | "
                      f"{r['worker'] / 1e6:,.0f} | {same} |", flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--ooc-child":
        mode, path, algo, p, batch, out = sys.argv[2:8]
        return _ooc_child(mode, path, algo, int(p), int(batch), out)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--skip", default="")
    ap.add_argument("--ps", default="8,64")
    ap.add_argument("--p", type=int, default=32)
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--faults", type=int, default=20)
    ap.add_argument("--scratch", default=os.path.join(ROOT, "bench", "out", "outofcore"))
    ap.add_argument("--rmat-scale", type=int, default=21)
    a = ap.parse_args()
    skip = set(a.skip.split(","))
    if "batch" not in skip:
        bench_batch([int(x) for x in a.ps.split(",")])
    if "partition" not in skip:
        bench_partition(a.datasets, a.p, a.batch)
    if "faults" not in skip:
        bench_faults(a.datasets, a.faults, a.scratch)
    if "hass" not in skip:
        bench_hass(a.faults)
    if "outofcore" not in skip:
        bench_outofcore(a.datasets, a.scratch, a.rmat_scale, a.p, a.batch)


if __name__ == "__main__":
    main()
