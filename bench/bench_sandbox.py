"""Benchmark what the sandbox costs: start-up and event throughput per level.

For each sandbox level (namespaces, seccomp, rlimits, none) this traces

* ``empty``: ``int main(void) { return 0; }`` -- the fixed cost of a run
  (compile, child start, JIT, confinement, decode); target: the namespace
  level within 50 ms of ``none``;
* ``matrix-N``: an N x N matrix multiply (about 10 M dynamic instructions
  at N = 110), traced without memory timing, so that the event channel
  (keyed chunks on a pipe, drained by a thread) carries ~250 MB; target:
  within 5 % of ``none``.

and prints the minimum wall time of ``--repeat`` runs of `trace_program`
(the machine is shared and noisy: the minimum estimates the work itself;
compare ratios measured in one run), the event volume and throughput.

``--baseline-tree DIR`` adds a row measured with another checkout of vcut
(e.g. the commit before the sandbox: ``git worktree add /tmp/old COMMIT``),
run in a separate interpreter with that tree first on ``sys.path``.

Usage: python bench/bench_sandbox.py [--repeat 5] [--n 110] [--baseline-tree DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EMPTY = "int main(void) { return 0; }\n"
MATRIX = textwrap.dedent("""
    #define N {n}
    static double a[N][N], b[N][N], c[N][N];
    int main(void) {{
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {{ a[i][j] = i + j; b[i][j] = i - j; }}
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {{
          double s = 0;
          for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
          c[i][j] = s;
        }}
      return (int)c[N / 2][N / 3] & 1;
    }}
""")

# Runs in a fresh interpreter: sys.argv = [tree, level, source, repeat]
MEASURE = textwrap.dedent("""
    import json, sys, time
    tree, level, src, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sys.path.insert(0, tree)
    from frontend import compile_program, trace_program
    cm = compile_program(src)
    kwargs = {} if level == "baseline" else {"sandbox": level}
    best, run, t = float("inf"), float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        t = trace_program(cm, timing=False, **kwargs)
        best = min(best, time.perf_counter() - t0)
        run = min(run, t.meta["run_seconds"])
    print(json.dumps({"seconds": best, "run": run, "instructions": t.dynamic_instructions,
                      "event_words": int(t.meta.get("events", 0)),
                      "level": t.meta.get("sandbox", "(before the sandbox)")}))
""")


def measure(tree, level, src, repeat):
    out = subprocess.run([sys.executable, "-c", MEASURE, tree, level, src, str(repeat)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n", type=int, default=110, help="matrix size (default 110: ~10 M instructions)")
    ap.add_argument("--baseline-tree", metavar="DIR",
                    help="also measure this checkout of vcut (the 'baseline' row)")
    args = ap.parse_args()
    rows = [(ROOT, lv) for lv in ("none", "rlimits", "seccomp", "namespaces")]
    if args.baseline_tree:
        rows.insert(0, (os.path.abspath(args.baseline_tree), "baseline"))
    with tempfile.TemporaryDirectory(prefix="vcut-bench-sandbox-") as tmp:
        programs = {}
        for name, text in (("empty", EMPTY), (f"matrix-{args.n}", MATRIX.format(n=args.n))):
            path = os.path.join(tmp, name + ".c")
            with open(path, "w") as fh:
                fh.write(text)
            programs[name] = path
        results = {}
        for tree, level in rows:
            for name, path in programs.items():
                results[level, name] = measure(tree, level, path, args.repeat)
                r = results[level, name]
                print(f"  measured {level:>10} {name}: "
                      f"{r.get('seconds', float('nan')):.3f} s {r.get('error', '')}",
                      file=sys.stderr)
    big = f"matrix-{args.n}"
    print(f"\nSandbox cost: minimum of {args.repeat} runs of trace_program (timing off), "
          "one session\n")
    print("| level (as run) | empty: s | vs none | " + f"{big}: s | vs none | program run s | "
          "vs none | instructions | events MB | MB/s of run |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_e = results["none", "empty"].get("seconds")
    base_m = results["none", big].get("seconds")
    base_r = results["none", big].get("run")
    for _, level in rows:
        e, m = results[level, "empty"], results[level, big]
        if "error" in e or "error" in m:
            print(f"| {level} | {e.get('error') or m.get('error')} | | | | | | | | |")
            continue
        mb = m["event_words"] * 8 / 1e6
        print(f"| {level} ({m['level']}) | {e['seconds']:.3f} | {e['seconds'] - base_e:+.3f} s | "
              f"{m['seconds']:.3f} | {m['seconds'] / base_m:.3f}x | {m['run']:.3f} | "
              f"{m['run'] / base_r:.3f}x | {m['instructions']:,} | {mb:,.1f} | "
              f"{mb / m['run']:,.0f} |")
    print("\ntargets: namespaces start-up within +0.050 s of none; matrix within 1.05x of none "
          "(program run: time in main)")


if __name__ == "__main__":
    main()
