"""Mt-KaHyPar on the three large graphs of issue 65, run once and kept as a reference.

REFERENCE_RESULTS.md has no row for ego-Twitter, cnr-2000 and uk-2007-05-100000. This
script runs Mt-KaHyPar on them as that file ran it on the others: the hypergraph model
(vertex = graph edge, net = graph vertex), connectivity - 1, epsilon 0.03, the *quality*
preset, every core of the machine, on the undirected, deduplicated, self-loop-free graph.
Each (graph, k) runs in a child process with a wall-clock limit; RF and balance are
recomputed here from the assignment it returns. The results go to
bench/reference_large.json (kept in git: bench/bench_quality.py reads it), rewritten
whole after every cell, so a long run that is stopped keeps what it finished.

Times are the partitioner's alone (reading the graph and building the nets excluded),
so they understate the reference file's, which include the tools' file conversion.

Usage: python bench/mtkahypar_large.py [--datasets DIR] [--graphs a,b] [--ks 32,128]
       [--limit SECONDS] [--threads N] [--out FILE]
"""

import argparse
import json
import multiprocessing as mp
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _record import envelope, now, save  # noqa: E402
from _reference import LARGE_REFERENCE, graph_file  # noqa: E402

LARGE = ("ego-Twitter-undirected", "cnr-2000", "uk-2007-05-100000")


def load_simple(path):
    """The graph as the reference tools saw it (`bench_quality.unweighted_simple`)."""
    from bench_quality import unweighted_simple
    from ir_graph import read_graph

    return unweighted_simple(read_graph(path))


def _child(path, k, threads, queue):
    from bench_quality import rf_and_balance
    from vcut.spac import hypergraph_assign

    g = load_simple(path)
    src, dst = np.asarray(g.src), np.asarray(g.dst)
    t = time.perf_counter()
    part = hypergraph_assign(src, dst, g.weight, g.n, k, imbalance=1.03, seed=0,
                             preset="quality", threads=threads)
    seconds = time.perf_counter() - t
    rf, bal = rf_and_balance(src, dst, part, k)
    queue.put({"rf": round(rf, 6), "balance": round(bal, 6), "seconds": round(seconds, 2),
               "edges": int(len(src)), "vertices": int(g.n)})


def run_cell(path, k, threads, limit):
    """One Mt-KaHyPar run in a child process: its result dict, or one saying it was over
    ``limit`` seconds or failed."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(path, k, threads, queue))
    t = time.perf_counter()
    proc.start()
    proc.join(limit)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"status": f"over {limit:.0f} s", "seconds": round(time.perf_counter() - t, 1)}
    if proc.exitcode != 0 or queue.empty():
        return {"status": f"failed (exit {proc.exitcode})"}
    return {"status": "ok", **queue.get()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--graphs", default=",".join(LARGE))
    ap.add_argument("--ks", default="32,128")
    ap.add_argument("--limit", type=float, default=3600.0, help="seconds per cell")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=LARGE_REFERENCE)
    args = ap.parse_args()
    started = now()
    try:
        with open(args.out) as fh:
            cells = json.load(fh).get("cells", {})
    except FileNotFoundError:
        cells = {}
    for name in args.graphs.split(","):
        path = graph_file(args.datasets, name)
        if path is None:
            raise SystemExit(f"no dataset file for {name} in {args.datasets}")
        for k in (int(x) for x in args.ks.split(",")):
            print(f"{name} k={k} (limit {args.limit:.0f} s) ...", flush=True)
            res = run_cell(path, k, args.threads, args.limit)
            res.update(threads=args.threads, preset="quality", epsilon=0.03,
                       date=now().isoformat(timespec="seconds"))
            cells.setdefault(name, {})[str(k)] = res
            print(f"  {res}", flush=True)
            save(args.out, {**envelope("bench/mtkahypar_large.py", sys.argv[1:],
                                       kind="in-process", runs="one run", started=started),
                            "cells": cells})


if __name__ == "__main__":
    main()
