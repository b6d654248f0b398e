"""Benchmark the text graph readers (issue 13, part 6): edges/s and peak bytes/edge.

A real web graph (default ``uk-2007-05-100000.arcs.txt.gz``, a SNAP-style
edge list of 3.05 M arcs) is read once and written in every text format into
a temporary directory (`ir_graph.write_graph`; LG, which vcut does not
write, by this script). Each case is then read by `ir_graph.read_graph` in
a fresh Python process that first reads a tiny file of the same format (so
that the compiled kernels are loaded: the ``first call`` column is the same
read without that warm-up), resets its peak RSS (``/proc/self/clear_refs``)
and reports the best of ``--repeat`` reads and the peak resident memory
above what it held before, per edge. Targets: >= 5 M edges/s and <= 40
bytes/edge for edge lists and METIS, plain and gzip.

Last, the whole process ``vcut partition GRAPH -p 8 -o OUT`` is timed from
outside, with its peak RSS, on the plain edge-list text and on the dataset's
gzip file: ``python -m vcut.cli`` of this checkout, the same work as the
installed ``vcut`` script (target >= 2 M input edges/s). The phases of the
plain-text run (interpreter start, imports, read, partition, write) come
from one process that makes the calls the command makes.

Usage: python bench/bench_readers.py [--datasets DIR] [--graph NAME] [--repeat N]
       [--python] [--no-partition | --only-partition] [--keep DIR]
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import read_graph, write_graph  # noqa: E402

TARGET_RATE = 5.0  # M edges/s
TARGET_BYTES = 40  # peak bytes per edge
TARGET_PARTITION = 2.0  # M edges/s, whole process

#: Run in a fresh interpreter per case: argv = path, format, repeat, warm-up file, python reader.
CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {root!r})
path, fmt, repeat, warm, python = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
from ir_graph import formats

def status():
    with open("/proc/self/status") as fh:
        return {{ln.split(":")[0]: int(ln.split()[1]) * 1024 for ln in fh
                if ln.startswith(("VmHWM", "VmRSS"))}}

def read(p):
    if python:
        return formats._read_python(p, fmt)
    return formats.read_graph(p, fmt)

out = {{}}
if warm:
    read(warm)
best = None
for _ in range(repeat):
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    before = status()["VmRSS"]
    t = time.perf_counter()
    g = read(path)
    dt = time.perf_counter() - t
    peak = status()["VmHWM"] - before
    edges = g.m
    del g
    if best is None or dt < best[0]:
        best = (dt, peak)
    out["peak"] = max(out.get("peak", 0), peak)
out.update(edges=edges, seconds=best[0])
print(json.dumps(out))
"""


