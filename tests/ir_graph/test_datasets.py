"""The datasets manifest and `vcut datasets verify` on the graphs shipped in tests/data."""

import gzip
import hashlib
import json
import shutil

import pytest

from vcut_base.errors import InputError
from ir_graph import read_graph
from ir_graph.datasets import load_manifest, verify_datasets
from tests.helpers import DATA_DIR
from vcut.cli import main

SHIPPED = ["3elt.graph.gz", "ca-HepPh.txt.gz", "delaunay_n16.edges.gz", "luxembourg_osm.mtx.gz",
           "power.graph.gz", "rgg_n_2_15_s0.graph.gz", "wiki-Vote.txt.gz"]


def test_manifest_entries_and_the_shipped_graphs():
    entries = {e["file"]: e for e in load_manifest()}
    assert len(entries) == 49
    for name in SHIPPED:
        e = entries[name]
        with gzip.open(f"{DATA_DIR}/{name}", "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == e["sha256"]
    # the counts of the manifest are those of the files (METIS declares n and m)
    g = read_graph(f"{DATA_DIR}/power.graph.gz")
    assert (g.n, g.m) == (entries["power.graph.gz"]["vertices"],
                          entries["power.graph.gz"]["edges"]) == (4941, 6594)


def test_verify_reports_ok_missing_and_mismatch(tmp_path, capsys):
    shutil.copy(f"{DATA_DIR}/power.graph.gz", tmp_path / "power.graph.gz")
    with gzip.open(f"{DATA_DIR}/3elt.graph.gz", "rb") as fh:  # uncompressed copies count too
        (tmp_path / "3elt.graph").write_bytes(fh.read())
    with gzip.open(tmp_path / "add20.graph.gz", "wb") as fh:
        fh.write(b"2 1\n2\n1\n")
    checks = {c.file: c for c in verify_datasets(str(tmp_path))}
    assert checks["power.graph.gz"].status == "ok"
    assert checks["3elt.graph.gz"].status == "ok"
    assert checks["3elt.graph.gz"].path == str(tmp_path / "3elt.graph")
    assert checks["add20.graph.gz"].status == "mismatch"
    assert checks["wave.graph.gz"].status == "missing"
    code = main(["datasets", "verify", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    doc = json.loads(out.splitlines()[0])
    assert code == 2
    assert doc["counts"] == {"ok": 2, "missing": 46, "mismatch": 1, "unreadable": 0}
    assert err.strip() == (f"error: 1 file(s) in {tmp_path} do not match the manifest (add20.graph.gz); "
                           "get them again from the origin the manifest names")


def test_verify_the_shipped_copy_and_require_all(capsys):
    assert main(["datasets", "verify", DATA_DIR]) == 0
    out = capsys.readouterr().out
    assert out.endswith("7 ok, 42 missing, 0 mismatch, 0 unreadable\n")
    assert main(["datasets", "verify", DATA_DIR, "--require-all"]) == 2
    assert "42 dataset(s) of the manifest are not in" in capsys.readouterr().err


def test_bad_manifest_and_directory(tmp_path):
    bad = tmp_path / "m.toml"
    bad.write_text('[[dataset]]\nfile = "x.graph.gz"\n')
    with pytest.raises(InputError, match="has no str field 'format'"):
        load_manifest(str(bad))
    with pytest.raises(InputError, match="datasets directory not found"):
        verify_datasets(str(tmp_path / "nowhere"))
