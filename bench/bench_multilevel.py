"""Benchmark the multilevel partitioner's CPU twin against METIS and KaMinPar.

For each graph (meshes and power-law graphs of ../shared/datasets, plus
generated RMAT and grid graphs) and each k: edge cut and balance of
``runtime.multilevel.multilevel_partition`` (3 % imbalance), of METIS (pymetis,
ufactor 30, one core) and of KaMinPar (``pip install kaminpar``, default
context, one thread) where installed; times are the best of ``--repeat``
runs after an untimed warm-up (numba compilation excluded) and exclude
reading the graph.

Targets (issue: GPU partitioning, CPU twin), printed with the figures:

* cut / METIS cut: geometric mean <= 1.05;
* time / METIS time: geometric mean <= 1.0 (one core each);
* balance <= 1.03 in every cell.

``--jet`` and ``--rb`` also run the CPU twin with Jet in FM's place and with
``scheme="rb"`` (recursive bisection of the whole graph), cut and time beside.

``--seeds N`` also partitions each cell with seeds 0..N-1 (untimed; METIS with the same
seeds) and prints the mean and the worst of the cuts against METIS's mean: how far an
unlucky seed can land.

``--gpu`` also runs the partitioner on the GPU (``device="gpu"``; the whole call,
uploads and downloads included, after a warm-up that compiles the kernels) and
prints its cut, balance, time and per-phase seconds beside; its targets: on the
graphs of at least 10**6 edges, >= 5 x faster than METIS at cut <= 1.05 x
METIS's. Under the CUDA simulator (no GPU) it runs, very slowly: small graphs only.
``--gpu-greedy`` runs the GPU without Jet too (``refiner="greedy"``), beside.
``--profile`` adds, per cell, one GPU run synchronised after every launch: the six
kernels of most seconds (launches), the kernels' sum against the run's seconds (the rest
is the host: launches from Python, reads, the initial partitioning), the levels and the
coarsest graph's size, match rounds, refinement passes and heavy vertices.

Usage: python bench/bench_multilevel.py [--datasets DIR] [--graphs a,b] [--ks 8,32,64,128]
       [--repeat 2] [--generated rmat18,grid1024] [--csv FILE] [--fm-ablation] [--gpu]
       [--seeds N]
       (--generated also takes rmat20, rmat22 and grid2048: 2**20 to 2**22 vertices)
"""

import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import read_graph  # noqa: E402
from runtime.generators import grid, rmat  # noqa: E402
from runtime.multilevel import csr_from_edges, multilevel_partition  # noqa: E402
from runtime.multilevel import refinement_kernels as K  # noqa: E402
from runtime.multilevel import refinement  # noqa: E402

MESHES = ["delaunay_n15.graph.gz", "delaunay_n16.edges.gz", "fe_body.graph.gz",
          "fe_sphere.graph.gz", "4elt.graph.gz", "finan512.graph.gz", "rgg_n_2_16_s0.mtx.gz",
          "luxembourg_osm.mtx.gz"]
POWER_LAW = ["email-Enron.txt.gz", "ca-HepPh.txt.gz", "cit-HepPh.lg.gz",
             "as-caida20071105.lg.gz", "PGPgiantcompo.graph.gz", "cnr-2000.arcs.txt.gz"]
GENERATED = {"rmat18": lambda: rmat(18, 8, seed=1), "grid1024": lambda: grid(1024, 1024, seed=1),
             # the largest sizes (2**22 vertices; not in the default run)
             "rmat20": lambda: rmat(20, 8, seed=1), "rmat22": lambda: rmat(22, 8, seed=1),
             "grid2048": lambda: grid(2048, 2048, seed=1)}


def best_time(fn, repeat):
    fn()  # warm-up (compilation, caches)
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def balance(part, vwgt, k):
    loads = np.bincount(part, weights=vwgt, minlength=k)
    return float(loads.max() / (vwgt.sum() / k))


