"""`vcut analyze` and `vcut compare` end to end, their files, schema and bad inputs."""

import json
import os
from dataclasses import replace

import numpy as np
import pytest

from ir_graph import Graph
from tests.helpers import run_cli
from vcut.pipeline import METHODS, analyze_graph, compare_methods
from mapping.machine import load_machine
from vcut.cli import main


@pytest.fixture(scope="module")
def trace_file(strassen8, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("an") / "strassen8.npz")
    strassen8[0].save(path)
    return path


def test_analyze_writes_mapping_and_report(trace_file, strassen8, tmp_path, capsys):
    out = str(tmp_path / "out")
    code, stdout, _ = run_cli(capsys, "analyze", trace_file, "-p", "8", "--algo", "wb-libra",
                              "--machine", "mesh:2x2", "-o", out, "--json")
    assert code == 0
    s = json.loads(stdout)
    for key in ("clusters", "cores", "makespan", "communication_bytes", "hop_bytes"):
        assert key in s
    assert s["clusters"] == 8 and s["cores"] == 4 and s["machine"] == "mesh:2x2"
    assert len(s["core_of_cluster"]) == 8 and set(s["core_of_cluster"]) <= {0, 1, 2, 3}
    assert s["network_bytes"] <= s["communication_bytes"]
    assert s["network_bytes"] <= s["hop_bytes"] <= 2 * s["network_bytes"]  # 2 x 2 mesh: 1-2 hops
    assert [m["mapping"] for m in s["mappers"]] == ["time-aware", "memory-centric", "round-robin",
                                                    "random", "comm-greedy", "recursive-bisection"]
    assert sorted(os.listdir(out)) == ["mapping.json", "report.html"]
    doc = json.load(open(os.path.join(out, "mapping.json")))
    assert doc["format"] == "vcut-mapping" and doc["format_version"] == 1
    assert doc["p"] == 8 and doc["method"] == "wb-libra" and doc["mapping"] == "time-aware"
    assert doc["machine"]["mesh"] == [2, 2]
    g = strassen8[1]
    assert len(doc["clusters"]) == 8
    assert sum(c["work_cycles"] for c in doc["clusters"]) == pytest.approx(g.weight.sum())
    assert sum(c["sent_bytes"] for c in doc["clusters"]) == s["communication_bytes"]
    assert [c["core"] for c in doc["clusters"]] == s["core_of_cluster"]
    assert len(doc["cores"]) == 4
    for core in doc["cores"]:  # per-core lists agree with the cluster -> core map
        assert core["clusters"] == [c["id"] for c in doc["clusters"] if c["core"] == core["id"]]
        assert 0 <= core["utilization"] <= 1
    assert doc["metrics"]["makespan_cycles"] == s["makespan"]
    # without dependency waits a core still runs all its work and receives its messages
    assert s["independent_time"] >= max(c["busy_cycles"] for c in doc["cores"])
    assert doc["metrics"]["independent_time_cycles"] == s["independent_time"]
    assert doc["metrics"]["partition"]["kind"] == "vertex-cut"
    assert {"partition", "interactions", "mapping", "simulation", "total"} <= set(doc["phases"])
    html = open(os.path.join(out, "report.html")).read()
    # degrees, loads, mesh, core timeline, mapping comparison
    assert html.count("<img") == 5 and "data:image/png;base64," in html and "wb-libra" in html


def test_analyze_summary_on_stdout_and_an_edge_cut(trace_file, tmp_path, capsys):
    code, stdout, _ = run_cli(capsys, "analyze", trace_file, "-p", "4", "--algo", "metis")
    assert code == 0
    assert "makespan" in stdout and "cut edges" in stdout and "vs round-robin" in stdout
    out = str(tmp_path / "nb")
    code, stdout, _ = run_cli(capsys, "analyze", trace_file, "-p", "4", "--no-baselines", "-o", out,
                              "--json")
    assert code == 0 and json.loads(stdout)["mappers"] == []
    assert open(os.path.join(out, "report.html")).read().count("<img") == 4
    # the partitioning-method comparison in the report and mapping.json
    code, _, _ = run_cli(capsys, "analyze", trace_file, "-p", "4", "--no-baselines", "-o", out,
                         "--compare-methods", "--methods", "metis,par")
    assert code == 0
    html = open(os.path.join(out, "report.html")).read()
    assert html.count("<img") == 5 and "Partitioning-method comparison" in html
    doc = json.load(open(os.path.join(out, "mapping.json")))
    assert [r["method"] for r in doc["methods"]] == ["metis", "par"]
    assert doc["methods"][1]["makespan"] == doc["metrics"]["makespan_cycles"]  # the same run


def test_analyze_a_c_program_and_a_given_partition(tmp_path, capsys):
    from tests.helpers import ROOT

    src = os.path.join(ROOT, "samples", "strassen.c")
    graph = str(tmp_path / "s.npz")
    assert main(["graph", src, "-D", "N=8", "--weights", "model", "-o", graph]) == 0
    part = str(tmp_path / "s.part")
    assert main(["partition", graph, "-p", "4", "--algo", "w-libra", "-o", part]) == 0
    capsys.readouterr()
    code, stdout, _ = run_cli(capsys, "analyze", graph, "-p", "4", "--partition", part, "--json")
    assert code == 0
    given = json.loads(stdout)
    code, stdout, _ = run_cli(capsys, "analyze", graph, "-p", "4", "--algo", "w-libra", "--json")
    assert code == 0
    fresh = json.loads(stdout)
    # the same partition, read back from the file, gives the same clusters and simulation
    assert given["makespan"] == fresh["makespan"]
    assert given["communication_bytes"] == fresh["communication_bytes"]
    # and the C program straight through the pipeline makes the same graph (no address
    # randomisation in the traced child, so the cache-model weights repeat)
    code, stdout, _ = run_cli(capsys, "analyze", src, "-D", "N=8", "-p", "4", "--algo", "w-libra",
                              "--json")
    assert code == 0 and json.loads(stdout)["makespan"] == fresh["makespan"]


def test_bad_inputs(trace_file, tmp_path, capsys):
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"cores": 4, "hop_cycles": -1}))
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "4", "--machine", str(bad))
    assert code == 2 and "field 'hop_cycles' must be a number >= 0, got -1" in err
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "100000000")
    assert code == 2 and "100000000 clusters but the graph has only" in err
    # data that cannot fit the machine's memory: nothing is written
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps({"cores": 4, "memory": {"bytes_per_node": [1000]},
                                "numa": {"latency_cycles": [[100]]}}))
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "4", "--machine", str(tiny),
                           "-o", str(out))
    assert code == 2 and "bytes of data but the largest NUMA node" in err
    assert not (out / "mapping.json").exists() and not (out / "report.html").exists()
    # a partition of another graph
    part = tmp_path / "other.part"
    part.write_text("0\n1\n0\n")
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "2", "--partition", str(part))
    assert code == 2 and "assigns 3 edges but the graph has" in err
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "4", "--algo", "nope")
    assert code == 2 and "unknown partitioning method 'nope'" in err
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "4", "--compare-methods")
    assert code == 2 and "give -o OUTDIR" in err
    code, _, err = run_cli(capsys, "compare", trace_file, "-p", "8,x")
    assert code == 2 and "comma-separated cluster counts" in err
    f = tmp_path / "file"
    f.write_text("")
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "4", "-o", str(f))
    assert code == 9 and "is not a directory" in err


