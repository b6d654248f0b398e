"""Human-readable outputs of an analysis: the summary, ``report.html`` and plots.

The HTML report is one self-contained file (plots embedded as PNG) that
reads at a phone's width as at a desktop's. It leads with the answer (a
heading naming the program, p and the machine; the execution time, the
speed-up, the lower bound, the communication and the balance) and what it
means for the program (`mapping.insight`: "Reading the analysis"); then the
figures: the cores' timeline, a heat map of the mesh's traffic and of core
utilisation, the load of every cluster, the comparison of mappings, the
degree distribution; then the critical path on the source and the shared
objects. Last, folded, each cluster's lines, objects and partners and the
internals: the mappings' table, the partitioner's settings, the phases' times.
"""

import base64
import html
import io
import os
import re
from typing import NamedTuple

import numpy as np

from ir_graph.stats import degree_figure

from .insight import _list as _ids
from .insight import insight as make_insight

__all__ = ["InsightHtml", "analysis_html", "answer_rows", "compare_figure", "compare_tables",
           "control_compare_lines", "control_figure", "control_lines", "control_rows",
           "degree_png", "figure_png", "insight_html", "plotting",
           "metric_text", "timeline_figure", "utilization_rows", "windows_tables"]


def plotting():
    """``matplotlib.pyplot`` with the Agg backend (imported at the first call, ~0.35 s; the
    pipeline starts it ahead with `vcut_base.lazy.background`)."""
    import matplotlib  # lazy: matplotlib's start-up, paid only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above

    return plt


def figure_png(fig):
    """PNG bytes of a matplotlib figure (the figure is closed), cropped to what it draws
    so that no label is cut off."""
    plt = plotting()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _png(fig):
    """``fig``'s PNG bytes; ``fig`` may be them already."""
    return fig if isinstance(fig, bytes) else figure_png(fig)


def _loads_figure(a):
    plt = plotting()
    inter = a.interactions
    fig, ax = plt.subplots(figsize=(7.0, 3.6), dpi=110)
    x = np.arange(a.p)
    ax.bar(x, inter.work, width=1.0 if a.p > 64 else 0.8, color="#4477aa")
    ax.axhline(inter.work.mean(), color="#cc3311", lw=1, label=f"mean {inter.work.mean():,.0f}")
    ax.set_xlabel("cluster")
    ax.set_ylabel("work (cycles)")
    ax.set_title(f"cluster loads: {a.method}, p = {a.p} (imbalance "
                 f"{inter.work.max() / max(inter.work.mean(), 1e-300):.4f})")
    ax.legend()
    fig.tight_layout()
    return fig


def _short(v):
    """A number in at most four characters: 0, 7, 0.31, 999, 12k, 3.4M, 1.2G."""
    if v == 0:
        return "0"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            q = v / scale
            return f"{q:.1f}{suffix}" if q < 10 else f"{q:.0f}{suffix}"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2g}"


#: Cell labels are drawn only when a cell is at least this wide (points) ...
MIN_CELL_POINTS = 14
#: ... with a font of at most this size, shrunk to fit the widest label.
MAX_LABEL_POINTS = 7.0


def _mesh_figure(a):
    plt = plotting()
    m = a.machine
    traffic = a.result.link_grid(m)
    util = a.result.utilization.reshape(m.mesh_rows, m.mesh_cols)
    # fixed margins, no layout engine: a constrained layout measured every label in a
    # draw of its own, 0.1 s of the report's 0.5 s
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.2), dpi=110)
    fig.subplots_adjust(left=0.06, right=0.95, bottom=0.11, top=0.85, wspace=0.28)
    panels = []
    for ax, data, title, cmap in ((axes[0], traffic, "bytes leaving each router", "inferno"),
                                  (axes[1], util, "core utilisation", "viridis")):
        im = ax.imshow(data, cmap=cmap, interpolation="nearest")
        ax.set_title(title)
        ax.set_xlabel("mesh column")
        ax.set_ylabel("mesh row")
        fig.colorbar(im, ax=ax, shrink=0.8)
        panels.append((ax, im, data))
    fig.suptitle(f"{m.name}: {a.placement.method} mapping")
    for ax, im, data in panels:
        ax.apply_aspect()  # the image's box, as the drawing will shrink it
        _label_cells(fig, ax, im, data, m)
    return fig


