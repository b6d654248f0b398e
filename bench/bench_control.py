"""Lam and Wilson's control-flow limits on our programs, and what control edges cost.

`ir_graph.control` implements the machine models of Lam and Wilson, "Limits of Control
Flow on Parallelism" (ISCA 1992): ORACLE (data dependences only), SP-CD-MF, SP-CD, SP,
CD-MF, CD and BASE. For every program (the ten samples of samples/manifest.json with
their defines, bench/programs/dijkstra_mibench.c and four programs of public suites in
bench/programs/, see `EXTRA_PROGRAMS`) this script, in one process:

1. traces the program once (``trace_program(..., timing=False)``), builds the ORACLE
   graph (``build_graph(trace, control="oracle")``, timed; and the plain data graph,
   ``control=None``, timed for reference) and computes `ir_graph.control.model_table`:
   the parallelism (data work / critical path) of every model;
2. for each model of ``--analyze-models`` (default oracle, cd, base, sp-cd-mf): builds
   the graph with that model's control edges (``build_graph(trace, control=MODEL)``,
   timed), and runs ``analyze_graph(graph, p, object_bytes=trace.obj_size,
   baselines=False)`` (timed): the simulated makespan and the speed-up, the ORACLE
   graph's data work (the sum of its edge weights, one core running every task) over
   the makespan. Programs of more than ``--analyze-max-nodes`` nodes (default: no
   limit) get step 1 only.

It prints (a) the parallelism of every model per program, with the harmonic mean over
the integer and over the floating-point programs (`KIND`); (b) Lam and Wilson's
published harmonic means beside ours (`LAM_WILSON`: four of the non-numeric ones,
from a secondary source; see its comment); (c) the cost of each
model's graph against the ORACLE graph's, edges, build time and analysis time (the
target: at most 1.5x); (d) the ratio ORACLE / CD of the parallelism per program (Lam
and Wilson report about two orders of magnitude); and the analyses' makespans and
speed-ups. All times are in-process wall seconds, warm (a small program is analysed
first under every model so that numba's cached kernels are loaded); a graph build's
time is the best of ``--build-repeat`` rounds (default 9) or more, up to about
`BUILD_SECONDS` of builds per graph, each round one build of the plain, the ORACLE and
every analysed model's graph (the same conditions for each), in a fresh child process
per program (`time_builds`), an
analysis's the median of ``--analyze-repeat`` analyses (default 1; each gives the same
makespan, which is checked).

Usage::

    python bench/bench_control.py [--p 8] [--programs NAME ...]
                                  [--analyze-models MODEL ... | all]
                                  [--analyze-max-nodes N] [--build-repeat 9]
                                  [--analyze-repeat 1]
                                  [--progress] [--no-warmup] [--json OUT.json]
"""

import argparse
import datetime
import json
import os
import sys
import time
from functools import partial

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, ROOT)

from _record import envelope, now, save  # noqa: E402

#: The models, from the most to the least parallel (`ir_graph.control.CONTROL_MODELS`).
MODELS = ("oracle", "sp-cd-mf", "sp-cd", "sp", "cd-mf", "cd", "base")

#: The models analysed (partitioned, mapped, simulated) by default: the full
#: parallelism table always covers all of `MODELS`.
ANALYZE_DEFAULT = ("oracle", "cd", "base", "sp-cd-mf")

#: Programs of more nodes are not analysed (their parallelism table is still computed);
#: 0: no limit, the default (the fifteen programs under the four default models: about
#: 13 minutes on 2 cores).
ANALYZE_MAX_NODES = 0

#: The graph's size, build time and analysis time under a control model, at most this
#: multiple of the ORACLE graph's (the target the cost table is read against).
COST_TARGET = 1.5

#: Each graph is built for about this many seconds in all (rounds of one build of each
#: graph), at least ``--build-repeat`` and at most `BUILD_ROUNDS_MAX` rounds.
BUILD_SECONDS = 1.0
BUILD_ROUNDS_MAX = 40

