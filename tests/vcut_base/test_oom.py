"""The memory guard (vcut_base.oom) and the container limit in the memory available
(vcut_base.memory.cgroup_room): vcut stops with one line and exit 11 before the kernel's
out-of-memory killer would end it."""

import json
import os
import subprocess
import sys
import threading

import pytest

from tests.helpers import ROOT
from vcut_base import memory, oom
from vcut_base.oom import MemoryGuard


def readings(*values):
    """A sampler that returns ``values`` one after another, then the last forever."""
    it = iter(values)
    last = [values[-1]]

    def sample():
        last[0] = next(it, last[0])
        return last[0]
    return sample


def test_the_guard_acts_once_when_memory_is_short_and_vcut_holds_much():
    calls = []
    guard = MemoryGuard(lambda a, r: calls.append((a, r)), reserve=100, min_resident=50,
                        sample=readings((500, 60), (99, 40), (99, 50), (10, 80)))
    assert guard.check() is False       # plenty available
    assert guard.check() is False       # short, but vcut holds little: not the kernel's pick
    assert guard.check() is True        # short and vcut holds at least min_resident
    assert guard.check() is True and calls == [(99, 50)]   # once only


def test_the_guard_thread_calls_back_and_stops():
    fired = threading.Event()
    calls = []

    def on_low(a, r):
        calls.append((a, r))
        fired.set()

    guard = MemoryGuard(on_low, reserve=1000, min_resident=0, interval=0.001,
                        sample=readings((5000, 1), (5000, 1), (5000, 1), (7, 3)))
    with guard:
        assert fired.wait(10)
    assert calls == [(7, 3)] and guard._thread is None


def test_a_reserve_of_zero_watches_nothing():
    guard = MemoryGuard(lambda a, r: None, reserve=0, sample=readings((0, 2**40)))
    guard.start()
    assert guard._thread is None
    guard.stop()


def test_default_reserve_and_min_resident(monkeypatch):
    monkeypatch.delenv("VCUT_MEMORY_RESERVE", raising=False)
    assert oom.default_reserve(total=24 * 2**30) == 24 * 2**30 // 25
    assert oom.default_reserve(total=4 * 2**30) == 512 * 2**20
    assert oom.default_min_resident(total=24 * 2**30) == 2 * 2**30
    assert oom.default_min_resident(total=8 * 2**30) == 2**30
    monkeypatch.setenv("VCUT_MEMORY_RESERVE", "0")
    assert oom.default_reserve(total=2**34) == 0
    monkeypatch.setenv("VCUT_MEMORY_RESERVE", "1.5e9")
    assert oom.default_reserve(total=2**34) == 1_500_000_000
    monkeypatch.setenv("VCUT_MEMORY_RESERVE", "lots")
    assert oom.default_reserve(total=2**34) == 2**34 // 25


def _cgroup_tree(tmp_path, monkeypatch, lines, files):
    (tmp_path / "cgroup").write_text("\n".join(lines) + "\n")
    root = tmp_path / "fs"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setattr(memory, "PROC_CGROUP", str(tmp_path / "cgroup"))
    monkeypatch.setattr(memory, "CGROUP_ROOT", str(root))


def test_cgroup_v2_room_is_the_tightest_limit_less_the_working_set(tmp_path, monkeypatch):
    _cgroup_tree(tmp_path, monkeypatch, ["0::/a/b"], {
        "a/memory.max": "10000\n", "a/memory.current": "6000\n",
        "a/memory.stat": "anon 4000\ninactive_file 1000\nactive_file 1000\n",
        "a/b/memory.max": "max\n", "a/b/memory.current": "5000\n",
        "memory.max": "99999999\n", "memory.current": "1\n"})
    # a: 10000 - (6000 - 1000) = 5000; a/b: no limit; the root: 99999998
    assert memory.cgroup_room() == 5000
    monkeypatch.setattr(memory, "total_bytes", lambda: 10**12)
    assert memory.available_bytes() <= 5000


def test_cgroup_v1_room_and_no_limit(tmp_path, monkeypatch):
    _cgroup_tree(tmp_path, monkeypatch, ["4:memory:/box", "3:cpu:/x"], {
        "memory/box/memory.limit_in_bytes": "8192\n",
        "memory/box/memory.usage_in_bytes": "4096\n",
        "memory/box/memory.stat": "total_inactive_file 1024\n",
        "memory/memory.limit_in_bytes": "9223372036854771712\n"})
    assert memory.cgroup_room() == 8192 - (4096 - 1024)
    _cgroup_tree(tmp_path, monkeypatch, ["0::/"], {"memory.current": "5\n"})
    assert memory.cgroup_room() is None


def test_memory_exhausted_is_one_line_and_the_json_error(capsys):
    from vcut.cli import memory_exhausted

    left = []
    memory_exhausted("analyze", ["analyze", "x.c", "--json"], 5 * 2**20, 3 * 2**30,
                     leave=left.append)
    out, err = capsys.readouterr()
    assert left == [11]
    assert err.count("\n") == 1 and err.startswith(
        "error: out of memory: 5.0 MiB left on this machine while vcut held 3.0 GiB; "
        "stopped before the system would end it; analyse a slice (--window START:END)")
    assert json.loads(out) == {"error": err[len("error: "):-1], "exit_code": 11}


SCRIPT = """
import sys
import vcut_base.oom as oom
init = oom.MemoryGuard.__init__
def short(self, on_low, **kw):  # the machine's readings: 5 MiB left, vcut holds 3 GiB
    init(self, on_low, reserve=2**30, min_resident=0, interval=0.01,
         sample=lambda: (5 * 2**20, 3 * 2**30))
oom.MemoryGuard.__init__ = short
from vcut.__main__ import run
sys.argv = ["vcut"] + sys.argv[1:]
run()
"""


def test_the_vcut_program_stops_with_exit_11_when_memory_runs_short(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", SCRIPT, "analyze", "samples/strassen.c",
                           "-D", "N=4", "-p", "4", "--json", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, VCUT_COMPILE_NOTE="0"))
    assert done.returncode == 11, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [done.stderr.splitlines()[-1]] and errors[0].startswith(
        "error: out of memory: 5.0 MiB left on this machine while vcut held 3.0 GiB;")
    assert json.loads(done.stdout.splitlines()[-1])["exit_code"] == 11
    assert not (out / "mapping.json").exists()


@pytest.mark.parametrize("reserve", ["0"])
def test_the_guard_can_be_turned_off(reserve, monkeypatch):
    monkeypatch.setenv("VCUT_MEMORY_RESERVE", reserve)
    guard = MemoryGuard(lambda a, r: None, sample=readings((0, 2**40)))
    assert guard.reserve == 0 and guard.start()._thread is None
