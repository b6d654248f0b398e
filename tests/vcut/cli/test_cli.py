"""`vcut partition` end to end, on a shared dataset and an IR graph."""

import json

import numpy as np

from frontend import trace_program
from ir_graph import build_graph, read_graph, write_graph
from tests.helpers import dataset, run_cli
from vcut.output import read_partition


def test_partition_a_dataset_writes_both_files(capsys, tmp_path):
    path = dataset("power.graph.gz")
    out = tmp_path / "power.part"
    code, stdout, _ = run_cli(capsys, "partition", path, "-p", "8", "--algo", "wb-libra", "-o", str(out), "--json")
    assert code == 0
    res = json.loads(stdout)
    for key in ("replication_factor", "vertex_copies", "edge_weight_imbalance", "edge_imbalance", "seconds"):
        assert key in res
    g = read_graph(path)
    lines = out.read_text().split()
    assert len(lines) == g.m and {int(x) for x in lines} <= set(range(8))
    meta, arrays = read_partition(str(out) + ".replicas.npz")
    assert meta["metrics"]["replication_factor"] == res["replication_factor"]
    assert np.array_equal(arrays["assignment"], np.array(lines, dtype=np.int32))
    assert res["edge_weight_imbalance"] <= 1.002


def test_partition_an_ir_graph(capsys, cfile, tmp_path):
    src = cfile("p.c", "int main(void) { int s = 0; for (int i = 0; i < 200; i++) s += i * i; return s & 1; }\n")
    gpath = tmp_path / "g.npz"
    write_graph(build_graph(trace_program(src), weights="model"), gpath)
    code, stdout, _ = run_cli(capsys, "partition", str(gpath), "-p", "4", "--algo", "wb-pg", "--json")
    assert code == 0
    assert json.loads(stdout)["edge_weight_imbalance"] <= 1.002


def test_partition_bad_inputs(capsys, tmp_path):
    path = dataset("power.graph.gz")
    code, _, err = run_cli(capsys, "partition", path, "-p", "0")
    assert code == 2 and "positive integer" in err
    code, _, err = run_cli(capsys, "partition", path, "-p", "4", "--lambda", "0.9")
    assert code == 2 and "lambda must be at least 1" in err
    code, _, err = run_cli(capsys, "partition", path, "-p", "2", "--units", "1:0.3,1:0.3")
    assert code == 2 and "short by" in err
    code, _, err = run_cli(capsys, "partition", path, "-p", "10000000")
    assert code == 2 and "clusters but the graph has only" in err
    bad = tmp_path / "bad.edgelist"
    bad.write_text("0 1 -3\n")
    code, _, err = run_cli(capsys, "partition", str(bad), "-p", "1")
    assert code == 10 and "is negative" in err
