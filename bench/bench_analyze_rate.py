"""How analyze's time grows with the program: nodes per second of whole commands (issue 63).

For every program of samples/manifest.json (the ten benchmarks of the paper's Table 3) and
any ``--extra`` C file (``FILE.c`` or ``FILE.c:NAME=VALUE,...``, the defines passed as
``-D``: ``bench/programs/dijkstra_mibench.c:PAIRS=5``), runs ``vcut analyze PROGRAM -p P
-o TMP`` as a user does, a child process each time, after one warm-up run (numba's cache
warm): the median wall time of ``--repeat`` runs, the graph's nodes (from the mapping.json
the run wrote) and nodes per second, with the in-process phase times the run reported
beside it. The last lines give the spread of seconds per node over the programs (max /
min, the issue's target: within 2x) over all programs and over those of at least ``--big``
nodes, where the fixed costs (start-up ~0.5 s, tracing's child process, the report) no
longer dominate.

Usage::

    python bench/bench_analyze_rate.py [--p 8] [--repeat 3]
                                       [--extra FILE.c[:NAME=VALUE,...] ...]
                                       [--json OUT.json [--label TEXT]]
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from _record import envelope, now, save  # noqa: E402


def programs(extra):
    """``(name, path, defines)`` of the manifest's samples, then the extra files."""
    with open(os.path.join(ROOT, "samples", "manifest.json")) as fh:
        manifest = json.load(fh)
    out = [(s["name"], os.path.join("samples", s["source"]), s.get("defines", []))
           for s in manifest["samples"]]
    return out + [extra_program(spec) for spec in extra]


def extra_program(spec):
    """``(name, path, defines)`` of an ``--extra`` argument: ``FILE.c`` or
    ``FILE.c:NAME=VALUE,NAME2,...`` (each define as ``-D`` takes it); the name is the file's
    stem, with the defines after it where there are any. SystemExit for an empty define or
    a file that is not there."""
    path, _, rest = spec.partition(":")
    path = os.path.abspath(path)  # the runs start in the checkout's root
    defines = rest.split(",") if rest else []
    if any(not d or d.startswith("=") for d in defines):
        raise SystemExit(f"--extra {spec}: write the defines as FILE.c:NAME=VALUE,NAME2,...")
    if not os.path.isfile(path):
        raise SystemExit(f"--extra {spec}: no file {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    return (f"{name} {' '.join(defines)}" if defines else name), path, defines


def run(path, defines, p, out):
    """One whole ``vcut analyze``: wall seconds and the mapping.json it wrote."""
    argv = [sys.executable, "-m", "vcut", "analyze", path, "-p", str(p), "-o", out]
    for d in defines:
        argv += ["-D", d]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an install runs it
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): "
                         f"{done.stderr.decode()[-400:]}")
    with open(os.path.join(out, "mapping.json")) as fh:
        return wall, json.load(fh)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p", type=int, default=8, help="clusters (default 8)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per program (default 3)")
    ap.add_argument("--big", type=int, default=500_000,
                    help="nodes from which a program counts as large (default 500000)")
    ap.add_argument("--extra", nargs="*", default=[], metavar="FILE.c[:NAME=VALUE,...]",
                    help="more C files, each with its defines after a colon")
    ap.add_argument("--json", metavar="OUT.json", help="also save the measurements")
    ap.add_argument("--label", default="", help="the saved run's heading in docs/benchmarks.md")
    args = ap.parse_args()
    started = now()
    rows = []
    with tempfile.TemporaryDirectory(prefix="vcut-rate-") as tmp:
        out = os.path.join(tmp, "out")
        for name, path, defines in programs(args.extra):
            run(path, defines, args.p, out)  # warm-up: its kernels in numba's cache
            walls, doc = [], None
            for _ in range(args.repeat):
                wall, doc = run(path, defines, args.p, out)
                walls.append(wall)
            nodes = doc["graph"]["nodes"]
            wall = statistics.median(walls)
            rows.append({"program": name, "nodes": nodes, "edges": doc["graph"]["edges"],
                         "wall_s": wall, "walls": walls, "nodes_per_s": nodes / wall,
                         "phases": doc["phases"]})
            print(f"  {name}: {nodes:,} nodes, {wall:.2f} s", file=sys.stderr, flush=True)
    print(f"vcut analyze -p {args.p}, whole command warm (median of {args.repeat}), "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print()
    print("| program | nodes | wall (s) | nodes/s | in-process total (s) | partition | "
          "mapping | trace + graph | report |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ph = r["phases"]
        print(f"| {r['program']} | {r['nodes']:,} | {r['wall_s']:.2f} | "
              f"{r['nodes_per_s']:,.0f} | {ph.get('total', 0):.2f} | "
              f"{ph.get('partition', 0):.2f} | {ph.get('mapping', 0):.2f} | "
              f"{ph.get('trace_and_graph', 0):.2f} | {ph.get('report', 0):.2f} |")
    print()
    for label, sel in (("all programs", rows),
                       (f"programs of >= {args.big:,} nodes",
                        [r for r in rows if r["nodes"] >= args.big])):
        if len(sel) >= 2:
            per = [r["wall_s"] / r["nodes"] for r in sel]
            print(f"seconds per node, max / min over {label} ({len(sel)}): "
                  f"{max(per) / min(per):.2f} (target <= 2)")
    if args.json:
        doc = envelope("bench/bench_analyze_rate.py", sys.argv[1:],
                       kind="whole command and in-process", runs="warm", started=started,
                       label=args.label)
        doc.update({"p": args.p, "repeat": args.repeat, "big": args.big, "rows": rows})
        save(args.json, doc)

if __name__ == "__main__":
    main()