def _label_cells(fig, ax, im, data, m):
    """Write each cell's value in it when the cells are wide enough to hold it (the
    figure laid out already)."""
    width_pt = ax.get_window_extent().width * 72.0 / fig.dpi
    cell_pt = width_pt / max(m.mesh_cols, m.mesh_rows)
    labels = [[_short(v) for v in row] for row in data.tolist()]
    widest = max(len(t) for row in labels for t in row)
    size = min(MAX_LABEL_POINTS, 0.85 * cell_pt / (0.62 * widest))
    if cell_pt < MIN_CELL_POINTS or size < 4.0:
        return
    if m.mesh_cols <= 16:
        ax.set_xticks(range(m.mesh_cols))
        ax.set_yticks(range(m.mesh_rows))
    # dark text on the light end of the colour scale (the scale runs from the minimum)
    shade = np.asarray(im.norm(data), dtype=float)
    for (r, c), v in np.ndenumerate(shade):
        ax.text(c, r, labels[r][c], ha="center", va="center", fontsize=size,
                color="black" if v > 0.6 else "white")


def _mappers_figure(a):
    plt = plotting()
    rows = a.mappers
    names = [r["mapping"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), dpi=110)
    for ax, key, label in ((axes[0], "makespan", "makespan (cycles)"),
                           (axes[1], "hop_bytes", "hop-bytes")):
        vals = [r[key] for r in rows]
        colors = ["#cc3311" if n == a.placement.method else "#4477aa" for n in names]
        ax.bar(range(len(rows)), vals, color=colors)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(label)
    fig.suptitle("mappings of the same clusters")
    fig.tight_layout()
    return fig


def utilization_rows(r, cores):
    """The two labelled utilisation rows of a summary: the mean over the cores that hold a
    cluster, and over all ``cores`` of the machine (`mapping.simulate.SimResult`)."""
    used = r.cores_used
    empty = f", {cores - used} of them empty" if used < cores else ""
    return [("utilisation of the cores in use",
             f"{r.utilization_used_cores:.3f} (mean over the {used} of {cores} cores that "
             "hold clusters)"),
            ("utilisation of all cores",
             f"{r.utilization_all_cores:.3f} (mean over all {cores} cores{empty})")]


def degree_png(graph):
    """PNG bytes of the degree-distribution figure of ``graph`` (it needs the graph only,
    so a pipeline may draw it while it partitions and maps)."""
    return figure_png(degree_figure(graph))


#: The partition figures shown in the report's answer (the others are folded among the
#: internals): how often a node is copied, or how many edges an edge cut cuts, and the
#: balance of the clusters' work.
ANSWER_PARTITION = (("replication_factor", "replication factor (copies per node)"),
                    ("cut_edges", "cut edges"),
                    ("work_imbalance", "work imbalance (max / mean)"))


def answer_rows(a):
    """The labelled rows of the report's answer: the execution time, the speed-up, how
    close it is to the lower bound, the communication, the balance and the utilisation."""
    r, b = a.result, a.bound
    f = b.figures(r.makespan)
    rows = [("execution time (makespan)",
             f"{r.makespan:,.0f} cycles ({r.seconds * 1e3:.3f} ms)"),
            ("speed-up over one core",
             f"{f['speedup']:.2f} (one core: the work, {b.work:,.0f} cycles)"),
            ("makespan / lower bound (1.00 at best)",
             (f"{f['makespan_over_bound']:.2f} (bound {b.lower_bound:,.0f} cycles: critical "
              f"path {b.critical_path:,.0f}, work {b.work:,.0f} / {b.cores} cores "
              f"{b.work / max(b.cores, 1):,.0f})")),
            ("communication", f"{r.communication_bytes:,.0f} bytes in {r.messages:,} messages"),
            ("network bytes / hop-bytes", f"{r.network_bytes:,.0f} / {r.hop_bytes:,.0f}")]
    rows += [(label, metric_text(a.partition[k])) for k, label in ANSWER_PARTITION
             if k in a.partition]
    return rows + utilization_rows(r, a.machine.cores)