#: The programs besides the manifest's samples: name -> (C source, defines, where from).
#: dijkstra_mibench runs one source/destination pair (PAIRS=1: its default of 30 pairs
#: is ~74 M instructions, too many to analyse model after model).
EXTRA_PROGRAMS = {
    "dijkstra_mibench": ("bench/programs/dijkstra_mibench.c", ["PAIRS=1"],
                         "MiBench network/dijkstra (in shape)"),
    "adpcm": ("bench/programs/adpcm_chstone.c", [], "CHStone adpcm"),
    "mips": ("bench/programs/mips_chstone.c", [], "CHStone mips"),
    "gemm": ("bench/programs/gemm_polybench.c", [], "PolyBench/C 4.2.1 gemm, MINI"),
    "jacobi2d": ("bench/programs/jacobi2d_polybench.c", [],
                 "PolyBench/C 4.2.1 jacobi-2d, MINI"),
}

#: Integer ("int") or floating-point ("fp") program, for the harmonic means (as Lam and
#: Wilson separate their non-numeric and numeric programs). The samples' kinds follow
#: their computation: dijkstra is integer shortest paths, the others compute in doubles.
KIND = {
    "dijkstra": "int", "fft": "fp", "kmeans": "fp", "mandel": "fp", "md": "fp",
    "nn": "fp", "neuron": "fp", "cnn": "fp", "strassen8": "fp", "strassen16": "fp",
    "dijkstra_mibench": "int", "adpcm": "int", "mips": "int", "gemm": "fp",
    "jacobi2d": "fp",
}

#: Lam and Wilson's published parallelism (the harmonic mean over their non-numeric,
#: "int", and numeric, "fp", programs) per machine model. The paper's results table
#: was not among the sources at hand (https://suif.stanford.edu/papers/lam92/paper.html,
#: the HTML version of the ISCA 1992 paper, pp. 46-57, doi:10.1145/146628.139702, gave
#: its abstract and text only). Four of the non-numeric harmonic means are quoted by a
#: public survey of limit studies (research notes in a public repository of the stored
#: source corpus, "Lam & Wilson ISCA 1992 ... BASE 2.14 -> CD-MF 6.96 -> SP-CD-MF 39.62
#: -> ORACLE 158.26, harmonic means, non-numeric codes"): those four are filled in, from
#: that secondary source; the rest stay None rather than numbers from memory.
LAM_WILSON = {
    "source": "Lam and Wilson, Limits of Control Flow on Parallelism, ISCA 1992 "
              "(doi:10.1145/146628.139702); base, cd-mf, sp-cd-mf and oracle of the "
              "non-numeric programs as quoted by a secondary source (a public survey of "
              "limit studies), the other models and the numeric programs not found",
    "int": {**{model: None for model in MODELS},
            "base": 2.14, "cd-mf": 6.96, "sp-cd-mf": 39.62, "oracle": 158.26},
    "fp": {model: None for model in MODELS},
}


def programs(selected=None):
    """``(name, path, defines, description)`` of the manifest's samples and
    `EXTRA_PROGRAMS`, in that order; only those named in ``selected`` if given."""
    with open(os.path.join(ROOT, "samples", "manifest.json")) as fh:
        manifest = json.load(fh)
    out = [(s["name"], os.path.join("samples", s["source"]), list(s.get("defines", [])),
            s.get("description", "")) for s in manifest["samples"]]
    out += [(name, path, list(defines), what)
            for name, (path, defines, what) in EXTRA_PROGRAMS.items()]
    if selected:
        known = {p[0] for p in out}
        unknown = [s for s in selected if s not in known]
        if unknown:
            raise SystemExit(f"unknown programs {unknown}; choose from {sorted(known)}")
        out = [p for p in out if p[0] in selected]
    return out


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def harmonic(xs):
    xs = [x for x in xs if x is not None]
    if not xs or any(x <= 0 for x in xs):
        return None
    return len(xs) / sum(1.0 / x for x in xs)


