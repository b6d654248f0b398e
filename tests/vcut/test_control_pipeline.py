"""`vcut analyze`, `compare` and `graph` with the Lam-Wilson control models (issue 66).

Every figure is checked against a reference built here: strassen (N=2) compiled and
traced with `frontend` directly, its data graph from ``build_graph(trace,
control="oracle")``, each model's critical path from `ir_graph.control.critical_path` and
from a longest path computed here on `with_control`'s graph, the work as the sum of the
data edges' weights.
"""

import itertools
import json
import math
import os
from collections import deque

import numpy as np
import pytest

from frontend import compile_program, trace_program
from ir_graph import build_graph, read_graph
from ir_graph.control import control_edges, critical_path, with_control
from tests.helpers import DATA_DIR, ROOT, run_cli, run_cli_error
from vcut.pipeline import AnalysisOptions, TraceOptions, analyze, compare
from vcut_base.errors import InputError

STRASSEN = os.path.join(ROOT, "samples", "strassen.c")
GRAPH_FILE = os.path.join(DATA_DIR, "power.graph.gz")
TRACE = TraceOptions(defines=("N=2",))
N2 = ("-D", "N=2")
#: Lam and Wilson's models, the most parallel first (written out: the order is the spec).
MODELS = ("oracle", "sp-cd-mf", "sp-cd", "sp", "cd-mf", "cd", "base")
#: The chains along which a critical path can only grow.
CHAINS = (("oracle", "sp-cd-mf", "sp-cd", "sp", "base"), ("sp-cd-mf", "cd-mf", "cd", "base"))
CTRL = 128
P = 4


def longest_path(g):
    """The longest path (sum of edge weights) of the DAG ``g``, by Kahn's order."""
    src, dst, w = (np.asarray(a).tolist() for a in (g.src, g.dst, g.weight))
    out = [[] for _ in range(g.n)]
    indeg = [0] * g.n
    for s, d, x in zip(src, dst, w):
        out[s].append((d, x))
        indeg[d] += 1
    dist = [0.0] * g.n
    ready = deque(v for v in range(g.n) if indeg[v] == 0)
    seen = 0
    while ready:
        u = ready.popleft()
        seen += 1
        for v, x in out[u]:
            dist[v] = max(dist[v], dist[u] + x)
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    assert seen == g.n, "not a DAG"
    return max(dist, default=0.0)


def data_part(g):
    """``(src, dst, weight)`` of ``g``'s edges that are not control edges."""
    keep = (np.asarray(g.edge_kind) & CTRL) == 0
    return g.src[keep], g.dst[keep], g.weight[keep]


def ctrl_weights(g):
    return np.asarray(g.weight)[(np.asarray(g.edge_kind) & CTRL) != 0]


def by_model(rows):
    return {r["model"]: r for r in rows}


def files_in(directory):
    """The files in ``directory`` ([] when it was not made)."""
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def opts(**kw):
    return AnalysisOptions(**{"p": P, "baselines": False, "trace": TRACE, **kw})


# -- the reference and the runs, once per module --------------------------------------------
@pytest.fixture(scope="module")
def ref():
    """strassen N=2 traced by `frontend` directly: its data graph and control flow."""
    trace = trace_program(compile_program([STRASSEN], defines=("N=2",)))
    data = build_graph(trace, control="oracle")
    assert data.control is not None and data.meta["control"]["control_edges"] == 0
    assert not np.any(np.asarray(data.edge_kind) & CTRL)
    return data


@pytest.fixture(scope="module")
def cd_run():
    return analyze([STRASSEN], opts(control="cd"))


@pytest.fixture(scope="module")
def oracle_run():
    return analyze([STRASSEN], opts())


@pytest.fixture(scope="module")
def all_run():
    return analyze([STRASSEN], opts(control="cd", control_models=True))


def reference_rows(ref, latency):
    """Each model's critical path, work and control edges from the reference graph."""
    work = float(np.sum(ref.weight))
    rows = {}
    for m in MODELS:
        g = with_control(ref, ref.control, m, latency)
        cp = critical_path(ref, ref.control, m, latency)
        assert longest_path(g) == pytest.approx(cp)
        edges = len(control_edges(ref, ref.control, m)[0]) if m != "oracle" else 0
        assert g.m == ref.m + edges
        rows[m] = {"critical_path": cp, "work": work, "control_edges": edges}
    return rows