def _program(source):
    """The program's name for the report's heading: the file names of ``source``."""
    return " ".join(os.path.basename(s) for s in str(source).split()) or str(source)


def _rows_table(rows, cls=None):
    """A table of labelled rows (label, text), escaped here, in a scrolling wrapper."""
    body = "\n".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                     for k, v in rows)
    attr = f" class='{cls}'" if cls else ""
    return f"<div class='wrap'><table{attr}>{body}</table></div>"


def _folded(title, body, ident=None):
    """``body`` in a ``<details>`` block, folded, headed by ``title`` (escaped here)."""
    attr = f" id='{ident}'" if ident else ""
    return f"<details{attr}><summary>{html.escape(title)}</summary>\n{body}\n</details>"


#: The report's styles: one column up to 960 px, tables that scroll in their wrapper
#: rather than widen the page (a phone is ~390 px wide), figures scaled to the width;
#: on a phone each row of the answer is its label over its value.
STYLE = """body{font-family:sans-serif;max-width:960px;margin:1em auto;padding:0 12px;
line-height:1.4;overflow-wrap:break-word}h1{font-size:1.45em;margin:0.3em 0}
h2{font-size:1.25em;margin-top:1.4em}h3{font-size:1.05em}.run{color:#555;margin-top:0;
overflow-wrap:anywhere}.wrap{overflow-x:auto;max-width:100%;margin:0.4em 0}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
vertical-align:top}#answer th{font-weight:normal}#answer td{font-weight:bold}
#answer td small{font-weight:normal}img{max-width:100%;height:auto}code{overflow-wrap:anywhere}
.insight td,.insight th,details td,details th{font-size:13px}
.insight td,details td{overflow-wrap:anywhere}td.n,.insight span{white-space:nowrap}
small{color:#777}.row{display:flex;gap:1.5em;align-items:flex-start;flex-wrap:wrap}
.row>.wrap{min-width:0}details{margin:0.6em 0;border:1px solid #ddd;border-radius:4px;
padding:0.3em 0.7em}summary{cursor:pointer;font-weight:bold;padding:0.2em 0}
@media (max-width:560px){body{padding:0 8px}#answer tr{display:block;padding:4px 0;
border-bottom:1px solid #ddd}#answer th,#answer td{display:block;border:0;padding:0}
#answer th{color:#555;font-size:0.9em}#answer table{width:100%}}"""


def control_rows(control):
    """The models table of an analysis's ``control`` record (`vcut.pipeline.analyze`'s
    ``summary["control"]``): a header and one row of strings per model."""
    head = ("model", "critical path (cycles)", "parallelism", "speed-up bound at p",
            "simulated speed-up at p", "control edges")
    rows = []
    for r in control["models"]:
        sim = f"{r['speedup']:.2f}" if "speedup" in r else "-"
        mark = " (headline)" if r["model"] == control["model"] else ""
        rows.append((r["model"] + mark, f"{r['critical_path']:,.0f}", f"{r['parallelism']:,.2f}",
                     f"{r['bound_speedup']:.2f}", sim, f"{r['control_edges']:,}"))
    return head, rows


def _others_simulated(control):
    """Whether the models other than the headline were simulated (``--control-models``)."""
    return any("speedup" in r for r in control["models"] if r["model"] != control["model"])


def control_lines(control):
    """`control_rows` as text lines, after the sentence naming the headline model."""
    head, rows = control_rows(control)
    tail = "" if _others_simulated(control) \
        else " Simulated speed-ups of the other models: --control-models."
    return [control["sentence"] + tail,
            f"branches executed {control['branches']:,}, mispredicted by the two-bit "
            f"predictor {control['mispredicted']:,}", *_aligned(head, rows)]


