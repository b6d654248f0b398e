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
from vcut import warmup
from vcut.warmup import GROUPS, WorkloadFailed, split, warm_up, workloads


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
    # two processes: this one the formats (the longer share), a second one the schedule's
    # workloads; then one process finds every kernel of both in the cache
    cache = tmp_path / "cache"
    first = _vcut(cache, "compile", "--only", "formats,schedule", "--jobs", "2", "--json",
                  "--progress", "lines")
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)
    n, own = len(workloads(["formats", "schedule"])), len(workloads(["formats"]))
    assert done["workloads"] == n
    assert done["kernels_compiled"] > 0 and done["cache_dir"] == str(cache)
    assert f"[{own}/{n}] stats g.lg" in first.stderr
    assert f"[{n}/{n}] schedule (another process): " in first.stderr
    assert COMPILE_NOTE not in first.stderr
    files = _cached_files(cache)
    again = _vcut(cache, "compile", "--only", "formats,schedule", "--jobs", "1", "--json")
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
    for bad, shown in (("0", "0"), ("x", "'x'"), ("65", "65")):
        done = _vcut(tmp_path / "cache", "compile", "--jobs", bad)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip().splitlines()[-1] == (
            f"error: --jobs must be a positive integer (at most 64), got {shown}")
    assert not (tmp_path / "cache").exists()  # nothing compiled


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


def test_the_groups_are_shared_longest_first_onto_the_least_loaded_process():
    assert warmup.GROUP_SECONDS == {"formats": 14, "partition": 69, "multilevel": 12,
                                    "traversal": 37, "schedule": 4, "programs": 65}
    # two: partition 69 | programs 65, traversal onto programs (102), formats, multilevel
    # and schedule onto partition (99); the longer share first
    assert split(list(GROUPS), 2) == [["traversal", "programs"],
                                      ["formats", "partition", "multilevel", "schedule"]]
    # three: partition 69 | programs 65 | traversal 37 + formats 14 + multilevel 12 +
    # schedule 4 = 67
    assert split(list(GROUPS), 3) == [["partition"], ["formats", "multilevel", "traversal",
                                                      "schedule"], ["programs"]]
    assert split(list(GROUPS), 1) == [list(GROUPS)]
    assert split(list(GROUPS), 64) == [[g] for g in ("partition", "programs", "traversal",
                                                     "formats", "multilevel", "schedule")]
    assert split(["schedule", "formats"], 5) == [["formats"], ["schedule"]]


def _process(code):
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_failed_second_process_is_one_line_naming_its_groups(monkeypatch):
    failing = "import sys; sys.stderr.write('noise\\nerror: no room left\\n'); sys.exit(5)"
    monkeypatch.setattr(warmup, "_start", lambda share: _process(failing))
    with pytest.raises(WorkloadFailed) as caught:
        warm_up(lambda argv: (0, None), ["formats", "schedule"], jobs=2)
    assert caught.value.message == "the process compiling schedule failed: no room left"
    silent = _process("import sys; sys.exit(9)")
    with pytest.raises(WorkloadFailed) as caught:
        warmup._finish(silent, ["traversal", "programs"])
    assert caught.value.message == (
        "the process compiling traversal,programs failed: exit 9, no message")


def test_a_failure_here_stops_the_other_processes(monkeypatch):
    started = []

    def start(share):
        started.append(_process("import time; time.sleep(60)"))
        return started[-1]

    monkeypatch.setattr(warmup, "_start", start)
    with pytest.raises(WorkloadFailed):
        warm_up(lambda argv: (3, "no"), ["formats", "schedule"], jobs=2)
    assert len(started) == 1 and started[0].poll() is not None  # ended, not left behind


def test_the_second_processes_counts_are_summed(monkeypatch):
    got = {"workloads": 4, "kernels_compiled": 7, "kernels_loaded": 11, "seconds": 2.5,
           "cache_dir": "x"}
    monkeypatch.setattr(warmup, "_start",
                        lambda share: _process(f"print({json.dumps(json.dumps(got))})"))
    steps = []
    done = warm_up(lambda argv: (0, None), ["formats", "schedule"], jobs=2,
                   step=lambda k, total, w, s: steps.append((k, total, w.name, s)))
    own = len(workloads(["formats"]))
    assert done.workloads == own + 4 and done.compiled == 7 and done.loaded >= 11
    assert steps[-1] == (own + 4, len(workloads(["formats", "schedule"])),
                         "schedule (another process)", 2.5)
    assert [s[0] for s in steps[:-1:2]] == list(range(own))  # before each own workload
