"""Benchmark the tracer: overhead against a plain JIT run and against valgrind lackey.

For every sample of samples/manifest.json this prints, in one table:

* dynamic IR instructions of the trace;
* plain: time in main of the uninstrumented module, JIT-run the same way;
* traced: time in main of the instrumented module, with memory-operation
  timing (cycle counter around each access, the default) and without it;
  the slowdowns are these divided by plain (target: <= 20x);
* vcut wall: the whole `trace_program` call (child start, JIT, run, decode);
* lackey wall: ``valgrind --tool=lackey --trace-mem=yes`` on the same C
  built natively with gcc -O0 (the reference tracer), and lackey / vcut
  (target: >= 10x), end to end and marginal (each tool's start-up cost,
  measured on an empty ``main``, subtracted from both).

A last row, ``matrix-10M``, is a larger program (about 10 M dynamic
instructions) where tracing work rather than start-up dominates.

Then the memory needed for a trace of about 10 M dynamic instructions (peak
RSS of the tracing process and of the traced child; target: <= 1 GB).

Times are the minimum of --repeat runs measured in one session (the machine is
shared and noisy: the minimum estimates the cost of the work itself, as
``timeit`` does); compare ratios.

Usage: python bench/bench_frontend.py [--repeat 3] [--samples fft,md] [--no-lackey]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from frontend import compile_program, run_program, trace_program  # noqa: E402

MEM_PROGRAM = r"""
#include <stdio.h>
#define N 215
double A[N][N], B[N][N];
int main(void) {
    double s = 0;
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = i + j; B[j][i] = i - j; }
    for (int r = 0; r < 8; r++)
        for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += A[i][j] * B[i][j];
    printf("%f\n", s);
    return 0;
}
"""


def best_of(fn, repeat):
    return min(fn() for _ in range(repeat))


def lackey_seconds(src, defines, tmp):
    if shutil.which("valgrind") is None or shutil.which("gcc") is None:
        return None
    exe = os.path.join(tmp, "native")
    subprocess.run(["gcc", "-O0", *[f"-D{d}" for d in defines], "-o", exe, src, "-lm"], check=True)
    t0 = time.perf_counter()
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=/dev/null", exe],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


EMPTY_PROGRAM = "int main(void) { return 0; }\n"


def bench_samples(names, repeat, lackey):
    manifest = json.load(open(os.path.join(ROOT, "samples", "manifest.json")))["samples"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        extra = []
        for name, text in (("empty", EMPTY_PROGRAM), ("matrix-10M", MEM_PROGRAM)):
            path = os.path.join(tmp, name + ".c")
            with open(path, "w") as fh:
                fh.write(text)
            subprocess.run(["gcc", "-O0", "-o", path + ".bin", path], check=True)
            out = subprocess.run([path + ".bin"], capture_output=True, text=True).stdout
            extra.append({"name": name, "path": path, "defines": [], "stdout": out})
        # warm-up: load numba's cached kernels and the toolchain before timing
        trace_program(extra[0]["path"])
        run_program(extra[0]["path"])
        for s in [*extra[:1], *manifest, *extra[1:]]:
            if names and s["name"] not in names and s["name"] != "empty":
                continue
            src = s.get("path") or os.path.join(ROOT, "samples", s["source"])
            cm = compile_program(src, defines=s["defines"])
            plain = best_of(lambda: run_program(cm).run_seconds, repeat)
            traced = []
            walls = []
            for timing in (True, False):
                def one():
                    t0 = time.perf_counter()
                    tr = trace_program(cm, timing=timing)
                    walls.append((timing, time.perf_counter() - t0))
                    assert tr.meta["stdout"] == s["stdout"], s["name"]
                    one.n = tr.dynamic_instructions
                    return tr.meta["run_seconds"]
                traced.append(best_of(one, repeat))
            wall = min(w for tm, w in walls if tm)
            lk = best_of(lambda: lackey_seconds(src, s["defines"], tmp), repeat) if lackey else None
            rows.append({
                "sample": s["name"], "dyn": one.n, "plain_s": plain,
                "traced_s": traced[0], "slowdown": traced[0] / plain,
                "traced_notiming_s": traced[1], "slowdown_notiming": traced[1] / plain,
                "vcut_wall_s": wall, "lackey_s": lk,
                "lackey_over_vcut": (lk / wall) if lk else None,
            })
            print(f"  {s['name']} done", file=sys.stderr)
    return rows


def bench_memory():
    """Peak RSS for a ~10 M-instruction trace, measured in a fresh process."""
    code = textwrap.dedent(f"""
        import json, resource, sys, tempfile, os
        sys.path.insert(0, {ROOT!r})
        from frontend import trace_program, RunLimits
        d = tempfile.mkdtemp()
        p = os.path.join(d, "m.c")
        open(p, "w").write({MEM_PROGRAM!r})
        t = trace_program(p, limits=RunLimits(max_instructions=100_000_000))
        self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(json.dumps({{"dyn": t.dynamic_instructions, "events_mb": t.meta["events"] * 8 / 1e6,
                          "parent_mb": self_kb / 1024, "child_mb": child_kb / 1024}}))
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