def warm_up(p):
    """Analyse a tiny program under every model so that the kernels the timed runs use
    are compiled or loaded from numba's cache before any timing."""
    from frontend import trace_program
    from ir_graph import build_graph
    from vcut.pipeline import analyze_graph

    trace = trace_program(os.path.join(ROOT, "samples", "strassen.c"), timing=False,
                          compile_options={"defines": ["N=4"]})
    g = build_graph(trace, control="oracle")
    from ir_graph.control import model_table
    model_table(g, g.control)
    for model in MODELS:
        graph = build_graph(trace, control=model)
        analyze_graph(graph, p, object_bytes=trace.obj_size, baselines=False)


def time_builds(path, defines, models, build_repeat):
    """``({model or None: best build seconds}, plain graph's edges)`` of the plain, the
    ORACLE and ``models``' graphs of the program, measured in a fresh child process (a
    build of a small program takes tens of milliseconds, and in this long process, after
    other programs' analyses, the allocator's state made the control graphs' builds up to
    15 % slower than in a process of their own, as a user's ``vcut graph`` runs)."""
    import subprocess

    argv = [sys.executable, os.path.abspath(__file__), "--time-builds", path,
            "--build-repeat", str(build_repeat), "--analyze-models", *models,
            "--defines", *defines]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"timing the builds of {path} failed: {done.stderr[-400:]}")
    got = json.loads(done.stdout.splitlines()[-1])
    return ({None if k == "plain" else k: v for k, v in got["build_s"].items()},
            got["plain_edges"])


def _builds_child(path, defines, models, build_repeat):
    """`time_builds`' child: trace the program, then time the builds in rounds, one build
    of each graph per round (the same conditions for each graph), at least
    ``build_repeat`` rounds and until each graph was built for about `BUILD_SECONDS` (at
    most `BUILD_ROUNDS_MAX` rounds); prints one JSON line."""
    from frontend import RunLimits, trace_program
    from ir_graph import build_graph

    limits = RunLimits(timeout=600.0, max_instructions=50_000_000)
    trace = trace_program(os.path.join(ROOT, path), timing=False, limits=limits,
                          compile_options={"defines": defines})
    builds = [None, "oracle"] + [m for m in models if m != "oracle"]
    build_s, rounds, plain_m = {}, max(1, build_repeat), None
    r = 0
    while r < rounds:
        r += 1
        for model in builds:
            g, secs = timed(partial(build_graph, trace, control=model))
            if model is None:
                plain_m = int(g.m)
            g = None
            build_s[model] = min(build_s.get(model, float("inf")), secs)
        if r == 1:
            rounds = max(rounds, min(BUILD_ROUNDS_MAX,
                                     int(BUILD_SECONDS / max(max(build_s.values()), 1e-3))))
    print(json.dumps({"build_s": {"plain" if k is None else k: v for k, v in build_s.items()},
                      "plain_edges": plain_m, "rounds": rounds}))


