"""vcut partition G1 G2 ... -p 8,32: every graph x every p in one process (issue 63)."""

import json
import os

import numpy as np
import pytest

from ir_graph import read_graph
from tests.helpers import run_cli
from vcut.partition import partition_graph
from vcut.pipeline.partitions import graph_name, partition_files, run_outputs
from vcut_base.errors import InputError, OutputError

SQUARE = "0 1\n1 2\n2 3\n3 0\n0 2\n"
STAR = "0 1\n0 2\n0 3\n0 4\n1 2\n3 4\n"


@pytest.fixture
def graphs(tmp_path):
    a, b = tmp_path / "square.txt", tmp_path / "star.edgelist"
    a.write_text(SQUARE)
    b.write_text(STAR)
    return str(a), str(b)


def _single(path, p):
    """The assignment one `vcut partition PATH -p P` writes: one id per line."""
    part = partition_graph(read_graph(path, directed=False), p, "hdrf")
    return [int(c) for c in part.assignment]


def test_every_graph_times_every_p_into_a_directory(capsys, graphs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, _ = run_cli(capsys, "partition", *graphs, "-p", "2,3", "--algo", "hdrf",
                              "-o", str(out))
    assert code == 0
    lines = stdout.strip().splitlines()
    assert lines[0].split()[:5] == ["graph", "p", "RF", "imbalance", "seconds"]
    rows = [line.split() for line in lines[1:]]
    assert [(r[0], r[1]) for r in rows] == [(graphs[0], "2"), (graphs[0], "3"),
                                           (graphs[1], "2"), (graphs[1], "3")]
    assert sorted(os.listdir(out)) == sorted(
        f"{g}.hdrf.p{p}.parts{x}" for g in ("square", "star") for p in (2, 3)
        for x in ("", ".replicas.npz"))
    for path, name in zip(graphs, ("square", "star")):
        for p in (2, 3):
            written = (out / f"{name}.hdrf.p{p}.parts").read_text().split()
            assert [int(c) for c in written] == _single(path, p)


def test_json_lines_one_per_run_with_a_pattern(capsys, graphs, tmp_path):
    pattern = str(tmp_path / "{graph}-{algo}-{p}.txt")
    code, stdout, _ = run_cli(capsys, "partition", *graphs, "-p", "3,2", "--algo", "hdrf",
                              "-o", pattern, "--json")
    assert code == 0
    docs = [json.loads(line) for line in stdout.strip().splitlines()]
    assert [(d["graph"], d["p"]) for d in docs] == [(graphs[0], 3), (graphs[0], 2),
                                                   (graphs[1], 3), (graphs[1], 2)]
    for d in docs:
        name = graph_name(d["graph"])
        assert d["files"] == [str(tmp_path / f"{name}-hdrf-{d['p']}.txt"),
                              str(tmp_path / f"{name}-hdrf-{d['p']}.txt.replicas.npz")]
        assert len(d["loads"]) == d["p"]
        assert sum(d["loads"]) == pytest.approx(5.0 if name == "square" else 6.0)


def test_one_graph_and_one_p_is_the_single_run_summary(capsys, graphs, tmp_path):
    code, stdout, _ = run_cli(capsys, "partition", graphs[0], "-p", "2", "--algo", "hdrf",
                              "--json")
    assert code == 0
    doc = json.loads(stdout)
    assert "graph" not in doc and doc["p"] == 2


@pytest.mark.parametrize("extra, message", [
    (["-o", "{out}/x.txt"], "error: -o {out}/x.txt: several graph files need {{graph}} in the "
                            "output pattern (or give an existing directory), so that each run "
                            "writes its own file"),
    (["-o", "{out}/{{graph}}-{{q}}.txt"], "error: -o {out}/{{graph}}-{{q}}.txt: unknown field "
                                         "{{q}}; use {{graph}}, {{p}} and {{algo}}, or an "
                                         "existing directory"),
    (["-o", "-"], "error: -o -: several runs write a file each; give an existing directory or "
                  "a pattern with {{graph}}, {{p}} and {{algo}}"),
    (["--workers", "2"], "error: --workers / --scheduler cuts one graph for one p; give one "
                         "GRAPH and one -p with it"),
    (["--algo", "multilevel"], "error: --algo multilevel cuts one graph for one p; give one "
                               "GRAPH and one -p with it"),
    (["--capacities", "1,2"], "error: capacities give the clusters of one cluster count; give "
                              "one -p with them"),
])
def test_bad_many_run_arguments_write_nothing(capsys, graphs, tmp_path, extra, message):
    out = tmp_path / "out"
    out.mkdir()
    extra = [e.format(out=out) if e.startswith("{out}") else e for e in extra]
    code, stdout, err = run_cli(capsys, "partition", *graphs, "-p", "2,3", *extra)
    assert code == 2
    assert err.strip().splitlines()[-1] == message.format(out=out)
    assert stdout == "" and os.listdir(out) == []


def test_a_missing_graph_is_named_before_any_run(capsys, graphs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    missing = str(tmp_path / "none.txt")
    code, stdout, err = run_cli(capsys, "partition", graphs[0], missing, "-p", "2,3",
                                "-o", str(out))
    assert (code, stdout, os.listdir(out)) == (2, "", [])
    assert err.strip().splitlines()[-1] == f"error: {missing}: no such graph file"


def test_a_graph_given_twice(capsys, graphs, tmp_path):
    code, _, err = run_cli(capsys, "partition", graphs[0], graphs[0], "-p", "2",
                           "-o", str(tmp_path))
    assert code == 2
    assert err.strip().splitlines()[-1] == f"error: {graphs[0]} is given twice; give each " \
                                           "graph file once"


def test_two_graphs_of_one_name_in_two_folders_collide(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "g.txt").write_text(SQUARE)
    paths = [str(tmp_path / "a" / "g.txt"), str(tmp_path / "b" / "g.txt")]
    with pytest.raises(OutputError, match=r"would both write .*/g\.hdrf\.p2\.parts"):
        run_outputs(paths, [2], "hdrf", str(tmp_path))


@pytest.mark.parametrize("text, values", [("8", [8]), ("8,32,128", [8, 32, 128]),
                                          (" 8 , 32 ", [8, 32]), ("32,8,32", [32, 8])])
def test_p_lists(text, values):
    from vcut.cli._common import int_list_option

    assert int_list_option("-p", 1, 1000)(text) == values


@pytest.mark.parametrize("text, message", [
    ("", "-p must be one or more integers separated by commas, got ''"),
    ("8,0", "-p must be a positive integer (at most 100), got 0"),
    ("8,x", "-p must be a positive integer (at most 100), got 'x'"),
    ("101", "-p must be a positive integer (at most 100), got 101")])
def test_bad_p_lists(text, message):
    from vcut.cli._common import int_list_option

    with pytest.raises(InputError) as exc:
        int_list_option("-p", 1, 100)(text)
    assert str(exc.value) == message


def test_the_api_checks_before_it_returns_and_reads_each_graph_once(graphs, tmp_path):
    reads = []

    def read(path):
        reads.append(path)
        return read_graph(path, directed=False)

    with pytest.raises(InputError, match="no such graph file"):
        partition_files([graphs[0], str(tmp_path / "none.txt")], [2], "hdrf", read=read)
    assert reads == []
    runs = partition_files(list(graphs), [2, 3], "hdrf", read=read)
    assert reads == []  # nothing read until the first run is asked for
    got = [(r.graph, r.p, r.partition.assignment.tolist(), r.files) for r in runs]
    assert reads == list(graphs)
    assert got == [(g, p, _single(g, p), []) for g in graphs for p in (2, 3)]


@pytest.mark.parametrize("path, name", [("data/email-Enron.txt.gz", "email-Enron"),
                                        ("x/ca-AstroPh-cc1.lg.gz", "ca-AstroPh-cc1"),
                                        ("g.graph", "g"), ("noext", "noext"),
                                        ("a.b.edges", "a.b")])
def test_graph_names(path, name):
    assert graph_name(path) == name
