"""bench/bench_scale.py's per-phase script runs end to end (it failed unnoticed once: the
baseline mappings' phase called the time-aware mapping without its clustering)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import bench_scale  # noqa: E402


def _phases(tmp_path, algo, baselines):
    """The per-phase script's rows on strassen 8 x 8 at p = 8."""
    trace = tmp_path / "strassen8.npz"
    subprocess.run([sys.executable, "-m", "vcut.cli", "trace", str(ROOT / "samples" / "strassen.c"),
                    "-D", "N=8", "--no-timing", "-o", str(trace)], cwd=ROOT, check=True,
                   capture_output=True)
    code = bench_scale._PHASES.format(root=str(ROOT), trace=str(trace), p=8, baselines=baselines,
                                      spill=None, algo=algo)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_phase_script_measures_every_phase_on_a_small_trace(tmp_path):
    doc = _phases(tmp_path, "wb-libra", True)
    assert [r["phase"] for r in doc["rows"]] == ["load trace", "graph", "partition",
                                                 "interactions", "mapping", "simulation",
                                                 "baselines"]
    assert doc["nodes"] > 0 and doc["edges"] > 0
    assert all(r["seconds"] >= 0 and r["peak"] > 0 for r in doc["rows"])
    # the simulation's count is its events: the tasks (edges) plus the messages
    assert doc["rows"][5]["count"] >= doc["edges"]


def test_phase_script_with_par_times_the_simulator_layout(tmp_path):
    doc = _phases(tmp_path, "par", False)
    assert [r["phase"] for r in doc["rows"]] == ["load trace", "graph", "partition",
                                                 "interactions", "mapping", "layout",
                                                 "simulation"]
    assert doc["rows"][6]["count"] >= doc["edges"]
