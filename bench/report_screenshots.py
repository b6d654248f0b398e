"""Look at the analysis report as a person would: headless Chromium screenshots at 4x4, 8x8, 32x32.

For each mesh this analyses a sample program (``vcut analyze``, memory-centric
mapping, p = cores up to 64), writes ``report.html``, and takes with headless
Chromium (Debian's ``chromium``):

- ``report-RxC.png``: the page 1000 px wide, its first 2600 px;
- ``insight-RxC.png``: what the report says about the program alone
  ("Reading the analysis", the core timeline, the critical path on the source
  and the clusters' table unfolded), with the report's styles, at full size;
- ``phone-RxC.png`` and ``phone-page-RxC.png``: the page at a phone's width,
  390 px: its first screen (800 px) and its first 4000 px;
- ``desktop-RxC.png``: the first screen (800 px) at a desktop's width, 1366 px.

The phone and desktop pages are laid out in a frame of exactly that width (a
headless window is never narrower than 500 px: a 390 px screenshot of the page
itself would be a 500 px layout cut off on the right). It then checks what it
can without a person, and prints each failed check:

- at 390 and at 1366 px, measured in the laid-out page (``--dump-dom`` of the
  frame's page, its script reading the report's layout): the page, its folded
  blocks unfolded, is no wider than the viewport (wide tables scroll inside
  their wrappers), and the answer
  (``id="answer"``) begins, and its first row (the execution time) ends, in the
  first screen (800 px);
- the report has the viewport meta tag;
- the core timeline is in the report, has drawn pixels and a blank margin on
  every side (a label cut at the edge would touch it);
- each screenshot is not blank.

It prints a table of the reports and PNGs to open; the figures' labels are also
checked automatically by ``tests/mapping/test_report.py`` and the page's
structure by ``tests/mapping/test_insight.py``.

Exit status: 0 when every check passed, 1 when one failed; 0 with a "skipped"
message on stderr when no Chromium is installed (``apt-get install chromium``).

Usage: python bench/report_screenshots.py [--sample fft] [--out DIR] [--meshes 4x4,8x8]
"""

import argparse
import base64
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MESHES = ("4x4", "8x8", "32x32")


#: The widths (CSS px) the page is laid out at: a phone's and a desktop's.
WIDTHS = (("phone", 390), ("desktop", 1366))
#: The first screen: the answer must begin, and its first row end, within it.
FIRST_SCREEN = 800

#: Measures the report laid out in the frame ``page`` once everything is loaded (its
#: folded blocks unfolded): its viewport, the page's width, where the answer begins and
#: its first row ends, and the first elements that pass the viewport's right edge (the
#: outermost, outside a box that scrolls).
MEASURE = """<script>
window.addEventListener('load', function () {
  var out;
  try {
    var w = document.getElementById('page').contentWindow, d = w.document;
    d.querySelectorAll('details').forEach(function (e) { e.open = true; });
    var answer = d.getElementById('answer');
    var row = answer ? answer.querySelector('tr') : null;
    var wide = [];
    var past = function (e) { return e.getBoundingClientRect().right > w.innerWidth + 0.5; };
    var scrolls = function (e) {  // inside a box that scrolls or clips it
      for (var a = e.parentElement; a && a !== d.body; a = a.parentElement)
        if (w.getComputedStyle(a).overflowX !== 'visible') return true;
      return false;
    };
    d.body.querySelectorAll('*').forEach(function (e) {
      if (wide.length < 5 && past(e) && !past(e.parentElement) && !scrolls(e))
        wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' to ' +
                  Math.round(e.getBoundingClientRect().right) + ' px');
    });
    out = {viewport: w.innerWidth,
           page_width: Math.max(d.documentElement.scrollWidth, d.body.scrollWidth),
           answer_top: answer ? answer.getBoundingClientRect().top + w.scrollY : null,
           first_row_bottom: row ? row.getBoundingClientRect().bottom + w.scrollY : null,
           wide: wide};
  } catch (err) {
    out = {error: String(err)};
  }
  document.getElementById('layout').textContent = JSON.stringify(out);
});
</script>"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(browser, args, page, window):
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update",
                           "--hide-scrollbars", "--allow-file-access-from-files",
                           f"--window-size={window[0]},{window[1]}", *args,
                           "file://" + os.path.abspath(page)], check=True, capture_output=True,
                          timeout=120, text=True)


def screenshot(browser, page, png, height, width=1000):
    """Screenshot of ``page`` (a file path) into ``png``: ``width`` x ``height`` px."""
    _run(browser, [f"--screenshot={png}"], page, (width, height))


def frame_page(report, width, height, measure=False):
    """A page beside ``report`` that shows it in a frame ``width`` x ``height`` px at its top
    left (with ``measure``, and `MEASURE`'s script); returns its path."""
    name = os.path.basename(report)
    path = os.path.join(os.path.dirname(report), f"frame-{width}x{height}.html")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head>"
                 f"<body style='margin:0'><iframe id='page' src='{name}' style='display:block;"
                 f"border:0;width:{width}px;height:{height}px'></iframe><pre id='layout'></pre>"
                 f"{MEASURE if measure else ''}</body></html>\n")
    return path