def test_compare(trace_file, tmp_path, capsys):
    out = str(tmp_path / "cmp")
    code, stdout, _ = run_cli(capsys, "compare", trace_file, "-p", "2,4", "--methods",
                              "metis,pg,wb-libra", "-o", out, "--json")
    assert code == 0
    res = json.loads(stdout)
    assert [(r["p"], r["method"]) for r in res["rows"]] == [
        (2, "metis"), (2, "pg"), (2, "wb-libra"), (4, "metis"), (4, "pg"), (4, "wb-libra")]
    assert all(r["machine"] == f"table2:{r['p']}" for r in res["rows"])
    assert sorted(os.listdir(out)) == ["compare.json", "compare.png"]
    code, stdout, _ = run_cli(capsys, "compare", trace_file, "-p", "2", "--methods", "metis,wb-libra")
    lines = stdout.splitlines()
    assert lines[0] == "execution time (cycles), relative to metis, p = 2"
    assert lines[3].split()[0] == "100%"


def test_api_matches_between_analyze_and_compare(strassen8):
    trace, g = strassen8
    m = load_machine("table2:4")
    a = analyze_graph(g, 4, "wb-pg", m, object_bytes=trace.obj_size, baselines=False)
    # analyze maps time-aware by default, compare memory-centric (the source's tables)
    rows = compare_methods(g, [4], ["wb-pg"], m, object_bytes=trace.obj_size, mapper="time-aware")
    assert rows[0]["makespan"] == a.result.makespan
    assert rows[0]["hop_bytes"] == a.result.hop_bytes
    assert METHODS[0] == "compnet" and METHODS[-1] == "wb-libra"
    # deterministic: the same run twice
    b = analyze_graph(g, 4, "wb-pg", m, object_bytes=trace.obj_size, baselines=False)
    assert np.array_equal(a.result.finish, b.result.finish)


def test_compare_methods_reach_the_terminal_and_json(tmp_path, capsys):
    src = tmp_path / "loop.c"
    src.write_text("#include <stdio.h>\nint a[64];\nint main(void) { int s = 0;\n"
                   "  for (int i = 0; i < 64; i++) a[i] = i * i;\n"
                   "  for (int i = 0; i < 64; i++) s += a[i] + a[63 - i];\n"
                   "  printf(\"%d\\n\", s); return 0; }\n")
    out = tmp_path / "an"
    argv = ["analyze", str(src), "-p", "2", "--no-baselines", "--compare-methods",
            "--methods", "wb-libra,metis", "-o", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    doc = json.loads((out / "mapping.json").read_text())
    by_name = {m["method"]: m for m in doc["methods"]}
    for name in ("wb-libra", "metis"):
        m = by_name[name]
        assert (f"  method {name}" in text and f"makespan {m['makespan']:,.0f}, without waits "
                f"{m['independent_time']:,.0f}, communication {m['communication_bytes']:,.0f} "
                "bytes" in text)
    assert main(argv + ["--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [m["method"] for m in summary["methods"]] == ["wb-libra", "metis"]


def test_baselines_run_at_once_give_the_same_figures(monkeypatch):
    """The baseline simulations on threads (jobs=3) against one after another."""
    import vcut_base.memory
    from mapping.simulate import simulation_bytes, simulation_jobs

    rng = np.random.default_rng(4)
    n, m = 3000, 12000
    src = rng.integers(0, n - 1, m)
    dst = src + rng.integers(1, 50, m)
    keep = dst < n
    g = Graph(n=n, src=src[keep], dst=dst[keep], weight=rng.random(int(keep.sum())) + 0.5)
    one = analyze_graph(g, 8, "wb-libra", jobs=1)
    many = analyze_graph(g, 8, "wb-libra", jobs=3)
    assert one.mappers == many.mappers and len(one.mappers) == 6
    assert [r["mapping"] for r in one.mappers][0] != [r["mapping"] for r in one.mappers][1]
    # as many at once as half the memory holds, at most the CPUs and the count
    need = simulation_bytes(one.clustering)
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: int(2 * need * 1.5))
    assert simulation_jobs(one.clustering, 4) == 1
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: int(2 * need * 9))
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2})
    assert simulation_jobs(one.clustering, 4) == 3
    assert simulation_jobs(one.clustering, 2) == 2


def test_the_comparison_simulates_no_mapping_again(strassen8, monkeypatch):
    # every baseline mapping is a start of the time-aware search, which simulated it:
    # the comparison reuses all of them, so analyze's own simulator runs once (the
    # priority steering's compact placement) and once per replica refinement tried (each
    # judged on that placement), and the default is never behind a baseline
    import vcut.par_steering as an
    import vcut.pipeline.analysis as pa

    trace, g = strassen8
    calls = []
    real = an.simulate
    monkeypatch.setattr(an, "simulate", lambda *x, **kw: calls.append(1) or real(*x, **kw))
    monkeypatch.setattr(pa, "simulate", lambda *x, **kw: calls.append(1) or real(*x, **kw))
    a = analyze_graph(g, 8, "par", load_machine("mesh:4x4"), object_bytes=trace.obj_size,
                      jobs=1)
    assert len(calls) == len(a.partition["refined"])
    # within STEER x the bound at first (strassen8, p = 8): no steering, no refinement
    assert a.partition["priorities"][0][1] <= an.STEER * a.bound.lower_bound
    assert len(a.partition["refined"]) == 1 and a.partition["refined_share"] == 0.0
    ours = [r["makespan"] for r in a.mappers if r["mapping"] == "time-aware"][0]
    assert all(ours <= r["makespan"] for r in a.mappers)


def test_the_comparison_reuses_the_mappings_own_simulations_exactly(strassen8):
    # the time-aware mapping simulates its result and its starts (memory-centric and every
    # baseline mapping); the comparison takes those instead of simulating them again, and
    # every row must equal a fresh simulation of that placement
    from mapping.placement import place
    from mapping.simulate import simulate

    trace, g = strassen8
    m = load_machine("mesh:4x4")
    a = analyze_graph(g, 8, "par", m, object_bytes=trace.obj_size, jobs=1)
    assert a.placement.info["evaluations"] == 16  # every start simulated, then moves
    for row in a.mappers:
        core = (a.placement if row["mapping"] == "time-aware" else
                place(a.interactions, m, row["mapping"], clustering=a.clustering)).core
        fresh = simulate(a.clustering, core, m, a.interactions.value_bytes)
        assert row["makespan"] == fresh.makespan and row["hop_bytes"] == fresh.hop_bytes
        assert row["network_bytes"] == fresh.network_bytes
        assert row["utilization_all_cores"] == float(fresh.utilization.mean())
        used = np.isin(np.arange(m.cores), core)
        assert row["cores_used"] == int(used.sum())
        assert row["utilization_used_cores"] == float(fresh.utilization[used].mean())
    again = simulate(a.clustering, a.placement.core, m, a.interactions.value_bytes)
    assert a.result.makespan == again.makespan
    assert np.array_equal(a.result.finish, again.finish)


def test_the_mapping_starts_from_the_steering_s_compact_simulation(strassen8, monkeypatch):
    # the priority steering simulated par's clusters on the compact placement: the
    # time-aware mapping takes that simulation as its compact start instead of running it
    # again, and ends where a search simulating every start itself ends
    import mapping.time_aware as ta
    from mapping.placement import place
    from mapping.time_aware import compact

    import vcut.par_steering as an

    trace, g = strassen8
    m = load_machine("table2:64")
    monkeypatch.setattr(an, "REPLAYS", 0)  # the clusters' order as the mapping saw it
    monkeypatch.setattr(an, "WINDOW_FREE", False)
    monkeypatch.setattr(an, "GRAINS", False)  # one mapping (the finalist maps its own)
    seen = []
    real = ta.simulate
    monkeypatch.setattr(ta, "simulate",
                        lambda cl, core, *a: seen.append(core) or real(cl, core, *a))
    a = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=1)
    core = compact(64, m)
    assert not any(np.array_equal(c, core) for c in seen[:3])  # the other starts ran
    assert len(seen) == a.placement.info["evaluations"] - 1
    fresh = place(a.interactions, m, "time-aware", threshold=a.placement.info["threshold"],
                  clustering=a.clustering, jobs=1)
    assert np.array_equal(fresh.core, a.placement.core) and fresh.info == a.placement.info
    assert len(seen) == 2 * a.placement.info["evaluations"] - 1


