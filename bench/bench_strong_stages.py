"""Where `best --preset strong` spends its time and what each stage buys (issue 65).

Over the graphs of ../shared/datasets/REFERENCE_RESULTS.md at k = 8, 32, 128, one run of
`best` with the strong preset per cell (after an untimed warm-up run of the first cell),
with the replication factor after each stage beside Mt-KaHyPar's (the reference file's):

* candidates: the candidate cuts refined, the multilevel cut among them (``info``'s
  ``vcycles_from``);
* cycles: after the multilevel cycles from the two best candidates (``perturb_from``);
* final: after the iterated search (``replicas_after``);

and the wall time of the run, of the multilevel cut, of the cycles (from the first one's
start to the last one's end: the two finalists' cycles run side by side) and of the
iterated search. The summary (bench/_quality_tables.py's `stage_lines`, the table
docs/benchmarks.md shows) gives the geometric means of RF / Mt-KaHyPar's at each stage and
of time / Mt-KaHyPar's for the run as it is, without the iterated search, and without both
it and the cycles (their time subtracted: what `strong` would cost stopped there).
RF here is vcut's own count of replicas over the vertices with an edge.

``--fm-stall N`` runs it with another limit on FM's fruitless searches at the coarse levels
(`vcut.cut_levels.VCYCLE_FM_STALL`; -1: none), for the comparison.

Usage: python bench/bench_strong_stages.py [--datasets DIR] [--graphs a,b] [--ks 8,32,128]
       [--fm-stall N] [--json OUT.json [--label TEXT]]
"""

import argparse
import os
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _quality_tables import stage_lines, stage_shares  # noqa: E402
from _record import envelope, now, save  # noqa: E402
from _reference import read_reference, reference_cells  # noqa: E402
from bench_quality import reference_graphs  # noqa: E402

STAGES = ("multilevel_assign", "vcycle_refine", "perturb_refine")


class Spans:
    """Wall-clock span of each of `STAGES` in `vcut.quality` during a run (first start to
    last end, over the threads that run it)."""

    def __init__(self):
        from vcut import quality
        self.spans, self.lock = {}, threading.Lock()
        for name in STAGES:
            setattr(quality, name, self._timed(name, getattr(quality, name)))

    def _timed(self, name, fn):
        def run(*args, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                t1 = time.perf_counter()
                with self.lock:
                    s = self.spans.get(name)
                    self.spans[name] = (min(s[0], t0), max(s[1], t1)) if s else (t0, t1)
        return run

    def take(self):
        out = {name: (s[1] - s[0]) for name, s in self.spans.items()}
        self.spans.clear()
        return {name: out.get(name, 0.0) for name in STAGES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--graphs", default="")
    ap.add_argument("--ks", default="8,32,128")
    ap.add_argument("--fm-stall", type=int, metavar="N",
                    help="FM's stall limit of the coarse levels (vcut.cut_levels."
                         "VCYCLE_FM_STALL; -1: none) instead of vcut's own")
    ap.add_argument("--json", metavar="OUT.json")
    ap.add_argument("--label", default="", help="the saved run's heading in docs/benchmarks.md")
    args = ap.parse_args()
    from vcut import cut_levels
    from vcut.cuts.best import BestOptions
    from vcut.partition import partition_graph

    if args.fm_stall is not None:
        cut_levels.VCYCLE_FM_STALL = args.fm_stall
    print(f"FM stall limit: {cut_levels.VCYCLE_FM_STALL}")
    started = now()
    ks = [int(k) for k in args.ks.split(",")]
    ref = read_reference(args.datasets)
    spans = Spans()
    strong = BestOptions.preset("strong")
    cells, warm = [], False
    print(f"{'graph':24s} {'k':>4s} {'cand/Mt':>8s} {'cyc/Mt':>8s} {'final/Mt':>8s} "
          f"{'time':>7s} {'ml':>6s} {'cycles':>7s} {'search':>7s} {'time/Mt':>8s}")
    for name, g in reference_graphs(args.datasets, ref, args.graphs):
        nplus = len(np.unique(np.concatenate([g.src, g.dst])))
        refs = reference_cells(ref[name])
        for k in ks:
            if not warm:
                partition_graph(g, k, "best", strong)  # numba's compilation, untimed
                spans.take()
                warm = True
            t = time.perf_counter()
            info = partition_graph(g, k, "best", strong).info
            total = time.perf_counter() - t
            stage = spans.take()
            final = info["replicas_after"] / nplus
            cell = {"graph": name, "k": k, "seconds": total,
                    "rf_candidates": info.get("vcycles_from", info["replicas_after"]) / nplus,
                    "rf_cycles": info.get("perturb_from", info["replicas_after"]) / nplus,
                    "rf_final": final, "best_of": info.get("best_of"),
                    **{f"{s}_seconds": v for s, v in stage.items()},
                    "mtk": refs.get(k, {}).get("ref_mtk")}
            cells.append(cell)
            m = cell["mtk"]
            ratio = (lambda x: f"{x / m[0]:8.4f}") if m else (lambda x: f"{'-':>8s}")
            print(f"{name:24s} {k:4d} {ratio(cell['rf_candidates'])} {ratio(cell['rf_cycles'])} "
                  f"{ratio(final)} {total:7.2f} {stage['multilevel_assign']:6.2f} "
                  f"{stage['vcycle_refine']:7.2f} {stage['perturb_refine']:7.2f} "
                  f"{(f'{total / m[2]:8.3f}' if m and m[2] else '-'):>8s}", flush=True)
    print("", *stage_lines(cells), stage_shares(cells), sep="\n")
    if args.json:
        save(args.json, {**envelope("bench/bench_strong_stages.py", sys.argv[1:],
                                    kind="in-process", runs="warm, one run", started=started,
                                    label=args.label),
                         "fm_stall": cut_levels.VCYCLE_FM_STALL, "cells": cells})


if __name__ == "__main__":
    main()
