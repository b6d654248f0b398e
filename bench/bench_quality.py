"""Benchmark the quality mode (issue: lower replication than NE and HEP at strict balance).

Over the graphs of ../shared/datasets/REFERENCE_RESULTS.md at k = 8, 32, 128:
our ``ne``, ``hep`` (tau = 10) and ``best`` beside the reference NE, HEP
(tau = 10 and 100) and Mt-KaHyPar (hypergraph model, km1) of that file.

Each graph is partitioned as the reference file's tools saw it: undirected, deduplicated,
without self-loops, unweighted (`unweighted_simple`).

Targets (printed with the measured figures):

* ``best``: balance <= 1.03 in every cell; RF <= min(NE, HEP) and at or below every
  balanced NE / HEP (tau = 10 and 100) result in every cell; geometric mean of RF /
  Mt-KaHyPar's RF <= 0.99 (issue 65);
* ``best``: time <= 2 x the reference NE's and <= 1/10 of Mt-KaHyPar's (the
  reference file's times, which include the tools' file conversion; ours
  exclude reading the graph; ``--mtkahypar`` also runs our hypergraph
  baseline in the same run);
* our ``ne`` / ``hep`` within 5 % of the reference NE / HEP tau=10 RF in >= 90 %
  of the cells, and faster than the reference times.

Times are the best of ``--repeat`` runs after an untimed warm-up (numba
compilation is not counted). RF and balance are the bench's own: each assignment is
written as ``vcut partition -o`` writes it, read back with numpy and both recomputed
(`from_part_file`); the run lists any cell where they differ from vcut's figures.

``--order G``: also the order-sensitivity table (issue 65) of ``best`` on the first G
graphs: three shuffles of the edges (half of them reversed) and three renumberings of the
vertices per graph and k, RF recomputed from the assignments; ``--order-only`` prints
that table alone. ``--presets``: best's ``fast`` and ``strong`` presets too, in every cell,
and a table of the presets' trade-off. ``--large``: also ego-Twitter, cnr-2000 and
uk-2007-05-100000 at k = 32 and 128 beside the Mt-KaHyPar runs of bench/reference_large.json
(`bench/mtkahypar_large.py` makes that file; REFERENCE_RESULTS.md has no rows for them).

Usage: python bench/bench_quality.py [--datasets DIR] [--graphs a,b] [--ks 8,32,128]
       [--repeat 3] [--mtkahypar] [--csv FILE] [--order G [--order-only]] [--presets]
       [--large [--large-only]] [--json OUT.json]
"""

import argparse
import math
import os
import shutil
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _quality_tables import (LARGE_HEADER, ORDER_HEADER, ORDER_TARGET,  # noqa: E402
                             RF_ROUNDING, large_row, large_summary, min_balanced, order_row,
                             order_summary, preset_lines)
from _record import envelope, now, save  # noqa: E402
from _reference import graph_file, read_large_reference, read_reference, row  # noqa: E402
from ir_graph import read_graph  # noqa: E402
from vcut.partition import partition_graph  # noqa: E402

OURS = ("ne", "hep", "best")


def unweighted_simple(g):
    """The graph the reference results partition: undirected, deduplicated, without
    self-loops, every edge of weight 1 (`partition_graph` alone would sum the weights of an
    edge's repetitions: soc-Slashdot0902's reciprocal arcs would weigh 2, the others 1)."""
    from ir_graph import Graph
    from vcut.partition import simplify

    src, dst = simplify(g)[:2]
    return Graph(n=g.n, src=np.asarray(src), dst=np.asarray(dst), weight=np.ones(len(src)))


def reference_graphs(datasets, ref, only=""):
    """``(name, graph)`` of each graph of ``only`` (names, comma-separated; empty: every
    graph of the reference results ``ref``) that has a reference row and a file in
    ``datasets``, read as `unweighted_simple`."""
    for name in [g for g in only.split(",") if g] or list(ref):
        path = graph_file(datasets, name)
        if path is not None and name in ref:
            yield name, unweighted_simple(read_graph(path))


def timed(g, k, algo, repeat, options=None):
    best_t, part = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        part = partition_graph(g, k, algo, options)
        best_t = min(best_t, time.perf_counter() - t)
    return part, best_t


