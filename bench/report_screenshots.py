"""Look at the analysis report as a person would: headless Chromium screenshots at 4x4, 8x8, 32x32.

For each mesh this analyses a sample program (``vcut analyze``, memory-centric
mapping, p = cores up to 64), writes ``report.html``, and takes a full-page
screenshot with headless Chromium (Debian's ``chromium``; the script says so
and stops when it is not installed), and one of the report's "Reading the
analysis" section alone (``insight-RxC.png``: the section with the report's
styles, so its tables and timeline are seen at full size). It then checks
what it can without a person: the core timeline is in the report, has drawn
pixels and a blank margin on every side (a label cut at the edge would
touch it), and each screenshot is not blank; a failed check is printed and
the exit status is 1. It prints a table of the reports and PNGs to open;
the figures' labels are also checked automatically by
``tests/mapping/test_report.py``.

Usage: python bench/report_screenshots.py [--sample fft] [--out DIR]
"""

import argparse
import base64
import io
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MESHES = ("4x4", "8x8", "32x32")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(browser, page, png, height):
    """Full-width screenshot of ``page`` (a file path) into ``png``."""
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--hide-scrollbars", f"--screenshot={png}", f"--window-size=1000,{height}",
                    "file://" + os.path.abspath(page)], check=True, capture_output=True,
                   timeout=120)


def section_page(report, out):
    """Write the report's insight section alone, with the report's head (its styles), to ``out``."""
    text = open(report, encoding="utf-8").read()
    head = text[:text.index("<body>") + len("<body>")]
    section = re.search(r'<section class="insight".*?</section>', text, re.S).group(0)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(head + section + "</body></html>\n")
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
    args = ap.parse_args()
    browser = chromium()
    if browser is None:
        sys.exit("no Chromium found: apt-get install chromium (Debian's package), then run again")
    os.makedirs(args.out, exist_ok=True)
    src = os.path.join(ROOT, "samples", f"{args.sample}.c")
    rows, problems = [], []
    for mesh in MESHES:
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
        problems += [f"{mesh}: {x}" for x in check_timeline(text) + check_screenshot(png)
                     + check_screenshot(ins_png)]
        rows.append((mesh, p, report, png, ins_png))
    print("| mesh | p | report | screenshot | insight section |")
    print("|---|---:|---|---|---|")
    for mesh, p, report, png, ins_png in rows:
        print(f"| {mesh} | {p} | {report} | {png} | {ins_png} |")
    for line in problems:
        print(f"check failed: {line}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