def _control_html(control):
    if not control:
        return ""
    head, rows = control_rows(control)
    esc = html.escape
    note = ("Parallelism is the data work over the critical path; the speed-up bound at p "
            "is the work over max(critical path, work / p). Each simulated speed-up is the "
            "data work on one core over that model's simulated makespan"
            + ("" if _others_simulated(control)
               else " (the other models': <code>--control-models</code>)") + ".")
    return ("<section id='control'>\n<h2>Control flow: the Lam-Wilson models</h2>\n"
            f"<p>{esc(control['sentence'])} Branches executed: {control['branches']:,}; "
            f"mispredicted by a two-bit predictor per branch: {control['mispredicted']:,}.</p>\n"
            f"{_table(head, [tuple(esc(c) for c in r) for r in rows], (1, 2, 3, 4, 5))}\n"
            f"<p>{note}</p>\n</section>")


def analysis_html(a, graph, source, methods=None, insight=None, degrees_png=None,
                  control=None):
    """The text of ``report.html`` for an `Analysis` of ``graph``.

    The page leads with what a reader needs: a heading naming the program, p and the
    machine, the answer (`answer_rows`: the execution time, the speed-up, the lower
    bound, the communication, the balance) and "Reading the analysis"; then the
    figures and the critical path on the source; last, folded in ``<details>``
    blocks, the clusters one by one, the mappings' table, the other figures of the
    simulation, the partitioner's settings (replica price, the prices tried, ...)
    and the time of each phase.

    ``methods``: optional rows of `compare_methods` at the analysis' p, shown
    as the partitioning-method comparison. ``insight``: the analysis'
    `mapping.insight.Insight` (made here when not given). ``degrees_png``: the degree
    figure drawn already (`degree_png`), else it is drawn here. ``control``: the
    analysis's control-model record (``summary["control"]``), shown after the reading
    as the models table (`control_rows`).
    """

    insight = make_insight(a, graph) if insight is None else insight
    parts = insight_html(a, insight)
    r, m = a.result, a.machine
    figs = [("Mesh traffic and utilisation", _mesh_figure(a)), ("Cluster loads", _loads_figure(a))]
    if a.mappers:
        figs.append(("Mapping comparison", _mappers_figure(a)))
    if methods:
        names = [x["method"] for x in methods]
        figs.append(("Partitioning-method comparison",
                     compare_figure(methods, names, f"{names[0]} = 1, p = {a.p}")))
    figs.append(("Degree distribution",
                 degree_png(graph) if degrees_png is None else degrees_png))
    images = "\n".join(
        f"<h3>{html.escape(title)}</h3><img alt='{html.escape(title)}' "
        f"src='data:image/png;base64,{base64.b64encode(_png(fig)).decode()}'>"
        for title, fig in figs)
    esc = html.escape
    machine = (f"{m.name}: {m.cores} cores, {m.mesh_rows} x {m.mesh_cols} mesh, "
               f"{m.numa_nodes} NUMA nodes")
    run = (f"vcut analysis of <code>{esc(str(source))}</code> ({graph.n:,} nodes, "
           f"{graph.m:,} edges): partitioning {esc(a.method)}, p = {a.p}; mapping "
           f"{esc(a.placement.method)}; machine {esc(machine)}.")
    shown = {k for k, _ in ANSWER_PARTITION}
    folded = [parts.clusters]
    if a.mappers:
        folded.append(_folded("Mappings compared: the table", _mappers_table(a.mappers),
                              "mappings"))
    folded.append(_folded("Simulation: the other figures", _rows_table(
        [("without dependency waits", f"{a.independent_time:,.0f} cycles"),
         ("remote-memory tasks", f"{r.remote_memory_tasks:,}")]), "simulation"))
    rest = [(k.replace("_", " "), metric_text(v)) for k, v in a.partition.items()
            if k not in shown]
    if rest:
        folded.append(_folded(f"Partitioner ({a.method}): its settings and figures",
                              _rows_table(rest), "partitioner"))
    if a.phases:
        folded.append(_folded("Time of each phase", _rows_table(
            [(k, f"{v:.2f} s") for k, v in a.phases.items()]), "phases"))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vcut analysis: {esc(str(source))}, p = {a.p} on {esc(m.name)}</title>
