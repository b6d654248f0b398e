"""`vcut graph` and `vcut stats`: outputs, JSON, and bad input."""

import json

import numpy as np
import pytest

from frontend import trace_program
from ir_graph import read_graph
from tests.helpers import last_error, run_cli

PROG = """
#include <stdio.h>
int main(void) { int s = 0; for (int i = 0; i < 50; i++) s += i; printf("%d\\n", s); return 0; }
"""


@pytest.mark.parametrize("suffix, fmt", [(".npz", "npz"), (".graph", "metis"),
                                         (".edgelist", "edgelist"), (".mtx", "mtx")])
def test_graph_from_c_writes_the_suffixes_format(capsys, cfile, tmp_path, suffix, fmt):
    src = cfile("p.c", PROG)
    out = tmp_path / f"g{suffix}"
    code, stdout, _ = run_cli(capsys, "graph", src, "-o", str(out), "--weights", "model", "--json")
    assert code == 0
    res = json.loads(stdout)
    for key in ("nodes", "edges", "total_weight", "alpha"):
        assert key in res
    assert res["format"] == fmt
    g = read_graph(out)
    assert g.n == res["nodes"]
    if fmt != "metis":  # METIS is undirected and simple, the rest keep every edge
        assert g.m == res["edges"]
        assert g.total_weight == pytest.approx(res["total_weight"])


def test_graph_from_trace_and_stats(capsys, cfile, tmp_path):
    src = cfile("p.c", PROG)
    trace = tmp_path / "t.npz"
    trace_program(src).save(trace)
    out = tmp_path / "g.npz"
    code, stdout, _ = run_cli(capsys, "graph", str(trace), "-o", str(out), "--json")
    assert code == 0
    built = json.loads(stdout)
    code, stdout, _ = run_cli(capsys, "stats", str(out), "--json", "--plot", str(tmp_path / "d.png"))
    assert code == 0
    s = json.loads(stdout)
    assert s["nodes"] == built["nodes"] and s["edges"] == built["edges"]
    assert s["critical_path_edges"] > 0 and s["directed"] is True
    assert (tmp_path / "d.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_inputs(capsys, cfile, tmp_path):
    # corrupt and truncated traces
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04 truncated")
    code, _, err = run_cli(capsys, "graph", str(junk), "-o", str(tmp_path / "g.npz"))
    assert code == 8 and "is not a readable vcut trace" in last_error(err)
    good = tmp_path / "t.npz"
    trace_program(cfile("p.c", PROG)).save(good)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    code, _, err = run_cli(capsys, "graph", str(cut), "-o", str(tmp_path / "g.npz"))
    assert code == 8 and "is not a readable vcut trace" in last_error(err)
    assert not (tmp_path / "g.npz").exists()
    # an empty trace: the region of interest never ran
    src = cfile("r.c", "int never(void) { return 1; }\nint main(void) { return 0; }\n")
    code, _, err = run_cli(capsys, "graph", src, "--roi", "never", "-o", str(tmp_path / "g.npz"))
    assert code == 2 and last_error(err).startswith("error: the trace has no executed instructions")
    # measured weights of a trace without timing (the default, model, works there)
    src = cfile("p2.c", PROG)
    code, _, err = run_cli(capsys, "graph", src, "--no-timing", "--weights", "measured",
                           "-o", str(tmp_path / "g.npz"))
    assert code == 2 and "use --weights model" in last_error(err)
    code, out, _ = run_cli(capsys, "graph", src, "--no-timing", "-o", str(tmp_path / "g.npz"))
    assert code == 0 and "\nweights        model\n" in out
    # graph files with bad ids / weights
    bad = tmp_path / "bad.graph"
    bad.write_text("2 1\n3\n1\n")
    code, _, err = run_cli(capsys, "stats", str(bad))
    assert code == 10 and last_error(err) == f"error: {bad}:2: neighbour 3 out of range 1..2"
    nan = tmp_path / "nan.edgelist"
    nan.write_text("0 1 nan\n")
    code, _, err = run_cli(capsys, "stats", str(nan))
    assert code == 10 and last_error(err) == f"error: {nan}:1: edge weight nan is not a finite number"
    # a trace is not a graph
    code, _, err = run_cli(capsys, "stats", str(good))
    assert code == 10 and "not a vcut graph (format 'vcut-trace')" in last_error(err)
    # unwritable output
    code, _, err = run_cli(capsys, "graph", str(good), "-o", str(tmp_path / "no" / "g.npz"))
    assert code == 9 and "does not exist" in last_error(err)
