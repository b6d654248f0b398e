"""The tables of bench/bench_quality.py that bench/report.py renders again from its saved
JSON: one definition of each row and count, so that the run's printout and
docs/benchmarks.md cannot disagree (numpy-free: report.py imports it)."""

import math

#: The reference file gives RF to 3 places: ours is "at or below" one within half a unit.
RF_ROUNDING = 5e-4
#: The largest change of RF an order of the file or a numbering may make (issue 65).
ORDER_TARGET = 0.005
#: best's presets: the cell keys of their figures and their names.
PRESETS = (("best_fast", "fast"), ("best", "default"), ("best_strong", "strong"))


def gmean(xs):
    """Geometric mean of the positive values of ``xs`` (nan when there are none)."""
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def min_balanced(c):
    """The lowest RF of the reference NE, HEP τ=10 and HEP τ=100 results of cell ``c`` that
    are themselves balanced (balance <= 1.03); None where none is."""
    refs = [c[x][0] for x in ("ref_ne", "ref_hep10", "ref_hep100")
            if c.get(x) and c[x][1] <= 1.03 + 1e-9]
    return min(refs) if refs else None


def preset_lines(cells):
    """Markdown table of best's presets over ``cells`` (which hold ``best_fast_*`` and
    ``best_strong_*`` beside ``best_*``): RF against Mt-KaHyPar, the default and min(NE,
    HEP), balance, and time against the reference NE and the default."""
    out = ["| preset | RF ÷ Mt-KaHyPar | RF ÷ default's | RF ≤ min(NE, HEP τ=10) | "
           "balance ≤ 1.03 | time ÷ reference NE | time ≤ reference NE | time ÷ default's |",
           "|---|---:|---:|---|---|---:|---|---:|"]
    with_min = [c for c in cells if c.get("min_ref")]
    for key, name in PRESETS:
        rf = [c[f"{key}_rf"] / c["ref_mtk"][0] for c in cells if c.get("ref_mtk")]
        vs = [c[f"{key}_rf"] / c["best_rf"] for c in cells]
        below = sum(c[f"{key}_rf"] <= c["min_ref"] + RF_ROUNDING for c in with_min)
        bal = sum(c[f"{key}_bal"] <= 1.03 + 1e-9 for c in cells)
        t = [c[f"{key}_s"] / max(c["ref_ne"][2], 0.005) for c in cells if c.get("ref_ne")]
        td = [c[f"{key}_s"] / c["best_s"] for c in cells]
        out.append(f"| {name} | {gmean(rf):.3f} | {gmean(vs):.3f} | {below} / {len(with_min)} | "
                   f"{bal} / {len(cells)} | {gmean(t):.2f} | {sum(x <= 1.0 for x in t)} / "
                   f"{len(t)} | {gmean(td):.2f} |")
    return out


ORDER_HEADER = ["| graph | k | RF, file order | edge orders: RF change % | largest | "
                "numberings: RF change % | largest | result |",
                "|---|---:|---:|---|---:|---|---:|---|"]


def _worst(xs):
    return max(abs(x) for x in xs)


def order_row(c):
    """One row of the order-sensitivity table: a cell of ``order_cells``."""
    e, v = _worst(c["edge_orders"]), _worst(c["numberings"])
    ok = max(e, v) <= ORDER_TARGET + 1e-12

    def pct(xs):
        return ", ".join(f"{100 * x:+.2f}" for x in xs)

    return (f"| {c['graph']} | {c['k']} | {c['rf']:.4f} | {pct(c['edge_orders'])} | "
            f"{100 * e:.2f} | {pct(c['numberings'])} | {100 * v:.2f} | "
            f"{'pass' if ok else 'FAIL'} |")


def order_summary(cells):
    """The line under the order-sensitivity table."""
    both = [_worst(c["edge_orders"] + c["numberings"]) for c in cells]
    within = sum(b <= ORDER_TARGET + 1e-12 for b in both)
    return (f"- within {100 * ORDER_TARGET:.1f} %: {within} / {len(cells)} cells; largest change "
            f"over edge orders {100 * max(_worst(c['edge_orders']) for c in cells):.2f} %, over "
            f"numberings {100 * max(_worst(c['numberings']) for c in cells):.2f} %")


