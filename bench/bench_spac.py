"""Benchmark SPAC against its baselines, in the layout of the source's Fig. 4.

For every graph and k: C_EP (vertex copies), replication factor, balance (max
edge load over the average) and seconds of

* SPAC with each backend (METIS, KaHIP) and each form (contracted, split);
* WVP random / greedy (METIS vertex partition weighted by degree);
* PowerGraph random and greedy (our `random` and `pg`, stream in random order);
* our greedy family's best (WB-Libra) and HDRF;
* the hypergraph model with Mt-KaHyPar (connectivity - 1), the quality anchor.

Graphs: power-law datasets of ../shared/datasets (k = 8, 32, 128), SpMV
locality graphs built from the Matrix Market files there (a vertex per row and
per column, an edge per nonzero; k = nnz / 1024, as the source), and the sample
IR graphs (k = 8, 32). Checked: SPAC's C_EP below WVP greedy and every greedy
variant on every power-law graph; SPAC's replication factor against the
reference SPAC figures of REFERENCE_RESULTS.md; the share of transform +
reconstruction in SPAC's time (target <= 20 %); and on a graph of about 1 M
edges the whole SPAC run against the METIS call alone (target <= 3x).

``--multilevel cpu,gpu`` compares backends instead: SPAC with METIS against SPAC with the
project's multilevel partitioner on each device named (the GPU run builds the split graph
and partitions it on the device), each timed after an untimed warm-up call (compilation);
target: RF within 3 % of SPAC with METIS on the power-law graphs.

Usage: python bench/bench_spac.py [--graphs a,b] [--no-kahip] [--no-hypergraph] [--quick]
       [--multilevel cpu,gpu]
"""

import argparse
import json
import os
import re
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ir_graph import Graph, read_graph  # noqa: E402
from vcut.partition import partition_graph, simplify  # noqa: E402

DATA = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")
POWER_LAW = ("email-Enron.txt.gz", "wiki-Vote.txt.gz", "ca-HepPh.txt.gz", "facebook_combined.txt.gz",
             "as-caida20071105.lg.gz", "PGPgiantcompo.graph.gz", "p2p-Gnutella31.txt.gz",
             "ca-CondMat.txt.gz")
MATRICES = ("rgg_n_2_16_s0.mtx.gz", "luxembourg_osm.mtx.gz")


def methods(kahip, hyper):
    out = [("SPAC metis contracted", "spac", dict(backend="metis", variant="contracted")),
           ("SPAC metis split", "spac", dict(backend="metis", variant="split"))]
    if kahip:
        out += [("SPAC kahip contracted", "spac", dict(backend="kahip", variant="contracted")),
                ("SPAC kahip split", "spac", dict(backend="kahip", variant="split"))]
    out += [("WVP random", "wvp-random", {}), ("WVP greedy", "wvp-greedy", {}),
            ("PG random", "random", {}), ("PG greedy", "pg", dict(order="random")),
            ("WB-Libra", "wb-libra", {}), ("HDRF", "hdrf", {})]
    if hyper:
        out.append(("hypergraph (Mt-KaHyPar km1)", "hypergraph", {}))
    return out


def simple_graph(f):
    """``(name, graph)``: dataset file ``f`` simplified (no loops, repeats merged), named
    as REFERENCE_RESULTS.md names it."""
    g = read_graph(os.path.join(DATA, f))
    s, d, w, *_ = simplify(g)
    return (re.sub(r"\.(txt|lg|graph|mtx|edges|arcs)+(\.txt)?\.gz$", "", f),
            Graph(n=g.n, src=s, dst=d, weight=w))


