"""Write docs/benchmarks.md from the saved results in bench/results/*.json.

Every performance or quality figure the README and docs/ cite comes from a file of
bench/results/ (written by a bench script's ``--json``, with the envelope of
bench/_record.py); this script renders each file as a section: the exact command, the
machine, the date and commit, whether the figures are first runs or warm, whole
commands or in-process, and the table. docs/benchmarks.md is this script's output and
nothing else, so a figure cannot drift from its source. Results kept only as history
go to bench/results/archive/ (not rendered).

Usage::

    python bench/report.py            # rewrite docs/benchmarks.md
    python bench/report.py --check    # exit 1 if docs/benchmarks.md is not up to date
"""

import argparse
import glob
import json
import os
import shlex
import sys

from vcut_base.atomic import atomic_output

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _quality_tables import (LARGE_HEADER, ORDER_HEADER, ORDER_TARGET,  # noqa: E402
                             frontier_lines, gmean, large_row, large_summary,
                             min_balanced, order_row, order_summary, preset_lines,
                             stage_lines, stage_shares)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
TARGET = os.path.join(ROOT, "docs", "benchmarks.md")

#: Bench scripts whose results are not saved here: run them to measure.
UNRECORDED_NOTE = (
    "The other scripts of bench/ print their tables when run (each one's docstring says "
    "what it measures and its options); their figures are not cited in the README or "
    "docs/ until a run of theirs is saved here.")


def load(folder=RESULTS):
    """The saved results of ``folder`` (not its subfolders), oldest first."""
    docs = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        doc["_file"] = os.path.relpath(path, ROOT)
        docs.append(doc)
    return sorted(docs, key=lambda d: d.get("date", ""))


# -- formatting ----------------------------------------------------------------------------

def _secs(s):
    if s is None:
        return "–"
    return f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def _mb(b):
    return "–" if b is None else f"{b / 2**20:,.0f} MB"


def provenance(doc):
    """The lines that say where a result comes from."""
    m = doc.get("machine", {})
    mem = m.get("memory_bytes")
    load = m.get("loadavg_before") or []
    load_after = m.get("loadavg_after") or []
    loads = ", ".join(x for x in (f"{load[0]} before" if load else "",
                                  f"{load_after[0]} after" if load_after else "") if x)
    git = doc.get("git", {})
    commit = (git.get("commit") or "?")[:10] + (" (with uncommitted changes)"
                                                  if git.get("dirty") else "")
    v = doc.get("versions", {})
    command = doc.get("command") or shlex.join(["python", doc["benchmark"], *doc["argv"]])
    return [
        f"- command: `{command}`",
        f"- machine: {m.get('cores_usable', m.get('cores'))} cores ({m.get('cpu') or '?'}), "
        f"{(mem or 0) / 2**30:.1f} GiB, GPU {m.get('gpu', '?')}"
        + (f"; load average {loads}" if loads else ""),
        f"- run: {doc['date'].replace('T', ' ').replace('+00:00', ' UTC')}, commit {commit}; "
        f"Python {v.get('python', '?')}, numba {v.get('numba', '?')}, numpy "
        f"{v.get('numpy', '?')}",
        f"- figures: {doc.get('kind') or _kind(doc)}; {doc.get('runs') or _runs(doc)}",
        f"- source: `{doc['_file']}`",
    ]


def _kind(doc):
    """What a result saved without the envelope's ``kind`` measured (bench_cli's older
    files: whole commands only)."""
    return "whole command" if doc["benchmark"] == "bench/bench_cli.py" else "?"


def _runs(doc):
    if doc["benchmark"] == "bench/bench_cli.py":
        return "warm" if "--no-first" in doc.get("argv", []) else "first run and warm"
    return "?"


# -- the sections --------------------------------------------------------------------------

