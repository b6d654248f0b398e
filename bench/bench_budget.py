"""Is analyze's memory estimate an upper bound of its peak? Traces of three shapes, two sizes.

`mapping.budget.estimate` decides, before a trace's graph is built, whether ``vcut
analyze`` may start (and refuses with exit 2 when the estimate exceeds the memory
available). This script measures the peak resident memory of whole ``vcut analyze``
commands on traces of different shapes and sizes and sets the estimate beside it:

* ``matmul``: a dense double matrix multiply, triple loop (regular, memory-heavy);
* ``dijkstra``: MiBench's dijkstra with an array priority queue (bench/programs/);
* ``listchase``: pointer chasing through a shuffled linked list (irregular loads).

Each program is traced once per size (``vcut trace --no-timing``), then analysed with
the default options (``vcut analyze TRACE -p P``, baselines on) in a child process
whose peak RSS (``ru_maxrss`` from ``wait4``) is the measurement. The estimate is the
budget's for the trace's instruction count and ``-p``: the target is estimate ≥ peak
on every row.

Usage::

    python bench/bench_budget.py [--p 8] [--sizes small,large] [--json OUT.json]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

from _record import envelope, now, save  # noqa: E402
from mapping.budget import estimate  # noqa: E402

#: name -> (C source of bench/programs/, {size: defines})
PROGRAMS = {
    "matmul": (os.path.join(ROOT, "bench", "programs", "matmul.c"),
               {"small": ["N=40"], "large": ["N=60"]}),
    "dijkstra": (os.path.join(ROOT, "bench", "programs", "dijkstra_mibench.c"),
                 {"small": ["PAIRS=1"], "large": ["PAIRS=2"]}),
    "listchase": (os.path.join(ROOT, "bench", "programs", "listchase.c"),
                  {"small": ["NODES=16384", "ROUNDS=12"],
                   "large": ["NODES=65536", "ROUNDS=12"]}),
}


def vcut(*args):
    return [sys.executable, "-m", "vcut", *args]


def child_env():
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def peak_of(argv):
    """Run ``argv``; (wall seconds, peak RSS bytes of the largest process, exit status,
    stderr tail)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=child_env(), stdout=subprocess.DEVNULL,
                                stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err.seek(0)
        tail = err.read().decode("utf-8", "replace")[-400:]
    return wall, ru.ru_maxrss * 1024, os.waitstatus_to_exitcode(status), tail


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p", type=int, default=8, help="clusters (default 8)")
    ap.add_argument("--sizes", default="small,large", help="which sizes (default both)")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help="which programs")
    ap.add_argument("--json", metavar="OUT.json", help="also save the rows")
    args = ap.parse_args(argv)
    started = now()
    sizes = [s for s in args.sizes.split(",") if s]
    rows = []
    work = tempfile.mkdtemp(prefix="vcut-budget-")
    try:
        for name in [n for n in args.programs.split(",") if n]:
            source, by_size = PROGRAMS[name]
            for size in sizes:
                defines = by_size[size]
                trace = os.path.join(work, f"{name}-{size}.npz")
                flags = [x for d in defines for x in ("-D", d)]
                done = subprocess.run(vcut("trace", source, *flags, "--no-timing",
                                           "--max-instructions", "2000000000", "-o", trace),
                                      cwd=ROOT, env=child_env(), capture_output=True,
                                      text=True, check=False)
                if done.returncode:
                    raise SystemExit(f"trace of {name} failed: {done.stderr[-400:]}")
                out = os.path.join(work, f"{name}-{size}")
                wall, peak, rc, tail = peak_of(vcut("analyze", trace, "-p", str(args.p),
                                                    "-o", out))
                if rc:
                    raise SystemExit(f"analyze of {name} failed ({rc}): {tail}")
                with open(os.path.join(out, "mapping.json")) as fh:
                    graph = json.load(fh)["graph"]
                nodes = graph["nodes"]
                need, seconds = estimate(nodes, args.p, baselines=True)
                rows.append({"program": name, "size": size, "defines": defines,
                             "nodes": nodes, "edges": graph["edges"], "wall_s": round(wall, 2),
                             "peak_rss_bytes": peak, "estimate_bytes": int(need),
                             "estimate_s": round(seconds, 1)})
                print(f"  {name} {size}: {nodes:,} nodes, peak {peak / 2**20:,.0f} MB, "
                      f"estimate {need / 2**20:,.0f} MB", file=sys.stderr, flush=True)
                os.unlink(trace)
                shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n`vcut analyze TRACE -p {args.p}` (defaults: baselines on), peak RSS of the "
          f"whole command beside mapping.budget.estimate\n")
    print("| program | defines | nodes | edges/node | peak RSS | B/node | estimate | "
          "estimate ÷ peak | upper bound |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ratio = r["estimate_bytes"] / r["peak_rss_bytes"]
        print(f"| {r['program']} | {' '.join(r['defines'])} | {r['nodes']:,} | "
              f"{r['edges'] / r['nodes']:.2f} | {r['peak_rss_bytes'] / 2**20:,.0f} MB | "
              f"{r['peak_rss_bytes'] / r['nodes']:.0f} | {r['estimate_bytes'] / 2**20:,.0f} MB "
              f"| {ratio:.2f} | {'yes' if ratio >= 1 else 'NO'} |")
    if args.json:
        doc = envelope("bench/bench_budget.py", sys.argv[1:] if argv is None else argv,
                       kind="whole command (peak RSS)", runs="warm, one run each",
                       started=started)
        doc.update({"p": args.p, "rows": rows})
        save(args.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