<style>{STYLE}</style></head><body>
<h1>{esc(_program(source))}: p = {a.p} on {esc(m.name)}</h1>
<p class="run">{run}</p>
<section id="answer">
<h2>The answer</h2>
{_rows_table(answer_rows(a), "answer")}
</section>
{parts.reading}
{_control_html(control)}
<section id="figures">
<h2>Figures</h2>
{parts.timeline}
{images}
</section>
{parts.source}
<section id="internals">
<h2>Details (folded)</h2>
{chr(10).join(x for x in folded if x)}
</section>
</body></html>
"""


def _mappers_table(mappers):
    head = ("mapping", "makespan", "hop-bytes", "cores in use", "utilisation of the cores in use",
            "utilisation of all cores")
    rows = [(html.escape(x["mapping"]), f"{x['makespan']:,.0f}", f"{x['hop_bytes']:,.0f}",
             str(x["cores_used"]), f"{x['utilization_used_cores']:.3f}",
             f"{x['utilization_all_cores']:.3f}") for x in mappers]
    return _table(head, rows, (1, 2, 3, 4, 5))


def compare_tables(rows, methods):
    """Tables 6-9 layout: per p, makespan and communication relative to the first method.

    Returns a list of text lines.
    """
    lines = []
    for key, what in (("makespan", "execution time (cycles), relative to"),
                      ("independent_time", "execution time without dependency waits (cycles), "
                                           "relative to"),
                      ("communication_bytes", "data communication (bytes), relative to")):
        for p in sorted({r["p"] for r in rows}):
            sel = {r["method"]: r for r in rows if r["p"] == p}
            base = sel[methods[0]][key]
            lines.append(f"{what} {methods[0]}, p = {p}")
            lines.append("  ".join(f"{m:>10}" for m in methods))
            lines.append("  ".join(f"{sel[m][key]:>10.4g}" for m in methods))
            lines.append("  ".join(f"{100 * sel[m][key] / base if base else float('nan'):>9.0f}%"
                                   for m in methods))
            lines.append("")
    return lines


def control_compare_lines(models, rows, methods):
    """``vcut compare --control``'s table: per model its critical path, parallelism and
    the simulated speed-up of each method at each p. Returns text lines."""
    ps = sorted({r["p"] for r in rows})
    cols = [(p, m) for p in ps for m in methods]
    head = ["model", "critical path", "parallelism",
            *(f"{m} p={p}" for p, m in cols)]
    got = {(r["control"], r["p"], r["method"]): r for r in rows}
    body = [[x["model"], f"{x['critical_path']:,.0f}", f"{x['parallelism']:,.2f}",
             *(f"{got[(x['model'], p, m)]['speedup']:.2f}" for p, m in cols)]
            for x in models]
    return ["parallelism (work / critical path) and simulated speed-up (work / makespan) "
            "under each control model", *_aligned(head, body)]


def control_figure(models, rows, methods, title):
    """Bars of the simulated speed-up of each control model, one group per model and a bar
    per (p, method), with each model's parallelism marked."""
    plt = plotting()
    ps = sorted({r["p"] for r in rows})
    cols = [(p, m) for p in ps for m in methods]
    got = {(r["control"], r["p"], r["method"]): r["speedup"] for r in rows}
    fig, ax = plt.subplots(figsize=(10.0, 3.8), dpi=110)
    width = 0.8 / len(cols)
    x = np.arange(len(models))
    for i, (p, m) in enumerate(cols):
        ax.bar(x + i * width, [got[(mo["model"], p, m)] for mo in models], width=width,
               label=f"{m}, p = {p}")
    ax.scatter(x + 0.4 - width / 2, [mo["parallelism"] for mo in models], color="black",
               marker="_", s=400, label="parallelism (work / critical path)", zorder=3)
    ax.set_yscale("log")
    ax.set_xticks(x + 0.4 - width / 2)
    ax.set_xticklabels([mo["model"] for mo in models])
    ax.set_ylabel("speed-up over one core")
    ax.legend(fontsize=7)
    fig.suptitle(title)
    return fig