def from_part_file(g, part, k, folder):
    """RF and balance of ``part`` as the bench reads them back: the assignment written as
    ``vcut partition -o`` writes it (`vcut.output.write_partition`), read here with numpy
    (one integer per line), and both figures recomputed from it and the graph's edges (RF:
    distinct (vertex, cluster) pairs over the vertices with an edge; balance: the largest
    cluster's edge count over the mean, every edge of weight 1)."""
    from vcut.output import write_partition

    path = os.path.join(folder, "part.txt")
    write_partition(part, path, details=False)
    a = np.loadtxt(path, dtype=np.int64, ndmin=1)
    if a.shape != (len(g.src),) or a.min() < 0 or a.max() >= k:
        raise SystemExit(f"the written part file has {a.shape[0]} lines or a cluster outside "
                         f"0..{k - 1}; the graph has {len(g.src)} edges")
    return rf_and_balance(np.asarray(g.src), np.asarray(g.dst), a, k)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--graphs", default="")
    ap.add_argument("--ks", default="8,32,128")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mtkahypar", action="store_true", help="also time our hypergraph baseline")
    ap.add_argument("--csv", help="write every cell to this CSV file")
    ap.add_argument("--order", type=int, default=0, metavar="G",
                    help="also the order-sensitivity table of best on the first G graphs: "
                         f"{PERMUTATIONS} shuffles of the edges (half of them reversed) and "
                         f"{PERMUTATIONS} renumberings of the vertices per graph and k")
    ap.add_argument("--presets", action="store_true",
                    help="also run best's fast and strong presets in every cell and print "
                         "the presets' trade-off (RF and time beside the default's)")
    ap.add_argument("--order-only", action="store_true",
                    help="only the order-sensitivity table (with --order G)")
    ap.add_argument("--large", action="store_true",
                    help="also the large graphs of bench/reference_large.json (ego-Twitter, "
                         "cnr-2000, uk-2007-05-100000 at its k) beside its Mt-KaHyPar runs")
    ap.add_argument("--large-only", action="store_true", help="only the large graphs")
    ap.add_argument("--json", metavar="OUT.json",
                    help="also save every cell with the date, machine and command")
    args = ap.parse_args()
    started = now()
    ks = [int(k) for k in args.ks.split(",")]
    ref = {name: {"NE": row(rows, "NE"), "HEP10": row(rows, "HEP τ=10"),
                  "HEP100": row(rows, "HEP τ=100"), "MtK": row(rows, "hypergraph")}
           for name, rows in read_reference(args.datasets).items()}
    names = [n for n in args.graphs.split(",") if n] or list(ref)
    from ir_graph import Graph

    for dtype in (np.int32, np.int64):  # compile for both index types, untimed
        warm = Graph(n=6, src=np.array([0, 1, 2, 3, 4, 0], dtype), weight=np.ones(6),
                     dst=np.array([1, 2, 3, 4, 5, 5], dtype))
        for algo in OURS:
            partition_graph(warm, 2, algo)
    order_cells = []
    if args.order:
        order_cells = order_sensitivity(args.datasets, names[:args.order], ks)
    large = []
    if args.large or args.large_only:
        large = large_cells(args.datasets, args.repeat, args.presets)
    if args.order_only or args.large_only:
        names = []
    if names:
        print(f"\n### Quality mode beside REFERENCE_RESULTS.md (RF / balance / seconds; "
              f"best of {args.repeat})\n")
        print("| graph | k | ne | ref NE | hep τ=10 | ref HEP τ=10 | best | min(NE, HEP) | "
              "ref Mt-KaHyPar | best / min | best / min balanced | best / MtK | time / NE | "
              "time / MtK |" + (" our MtK |" if args.mtkahypar else ""))
        print("|---|---:|---|---|---|---|---|---:|---|---:|---:|---:|---:|---:|"
              + ("---|" if args.mtkahypar else ""))
    cells = []
    mismatches = []
    scratch = tempfile.mkdtemp(prefix="bench-quality-")
    for name in names:
        path = graph_file(args.datasets, name)
        if path is None or name not in ref:
            print(f"| {name} | — | not found | | | | | | | | |")
            continue
        g = unweighted_simple(read_graph(path))
        rows = ref[name]
        for i, k in enumerate(ks):
            col = {8: 0, 32: 1, 128: 2}.get(k)
            r = {key: (rows.get(key) or [None] * 3)[col] if col is not None else None
                 for key in ("NE", "HEP10", "HEP100", "MtK")}
            res = {}
            for algo in OURS:
                part, t = timed(g, k, algo, args.repeat)
                rf, bal = from_part_file(g, part, k, scratch)
                if abs(rf - part.metrics.replication_factor) > 1e-9 * rf or \
                        abs(bal - part.metrics.edge_weight_imbalance) > 1e-9 * bal:
                    mismatches.append(f"{name} k = {k} {algo}: file RF {rf}, balance {bal}; "
                                      f"vcut's {part.metrics.replication_factor}, "
                                      f"{part.metrics.edge_weight_imbalance}")
                res[algo] = (rf, bal, t)
            for preset in (("fast", "strong") if args.presets else ()):
                part, t = timed(g, k, "best", args.repeat, {"preset": preset})
                rf, bal = from_part_file(g, part, k, scratch)
                res[f"best_{preset}"] = (rf, bal, t)
            refs = [r[x][0] for x in ("NE", "HEP10") if r[x]]
            mn = min(refs) if refs else None
            mtk = r["MtK"][0] if r["MtK"] else None
            c = {"graph": name, "k": k, **{f"{a}_{f}": res[a][j] for a in OURS
                                          for j, f in enumerate(("rf", "bal", "s"))},
                 "ref_ne": r["NE"], "ref_hep10": r["HEP10"], "ref_hep100": r["HEP100"],
                 "ref_mtk": r["MtK"], "min_ref": mn,
                 **{f"{a}_{f}": res[a][j] for a in res if a.startswith("best_")
                    for j, f in enumerate(("rf", "bal", "s"))}}
            fmt = lambda x: f"{x[0]:.3f} / {x[1]:.3f} / {x[2]:.2f}" if x else "—"  # noqa: E731
            line = (f"| {name} | {k} | {fmt(res['ne'])} | {fmt(r['NE'])} | {fmt(res['hep'])} | "
                    f"{fmt(r['HEP10'])} | {fmt(res['best'])} | {mn if mn else '—'} | "
                    f"{fmt(r['MtK'])} | ")
            low = min_balanced(c)
            line += f"{res['best'][0] / mn:.3f} | " if mn else "— | "
            line += f"{res['best'][0] / low:.3f} | " if low else "— | "
            line += f"{res['best'][0] / mtk:.3f} | " if mtk else "— | "
            line += f"{res['best'][2] / max(r['NE'][2], 0.005):.2f} | " if r["NE"] else "— | "
            line += (f"{res['best'][2] / max(r['MtK'][2], 0.005):.4f} |" if r["MtK"]
                     else "— |")
            if args.mtkahypar:
                part, t = timed(g, k, "hypergraph", 1)
                c["our_mtk"] = (part.metrics.replication_factor, part.metrics.edge_weight_imbalance, t)
                line += f" {fmt(c['our_mtk'])} |"
            print(line, flush=True)
            cells.append(c)
    shutil.rmtree(scratch, ignore_errors=True)
    summarise(cells)
    if args.presets:
        preset_table(cells)
    print(f"- RF and balance above: recomputed from each written part file; "
          f"{len(mismatches)} differ from vcut's own figures" + (":" if mismatches else ""))
    for line in mismatches:
        print(f"  - {line}")
    if args.json:
        doc = envelope("bench/bench_quality.py", sys.argv[1:], kind="in-process",
                       runs=f"warm, best of {args.repeat}", started=started)
        doc.update({"ks": ks, "repeat": args.repeat, "cells": cells,
                    "order_cells": order_cells, "large_cells": large,
                    "rf_balance_from": "written part files",
                    "mismatches": mismatches})
        save(args.json, doc)
    if args.csv:
        import csv

        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            keys = list(cells[0])
            w.writerow(keys)
            for c in cells:
                w.writerow([c[k] for k in keys])


