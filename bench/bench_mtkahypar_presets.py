"""Mt-KaHyPar's own speed-quality frontier beside vcut's `best` presets (issue 65).

Issue 65 asks `best --preset strong` for a replication factor at most 0.99 x Mt-KaHyPar's
(its *quality* preset) in at most a tenth of its time. This bench shows where Mt-KaHyPar
itself stands on that trade-off, all on this machine and in one run, so that the ratios
are within-run ones (the quality bench's Mt-KaHyPar times are the reference file's, taken
elsewhere and with file conversion included).

Over the graphs of ../shared/datasets/REFERENCE_RESULTS.md at k = 8, 32, 128, each cell
runs, in this process, after an untimed warm-up of each on the first cell:

* Mt-KaHyPar through vcut's binding (`vcut.spac.hypergraph_assign`: the hypergraph model,
  vertex = graph edge, net = graph vertex, connectivity - 1, epsilon 0.03, seed 0, every
  core) with its ``default`` and its ``quality`` preset;
* vcut's ``best`` with ``--preset default`` and ``--preset strong`` (unless ``--no-vcut``).

RF and balance are recomputed here from each assignment (`bench_quality.rf_and_balance`);
times are the partitioner's call alone. The summary gives, over the cells, the geometric
means of each partitioner's RF and time divided by Mt-KaHyPar quality's of the same cell,
RF divided by the reference file's Mt-KaHyPar result, and time divided by the reference
file's NE time (the issue's other time target: at most 2 x; the reference NE ran on another
machine, its time includes reading the file, so that column is indicative only).

Usage: python bench/bench_mtkahypar_presets.py [--datasets DIR] [--graphs a,b]
       [--ks 8,32,128] [--no-vcut] [--json OUT.json [--label TEXT]]
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _quality_tables import FRONTIER, frontier_lines  # noqa: E402
from _record import envelope, now, save  # noqa: E402
from _reference import read_reference, reference_cells  # noqa: E402
from bench_quality import reference_graphs, rf_and_balance  # noqa: E402
from vcut_base.memory import usable_cpus  # noqa: E402

def runners(threads, vcut):
    """{cell key: fn(graph, k) -> edge assignment} of the partitioners of `FRONTIER`."""
    import numpy as np

    from vcut.cuts.best import BestOptions
    from vcut.partition import partition_graph
    from vcut.spac import hypergraph_assign

    def mt(preset):
        return lambda g, k: hypergraph_assign(np.asarray(g.src), np.asarray(g.dst), g.weight,
                                              g.n, k, imbalance=1.03, seed=0, preset=preset,
                                              threads=threads)

    def best(preset):
        options = BestOptions.preset(preset)
        return lambda g, k: np.asarray(partition_graph(g, k, "best", options).assignment)

    out = {"mt_quality": mt("quality"), "mt_default": mt("default")}
    if vcut:
        out.update(best_strong=best("strong"), best=best("default"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--graphs", default="")
    ap.add_argument("--ks", default="8,32,128")
    ap.add_argument("--threads", type=int, default=usable_cpus(),
                    help="Mt-KaHyPar's threads (default: every core this process may use)")
    ap.add_argument("--no-vcut", action="store_true", help="run Mt-KaHyPar's presets only")
    ap.add_argument("--json", metavar="OUT.json")
    ap.add_argument("--label", default="", help="the saved run's heading in docs/benchmarks.md")
    args = ap.parse_args()
    import numpy as np

    started = now()
    ks = [int(k) for k in args.ks.split(",")]
    ref = read_reference(args.datasets)
    run = runners(args.threads, not args.no_vcut)
    keys = [key for key, _ in FRONTIER if key in run]
    cells, warm = [], False
    print(f"{'graph':24s} {'k':>4s} " + " ".join(f"{key + ' RF':>15s} {'s':>7s}"
                                                 for key in keys), flush=True)
    for name, g in reference_graphs(args.datasets, ref, args.graphs):
        src, dst = np.asarray(g.src), np.asarray(g.dst)
        refs = reference_cells(ref[name])
        for k in ks:
            if not warm:  # numba's compilation and Mt-KaHyPar's start-up, untimed
                for key in keys:
                    run[key](g, k)
                warm = True
            cell = {"graph": name, "k": k, **refs.get(k, {})}  # none at other k
            for key in keys:
                t = time.perf_counter()
                part = run[key](g, k)
                seconds = time.perf_counter() - t
                rf, bal = rf_and_balance(src, dst, np.asarray(part, np.int64), k)
                cell[key] = [round(rf, 6), round(bal, 6), round(seconds, 4)]
            cells.append(cell)
            print(f"{name:24s} {k:4d} " + " ".join(
                f"{cell[key][0]:15.4f} {cell[key][2]:7.2f}" for key in keys), flush=True)
    print("", *frontier_lines(cells), sep="\n")
    if args.json:
        save(args.json, {**envelope("bench/bench_mtkahypar_presets.py", sys.argv[1:],
                                    kind="in-process", runs="warm, one run", started=started,
                                    label=args.label),
                         "threads": args.threads, "cells": cells})


if __name__ == "__main__":
    main()