# -- the Python API: analyze ----------------------------------------------------------------
def test_analyze_cd_sets_every_model_against_the_reference(cd_run, ref):
    c = cd_run.summary["control"]
    rows = c["models"]
    assert [r["model"] for r in rows] == list(MODELS)
    cp = {r["model"]: r["critical_path"] for r in rows}
    for chain in CHAINS:
        for a, b in itertools.pairwise(chain):
            assert cp[a] <= cp[b], (a, b, cp)
    assert cp["oracle"] == pytest.approx(longest_path(ref))  # the dataflow limit
    assert cp["base"] > cp["oracle"]  # strassen's loops: the branches cost something
    expect = reference_rows(ref, 1.0)
    for r in rows:
        e = expect[r["model"]]
        assert r["critical_path"] == pytest.approx(e["critical_path"]), r["model"]
        assert r["work"] == pytest.approx(e["work"])
        assert r["control_edges"] == e["control_edges"], r["model"]
        assert r["parallelism"] == pytest.approx(e["work"] / e["critical_path"])
        assert r["bound_speedup"] == pytest.approx(
            e["work"] / max(e["critical_path"], e["work"] / P))
    assert c["model"] == "cd" and c["branch_latency"] == 1.0
    assert c["branches"] == np.count_nonzero(ref.control.state) > 0
    assert 0 < c["mispredicted"] == ref.control.mispredicted <= c["branches"]
    assert c["control_edges"] == by_model(rows)["cd"]["control_edges"] > 0


def test_analyze_cd_graph_is_the_data_graph_with_the_cd_edges(cd_run, ref):
    g, rows = cd_run.graph, by_model(cd_run.summary["control"]["models"])
    assert g.n == ref.n
    assert g.m == ref.m + rows["cd"]["control_edges"]
    assert int(np.count_nonzero(np.asarray(g.edge_kind) & CTRL)) == rows["cd"]["control_edges"]
    assert np.all(ctrl_weights(g) == 1.0)
    src, dst, w = data_part(g)
    key = np.lexsort((src, dst))
    rkey = np.lexsort((ref.src, ref.dst))
    assert np.array_equal(src[key], ref.src[rkey]) and np.array_equal(dst[key], ref.dst[rkey])
    assert np.array_equal(w[key], ref.weight[rkey])
    assert longest_path(g) == pytest.approx(rows["cd"]["critical_path"])
    assert cd_run.summary["graph"]["edges"] == g.m


def test_analyze_headline_row_is_the_analysis(cd_run):
    c = cd_run.summary["control"]
    rows = by_model(c["models"])
    makespan = cd_run.analysis.result.makespan
    assert rows["cd"]["makespan"] == makespan == cd_run.summary["makespan"]
    assert rows["cd"]["speedup"] == pytest.approx(rows["cd"]["work"] / makespan)
    for m in MODELS:
        if m != "cd":
            assert "makespan" not in rows[m] and "speedup" not in rows[m], m
    assert c["sentence"] == (
        "The headline figures use the CD model: instructions wait for the branches that "
        "control them; branches resolve in order (a branch resolves in 1 cycle).")


def test_analyze_control_models_simulates_every_model(all_run, cd_run, oracle_run):
    rows = by_model(all_run.summary["control"]["models"])
    assert list(rows) == list(MODELS)
    for m, r in rows.items():
        assert r["makespan"] > 0 and r["speedup"] == pytest.approx(r["work"] / r["makespan"]), m
        # the machine (table2:4) cannot beat its bound
        assert r["speedup"] <= r["bound_speedup"] * (1 + 1e-9), m
    # each model's row is that model's own analysis at the same p (deterministic)
    assert rows["cd"]["makespan"] == cd_run.analysis.result.makespan
    assert rows["oracle"]["makespan"] == oracle_run.analysis.result.makespan
    # the table's static columns do not depend on simulating
    for r, s in zip(all_run.summary["control"]["models"], cd_run.summary["control"]["models"]):
        assert {k: r[k] for k in s if k not in ("makespan", "speedup")} == \
            {k: s[k] for k in s if k not in ("makespan", "speedup")}


def test_analyze_branch_latency_weighs_the_control_edges(cd_run, ref):
    run = analyze([STRASSEN], opts(control="cd", branch_latency=3.0))
    c = run.summary["control"]
    assert c["branch_latency"] == 3.0 and c["sentence"].endswith(
        "(a branch resolves in 3 cycles).")
    w = ctrl_weights(run.graph)
    assert len(w) == c["control_edges"] > 0 and np.all(w == 3.0)
    expect = reference_rows(ref, 3.0)
    one = by_model(cd_run.summary["control"]["models"])
    for r in c["models"]:
        m = r["model"]
        assert r["critical_path"] == pytest.approx(expect[m]["critical_path"]), m
        assert r["critical_path"] >= one[m]["critical_path"], m
        assert r["control_edges"] == one[m]["control_edges"], m  # the same waits
    three = by_model(c["models"])
    assert three["oracle"]["critical_path"] == one["oracle"]["critical_path"]
    for m in ("cd", "base", "sp"):
        assert three[m]["critical_path"] > one[m]["critical_path"], m
    assert longest_path(run.graph) == pytest.approx(three["cd"]["critical_path"])


