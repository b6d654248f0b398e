"""Look at the analysis report as a person would: headless Chromium screenshots at 4x4, 8x8, 32x32.

For each mesh this analyses a sample program (``vcut analyze``, memory-centric
mapping, p = cores up to 64), writes ``report.html``, and takes a full-page
screenshot with headless Chromium (Debian's ``chromium``; the script says so
and stops when it is not installed). It prints a table of the reports and
PNGs to open; the mesh figure's labels are also checked automatically by
``tests/mapping/test_report.py``.

Usage: python bench/report_screenshots.py [--sample fft] [--out DIR]
"""

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MESHES = ("4x4", "8x8", "32x32")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


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
    rows = []
    for mesh in MESHES:
        r, c = map(int, mesh.split("x"))
        p = min(r * c, 64)
        outdir = os.path.join(args.out, mesh)
        subprocess.run([sys.executable, "-m", "vcut.cli", "analyze", src, "-p", str(p),
                        "--machine", f"mesh:{mesh}", "--no-baselines", "-o", outdir],
                       check=True, stdout=subprocess.DEVNULL)
        png = os.path.abspath(os.path.join(args.out, f"report-{mesh}.png"))
        page = "file://" + os.path.abspath(os.path.join(outdir, "report.html"))
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        "--hide-scrollbars", f"--screenshot={png}", "--window-size=1000,2600",
                        page], check=True, capture_output=True, timeout=120)
        rows.append((mesh, p, os.path.join(outdir, "report.html"), png, os.path.getsize(png)))
    print("| mesh | p | report | screenshot | bytes |")
    print("|---|---:|---|---|---:|")
    for mesh, p, report, png, size in rows:
        print(f"| {mesh} | {p} | {report} | {png} | {size:,} |")


if __name__ == "__main__":
    main()