LARGE_HEADER = ["| graph | k | best: RF / balance / s | ne | hep τ=10 | Mt-KaHyPar (quality) | "
                "best ÷ min(ne, hep) | best ÷ Mt-KaHyPar | best time ÷ ne's | "
                "best time ÷ Mt-KaHyPar's |",
                "|---|---:|---|---|---|---|---:|---:|---:|---:|"]


def _triple(x):
    return f"{x[0]:.4f} / {x[1]:.3f} / {x[2]:.2f}"


def _mtk(c):
    """Mt-KaHyPar's cell of ``c`` as (rf, balance, seconds) when it finished, else None."""
    m = c.get("mtk") or {}
    return (m["rf"], m["balance"], m["seconds"]) if m.get("status") == "ok" else None


def large_row(c):
    """One row of the large-graph table: a cell of ``large_cells`` (our ``ne``, ``hep`` and
    ``best`` as (rf, balance, seconds), ``mtk`` the reference file's cell)."""
    best, ne, hep = c["best"], c["ne"], c["hep"]
    balanced = [x[0] for x in (ne, hep) if x[1] <= 1.03 + 1e-9]
    mtk = _mtk(c)
    status = (c.get("mtk") or {}).get("status", "not run")
    if mtk:
        vs, t = f"{best[0] / mtk[0]:.3f}", f"{best[2] / mtk[2]:.4f}"
        ref = _triple(mtk)
    elif status.startswith("over"):  # it did not finish: our time against its limit
        limit = float(status.split()[1])
        vs, t, ref = "—", f"< {best[2] / limit:.4f}", status
    else:
        vs, t, ref = "—", "—", status
    low = f"{best[0] / min(balanced):.3f}" if balanced else "—"
    return (f"| {c['graph']} | {c['k']} | {_triple(best)} | {_triple(ne)} | {_triple(hep)} | "
            f"{ref} | {low} | {vs} | {best[2] / ne[2]:.2f} | {t} |")


def large_summary(cells):
    """The lines under the large-graph table."""
    done = [c for c in cells if _mtk(c)]
    at_or_below = sum(c["best"][0] <= _mtk(c)[0] + RF_ROUNDING for c in done)
    tenth = sum(c["best"][2] <= _mtk(c)[2] / 10 for c in done)
    return [f"- best ÷ Mt-KaHyPar ≤ 1.00: {at_or_below} / {len(done)} cells where Mt-KaHyPar "
            f"finished (geometric mean {gmean([c['best'][0] / _mtk(c)[0] for c in done]):.3f}); "
            f"time ≤ 1/10 of Mt-KaHyPar's: {tenth} / {len(done)}",
            f"- balance ≤ 1.03: {sum(c['best'][1] <= 1.03 + 1e-9 for c in cells)} / "
            f"{len(cells)}"] + _strong_line(cells)


def _strong_line(cells):
    """The ``strong`` preset on the large graphs, where the cells hold it (``--presets``)."""
    strong = [c for c in cells if c.get("best_strong") and _mtk(c)]
    if not strong:
        return []
    each = ", ".join(f"{c['graph']} k = {c['k']} {c['best_strong'][0] / _mtk(c)[0]:.3f} "
                     f"({c['best_strong'][2]:.2f} s)" for c in strong)
    return [f"- `--preset strong` ÷ Mt-KaHyPar: {each}; geometric mean "
            f"{gmean([c['best_strong'][0] / _mtk(c)[0] for c in strong]):.3f}; balance ≤ "
            f"1.03: {sum(c['best_strong'][1] <= 1.03 + 1e-9 for c in strong)} / {len(strong)}"]


#: bench/bench_strong_stages.py's stages: the RF after each, and the stages' times a run
#: stopped there would not spend.
STAGE_ROWS = (("the iterated search (as run)", "rf_final", ()),
              ("the multilevel cycles", "rf_cycles", ("perturb_refine",)),
              ("the candidates, refined", "rf_candidates", ("perturb_refine", "vcycle_refine")))