def test_machine_branch_cycles_is_the_default_latency(tmp_path, ref):
    machine = tmp_path / "m.json"
    machine.write_text(json.dumps({"cores": 4, "branch_cycles": 5}))
    out = tmp_path / "out"
    run = analyze([STRASSEN], opts(control="cd", machine=str(machine), output=str(out)))
    c = run.summary["control"]
    assert c["branch_latency"] == 5.0 and np.all(ctrl_weights(run.graph) == 5.0)
    assert by_model(c["models"])["cd"]["critical_path"] == pytest.approx(
        critical_path(ref, ref.control, "cd", 5.0))
    doc = json.loads((out / "mapping.json").read_text())
    assert doc["machine"]["branch_cycles"] == 5.0 and doc["control"]["branch_latency"] == 5.0
    # an explicit --branch-latency wins over the machine's
    run = analyze([STRASSEN], opts(control="cd", machine=str(machine), branch_latency=2.0))
    assert run.summary["control"]["branch_latency"] == 2.0
    assert np.all(ctrl_weights(run.graph) == 2.0)


def test_analyze_oracle_by_default(oracle_run, ref):
    c = oracle_run.summary["control"]
    assert AnalysisOptions().control == "oracle" and AnalysisOptions().branch_latency is None
    assert c["model"] == "oracle" and c["control_edges"] == 0
    assert c["sentence"] == ("The headline figures use the ORACLE model: the dataflow limit: "
                             "every branch is known before it runs (data dependences only).")
    rows = by_model(c["models"])
    assert list(rows) == list(MODELS)
    assert rows["oracle"]["makespan"] == oracle_run.analysis.result.makespan \
        == oracle_run.summary["makespan"]
    assert [m for m, r in rows.items() if "makespan" in r] == ["oracle"]
    g = oracle_run.graph
    assert not np.any(np.asarray(g.edge_kind) & CTRL) and g.m == ref.m
    assert rows["oracle"]["critical_path"] == pytest.approx(longest_path(g))


def test_analyze_refuses_bad_models_before_making_the_folder(tmp_path):
    out = tmp_path / "out"
    for control in ("all", "bogus", "cd,sp"):
        with pytest.raises(InputError, match="control"):
            analyze([STRASSEN], opts(control=control, output=str(out)))
    assert not out.exists()
    with pytest.raises(InputError, match="branch latency"):
        analyze([STRASSEN], opts(control="cd", branch_latency=-1.0, output=str(out)))
    assert files_in(out) == []


# -- the Python API: compare ----------------------------------------------------------------
def compare_options(**kw):
    return AnalysisOptions(**{"ps": (2,), "methods": ("wb-libra",), "trace": TRACE, **kw})


def test_compare_all_models(tmp_path, ref):
    out = tmp_path / "out"
    c = compare([STRASSEN], compare_options(control="all", output=str(out)))
    assert [r["control"] for r in c.rows] == list(MODELS)
    assert all(r["p"] == 2 and r["method"] == "wb-libra" for r in c.rows)
    assert [m["model"] for m in c.models] == list(MODELS)
    expect = reference_rows(ref, 1.0)
    for m in c.models:
        e = expect[m["model"]]
        assert m["critical_path"] == pytest.approx(e["critical_path"])
        assert m["work"] == pytest.approx(e["work"]) and m["control_edges"] == e["control_edges"]
    for r in c.rows:
        work = expect[r["control"]]["work"]
        assert r["makespan"] > 0 and r["speedup"] == pytest.approx(work / r["makespan"])
    # the oracle row is today's comparison
    plain = compare([STRASSEN], compare_options())
    assert plain.models is None and "models" not in plain.summary()
    assert len(plain.rows) == 1 and "control" not in plain.rows[0]
    assert "speedup" not in plain.rows[0]
    assert plain.rows[0]["makespan"] == c.rows[0]["makespan"]
    assert c.summary()["models"] == c.models
    assert files_in(out) == ["compare.json", "compare.png"]
    doc = json.loads((out / "compare.json").read_text())
    assert doc["controls"] == list(MODELS) and doc["branch_latency"] == 1.0
    assert doc["models"] == json.loads(json.dumps(c.models))
    assert [(r["control"], r["makespan"]) for r in doc["rows"]] == \
        [(r["control"], r["makespan"]) for r in c.rows]


