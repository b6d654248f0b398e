"""Numbers on the command line and strict JSON output (issue 11, section 4).

Out-of-range numbers are refused by the option parser with one ``error:``
line and exit 2, before any file is read: ``--seed -1`` was a numpy
traceback, ``--max-instructions 2^63`` wrapped to 0 in the runtime.
``--json`` prints strict JSON: NaN and infinities are ``null``.
"""

import json

import numpy as np
import pytest

from frontend import RunLimits
from vcut_base.errors import InputError
from vcut.cli import main
from vcut.pipeline.outputs import json_text

BIG = 2**63


@pytest.fixture
def graph(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("0 1\n1 2\n2 0\n")
    return str(p)


@pytest.mark.parametrize("argv, message", [
    (["partition", "{g}", "-p", "0"], "-p must be a positive integer (at most 2147483647), got 0"),
    (["partition", "{g}", "-p", "x"], "-p must be a positive integer (at most 2147483647), got 'x'"),
    (["partition", "{g}", "-p", "2", "--seed", "-1"], f"--seed must be an integer in 0..{BIG - 1}, got -1"),
    (["partition", "{g}", "-p", "2", "--seed", str(BIG)], f"--seed must be an integer in 0..{BIG - 1}, got {BIG}"),
    (["stats", "{g}", "--path-samples", "-3"], "--path-samples must be a positive integer (at most 2147483647), got -3"),
    (["stats", "{g}", "--seed", "-1"], f"--seed must be an integer in 0..{BIG - 1}, got -1"),
    (["trace", "x.c", "-o", "t.npz", "--max-instructions", str(BIG)],
     f"--max-instructions must be a positive integer (at most {BIG - 1}), got {BIG}"),
    (["trace", "x.c", "-o", "t.npz", "--max-instructions", "0"],
     f"--max-instructions must be a positive integer (at most {BIG - 1}), got 0"),
    (["trace", "x.c", "-o", "t.npz", "--timeout", "nan"], "--timeout must be a number in (0, 1e+09], got nan"),
    (["trace", "x.c", "-o", "t.npz", "--timeout", "0"], "--timeout must be a number in (0, 1e+09], got 0"),
    (["trace", "x.c", "-o", "t.npz", "--memory-limit", str(2**43)],
     f"--memory-limit must be a positive integer (at most {2**43 - 1}), got {2**43}"),
    (["analyze", "{g}", "-p", "2", "--threshold", "0"], "--threshold must be a positive integer (at most 2147483647), got 0"),
    (["analyze", "{g}", "-p", "2", "--seed", "-5"], f"--seed must be an integer in 0..{BIG - 1}, got -5"),
    (["compare", "{g}", "-p", "0,4"], "-p cluster counts must be in 1..2147483647, got 0"),
])
def test_out_of_range_numbers_exit_2(capsys, graph, argv, message):
    assert main([a.format(g=graph) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"error: {message}\n"


def test_run_limits_refuse_a_budget_past_int64():
    RunLimits(max_instructions=BIG - 1).validate()
    with pytest.raises(InputError) as exc:
        RunLimits(max_instructions=BIG).validate()
    assert str(exc.value) == f"max-instructions must be in 1..{BIG - 1}, got {BIG}"


def test_json_text_is_strict():
    doc = {"a": float("nan"), "b": [np.float64("inf"), np.int64(3), (1.5, -np.inf)],
           np.int64(4): np.array([1.0, np.nan])}
    assert json_text(doc) == '{"a": null, "b": [null, 3, [1.5, null]], "4": [1.0, null]}'


def strict(text):
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_stats_json_of_a_graph_without_a_power_law_is_strict(capsys, tmp_path):
    p = tmp_path / "one.txt"
    p.write_text("0 1\n")
    assert main(["stats", str(p), "--json"]) == 0
    res = strict(capsys.readouterr().out)
    # two nodes of degree 1: no tail to fit, no critical path of an undirected graph
    assert res["alpha"] is None and res["ks"] is None and res["critical_path_weight"] is None
    assert res["nodes"] == 2 and res["avg_path_length"] == 1.0


def test_every_json_command_is_strict(capsys, graph, tmp_path):
    for argv in (["partition", graph, "-p", "2", "--json"],
                 ["bfs", graph, "--source", "0", "--json"],
                 ["analyze", graph, "-p", "2", "--json", "--no-baselines"]):
        assert main(argv) == 0, argv
        strict(capsys.readouterr().out)