def measure(name, path, defines, p, analyze_models, max_nodes, build_repeat, say,
            progress=None, analyze_repeat=1):
    """One program's row: the trace, the ORACLE graph, the model table and the
    analyses."""
    import numpy as np

    from frontend import RunLimits, trace_program
    from ir_graph import build_graph
    from ir_graph.control import model_table
    from vcut.pipeline import analyze_graph

    full = os.path.join(ROOT, path)
    limits = RunLimits(timeout=600.0, max_instructions=50_000_000)
    trace, trace_s = timed(lambda: trace_program(full, timing=False, limits=limits,
                                                 compile_options={"defines": defines}))
    if trace.truncated:
        raise SystemExit(f"{name}: the trace was cut at the instruction budget")
    build_s, plain_m = time_builds(path, defines, analyze_models, build_repeat)
    plain_s = build_s[None]
    oracle, oracle_s = build_graph(trace, control="oracle"), build_s["oracle"]
    flow = oracle.control
    table, table_s = timed(partial(model_table, oracle, flow))
    work = float(np.sum(oracle.weight))
    row = {"program": name, "path": path, "defines": defines, "kind": KIND.get(name),
           "dynamic_instructions": int(trace.dynamic_instructions),
           "nodes": int(oracle.n), "edges": int(oracle.m), "work": work,
           "branches": int(flow.branches), "mispredicted": int(flow.mispredicted),
           "trace_s": trace_s, "plain_build_s": plain_s, "plain_edges": plain_m,
           "oracle_build_s": oracle_s, "table_s": table_s,
           "table": {r["model"]: {"critical_path": float(r["critical_path"]),
                                  "parallelism": float(r["parallelism"]),
                                  "control_edges": int(r["control_edges"])}
                     for r in table},
           "analyses": {}, "analyzed": oracle.n <= max_nodes if max_nodes else True}
    say(f"  {name}: {oracle.n:,} nodes, {oracle.m:,} edges; trace {trace_s:.2f} s, "
        f"oracle graph {oracle_s:.2f} s, model table {table_s:.2f} s")
    oracle = flow = None  # freed before the analyses
    if not row["analyzed"]:
        say(f"  {name}: more than {max_nodes:,} nodes, not analysed")
        return row
    for model in analyze_models:
        graph = build_graph(trace, control=model)
        times, spans = [], set()
        for _ in range(max(1, analyze_repeat)):
            a = None  # the previous analysis freed before the next
            a, secs = timed(partial(analyze_graph, graph, p, object_bytes=trace.obj_size,
                                    baselines=False, progress=progress))
            times.append(secs)
            spans.add(float(a.result.makespan))
        if len(spans) != 1:
            raise SystemExit(f"{name} {model}: the analyses gave different makespans {spans}")
        analyze_s = float(np.median(times))
        makespan = float(a.result.makespan)
        row["analyses"][model] = {
            "edges": int(graph.m), "build_s": build_s[model], "analyze_s": analyze_s,
            "analyze_times": times,
            "makespan": makespan, "speedup": work / makespan if makespan > 0 else None,
            "bound_work": float(a.bound.work) if getattr(a, "bound", None) else None,
            "phases": {k: float(v) for k, v in (a.phases or {}).items()
                       if isinstance(v, (int, float))}}
        say(f"    {model}: {graph.m:,} edges, build {build_s[model]:.2f} s, analysis "
            f"{analyze_s:.2f} s, makespan {makespan:,.0f}, speed-up "
            f"{row['analyses'][model]['speedup']:.2f}")
        graph = a = None
    return row


# -- the tables -----------------------------------------------------------------------------

def _f(x, digits=1):
    if x is None:
        return "–"
    if x >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def parallelism_table(rows):
    """(a): parallelism per program and model, harmonic means per kind."""
    out = ["| program | kind | nodes | " + " | ".join(MODELS) + " |",
           "|---|---|---:|" + "---:|" * len(MODELS)]
    for r in rows:
        out.append(f"| {r['program']} | {r['kind'] or '?'} | {r['nodes']:,} | "
                   + " | ".join(_f(r["table"][m]["parallelism"]) for m in MODELS) + " |")
    for kind, label in (("int", "integer"), ("fp", "floating point")):
        sel = [r for r in rows if r["kind"] == kind]
        if sel:
            out.append(f"| **harmonic mean, {label} ({len(sel)})** | {kind} | | "
                       + " | ".join(_f(harmonic([r["table"][m]["parallelism"] for r in sel]))
                                    for m in MODELS) + " |")
    return out


