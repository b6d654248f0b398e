"""bench/bench_quality.py's tables (issue 65): the large-graph rows beside Mt-KaHyPar's
reference runs, the balanced-minimum column and the reference file's reader, on made-up
cells whose figures are worked out by hand."""

import json

import numpy as np
import pytest

from tests.helpers import bench_module


def test_min_balanced_skips_the_unbalanced_references():
    t = bench_module("_quality_tables")
    # HEP τ=100 has the lowest RF but balance 1.20: the balanced minimum is NE's 1.10
    c = {"ref_ne": (1.10, 1.01, 0.1), "ref_hep10": (1.12, 1.00, 0.1),
         "ref_hep100": (1.05, 1.20, 0.1)}
    assert t.min_balanced(c) == 1.10
    assert t.min_balanced(dict(c, ref_hep100=(1.05, 1.03, 0.1))) == 1.05
    assert t.min_balanced({"ref_ne": (1.1, 1.5, 0.1), "ref_hep10": None,
                           "ref_hep100": None}) is None


def test_large_row_and_summary_of_made_up_cells():
    t = bench_module("_quality_tables")
    done = {"graph": "g", "k": 32, "best": (1.2, 1.02, 0.5), "ne": (1.5, 1.0, 0.25),
            "hep": (1.6, 1.1, 0.2),
            "mtk": {"status": "ok", "rf": 1.25, "balance": 1.01, "seconds": 50.0}}
    # best / min(balanced ne, hep) = 1.2 / 1.5 (hep's balance 1.1 is over 1.03) = 0.800;
    # best / MtK = 1.2 / 1.25 = 0.960; time / ne = 0.5 / 0.25 = 2.00; / MtK = 0.5 / 50
    assert t.large_row(done) == ("| g | 32 | 1.2000 / 1.020 / 0.50 | 1.5000 / 1.000 / 0.25 | "
                                 "1.6000 / 1.100 / 0.20 | 1.2500 / 1.010 / 50.00 | 0.800 | "
                                 "0.960 | 2.00 | 0.0100 |")
    over = dict(done, k=128, best=(1.4, 1.03, 2.0), mtk={"status": "over 1800 s",
                                                          "seconds": 1800.2})
    # Mt-KaHyPar did not finish: no RF ratio, our time against its limit, 2 / 1800
    assert t.large_row(over).endswith("| over 1800 s | 0.933 | — | 8.00 | < 0.0011 |")
    worse = dict(done, graph="h", best=(1.3, 1.0, 10.0))
    assert t.large_summary([done, over, worse]) == [
        "- best ÷ Mt-KaHyPar ≤ 1.00: 1 / 2 cells where Mt-KaHyPar finished (geometric mean "
        f"{np.sqrt(0.96 * 1.04):.3f}); time ≤ 1/10 of Mt-KaHyPar's: 1 / 2",
        "- balance ≤ 1.03: 3 / 3"]
    # with the strong preset (--presets): its RF against Mt-KaHyPar's where that finished,
    # 1.125 / 1.25 = 0.900 and 1.352 / 1.3 = 1.040; balance 1.02 and 1.031 (over)
    strong = [dict(done, best_strong=(1.125, 1.02, 3.0)),
              dict(over, best_strong=(1.0, 1.0, 4.0)),
              dict(worse, best_strong=(1.352, 1.031, 20.0), mtk=dict(done["mtk"], rf=1.3))]
    assert t.large_summary(strong)[2] == (
        "- `--preset strong` ÷ Mt-KaHyPar: g k = 32 0.900 (3.00 s), h k = 32 1.040 (20.00 s); "
        f"geometric mean {np.sqrt(0.9 * 1.04):.3f}; balance ≤ 1.03: 1 / 2")