def compare_figure(rows, methods, title):
    """Bars of makespan and communication relative to the first method, per p."""
    plt = plotting()
    ps = sorted({r["p"] for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 3.8), dpi=110)
    width = 0.8 / len(ps)
    for ax, key, label in ((axes[0], "makespan", "execution time"),
                           (axes[1], "communication_bytes", "data communication")):
        for i, p in enumerate(ps):
            sel = {r["method"]: r for r in rows if r["p"] == p}
            base = sel[methods[0]][key] or 1.0
            ax.bar(np.arange(len(methods)) + i * width, [sel[m][key] / base for m in methods],
                   width=width, label=f"p = {p}")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xticks(np.arange(len(methods)) + 0.4 - width / 2)
        ax.set_xticklabels(methods, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(f"{label} / {methods[0]}")
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


#: Figures shown as ratios (four decimals) in the windows tables; the others are counts,
#: bytes or cycles, except ``makespan_seconds`` (shown in s, ms, us or ns).
_RATIOS = ("replication_factor", "work_imbalance", "speedup", "utilization_used_cores",
           "utilization_all_cores")

#: Columns of the per-window table (when the analysis has them), besides its position.
_WINDOW_COLUMNS = ("replication_factor", "cut_edges", "work_imbalance", "communication_bytes",
                   "makespan", "makespan_seconds", "speedup")


def _figure_text(key, v):
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    if key == "makespan_seconds":
        for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
            if v >= scale:
                return f"{v / scale:.4g} {unit}"
        return f"{v / 1e-9:.4g} ns"
    if key in _RATIOS:
        return f"{v:.4f}"
    return f"{v:,.0f}"


def _aligned(header, rows):
    """Text lines of a table: the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(r[k])) for r in [header] + rows) for k in range(len(header))]
    return ["  ".join(str(c).ljust(w) if k == 0 else str(c).rjust(w)
                      for k, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in [header] + rows]


def windows_tables(sample):
    """The tables ``vcut analyze --windows`` prints for a `vcut.pipeline.windows.WindowSample`:
    each window's main figures, then every figure's min, median, max and coefficient of
    variation over the windows. Returns a list of text lines."""
    cols = [k for k in _WINDOW_COLUMNS if k in sample.figures]
    header = ["window", "nodes", "edges", "edges in / out"] + [k.replace("_", " ") for k in cols]
    if sample.unit == "roi":
        header.insert(1, "activations")
    rows = []
    for r in sample.rows:
        row = [str(r["index"]), f"{r['start']:,}..{r['end'] - 1:,}", f"{r['edges']:,}",
               f"{r['edges_in']:,} / {r['edges_out']:,}"] + [_figure_text(k, r[k]) for k in cols]
        if sample.unit == "roi":
            last = r["roi_stop"] - 1
            row.insert(1, str(last) if last == r["roi_first"] else f"{r['roi_first']}..{last}")
        rows.append(row)
    lines = _aligned(header, rows)
    lines.append("")
    stats = [[k.replace("_", " ")] + [_figure_text(k, st[q]) for q in ("min", "median", "max")]
             + ["-" if st["cv"] is None else f"{st['cv']:.4f}"]
             for k, st in sample.statistics.items()]
    lines += _aligned(["figure", "min", "median", "max", "cv"], stats)
    return lines


#: Clusters listed in the report's cluster table (all are in mapping.json).
REPORT_CLUSTERS = 64
#: Cores labelled one by one on the timeline (more: the axis is numbered).
LABELLED_CORES = 32


def timeline_figure(a, ins):
    """The cores' timeline: the busy share of every core holding clusters in each
    of `Insight.timeline` bins, with the lower bound marked."""
    plt = plotting()
    cores = ins.timeline["cores"]
    rows = max(len(cores), 1)
    height = min(1.6 + 0.22 * rows, 7.0)
    fig, ax = plt.subplots(figsize=(9.0, height), dpi=110)
    # fixed margins in inches (the core labels left, the title above, the axis below):
    # no layout engine measuring every label in a draw of its own
    fig.subplots_adjust(left=0.8 / 9.0, right=0.99, bottom=0.5 / height,
                        top=1.0 - 0.35 / height)
    end = a.result.makespan if a.result.makespan > 0 else 1.0
    im = ax.imshow(ins.occupancy, aspect="auto", interpolation="nearest", cmap="Blues",
                   vmin=0.0, vmax=1.0, extent=(0.0, end, rows - 0.5, -0.5))
    ax.axvline(a.bound.lower_bound, color="#cc3311", lw=1.2, ls="--")
    if rows <= LABELLED_CORES:
        ax.set_yticks(range(len(cores)))
        ax.set_yticklabels([f"core {k}" for k in cores], fontsize=7)
        ax.set_ylabel("core")
    else:
        ax.set_ylabel(f"the {rows} cores holding clusters (row order)")
    ax.set_xlabel("time (cycles)")
    ax.set_title(f"busy share per core, {ins.timeline['bins']} bins of "
                 f"{ins.timeline['bin_cycles']:,.0f} cycles (idle "
                 f"{100 * ins.timeline['idle_share']:.0f}%); dashed: the lower bound "
                 f"{a.bound.lower_bound:,.0f}", fontsize=10)
    fig.colorbar(im, ax=ax, label="busy share", shrink=0.9)
    return fig


class InsightHtml(NamedTuple):
    """The report's pieces on what the analysis means for the program (HTML fragments)."""

    reading: str  #: "Reading the analysis": the paragraph (and the note when there is one)
    timeline: str  #: the cores' timeline (heading and image)
    source: str  #: the critical path on the source, its hand-overs, the shared objects
    clusters: str  #: each cluster's lines, objects and partners, folded in ``<details>``


def insight_html(a, ins):
    """The report's pieces on what the analysis means for the program (`mapping.insight`),
    an `InsightHtml`."""

    esc = html.escape
    note = f"<p><em>{esc(ins.note)}</em></p>" if ins.note else ""
    cp = ins.critical_path
    gantt = base64.b64encode(figure_png(timeline_figure(a, ins))).decode()

    def on_path(ranked, label):
        return [(label(r), f"{r['cycles']:,.0f}", f"{100 * r['share']:.1f}%") for r in ranked]

    def named(r):
        return f"<code>{esc(r['name'])}</code>"

    path_rows = on_path(cp["lines"], named)
    path_fns = on_path(cp["functions"], named)
    path_cl = on_path(cp["clusters"], lambda r: str(r["cluster"]))
    hand = [(f"{h['clusters'][0]} &harr; {h['clusters'][1]}", f"{h['count']:,}",
             esc(h["object"] or "-"), esc(h["line"] or "-")) for h in cp["handoffs"]]
    shared = [(_object(o), f"{o['bytes']:,.0f}", f"{o['tasks']:,}",
               esc(_ids(o["clusters"]))) for o in ins.shared_objects]
    clusters = sorted(ins.clusters, key=lambda c: -c["work_cycles"])[:REPORT_CLUSTERS]
    rows = [(str(c["id"]), str(c["core"]), f"{c['work_cycles']:,.0f}",
             _items(c["lines"]), _items(c["functions"]),
             "<br>".join(f"{_object(o)} {o['bytes']:,.0f} B, {o['tasks']:,} "
                         f"tasks" + (f"; also {_others(o)}" if o["shared_with"] else "")
                         for o in c["objects"]),
             "<br>".join(f"{m['cluster']}: {m['bytes']:,.0f} B" for m in c["partners"]))
            for c in clusters]
    more = "" if len(ins.clusters) <= REPORT_CLUSTERS else \
        f"<p>The {REPORT_CLUSTERS} clusters with the most work; all {len(ins.clusters)} are " \
        "in mapping.json (<code>insights.clusters</code>).</p>"
    reading = f"""<section class="insight" id="insight">
<h2>Reading the analysis</h2>
<p id="reading">{_code(ins.reading)}</p>
{note}
</section>"""
    timeline = f"""<h3>Core timeline</h3>
<img id="timeline" alt="core timeline" src="data:image/png;base64,{gantt}">"""
    source = f"""<section class="insight" id="source">
<h2>Critical path on the source</h2>
<p>The longest dependency chain: {cp['cycles']:,.0f} cycles over {cp['tasks']:,} tasks,
{100 * cp['share_of_makespan']:.1f}% of the makespan.</p>
<div class="row">
{_table(("line", "cycles", "share"), path_rows)}
{_table(("function", "cycles", "share"), path_fns)}
{_table(("cluster", "cycles on the path", "share"), path_cl)}
</div>
{_table(("clusters handing over", "times", "object", "line"), hand, (0, 1))}
<h3>Objects shared by the most clusters</h3>
{_table(("object", "bytes", "memory tasks", "clusters"), shared)}
</section>"""
    table = _table(("cluster", "core", "work", "lines (share of its work)", "functions",
                    "objects (other clusters touching them)", "partners (bytes both ways)"),
                   rows, (0, 1, 2))
    folded = f"""<details class="insight" id="clusters"><summary>Clusters: the lines, objects and
partners of each ({min(len(ins.clusters), REPORT_CLUSTERS)} of {len(ins.clusters)})</summary>
{more}
{table}
</details>""" if table else ""
    return InsightHtml(reading, timeline, source, folded)


def _items(ranked):
    return "<br>".join(f"<span><code>{html.escape(r['name'])}</code> {100 * r['share']:.0f}%"
                       "</span>" for r in ranked) or "-"


def _others(o):
    """The other clusters touching object entry ``o``: those listed, and how many in all."""
    ids = ", ".join(str(c) for c in o["shared_with"])
    more = o["clusters"] - 1 - len(o["shared_with"])
    return f"{ids}, ... ({o['clusters'] - 1} others)" if more > 0 else ids


def _object(o):
    """An object's name and id (several dynamic objects share one allocation site)."""
    return f"<code>{html.escape(o['name'])}</code> <small>#{o['id']}</small>"


def _code(text):
    """``text`` escaped, its `quoted` names as code."""

    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _table(header, rows, numeric=(1, 2)):
    """An HTML table; its cells are HTML already (escaped by the caller); the
    ``numeric`` columns do not wrap."""
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if k in numeric else f"<td>{c}</td>"
                                    for k, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<div class='wrap'><table><tr>{head}</tr>{body}</table></div>"


def metric_text(v):
    """A partition metric for the summary and the report: a float to 4 decimals, a list of
    ``[setting, cycles]`` pairs (``par``'s prices and priorities tried) as
    ``setting: cycles`` in braces, a list of ``[setting, cycles, messages]``
    (the shares of the replica refinement tried) as ``setting: cycles, messages``."""
    if isinstance(v, float):
        return f"{v:.4f}"
    if isinstance(v, list) and all(isinstance(x, list) and len(x) == 2 for x in v):
        return "{" + ", ".join(f"{a:g}: {b:,.0f} cycles" for a, b in v) + "}"
    if isinstance(v, list) and all(isinstance(x, list) and len(x) == 3 for x in v):
        return "{" + "; ".join(f"{a:g}: {b:,.0f} cycles, {c:,} messages" for a, b, c in v) + "}"
    return str(v)
