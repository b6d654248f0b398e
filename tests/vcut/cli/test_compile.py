"""``vcut compile`` and the first-run note (issue 63).

Each subprocess gets its own empty ``NUMBA_CACHE_DIR``: a cold cache, as after an install.
The whole ``vcut compile`` takes minutes on two cores, so the tests compile one group
(``--only formats``); bench/ times the full run.
"""

import json
import os
import subprocess
import sys

import pytest

from vcut.cli import COMPILE_NOTE
from vcut.warmup import GROUPS, WorkloadFailed, warm_up, workloads


def _vcut(cache, *args):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("VCUT_COMPILE_NOTE", None)
    return subprocess.run([sys.executable, "-m", "vcut", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def _cached_files(cache):
    return sum(len(files) for _, _, files in os.walk(cache))


def test_note_on_a_cold_cache_only(tmp_path):
    graph = tmp_path / "g.edgelist"
    graph.write_text("0 1\n1 2\n2 3\n3 0\n")
    cache = tmp_path / "cache"
    cold = _vcut(cache, "stats", str(graph), "--json")
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(COMPILE_NOTE) == 1
    assert json.loads(cold.stdout)["edges"] == 4  # stdout: the JSON object only
    warm = _vcut(cache, "stats", str(graph))
    assert warm.returncode == 0, warm.stderr
    assert COMPILE_NOTE not in warm.stderr + warm.stdout
    helped = _vcut(tmp_path / "other", "stats", "--help")
    assert COMPILE_NOTE not in helped.stderr + helped.stdout


def test_compile_fills_the_cache_for_later_commands(tmp_path):
    cache = tmp_path / "cache"
    first = _vcut(cache, "compile", "--only", "formats", "--json", "--progress", "lines")
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)
    assert done["workloads"] == len(workloads(["formats"]))
    assert done["kernels_compiled"] > 0 and done["cache_dir"] == str(cache)
    assert f"[{done['workloads']}/{done['workloads']}] stats g.lg" in first.stderr
    assert COMPILE_NOTE not in first.stderr
    files = _cached_files(cache)
    again = _vcut(cache, "compile", "--only", "formats", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["kernels_compiled"] == 0
    assert json.loads(again.stdout)["kernels_loaded"] > 0
    assert again.stderr == ""
    graph = tmp_path / "g.txt"
    graph.write_text("# a comment\n0\t1\n1\t2\n2\t0\n")
    stats = _vcut(cache, "stats", str(graph))  # what the group compiled for it
    assert stats.returncode == 0, stats.stderr
    assert COMPILE_NOTE not in stats.stderr
    assert _cached_files(cache) == files


def test_an_unknown_group_is_refused(tmp_path):
    done = _vcut(tmp_path / "cache", "compile", "--only", "formats,nope")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: --only: unknown group nope; use {', '.join(GROUPS)}")


def test_the_cli_spells_the_library_groups():
    from vcut.cli import compile as command

    assert command.GROUPS == GROUPS


def test_a_failed_workload_is_one_line_naming_it():
    def run(argv):
        return (3, "no such thing") if argv[1].endswith(".mtx") else (0, None)

    with pytest.raises(WorkloadFailed) as caught:
        warm_up(run, ["formats"])
    message = caught.value.message
    assert "\n" not in message
    assert message.startswith("workload 'stats g.mtx' failed (exit 3: no such thing): vcut stats ")


def test_a_crashed_workload_is_one_line_naming_it():
    def run(argv):
        if argv[1].endswith(".lg"):
            raise ValueError("bad\nsecond line")
        return 0, None

    with pytest.raises(WorkloadFailed) as caught:
        warm_up(run, ["formats"])
    assert caught.value.message.startswith("workload 'stats g.lg' failed (ValueError: bad): ")


def test_every_algorithm_of_the_registry_is_a_workload():
    from vcut.cuts import CUTS

    names = {w.name for w in workloads(["partition"])}
    assert {f"partition {a}" for a in CUTS} <= names