def spmv_graph(path):
    """The SpMV locality graph of a square matrix: rows 0..n-1, columns n..2n-1."""
    g = read_graph(path)
    src, dst = g.src.astype(np.int64), g.dst.astype(np.int64)
    if not g.directed:  # symmetric storage: both triangles are nonzeros
        off = src != dst
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
    nnz = len(src)
    return Graph(n=2 * g.n, src=src, dst=dst + g.n, weight=np.ones(nnz)), max(2, nnz // 1024)


def reference_spac(name):
    text = open(os.path.join(DATA, "REFERENCE_RESULTS.md")).read()
    m = re.search(r"\n## " + re.escape(name) + r" \(.*?\n(.*?)(\n## |\Z)", text, re.S)
    if not m:
        return None
    for line in m.group(1).splitlines():
        if line.startswith("| SPAC"):
            return [float(c.split("/")[0]) if c.strip()[0].isdigit() else None
                    for c in line.strip("|").split("|")[1:4]]
    return None


def multilevel_methods(devices):
    return [("SPAC metis contracted", "spac", dict(backend="metis"))] + [
        (f"SPAC multilevel {d}", "spac", dict(backend="multilevel", device=d, warm_up=True))
        for d in devices]


def run(g, k, meths, name, rows):
    print(f"\n#### {name}: |V| = {g.n:,}, |E| = {g.m:,}, k = {k}\n")
    print("| method | C_EP | RF | weight balance | seconds | transform + reconstruction share |")
    print("|---|---:|---:|---:|---:|---:|")
    res = {}
    for label, algo, kw in meths:
        kw = dict(kw)
        device = kw.pop("device", "cpu")
        if kw.pop("warm_up", False):
            try:  # compilation, device set-up: untimed
                partition_graph(g, k, algo, kw, device=device)
            except Exception:  # reported by the timed call below
                pass
        t0 = time.perf_counter()
        try:
            r = partition_graph(g, k, algo, kw, device=device)
        except Exception as exc:  # a baseline that cannot run here is reported, not fatal
            print(f"| {label} | — | — | — | — | {type(exc).__name__}: {exc} |")
            continue
        secs = time.perf_counter() - t0
        share = ""
        if algo == "spac":
            tr = r.info["transform_seconds"] + r.info["reconstruct_seconds"]
            share = f"{100 * tr / (tr + r.info['partition_seconds']):.1f} %"
        m = r.metrics
        res[label] = (m.vertex_copies, m.replication_factor, m.edge_weight_imbalance, secs, r.info)
        print(f"| {label} | {m.vertex_copies:,} | {m.replication_factor:.3f} | {m.edge_weight_imbalance:.3f} | "
              f"{secs:.2f} | {share} |")
    rows.append((name, k, res))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphs", default="", help="comma-separated dataset files (default: a power-law set)")
    ap.add_argument("--no-kahip", action="store_true")
    ap.add_argument("--no-hypergraph", action="store_true")
    ap.add_argument("--quick", action="store_true", help="k = 8 and 32 only; no matrices or samples")
    ap.add_argument("--no-power-law", action="store_true", help="skip the power-law datasets")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--multilevel", metavar="DEVICES",
                    help="compare SPAC's backends instead: METIS against multilevel on DEVICES "
                         "(comma-separated: cpu, gpu); power-law graphs only")
    args = ap.parse_args()
    meths = methods(not args.no_kahip, not args.no_hypergraph)
    ks = (8, 32) if args.quick else (8, 32, 128)
    if args.multilevel:
        return compare_backends(args, ks)
    rows = []
    summary = []
    files = [f for f in args.graphs.split(",") if f] or list(POWER_LAW)
    if args.no_power_law:
        files = []
    print("### Power-law graphs")
    for f in files:
        name, g = simple_graph(f)
        ref = reference_spac(name)
        for i, k in enumerate(ks):
            res = run(g, k, meths, name, rows)
            spac = res.get("SPAC metis contracted")
            if not spac:
                continue
            greedy = {lab: v[0] for lab, v in res.items()
                      if lab.startswith(("WVP greedy", "PG greedy", "WB-Libra", "HDRF"))}
            beats = all(spac[0] < v for v in greedy.values())
            hyper = res.get("hypergraph (Mt-KaHyPar km1)")
            best_spac = min((v for lab, v in res.items() if lab.startswith("SPAC")), key=lambda v: v[1])
            summary.append((name, k, spac[0], min(greedy.values()), beats,
                            best_spac[1], ref[i] if ref and i < len(ref) else None,
                            best_spac[2], (best_spac[0] / hyper[0]) if hyper and hyper[0] else None))
    if not args.quick:
        print("\n### SpMV locality graphs (k = nnz / 1024)")
        for f in MATRICES:
            g, k = spmv_graph(os.path.join(DATA, f))
            run(g, k, [m for m in meths if "kahip" not in m[0] and "hypergraph" not in m[0]],
                f.split(".")[0] + " (SpMV)", rows)
        print("\n### Sample IR graphs")
        from frontend import compile_program, trace_program
        from ir_graph import build_graph

        manifest = json.load(open(os.path.join(ROOT, "samples", "manifest.json")))["samples"]
        for s in manifest:
            if s["name"] not in ("fft", "dijkstra", "strassen16"):
                continue
            t = trace_program(compile_program(os.path.join(ROOT, "samples", s["source"]),
                                              defines=s["defines"]))
            g = build_graph(t, weights="model")
            for k in (8, 32):
                run(g, k, [m for m in meths if "kahip" not in m[0] and "hypergraph" not in m[0]],
                    f"{s['name']} (IR)", rows)
        print("\n### A graph of about 1 M edges: SPAC against the METIS call alone (target <= 3x)\n")
        g = read_graph(os.path.join(DATA, "wave.graph.gz"))
        k = 128
        r = partition_graph(g, k, "spac")
        spac_total = sum(r.info[x] for x in ("transform_seconds", "partition_seconds", "reconstruct_seconds"))
        import pymetis

        xadj = np.zeros(g.n + 1, dtype=np.int64)
        u = np.concatenate([g.src, g.dst]).astype(np.int64)
        v = np.concatenate([g.dst, g.src]).astype(np.int64)
        idx = np.argsort(u, kind="stable")
        np.cumsum(np.bincount(u, minlength=g.n), out=xadj[1:])
        t0 = time.perf_counter()
        pymetis.part_graph(k, pymetis.CSRAdjacency(adj_starts=xadj, adjacent=v[idx]))
        metis_d = time.perf_counter() - t0
        print("| graph | |E| | SPAC total s | of which METIS on Ψ(D) s | METIS on D alone s | total / METIS on Ψ(D) | total / METIS on D |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        print(f"| wave | {g.m:,} | {spac_total:.2f} | {r.info['partition_seconds']:.2f} | {metis_d:.2f} | "
              f"{spac_total / r.info['partition_seconds']:.2f} | {spac_total / metis_d:.2f} |")
    print("\n### Summary on the power-law graphs (SPAC = METIS, contracted)\n")
    print("| graph | k | SPAC C_EP | best greedy/WVP C_EP | SPAC below all | best SPAC RF | reference SPAC RF | best SPAC balance | best SPAC C_EP / hypergraph |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for name, k, c, g_best, beats, rf, ref, bal, hyp in summary:
        print(f"| {name} | {k} | {c:,} | {g_best:,} | {'yes' if beats else 'NO'} | {rf:.3f} | "
              f"{ref if ref else '—'} | {bal:.3f} | {f'{hyp:.2f}' if hyp else '—'} |")


def compare_backends(args, ks):
    meths = multilevel_methods(args.multilevel.split(","))
    files = [f for f in args.graphs.split(",") if f] or list(POWER_LAW)
    summary = []
    for f in files:
        name, g = simple_graph(f)
        for k in ks:
            res = run(g, k, meths, name, [])
            base = res.get("SPAC metis contracted")
            for label, v in res.items():
                if base and label != "SPAC metis contracted":
                    summary.append((name, k, label, v[1] / base[1], v[2], v[3] / base[3]))
    print("\n### SPAC with the multilevel backend against SPAC with METIS (target: RF within 3 %)\n")
    print("| graph | k | method | RF / METIS's | balance | time / METIS's |")
    print("|---|---:|---|---:|---:|---:|")
    for name, k, label, rf, bal, t in summary:
        print(f"| {name} | {k} | {label} | {rf:.3f} | {bal:.3f} | {t:.2f} |")


if __name__ == "__main__":
    main()