def test_the_memory_centric_start_runs_beside_the_steering_s_first_simulation(strassen8,
                                                                             monkeypatch):
    # with two at a time, the steering's first simulation (compact placement) and the
    # mapping's first start (memory-centric) run side by side; the steering keeps par's
    # first clusters here (STEER: near enough the bound), so the mapping simulates neither
    # again, and everything is as one at a time
    import mapping.time_aware as ta
    from mapping.memory_centric import memory_centric
    from mapping.time_aware import compact

    import vcut.par_steering as an

    trace, g = strassen8
    m = load_machine("table2:64")
    monkeypatch.setattr(an, "STEER", np.inf)  # the first clusters kept, nothing refined
    monkeypatch.setattr(an, "GRAINS", False)
    monkeypatch.setattr(an, "REPLAYS", 0)  # the mapping's simulations alone
    monkeypatch.setattr(an, "WINDOW_FREE", False)
    one = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=1)
    seen = []  # (who simulated, clustering, core) of every simulation
    for mod in (ta, an):
        monkeypatch.setattr(mod, "simulate", lambda cl, core, *a, real=mod.simulate, who=mod: (
            seen.append((who, cl, np.array(core))) or real(cl, core, *a)))
    two = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=2)
    assert two.partition == one.partition and two.placement.info == one.placement.info
    assert np.array_equal(two.placement.core, one.placement.core)
    assert np.array_equal(two.result.finish, one.result.finish)
    assert two.result.makespan == one.result.makespan
    mc = np.asarray(memory_centric(two.interactions, m, two.placement.info["threshold"])[0])
    for core in (compact(64, m), mc):  # each simulated once, of the clusters kept, by the
        # steering's module (first_simulations), not by the mapping
        assert [who for who, _, c in seen if np.array_equal(c, core)] == [an]
    assert all(cl is two.clustering for _, cl, _ in seen)
    # the two side by side (in either order), before the mapping's other evaluations
    firsts = sorted((np.array_equal(c, compact(64, m)), np.array_equal(c, mc))
                    for _, _, c in seen[:2])
    assert firsts == [(False, True), (True, False)]


def _room_for_one_simulation(monkeypatch, trace, g, p, m):
    """``par``'s steering reduced to its compact placement's simulation (no priorities,
    grains, replays or window-free step) and a simulation budget of one of ``g``'s tasks."""
    import mapping.time_aware as ta

    import vcut.par_steering as an

    monkeypatch.setattr(an, "STEER", np.inf)
    monkeypatch.setattr(an, "GRAINS", False)
    monkeypatch.setattr(an, "REPLAYS", 0)
    monkeypatch.setattr(an, "WINDOW_FREE", False)
    tasks = len(analyze_graph(g, p, "par", m, object_bytes=trace.obj_size, baselines=False,
                              jobs=1).clustering.src)
    monkeypatch.setattr(ta, "EVAL_TASKS", float(tasks))  # room for one simulation


def test_a_mapping_of_one_simulation_takes_it_from_beside_the_steering(strassen8, monkeypatch):
    # a trace so large for the budget that the mapping simulates its memory-centric start
    # alone (evaluations 1): that simulation runs beside the steering's, and after them
    # nothing is simulated; the same analysis as one at a time
    import mapping.time_aware as ta

    import vcut.par_steering as an

    trace, g = strassen8
    m = load_machine("table2:64")
    _room_for_one_simulation(monkeypatch, trace, g, 64, m)
    one = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=1)
    seen = []  # (who simulated, core)
    for mod in (ta, an):
        monkeypatch.setattr(mod, "simulate", lambda cl, core, *a, real=mod.simulate, who=mod: (
            seen.append((who, np.array(core))) or real(cl, core, *a)))
    two = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=2)
    assert one.placement.info["evaluations"] == two.placement.info["evaluations"] == 1
    assert np.array_equal(two.placement.core, one.placement.core)
    assert two.result.makespan == one.result.makespan and two.partition == one.partition
    # both by the steering's module (first_simulations), the mapping's own start among them
    assert [who for who, _ in seen] == [an, an]
    assert any(np.array_equal(c, two.placement.core) for _, c in seen)


def test_a_trace_with_room_for_one_simulation_judges_the_steerings_and_reuses_placements(
        strassen8, monkeypatch):
    # room for one simulation, one at a time: the steering simulates the compact placement,
    # the mapping its memory-centric start and judges the compact one without simulating it
    # again; the result is not simulated again, and the comparison simulates only the
    # placements nothing simulated yet (round-robin is the compact placement on table2:8)
    import mapping.time_aware as ta
    from mapping.memory_centric import memory_centric
    from mapping.placement import place
    from mapping.simulate import simulate

    import vcut.par_steering as an
    import vcut.pipeline.analysis as pa

    trace, g = strassen8
    m = load_machine("table2:8")
    _room_for_one_simulation(monkeypatch, trace, g, 8, m)
    seen = []  # (who simulated, core)
    for mod in (ta, an, pa):
        monkeypatch.setattr(mod, "simulate", lambda cl, core, *a, real=mod.simulate, who=mod,
                            **k: (seen.append((who, np.array(core))) or real(cl, core, *a, **k)))
    a = analyze_graph(g, 8, "par", m, object_bytes=trace.obj_size, jobs=1)
    cl, inter = a.clustering, a.interactions
    mc = np.asarray(memory_centric(inter, m, a.placement.info["threshold"])[0])
    cc = ta.compact(8, m)
    cores = {o: place(inter, m, o, threshold=a.placement.info["threshold"], seed=0,
                      clustering=cl).core for o in pa.MAPPERS if o != "time-aware"}
    assert np.array_equal(cores["round-robin"], cc) and np.array_equal(cores["memory-centric"], mc)
    assert [who for who, _ in seen[:2]] == [an, ta]
    assert np.array_equal(seen[0][1], cc) and np.array_equal(seen[1][1], mc)
    rest = [o for o in cores if o not in ("round-robin", "memory-centric")]
    assert [who for who, _ in seen[2:]] == [pa] * len(rest)
    for (_, core), o in zip(seen[2:], rest):
        assert np.array_equal(core, cores[o])
    t = {o: simulate(cl, c, m, inter.value_bytes).makespan for o, c in cores.items()}
    assert a.placement.info["evaluations"] == 1
    assert a.result.makespan == min(t["memory-centric"], t["round-robin"])
    rows = {r["mapping"]: r["makespan"] for r in a.mappers}
    assert rows == {**t, "time-aware": a.result.makespan}


