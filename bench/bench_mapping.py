"""Benchmark of the mapping stage: the source's Tables 6-9 and the mapping targets.

Prints, for the ten bundled samples (traced without timing, cache-model
weights, so every figure is deterministic):

1. Tables 6 / 7 layout: simulated execution time of every partitioning
   method (memory-centric mapping on the Table 2 machine with p cores)
   relative to the CompNet-style edge cut, with the published ratio beside
   it (also "without dependency waits": every core's work plus the latency
   of the messages it receives, as if clusters were independent); Tables 8 / 9 layout: data communication relative to CompNet, with the
   published percentage beside it. Once with the edge stream in execution
   order (``given``, the default) and once in a random order (the vertex
   cuts only; the edge cuts do not stream).
2. Mapping: hop-bytes of every mapper relative to round-robin at p = 64
   (WB-Libra clusters, table2:64). Target: memory-centric <= 0.7.
3. ``vcut analyze`` of the largest sample end to end with its phase times.
   Target: <= 120 s.

4. ``--parallel`` (issue 14): the default analysis (``par`` + ``time-aware``)
   of every sample at p = 8 on mesh:4x4 and p = 64 on table2:64 against its
   baselines: makespan / lower bound (target <= 1.25), its makespan against
   CompNet-style and METIS (memory-centric mapping) and against the
   round-robin, random, comm-greedy and recursive-bisection mappings of its
   own clusters (target: lower on >= 9 of 10 samples at each p), and its
   communication against CompNet's (target <= 0.7), the priority ``par``
   kept (how many it tried: `vcut.par_steering.STEER`; ``c`` where the clusters
   with the chains protected were kept, `vcut.parallel.CHAIN_SLACKS`, and in
   brackets their compact simulations / bound where tried; ``l`` and the scale where
   a clustering made with the latency scaled (`vcut.par_steering.LATENCY_SCALES`) was
   kept, in brackets the fastest of those / bound), its replica price and
   the share of vertices whose replicas were dissolved (`vcut.par_steering.refine`),
   each with how many were tried; the counts are given for the bundled samples and,
   with ``--extra``, for all. Then the designs
   compared: WB-Libra in execution order, WB-Libra with its bound per window
   of the execution order (``--window`` tasks per cluster), and ``par``.
   ``--extra`` adds the programs of samples/extra.json.

Usage: python bench/bench_mapping.py [--p 8,1024] [--samples fft,md] [--skip-random]
       python bench/bench_mapping.py --parallel [--samples ...] [--extra]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from frontend import compile_program, trace_program  # noqa: E402
from ir_graph import build_graph  # noqa: E402
from mapping.interactions import from_edge_partition, interactions  # noqa: E402
from mapping.machine import table2  # noqa: E402
from mapping.placement import MAPPERS, place  # noqa: E402
from vcut.partition import partition_graph  # noqa: E402
from vcut.pipeline import METHODS, compare_methods  # noqa: E402

NAMES = {"dijkstra": "Dijkstra", "fft": "FFT", "kmeans": "K-means", "mandel": "Mandel", "md": "Md",
         "nn": "NN", "neuron": "Neuron", "cnn": "CNN", "strassen8": "Strassen8",
         "strassen16": "Strassen16"}
# Tables 6 and 7 (seconds) and 8 and 9 (% of CompNet), columns in METHODS order
TABLE6 = {"Dijkstra": [317.27, 332.48, 346.15, 263.75, 260.91, 253.86, 262.51, 242.26],
          "FFT": [279.6, 288.22, 209.27, 253.71, 230.02, 248.42, 239.33, 291.53],
          "K-means": [244.87, 261.38, 279.53, 206.25, 195.53, 201.54, 188.25, 178.58],
          "Mandel": [341.35, 373.28, 265.15, 289.74, 257.12, 277.31, 256.49, 245.82],
          "Md": [2568.72, 2723.71, 2822.47, 2313.9, 1821.68, 2178.41, 1824.95, 1642.18],
          "NN": [351.23, 376.93, 354.32, 311.74, 256.41, 297.59, 278.24, 253.89],
          "Neuron": [214.75, 242.68, 213.95, 187.23, 163.63, 174.54, 157.69, 131.4],
          "CNN": [1568.59, 1736.37, 1454.88, 1425.63, 1221.53, 1358.61, 1315.78, 1175.8],
          "Strassen8": [142.41, 155.39, 131.24, 121.37, 104.99, 112.62, 111.23, 96.24],
          "Strassen16": [326.75, 351.26, 323.5, 304.21, 274.63, 285.44, 264.58, 248.25]}
TABLE7 = {"Dijkstra": [31.08, 46.48, 33.5, 27.79, 29.27, 29.58, 26.43, 23.4],
          "FFT": [24.92, 32.4, 25.08, 22.64, 23.96, 23.2, 20.31, 18.59],
          "K-means": [16.77, 37.23, 18.26, 16.37, 12.54, 15.3, 13.92, 11.26],
          "Mandel": [23.48, 41.37, 15.8, 19.81, 14.52, 17.47, 14.43, 12.6],
          "Md": [228.43, 245.61, 233.02, 204.53, 174.23, 192.23, 169.18, 155.71],
          "NN": [33.44, 52.36, 34.92, 29.35, 25.48, 29.84, 27.9, 23.22],
          "Neuron": [21.3, 48.32, 23.73, 20.93, 21.62, 19.19, 17.97, 16.11],
          "CNN": [157.5, 170.92, 148.48, 145.87, 110.67, 132.22, 119.43, 105.29],
          "Strassen8": [12.51, 15.03, 14.57, 13.55, 12.39, 12.17, 11.11, 10.31],
          "Strassen16": [31.81, 38.14, 29.23, 29.62, 27.36, 27.22, 25.25, 23.42]}
TABLE8 = {"Dijkstra": [100, 142, 60, 46, 54, 50, 54, 57], "FFT": [100, 156, 71, 53, 65, 56, 62, 65],
          "K-means": [100, 135, 59, 41, 52, 46, 52, 55], "Mandel": [100, 158, 48, 31, 41, 36, 42, 45],
          "Md": [100, 160, 47, 33, 39, 36, 40, 44], "NN": [100, 169, 63, 43, 55, 48, 53, 57],
          "Neuron": [100, 137, 59, 42, 53, 47, 52, 56], "CNN": [100, 192, 64, 50, 56, 53, 55, 58],
          "Strassen8": [100, 171, 55, 43, 50, 46, 48, 52],
          "Strassen16": [100, 193, 54, 42, 46, 45, 47, 50]}
TABLE9 = {"Dijkstra": [100, 142, 53, 34, 47, 39, 46, 47], "FFT": [100, 163, 55, 42, 50, 43, 46, 49],
          "K-means": [100, 132, 47, 31, 42, 32, 39, 43], "Mandel": [100, 117, 33, 18, 28, 19, 23, 27],
          "Md": [100, 156, 41, 25, 35, 29, 31, 35], "NN": [100, 176, 52, 35, 44, 39, 45, 47],
          "Neuron": [100, 148, 38, 27, 30, 31, 33, 35], "CNN": [100, 183, 63, 44, 55, 49, 55, 57],
          "Strassen8": [100, 145, 52, 35, 44, 38, 42, 46],
          "Strassen16": [100, 166, 53, 38, 48, 41, 45, 48]}
VERTEX_CUTS = ("pg", "w-pg", "wb-pg", "libra", "w-libra", "wb-libra")


def samples(only, extra=False):
    entries = []
    for name in ("manifest.json",) + (("extra.json",) if extra else ()):
        with open(os.path.join(ROOT, "samples", name)) as fh:
            entries += json.load(fh)["samples"]
    return [s for s in entries if not only or s["name"] in only]


def windowed_wb_libra(graph, p, window):
    """Design B of issue 14: WB-Libra with its bound applied per window of
    ``window * p`` tasks of the execution order (replica sets carried over)."""
    from ir_graph.edge_lists import degrees, execution_order
    from ir_graph.replicas import replica_sets
    from vcut.greedy_kernels import RULE_LIBRA, greedy_assign
    from vcut.partition import partition_from_assignment, simplify

    src, dst, w, input_edge, _, _ = simplify(graph)
    order = execution_order(np.minimum(src, dst), np.maximum(src, dst))
    order = np.arange(len(src)) if order is None else order.astype(np.int64)
    out = np.empty(len(src), np.int32)
    sets = replica_sets(graph.n, p)
    deg, cap = degrees(src, dst, graph.n), np.full(p, 1.0 / p)
    for lo in range(0, len(src), window * p):
        o = order[lo:lo + window * p]
        _, pool = greedy_assign(src, dst, w, o, graph.n, p, deg, cap, float(w[o].sum()),
                                RULE_LIBRA, out, sets, np.zeros(2, np.int64))
        sets = sets[:3] + (pool,)
    full = out if input_edge is None else out[np.maximum(input_edge, 0)]
    return partition_from_assignment(graph, full, p, algo="wb-libra-window")


def parallel_tables(only, extra, window):
    """Section 4 (issue 14): the default analysis against its lower bound and baselines."""
    from mapping.bounds import lower_bound
    from mapping.machine import load_machine
    from mapping.simulate import simulate
    from vcut.par_steering import FINALIST_FIELDS
    from vcut.pipeline import analyze_graph

    setups = ((8, "mesh:4x4"), (64, "table2:64"))
    rows = {p: [] for p, _ in setups}
    designs = {p: [] for p, _ in setups}
    for s in samples(only, extra):
        trace, g = load(s)
        for p, spec in setups:
            mach = load_machine(spec)
            t0 = time.perf_counter()
            a = analyze_graph(g, p, machine=mach, object_bytes=trace.obj_size)
            secs = time.perf_counter() - t0
            lb = a.bound.lower_bound
            base = {m["mapping"]: m["makespan"] for m in a.mappers}
            for method in ("compnet", "metis"):
                b = analyze_graph(g, p, method, mach, mapper="memory-centric",
                                  object_bytes=trace.obj_size, baselines=False)
                base[method] = b.result.makespan
                if method == "compnet":
                    compnet_comm = b.result.communication_bytes
            tried = a.partition.get("priorities", [])
            kept = f"{a.partition['priority_gamma']:g} ({len(tried)})" if tried else "-"
            # the chains protected: the slack kept, the compact simulations / bound tried
            chains = a.partition.get("chains")
            slack = a.partition.get("chain_slack")
            kept += f" {f'c{slack:g}' if slack else ''}" + (
                "[" + ", ".join(f"{s / lb:.2f}" for _, s in chains) + "]" if chains else "")
            # the latency scaled (vcut.par_steering.LATENCY_SCALES): the scale kept, the
            # fastest compact simulation / bound among those tried
            scaled = a.partition.get("latencies")
            scale = a.partition.get("latency_scale", 1.0)
            kept += (f" {f'l{scale:g}' if scale != 1.0 else ''}"
                     f"[{min(s for _, _, s in scaled) / lb:.2f}]" if scaled else "")
            steered = a.partition.get("steered_prices")
            price = a.partition.get("replica_price")
            # the model's price -> the one kept (others tried)
            kept += (" | -" if price is None else f" | {price:g}" if not steered
                     else f" | {steered[0][0]:g} → {price:g} ({len(steered) - 1})")
            refined = a.partition.get("refined")  # the share of vertices refined (shares tried)
            kept += (" | -" if not refined
                     else f" | {a.partition['refined_share']:g} ({len(refined) - 1})")
            # par's memory model kept, or its first clusters' compact simulation / bound
            # with and without it where the steering went on without
            models = a.partition.get("memory_models")
            kept += (" | " + ("numa" if a.partition.get("numa_model") else "none") if not models
                     else " | " + " / ".join(f"{mk / lb:.3f}" for _, mk in models) + " → none")
            # the order replayed (vcut.par_steering.replay): makespan / bound before -> after
            replays = a.partition.get("replays")
            kept += (" | -" if not replays else
                     f" | {a.result.makespan / lb:.3f} ← "
                     f"{a.partition['replays_from'] / lb:.3f} ({a.partition['replayed']})")
            # par on whole block runs (vcut.par_steering.finalist): its makespan / bound and
            # messages / the other's, "kept" where its clusters were kept
            # and on whole calls, after the fastest at the other latency, each against
            # the clusters kept by then
            for found, took in FINALIST_FIELDS.values():
                fin = a.partition.get(found)
                kept += (" | -" if not fin else
                         f" | {fin[1][0] / lb:.3f} ← {fin[0][0] / lb:.3f}, "
                         f"{fin[1][1] / max(fin[0][1], 1):.2f}x msgs"
                         + (" kept" if a.partition.get(took) else ""))
            rows[p].append((s["name"], lb, a.result.makespan, base,
                            a.result.communication_bytes / compnet_comm, secs, kept))
            wb = analyze_graph(g, p, "wb-libra", mach, mapper="memory-centric",
                               object_bytes=trace.obj_size, baselines=False)
            cl = from_edge_partition(windowed_wb_libra(g, p, window), g.node_object, "window")
            inter = interactions(cl, trace.obj_size)
            win = simulate(cl, place(inter, mach, "memory-centric").core, mach, inter.value_bytes)
            designs[p].append((s["name"], lower_bound(cl, mach).lower_bound,
                               wb.result.makespan / wb.bound.lower_bound,
                               win.makespan / lower_bound(cl, mach).lower_bound,
                               a.result.makespan / lb,
                               wb.result.communication_bytes / compnet_comm,
                               inter.communication_bytes / compnet_comm,
                               a.result.communication_bytes / compnet_comm))
        print(f"{s['name']}: {g.n:,} nodes, {g.m:,} edges", file=sys.stderr, flush=True)
    others = ("compnet", "metis", "round-robin", "random", "comm-greedy", "recursive-bisection")
    for p, spec in setups:
        print(f"\n### Default analysis (par + time-aware), p = {p}, {spec}\n")
        print("| program | lower bound | makespan | / bound (<= 1.25) | "
              + " | ".join(others) + " | comm / CompNet (<= 0.7) | gamma (tried) chains [/ bound] latency [/ bound] | "
              "price (tried) | refined share (tried) | memory model (first run with / without) | "
              "order replayed (after ← before, replays kept) | the other latency (/ bound ← "
              "other's, messages) | whole block runs (the same) | whole calls (the same) | "
              "seconds |")
        print("|---" * (len(others) + 14) + "|")
        for name, lb, mk, base, comm, secs, kept in rows[p]:
            cells = [f"{base[o] / mk:.2f}" for o in others]
            print(f"| {name} | {lb:,.0f} | {mk:,.0f} | {mk / lb:.3f} | " + " | ".join(cells)
                  + f" | {comm:.3f} | {kept} | {secs:.1f} |")
        print("\nbaseline makespans relative to the default's (> 1: the default is faster)")
        bundled = {s["name"] for s in samples(only)}  # samples/manifest.json's
        for label, group in (("the samples", [r for r in rows[p] if r[0] in bundled]),
                             ("with the extras", rows[p] if extra else [])):
            if not group:
                continue
            n = len(group)
            wins = {o: sum(r[2] < r[3][o] for r in group) for o in others}
            print(f"- {label}: default faster in "
                  + ", ".join(f"{o} {wins[o]}/{n}" for o in others)
                  + f"; makespan / bound <= 1.25 in {sum(r[2] / r[1] <= 1.25 for r in group)}/{n}"
                  + f"; comm <= 0.7 x CompNet in {sum(r[4] <= 0.7 for r in group)}/{n}")
        print(f"\n### Designs, p = {p}: makespan / bound and communication / CompNet\n")
        print("| program | wb-libra | wb-libra per window | par | wb-libra comm | window comm "
              "| par comm |\n|---|---:|---:|---:|---:|---:|---:|")
        for name, _, r_wb, r_win, r_par, c_wb, c_win, c_par in designs[p]:
            print(f"| {name} | {r_wb:.2f} | {r_win:.2f} | {r_par:.2f} | {c_wb:.2f} | {c_win:.2f} "
                  f"| {c_par:.2f} |")


def load(sample):
    cm = compile_program([os.path.join(ROOT, "samples", sample["source"])],
                         defines=sample["defines"])
    trace = trace_program(cm, timing=False)
    return trace, build_graph(trace, weights="model")


def table(title, rows, key, published, methods):
    print(f"\n### {title}\n")
    print("| graph | " + " | ".join(methods) + " | lowest |")
    print("|---" * (len(methods) + 2) + "|")
    wins = 0
    for name, sel in rows:
        base = sel[methods[0]][key]
        ours = [sel[m][key] / base for m in methods]
        pub = published.get(name)
        cells = []
        for i, m in enumerate(methods):
            ref = "" if pub is None else f" ({pub[i] / pub[0]:.2f})"
            cells.append(f"{ours[i]:.2f}{ref}")
        low = methods[int(np.argmin(ours))]
        wins += low == "wb-libra"
        print(f"| {name} | " + " | ".join(cells) + f" | {low} |")
    print(f"\nours relative to {methods[0]} (published in brackets); wb-libra lowest in "
          f"{wins} of {len(rows)} rows")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", default="8,1024")
    ap.add_argument("--samples", default="")
    ap.add_argument("--skip-random", action="store_true")
    ap.add_argument("--skip-analyze", action="store_true")
    ap.add_argument("--parallel", action="store_true",
                    help="issue 14's tables: the default analysis against its bound and baselines")
    ap.add_argument("--extra", action="store_true", help="with --parallel: also samples/extra.json")
    ap.add_argument("--window", type=int, default=64,
                    help="tasks per cluster in a window of the windowed WB-Libra design (64)")
    args = ap.parse_args()
    if args.parallel:
        parallel_tables([s for s in args.samples.split(",") if s], args.extra, args.window)
        return
    ps = [int(x) for x in args.p.split(",")]
    only = [s for s in args.samples.split(",") if s]
    results = {}
    mapping_rows = []
    for s in samples(only):
        name = NAMES.get(s["name"], s["name"])
        t0 = time.perf_counter()
        trace, g = load(s)
        given = compare_methods(g, ps, METHODS, object_bytes=trace.obj_size)
        rand = [] if args.skip_random else compare_methods(
            g, ps, VERTEX_CUTS, order="random", object_bytes=trace.obj_size)
        part = partition_graph(g, 64, "wb-libra")
        inter = interactions(from_edge_partition(part, g.node_object), trace.obj_size)
        hb = {m: place(inter, table2(64), m).info["hop_bytes"] for m in MAPPERS}
        mapping_rows.append((name, hb))
        results[name] = (g, given, rand)
        print(f"{name}: {g.n:,} nodes, {g.m:,} edges, {time.perf_counter() - t0:.1f} s",
              file=sys.stderr, flush=True)
    print("## Mapping stage benchmark (cache-model weights, memory-centric mapping, table2:p)")
    print("\n| graph | nodes | edges |\n|---|---:|---:|")
    for name, (g, _, _) in results.items():
        print(f"| {name} | {g.n:,} | {g.m:,} |")
    for p in ps:
        pub_t = TABLE6 if p == 8 else TABLE7 if p == 1024 else {}
        pub_c = TABLE8 if p == 8 else TABLE9 if p == 1024 else {}
        rows = [(n, {r["method"]: r for r in given if r["p"] == p}) for n, (_, given, _) in results.items()]
        table(f"Execution time, p = {p}, stream in execution order", rows, "makespan", pub_t, METHODS)
        table(f"Execution time without dependency waits, p = {p}, stream in execution order", rows,
              "independent_time", pub_t, METHODS)
        table(f"Data communication, p = {p}, stream in execution order", rows,
              "communication_bytes", pub_c, METHODS)
        if not args.skip_random:
            rows_r = []
            for n, (_, given, rand) in results.items():
                sel = {r["method"]: r for r in given if r["p"] == p and r["method"] in ("compnet", "metis")}
                sel.update({r["method"]: r for r in rand if r["p"] == p})
                rows_r.append((n, sel))
            table(f"Execution time, p = {p}, vertex cuts streamed in random order", rows_r,
                  "makespan", pub_t, METHODS)
            table(f"Execution time without dependency waits, p = {p}, vertex cuts streamed in "
                  "random order", rows_r, "independent_time", pub_t, METHODS)
            table(f"Data communication, p = {p}, vertex cuts streamed in random order", rows_r,
                  "communication_bytes", pub_c, METHODS)
    print("\n### Hop-bytes relative to round-robin, p = 64 (WB-Libra clusters, table2:64; "
          "target memory-centric <= 0.7)\n")
    print("| graph | " + " | ".join(MAPPERS) + " |\n" + "|---" * (len(MAPPERS) + 1) + "|")
    ratios = []
    for name, hb in mapping_rows:
        rr = hb["round-robin"]
        ratios.append(hb["memory-centric"] / rr)
        print(f"| {name} | " + " | ".join(f"{hb[m] / rr:.3f}" for m in MAPPERS) + " |")
    print(f"\nmemory-centric / round-robin: max {max(ratios):.3f}, geometric mean "
          f"{float(np.exp(np.mean(np.log(ratios)))):.3f}")
    if not args.skip_analyze:
        biggest = max(samples(only), key=lambda s: results[NAMES.get(s["name"], s["name"])][0].m)
        out = os.path.join("/tmp", "vcut-bench-analyze")
        cmd = [sys.executable, "-m", "vcut", "analyze", os.path.join(ROOT, "samples", biggest["source"]),
               *sum((["-D", d] for d in biggest["defines"]), []), "-p", "8", "--machine", "mesh:4x4",
               "-o", out, "--json"]
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        phases = json.loads(res.stdout)["phases"]
        print(f"\n### vcut analyze {biggest['source']} -p 8 --machine mesh:4x4 (target <= 120 s)\n")
        print("| phase | seconds |\n|---|---:|")
        for k, v in phases.items():
            print(f"| {k} | {v:.2f} |")
        print(f"| wall (process) | {wall:.2f} |")


if __name__ == "__main__":
    main()