def cli_section(doc):
    """bench/bench_cli.py: whole commands, first run and warm, with the in-process time."""
    out = [
        "| row | command | first run (target) | warm median [min–max] (target) | "
        "in-process warm | peak RSS warm | result |",
        "|---|---|---:|---:|---:|---:|---|"]
    for r in doc["rows"]:
        t = r.get("targets", {})
        first = r.get("first")
        fcell = _secs(first["wall_s"]) if first else "–"
        if t.get("first_s") is not None and first:
            fcell += f" (≤ {t['first_s']:g})"
        w = r.get("warm_summary")
        wcell = "–"
        if w:
            wcell = f"{_secs(w['median_s'])} [{w['min_s']:.2f}–{w['max_s']:.2f}]"
            if len(r.get("warm", ())) != doc.get("repeat"):  # a row capped to fewer runs
                wcell += f" ×{len(r['warm'])}"
            if t.get("warm_median_s") is not None:
                wcell += f" (≤ {t['warm_median_s']:g})"
        ip = r.get("inprocess") or {}
        icell = _secs(ip.get("median_s")) if ip.get("median_s") is not None else "–"
        rss = _mb(max(x["peak_rss_bytes"] for x in r["warm"])) if r.get("warm") else "–"
        if t.get("peak_rss_bytes") is not None:
            rss += f" (≤ {_mb(t['peak_rss_bytes'])})"
        result = r.get("result", "–")
        if r.get("error"):
            result = r["error"][:60]
        out.append(f"| {r['name']} | `{r['command']}` | {fcell} | {wcell} | {icell} | {rss} | "
                   f"{result} |")
    out += ["", f"First run: the command with an empty numba cache (`NUMBA_CACHE_DIR` a new "
            f"directory), so it compiles every kernel it runs. Warm: the median of "
            f"{doc.get('repeat', '?')} runs after {doc.get('warmup', '?')} warm-up (×N: a row "
            "capped to N runs, without warm-up runs; a `--scale` row's kernels are compiled "
            "by a small analyze first). "
            "In-process: "
            "the same command called as a function (`vcut.cli.main`) in a warm process "
            "(bench/_inprocess.py), without interpreter start-up, imports and exit. $DATA is "
            "../shared/datasets; $OUT a temporary directory."]
    return out