def test_a_mapping_that_gives_the_compact_placement_takes_the_steerings_simulation(
        strassen8, monkeypatch):
    # --mapping round-robin on table2:8 at p = 8 is the compact placement, which par's
    # steering simulated already: the analysis takes that simulation for its result
    from mapping.simulate import simulate
    from mapping.time_aware import compact

    import vcut.pipeline.analysis as pa

    trace, g = strassen8
    m = load_machine("table2:8")
    seen = []
    monkeypatch.setattr(pa, "simulate", lambda cl, core, *a, real=pa.simulate, **k: (
        seen.append(np.array(core)) or real(cl, core, *a, **k)))
    a = analyze_graph(g, 8, "par", m, mapper="round-robin", object_bytes=trace.obj_size,
                      baselines=False, jobs=1)
    assert np.array_equal(a.placement.core, compact(8, m)) and seen == []
    fresh = simulate(a.clustering, a.placement.core, m, a.interactions.value_bytes)
    assert a.result.makespan == fresh.makespan
    assert np.array_equal(a.result.finish, fresh.finish)


def test_first_simulations_one_at_a_time_or_without_a_mapping(strassen8):
    # first_simulations alone: the compact placement's simulation always; the
    # memory-centric one beside it only with two at a time, and none where the mapping
    # refuses its threshold (it reports that itself)
    from mapping.interactions import VALUE_BYTES
    from mapping.memory_centric import memory_centric
    from mapping.simulate import simulate
    from mapping.time_aware import compact
    from vcut.clustering import cluster_graph
    from vcut.par_steering import first_simulations

    trace, g = strassen8
    m = load_machine("mesh:4x4")
    cl, _ = cluster_graph(g, 8, "par")
    core = compact(8, m)
    want = simulate(cl, core, m, VALUE_BYTES)
    (c1, r1), early = first_simulations(cl, m, 4, trace.obj_size, jobs=1)
    assert early is None and np.array_equal(c1, core) and r1.makespan == want.makespan
    (c2, r2), (inter, (mc, rmc)) = first_simulations(cl, m, 4, trace.obj_size, jobs=2)
    assert np.array_equal(c2, core) and np.array_equal(r2.finish, want.finish)
    assert np.array_equal(mc, memory_centric(inter, m, 4)[0])
    fresh = simulate(cl, mc, m, VALUE_BYTES)
    assert rmc.makespan == fresh.makespan and np.array_equal(rmc.finish, fresh.finish)
    (_, r3), early = first_simulations(cl, m, 0, trace.obj_size, jobs=2)  # threshold 0: refused
    assert early is None and r3.makespan == want.makespan


def test_analyze_greedy_cut_on_the_gpu(trace_file, capsys, monkeypatch):
    # under the simulator without a GPU (tests/conftest.py), on a slice of the run; its
    # graph is shorter than the GPU's default batch of 65,536 edges, so every edge decides
    # on the empty state frozen at the stream's start (least loaded of all) and again when
    # applied: the sequential stream's cut, hence the same analysis
    from runtime import config
    from vcut import gpu_greedy

    monkeypatch.setattr(config, "THREADS_PER_BLOCK", 8)
    calls = []
    real = gpu_greedy.greedy_batched_gpu
    monkeypatch.setattr(gpu_greedy, "greedy_batched_gpu",
                        lambda *a: calls.append(len(a[3])) or real(*a))
    args = ("analyze", trace_file, "-p", "4", "--algo", "wb-libra", "--no-baselines", "--json",
            "--window", "0:400")
    code, cpu, _ = run_cli(capsys, *args)
    assert code == 0
    assert calls == []
    code, gpu, _ = run_cli(capsys, *args, "--device", "gpu")
    assert code == 0 and len(calls) == 1 and 0 < calls[0] <= 65536  # one batch: the stream
    cpu, gpu = json.loads(cpu), json.loads(gpu)
    for key in ("makespan", "communication_bytes", "hop_bytes", "partition", "core_of_cluster"):
        assert gpu[key] == cpu[key], key
    code, _, err = run_cli(capsys, "analyze", trace_file, "-p", "4", "--algo", "metis", "--device",
                           "gpu")
    assert code == 2 and err.strip().splitlines()[-1] == (
        "error: --device gpu runs the greedy family's vertex cuts; the metis edge cut runs on "
        "the CPU: drop --device")


def test_par_with_and_without_the_memory_model(strassen8, monkeypatch):
    # par models the NUMA distance of its tasks' objects on the compact placement's
    # nodes, and those clusters stay where the steering does not run; where it runs
    # (here: STEER at 0), par runs again without the model and the steering goes on
    # from there: the same analysis as without the model, which records the first
    # simulations of both
    import vcut.par_steering as an
    from vcut.clustering import cluster_graph
    from mapping.machine import MEMORY_CYCLES
    from mapping.simulate import simulate
    from mapping.time_aware import compact

    trace, g = strassen8
    m = load_machine("table2:64")
    numa = an.par_numa(m, 64)
    assert np.array_equal(numa[0], np.asarray(m.numa_of_core)[compact(64, m)])
    assert np.array_equal(numa[1], m.numa_latency) and numa[2] == MEMORY_CYCLES

    def analyse():
        return analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False)

    monkeypatch.setattr(an, "PAR_NUMA", True)  # the default, set in case it changes
    monkeypatch.setattr(an, "STEER", np.inf)
    a = analyse()
    assert a.partition["numa_model"] and "memory_models" not in a.partition
    cl, _ = cluster_graph(g, 64, "par", latency=m.mean_message_cycles(32), numa=numa)
    assert np.array_equal(a.clustering.cluster, cl.cluster)
    monkeypatch.setattr(an, "STEER", 0.0)
    both = analyse()
    monkeypatch.setattr(an, "PAR_NUMA", False)
    blind = analyse()
    assert not blind.partition["numa_model"] and "memory_models" not in blind.partition
    assert not both.partition["numa_model"]
    assert np.array_equal(both.clustering.cluster, blind.clustering.cluster)
    assert np.array_equal(both.placement.core, blind.placement.core)
    assert both.result.makespan == blind.result.makespan
    (on, with_model), (off, without) = both.partition["memory_models"]
    assert (on, off) == (1.0, 0.0)
    assert with_model == simulate(cl, compact(64, m), m).makespan
    assert without == blind.partition["priorities"][0][1]
    assert {k: v for k, v in both.partition.items() if k != "memory_models"} == blind.partition


