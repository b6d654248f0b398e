"""Benchmark BFS / SSSP under the load-balancing strategies (CPU path), against scipy.

Per graph x strategy x (BFS, SSSP): kernel time (best of --repeat; the
traversal on a ready CSR), overhead (building the CSR from the edge list,
validation), MTEPS on the kernel time (edges relaxed per second), working
memory, the ratio to BS, and scipy.sparse.csgraph's time on the same ready CSR
(target: the best CPU strategy's kernel within 2x of scipy). BFS adds ``do``,
direction-optimising BFS (target: within 1.5x of scipy on every graph; its
bottom-up steps use every numba thread), SSSP adds ``delta``, delta-stepping
with near/far worklists, both on the CPU and the GPU.
Graphs: own RMAT / Erdos-Renyi / grid generators and real graphs from
../shared/datasets ($VCUT_DATASETS). ``--device gpu`` runs the numba.cuda kernels, and
the CPU strategies beside them unless ``--no-cpu`` (kernel time
= the iteration loop; overhead = uploads, preprocessing kernels, download;
memory = the planned device bytes); ``--gpu-target`` adds the headline case,
BFS on RMAT with 2^22 vertices and 2^26 edges (target >= 1 GTEPS for the best
strategy on an H100 / H200).

Usage: python bench/bench_traversal.py [--repeat 3] [--scale 17] [--device cpu|gpu] [--gpu-target]
       [--graphs grid256,luxembourg_osm]
"""

import argparse
import os
import sys
import time

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import read_graph  # noqa: E402
from runtime.generators import erdos_renyi, grid, rmat  # noqa: E402
from runtime.traversal import BFS_STRATEGIES, SSSP_STRATEGIES, bfs, csr_out, sssp  # noqa: E402

DATA = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")


def best(fn, repeat):
    out = None
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


#: the runtime.config tunables --gpu-config may set
GPU_TUNABLES = ("LEVELS_PER_LAUNCH", "BLOCK_FRONTIER", "BLOCK_THREADS", "RESIDENT_FRONTIER",
                "RESIDENT_BLOCKS", "SMALL_FRONTIER", "THREADS_PER_BLOCK")