#: Random orders of each kind per graph and k (issue 65: three).
PERMUTATIONS = 3


def replication(src, dst, assignment, k):
    """RF of an edge assignment, recomputed here: distinct (vertex, cluster) pairs over the
    vertices that have an edge."""
    ends = np.concatenate([src, dst]).astype(np.int64)
    parts = np.concatenate([assignment, assignment]).astype(np.int64)
    return len(np.unique(ends * k + parts)) / len(np.unique(ends))


def rf_and_balance(src, dst, assignment, k):
    """RF (`replication`) and balance (the largest cluster's edge count over the mean, every
    edge of weight 1) of an edge assignment to ``k`` clusters."""
    counts = np.bincount(assignment, minlength=k)
    return replication(src, dst, assignment, k), float(counts.max() / (len(assignment) / k))


def order_sensitivity(datasets, names, ks, seed=65):
    """Table: best's RF on each graph as its file orders it, and the largest relative
    change over `PERMUTATIONS` shuffles of the edges (each edge reversed with probability
    1/2) and over as many random renumberings of the vertices (seeded: ``seed``)."""
    from ir_graph import Graph

    print(f"\n### Order sensitivity of best: RF in the file's order, and the largest change "
          f"over {PERMUTATIONS} edge orders and {PERMUTATIONS} vertex numberings "
          f"(target: at most {100 * ORDER_TARGET:.1f} %)\n")
    print("\n".join(ORDER_HEADER))
    cells = []
    rng = np.random.default_rng(seed)
    for name in names:
        path = graph_file(datasets, name)
        if path is None:
            continue
        g = unweighted_simple(read_graph(path))
        src, dst, n = np.asarray(g.src), np.asarray(g.dst), g.n
        for k in ks:
            base = replication(src, dst, partition_graph(g, k, "best").assignment, k)
            edges, numberings = [], []
            for _ in range(PERMUTATIONS):
                perm = rng.permutation(len(src))
                flip = rng.random(len(src)) < 0.5
                s = np.where(flip, dst, src)[perm]
                d = np.where(flip, src, dst)[perm]
                a = partition_graph(Graph(n=n, src=s, dst=d, weight=np.ones(len(s))), k,
                                    "best").assignment
                edges.append(replication(s, d, a, k) / base - 1)
            for _ in range(PERMUTATIONS):
                label = rng.permutation(n).astype(src.dtype)
                s, d = label[src], label[dst]
                a = partition_graph(Graph(n=n, src=s, dst=d, weight=np.ones(len(s))), k,
                                    "best").assignment
                numberings.append(replication(s, d, a, k) / base - 1)
            cells.append({"graph": name, "k": k, "rf": base, "edge_orders": edges,
                          "numberings": numberings})
            print(order_row(cells[-1]), flush=True)
    if cells:
        print("\n" + order_summary(cells))
    return cells