COUNTER_PROGRAM = r"""
#include <stdio.h>
int main(void) {
    unsigned long long s = 0;
    for (int i = 0; i < 10000000; i++) s += __builtin_readcyclecounter() & 1;
    printf("%llu\n", s >> 63);
    return 0;
}
"""
LOOP_PROGRAM = COUNTER_PROGRAM.replace("__builtin_readcyclecounter() & 1", "(unsigned)i & 1")


def bench_counter(repeat):
    """Nanoseconds per cycle-counter read (llvm.readcyclecounter), JIT-run."""
    with tempfile.TemporaryDirectory() as tmp:
        times = []
        for name, text in (("counter", COUNTER_PROGRAM), ("loop", LOOP_PROGRAM)):
            path = os.path.join(tmp, name + ".c")
            with open(path, "w") as fh:
                fh.write(text)
            cm = compile_program(path)
            times.append(best_of(lambda: run_program(cm).run_seconds, repeat))
    return (times[0] - times[1]) / 1e7 * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--samples", default="", help="comma-separated sample names (default: all)")
    ap.add_argument("--no-lackey", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args()
    names = [n for n in args.samples.split(",") if n]
    rows = bench_samples(names, args.repeat, not args.no_lackey)
    empty = rows.pop(0)
    for r in rows:
        if r["lackey_s"]:
            r["lackey_over_vcut_marginal"] = (r["lackey_s"] - empty["lackey_s"]) / max(
                r["vcut_wall_s"] - empty["vcut_wall_s"], 1e-3)
    mem = bench_memory()
    counter_ns = bench_counter(args.repeat)

    print("\n### Tracing overhead (best of %d runs; targets: slowdown <= 20x, lackey/vcut >= 10x)\n" % args.repeat)
    print("| sample | dyn. instr. | plain ms | traced ms | slowdown | traced ms, no timing (O2) | slowdown, no timing | vcut wall s | lackey wall s | lackey / vcut | lackey / vcut, marginal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        lk = f"{r['lackey_s']:.2f}" if r["lackey_s"] else "n/a"
        ratio = f"{r['lackey_over_vcut']:.1f}x" if r["lackey_over_vcut"] else "n/a"
        marg = f"{r['lackey_over_vcut_marginal']:.1f}x" if r.get("lackey_over_vcut_marginal") else "n/a"
        print(f"| {r['sample']} | {r['dyn']:,} | {r['plain_s']*1e3:.2f} | {r['traced_s']*1e3:.1f} | "
              f"{r['slowdown']:.0f}x | {r['traced_notiming_s']*1e3:.1f} | {r['slowdown_notiming']:.0f}x | "
              f"{r['vcut_wall_s']:.2f} | {lk} | {ratio} | {marg} |")
    if empty["lackey_s"]:
        print(f"\nstart-up cost (empty main): vcut {empty['vcut_wall_s']:.2f} s, lackey {empty['lackey_s']:.2f} s")
    sd = [r["slowdown"] for r in rows]
    sdn = [r["slowdown_notiming"] for r in rows]
    print(f"\ngeometric-mean slowdown: {statistics.geometric_mean(sd):.1f}x with timing, "
          f"{statistics.geometric_mean(sdn):.1f}x without")
    print(f"one cycle-counter read costs {counter_ns:.1f} ns here (two per timed memory operation)")
    print("\n### Memory for a trace of %s dynamic instructions (target: <= 1 GB)\n" % f"{mem['dyn']:,}")
    print("| event stream MB | peak RSS tracing process MB | peak RSS traced child MB |")
    print("|---:|---:|---:|")
    print(f"| {mem['events_mb']:.0f} | {mem['parent_mb']:.0f} | {mem['child_mb']:.0f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"samples": rows, "memory": mem, "counter_ns": counter_ns}, fh, indent=2)


if __name__ == "__main__":
    main()