def run_metis(lv, k, seed=0):
    import pymetis

    opts = pymetis.Options(ufactor=30, seed=seed)
    _, parts = pymetis.part_graph(k, pymetis.CSRAdjacency(lv.indptr, lv.indices),
                                  vweights=lv.vwgt, eweights=lv.ewgt, options=opts)
    return np.asarray(parts, dtype=np.int64)


def kaminpar_graph(lv, tmp):
    """KaMinPar reads graphs from files: the level as a METIS file."""
    try:
        import kaminpar
    except ImportError:
        return None
    path = os.path.join(tmp, "g.metis")
    with open(path, "w") as fh:
        fh.write(f"{lv.n} {lv.m} 011\n")
        for v in range(lv.n):
            lo, hi = lv.indptr[v], lv.indptr[v + 1]
            pairs = np.empty(2 * (hi - lo), dtype=np.int64)
            pairs[0::2] = lv.indices[lo:hi] + 1
            pairs[1::2] = lv.ewgt[lo:hi]
            fh.write(f"{lv.vwgt[v]} " + " ".join(map(str, pairs.tolist())) + "\n")
    return kaminpar.load_graph(path, kaminpar.GraphFileFormat.METIS)


def run_kaminpar(kg, k):
    import kaminpar

    kaminpar.seed = 0
    return np.asarray(kaminpar.KaMinPar(1, kaminpar.default_context()).compute_partition(
        kg, k, 0.03), dtype=np.int64)


def profile_line(lv, k):
    """One GPU run of ``lv`` synchronised after every launch: where its seconds go."""
    from runtime.multilevel import gpu

    gpu.PROFILE = {}
    try:
        t = time.perf_counter()
        r = multilevel_partition(lv, k, device="gpu", seed=0)
        wall = time.perf_counter() - t
        prof = gpu.PROFILE
    finally:
        gpu.PROFILE = None
    kern = sum(v[0] for v in prof.values())
    top = sorted(prof.items(), key=lambda kv: -kv[1][0])[:6]
    st = r.gpu
    nc, mc = r.level_sizes[-1]
    return (f"#   profile k={k}: {wall:.3f} s synchronised, kernels {kern:.3f} s in "
            f"{sum(v[1] for v in prof.values())} launches; {len(r.level_sizes)} levels, "
            f"coarsest {nc} vertices / {mc} edges; match rounds {st['match_rounds']}, "
            f"passes {st['passes']}, heavy {st['heavy_vertices']}, Jet rounds "
            f"{st['jet_rounds']} + {st['jet_rebalances']} rebalancing, "
            f"{st['jet_launches']} launches; "
            + ", ".join(f"{name.replace('_kernel', '')} {sec:.3f} ({n})"
                        for name, (sec, n) in top))