def test_read_large_reference(tmp_path):
    r = bench_module("_reference")
    assert r.read_large_reference(str(tmp_path / "missing.json")) == {}
    path = tmp_path / "ref.json"
    path.write_text(json.dumps({"cells": {"g": {"32": {"status": "ok", "rf": 1.2},
                                                "128": {"status": "over 60 s"}}}}))
    assert r.read_large_reference(str(path)) == {"g": {32: {"status": "ok", "rf": 1.2},
                                                       128: {"status": "over 60 s"}}}


def test_the_kept_reference_file_has_every_large_cell():
    """bench/reference_large.json holds a finished Mt-KaHyPar run (quality preset, ε = 0.03)
    of each large graph at k = 32 and 128, each balanced within 1.03."""
    r = bench_module("_reference")
    ref = r.read_large_reference()
    assert sorted(ref) == sorted(bench_module("mtkahypar_large").LARGE)
    for per in ref.values():
        assert sorted(per) == [32, 128]
        for c in per.values():
            assert c["status"] == "ok" and c["preset"] == "quality" and c["epsilon"] == 0.03
            assert 1.0 <= c["rf"] and 1.0 <= c["balance"] <= 1.03 + 1e-9


@pytest.mark.parametrize("k", [2, 3])
def test_replication_and_balance_of_the_reference_runs(k):
    """`bench_quality.rf_and_balance` (the part files' and the reference runs' figures) on
    a path 0-1-2-3 whose edges go to clusters 0, 0, 1: vertex 2 is in both clusters, so 5
    replicas over 4 vertices; loads 2 and 1."""
    m = bench_module("bench_quality")
    src, dst = np.array([0, 1, 2]), np.array([1, 2, 3])
    rf, bal = m.rf_and_balance(src, dst, np.array([0, 0, 1]), k)
    assert rf == 5 / 4 and bal == 2 / (3 / k)


def test_strong_stages_table_of_made_up_cells():
    report = bench_module("report")
    # two cells beside Mt-KaHyPar (RF 1.0 and 2.0, 10 s and 40 s) and one without it
    cells = [
        {"graph": "a", "k": 8, "seconds": 4.0, "rf_candidates": 1.2, "rf_cycles": 1.1,
         "rf_final": 1.0, "multilevel_assign_seconds": 1.0, "vcycle_refine_seconds": 2.0,
         "perturb_refine_seconds": 1.0, "mtk": [1.0, 1.0, 10.0]},
        {"graph": "b", "k": 8, "seconds": 4.0, "rf_candidates": 2.0, "rf_cycles": 2.0,
         "rf_final": 1.8, "multilevel_assign_seconds": 0.5, "vcycle_refine_seconds": 1.0,
         "perturb_refine_seconds": 2.0, "mtk": [2.0, 1.0, 40.0]},
        {"graph": "c", "k": 8, "seconds": 1.0, "rf_candidates": 1.0, "rf_cycles": 1.0,
         "rf_final": 1.0, "multilevel_assign_seconds": 0.1, "vcycle_refine_seconds": 0.1,
         "perturb_refine_seconds": 0.1, "mtk": None},
    ]
    lines = report.strong_stages_section({"cells": cells, "fm_stall": 64})
    # as run: RF ratios 1.0 and 0.9 (geometric mean sqrt(0.9)), times 4/10 and 4/40
    assert lines[2] == f"| the iterated search (as run) | {0.9 ** 0.5:.4f} | 2 / 2 | " \
        f"{(0.4 * 0.1) ** 0.5:.3f} |"
    # stopped before the search: RF 1.1 and 1.0 (one above), times 3/10 and 2/40
    assert lines[3] == f"| the multilevel cycles | {1.1 ** 0.5:.4f} | 1 / 2 | " \
        f"{(0.3 * 0.05) ** 0.5:.3f} |"
    # and before the cycles: RF 1.2 and 1.0, times 1/10 and 1/40
    assert lines[4] == f"| the candidates, refined | {1.2 ** 0.5:.4f} | 1 / 2 | " \
        f"{(0.1 * 0.025) ** 0.5:.3f} |"
    assert lines[6].endswith(": 64 (`vcut.cut_levels.VCYCLE_FM_STALL`; -1: none)")
    # shares: cycles 2/4 and 1/4, the cut 1/4 and 0.5/4, the search 1/4 and 2/4
    assert lines[7].endswith(f"multilevel cycles {(0.5 * 0.25) ** 0.5:.2f}, multilevel cut "
                             f"{(0.25 * 0.125) ** 0.5:.2f}, iterated search "
                             f"{(0.25 * 0.5) ** 0.5:.2f}")