def rate_section(doc):
    """bench/bench_analyze_rate.py: whole analyze per program, nodes per second."""
    out = ["| program | nodes | whole command warm | nodes/s | in-process total | "
           "partition | mapping | trace + graph | report |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows = doc["rows"]
    for r in rows:
        ph = r.get("phases", {})
        out.append(f"| {r['program']} | {r['nodes']:,} | {_secs(r['wall_s'])} | "
                   f"{r['nodes_per_s']:,.0f} | {_secs(ph.get('total'))} | "
                   f"{_secs(ph.get('partition'))} | {_secs(ph.get('mapping'))} | "
                   f"{_secs(ph.get('trace_and_graph'))} | {_secs(ph.get('report'))} |")
    big = doc.get("big", 500_000)
    out.append("")
    for label, sel in (("all programs", rows),
                       (f"programs of ≥ {big:,} nodes", [r for r in rows if r["nodes"] >= big])):
        if len(sel) >= 2:
            per = [r["wall_s"] / r["nodes"] for r in sel]
            out.append(f"- seconds per node, max ÷ min over {label} ({len(sel)}): "
                       f"{max(per) / min(per):.2f}")
    out.append(f"- `vcut analyze PROGRAM -p {doc.get('p', 8)}`, median of "
               f"{doc.get('repeat', '?')} runs after a warm-up; in-process phases as the run "
               "reported them (mapping.json's `phases`).")
    return out


def quality_section(doc):
    """bench/bench_quality.py: `best` beside the reference NE, HEP and Mt-KaHyPar."""
    def rf(ref):
        return ref[0] if ref else None

    out = ["| graph | k | best RF | balance | ne RF | hep τ=10 RF | ref NE RF | ref HEP τ=10 "
           "RF | ref Mt-KaHyPar RF | best ÷ min(NE, HEP) | best ÷ min balanced | "
           "best ÷ Mt-KaHyPar | best time | ref NE time | time ÷ ref NE | time ÷ ref Mt-KaHyPar |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def f3(x):
        return "–" if x is None else f"{x:.3f}"

    for c in doc["cells"]:
        mn, mtk = c.get("min_ref"), rf(c.get("ref_mtk"))
        ne_t = c["ref_ne"][2] if c.get("ref_ne") else None
        mtk_t = c["ref_mtk"][2] if c.get("ref_mtk") else None
        low = min_balanced(c)
        out.append(
            f"| {c['graph']} | {c['k']} | {c['best_rf']:.4f} | {c['best_bal']:.3f} | "
            f"{c['ne_rf']:.4f} | {c['hep_rf']:.4f} | {f3(rf(c.get('ref_ne')))} | "
            f"{f3(rf(c.get('ref_hep10')))} | {f3(mtk)} | "
            f"{f3(c['best_rf'] / mn if mn else None)} | "
            f"{f3(c['best_rf'] / low if low else None)} | "
            f"{f3(c['best_rf'] / mtk if mtk else None)} | {_secs(c['best_s'])} | "
            f"{_secs(ne_t)} | "
            + ("–" if ne_t is None else f"{c['best_s'] / max(ne_t, 0.005):.2f}") + " | "
            + ("–" if mtk_t is None else f"{c['best_s'] / max(mtk_t, 0.005):.4f}") + " |")
    cells = doc["cells"]
    mtk = [c["best_rf"] / c["ref_mtk"][0] for c in cells if c.get("ref_mtk")]
    mins = [c["best_rf"] / c["min_ref"] for c in cells if c.get("min_ref")]
    slow = [c["best_s"] / max(c["ref_ne"][2], 0.005) for c in cells if c.get("ref_ne")]
    bal = sum(c["best_bal"] <= 1.03 + 1e-9 for c in cells)
    lows = [(c, min_balanced(c)) for c in cells if min_balanced(c)]
    at_low = sum(c["best_rf"] <= low + 5e-4 for c, low in lows)
    out += ["",
            f"- `best`'s balance ≤ 1.03 in {bal} of {len(cells)} cells",
            f"- `best`'s RF at or below every balanced (≤ 1.03) reference NE / HEP τ=10 / "
            f"HEP τ=100 result in {at_low} of {len(lows)} cells",
            f"- `best`'s RF ÷ min(reference NE, HEP τ=10): geometric mean {gmean(mins):.3f} "
            f"over {len(mins)} cells",
            f"- `best`'s RF ÷ reference Mt-KaHyPar's: geometric mean {gmean(mtk):.3f} over "
            f"{len(mtk)} cells",
            f"- `best`'s time ÷ reference NE's: geometric mean {gmean(slow):.2f} over "
            f"{len(slow)} cells (ours in-process, without reading the graph, the reference's "
            "from ../shared/datasets/REFERENCE_RESULTS.md, which include the tools' own "
            "input conversion)",
            "- the reference columns are ../shared/datasets/REFERENCE_RESULTS.md's figures "
            "(not measured here); RF and balance of ours are "
            + ("recomputed by the bench from each written part file ("
               f"{len(doc.get('mismatches', []))} differ from vcut's own figures)."
               if doc.get("rf_balance_from") == "written part files"
               else "recomputed from each assignment by `vcut.metrics`.")]
    if cells and "best_fast_rf" in cells[0]:
        out += ["", "`best`'s presets (`--presets`) over the same cells, RF and balance from the "
                "written part files:", "", *preset_lines(cells),
                "", "- ratios are geometric means over the cells; time ÷ reference NE compares "
                "ours in-process with the reference file's times (which include the tools' "
                "input conversion)"]
    large = doc.get("large_cells") or []
    if large:
        out += ["", "The large graphs (`--large`) beside Mt-KaHyPar's quality preset, run once on "
                "this machine with both cores (`python bench/mtkahypar_large.py`, kept in "
                "bench/reference_large.json; its times are the partitioner's alone); ours RF / "
                "balance / seconds, RF and balance from the written part files:", "",
                *LARGE_HEADER, *(large_row(c) for c in large), "", *large_summary(large)]
    order = doc.get("order_cells") or []
    if order:
        out += ["", "Order sensitivity of `best` (`--order`): RF in the file's order, and its "
                "change over random orders of the edges (each edge reversed with probability "
                "1/2) and random numberings of the vertices, RF recomputed by the bench from "
                f"each assignment (target: at most {100 * ORDER_TARGET:.1f} %).", "",
                *ORDER_HEADER, *(order_row(c) for c in order), "", order_summary(order)]
    return out


def budget_section(doc):
    """bench/bench_budget.py: analyze's peak memory beside the budget's estimate."""
    out = ["| program | defines | nodes | edges per node | peak RSS | bytes per node | "
           "estimate | estimate ÷ peak |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    rows = doc["rows"]
    for r in rows:
        out.append(f"| {r['program']} | {' '.join(r['defines'])} | {r['nodes']:,} | "
                   f"{r['edges'] / r['nodes']:.2f} | {_mb(r['peak_rss_bytes'])} | "
                   f"{r['peak_rss_bytes'] / r['nodes']:.0f} | {_mb(r['estimate_bytes'])} | "
                   f"{r['estimate_bytes'] / r['peak_rss_bytes']:.2f} |")
    bound = sum(r["estimate_bytes"] >= r["peak_rss_bytes"] for r in rows)
    out += ["", f"- the estimate is at or above the measured peak in {bound} of {len(rows)} "
            f"runs; `vcut analyze TRACE -p {doc.get('p', 8)}` with its defaults, one run each, "
            "peak RSS of the whole command (`ru_maxrss`)."]
    by = {}
    for r in rows:
        by.setdefault(r["program"], []).append(r)
    for name, pair in by.items():
        if len(pair) == 2:
            a, b = sorted(pair, key=lambda r: r["nodes"])
            slope = (b["peak_rss_bytes"] - a["peak_rss_bytes"]) / (b["nodes"] - a["nodes"])
            out.append(f"- {name}: {slope:.0f} bytes per added instruction between its two "
                       "sizes")
    return out


def control_section(doc):
    """bench/bench_control.py: the Lam-Wilson models' parallelism and the cost of their
    control edges against the ORACLE graph."""
    models = doc.get("models") or ["oracle", "sp-cd-mf", "sp-cd", "sp", "cd-mf", "cd", "base"]
    rows = doc["rows"]

    def f1(x):
        return "–" if x is None else (f"{x:,.0f}" if x >= 1000 else f"{x:.1f}")

    def hmean(xs):
        xs = [x for x in xs if x]
        return len(xs) / sum(1.0 / x for x in xs) if xs else None

    out = ["| program | kind | nodes | " + " | ".join(models) + " | oracle ÷ cd |",
           "|---|---|---:|" + "---:|" * (len(models) + 1)]
    for r in rows:
        par = {m: r["table"][m]["parallelism"] for m in models}
        out.append(f"| {r['program']} | {r.get('kind') or '?'} | {r['nodes']:,} | "
                   + " | ".join(f1(par[m]) for m in models)
                   + f" | {f1(par['oracle'] / par['cd'])} |")
    lw = doc.get("lam_wilson") or {}
    for kind, label in (("int", "integer"), ("fp", "floating point")):
        sel = [r for r in rows if r.get("kind") == kind]
        if sel:
            out.append(f"| harmonic mean, {label} ({len(sel)}) | {kind} | | "
                       + " | ".join(f1(hmean([r["table"][m]["parallelism"] for r in sel]))
                                    for m in models) + " | |")
        published = (lw.get(kind) or {})
        if any(published.get(m) is not None for m in models):
            out.append(f"| Lam and Wilson 1992, {label} | {kind} | | "
                       + " | ".join(f1(published.get(m)) for m in models) + " | |")
    target = doc.get("cost_target", 1.5)
    analysed = [m for m in doc.get("analyze_models", []) if m != "oracle"]
    out += ["", f"Cost of each model's graph over the ORACLE graph's: edges / build time / "
            f"analysis time (`analyze_graph` at p = {doc.get('p', 8)}); target ≤ {target:g}.",
            "", "| program | oracle analysis | "
            + " | ".join(f"{m}" for m in analysed) + " |",
            "|---|---:|" + "---:|" * len(analysed)]
    for r in rows:
        an = r.get("analyses") or {}
        o = an.get("oracle")
        cells = []
        for m in analysed:
            x = an.get(m)
            if x is None or o is None:  # not analysed: the edges from the model table
                edges = r["edges"] + r["table"][m]["control_edges"]
                cells.append(f"{edges / r['edges']:.2f} / – / –")
                continue
            cells.append(f"{x['edges'] / r['edges']:.2f} / "
                         f"{x['build_s'] / max(r['oracle_build_s'], 1e-9):.2f} / "
                         f"{x['analyze_s'] / max(o['analyze_s'], 1e-9):.2f}")
        out.append(f"| {r['program']} | {_secs(o['analyze_s']) if o else '–'} | "
                   + " | ".join(cells) + " |")
    out.append("")
    if not any(v is not None for k in ("int", "fp") for v in (lw.get(k) or {}).values()):
        out.append("- Lam and Wilson's published figures: not filled in "
                   f"({lw.get('source', 'bench/bench_control.py LAM_WILSON')}).")
    else:
        out.append("- Lam and Wilson's figures (– where not found): "
                   f"{lw.get('source', 'bench/bench_control.py LAM_WILSON')}.")
    out.append("- parallelism: the data work (sum of the ORACLE graph's edge weights) over "
               "the critical path under each model (`ir_graph.control.model_table`).")
    return out


def strong_stages_section(doc):
    """bench/bench_strong_stages.py: `strong`'s RF after each stage and the stages' time,
    beside Mt-KaHyPar."""
    return stage_lines(doc["cells"]) + [
        "", f"- FM's stall limit at the coarse levels: {doc.get('fm_stall', '?')} "
        "(`vcut.cut_levels.VCYCLE_FM_STALL`; -1: none)", stage_shares(doc["cells"]),
        "- one run per cell; a stage's time subtracted from the run's gives what `strong` "
        "would cost stopped before it; RF is vcut's count of replicas over the vertices "
        "with an edge, Mt-KaHyPar's the reference file's."]


def frontier_section(doc):
    """bench/bench_mtkahypar_presets.py: Mt-KaHyPar's default and quality presets beside
    `best`'s default and strong, within one run."""
    return frontier_lines(doc["cells"]) + [
        "", f"- {len(doc['cells'])} cells, one run each in one process after an untimed "
        f"warm-up; Mt-KaHyPar on {doc.get('threads', '?')} threads through "
        "`vcut.spac.hypergraph_assign` (seed 0, epsilon 0.03); RF and balance recomputed "
        "from each assignment; times are the partitioner's call alone. Time ÷ reference NE "
        "divides by the reference file's NE times (another machine, reading the file "
        "included), as the quality bench does."]


SECTIONS = {
    "bench/bench_cli.py": ("Whole commands, first run and warm", cli_section,
                           "whole-commands-first-run-and-warm"),
    "bench/bench_analyze_rate.py": ("`vcut analyze` across programs", rate_section,
                                    "vcut-analyze-across-programs"),
    "bench/bench_budget.py": ("Memory: analyze's peak beside its estimate", budget_section,
                              "memory-analyzes-peak-beside-its-estimate"),
    "bench/bench_control.py": ("Control flow: the Lam-Wilson machine models",
                               control_section, "control-flow-the-lam-wilson-machine-models"),
    "bench/bench_quality.py": ("Partition quality: `best` beside NE, HEP and Mt-KaHyPar",
                               quality_section,
                               "partition-quality-best-beside-ne-hep-and-mt-kahypar"),
    "bench/bench_strong_stages.py": ("`best --preset strong` stage by stage",
                                     strong_stages_section,
                                     "best---preset-strong-stage-by-stage"),
    "bench/bench_mtkahypar_presets.py": ("Mt-KaHyPar's presets beside `best`'s",
                                         frontier_section,
                                         "mt-kahypars-presets-beside-bests"),
}


def render(docs):
    """docs/benchmarks.md's text for the saved results ``docs``."""
    lines = [
        "# Measured figures",
        "",
        "<!-- Written by `python bench/report.py` from bench/results/*.json: do not edit. -->",
        "",
        "Each table below is one saved run of a benchmark script, with the command that "
        "reproduces it, the machine it ran on, its date and commit, and what kind of figure "
        "it is: a *whole command* is timed as a user's shell runs it (interpreter start-up, "
        "imports, cache loading and exit included); an *in-process* figure is the same work "
        "in a warm Python process. A *first run* starts with an empty numba cache; *warm* "
        "runs reuse it. Times depend on the machine and its load: compare ratios within "
        "one table. To refresh a table, run its command with `--json` naming a new file in "
        "the folder bench/results/, then `python bench/report.py`.",
        "",
    ]
    known = [d for d in docs if d.get("benchmark") in SECTIONS]
    for script, (title, section, _) in SECTIONS.items():
        mine = [d for d in known if d["benchmark"] == script]
        if not mine:
            continue
        lines += [f"## {title}", ""]
        for doc in reversed(mine):  # newest first
            label = doc.get("label") or \
                f"Run of {doc['date'][:10]}, commit {(doc.get('git', {}).get('commit') or '?')[:10]}"
            lines += [f"### {label}", "", *provenance(doc), "", *section(doc), ""]
    others = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "bench",
                                                                       "bench_*.py"))
                    if f"bench/{os.path.basename(p)}" not in {d["benchmark"] for d in known})
    lines += ["## Not recorded here", "", UNRECORDED_NOTE, "",
              ", ".join(f"`bench/{name}`" for name in others), ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if docs/benchmarks.md differs from what this script writes")
    args = ap.parse_args(argv)
    text = render(load())
    if args.check:
        try:
            with open(TARGET, encoding="utf-8") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print("docs/benchmarks.md is not up to date: run python bench/report.py",
                  file=sys.stderr)
            return 1
        return 0
    with atomic_output(TARGET, "w") as fh:
        fh.write(text)
    print(f"wrote {os.path.relpath(TARGET, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