def lam_wilson_table(rows):
    """(b): our harmonic means beside Lam and Wilson's published ones."""
    out = ["| kind | source | " + " | ".join(MODELS) + " |",
           "|---|---|" + "---:|" * len(MODELS)]
    for kind, label in (("int", "integer / non-numeric"), ("fp", "floating point / numeric")):
        sel = [r for r in rows if r["kind"] == kind]
        ours = [harmonic([r["table"][m]["parallelism"] for r in sel]) if sel else None
                for m in MODELS]
        out.append(f"| {label} | ours ({len(sel)} programs) | "
                   + " | ".join(_f(x) for x in ours) + " |")
        out.append(f"| {label} | Lam and Wilson 1992 | "
                   + " | ".join(_f(LAM_WILSON[kind][m]) for m in MODELS) + " |")
    return out


def cost_table(rows, models):
    """(c): each model's graph edges, build time and analysis time over the ORACLE
    graph's; a ratio above `COST_TARGET` is marked."""
    models = [m for m in models if m != "oracle"]

    def ratio(a, b):
        if a is None or not b:
            return "–"
        x = a / b
        return f"{x:.2f}" + (" ✗" if x > COST_TARGET else "")

    out = ["| program | oracle edges | oracle build (s) | oracle analysis (s) | "
           + " | ".join(f"{m}: edges / build / analysis" for m in models) + " |",
           "|---|---:|---:|---:|" + "---|" * len(models)]
    for r in rows:
        an = r["analyses"]
        o = an.get("oracle")
        cells = []
        for m in models:
            x = an.get(m)
            if x is None:
                edges = r["edges"] + r["table"][m]["control_edges"]
                cells.append(f"{ratio(edges, r['edges'])} / – / –")
                continue
            cells.append(" / ".join((ratio(x["edges"], r["edges"]),
                                     ratio(x["build_s"], r["oracle_build_s"]),
                                     ratio(x["analyze_s"], o["analyze_s"] if o else None))))
        out.append(f"| {r['program']} | {r['edges']:,} | {r['oracle_build_s']:.2f} | "
                   f"{_f(o['analyze_s'], 2) if o else '–'} | " + " | ".join(cells) + " |")
    return out


def ratio_table(rows):
    """(d): ORACLE / CD parallelism per program."""
    out = ["| program | kind | oracle | cd | oracle / cd |", "|---|---|---:|---:|---:|"]
    ratios = []
    for r in rows:
        o, c = r["table"]["oracle"]["parallelism"], r["table"]["cd"]["parallelism"]
        ratios.append(o / c)
        out.append(f"| {r['program']} | {r['kind'] or '?'} | {_f(o)} | {_f(c)} | "
                   f"{_f(o / c)} |")
    if ratios:
        import math
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        out.append(f"| **geometric mean ({len(ratios)})** | | | | {_f(gm)} |")
    return out


def analysis_table(rows, models):
    """The analyses: makespan and simulated speed-up (ORACLE data work / makespan)."""
    out = ["| program | " + " | ".join(f"{m}: makespan / speed-up" for m in models) + " |",
           "|---|" + "---:|" * len(models)]
    for r in rows:
        cells = []
        for m in models:
            x = r["analyses"].get(m)
            cells.append("–" if x is None else f"{x['makespan']:,.0f} / {_f(x['speedup'], 2)}")
        out.append(f"| {r['program']} | " + " | ".join(cells) + " |")
    return out


