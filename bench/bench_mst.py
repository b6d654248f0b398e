"""Benchmark the Borůvka minimum spanning forest against scipy's (Kruskal, one core).

Per graph: scipy.sparse.csgraph.minimum_spanning_tree on a ready CSR matrix
(best of --repeat), vcut's preparation (ranking the edges and the rank-ordered
adjacency) and rounds on the CPU (numba, every thread) and, with --device gpu,
on the GPU (rounds = the kernels; transfers and the host-side adjacency
reported apart); the speed-up over scipy on the whole call and on the rounds;
rounds and edges examined per edge; and whether the total weights agree
exactly (integer weights). The source (seed 004, Table 5.4) reports 1.4-4.5x
over a serial MST on DIMACS road graphs for its GPU Borůvka.

Graphs: road / geometric graphs from ../shared/datasets ($VCUT_DATASETS) and
generated grids, RMAT and Erdős-Rényi graphs up to --scale (2^scale vertices),
with uniform integer weights 1..100 (seeded).

Usage: python bench/bench_mst.py [--repeat 3] [--scale 20] [--device cpu|gpu]
"""

import argparse
import os
import sys
import time

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import minimum_spanning_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import Graph, read_graph  # noqa: E402
from runtime.generators import erdos_renyi, grid, rmat  # noqa: E402
from runtime.mst import minimum_spanning_forest  # noqa: E402

DATA = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")
FILES = ("luxembourg_osm.mtx.gz", "delaunay_n16.edges.gz", "rgg_n_2_16_s0.mtx.gz",
         "soc-Epinions1-lcc.txt.gz", "cnr-2000.arcs.txt.gz")


def graphs(scale):
    rng = np.random.default_rng(0)
    for name in FILES:
        path = os.path.join(DATA, name)
        if not os.path.exists(path):
            print(f"# skipped {name}: not in {DATA}", file=sys.stderr)
            continue
        g = read_graph(path)
        yield name.split(".")[0], Graph(n=g.n, src=g.src, dst=g.dst, directed=False,
                                        weight=rng.integers(1, 101, g.m).astype(np.float64))
    side = 2 ** (scale // 2)
    yield f"grid {side}x{side}", grid(side, side, weights="uniform", seed=1)
    yield f"ER 2^{scale}, m=4n", erdos_renyi(2**scale, 4 * 2**scale, weights="uniform", seed=2)
    yield f"RMAT {scale}, ef 8", rmat(scale, 8, weights="uniform", seed=3)


def timed(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    args = ap.parse_args()
    minimum_spanning_forest(grid(8, 8, weights="uniform"), args.device)  # compile
    head = ("graph", "n", "m", "scipy s", "prep s", "rounds s", "total s", "x scipy",
            "x (rounds)", "rounds", "examined/m", "weight ok")
    print(f"# device {args.device}; {os.cpu_count()} CPUs; best of {args.repeat}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, g in graphs(args.scale):
        keep = g.src != g.dst
        u, v, w = g.src[keep], g.dst[keep], g.weight[keep]
        mat = coo_matrix((w, (u, v)), shape=(g.n, g.n)).tocsr()  # parallel edges would add up
        t_sp, tree = timed(lambda: minimum_spanning_tree(mat), args.repeat)
        t_all, f = timed(lambda: minimum_spanning_forest(g, args.device), args.repeat)
        prep = f.info["prepare_seconds"] + f.info.get("overhead_seconds", 0.0)
        ok = "yes" if f.weight == float(tree.sum()) else f"NO ({f.weight} vs {tree.sum()})"
        if mat.nnz != int(keep.sum()):
            ok += " (dups)"
        row = (name, f"{g.n:,}", f"{g.m:,}", f"{t_sp:.3f}", f"{prep:.3f}", f"{f.seconds:.3f}",
               f"{t_all:.3f}", f"{t_sp / t_all:.2f}", f"{t_sp / f.seconds:.2f}", str(f.rounds),
               f"{f.info['edges_examined'] / max(g.m, 1):.2f}", ok)
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
