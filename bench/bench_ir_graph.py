"""Benchmark graph building and compare the sample graphs with Table 4 of the source.

Prints three tables:

1. Dependency analysis speed per sample (and a 10 M-instruction program):
   trace events (dynamic instructions + memory access events) per second of
   `build_graph` on one core, for both weight models (target: >= 5 M/s).
2. Memory of `build_graph` on the 10 M-instruction trace, measured in a fresh
   process: peak RSS above the RSS with the trace loaded, per dynamic
   instruction (target: <= 200 bytes).
3. The sample graphs beside the published Table 4 (nodes, edges, alpha,
   average path length), with our two alpha estimates and both path lengths.

Usage: python bench/bench_ir_graph.py [--repeat 3] [--no-table4]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from frontend import RunLimits, compile_program, trace_program  # noqa: E402
from ir_graph import build_graph, graph_stats  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_frontend import MEM_PROGRAM  # noqa: E402

PUBLISHED = {  # Table 4: nodes, edges, alpha, average path length
    "dijkstra": (248959, 291112, 2.29, 136.4),
    "fft": (109295, 143183, 2.21, 194.56),
    "kmeans": (98592, 119112, 2.24, 479.4),
    "mandel": (235051, 260042, 2.43, 42.67),
    "md": (1799353, 2361213, 2.17, 524.61),
    "nn": (124496, 161428, 2.16, 171.52),
    "neuron": (57883, 73431, 2.20, 179.25),
    "cnn": (573694, 758712, 2.13, 824.37),
    "strassen8": (36831, 46756, 2.21, 21.22),
    "strassen16": (197827, 254392, 2.20, 123.94),
}


def traces():
    manifest = json.load(open(os.path.join(ROOT, "samples", "manifest.json")))["samples"]
    for s in manifest:
        src = os.path.join(ROOT, "samples", s["source"])
        yield s["name"], trace_program(compile_program(src, defines=s["defines"]))
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "matrix.c")
        with open(p, "w") as fh:
            fh.write(MEM_PROGRAM)
        yield "matrix-10M", trace_program(p, limits=RunLimits(max_instructions=10**8))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


# ru_maxrss is inherited across fork+exec on Linux, so the child resets its
# high-water mark (clear_refs 5) once the trace is loaded and reads VmHWM.
MEMORY_SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
from frontend import load_trace
from ir_graph import build_graph

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])

t = load_trace({path!r})
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
base = status("VmRSS")
g = build_graph(t, weights={weights!r})
peak = status("VmHWM")
print(json.dumps({{"dyn": t.dynamic_instructions, "edges": g.m, "base_kb": base, "peak_kb": peak}}))
"""


def memory(trace, weights):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.npz")
        trace.save(path)
        code = textwrap.dedent(MEMORY_SCRIPT.format(root=ROOT, path=path, weights=weights))
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-table4", action="store_true")
    args = ap.parse_args()
    rows, stats, big = [], {}, None
    for name, t in traces():
        build_graph(t, weights="model")  # warm-up (numba cache load)
        events = t.dynamic_instructions + len(t.mem_addr)
        tm, g = best(lambda: build_graph(t, weights="measured"), args.repeat)
        tc, _ = best(lambda: build_graph(t, weights="model"), args.repeat)
        rows.append((name, t.dynamic_instructions, len(t.mem_addr), g.m, tm, events / tm, tc, events / tc))
        if name in PUBLISHED and not args.no_table4:
            stats[name] = (g, graph_stats(g, path_samples=32, seed=0))
        if name == "matrix-10M":
            big = t
        print(f"  {name} done", file=sys.stderr)

    print("\n### Dependency analysis speed (best of %d; target >= 5 M events/s per core)\n" % args.repeat)
    print("| trace | dyn. instr. | accesses | edges | build s (measured) | M events/s | build s (model) | M events/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, m, e, tm, rm, tc, rc in rows:
        print(f"| {name} | {n:,} | {m:,} | {e:,} | {tm:.3f} | {rm / 1e6:.1f} | {tc:.3f} | {rc / 1e6:.1f} |")

    print("\n### Memory of build_graph (target <= 200 bytes per dynamic instruction)\n")
    print("| trace | weights | dyn. instr. | edges | RSS with trace MB | peak RSS MB | bytes / instr. above trace |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for weights in ("measured", "model"):
        r = memory(big, weights)
        extra = (r["peak_kb"] - r["base_kb"]) * 1024 / r["dyn"]
        print(f"| matrix-10M | {weights} | {r['dyn']:,} | {r['edges']:,} | {r['base_kb'] / 1024:.0f} | "
              f"{r['peak_kb'] / 1024:.0f} | {extra:.0f} |")

    if stats:
        print("\n### Sample graphs beside Table 4 (published values in parentheses)\n")
        print("| graph | nodes | edges | alpha, CSN tail fit (x_min) | alpha over all degrees | avg path, undirected | avg path, directed |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, (g, s) in stats.items():
            pn, pe, pa, pl = PUBLISHED[name]
            print(f"| {name} | {g.n:,} ({pn:,}) | {g.m:,} ({pe:,}) | {s.alpha:.2f} ({s.x_min}) | "
                  f"{s.alpha_all:.2f} ({pa}) | {s.avg_path_length:.1f} | {s.avg_directed_path_length:.1f} ({pl}) |")


if __name__ == "__main__":
    main()