#: the stages whose share of a run bench/bench_strong_stages.py gives: names and keys
STAGE_SHARES = (("multilevel cycles", "vcycle_refine"), ("multilevel cut", "multilevel_assign"),
                ("iterated search", "perturb_refine"))


def _staged(cells):
    return [c for c in cells if c.get("mtk") and c["mtk"][2]]


def stage_lines(cells):
    """bench/bench_strong_stages.py's table over the ``cells`` with a Mt-KaHyPar result and
    time (Markdown): the geometric means of RF and time ÷ Mt-KaHyPar's for `strong` stopped
    after each stage (`STAGE_ROWS`)."""
    cells = _staged(cells)
    out = ["| stopped after | RF ÷ Mt-KaHyPar (geometric mean) | cells at or below it | "
           "time ÷ Mt-KaHyPar (geometric mean) |", "|---|---:|---:|---:|"]
    for label, rf, skip in STAGE_ROWS:
        secs = [max(c["seconds"] - sum(c[f"{s}_seconds"] for s in skip), 1e-4) for c in cells]
        out.append(f"| {label} | {gmean(c[rf] / c['mtk'][0] for c in cells):.4f} | "
                   f"{sum(c[rf] <= c['mtk'][0] for c in cells)} / {len(cells)} | "
                   f"{gmean(t / c['mtk'][2] for t, c in zip(secs, cells)):.3f} |")
    return out


def stage_shares(cells):
    """The line of each stage's share of a run's time (`STAGE_SHARES`, geometric means over
    the same cells as `stage_lines`)."""
    cells = _staged(cells)
    shares = ", ".join(
        f"{label} {gmean(max(c[f'{stage}_seconds'], 1e-5) / c['seconds'] for c in cells):.2f}"
        for label, stage in STAGE_SHARES)
    return f"- share of each stage in a run's time (geometric means): {shares}"


#: bench/bench_mtkahypar_presets.py's partitioners: (cell key, name), Mt-KaHyPar's quality
#: preset (what the others are divided by) first.
FRONTIER = (("mt_quality", "Mt-KaHyPar quality"), ("mt_default", "Mt-KaHyPar default"),
            ("best_strong", "vcut best strong"), ("best", "vcut best default"))


def _or_dash(x, spec):
    """``x`` formatted with ``spec``, or "–" where it is nan (a mean over no cell)."""
    return "–" if math.isnan(x) else format(x, spec)


def frontier_lines(cells):
    """bench/bench_mtkahypar_presets.py's summary (Markdown) over ``cells``: for each
    partitioner, the geometric means of its RF and time ÷ Mt-KaHyPar quality's of the same
    cell (this run), the cells where its RF is at most that, RF ÷ the reference file's
    Mt-KaHyPar result and time ÷ its NE's (each over the cells that have one; NE's time at
    least 5 ms, as the quality bench takes it) and the cells of balance <= 1.03."""
    out = ["| partitioner | RF ÷ Mt-KaHyPar quality (geometric mean) | cells at or below it | "
           "time ÷ Mt-KaHyPar quality (geometric mean) | RF ÷ reference Mt-KaHyPar | "
           "time ÷ reference NE | balance ≤ 1.03 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for key, name in FRONTIER:
        have = [c for c in cells if c.get(key) and c.get("mt_quality")]
        if not have:
            continue
        refd = [c for c in have if c.get("ref_mtk")]
        ned = [c for c in have if c.get("ref_ne")]
        out.append(
            f"| {name} | {gmean(c[key][0] / c['mt_quality'][0] for c in have):.4f} | "
            f"{sum(c[key][0] <= c['mt_quality'][0] for c in have)} / {len(have)} | "
            f"{gmean(max(c[key][2], 1e-4) / max(c['mt_quality'][2], 1e-4) for c in have):.3f}"
            f" | {_or_dash(gmean(c[key][0] / c['ref_mtk'][0] for c in refd), '.4f')} | "
            f"{_or_dash(gmean(c[key][2] / max(c['ref_ne'][2], 0.005) for c in ned), '.1f')} | "
            f"{sum(c[key][1] <= 1.03 + 1e-9 for c in have)} / {len(have)} |")
    return out