def test_compare_keeps_the_order_given():
    c = compare([STRASSEN], compare_options(control="cd,oracle", ps=(2, 4)))
    assert [(r["control"], r["p"]) for r in c.rows] == [("cd", 2), ("cd", 4), ("oracle", 2),
                                                       ("oracle", 4)]
    assert [m["model"] for m in c.models] == ["cd", "oracle"]
    assert c.models[0]["control_edges"] > 0 == c.models[1]["control_edges"]


def test_compare_refuses_bad_models(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(InputError, match="twice"):
        compare([STRASSEN], compare_options(control="cd,cd", output=str(out)))
    with pytest.raises(InputError, match="bogus"):
        compare([STRASSEN], compare_options(control="oracle,bogus", output=str(out)))
    assert not out.exists()


# -- the command line -----------------------------------------------------------------------
def model_lines(stdout):
    """The models table: ``{model: line}`` for lines that start with a model's name."""
    lines = {}
    for line in stdout.splitlines():
        head = line.split("  ")[0].replace(" (headline)", "")
        if head in MODELS:
            assert head not in lines, line
            lines[head] = line
    return lines


def test_cli_analyze_json_and_text(tmp_path, capsys):
    code, stdout, _ = run_cli(capsys, "analyze", STRASSEN, *N2, "-p", P, "--control", "sp",
                              "--no-baselines", "--json")
    assert code == 0
    s = json.loads(stdout)
    c = s["control"]
    assert c["model"] == "sp" and [r["model"] for r in c["models"]] == list(MODELS)
    assert by_model(c["models"])["sp"]["makespan"] == s["makespan"]
    assert c["sentence"].startswith("The headline figures use the SP model: ")
    out = tmp_path / "out"
    code, text, _ = run_cli(capsys, "analyze", STRASSEN, *N2, "-p", P, "--control", "sp",
                            "--no-baselines", "-o", out)
    assert code == 0
    assert c["sentence"] in text
    lines = model_lines(text)
    assert list(lines) == list(MODELS)
    assert lines["sp"].startswith("sp (headline)")
    header = next(ln for ln in text.splitlines() if ln.startswith("model "))
    assert header.split()[:3] == ["model", "critical", "path"]
    for m, r in by_model(c["models"]).items():
        assert f"{r['critical_path']:,.0f}" in lines[m] and \
            lines[m].rstrip().endswith(f"{r['control_edges']:,}"), lines[m]
    assert files_in(out) == ["mapping.json", "report.html"]
    html = (out / "report.html").read_text()
    assert html.count("<section id='control'>") == 1
    section = html[html.index("<section id='control'>"):]
    section = section[:section.index("</section>")]
    for m in MODELS:
        assert f"<td>{m}" in section, m
    assert "<td>sp (headline)</td>" in section
    doc = json.loads((out / "mapping.json").read_text())
    static = ("model", "critical_path", "work", "control_edges")
    assert doc["control"]["model"] == "sp"
    assert [{k: r[k] for k in static} for r in doc["control"]["models"]] == \
        [{k: r[k] for k in static} for r in c["models"]]


def test_cli_compare_all_prints_the_models_table(capsys):
    code, stdout, _ = run_cli(capsys, "compare", STRASSEN, *N2, "-p", "2", "--methods",
                              "wb-libra", "--control", "all")
    assert code == 0
    header = [ln for ln in stdout.splitlines() if ln.startswith("model ")]
    assert len(header) == 1 and header[0].split() == ["model", "critical", "path",
                                                      "parallelism", "wb-libra", "p=2"]
    assert list(model_lines(stdout)) == list(MODELS)
    code, stdout, _ = run_cli(capsys, "compare", STRASSEN, *N2, "-p", "2", "--methods",
                              "wb-libra", "--control", "base,oracle", "--json")
    s = json.loads(stdout)
    assert [r["control"] for r in s["rows"]] == ["base", "oracle"]
    assert [m["model"] for m in s["models"]] == ["base", "oracle"]


def test_cli_graph_writes_the_control_edges(tmp_path, capsys, ref):
    out = tmp_path / "G.npz"
    code, stdout, _ = run_cli(capsys, "graph", STRASSEN, *N2, "-o", out, "--control", "base",
                              "--json")
    assert code == 0
    c = json.loads(stdout)["control"]
    assert c["model"] == "base" and c["branch_latency"] == 1.0 and c["control_edges"] > 0
    g = read_graph(str(out))
    kind = np.asarray(g.edge_kind)
    assert int(np.count_nonzero(kind & CTRL)) == c["control_edges"] == \
        len(control_edges(ref, ref.control, "base")[0])
    assert g.m == ref.m + c["control_edges"] and np.all(g.weight[(kind & CTRL) != 0] == 1.0)
    assert longest_path(g) == pytest.approx(critical_path(ref, ref.control, "base"))
    code, stdout, _ = run_cli(capsys, "graph", STRASSEN, *N2, "-o", tmp_path / "H.npz",
                              "--control", "cd", "--branch-latency", "2.5")
    assert code == 0
    line = [ln for ln in stdout.splitlines() if ln.startswith("control ")]
    cd_edges = len(control_edges(ref, ref.control, "cd")[0])
    assert len(line) == 1 and f"cd: {cd_edges:,} control edges of 2.5 cycles (" in line[0]
    h = read_graph(str(tmp_path / "H.npz"))
    assert np.all(np.asarray(h.weight)[(np.asarray(h.edge_kind) & CTRL) != 0] == 2.5)
    code, stdout, _ = run_cli(capsys, "graph", STRASSEN, *N2, "-o", tmp_path / "I.npz",
                              "--control", "sp")
    sp_edges = len(control_edges(ref, ref.control, "sp")[0])
    assert code == 0 and f"sp: {sp_edges:,} control edges of 1 cycle (" in stdout


# -- bad inputs -----------------------------------------------------------------------------
ANALYZE = ("analyze", STRASSEN, *N2, "-p", "4", "--no-baselines")
COMPARE = ("compare", STRASSEN, *N2, "-p", "2", "--methods", "wb-libra")


@pytest.mark.parametrize("argv, words", [
    (ANALYZE + ("--control", "bogus"), ("bogus", "oracle, sp-cd-mf")),
    (COMPARE + ("--control", "bogus"), ("bogus",)),
    (COMPARE + ("--control", "cd,bogus"), ("bogus",)),
    (ANALYZE + ("--control", "all"), ("--control all", "vcut compare")),
    (ANALYZE + ("--control", "cd,sp"), ("--control",)),
    (COMPARE + ("--control", "cd,cd"), ("twice", "cd,cd")),
    (ANALYZE + ("--control", "cd", "--branch-latency", "-1"), ("--branch-latency",)),
    (ANALYZE + ("--control", "cd", "--branch-latency", "nan"), ("--branch-latency", "nan")),
    (ANALYZE + ("--control", "cd", "--branch-latency", "abc"), ("--branch-latency", "abc")),
    (COMPARE + ("--control", "all", "--branch-latency", "-1"), ("--branch-latency",)),
    (("analyze", GRAPH_FILE, "-p", "4", "--no-baselines", "--control", "cd"),
     ("--control cd", "graph file")),
    (("compare", GRAPH_FILE, "-p", "2", "--methods", "wb-libra", "--control", "cd"),
     ("--control cd", "graph file")),
    (("compare", GRAPH_FILE, "-p", "2", "--methods", "wb-libra", "--control", "all"),
     ("--control all", "graph file")),
])
def test_cli_refuses(argv, words, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = run_cli(capsys, *argv, "-o", out)
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert code == 2 and stdout == "" and len(errors) == 1, err
    for w in words:
        assert w in errors[0], errors[0]
    assert files_in(out) == []


@pytest.mark.parametrize("extra, words", [
    (("--control", "bogus"), ("bogus",)),
    (("--control", "cd", "--branch-latency", "-1"), ("--branch-latency",)),
    (("--control", "cd", "--branch-latency", "inf"), ("--branch-latency", "inf")),
])
def test_cli_graph_refuses(extra, words, tmp_path, capsys):
    out = tmp_path / "g.npz"
    code, error = run_cli_error(capsys, "graph", STRASSEN, *N2, "-o", out, *extra)
    assert code == 2 and all(w in error for w in words), error
    assert not out.exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", [ANALYZE, COMPARE])
@pytest.mark.parametrize("value", [-1, "five", None])
def test_machine_file_branch_cycles_is_checked(command, value, tmp_path, capsys):
    machine = tmp_path / "m.json"
    machine.write_text(json.dumps({"cores": 4, "branch_cycles": value}))
    out = tmp_path / "out"
    code, error = run_cli_error(capsys, *command, "--control", "cd", "--machine", machine,
                                "-o", out)
    assert code == 2 and "branch_cycles" in error and str(machine) in error, error
    assert files_in(out) == []


def test_bad_latency_in_the_api():
    for bad in (-1.0, math.nan, math.inf, "abc"):
        with pytest.raises(InputError, match="branch latency"):
            compare([STRASSEN], compare_options(control="cd", branch_latency=bad))