def child(path, fmt, repeat, warm, python=False):
    """Run `CHILD` on one case: ``{"edges", "seconds", "peak"}``."""
    code = CHILD.format(root=ROOT)
    proc = subprocess.run([sys.executable, "-c", code, path, fmt, str(repeat), warm or "",
                           "1" if python else "0"], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"reading {path} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_lg(g, path):
    """An LG file (Graphs.jl): ``nv,ne,d|u,name`` then 1-based ``src,dst`` lines."""
    body = np.empty((g.m, 2), np.int64)
    body[:, 0] = g.src
    body[:, 1] = g.dst
    body += 1
    with open(path, "w") as fh:
        fh.write(f"{g.n},{g.m},{'d' if g.directed else 'u'},bench\n")
        np.savetxt(fh, body, fmt="%d", delimiter=",")


def make_cases(source, work):
    """Write the graph of ``source`` in every text format: [(label, path, format)]."""
    g = read_graph(source)
    cases = [("edgelist gzip (dataset)", source, "edgelist")]
    plain = os.path.join(work, "g.txt")
    with gzip.open(source, "rb") as fin, open(plain, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 22)
    cases.append(("edgelist plain (dataset)", plain, "edgelist"))
    for label, name in (("edgelist plain (vcut, 3 columns)", "g.edgelist"),
                        ("METIS plain", "g.graph"), ("METIS gzip", "g.graph.gz"),
                        ("mtx plain", "g.mtx"), ("mtx gzip", "g.mtx.gz")):
        path = os.path.join(work, name)
        if write_graph(g, path).get("parallel_edges_merged"):
            label += " (simple graph)"  # METIS merges repeated edges
        cases.append((label, path, None))
    lg = os.path.join(work, "g.lg")
    write_lg(g, lg)
    cases.append(("lg plain", lg, "lg"))
    return cases


def warm_files(work):
    """A tiny file per format, read first to load the compiled kernels."""
    tiny = {"edgelist": "0 1\n1 2\n", "metis": "2 1\n2\n1\n",
            "mtx": "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1.0\n",
            "lg": "2,1,d,x\n1,2\n"}
    out = {}
    for fmt, text in tiny.items():
        out[fmt] = os.path.join(work, {"edgelist": "w.txt", "metis": "w.graph", "mtx": "w.mtx",
                                       "lg": "w.lg"}[fmt])
        with open(out[fmt], "w") as fh:
            fh.write(text)
    return out


def fmt_of(path, fmt):
    from ir_graph.formats import detect_format

    return fmt or detect_format(path)


#: Times one command from a fresh interpreter (whose only child it is): seconds, peak RSS bytes.
TIMER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
dt = time.perf_counter() - t
if proc.returncode:
    sys.exit(proc.stderr[-3000:])
print(json.dumps({"seconds": dt, "peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


#: The phases of ``vcut partition GRAPH -p 8 -o OUT`` in one process: argv = graph, out.
PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import vcut.cli
from ir_graph import read_graph
from vcut.output import write_partition
from vcut.partition import partition_graph
t1 = time.perf_counter()
g = read_graph(sys.argv[1])
t2 = time.perf_counter()
part = partition_graph(g, 8, "wb-libra")
t3 = time.perf_counter()
write_partition(part, sys.argv[2], True)
t4 = time.perf_counter()
print(json.dumps({{"imports": t1 - t0, "read": t2 - t1, "partition": t3 - t2, "write": t4 - t3}}))
"""


def partition_phases(source, work):
    """Seconds of each phase of ``vcut partition`` (`PHASES`)."""
    proc = subprocess.run([sys.executable, "-c", PHASES.format(root=ROOT), source,
                           os.path.join(work, "p.part")], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"partition phases failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def timed(cmd, repeat):
    """Best wall seconds and the peak RSS of that run: ``{"seconds", "peak"}``."""
    best = None
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", TIMER] + cmd, capture_output=True, text=True,
                              cwd=ROOT)
        if proc.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
        r = json.loads(proc.stdout)
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def bench_partition(path, work, repeat):
    """Best wall seconds and peak RSS of the whole ``vcut partition SOURCE -p 8 -o OUT``.

    Run as ``python -m vcut.cli`` from the repository root, so that this
    checkout is measured whichever vcut is installed.
    """
    cmd = [sys.executable, "-m", "vcut.cli", "partition", path, "-p", "8", "-o",
           os.path.join(work, "g.part")]
    best = timed(cmd, repeat)
    return best["seconds"], best["peak"]


def print_partition(name, edges, files, work, repeat):
    """The whole-process table (target beside it) and the phases of the first file's run.

    ``files``: [(label, path)] of the same graph.
    """
    print(f"\n### Whole process: vcut partition {name} -p 8 -o OUT "
          f"(best of {repeat}; {edges:,} input edges)\n")
    print("| measure | file | edges/s | seconds | peak RSS MB | target | met |")
    print("|---|---|---:|---:|---:|---:|---|")
    for label, path in files:
        dt, peak = bench_partition(path, work, repeat)
        rate = edges / dt / 1e6
        print(f"| vcut partition whole process, edges/s | {label} | {rate:.2f} M | {dt:.2f} | "
              f"{peak / 2**20:.0f} | >= {TARGET_PARTITION:g} M "
              f"(<= {edges / TARGET_PARTITION / 1e6:.2f} s) | "
              f"{'yes' if rate >= TARGET_PARTITION else 'no'} |", flush=True)
    start = timed([sys.executable, "-c", "pass"], repeat)["seconds"]
    ph = {"interpreter start": start, **partition_phases(files[0][1], work)}
    print(f"\nPhases of the {files[0][0]} run, seconds (the interpreter's start: best of "
          f"{repeat} empty runs; the rest: one run; the read includes numba's start-up, which "
          "the partitioner would pay otherwise):\n")
    print("| " + " | ".join(ph) + " |\n|" + "---:|" * len(ph))
    print("| " + " | ".join(f"{v:.2f}" for v in ph.values()) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")
    ap.add_argument("--datasets", default=default,
                    help="directory of the shared datasets (default $VCUT_DATASETS or "
                    "../shared/datasets beside the repository)")
    ap.add_argument("--graph", default="uk-2007-05-100000.arcs.txt.gz",
                    help="edge list in DIR to convert and read")
    ap.add_argument("--repeat", type=int, default=3, help="reads per case (best is shown)")
    ap.add_argument("--python", action="store_true",
                    help="also time the Python reader on the dataset file (slow)")
    ap.add_argument("--no-partition", action="store_true", help="skip the vcut partition run")
    ap.add_argument("--only-partition", action="store_true",
                    help="time only the whole vcut partition run (no reader table)")
    ap.add_argument("--keep", metavar="DIR", help="write the converted files here and keep them")
    args = ap.parse_args()

    source = os.path.abspath(os.path.join(args.datasets, args.graph))
    if not os.path.exists(source):
        raise SystemExit(f"{source} not found; give --datasets DIR (or set VCUT_DATASETS)")
    work = args.keep or tempfile.mkdtemp(prefix="vcut-readers-")
    os.makedirs(work, exist_ok=True)
    try:
        if args.only_partition:
            plain = os.path.join(work, "g.txt")
            with gzip.open(source, "rb") as fin, open(plain, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 22)
            print_partition(args.graph, read_graph(source).m,
                            [("edge list, plain text", plain), ("edge list, gzip", source)],
                            work, args.repeat)
            return
        cases = make_cases(source, work)
        warm = warm_files(work)
        print(f"\n### Text readers: {args.graph} (best of {args.repeat}; "
              f"targets >= {TARGET_RATE:g} M edges/s, <= {TARGET_BYTES} bytes/edge)\n")
        print("| case | MB | edges | seconds | M edges/s | peak bytes/edge "
              "| first call s (numba start-up) | targets met |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        rows = [(label, path, fmt_of(path, fmt), False) for label, path, fmt in cases]
        if args.python:
            rows.append(("edgelist gzip (dataset), Python reader", source, "edgelist", True))
        edges = None
        for label, path, fmt, python in rows:
            r = child(path, fmt, 1 if python else args.repeat, None if python else warm[fmt], python)
            cold = child(path, fmt, 1, None)["seconds"] if not python else r["seconds"]
            rate = r["edges"] / r["seconds"] / 1e6
            per_edge = r["peak"] / r["edges"]
            ok = rate >= TARGET_RATE and per_edge <= TARGET_BYTES
            size = os.path.getsize(path) / 1e6
            print(f"| {label} | {size:.1f} | {r['edges']:,} | {r['seconds']:.3f} | {rate:.1f} | "
                  f"{per_edge:.1f} | {cold:.3f} | {'yes' if ok else 'no'} |", flush=True)
            if edges is None:
                edges = r["edges"]
        if not args.no_partition:
            print_partition(args.graph, edges, [("edge list, plain text", cases[1][1]),
                                                ("edge list, gzip", source)], work, args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
