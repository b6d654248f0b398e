"""The README and docs/ as a reader meets them: the README's size, a reference without dates
or project history, links that lead somewhere, docs/benchmarks.md written by its script from
the saved results, and the API reference built by Sphinx with warnings as errors."""

import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys

import pytest

from tests.helpers import ROOT

#: The reference: README.md and docs/*.md. docs/benchmarks.md is the dated record of
#: measurements (written by bench/report.py), docs/notes/ the dated experiment records.
REFERENCE = ["README.md"] + sorted(
    f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs"))
    if name.endswith(".md") and name != "benchmarks.md")

_DATE = re.compile(r"\b20\d\d-[01]\d(?:-[0-3]\d)?\b|\b(?:January|February|March|April|May|June|"
                   r"July|August|September|October|November|December) 20\d\d\b")
_HISTORY = re.compile(r"\b(?:tried, not kept|(?:first|second|third|fourth|fifth|sixth|"
                      r"seventh|eighth|later) session|this session|last week|this week)\b",
                      re.IGNORECASE)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return fh.read()


def bench_report():
    spec = importlib.util.spec_from_file_location(
        "bench_report", os.path.join(ROOT, "bench", "report.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def slug(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to
    hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """The anchors of a Markdown text's headings (``#`` lines outside code blocks), with
    GitHub's ``-1``, ``-2`` suffixes for repeated ones."""
    found, seen, fenced = set(), {}, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match and not fenced:
            base = slug(match.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def test_slug_as_github_writes_it():
    assert slug("Many graphs and cluster counts in one process") == \
        "many-graphs-and-cluster-counts-in-one-process"
    assert slug("`vcut partition`: the algorithms") == "vcut-partition-the-algorithms"
    assert slug("Jet refinement (`--refiner jet`)") == "jet-refinement---refiner-jet"
    assert anchors("# A\n## B c\n```\n# not a heading\n```\n## B c\n") == {"a", "b-c", "b-c-1"}


def test_readme_is_short():
    lines = read("README.md").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines (at most 250)"
    long = [i for i, line in enumerate(lines, 1) if len(line) > 400]
    assert not long, f"README.md lines over 400 characters: {long}"


@pytest.mark.parametrize("doc", REFERENCE)
def test_the_reference_holds_no_dates_or_history(doc):
    text = read(doc)
    found = [f"{doc}:{i}: {m.group(0)!r}" for i, line in enumerate(text.splitlines(), 1)
             for pattern in (_DATE, _HISTORY) for m in pattern.finditer(line)]
    assert not found, "dates or history in the reference (they belong in CHANGELOG.md or " \
        "docs/notes/):\n" + "\n".join(found)


def markdown_files():
    out = REFERENCE + ["docs/benchmarks.md", "CHANGELOG.md"]
    notes = os.path.join(ROOT, "docs", "notes")
    if os.path.isdir(notes):
        out += sorted(f"docs/notes/{n}" for n in os.listdir(notes) if n.endswith(".md"))
    return out


@pytest.mark.parametrize("doc", markdown_files())
def test_local_links_lead_somewhere(doc):
    text = read(doc)
    bad = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s):, mailto:
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
        if not os.path.exists(os.path.join(ROOT, resolved)):
            bad.append(f"{target}: no file {resolved}")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(read(resolved)):
            bad.append(f"{target}: no heading #{anchor} in {resolved}")
    assert not bad, f"{doc}: links that lead nowhere:\n" + "\n".join(bad)


def test_benchmarks_md_is_written_by_its_script():
    assert bench_report().main(["--check"]) == 0, \
        "docs/benchmarks.md differs from bench/results: run python bench/report.py"


def test_the_benchmark_report_of_a_made_up_result():
    report = bench_report()
    doc = {"benchmark": "bench/bench_cli.py", "command": "python bench/bench_cli.py --rows help",
           "argv": ["--rows", "help"], "date": "2026-01-02T03:04:05+00:00",
           "machine": {"cores": 2, "cores_usable": 2, "memory_bytes": 8 * 2**30, "cpu": "X",
                       "gpu": "none", "loadavg_before": [0.5], "loadavg_after": [0.7]},
           "git": {"commit": "0123456789abcdef", "dirty": False}, "kind": "whole command",
           "runs": "warm", "repeat": 3, "warmup": 1, "_file": "bench/results/x.json",
           "versions": {"python": "3.11.7", "numba": "0.68.1", "numpy": "2.4.6"},
           "rows": [{"name": "help", "command": "vcut --help",
                     "targets": {"first_s": 10.0, "warm_median_s": 0.25},
                     "first": None, "warm_summary": {"median_s": 0.11, "min_s": 0.1,
                                                     "max_s": 0.12},
                     "warm": [{"peak_rss_bytes": 33 * 2**20}] * 3,
                     "inprocess": {"median_s": 0.007}, "result": "pass", "error": None},
                    {"name": "big", "command": "vcut analyze big.npz -p 8",
                     "targets": {"first_s": None, "warm_median_s": 100.0},
                     "first": None, "warm_summary": {"median_s": 300.0, "min_s": 300.0,
                                                     "max_s": 300.0},
                     "warm": [{"peak_rss_bytes": 2**30}], "inprocess": {},
                     "result": "FAIL (warm)", "error": None}]}
    text = report.render([doc])
    assert "- command: `python bench/bench_cli.py --rows help`" in text
    assert "- machine: 2 cores (X), 8.0 GiB, GPU none; load average 0.5 before, 0.7 after" in text
    assert "- run: 2026-01-02 03:04:05 UTC, commit 0123456789" in text
    assert "- figures: whole command; warm" in text
    assert "| help | `vcut --help` | – | 0.11 s [0.10–0.12] (≤ 0.25) | 0.01 s | 33 MB | pass |" \
        in text
    # a row capped to fewer runs than the others says how many it ran
    assert "| big | `vcut analyze big.npz -p 8` | – | 300 s [300.00–300.00] ×1 (≤ 100) | – | " \
        "1,024 MB | FAIL (warm) |" in text
    assert "Warm: the median of 3 runs after 1 warm-up (×N: a row capped to N runs" in text
    assert text.index("## Whole commands") < text.index("## Not recorded here")


def public_objects():
    packages = ("frontend", "ir_graph", "runtime", "mapping", "vcut", "vcut.pipeline")
    for package in packages:
        module = importlib.import_module(package)
        page = "pipeline" if package == "vcut.pipeline" else package
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield page, f"{package}.{name}"


def test_the_api_reference_builds_with_warnings_as_errors(tmp_path):
    out = tmp_path / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", os.path.join(ROOT, "docs", "api"), str(out)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    missing = []
    for page, dotted in public_objects():
        html = (out / f"{page}.html").read_text(encoding="utf-8")
        if f'id="{dotted}"' not in html:
            missing.append(dotted)
    assert not missing, f"not in the API reference: {missing}"


def test_the_budget_table_of_a_made_up_result():
    report = bench_report()
    rows = [{"program": "m", "defines": ["N=1"], "nodes": 100, "edges": 150,
             "peak_rss_bytes": 2 * 2**20, "estimate_bytes": 3 * 2**20},
            {"program": "m", "defines": ["N=2"], "nodes": 200, "edges": 300,
             "peak_rss_bytes": 4 * 2**20, "estimate_bytes": 3 * 2**20}]
    lines = report.budget_section({"p": 8, "rows": rows})
    assert lines[2] == "| m | N=1 | 100 | 1.50 | 2 MB | 20972 | 3 MB | 1.50 |"
    assert lines[3] == "| m | N=2 | 200 | 1.50 | 4 MB | 20972 | 3 MB | 0.75 |"
    assert lines[5].startswith("- the estimate is at or above the measured peak in 1 of 2 runs")
    assert lines[6] == "- m: 20972 bytes per added instruction between its two sizes"


def test_the_budget_paragraph_quotes_the_constants_the_code_uses():
    # docs/mapping.md's Budget paragraph names each constant of mapping.budget with its
    # value: a constant changed without the paragraph fails here
    from mapping import budget

    with open(os.path.join(ROOT, "docs", "mapping.md"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    assert f"`BASE_BYTES` ({budget.BASE_BYTES >> 20} MiB)" in text
    for name in ("BYTES_PER_NODE", "GRAPH_BYTES_PER_NODE"):
        assert f"`{name}` ({getattr(budget, name)})" in text, name
    assert f"(`SPILL_BYTES_PER_NODE`, {budget.SPILL_BYTES_PER_NODE})" in text
    assert f"`SPILL_DISK_BYTES_PER_NODE`, {budget.SPILL_DISK_BYTES_PER_NODE} bytes" in text
    k = {b: f"{v // 1000} k" for b, v in budget.NODES_PER_SECOND.items()}
    assert f"`NODES_PER_SECOND` ({k[False]} without the baselines, {k[True]} with them)" in text