def layout(browser, report, width):
    """`MEASURE`'s figures of ``report`` laid out ``width`` px wide (a dict; ``error`` when
    they could not be read)."""
    page = frame_page(report, width, FIRST_SCREEN, measure=True)
    dom = _run(browser, ["--dump-dom"], page, (max(width, 500), FIRST_SCREEN)).stdout
    m = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.DOTALL)
    if m is None or not m.group(1).strip():
        return {"error": "the layout was not measured (the frame's script did not run)"}
    return json.loads(html.unescape(m.group(1)))


def check_layout(fig, width):
    """Problems of the report laid out ``width`` px wide (`layout`'s ``fig``)."""
    if "error" in fig:
        return [f"at {width} px: {fig['error']}"]
    if fig["viewport"] != width:
        return [f"at {width} px: the frame's viewport is {fig['viewport']} px: not measured"]
    problems = []
    if fig["page_width"] > width:
        problems.append(f"at {width} px the page is {fig['page_width']} px wide: it scrolls "
                        f"sideways ({'; '.join(fig['wide']) or 'no single element'})")
    if fig["answer_top"] is None:
        problems.append(f"at {width} px: no answer (id=\"answer\") in the report")
    elif fig["answer_top"] >= FIRST_SCREEN or fig["first_row_bottom"] is None \
            or fig["first_row_bottom"] > FIRST_SCREEN:
        problems.append(f"at {width} px the answer begins at {fig['answer_top']:.0f} px and its "
                        f"first row ends at {fig['first_row_bottom'] or float('nan'):.0f} px: "
                        f"not in the first screen ({FIRST_SCREEN} px)")
    return problems


def section_page(report, out):
    """Write what the report says about the program alone, with the report's head (its
    styles), to ``out``: "Reading the analysis", the core timeline, the critical path on
    the source and the clusters' table (unfolded)."""
    text = open(report, encoding="utf-8").read()
    head = text[:text.index("<body>") + len("<body>")]
    parts = [re.search(pattern, text, re.DOTALL) for pattern in (
        r'<section class="insight" id="insight">.*?</section>',
        r'<h3>Core timeline</h3>\s*<img id="timeline"[^>]*>',
        r'<section class="insight" id="source">.*?</section>',
        r'<details class="insight" id="clusters">.*?</details>')]
    body = "\n".join(m.group(0) for m in parts if m is not None)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(head + body.replace("<details ", "<details open ") + "</body></html>\n")
    return text


def pixels(png_bytes):
    """The image as a float array (rows, cols, channels) in 0..1."""
    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(png_bytes), format="png")


