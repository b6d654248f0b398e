"""analyze at scale: time, rate and peak memory of every phase, and of the whole command.

Generates traces of `bench/programs/dijkstra_mibench.c` (MiBench network/dijkstra
in shape; ``-D PAIRS=N`` scales the run: 30 pairs ~ 73 M instructions, like
MiBench's small input) and measures, in a fresh process per configuration:

* per phase (load the trace, build the graph, partition, interactions,
  mapping, simulation, the baseline mappings): seconds, rate (nodes/s; the
  simulation: events/s) and the process's peak resident memory during the
  phase (sampled every 2 ms from /proc/self/statm), in bytes per node;
* the whole ``vcut analyze TRACE -p P`` command: wall seconds, nodes/s and
  peak RSS (``ru_maxrss`` of the child) in bytes per node.

Targets (issue 13): the 74 M-node trace at -p 8 and -p 1024 in <= 12 GB
(<= 160 bytes/node) and <= 5 min; >= 1 M nodes/s end to end at p = 8 with
--no-baselines, >= 300 k nodes/s with the baselines; simulator >= 2 M events/s.

Usage::

    python bench/bench_scale.py [--pairs 4,30] [-p 8,1024] [--workdir DIR]
                                [--no-phases | --no-commands]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "bench", "programs", "dijkstra_mibench.c")

_PHASES = r"""
import json, sys, threading, time
sys.path.insert(0, {root!r})
peak = [0]
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
def sampler():
    while True:
        r = rss()
        if r > peak[0]:
            peak[0] = r
        time.sleep(0.002)
threading.Thread(target=sampler, daemon=True).start()
rows = []
def phase(name, fn, count=None):
    peak[0] = rss()
    t = time.perf_counter()
    out = fn()
    rows.append({{"phase": name, "seconds": time.perf_counter() - t, "peak": peak[0],
                  "count": count}})
    return out
from frontend import load_trace
from ir_graph import build_graph
from mapping.analyze import cluster_graph
from mapping.interactions import interactions
from mapping.machine import table2
from mapping.placement import MAPPERS, place
from mapping.simulate import simulate
tr = phase("load trace", lambda: load_trace({trace!r}))
g = phase("graph", lambda: build_graph(tr))
obj = tr.obj_size
del tr
n = g.n
p = {p}
cl, _ = phase("partition", lambda: cluster_graph(g, p, "wb-libra"))
inter = phase("interactions", lambda: interactions(cl, obj))
m = table2(p)
pl = phase("mapping", lambda: place(inter, m, "memory-centric"))
res = phase("simulation", lambda: simulate(cl, pl.core, m, inter.value_bytes))
rows[-1]["count"] = len(cl.src) + res.messages
def baselines():
    for other in MAPPERS:
        if other != "memory-centric":
            q = place(inter, m, other)
            simulate(cl, q.core, m, inter.value_bytes)
if {baselines}:
    phase("baselines", baselines)
print(json.dumps({{"nodes": n, "edges": g.m, "rows": rows}}))
"""


def _run_child(cmd):
    """Run ``cmd``; return (stdout, wall seconds, peak RSS bytes of that child)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise ChildFailed(f"exit {proc.returncode}: {err.read().strip().splitlines()[-1:]}")
        return out.read(), wall, usage.ru_maxrss * 1024


class ChildFailed(Exception):
    pass


def make_trace(workdir, pairs):
    path = os.path.join(workdir, f"dijkstra-{pairs}.npz")
    if not os.path.exists(path):
        _run_child([sys.executable, "-m", "vcut.cli", "trace", PROGRAM, "-D", f"PAIRS={pairs}",
                    "--max-instructions", "2000000000", "--no-timing", "-o", path])
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default="4,30", help="trace sizes (PAIRS of the program)")
    ap.add_argument("-p", default="8,1024", help="cluster counts")
    ap.add_argument("--workdir", help="where traces go (default: a temporary directory)")
    ap.add_argument("--no-phases", action="store_true", help="only the whole-command runs")
    ap.add_argument("--no-commands", action="store_true", help="only the per-phase runs")
    args = ap.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="vcut-bench-scale-")
    os.makedirs(workdir, exist_ok=True)
    pairs = [int(x) for x in args.pairs.split(",")]
    ps = [int(x) for x in args.p.split(",")]
    print("| trace | nodes | p | phase | seconds | rate | peak RSS | bytes/node |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for pr in pairs:
        trace = make_trace(workdir, pr)
        for p in ps:
            if not args.no_phases:
                code = _PHASES.format(root=ROOT, trace=trace, p=p, baselines=p <= 64)
                try:
                    out, _, _ = _run_child([sys.executable, "-c", code])
                except ChildFailed as exc:
                    print(f"| PAIRS={pr} | | {p} | phases | failed: {exc} | | | |", flush=True)
                    out = None
            if not args.no_phases and out:
                doc = json.loads(out.strip().splitlines()[-1])
                n = doc["nodes"]
                for r in doc["rows"]:
                    count = r["count"] or n
                    unit = "events/s" if r["phase"] == "simulation" else "nodes/s"
                    print(f"| PAIRS={pr} | {n:,} | {p} | {r['phase']} | {r['seconds']:.2f} | "
                          f"{count / max(r['seconds'], 1e-9) / 1e6:.2f} M {unit} | "
                          f"{r['peak'] / 1e9:.2f} GB | {r['peak'] / n:.0f} |", flush=True)
            else:
                n = None
            for extra in () if args.no_commands else (["--no-baselines"], []):
                cmd = [sys.executable, "-m", "vcut.cli", "analyze", trace, "-p", str(p),
                       "--json", *extra]
                try:
                    out, wall, peak = _run_child(cmd)
                except ChildFailed as exc:
                    print(f"| PAIRS={pr} | | {p} | vcut analyze {' '.join(extra)} | failed: "
                          f"{exc} | | | |", flush=True)
                    continue
                doc = json.loads(out)
                n = doc["graph"]["nodes"]
                what = "vcut analyze " + (" ".join(extra) or "(baselines)")
                print(f"| PAIRS={pr} | {n:,} | {p} | **{what}** | {wall:.1f} | "
                      f"{n / wall / 1e6:.2f} M nodes/s | {peak / 1e9:.2f} GB | {peak / n:.0f} |",
                      flush=True)
    if not args.workdir:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
