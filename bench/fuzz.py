"""Long fuzz campaign over every reader and ``vcut partition`` / ``bfs`` / ``graph``.

Runs the seeded mutation cases of ``tests/fuzzing.py`` (bit flips,
truncation, huge, negative and non-finite numbers, wrong dtypes and shapes
in ``.npz`` files, missing keys, corrupted gzip streams, mutated machine
JSON) in forked workers, so that a signal or a hang is recorded against its
case instead of ending the campaign, and prints a table: cases per target,
successes, errors by exit status, and failures (tracebacks, undocumented
exit statuses, crashes by signal, hangs), which must be 0.

    python bench/fuzz.py                       # 16 targets x 8000 cases = 128,000
    python bench/fuzz.py --cases 500 --targets cli-graph,trace-npz --seed 3
    python bench/fuzz.py --cases 8000 --targets cli-quality,cli-multilevel --seed 3

The campaign is deterministic: case ``i`` of a target depends only on
``--seed``, the target and ``i`` (replay one with ``--replay TARGET:I``).
Exit status 1 when any case failed.
"""

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests import fuzzing  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=8000, help="cases per target (default 8000)")
    ap.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    ap.add_argument("--targets", default=",".join(fuzzing.TARGETS),
                    help="comma-separated targets (default: all)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds without progress before a case counts as a hang (default 120)")
    ap.add_argument("--workdir", help="directory for seeds and cases (default: a temporary one)")
    ap.add_argument("--replay", metavar="TARGET:I", help="run one case here and print its outcome")
    args = ap.parse_args()
    targets = [t for t in args.targets.split(",") if t]
    unknown = sorted(set(targets) - set(fuzzing.TARGETS))
    if unknown:
        ap.error(f"unknown targets {unknown}; choose from {', '.join(fuzzing.TARGETS)}")
    with tempfile.TemporaryDirectory(prefix="vcut-fuzz-") as tmp:
        workdir = args.workdir or tmp
        t0 = time.perf_counter()
        seeds = fuzzing.make_seeds(workdir)
        print(f"seeds in {workdir} ({time.perf_counter() - t0:.1f} s); seed {args.seed}, "
              f"{args.cases:,} cases per target", file=sys.stderr)
        if args.replay:
            target, i = args.replay.rsplit(":", 1)
            rng = fuzzing.case_rng(args.seed, target, int(i))
            print(fuzzing.run_case(target, seeds, rng, workdir))
            return 0

        def progress(target, i):
            print(f"  {target}: {i:,} / {args.cases:,} ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)

        results = fuzzing.campaign(targets, args.cases, args.seed, seeds, workdir,
                                   timeout=args.timeout, progress=progress)
    header, rows = fuzzing.summary_rows(results)
    widths = [max(len(str(r[k])) for r in [header] + rows) for k in range(len(header))]
    line = lambda r: "  ".join(str(v).rjust(w) if k else str(v).ljust(w)  # noqa: E731
                               for k, (v, w) in enumerate(zip(r, widths)))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows[:-1]:
        print(line(r))
    print("  ".join("-" * w for w in widths))
    print(line(rows[-1]))
    failed = [(t, case, out) for t, res in results.items() for case, out in res["failures"]]
    print(f"\nfailures (tracebacks, undocumented exits, crashes, hangs): {len(failed)}")
    for t, case, out in failed[:40]:
        print(f"  {t}:{case}  {out}   (replay: python bench/fuzz.py --seed {args.seed} "
              f"--replay {t}:{case})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
