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

With ``--spill DIR`` every run is disk-backed (``vcut analyze --spill DIR``,
the trace mapped from its file, the large arrays in spill files): the table
then gives the peak of the memory that stays resident (anonymous: what the
machine must hold) and, beside it, the peak of the whole resident set
(anonymous + mapped file pages, which the kernel drops under pressure), both
sampled from /proc every 20 ms.

Targets (issue 13): the 74 M-node trace at -p 8 and -p 1024 in <= 12 GB
(<= 160 bytes/node) and <= 5 min; >= 1 M nodes/s end to end at p = 8 with
--no-baselines, >= 300 k nodes/s with the baselines; simulator >= 2 M events/s;
a 300 M-instruction trace (``--pairs 123``) analysed disk-backed in <= 24 GB.

Usage::

    python bench/bench_scale.py [--pairs 4,30] [-p 8,1024] [--workdir DIR]
                                [--no-phases | --no-commands] [--spill DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "bench", "programs", "dijkstra_mibench.c")

_PHASES = r"""
import contextlib, json, sys, threading, time
sys.path.insert(0, {root!r})
from vcut_base.arrays import spilling
spill = {spill!r}
scope = contextlib.ExitStack()  # held to the end: a dropped one would end the spilling
scope.enter_context(spilling(spill) if spill else contextlib.nullcontext())
peak = [0]
def rss():
    if spill:  # what must stay resident: the anonymous pages
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("RssAnon"))
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
from mapping.interactions import interactions
from mapping.machine import table2
from mapping.placement import MAPPERS, place
from mapping.simulate import simulate
from vcut.clustering import cluster_graph
tr = phase("load trace", lambda: load_trace({trace!r}, mmap=bool(spill)))
g = phase("graph", lambda: build_graph(tr))
obj = tr.obj_size
del tr
n = g.n
p = {p}
algo = {algo!r}
m = table2(p)
kw = dict(latency=m.mean_message_cycles(32)) if algo == "par" else dict()
import vcut.par_steering as an
if algo == "par" and an.PAR_NUMA:  # the memory model `vcut analyze` gives par
    kw["numa"] = an.par_numa(m, p)
cl, _ = phase("partition", lambda: cluster_graph(g, p, algo, **kw))
inter = phase("interactions", lambda: interactions(cl, obj))
pl = phase("mapping", lambda: place(inter, m, "memory-centric"))
if algo == "par":  # the simulator's layout of the schedule, made once (`positioned`)
    import importlib
    phase("layout", lambda: importlib.import_module("mapping.simulate").positioned(cl))
res = phase("simulation", lambda: simulate(cl, pl.core, m, inter.value_bytes))
rows[-1]["count"] = len(cl.src) + res.messages
def baselines():
    for other in MAPPERS:
        if other != "memory-centric":
            q = place(inter, m, other, clustering=cl)  # time-aware simulates the clusters
            simulate(cl, q.core, m, inter.value_bytes)
if {baselines}:
    phase("baselines", baselines)
print(json.dumps({{"nodes": n, "edges": g.m, "rows": rows}}))
"""


def _status_peaks(pid, peaks, stop):
    """Sample ``RssAnon`` and ``VmRSS`` of process ``pid`` into ``peaks`` until ``stop``."""
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                got = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f
                       if line.startswith(("RssAnon", "VmRSS"))}
        except (OSError, ValueError):
            break
        peaks["anon"] = max(peaks["anon"], got.get("RssAnon", 0))
        peaks["rss"] = max(peaks["rss"], got.get("VmRSS", 0))
        stop.wait(0.02)


def _run_child(cmd, peaks=None):
    """Run ``cmd``; return (stdout, wall seconds, peak RSS bytes of that child);
    ``peaks`` (a dict) gets the sampled peaks of its anonymous and whole RSS."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        stop = threading.Event()
        if peaks is not None:
            peaks.update(anon=0, rss=0)
            threading.Thread(target=_status_peaks, args=(proc.pid, peaks, stop),
                             daemon=True).start()
        _, status, usage = os.wait4(proc.pid, 0)
        stop.set()
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
    ap.add_argument("--spill", metavar="DIR", help="disk-backed runs: spill files in DIR")
    ap.add_argument("--baselines", choices=["both", "no", "yes"], default="both",
                    help="whole commands with and/or without the baseline mappings")
    ap.add_argument("--algo", choices=["wb-libra", "par"], default="wb-libra",
                    help="the per-phase runs' partitioner (par: analyze's default, with the "
                         "simulator's layout of its schedule as a phase of its own)")
    args = ap.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="vcut-bench-scale-")
    os.makedirs(workdir, exist_ok=True)
    pairs = [int(x) for x in args.pairs.split(",")]
    ps = [int(x) for x in args.p.split(",")]
    if args.spill:
        print("| trace | nodes | p | phase | seconds | rate | peak resident (anon) | bytes/node "
              "| peak RSS with mapped files |")
        print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    else:
        print("| trace | nodes | p | phase | seconds | rate | peak RSS | bytes/node |")
        print("|---|---:|---:|---|---:|---:|---:|---:|")
    for pr in pairs:
        trace = make_trace(workdir, pr)
        for p in ps:
            if not args.no_phases:
                code = _PHASES.format(root=ROOT, trace=trace, p=p, baselines=p <= 64,
                                      spill=args.spill, algo=args.algo)
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
                          f"{r['peak'] / 1e9:.2f} GB | {r['peak'] / n:.0f} |"
                          + (" |" if args.spill else ""), flush=True)
            else:
                n = None
            runs = {"both": (["--no-baselines"], []), "no": (["--no-baselines"],),
                    "yes": ([],)}[args.baselines]
            for extra in () if args.no_commands else runs:
                cmd = [sys.executable, "-m", "vcut.cli", "analyze", trace, "-p", str(p),
                       "--json", *extra] + (["--spill", args.spill] if args.spill else [])
                peaks = {}
                try:
                    out, wall, peak = _run_child(cmd, peaks)
                except ChildFailed as exc:
                    print(f"| PAIRS={pr} | | {p} | vcut analyze {' '.join(extra)} | failed: "
                          f"{exc} | | | |", flush=True)
                    continue
                doc = json.loads(out)
                n = doc["graph"]["nodes"]
                what = "vcut analyze " + (" ".join(extra) or "(baselines)")
                if args.spill:
                    what += " --spill"
                    peak = peaks["anon"]
                line = (f"| PAIRS={pr} | {n:,} | {p} | **{what}** | {wall:.1f} | "
                        f"{n / wall / 1e6:.2f} M nodes/s | {peak / 1e9:.2f} GB | {peak / n:.0f} |")
                if args.spill:
                    line += f" {peaks['rss'] / 1e9:.2f} GB |"
                print(line, flush=True)
    if not args.workdir:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