def large_cells(datasets, repeat, presets=False):
    """Table: ne, hep and best on the graphs of bench/reference_large.json at its k, beside
    its Mt-KaHyPar runs (`bench/mtkahypar_large.py`); RF and balance from the written part
    files. Returns the cells (``ne`` / ``hep`` / ``best``, and with ``presets``
    ``best_strong``: (rf, balance, seconds); ``mtk``: the reference file's cell)."""
    ref = read_large_reference()
    print("\n### The large graphs beside Mt-KaHyPar (bench/reference_large.json; ours: RF / "
          f"balance / seconds, best of {repeat}, RF and balance from the written part files)\n")
    print("\n".join(LARGE_HEADER))
    cells = []
    scratch = tempfile.mkdtemp(prefix="bench-quality-large-")
    for name, per in ref.items():
        path = graph_file(datasets, name)
        if path is None:
            print(f"| {name} | — | not found in {datasets} |")
            continue
        g = unweighted_simple(read_graph(path))
        for k in sorted(per):
            c = {"graph": name, "k": k, "mtk": per[k]}
            for algo in OURS:
                part, t = timed(g, k, algo, repeat)
                c[algo] = (*from_part_file(g, part, k, scratch), t)
            if presets:
                part, t = timed(g, k, "best", repeat, {"preset": "strong"})
                c["best_strong"] = (*from_part_file(g, part, k, scratch), t)
            cells.append(c)
            print(large_row(c), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    if cells:
        print("\n" + "\n".join(large_summary(cells)))
    return cells


def preset_table(cells):
    """best's presets side by side over ``cells`` (`_quality_tables.preset_lines`)."""
    print("\n### best's presets (`--preset`), over the same cells\n")
    print("\n".join(preset_lines(cells)))


def summarise(cells):
    n = len(cells)
    if not n:
        return
    bal = sum(c["best_bal"] <= 1.03 + 1e-9 for c in cells)
    with_min = [c for c in cells if c["min_ref"]]
    beat = sum(c["best_rf"] <= c["min_ref"] + RF_ROUNDING for c in with_min)
    balanced = [(c, min_balanced(c)) for c in cells if min_balanced(c)]
    below_balanced = [f"{c['graph']} k = {c['k']} ({c['best_rf']:.4f} against {low:.3f})"
                      for c, low in balanced if c["best_rf"] > low + RF_ROUNDING]
    mtk = [c["best_rf"] / c["ref_mtk"][0] for c in cells if c["ref_mtk"]]
    gm = float(np.exp(np.mean(np.log(mtk)))) if mtk else float("nan")
    ne_t = [c for c in cells if c["ref_ne"]]
    t2 = sum(c["best_s"] <= 2 * max(c["ref_ne"][2], 0.005) for c in ne_t)
    mt_t = [c for c in cells if c["ref_mtk"]]
    t10 = sum(c["best_s"] <= c["ref_mtk"][2] / 10 for c in mt_t)
    ne5 = [abs(c["ne_rf"] / c["ref_ne"][0] - 1) <= 0.05 for c in ne_t]
    hep_c = [c for c in cells if c["ref_hep10"]]
    hep5 = [abs(c["hep_rf"] / c["ref_hep10"][0] - 1) <= 0.05 for c in hep_c]
    ne_fast = sum(c["ne_s"] <= max(c["ref_ne"][2], 0.005) for c in ne_t)
    hep_fast = sum(c["hep_s"] <= max(c["ref_hep10"][2], 0.005) for c in hep_c)
    ne_le = sum(c["ne_rf"] <= c["ref_ne"][0] * 1.05 for c in ne_t)
    hep_le = sum(c["hep_rf"] <= c["ref_hep10"][0] * 1.05 for c in hep_c)
    print(f"\n### Targets over {n} cells\n")
    print("| target | measured |")
    print("|---|---|")
    print(f"| best: balance <= 1.03 in every cell | {bal} of {n} |")
    print(f"| best: RF <= min(NE, HEP τ=10) in every cell | {beat} of {len(with_min)} |")
    print(f"| best: RF <= every balanced (<= 1.03) NE / HEP τ=10 / HEP τ=100 result | "
          f"{len(balanced) - len(below_balanced)} of {len(balanced)} |")
    print(f"| best: geometric mean RF / Mt-KaHyPar <= 0.99 | {gm:.3f} over {len(mtk)} cells |")
    print(f"| best: time <= 2 x reference NE | {t2} of {len(ne_t)} |")
    print(f"| best: time <= 1/10 reference Mt-KaHyPar | {t10} of {len(mt_t)} |")
    print(f"| ne within 5 % of reference NE RF (>= 90 %) | {sum(ne5)} of {len(ne5)} "
          f"({100 * np.mean(ne5):.0f} %); at most 5 % above: {ne_le} |")
    print(f"| hep within 5 % of reference HEP τ=10 RF (>= 90 %) | {sum(hep5)} of {len(hep5)} "
          f"({100 * np.mean(hep5):.0f} %); at most 5 % above: {hep_le} |")
    print(f"| ne faster than reference NE | {ne_fast} of {len(ne_t)} |")
    print(f"| hep faster than reference HEP τ=10 | {hep_fast} of {len(hep_c)} |")
    ratio = [c["best_rf"] / c["min_ref"] for c in with_min]
    slow = [c["best_s"] / max(c["ref_ne"][2], 0.005) for c in ne_t]
    print(f"\nbest's time / reference NE's: geometric mean {np.exp(np.mean(np.log(slow))):.2f}, "
          f"median {np.median(slow):.2f}")
    print(f"best / min(NE, HEP τ=10): geometric mean {np.exp(np.mean(np.log(ratio))):.3f}, "
          f"range {min(ratio):.3f} .. {max(ratio):.3f}")
    over = [f"{c['graph']} k = {c['k']} ({x:.1f} x)" for c, x in zip(ne_t, slow) if x > 2]
    if over:
        print(f"best above 2 x the reference NE's time: {', '.join(over)}")
    if below_balanced:
        print(f"best above a balanced NE / HEP result: {', '.join(below_balanced)}")


if __name__ == "__main__":
    main()