def test_mtkahypar_presets_table_of_made_up_cells():
    report = bench_module("report")
    # two cells: Mt-KaHyPar quality RF 1.0 in 10 s and 2.0 in 20 s; its default 1.1 in 5 s
    # and 2.0 in 10 s; vcut strong 0.9 in 1 s (balance 1.05) and 2.2 in 4 s; the reference
    # file has Mt-KaHyPar only in the first cell (RF 0.8), NE in both (2 s, and 1 ms, taken
    # as 5 ms); vcut's default preset did not run
    cells = [
        {"graph": "a", "k": 8, "ref_mtk": [0.8, 1.0, 99.0], "ref_ne": [1.5, 1.0, 2.0],
         "mt_quality": [1.0, 1.01, 10.0], "mt_default": [1.1, 1.0, 5.0],
         "best_strong": [0.9, 1.05, 1.0]},
        {"graph": "b", "k": 32, "ref_mtk": None, "ref_ne": [3.0, 1.0, 0.001],
         "mt_quality": [2.0, 1.0, 20.0],
         "mt_default": [2.0, 1.03, 10.0], "best_strong": [2.2, 1.0, 4.0]},
    ]
    lines = report.frontier_section({"cells": cells, "threads": 2})
    assert len(lines) == 5 + 2  # header, rule, three rows, a blank line and the note
    # quality: time 10 / 2 and 20 / 0.005 beside NE
    assert lines[2] == "| Mt-KaHyPar quality | 1.0000 | 2 / 2 | 1.000 | 1.2500 | " \
        f"{(5 * 4000) ** 0.5:.1f} | 2 / 2 |"
    # default: RF 1.1 and 1.0, time 0.5 and 0.5, RF 1.1 / 0.8 beside the reference, time
    # 5 / 2 and 10 / 0.005 beside NE
    assert lines[3] == f"| Mt-KaHyPar default | {1.1 ** 0.5:.4f} | 1 / 2 | 0.500 | " \
        f"{1.1 / 0.8:.4f} | {(2.5 * 2000) ** 0.5:.1f} | 2 / 2 |"
    # strong: RF 0.9 and 1.1 (one at or below), time 0.1 and 0.2, one cell unbalanced
    assert lines[4] == f"| vcut best strong | {(0.9 * 1.1) ** 0.5:.4f} | 1 / 2 | " \
        f"{(0.1 * 0.2) ** 0.5:.3f} | {0.9 / 0.8:.4f} | {(0.5 * 800) ** 0.5:.1f} | 1 / 2 |"
    assert "2 cells" in lines[6] and "on 2 threads" in lines[6]


def test_mtkahypar_presets_table_without_reference_results():
    # a k the reference file has no column for: its two reference ratios are a dash
    cells = [{"graph": "a", "k": 16, "mt_quality": [1.0, 1.0, 2.0],
              "mt_default": [1.2, 1.0, 1.0]}]
    lines = bench_module("report").frontier_section({"cells": cells, "threads": 1})
    assert lines[2] == "| Mt-KaHyPar quality | 1.0000 | 1 / 1 | 1.000 | – | – | 1 / 1 |"
    assert lines[3] == "| Mt-KaHyPar default | 1.2000 | 0 / 1 | 0.500 | – | – | 1 / 1 |"