def test_par_priorities_and_prices_are_judged_by_the_simulator(strassen8, monkeypatch):
    # with the threshold at 0 every priority of vcut.parallel.GAMMAS is tried (at the
    # replica price kept at the first) and the first with the chains within each of
    # vcut.parallel.CHAIN_SLACKS protected, then the prices of vcut.parallel.PRICES above
    # that one at the kept priority; each figure must be a fresh simulation of par's
    # clustering on the compact placement; the fastest priority is kept (ties: the
    # first), then each price while within PRICE_TOLERANCE of the fastest seen, and
    # after the first that is not, the geometric mean of it and the last kept one
    import vcut.par_steering as an
    import mapping.time_aware as ta
    from vcut.clustering import cluster_graph
    from vcut.par_steering import PRICE_TOLERANCE
    from mapping.interactions import interactions
    from mapping.simulate import simulate
    from mapping.time_aware import compact
    from vcut.parallel import CHAIN_SLACKS, GAMMAS, PRICES

    trace, g = strassen8
    m = load_machine("table2:64")
    latency = m.mean_message_cycles(32)

    def run(gamma, beta, slack=0.0, scale=1.0):  # (clustering, metrics, simulated makespan)
        cl, metrics = cluster_graph(g, 64, "par", latency=latency * scale, gamma=gamma,
                                    beta=beta, chain_slack=slack)
        sim = simulate(cl, compact(64, m), m, interactions(cl, trace.obj_size).value_bytes)
        return cl, metrics, sim.makespan

    monkeypatch.setattr(an, "STEER", 0.0)
    monkeypatch.setattr(an, "REFINE_SHARES", ())  # the steered clusters, as they are
    monkeypatch.setattr(an, "PAR_NUMA", False)  # one pipeline (the memory model: below)
    monkeypatch.setattr(an, "GRAINS", False)  # the steering's clusters (finalists: below)
    a = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=2)
    # the priorities (and the mapping's starts) run two at a time: the same as one by one
    one = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=1)
    assert one.partition == a.partition and np.array_equal(one.placement.core, a.placement.core)
    assert one.placement.info == a.placement.info and one.result.makespan == a.result.makespan
    tried = a.partition["priorities"]
    assert [t[0] for t in tried] == list(GAMMAS)
    price = a.partition["steered_prices"][0][0]  # kept at the first priority
    first, first_metrics, _ = run(GAMMAS[0], None)
    assert first_metrics["replica_price"] == price
    for gamma, span in tried:
        _, metrics, fresh = run(gamma, None if gamma == GAMMAS[0] else price)
        assert metrics["priority_gamma"] == gamma and span == fresh
    # then the chains protected, at the first priority and price (slower here)
    chains = a.partition["chains"]
    assert [s for s, _ in chains] == list(CHAIN_SLACKS)
    for slack, span in chains:
        _, metrics, fresh = run(GAMMAS[0], price, slack)
        assert metrics["chain_slack"] == slack and span == fresh
    # then every priority at the latencies scaled
    latencies = a.partition["latencies"]
    assert [(x, gm) for x, gm, _ in latencies] == [(x, gm) for x in an.LATENCY_SCALES
                                                   for gm in GAMMAS]
    for scale, gm, span in latencies:
        assert span == run(gm, price, 0.0, scale)[2]
    # the fastest kept, ties to the earlier in that order; one at a scaled latency only
    # when LATENCY_GAIN faster than the fastest at the machine's

    def fastest(tried, chains, latencies):
        every = [(s, gm, 0.0, 1.0) for gm, s in tried] \
            + [(s, GAMMAS[0], sl, 1.0) for sl, s in chains]
        unscaled = min(every, key=lambda c: c[0])
        every += [(s, gm, 0.0, x) for x, gm, s in latencies
                  if s < (1 - an.LATENCY_GAIN) * unscaled[0]]
        return min(every, key=lambda c: c[0])

    best, gamma, slack, scale = fastest(tried, chains, latencies)
    assert (a.partition["priority_gamma"], a.partition["chain_slack"],
            a.partition["latency_scale"]) == (gamma, slack, scale)
    # the prices, the rule replayed on their figures
    steered = a.partition["steered_prices"]
    assert steered[0] == [price, best]
    kept, expect = price, []
    figure = dict((p, span) for p, span in steered[1:])
    for p in (x for x in PRICES if x > price):
        expect.append(p)
        if figure[p] > (1 + PRICE_TOLERANCE) * best:
            mid = float(np.sqrt(kept * p))
            expect.append(mid)
            if figure[mid] <= (1 + PRICE_TOLERANCE) * best:
                kept = mid
            break
        kept, best = p, min(best, figure[p])
    assert [p for p, _ in steered[1:]] == expect
    assert len(expect) >= 2  # strassen8 at p = 64 gets past the model's price
    for p, span in steered[1:]:
        assert span == run(gamma, p, slack, scale)[2]
    assert a.partition["replica_price"] == kept
    assert np.array_equal(a.clustering.cluster, run(gamma, kept, slack, scale)[0].cluster)
    # above the threshold nothing else is tried: the first priority and price stay; nor
    # when four simulations would exceed the simulated-task budget; with room for the
    # priorities only, no price is tried
    monkeypatch.setattr(an, "STEER", np.inf)
    b = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False)
    assert [t[0] for t in b.partition["priorities"]] == [GAMMAS[0]]
    assert np.array_equal(b.clustering.cluster, first.cluster)
    monkeypatch.setattr(an, "STEER", 0.0)
    monkeypatch.setattr(ta, "EVAL_TASKS", 4 * len(first.src) - 1)
    b = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False)
    assert [t[0] for t in b.partition["priorities"]] == [GAMMAS[0]]
    assert np.array_equal(b.clustering.cluster, first.cluster)
    monkeypatch.setattr(ta, "EVAL_TASKS", (len(GAMMAS) + 1) * len(first.src) - 1)
    b = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False)
    assert b.partition["chains"] == b.partition["latencies"] == []  # no room for them
    assert b.partition["steered_prices"] == [[price, min(s for _, s in tried)]]
    assert b.partition["replica_price"] == price
    # room for the first slack, then for both, then for them and the first priority at
    # the first latency scale, none for a price
    for more in (1, 2, 3):
        monkeypatch.setattr(ta, "EVAL_TASKS", (len(GAMMAS) + 1 + more) * len(first.src) - 1)
        b = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False)
        scaled = latencies[:max(more - len(chains), 0)]
        assert b.partition["chains"] == chains[:more] and b.partition["latencies"] == scaled
        fits = fastest(tried, chains[:more], scaled)[0]
        assert b.partition["steered_prices"] == [[price, fits]]


def _longest_through(cl, latency):
    """top + bottom of every vertex, by a plain loop over the tasks (src < dst, the node
    ids an execution order): the longest chain through it, a task costing its weight and
    a message's latency for each end homed on another cluster."""
    src, dst, n = cl.src, cl.dst, cl.n
    weight = cl.weight + latency * ((cl.home[src] != cl.cluster) * 1.0
                                    + (cl.home[dst] != cl.cluster))
    top, bottom = np.zeros(n), np.zeros(n)
    for e in np.lexsort((src, dst)):
        top[dst[e]] = max(top[dst[e]], top[src[e]] + weight[e])
    for e in np.lexsort((dst, src))[::-1]:
        bottom[src[e]] = max(bottom[src[e]], bottom[dst[e]] + weight[e])
    return top + bottom