def gmean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    ap.add_argument("--graphs", help="comma-separated dataset file names (default: all listed)")
    ap.add_argument("--generated", default="rmat18,grid1024")
    ap.add_argument("--ks", default="8,32,64,128")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--csv")
    ap.add_argument("--fm-ablation", action="store_true",
                    help="also run without the k-way FM pass (cut and time beside)")
    ap.add_argument("--fm-alt", type=float, default=0.0, metavar="B",
                    help="with --fm-ablation: the FM budget of the second run instead of 0 "
                    "(no FM), in adjacency entries per entry of the level")
    ap.add_argument("--jet", action="store_true",
                    help="also run the CPU twin with the GPU's Jet refinement instead of FM "
                         "(refiner='jet'; cut and time beside)")
    ap.add_argument("--rb", action="store_true",
                    help="also run scheme='rb' (recursive bisection of the whole graph, then "
                         "FM; cut and time beside)")
    ap.add_argument("--seeds", type=int, default=1,
                    help="also partition with seeds 0..N-1 (untimed), METIS too, and print "
                         "the mean and the worst cut over them against METIS's mean")
    ap.add_argument("--threads", type=int, default=1,
                    help="numba threads of the CPU twin (default 1: one core, as METIS's; "
                         "Jet's maps run in parallel)")
    ap.add_argument("--gpu", action="store_true", help="also run the GPU phases (device=gpu)")
    ap.add_argument("--gpu-greedy", action="store_true",
                    help="with --gpu: also the GPU without Jet (refiner='greedy'), beside")
    ap.add_argument("--cut-width", type=int, metavar="W",
                    help="with --gpu: lanes that share a vertex's edges when the GPU counts "
                         "the cut (runtime.multilevel.gpu.CUT_WIDTH; default: its value)")
    ap.add_argument("--profile", action="store_true",
                    help="with --gpu: one more GPU run per cell, synchronised after every kernel, "
                         "printing the kernels' seconds and launches and the host's share")
    a = ap.parse_args()
    if a.cut_width is not None and a.cut_width < 1:
        ap.error(f"--cut-width: at least 1 lane a vertex, got {a.cut_width}")
    from numba import set_num_threads

    set_num_threads(a.threads)
    ks = [int(x) for x in a.ks.split(",")]
    if a.gpu:
        from runtime.gpu import resolve_device
        from runtime.multilevel import gpu

        resolve_device("gpu")  # a one-line error without a usable GPU
        if a.cut_width is not None:
            gpu.CUT_WIDTH = a.cut_width
        print(f"# GPU cut count: {gpu.CUT_WIDTH} lane(s) a vertex")
    names = a.graphs.split(",") if a.graphs else MESHES + POWER_LAW
    graphs = [(n, lambda n=n: read_graph(os.path.join(a.datasets, n), None)) for n in names
              if os.path.exists(os.path.join(a.datasets, n))]
    graphs += [(n, GENERATED[n]) for n in a.generated.split(",") if n in GENERATED]
    rows = []
    head = (f"{'graph':28s} {'n':>9s} {'m':>10s} {'k':>4s} | {'cut':>9s} {'bal':>6s} {'s':>7s} | "
            f"{'METIS cut':>9s} {'bal':>6s} {'s':>7s} | {'KaMinPar':>9s} {'bal':>6s} {'s':>7s} | "
            f"{'cut/M':>6s} {'t/M':>6s}")
    print(head)
    print("-" * len(head))
    with tempfile.TemporaryDirectory() as tmp:
        for name, load in graphs:
            g = load()
            lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
            kg = kaminpar_graph(lv, tmp)
            for k in ks:
                if k > lv.n:
                    continue
                t_o, r = best_time(lambda: multilevel_partition(lv, k, seed=0), a.repeat)
                t_n = cut_n = float("nan")
                if a.fm_ablation:
                    budget, refinement.FM_BUDGET = refinement.FM_BUDGET, a.fm_alt  # 0: no FM
                    t_n, rn = best_time(lambda: multilevel_partition(lv, k, seed=0), a.repeat)
                    refinement.FM_BUDGET = budget
                    cut_n = rn.cut
                t_j = cut_j = bal_j = float("nan")
                if a.jet:
                    t_j, rj = best_time(lambda: multilevel_partition(lv, k, seed=0, refiner="jet"),
                                        a.repeat)
                    cut_j, bal_j = rj.cut, rj.balance
                t_b = cut_b = bal_b = float("nan")
                if a.rb:
                    t_b, rb = best_time(lambda: multilevel_partition(lv, k, seed=0, scheme="rb"),
                                        a.repeat)
                    cut_b, bal_b = rb.cut, rb.balance
                t_m, pm = best_time(lambda: run_metis(lv, k), a.repeat)
                cut_m = int(K.edge_cut(lv.indptr, lv.indices, lv.ewgt, pm))
                cut_k = bal_k = t_k = float("nan")
                if kg is not None:
                    t_k, pk = best_time(lambda: run_kaminpar(kg, k), a.repeat)
                    cut_k = int(K.edge_cut(lv.indptr, lv.indices, lv.ewgt, pk))
                    bal_k = balance(pk, lv.vwgt, k)
                row = dict(graph=name.split(".")[0], n=lv.n, m=lv.m, k=k, cut=r.cut,
                           bal=r.balance, t=t_o, cut_metis=cut_m,
                           bal_metis=balance(pm, lv.vwgt, k), t_metis=t_m, cut_kaminpar=cut_k,
                           bal_kaminpar=bal_k, t_kaminpar=t_k, cut_no_fm=cut_n, t_no_fm=t_n,
                           cut_jet=cut_j, bal_jet=bal_j, t_jet=t_j, cut_rb=cut_b,
                           bal_rb=bal_b, t_rb=t_b)
                if a.gpu:
                    t_g, rg = best_time(lambda: multilevel_partition(lv, k, device="gpu", seed=0),
                                        a.repeat)
                    if a.gpu_greedy:
                        t_gg, rgg = best_time(lambda: multilevel_partition(
                            lv, k, device="gpu", seed=0, refiner="greedy"), a.repeat)
                        row.update(cut_gpu_greedy=rgg.cut, bal_gpu_greedy=rgg.balance,
                                   t_gpu_greedy=t_gg)
                    row.update(cut_gpu=rg.cut, bal_gpu=rg.balance, t_gpu=t_g,
                               jet_rounds=rg.gpu["jet_rounds"],
                               jet_rebalances=rg.gpu["jet_rebalances"],
                               **{f"gpu_{x}": rg.seconds[x]
                                  for x in ("coarsening", "initial", "refinement")})
                    if a.profile:
                        print(profile_line(lv, k), flush=True)
                if a.seeds > 1:
                    ours = [r.cut] + [multilevel_partition(lv, k, seed=s).cut
                                      for s in range(1, a.seeds)]
                    theirs = [cut_m] + [int(K.edge_cut(lv.indptr, lv.indices, lv.ewgt,
                                                       run_metis(lv, k, s)))
                                        for s in range(1, a.seeds)]
                    row.update(seeds_mean=float(np.mean(ours) / max(np.mean(theirs), 1)),
                               seeds_worst=max(ours) / max(np.mean(theirs), 1),
                               seeds_metis_worst=max(theirs) / max(np.mean(theirs), 1))
                rows.append(row)
                print(f"{row['graph'][:28]:28s} {lv.n:9d} {lv.m:10d} {k:4d} | {r.cut:9d} "
                      f"{r.balance:6.3f} {t_o:7.3f} | {cut_m:9d} {row['bal_metis']:6.3f} "
                      f"{t_m:7.3f} | {cut_k:9.0f} {bal_k:6.3f} {t_k:7.3f} | "
                      f"{r.cut / max(cut_m, 1):6.3f} {t_o / t_m:6.2f}"
                      + (f" | FM {a.fm_alt:g} {cut_n / max(cut_m, 1):6.3f} {t_n / t_m:6.2f}"
                         if a.fm_ablation else "")
                      + (f" | seeds {row['seeds_mean']:6.3f} worst {row['seeds_worst']:6.3f}"
                         f" (METIS {row['seeds_metis_worst']:6.3f})" if a.seeds > 1 else "")
                      + (f" | Jet {cut_j / max(cut_m, 1):6.3f} {t_j / t_m:6.2f} b{bal_j:.3f}"
                         if a.jet else "")
                      + (f" | RB {cut_b / max(cut_m, 1):6.3f} {t_b / t_m:6.2f} b{bal_b:.3f}"
                         if a.rb else "")
                      + (f" | GPU {row['cut_gpu']:9d} {row['bal_gpu']:6.3f} {row['t_gpu']:7.3f} "
                         f"(coarsen {row['gpu_coarsening']:.3f}, initial {row['gpu_initial']:.3f}, "
                         f"refine {row['gpu_refinement']:.3f}) cut/M "
                         f"{row['cut_gpu'] / max(cut_m, 1):6.3f} M/t {t_m / t_g:6.2f} "
                         f"(Jet {row['jet_rounds']} + {row['jet_rebalances']} rounds)"
                         if a.gpu else "")
                      + (f" | GPU greedy {row['cut_gpu_greedy'] / max(cut_m, 1):6.3f} M/t "
                         f"{t_m / row['t_gpu_greedy']:6.2f}" if a.gpu and a.gpu_greedy else ""),
                      flush=True)
    cut_r = [r["cut"] / max(r["cut_metis"], 1) for r in rows]
    t_r = [r["t"] / r["t_metis"] for r in rows]
    kp = [r["cut_kaminpar"] / max(r["cut_metis"], 1) for r in rows]
    print()
    print(f"cells {len(rows)}")
    print(f"cut / METIS, geometric mean   {gmean(cut_r):.3f}   (target <= 1.05)")
    groups = [{n.split(".")[0] for n in MESHES}, {n.split(".")[0] for n in POWER_LAW},
              set(GENERATED)]
    print("  meshes / power-law / generated: " + " / ".join(
        f"{gmean([c for c, r in zip(cut_r, rows) if r['graph'] in grp]):.3f}" for grp in groups))
    print(f"time / METIS, geometric mean  {gmean(t_r):.2f}    (target <= 1.0)")
    print(f"balance <= 1.03: {sum(r['bal'] <= 1.03 + 1e-9 for r in rows)}/{len(rows)}")
    print(f"KaMinPar cut / METIS, geometric mean {gmean(kp):.3f}")
    if a.seeds > 1:
        worst = max(rows, key=lambda r: r["seeds_worst"])
        print(f"seeds 0-{a.seeds - 1}: mean cut / METIS's mean "
              f"{gmean([r['seeds_mean'] for r in rows]):.3f}; worst seed / METIS's mean "
              f"{gmean([r['seeds_worst'] for r in rows]):.3f} (METIS's own worst "
              f"{gmean([r['seeds_metis_worst'] for r in rows]):.3f}); the largest "
              f"{worst['seeds_worst']:.3f} ({worst['graph']}, k = {worst['k']})")
    if a.fm_ablation:
        print(f"FM budget {a.fm_alt:g} (0: no FM): cut / METIS {gmean([r['cut_no_fm'] / max(r['cut_metis'], 1) for r in rows]):.3f}, "
              f"time / METIS {gmean([r['t_no_fm'] / r['t_metis'] for r in rows]):.2f}")
    for on, label, key in ((a.jet, "Jet on the twin", "jet"), (a.rb, "Scheme rb", "rb")):
        if on:
            c = [r["cut_" + key] / max(r["cut_metis"], 1) for r in rows]
            print(f"{label}: cut / METIS {gmean(c):.3f} (meshes / power-law / generated: "
                  + " / ".join(f"{gmean([x for x, r in zip(c, rows) if r['graph'] in grp]):.3f}"
                               for grp in groups)
                  + f"), time / METIS {gmean([r['t_' + key] / r['t_metis'] for r in rows]):.2f}"
                  f", balance <= 1.03: "
                  f"{sum(r['bal_' + key] <= 1.03 + 1e-9 for r in rows)}/{len(rows)}")
    if a.gpu:
        big = [r for r in rows if r["m"] >= 10**6]
        print(f"GPU: cut / METIS {gmean([r['cut_gpu'] / max(r['cut_metis'], 1) for r in rows]):.3f}, "
              f"METIS time / GPU time {gmean([r['t_metis'] / r['t_gpu'] for r in rows]):.2f}, "
              f"balance <= 1.03: {sum(r['bal_gpu'] <= 1.03 + 1e-9 for r in rows)}/{len(rows)}")
        if big:
            print(f"GPU on the {len(big)} cells of >= 10^6 edges: cut / METIS "
                  f"{gmean([r['cut_gpu'] / max(r['cut_metis'], 1) for r in big]):.3f} "
                  f"(target <= 1.05), METIS time / GPU time "
                  f"{gmean([r['t_metis'] / r['t_gpu'] for r in big]):.2f} (target >= 5)")
        if a.gpu_greedy:
            for name, sel in (("all cells", rows), (">= 10^6 edges", big)):
                if sel:
                    print(f"GPU without Jet ({name}): cut / METIS "
                          f"{gmean([r['cut_gpu_greedy'] / max(r['cut_metis'], 1) for r in sel]):.3f}"
                          f", METIS time / GPU time "
                          f"{gmean([r['t_metis'] / r['t_gpu_greedy'] for r in sel]):.2f}")
    if a.csv:
        import csv

        with open(a.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