def check_timeline(text):
    """Problems of the report's timeline image (an empty list when it looks right)."""
    m = re.search(r"<img id=\"timeline\"[^>]*src=\"data:image/png;base64,([^\"]+)\"", text)
    if m is None:
        return ["no timeline image in the report"]
    img = pixels(base64.b64decode(m.group(1)))[..., :3]
    ink = img.min(axis=2) < 0.9  # anything drawn darker than near-white
    problems = []
    if ink.mean() < 0.02:
        problems.append(f"the timeline is nearly blank ({100 * ink.mean():.1f}% drawn)")
    for side, edge in (("top", ink[0]), ("bottom", ink[-1]), ("left", ink[:, 0]),
                       ("right", ink[:, -1])):
        if edge.any():
            problems.append(f"the timeline's {side} edge is drawn on: a label may be cut")
    return problems


def check_screenshot(png):
    """Problems of a screenshot (an empty list when something is drawn on it)."""
    with open(png, "rb") as fh:
        img = pixels(fh.read())[..., :3]
    spread = float(np.ptp(img))
    return [] if spread > 0.5 else [f"{png} is blank"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", default="fft", help="sample program (default fft)")
    ap.add_argument("--out", default="report-screenshots", help="output directory")
    ap.add_argument("--meshes", default=",".join(MESHES),
                    help=f"meshes, comma-separated (default {','.join(MESHES)})")
    args = ap.parse_args()
    browser = chromium()
    if browser is None:
        print("skipped: no Chromium found (apt-get install chromium, Debian's package, then run "
              "again); nothing was checked", file=sys.stderr)
        sys.exit(0)
    os.makedirs(args.out, exist_ok=True)
    src = os.path.join(ROOT, "samples", f"{args.sample}.c")
    rows, problems, measured = [], [], []
    for mesh in args.meshes.split(","):
        r, c = map(int, mesh.split("x"))
        p = min(r * c, 64)
        outdir = os.path.join(args.out, mesh)
        subprocess.run([sys.executable, "-m", "vcut.cli", "analyze", src, "-p", str(p),
                        "--machine", f"mesh:{mesh}", "--no-baselines", "-o", outdir],
                       check=True, stdout=subprocess.DEVNULL)
        report = os.path.join(outdir, "report.html")
        png = os.path.abspath(os.path.join(args.out, f"report-{mesh}.png"))
        screenshot(browser, report, png, 2600)
        section = os.path.join(outdir, "insight.html")
        text = section_page(report, section)
        ins_png = os.path.abspath(os.path.join(args.out, f"insight-{mesh}.png"))
        screenshot(browser, section, ins_png, 3600)
        pngs = [png, ins_png]
        found = [] if re.search(r'<meta name="viewport" content="width=device-width', text) \
            else ["the report has no viewport meta tag"]
        for kind, width in WIDTHS:
            shots = [(kind, FIRST_SCREEN)] + ([("phone-page", 4000)] if kind == "phone" else [])
            for name, height in shots:
                shot = os.path.abspath(os.path.join(args.out, f"{name}-{mesh}.png"))
                screenshot(browser, frame_page(report, width, height), shot, height, width)
                pngs.append(shot)
            fig = layout(browser, report, width)
            measured.append((mesh, width, fig))
            found += check_layout(fig, width)
        found += check_timeline(text)
        for shot in pngs:
            found += check_screenshot(shot)
        problems += [f"{mesh}: {x}" for x in found]
        rows.append((mesh, p, report, pngs))
    print("| mesh | p | report | screenshots |")
    print("|---|---:|---|---|")
    for mesh, p, report, pngs in rows:
        print(f"| {mesh} | {p} | {report} | {'<br>'.join(pngs)} |")
    print()
    print("| mesh | width | viewport | page width | answer begins | its first row ends |")
    print("|---|---:|---:|---:|---:|---:|")
    for mesh, width, fig in measured:
        if "error" in fig:
            print(f"| {mesh} | {width} | {fig['error']} | | | |")
        else:
            top, bottom = (v if v is None else round(v)
                           for v in (fig["answer_top"], fig["first_row_bottom"]))
            print(f"| {mesh} | {width} | {fig['viewport']} | {fig['page_width']} | {top} | "
                  f"{bottom} |")
    for line in problems:
        print(f"check failed: {line}", file=sys.stderr)
    print("all checks passed" if not problems else f"{len(problems)} checks failed",
          file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