def test_par_clusters_lose_replicas_only_where_no_time_is_lost(strassen8, monkeypatch):
    # after the steering, par's replicas are dissolved (vcut.quality's passes) among the
    # vertices with the most slack, the shares of REFINE_SHARES in turn; the first whose
    # clusters simulate (compact placement) within REFINE_TOLERANCE of the steered ones,
    # with fewer messages, is kept. Replayed here on the steered clusters (no refinement)
    import vcut.par_steering as an
    from mapping.simulate import simulate
    from mapping.time_aware import compact
    from vcut.metrics import partition_metrics

    trace, g = strassen8
    m = load_machine("table2:64")
    core = compact(64, m)

    def analysis():
        return analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False,
                             jobs=1)

    shares_by_default = an.REFINE_SHARES
    monkeypatch.setattr(an, "REPLAYS", 0)  # the clusters in the order the refinement judged
    monkeypatch.setattr(an, "WINDOW_FREE", False)
    monkeypatch.setattr(an, "REFINE_SHARES", ())
    plain = analysis()
    base = simulate(plain.clustering, core, m, 32)
    assert plain.partition["refined"] == [[0.0, base.makespan, base.messages]]
    assert plain.partition["refined_share"] == 0.0
    reach = _longest_through(plain.clustering, m.mean_message_cycles(32))
    for shares, tolerance in (((0.5,), 1.0), ((1.0, 0.5), -1.0), (shares_by_default, 0.005)):
        monkeypatch.setattr(an, "REFINE_SHARES", shares)
        monkeypatch.setattr(an, "REFINE_TOLERANCE", tolerance)
        a = analysis()
        tried = a.partition["refined"]
        assert tried[0] == [0.0, base.makespan, base.messages]
        assert [t[0] for t in tried[1:]] == list(shares[:len(tried) - 1])
        ok = [t for t in tried[1:] if t[1] <= (1 + tolerance) * base.makespan
              and t[2] < base.messages]
        if tolerance < 0:  # nothing is kept, every share was tried
            assert ok == [] and len(tried) == 1 + len(shares)
            assert a.partition["refined_share"] == 0.0
            assert np.array_equal(a.clustering.cluster, plain.clustering.cluster)
            continue
        assert ok == tried[-1:] and a.partition["refined_share"] == tried[-1][0]
        cl = a.clustering
        fresh = simulate(cl, core, m, 32)
        assert [fresh.makespan, fresh.messages] == tried[-1][1:]
        assert fresh.messages < base.messages
        # the same tasks in the same schedule; none of them on a cluster heavier than
        # the steered clusters' heaviest
        for key in ("src", "dst", "weight", "schedule"):
            assert np.array_equal(getattr(cl, key), getattr(plain.clustering, key)), key
        load = np.bincount(cl.cluster, weights=cl.weight, minlength=64)
        before = np.bincount(plain.clustering.cluster, weights=cl.weight, minlength=64)
        assert load.max() <= before.max() * (1 + 1e-12)
        # a task that moved touches a vertex among the share with the most slack
        share = tried[-1][0]
        used = np.flatnonzero(plain.clustering.home >= 0)  # the vertices with tasks
        cut = np.sort(reach[used])[int(share * len(used)) - 1]
        moved = np.flatnonzero(cl.cluster != plain.clustering.cluster)
        assert len(moved) > 0
        assert np.all((reach[cl.src[moved]] <= cut) | (reach[cl.dst[moved]] <= cut))
        # every vertex's home holds one of its tasks, and stays where it still does
        holds = set(zip(np.concatenate([cl.src, cl.dst]).tolist(),
                        np.concatenate([cl.cluster, cl.cluster]).tolist()))
        used = np.flatnonzero(cl.home >= 0)
        assert all((v, int(cl.home[v])) in holds for v in used.tolist())
        same = [v for v in used.tolist() if (v, int(plain.clustering.home[v])) in holds]
        assert np.array_equal(cl.home[same], plain.clustering.home[same])
        pm = partition_metrics(cl.src, cl.dst, cl.weight, cl.cluster, g.n, 64)
        assert a.partition["replication_factor"] == pm.replication_factor
        assert a.partition["vertex_copies"] < plain.partition["vertex_copies"]
    # with no room in the simulated-task budget for a share's simulation, nothing is
    # ranked or refined (nor the incidence built)
    import mapping.time_aware as ta
    from vcut import expansion_kernels

    monkeypatch.setattr(ta, "EVAL_TASKS", 2 * len(plain.clustering.src) - 1)
    monkeypatch.setattr(expansion_kernels, "incidence", None)  # a call would fail
    a = analysis()  # (the steering tries fewer prices in that budget too)
    fresh = simulate(a.clustering, core, m, 32)
    assert a.partition["refined"] == [[0.0, fresh.makespan, fresh.messages]]
    assert a.partition["refined_share"] == 0.0


def test_the_summary_formats_par_settings_tried():
    from mapping.report import metric_text as _figure

    assert _figure([[0.0, 18987.96], [0.25, 18621.5]]) == "{0: 18,988 cycles, 0.25: 18,622 cycles}"
    assert _figure([[0.0, 26170.5, 136739], [0.25, 26175.08, 124764]]) == (
        "{0: 26,170 cycles, 136,739 messages; 0.25: 26,175 cycles, 124,764 messages}")
    assert _figure(1.30141) == "1.3014"
    assert _figure(85633) == "85633"


def test_par_clusters_replay_their_simulated_order(strassen8, monkeypatch):
    # after the mapping (1.14x the bound at p = 64, above STEER): every cluster's tasks in
    # the order of their finish times in a simulation without an issue window (ties: the
    # order they had), which the windowed cores then run exactly as the window-free ones
    # did (the same finish time for every task); then, from the mapping's order, up to
    # REPLAYS re-sorts by the last simulation's finish times, each from the last, until an
    # order reproduces itself; the fastest order is kept, the placement is the mapping's.
    # Replayed here by hand from the analysis without either
    import vcut.par_steering as an
    from mapping.simulate import simulate

    trace, g = strassen8
    m = load_machine("table2:64")

    def analysis():
        return analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False,
                             jobs=1)

    def by_finish(cur, r):
        before = list(range(n_tasks)) if cur.order is None else cur.order.tolist()
        pos = {e: i for i, e in enumerate(before)}
        return np.array(sorted(range(n_tasks), key=lambda e: (r.finish[e], pos[e])))

    def by_hand(window_free, replays=3):
        spans, orders = [], []
        if window_free:
            free = simulate(b.clustering, core, replace(m, issue_window=n_tasks), vb)
            order = by_finish(b.clustering, free)
            fr = simulate(replace(b.clustering, schedule=order), core, m, vb)
            assert fr.makespan == free.makespan and np.array_equal(fr.finish, free.finish)
            spans.append(fr.makespan)
            orders.append(order)
        cur, r = b.clustering, b.result
        for _ in range(replays):
            order = by_finish(cur, r)
            if cur.order is not None and order.tolist() == cur.order.tolist():
                break
            cur = replace(cur, schedule=order)
            r = simulate(cur, core, m, vb)
            spans.append(r.makespan)
            orders.append(order)
        return spans, orders

    a = analysis()
    monkeypatch.setattr(an, "REPLAYS", 0)
    monkeypatch.setattr(an, "WINDOW_FREE", False)
    b = analysis()
    assert "replays" not in b.partition
    assert np.array_equal(a.placement.core, b.placement.core)
    assert np.array_equal(a.clustering.cluster, b.clustering.cluster)
    core, vb, n_tasks = b.placement.core, b.interactions.value_bytes, len(b.clustering.src)
    spans, orders = by_hand(True)
    assert a.partition["replays"] == spans and a.partition["replays_from"] == b.result.makespan
    best = min([b.result.makespan] + spans)
    assert a.result.makespan == best < b.result.makespan
    kept = a.partition["replayed"]
    assert kept == 1 + spans.index(best)
    assert np.array_equal(a.clustering.schedule, orders[kept - 1])
    again = simulate(a.clustering, a.placement.core, m, a.interactions.value_bytes)
    assert again.makespan == a.result.makespan
    # the replays alone (no window-free order)
    monkeypatch.setattr(an, "REPLAYS", 3)
    at = b.result.makespan / an.STEER
    assert an.replay(b.clustering, core, m, b.result, vb, at * 0.999, print)[2] == \
        by_hand(False)[0]
    # within STEER of the bound after the mapping: no replay; the simulation budget (in
    # simulations of the clusters, the window-free one counting twice) cuts the replays
    # first, then the window-free order
    monkeypatch.setattr(an, "WINDOW_FREE", True)
    kept, res, tried, n = an.replay(b.clustering, core, m, b.result, vb, at, print)
    assert kept is b.clustering and res is b.result and (tried, n) == ([], 0)
    assert an.replay(b.clustering, core, m, b.result, vb, at * 0.999, print)[2] == spans
    import mapping.time_aware as ta
    for room, want in ((4, by_hand(True, 1)[0]), (3, spans[:1]), (2, by_hand(False, 2)[0]),
                       (0, [])):
        monkeypatch.setattr(ta, "EVAL_TASKS", room * n_tasks + n_tasks - 1)
        assert an.replay(b.clustering, core, m, b.result, vb, at * 0.999, print)[2] == want


