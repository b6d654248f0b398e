"""Benchmark batched streaming of the greedy family against the sequential stream.

Per graph x batch size B: WB-Libra's replication factor (and its ratio to the
sequential stream's), edge-weight balance, the share of edges decided again when
applied, seconds and edges per second, for both designs of the apply pass:
``recheck`` (the default, `vcut.greedy_kernels.RECHECK`: an edge whose frozen choice
would add a replica decides again on the live state) and ``frozen`` (only the
edges that asked for the least loaded cluster decide again: the form a GPU
batch would take). Target (issue 15): RF within 5 % of sequential WB-Libra at
B = 64 k with the balance bound kept.

``rounds`` (`vcut.greedy_rounds`) applies a batch in parallel rounds, the GPU's default.

``--device gpu`` times the GPU's forms instead (`vcut.gpu_greedy`): ``rounds``
(every round on the device, one cooperative launch per ~2 M edges) and
``recheck`` (decisions on the device, the recheck applied on the host), each
beside its CPU twin (the same assignment): per graph and B, kernel seconds,
edges/s and the speed over the sequential CPU kernel (target: >= 10x on graphs of
>= 10^7 edges); ``--rmat-only`` skips the files.

Graphs: real graphs from ../shared/datasets ($VCUT_DATASETS) in their given and
a random stream order, and a generated RMAT graph of 2^--scale vertices.

Usage: python bench/bench_batched.py [--scale 20] [-p 32] [--device gpu [--rmat-only]]
"""

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import read_graph  # noqa: E402
from runtime.generators import rmat  # noqa: E402
from vcut.cuts import greedy as greedy_cut  # noqa: E402  (its batched stream reads RECHECK)
from vcut.partition import partition_graph  # noqa: E402

DATA = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")
FILES = ("email-Enron.txt.gz", "soc-Epinions1-lcc.txt.gz", "cnr-2000.arcs.txt.gz")
BATCHES = (1024, 8192, 65536, 1 << 20)


def graphs(scale, files=FILES):
    for name in files:
        path = os.path.join(DATA, name)
        if os.path.exists(path):
            yield name.split(".")[0], read_graph(path)
        else:
            print(f"# skipped {name}: not in {DATA}", file=sys.stderr)
    yield f"RMAT {scale} ef 8", rmat(scale, 8, seed=1)


def run(g, p, order, batch, device="cpu", apply=None):
    t0 = time.perf_counter()
    r = partition_graph(g, p, "wb-libra", {"order": order, "batch": batch, "apply": apply},
                        device=device)
    return r, time.perf_counter() - t0


def gpu_table(args):
    """Sequential CPU stream, CPU batches and GPU batches side by side (one run each,
    after an untimed warm-up that compiles the kernels). "kernel s" is the assignment
    alone (`info["seconds"]`: on the GPU the uploads, launches and downloads), the
    issue's measure; "total s" the whole `partition_graph` call (reading the simple
    edges, degrees and metrics on the host included)."""
    warm = rmat(8, 4, seed=1)
    for apply in ("rounds", "recheck"):
        partition_graph(warm, args.p, "wb-libra", {"batch": 64, "apply": apply}, device="gpu")
        partition_graph(warm, args.p, "wb-libra", {"batch": 64, "apply": apply})
    partition_graph(warm, args.p, "wb-libra")
    head = ("graph", "m", "B", "run", "RF", "RF / seq", "balance", "kernel s", "M edges/s",
            "x sequential", "total s", "rounds", "launches")
    print(f"# wb-libra, p = {args.p}, given order; {os.cpu_count()} CPUs; one run per cell")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, g in graphs(args.scale, () if args.rmat_only else FILES):
        seq, t0 = run(g, args.p, "given", None)
        rf0 = seq.metrics.replication_factor
        k0 = seq.info["seconds"]
        m = seq.info["simple_edges"]

        def show(b, how, r, t):  # each row as soon as it is measured
            k = r.info["seconds"]
            print("| " + " | ".join((
                name, f"{m:,}", b, how, f"{r.metrics.replication_factor:.4f}",
                f"{r.metrics.replication_factor / rf0:.3f}",
                f"{r.metrics.edge_weight_imbalance:.5f}", f"{k:.3f}", f"{m / k / 1e6:.2f}",
                f"{k0 / k:.2f}", f"{t:.2f}", str(r.info.get("apply_rounds", "")),
                str(r.info.get("launches", "")))) + " |", flush=True)

        show("-", "sequential (CPU)", seq, t0)
        for b in args.batches:
            got = {}
            for device, apply in (("gpu", "rounds"), ("cpu", "rounds"), ("gpu", "recheck"),
                                  ("cpu", "recheck")):
                if device == "cpu" and not args.cpu_batches:
                    continue
                r, t = run(g, args.p, "given", b, device, apply)
                show(f"{b:,}", f"{apply} {device}", r, t)
                got.setdefault(apply, []).append(r.assignment)
            for apply, parts in got.items():
                if len(parts) == 2:
                    print(f"# B = {b:,}, {apply}: GPU assignment equals the CPU's: "
                          f"{np.array_equal(*parts)}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("-p", type=int, default=32)
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--rmat-only", action="store_true")
    ap.add_argument("--batches", default="65536,8192,1048576",
                    type=lambda x: [int(b) for b in x.split(",")],
                    help="--device gpu: the batch sizes")
    ap.add_argument("--no-cpu-batches", dest="cpu_batches", action="store_false",
                    help="--device gpu: skip the CPU batches (sequential stream only)")
    args = ap.parse_args()
    if args.device == "gpu":
        return gpu_table(args)
    head = ("graph", "order", "m", "B", "apply", "RF", "RF / seq", "balance",
            "redecided (rounds: re-decisions)", "seconds", "M edges/s")
    print(f"# wb-libra, p = {args.p}; {os.cpu_count()} CPUs; one run per cell")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, g in graphs(args.scale):
        for order in ("given", "random"):
            seq, t = run(g, args.p, order, None)
            rf0 = seq.metrics.replication_factor
            m = seq.info["simple_edges"]
            rows = [("sequential", None, seq, t)]
            for recheck in (True, False):
                greedy_cut.RECHECK = recheck
                for b in BATCHES:
                    r, t = run(g, args.p, order, b)
                    rows.append(("recheck" if recheck else "frozen", b, r, t))
            greedy_cut.RECHECK = True
            for b in BATCHES:
                r, t = run(g, args.p, order, b, apply="rounds")
                rows.append(("rounds", b, r, t))
            for how, b, r, t in rows:
                rf = r.metrics.replication_factor
                red = f"{100 * r.info['redecided'] / m:.1f} %" if b else ""
                print("| " + " | ".join((
                    name, order, f"{m:,}", f"{b:,}" if b else "-", how, f"{rf:.4f}",
                    f"{rf / rf0:.3f}", f"{r.metrics.edge_weight_imbalance:.5f}", red,
                    f"{t:.3f}", f"{m / t / 1e6:.2f}")) + " |", flush=True)


if __name__ == "__main__":
    main()