def set_gpu_config(ap, spec):
    """Apply ``NAME=VALUE,...`` to runtime.config (integers, or 'none'); print what is set."""
    from runtime import config

    for item in filter(None, spec.split(",")):
        name, _, value = item.partition("=")
        if name not in GPU_TUNABLES:
            ap.error(f"--gpu-config: {name!r} is not one of {', '.join(GPU_TUNABLES)}")
        try:
            setattr(config, name, None if value.lower() == "none" else int(value))
        except ValueError:
            ap.error(f"--gpu-config: {name}={value!r} is not an integer or 'none'")
    print("GPU tunables: " + ", ".join(f"{n}={getattr(config, n)}" for n in GPU_TUNABLES),
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=int, default=17)
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--gpu-target", action="store_true")
    ap.add_argument("--only-target", action="store_true")
    ap.add_argument("--graphs", help="comma-separated graph names to run (default: all), e.g. "
                    "grid256,luxembourg_osm")
    ap.add_argument("--no-cpu", action="store_true",
                    help="with --device gpu: skip the CPU strategies run beside the GPU ones")
    ap.add_argument("--gpu-config", default="", metavar="NAME=VALUE,...",
                    help="set GPU tunables of runtime.config for this run (for A/B runs on a "
                         f"card): {', '.join(GPU_TUNABLES)}; 'none' for None, e.g. "
                         "LEVELS_PER_LAUNCH=64,BLOCK_FRONTIER=0,RESIDENT_FRONTIER=0 "
                         "(the loop of the traversal runs in docs/notes/gpu-h200.md)")
    args = ap.parse_args()
    set_gpu_config(ap, args.gpu_config)
    s = args.scale
    dev = args.device
    graphs = [] if args.only_target else [
        (f"rmat{s}", rmat(s, 8, seed=1, weights="uniform")),
        (f"er{s}", erdos_renyi(1 << s, 4 << s, seed=2, weights="uniform")),
        (f"grid{1 << (s // 2)}", grid(1 << (s // 2), 1 << (s - s // 2), seed=3, weights="uniform")),
        ("email-Enron", read_graph(os.path.join(DATA, "email-Enron.txt.gz"))),
        ("luxembourg_osm", read_graph(os.path.join(DATA, "luxembourg_osm.mtx.gz"))),
    ]
    if args.gpu_target or args.only_target:  # first: the headline case
        graphs.insert(0, ("rmat22-ef16", rmat(22, 16, seed=5, weights="uniform")))
    if args.graphs:
        wanted = set(args.graphs.split(","))
        unknown = wanted - {name for name, _ in graphs}
        if unknown:
            sys.exit(f"error: --graphs: no graph named {', '.join(sorted(unknown))} here "
                     f"(have {', '.join(name for name, _ in graphs)})")
        graphs = [(name, g) for name, g in graphs if name in wanted]
    print("| graph | |V| | |E| (both directions) | kind | strategy | kernel s | overhead s | MTEPS "
          "| graph GTEPS | est. GB/s | memory MiB | vs BS | vs scipy | extra |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, g in graphs:
        ip, ix, w = csr_out(g)
        source = int(np.argmax(np.diff(ip)))  # start from a hub: reaches the giant component
        target = name.startswith("rmat22")  # the headline case: BFS only, slow references once
        for kind, run in (("bfs", bfs), ("sssp", sssp)):
            if target and kind == "sssp":
                continue
            reps = 1 if target else args.repeat
            mat = csr_matrix((np.ones_like(w) if kind == "bfs" else w, ix, ip), shape=(g.n, g.n))
            ts, ref = best(lambda: shortest_path(mat, method="D", directed=True, indices=source,
                                                  unweighted=kind == "bfs"), reps)
            base = None
            cpu_strategies = ("bs", "do") if target else \
                BFS_STRATEGIES if kind == "bfs" else SSSP_STRATEGIES
            gpu_strategies = ("bs", "ep", "ns", "do") if target else cpu_strategies
            runs_of = [(s, "cpu") for s in cpu_strategies] if dev == "cpu" else \
                [(s, "gpu") for s in gpu_strategies] + \
                ([] if args.no_cpu else [(s, "cpu") for s in cpu_strategies])
            # Graph500's TEPS: input edges of the reached component / time (each
            # undirected edge once), whatever the strategy examines
            reached = np.isfinite(ref)
            component_edges = int(np.diff(ip)[reached].sum()) // 2
            for strat, where in runs_of:
                run(g, source, strat, device=where)  # warm-up (compilation, numba cache load)
                runs = []
                for _ in range(reps if where == "cpu" else args.repeat):
                    t0 = time.perf_counter()
                    r = run(g, source, strat, device=where)
                    over = r.info.get("overhead_seconds", time.perf_counter() - t0 - r.seconds)
                    runs.append((r.seconds, over, r))
                t, over, r = min(runs, key=lambda x: x[0])
                assert np.allclose(r.dist, ref), (name, kind, strat)
                base = base or t
                extra = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in r.info.items()
                                  if k not in ("memory_bytes", "kernel_seconds", "overhead_seconds"))
                # bytes moved, a model: per examined edge its index, weight and the
                # target's distance (8 B each); per reached node its two CSR offsets
                # and distance; atomics and worklists not counted
                moved = 24 * r.edges_relaxed + 24 * int(reached.sum())
                print(f"| {name} | {g.n:,} | {len(ix):,} | {kind} | {strat}@{where} | {t:.4f} | "
                      f"{over:.4f} | {r.edges_relaxed / t / 1e6:.1f} | "
                      f"{component_edges / t / 1e9:.3f} | {moved / t / 1e9:.1f} | "
                      f"{r.info['memory_bytes'] / 2**20:.1f} | {t / base:.2f} | {t / ts:.2f} | {extra} |",
                      flush=True)
            print(f"| {name} | | | {kind} | scipy.sparse.csgraph | {ts:.4f} | | | "
                  f"{component_edges / ts / 1e9:.3f} | | | | 1.00 | |",
                  flush=True)

if __name__ == "__main__":
    main()