def _extra(name):
    """Trace and model-weighted graph of samples/NAME.c (samples/extra.json)."""
    from frontend import compile_program, trace_program
    from ir_graph import build_graph

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    trace = trace_program(compile_program([os.path.join(root, "samples", f"{name}.c")]),
                          timing=False)
    return trace, build_graph(trace, weights="model")


@pytest.mark.parametrize("name, slack, scale", [("hashtable", 0.3, 1.0), ("dcsum", 0.0, 0.5)])
def test_the_steering_keeps_chains_or_a_scaled_latency_where_they_win(name, slack, scale,
                                                                      monkeypatch):
    # p = 64: the hash table's counters need several chains protected, dcsum a quarter of
    # the latency charged (its compact simulation 10 % faster, past LATENCY_GAIN); the
    # clusters kept are par's at that slack and latency, and every figure recorded is a
    # fresh simulation of its clustering on the compact placement
    import vcut.par_steering as an
    from vcut.clustering import cluster_graph
    from mapping.interactions import interactions
    from mapping.simulate import simulate
    from mapping.time_aware import compact
    from vcut.parallel import CHAIN_SLACKS

    trace, g = _extra(name)
    m = load_machine("table2:64")
    latency = m.mean_message_cycles(32)
    monkeypatch.setattr(an, "GRAINS", False)  # the steering's clusters, not a finalist
    a = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False)
    part = a.partition
    assert (part["chain_slack"], part["latency_scale"]) == (slack, scale)
    assert [s for s, _ in part["chains"]] == list(CHAIN_SLACKS)
    price = part["steered_prices"][0][0]

    def sim(gamma, slack, scale):
        cl, _ = cluster_graph(g, 64, "par", latency=latency * scale, beta=price, gamma=gamma,
                              chain_slack=slack)
        return simulate(cl, compact(64, m), m, interactions(cl, trace.obj_size).value_bytes)

    unscaled = min(s for _, s in part["priorities"] + part["chains"])
    if slack:  # the chains beat every priority
        span = dict(part["chains"])[slack]
        assert span == sim(0.0, slack, 1.0).makespan and span == unscaled
        assert all(s >= (1 - an.LATENCY_GAIN) * unscaled for _, _, s in part["latencies"])
    else:  # the scaled latency at the kept priority beats them by LATENCY_GAIN
        gamma = part["priority_gamma"]
        span = {gm: s for x, gm, s in part["latencies"]}[gamma]
        assert span == sim(gamma, 0.0, scale).makespan
        assert span < (1 - an.LATENCY_GAIN) * unscaled
    assert part["steered_prices"][0][1] == span
    assert a.result.makespan <= 1.25 * a.bound.lower_bound


def test_the_grain_finalist_rule():
    # whole block runs (or calls) replace the other clusters when faster with fewer
    # messages, or slower by at most GRAIN_RATE times the share of messages they save;
    # with more messages, only when faster by more than GRAIN_RATE times the share added
    from types import SimpleNamespace

    import vcut.par_steering as an

    def pick(plain, grains, bound=90.0, unit="runs"):  # (makespan, messages) each
        runs = [("cl", {"m": k, "grains_kept": "earlier"}, None, None, None,
                 SimpleNamespace(makespan=s, messages=n), k)
                for k, (s, n) in (("plain", plain), ("grains", grains))]
        out = an.finalist(*runs, bound, unit)
        assert out[6] == out[1]["m"]
        name = "grain" if unit == "runs" else "call"
        return out[1]["m"], out[1][f"{name}_finalist"], out[1][f"{name}s_kept"]

    assert an.GRAIN_RATE == 0.2
    assert pick((100.0, 1000), (99.0, 900)) == ("grains", [[100.0, 1000], [99.0, 900]], True)
    # twice the messages are worth 20 % of the time: 79 kept, 80 or 99 not
    assert pick((100.0, 1000), (99.0, 2000)) == ("plain", [[100.0, 1000], [99.0, 2000]], False)
    assert pick((100.0, 1000), (80.0, 2000))[0] == "plain"
    assert pick((100.0, 1000), (79.0, 2000))[0] == "grains"
    # 34 % fewer messages are worth 6.8 % more time: 105 kept, 107 not
    assert pick((100.0, 1000), (105.0, 660))[0] == "grains"
    assert pick((100.0, 1000), (107.0, 660)) == ("plain", [[100.0, 1000], [107.0, 660]], False)
    assert pick((100.0, 1000), (100.0, 1000))[0] == "plain"  # a tie: no messages saved
    assert pick((100.0, 1000), (99.9, 1000))[0] == "grains"  # as many messages, faster
    # never slower beyond GRAIN_BOUND times the lower bound (1.25 x 84 = 105)
    assert an.GRAIN_BOUND == 1.25
    assert pick((100.0, 1000), (105.0, 660), bound=84.0)[0] == "grains"
    assert pick((100.0, 1000), (105.0, 660), bound=83.9)[0] == "plain"
    # faster with fewer messages: whatever the bound; 20 % more messages: 4 % faster
    # within GRAIN_BOUND times the bound (1.25 x 90 = 112.5)
    assert pick((110.0, 1000), (109.0, 900), bound=50.0)[0] == "grains"
    assert pick((110.0, 1000), (105.5, 1200))[0] == "grains"
    assert pick((110.0, 1000), (105.7, 1200))[0] == "plain"
    # past it, any time saved (110 > 1.25 x 87.9)
    assert pick((110.0, 1000), (109.9, 3000), bound=87.9)[0] == "grains"
    assert pick((110.0, 1000), (110.0, 3000), bound=87.9)[0] == "plain"
    assert pick((110.0, 1000), (109.9, 3000), bound=88.0)[0] == "plain"
    assert pick((100.0, 0), (100.5, 0))[0] == "plain"
    # calls: their own fields; the block runs' kept from the clusters they were set against
    kept, figures, calls = pick((100.0, 1000), (99.0, 900), unit="calls")
    assert (kept, figures, calls) == ("grains", [[100.0, 1000], [99.0, 900]], True)
    runs = [("cl", {"m": k, **extra}, None, None, None, SimpleNamespace(makespan=s, messages=n), k)
            for k, s, n, extra in (("plain", 100.0, 1000, {"grains_kept": True,
                                                           "grain_finalist": [[1, 2], [3, 4]]}),
                                   ("calls", 99.0, 900, {}))]
    out = an.finalist(*runs, 90.0, "calls")[1]
    assert out == {"m": "calls", "grains_kept": True, "grain_finalist": [[1, 2], [3, 4]],
                   "call_finalist": [[100.0, 1000], [99.0, 900]], "calls_kept": True}


