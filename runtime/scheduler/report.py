"""Plots of schedules: per-round shares, per-device timelines, policies side by side.

`figure(results)` draws, for one or more `ScheduleResult`s of one job: the share
of each round each device ran (HASS: with the shares it was assigned, dashed),
each round's makespan per policy, and a Gantt chart of every device's calls
(colour: profiling, bundle, stolen sub-load, single sub-load). `write_report`
writes it as PNG, or as a self-contained HTML page with the figures' tables.
"""

import base64
import html
import io

from vcut_base.atomic import atomic_output

__all__ = ["figure", "write_report"]

COLOURS = {"profile": "#9e9e9e", "bundle": "#1f77b4", "steal": "#d62728", "unit": "#2ca02c",
           "call": "#ff7f0e"}


def figure(results):
    import matplotlib  # lazy: matplotlib is optional

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib is optional (after use("Agg"))

    results = list(results)
    n = len(results)
    fig = plt.figure(figsize=(11, 3.2 + 2.2 * n), constrained_layout=True)
    grid = fig.add_gridspec(1 + n, 2)
    ax = fig.add_subplot(grid[0, 0])
    first = next((r for r in results if r.policy == "hass"), results[0])
    names = [d["name"] for d in first.devices]
    for name in names:
        xs = [r["round"] for r in first.rounds]
        line, = ax.plot(xs, [r["executed"].get(name, 0.0) for r in first.rounds], marker="o",
                        label=f"{name} ran")
        if "assigned" in first.rounds[0]:
            ax.plot(xs, [r["assigned"].get(name, 0.0) for r in first.rounds], ls="--",
                    color=line.get_color(), alpha=0.6)
    ax.set_title(f"{first.policy}: share of each round (dashed: assigned)")
    ax.set_xlabel("round")
    ax.set_ylabel("share")
    ax.legend(fontsize=7)
    ax = fig.add_subplot(grid[0, 1])
    for r in results:
        ax.plot([x["round"] for x in r.rounds], [x["makespan"] for x in r.rounds], marker=".",
                label=f"{r.policy} (total {r.makespan:.4g} s)")
    ax.set_title("makespan of each round")
    ax.set_xlabel("round")
    ax.set_ylabel("seconds")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    for i, r in enumerate(results):
        ax = fig.add_subplot(grid[1 + i, :])
        rows = [d["name"] for d in r.devices]
        for s in r.spans:
            if s.what == "training":
                continue
            ax.broken_barh([(s.start, max(s.end - s.start, 1e-12))], (rows.index(s.device) - 0.4, 0.8),
                           color=COLOURS.get(s.what, "#555"), linewidth=0)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_xlim(0, r.makespan or 1)
        ax.set_title(f"{r.policy}: calls per device ({r.stolen} stolen)", fontsize=9)
        ax.set_xlabel("seconds" + (" (simulated)" if r.virtual else ""))
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    fig.legend(handles, ["profiling", "bundle", "stolen", "one sub-load", "Qilin part"],
               loc="outside lower center", ncol=5, fontsize=8)
    return fig


def _table(results):
    head = ["policy", "makespan (s)", "/ ideal", "last round (s)", "stolen", "final round",
            "faults"] + [f"{d['name']} share" for d in results[0].devices]
    rows = []
    for r in results:
        total = sum(r.units.values()) or 1
        rows.append([r.policy, f"{r.makespan:.6g}",
                     f"{r.makespan / r.ideal:.3f}" if r.ideal else "-",
                     f"{r.rounds[-1]['makespan']:.6g}", str(r.stolen),
                     "-" if r.final_round is None else str(r.final_round), str(len(r.faults))]
                    + [f"{r.units.get(d['name'], 0) / total:.3f}" for d in results[0].devices])
    cell = "".join
    return ("<table><tr>" + cell(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>" +
            cell("<tr>" + cell(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
            + "</table>")


def write_report(results, path):
    """Write the figure of ``results`` to ``path``: ``.png``, else HTML."""
    results = list(results)
    fig = figure(results)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    import matplotlib.pyplot as plt  # lazy: matplotlib is optional

    plt.close(fig)
    data = buf.getvalue()
    if str(path).lower().endswith(".png"):
        with atomic_output(path, "wb") as fh:
            fh.write(data)
        return
    job = results[0].job
    title = html.escape(f"vcut schedule: {job.get('kind')} over "
                        f"{', '.join(d['name'] for d in results[0].devices)}")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}</style></head><body>"
            f"<h1>{title}</h1><p>{html.escape(str(job))}</p>{_table(results)}"
            f"<p><img alt='schedule' style='max-width:100%' src='data:image/png;base64,"
            f"{base64.b64encode(data).decode()}'></p></body></html>")
    with atomic_output(path, "w") as fh:
        fh.write(page)
