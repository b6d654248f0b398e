"""REFERENCE_RESULTS.md of the datasets folder, read for the benchmarks."""

import os
import re


def read_reference(datasets):
    """{graph: {partitioner row name: [(rf, balance, seconds) or None] * 3}}
    (k = 8, 32, 128; None where the file has '—')."""
    text = open(os.path.join(datasets, "REFERENCE_RESULTS.md")).read()
    out = {}
    for sec in re.split(r"\n## ", text)[1:]:
        name = sec.split(" (")[0].strip()
        rows = {}
        for line in sec.splitlines():
            if line.startswith("| ") and "/" in line:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                rows[cells[0]] = [tuple(float(x) for x in c.split("/")) if c[0].isdigit() else None
                                  for c in cells[1:4]]
        out[name] = rows
    return out


def row(rows, prefix):
    """The row named ``prefix``, else the first whose name starts with it (None if none)."""
    if prefix in rows:
        return rows[prefix]
    return next((v for k, v in rows.items() if k.startswith(prefix)), None)


def reference_cells(rows):
    """{k: {"ref_mtk": [rf, balance, seconds] or None, "ref_ne": ...}} for k = 8, 32, 128
    (the file has no other k):
    the reference file's Mt-KaHyPar and NE results of one graph (`read_reference`'s rows)."""
    out = {k: {} for k in (8, 32, 128)}
    for key, prefix in (("ref_mtk", "hypergraph"), ("ref_ne", "NE")):
        for k, got in zip((8, 32, 128), row(rows, prefix) or [None] * 3):
            out[k][key] = list(got) if got else None
    return out


def graph_file(datasets, name):
    """The dataset file of graph ``name`` (its name before the first dot), or None."""
    for f in sorted(os.listdir(datasets)):
        if f.endswith(".gz") and f.split(".")[0] == name:
            return os.path.join(datasets, f)
    return None


#: Mt-KaHyPar on the large graphs that REFERENCE_RESULTS.md lacks (`bench/mtkahypar_large.py`).
LARGE_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_large.json")


def read_large_reference(path=LARGE_REFERENCE):
    """{graph: {k: cell}} of `bench/mtkahypar_large.py`'s file: each cell a dict with
    ``status`` ("ok", "over N s" or "failed ..."), and where ok ``rf``, ``balance`` and
    ``seconds``. Empty where the file is missing."""
    import json

    try:
        with open(path) as fh:
            cells = json.load(fh)["cells"]
    except FileNotFoundError:
        return {}
    return {g: {int(k): c for k, c in per.items()} for g, per in cells.items()}