def test_par_on_whole_block_runs_is_mapped_as_a_finalist(strassen8, monkeypatch):
    # where the steering runs, par also runs on whole block runs and on whole calls at
    # every priority (at the replica price the steering kept); the fastest of each on the
    # compact placement, and the fastest at the latency the steering did not keep, are
    # refined and mapped, and the finalist rule decides on them one after another
    import vcut.par_steering as an
    from vcut.clustering import cluster_graph
    from mapping.simulate import simulate
    from mapping.time_aware import compact
    from vcut.parallel import CALL_GRAIN_SHARE, CALL_SHARE, GAMMAS, GRAIN_SHARE

    trace, g = strassen8
    m = load_machine("table2:64")
    monkeypatch.setattr(an, "STEER", 0.0)
    a = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=1)
    # the finalists mapped side by side: the same figures
    two = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=2)
    assert two.partition == a.partition and np.array_equal(two.placement.core, a.placement.core)
    assert (two.result.makespan, two.result.messages) == (a.result.makespan, a.result.messages)
    monkeypatch.setattr(an, "GRAINS", False)
    plain = analyze_graph(g, 64, "par", m, object_bytes=trace.obj_size, baselines=False, jobs=1)
    fields = an.FINALIST_FIELDS
    assert not {"grain_runs", "grain_calls", *(k for f in fields.values() for k in f)} \
        & set(plain.partition)
    price = plain.partition["replica_price"]  # the steering's, which the grains ran at
    scale = plain.partition["latency_scale"]  # the steering's, which the calls ran at
    for key, unit, share, latency in (("grain_runs", "runs", GRAIN_SHARE, None),
                                      ("grain_calls", "calls", CALL_GRAIN_SHARE,
                                       scale * m.mean_message_cycles(32))):
        assert [r[0] for r in a.partition[key]] == list(GAMMAS)
        for gamma, span, messages in a.partition[key]:
            cl, metrics = cluster_graph(g, 64, "par", latency=latency, gamma=gamma, beta=price,
                                        grains=share, grain_unit=unit)
            assert metrics["grains"] > 0 and metrics["grain_share"] == share
            assert metrics.get("call_share") == (CALL_SHARE if unit == "calls" else None)
            sim = simulate(cl, compact(64, m), m)
            assert (span, messages) == (sim.makespan, sim.messages)

    def rule(a_, b_):  # the finalist rule on (makespan, messages)
        saved = 1 - b_[1] / a_[1]
        limit = a_[0] * (1 + an.GRAIN_RATE * saved)
        near = an.GRAIN_BOUND * a.bound.lower_bound
        if saved > 0:
            return b_[0] <= limit and (b_[0] < a_[0] or b_[0] <= near)
        return b_[0] < limit or (a_[0] > near and b_[0] < a_[0])

    # the other latency, then whole block runs, then whole calls, each against the
    # clusters kept so far (the steering's first)
    assert [u for u in fields if fields[u][0] in a.partition] == ["latency", "runs", "calls"]
    current = (plain.result.makespan, plain.result.messages)
    for unit, (found, took) in fields.items():
        before, fig = map(tuple, a.partition[found])
        assert before == current
        assert a.partition[took] == rule(before, fig)
        current = fig if rule(before, fig) else before
    assert (a.result.makespan, a.result.messages) == current
    if current == (plain.result.makespan, plain.result.messages):
        assert np.array_equal(a.clustering.cluster, plain.clustering.cluster)


def test_utilization_is_reported_for_the_cores_in_use_and_for_all_cores(trace_file, tmp_path,
                                                                       capsys):
    # 2 clusters on the 4 cores of mesh:2x2: two cores stay empty. The summary, --json,
    # mapping.json and the report each give both means, labelled; none gives the bare
    # mean over all cores as "mean utilisation".
    out = str(tmp_path / "u")
    argv = ("analyze", trace_file, "-p", "2", "--machine", "mesh:2x2", "--algo", "wb-libra",
            "--mapping", "round-robin", "--no-baselines")
    code, stdout, err = run_cli(capsys, *argv, "-o", out, "--json")
    assert code == 0, err
    s = json.loads(stdout)
    doc = json.load(open(os.path.join(out, "mapping.json")))
    util = [c["utilization"] for c in doc["cores"]]
    used = [c["utilization"] for c in doc["cores"] if c["clusters"]]
    assert s["cores_used"] == len(used) == 2 and "mean_utilization" not in s
    assert s["utilization_used_cores"] == pytest.approx(sum(used) / 2, rel=1e-12)
    assert s["utilization_all_cores"] == pytest.approx(sum(util) / 4, rel=1e-12)
    assert s["utilization_all_cores"] == pytest.approx(s["utilization_used_cores"] / 2,
                                                       rel=1e-12)
    metrics = doc["metrics"]
    assert "mean_utilization" not in metrics
    assert [metrics[k] for k in ("cores_used", "utilization_used_cores",
                                 "utilization_all_cores")] == \
        [s[k] for k in ("cores_used", "utilization_used_cores", "utilization_all_cores")]
    used_row = (f"{s['utilization_used_cores']:.3f} (mean over the 2 of 4 cores that hold "
                "clusters)")
    all_row = f"{s['utilization_all_cores']:.3f} (mean over all 4 cores, 2 of them empty)"
    html = open(os.path.join(out, "report.html")).read()
    assert f"<tr><th>utilisation of the cores in use</th><td>{used_row}</td></tr>" in html
    assert f"<tr><th>utilisation of all cores</th><td>{all_row}</td></tr>" in html
    assert "mean core utilisation" not in html
    code, stdout, err = run_cli(capsys, *argv)
    assert code == 0, err
    lines = stdout.splitlines()
    assert any(ln.startswith("utilisation of the cores in use") and ln.endswith(used_row)
               for ln in lines)
    assert any(ln.startswith("utilisation of all cores") and ln.endswith(all_row)
               for ln in lines)
    assert "mean core utilisation" not in stdout


def test_compare_refuses_an_unknown_method_before_the_program_runs(capsys, monkeypatch):
    """The names are checked before tracing: the program is never compiled or run."""
    import vcut.pipeline.comparison

    def no_input(*a, **k):
        raise AssertionError("the program was traced before the names were checked")

    monkeypatch.setattr(vcut.pipeline.comparison, "analysis_input", no_input)
    code, _, err = run_cli(capsys, "compare", "samples/strassen.c", "-p", "2",
                           "--methods", "pg,metiss")
    assert code == 2 and err.startswith("error: unknown partitioning method 'metiss'; use one of")
    from vcut.pipeline import AnalysisOptions, compare  # the API: argparse has the choices
    from vcut_base.errors import InputError

    with pytest.raises(InputError, match="^unknown mapping 'fastest'"):
        compare(["samples/strassen.c"], AnalysisOptions(ps=(2,), mapping="fastest"))


def test_the_simulators_layouts_are_freed_when_the_analysis_returns(strassen8, monkeypatch):
    # the layouts (`mapping.simulate.positioned`) serve the simulations alone: once
    # analyze_graph returns, none is kept (the control models and the report that follow
    # have that memory), and a later simulation lays the clustering out again
    import gc
    import importlib
    import weakref

    ms = importlib.import_module("mapping.simulate")  # the module (the package exports
    # a function of that name)

    trace, g = strassen8
    made = []
    real = ms._position

    def recording(cl):
        pv = real(cl)
        made.append([weakref.ref(getattr(pv, f)) for f in ("cluster", "weight", "obj", "src",
                                                            "dst", "home", "vorder", "ptr",
                                                            "rep_cluster", "n_in", "n_out",
                                                            "vertex")])
        return pv

    monkeypatch.setattr(ms, "_position", recording)
    m = load_machine("mesh:4x4")
    a = analyze_graph(g, 8, "par", m, object_bytes=trace.obj_size, jobs=1)
    assert made  # par's schedule: the simulations ran on layouts
    assert "_positioned" not in vars(a.clustering)
    gc.collect()
    kept = {id(v) for v in vars(a.clustering).values() if isinstance(v, np.ndarray)}
    alive = [r() for refs in made for r in refs if r() is not None and id(r()) not in kept]
    assert alive == []
    again = ms.simulate(a.clustering, a.placement.core, m, a.interactions.value_bytes)
    assert again.makespan == a.result.makespan
    assert "_positioned" in vars(a.clustering)
