"""The pipeline as a library (`vcut.pipeline`): what the Python API writes and returns is
what ``vcut analyze``, ``compare`` and ``analyze --windows`` write and print, and the
command line reads its options into the same `AnalysisOptions`."""

import json
import os

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph import write_graph
from ir_graph.graph import Graph
from tests.helpers import run_cli
from vcut.cli import build_parser
from vcut.cli._common import options_from_args
from vcut.cli.analyze import batch_options
from vcut.pipeline import (AnalysisOptions, TraceOptions, analyze, compare, run_job,
                           sample_windows)
from vcut.pipeline.batch import BatchJob


@pytest.fixture(scope="module")
def dag_file(tmp_path_factory):
    """A small random DAG (edges from lower to higher ids) as a vcut .npz graph file."""
    rng = np.random.default_rng(7)
    n, m = 400, 1600
    src = rng.integers(0, n - 1, m)
    dst = np.minimum(src + rng.integers(1, 40, m), n - 1)
    keep = dst > src
    g = Graph(n=n, src=src[keep], dst=dst[keep], weight=rng.random(int(keep.sum())) + 0.5)
    path = str(tmp_path_factory.mktemp("pipeline") / "dag.npz")
    write_graph(g, path)
    return path


def _without(doc, *keys):
    """``doc`` without the timing keys ``keys`` (at any depth)."""
    if isinstance(doc, dict):
        return {k: _without(v, *keys) for k, v in doc.items() if k not in keys}
    if isinstance(doc, list):
        return [_without(v, *keys) for v in doc]
    return doc


def _json(folder, name):
    with open(os.path.join(folder, name)) as fh:
        return json.load(fh)


def test_analyze_writes_what_the_command_writes(dag_file, tmp_path, capsys):
    api, cli = str(tmp_path / "api"), str(tmp_path / "cli")
    run = analyze([dag_file], AnalysisOptions(p=4, algo="wb-libra", output=api))
    code, out, _ = run_cli(capsys, "analyze", dag_file, "-p", 4, "--algo", "wb-libra",
                           "-o", cli, "--json")
    assert code == 0
    assert sorted(os.listdir(api)) == sorted(os.listdir(cli)) == ["mapping.json", "report.html"]
    assert run.files == [os.path.join(api, "mapping.json"), os.path.join(api, "report.html")]
    assert _without(_json(api, "mapping.json"), "phases") == \
        _without(_json(cli, "mapping.json"), "phases")
    printed = json.loads(out)
    assert _without(run.summary, "phases", "files") == _without(printed, "phases", "files")
    assert run.analysis.method == "wb-libra" and run.analysis.p == 4
    assert run.source == dag_file and run.methods is None


def test_compare_writes_what_the_command_writes(dag_file, tmp_path, capsys):
    api, cli = str(tmp_path / "api"), str(tmp_path / "cli")
    done = compare([dag_file], AnalysisOptions(ps=(2, 4), methods=("pg", "wb-libra"),
                                               mapping="memory-centric", output=api))
    code, out, _ = run_cli(capsys, "compare", dag_file, "-p", "2,4", "--methods", "pg,wb-libra",
                           "-o", cli, "--json")
    assert code == 0
    assert sorted(os.listdir(api)) == sorted(os.listdir(cli)) == ["compare.json", "compare.png"]
    assert _without(_json(api, "compare.json"), "seconds") == \
        _without(_json(cli, "compare.json"), "seconds")
    with open(os.path.join(api, "compare.png"), "rb") as a, \
            open(os.path.join(cli, "compare.png"), "rb") as b:
        assert a.read()[:8] == b.read()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _without(done.summary(), "seconds", "files") == \
        _without(json.loads(out), "seconds", "files")
    assert [(r["p"], r["method"]) for r in done.rows] == [
        (2, "pg"), (2, "wb-libra"), (4, "pg"), (4, "wb-libra")]


def test_sample_windows_writes_what_the_command_writes(dag_file, tmp_path, capsys):
    api, cli = str(tmp_path / "api"), str(tmp_path / "cli")
    done = sample_windows([dag_file], AnalysisOptions(p=2, algo="wb-libra", windows=2,
                                                      baselines=False, output=api))
    code, out, _ = run_cli(capsys, "analyze", dag_file, "-p", 2, "--algo", "wb-libra",
                           "--windows", 2, "--no-baselines", "-o", cli, "--json")
    assert code == 0
    timings = ("seconds", "phases", "files")
    assert _without(_json(api, "windows.json"), *timings) == \
        _without(_json(cli, "windows.json"), *timings)
    assert _without(done.summary, *timings) == _without(json.loads(out), *timings)
    assert done.sample.count == 2 and done.unit == "nodes"


def test_the_command_line_reads_one_options_object():
    argv = ["analyze", "a.c", "b.c", "-p", "16", "--algo", "hdrf", "--machine", "mesh:4x4",
            "--seed", "3", "--no-baselines", "-D", "N=8", "--roi", "kernel", "--no-sandbox",
            "--window", "roi:1"]
    args = build_parser().parse_args(argv)
    options = options_from_args(args, ["64"])
    assert options == AnalysisOptions(
        p=16, algo="hdrf", machine="mesh:4x4", seed=3, baselines=False, window="roi:1",
        methods=("compnet", "metis", "pg", "w-pg", "wb-pg", "libra", "w-libra", "wb-libra",
                 "par"),
        trace=TraceOptions(args=("64",), defines=("N=8",), roi=("kernel",), sandbox="none"))
    assert options.input_paths(["a.c", "b.c"]) == ["a.c", "b.c", "mesh:4x4"]


def test_an_analysis_refuses_compare_methods_without_an_output(dag_file):
    with pytest.raises(InputError, match="--compare-methods puts the comparison in the report"):
        analyze([dag_file], AnalysisOptions(p=2, compare_methods=True))


def test_a_batch_row_reads_its_command_line_and_keeps_a_refusal_in_the_row(dag_file):
    inputs, options = batch_options([dag_file, "-p", "2", "--algo", "pg", "--no-baselines"])
    assert inputs == [dag_file] and options.p == 2 and options.algo == "pg"
    assert not options.baselines
    with pytest.raises(InputError, match="drop --windows"):
        batch_options([dag_file, "-p", "2", "--windows", "2"])
    row = run_job(BatchJob("dag", (dag_file,), (), 2, ("--colour", "red")), batch_options)
    assert row["status"] == "error" and "unrecognized arguments: --colour red" in row["error"]
    row = run_job(BatchJob("dag", (dag_file,), (), 2, ("--algo", "pg", "--no-baselines")),
                  batch_options)
    assert row["status"] == "ok" and row["method"] == "pg"