def print_all(rows, analyze_models, p, wall):
    print(f"Lam-Wilson control models, {len(rows)} programs, p = {p}, "
          f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, "
          f"total {wall:.0f} s")
    print()
    print("(a) parallelism (data work / critical path) per model")
    print()
    print("\n".join(parallelism_table(rows)))
    print()
    print("(b) harmonic means beside Lam and Wilson's published ones")
    print()
    print("\n".join(lam_wilson_table(rows)))
    print()
    print("Lam and Wilson's figures (- where not found): " + LAM_WILSON["source"])
    print()
    print(f"(c) cost against the ORACLE graph: edges / build time / analysis time, "
          f"each over the ORACLE graph's (target <= {COST_TARGET:g}; ✗ above it; "
          "edges only, from the model table, where not analysed)")
    print()
    print("\n".join(cost_table(rows, analyze_models)))
    print()
    print("(d) ORACLE / CD parallelism (Lam and Wilson: about two orders of magnitude)")
    print()
    print("\n".join(ratio_table(rows)))
    print()
    print(f"analyses at p = {p}: simulated makespan (cycles) / speed-up (ORACLE data work "
          "/ makespan)")
    print()
    print("\n".join(analysis_table(rows, analyze_models)))
    print()
    print("times (s): trace, plain data graph, ORACLE graph, model table (all 7 models)")
    print()
    print("| program | dyn. instructions | trace | plain graph | oracle graph | "
          "model table | analyses (all models) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        total = sum(x["build_s"] + x["analyze_s"] for x in r["analyses"].values())
        print(f"| {r['program']} | {r['dynamic_instructions']:,} | {r['trace_s']:.2f} | "
              f"{r['plain_build_s']:.2f} | {r['oracle_build_s']:.2f} | {r['table_s']:.2f} | "
              f"{total:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p", type=int, default=8, help="clusters (default 8)")
    ap.add_argument("--programs", nargs="*", metavar="NAME",
                    help="only these programs (default: all; names as in the tables)")
    ap.add_argument("--analyze-models", nargs="*", metavar="MODEL",
                    default=list(ANALYZE_DEFAULT),
                    help=f"models to analyse (default: {' '.join(ANALYZE_DEFAULT)}; "
                         "'all' for the seven; the option alone, with no model, skips them)")
    ap.add_argument("--analyze-max-nodes", type=int, default=ANALYZE_MAX_NODES, metavar="N",
                    help="analyse only programs of at most N nodes (default 0: all)")
    ap.add_argument("--build-repeat", type=int, default=9, metavar="N",
                    help="time each graph build as the best of N rounds, a build of each "
                         "graph per round (default 9)")
    ap.add_argument("--analyze-repeat", type=int, default=1, metavar="N",
                    help="time each analysis as the median of N analyses (default 1)")
    ap.add_argument("--progress", action="store_true",
                    help="print analyze_graph's phases as they start (stderr)")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the warm-up analysis of a tiny program")
    ap.add_argument("--json", metavar="OUT.json", help="also save the measurements")
    ap.add_argument("--time-builds", metavar="PATH", help=argparse.SUPPRESS)  # the child
    ap.add_argument("--defines", nargs="*", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time_builds:
        _builds_child(args.time_builds, args.defines, args.analyze_models, args.build_repeat)
        return
    models = list(MODELS) if args.analyze_models == ["all"] else args.analyze_models
    bad = [m for m in models if m not in MODELS]
    if bad:
        raise SystemExit(f"unknown models {bad}; choose from {', '.join(MODELS)} or all")
    if models and "oracle" not in models:
        models = ["oracle", *models]  # the cost table's reference
    models = [m for m in MODELS if m in models]
    started = now()
    t0 = time.perf_counter()

    def say(line):
        print(line, file=sys.stderr, flush=True)

    if models and not args.no_warmup:
        say("warm-up: strassen N=4 under every model")
        warm_up(args.p)
    def progress(line):  # analyze_graph's phases, with the seconds since the start
        say(f"      [{time.perf_counter() - t0:7.1f} s] {line}")

    rows = [measure(name, path, defines, args.p, models, args.analyze_max_nodes,
                    args.build_repeat, say, progress if args.progress else None,
                    args.analyze_repeat)
            for name, path, defines, _ in programs(args.programs)]
    wall = time.perf_counter() - t0
    print_all(rows, models, args.p, wall)
    if args.json:
        doc = envelope("bench/bench_control.py", sys.argv[1:], kind="in-process",
                       runs="warm", started=started)
        doc.update({"p": args.p, "models": list(MODELS), "analyze_models": models,
                    "analyze_max_nodes": args.analyze_max_nodes, "cost_target": COST_TARGET,
                    "kinds": KIND, "lam_wilson": LAM_WILSON, "wall_s": wall, "rows": rows})
        save(args.json, doc)


if __name__ == "__main__":
    main()
