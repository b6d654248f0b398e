"""The first-run helper that compiles a command's later kernels beside it (vcut_base.ahead),
and the compile lock of vcut_base.jitcache that lets the two meet without compiling a
kernel twice."""

import fcntl
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from numba.core import types

from vcut_base import ahead, jitcache
from vcut_base.ahead import Entry, finish_time, parse_types, plan, read_manifest

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((ROOT / "vcut" / "cli" / "ahead").glob("*.txt"))

I32 = "Array(int32, 1, 'C', False, aligned=True)"


def _entries(costs, starts=None):
    """Entries compiled one right after another (or at ``starts``), of ``costs`` seconds."""
    if starts is None:
        starts = np.concatenate([[0.0], np.cumsum(costs)[:-1]])
    return [Entry("m", f"k{i}", float(s), float(c), "(int64,)")
            for i, (s, c) in enumerate(zip(starts, costs))]


# --- the manifest's argument types ------------------------------------------------------

@pytest.mark.parametrize("ty", [
    types.Array(types.int32, 1, "C"),
    types.Array(types.float64, 2, "A", readonly=True),
    types.Array(types.uint8, 1, "C", aligned=False),
    types.UniTuple(types.int64, 3),
    types.Tuple((types.Array(types.int32, 1, "C"), types.float64)),
    types.Omitted(False),
    types.Omitted(None),
    types.NumberClass(types.int32),
    types.int64, types.boolean, types.float32,
])
def test_parse_types_reads_back_what_numba_prints(ty):
    text = repr((ty, types.int64))
    assert parse_types(text) == (ty, types.int64)
    assert parse_types(repr((ty,))) == (ty,)


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')",
    "(os.system,)",
    "(int64, numba.types.int64)",
    "(Array(int32, 1, 'C')[0],)",
    "(no_such_type,)",
    "(print,)",
    "(1, 2)",
    "(int64",
    "(Array(1, 2, 3, 4, 5, 6, 7),)",
    "(UniTuple(int64),)",
])
def test_parse_types_refuses_anything_but_numba_types(text):
    with pytest.raises(ValueError):
        parse_types(text)


def test_read_manifest_keeps_five_column_lines_in_order(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("# command: python -m vcut analyze x.c\n"
                    f"a.b\tk\t0.5\t1.25\t({I32},)\n"
                    "\n"
                    "a.b\tshort\tline\n"
                    "a.b\tk2\tnot-a-number\t1\t(int64,)\n"
                    "c\tk3\t2\t0.1\t(int64,)\n")
    assert read_manifest(path) == [Entry("a.b", "k", 0.5, 1.25, f"({I32},)"),
                                   Entry("c", "k3", 2.0, 0.1, "(int64,)")]


# --- the plan -----------------------------------------------------------------------------

def test_finish_time_of_four_equal_kernels_halves():
    # helper: k3 [0,1], k2 [1,2]; command: k0 [0,1], k1 [1,2], then k2 and k3 loaded
    e = _entries([1, 1, 1, 1])
    assert finish_time(e, [3, 2, 1, 0], 0.0) == 2.0
    assert finish_time(e, [], 0.0) == 4.0


def test_finish_time_waits_for_a_kernel_the_helper_is_compiling():
    # helper: k3 [0,1], k2 [1,5]; the command reaches k2 at 2 and waits for it until 5
    e = _entries([1, 1, 4, 1])
    assert finish_time(e, [3, 2, 1, 0], 0.0) == 5.0


def test_finish_time_counts_the_commands_own_work_between_compiles():
    # the command works 3 s between k0 and k1 (starts 0 and 4): the helper, starting 0.5 s
    # late, has k1 by 1.5 and k0 is the command's; done at 4 (k1 loaded)
    e = _entries([1, 1], starts=[0.0, 4.0])
    assert finish_time(e, [1, 0], 0.5) == 4.0
    assert finish_time(e, [], 0.5) == 5.0


def test_plan_takes_a_large_kernel_of_the_middle_first():
    # backward: helper k5 [0,1], k4 [1,2], k3 [2,6]; the command does k0-k2 by 3 and waits
    # for k3 until 6. k3 first: helper k3 [0,4], k5 [4,5]; the command waits for k3 until
    # 4, compiles k4 [4,5] (the helper has not started it), loads k5: 5
    e = _entries([1, 1, 1, 4, 1, 1])
    assert finish_time(e, [5, 4, 3, 2, 1, 0], 0.0) == 6.0
    assert plan(e, 0.0) == [3, 5, 4, 2, 1, 0]
    assert finish_time(e, plan(e, 0.0), 0.0) == 5.0


def test_plan_is_backward_where_nothing_beats_it():
    e = _entries([1, 1, 1, 1])
    assert plan(e, 0.0) == [3, 2, 1, 0]


# --- the helper process -------------------------------------------------------------------

LOADS = """
import json, sys
import numpy as np
from vcut_base.jitcache import kernel_counts
from ir_graph.control_kernels import is_sorted
print(json.dumps([bool(is_sorted(np.arange(5, dtype=np.int32))), kernel_counts()]))
"""


def _env(tmp_path):
    return dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1")


def _manifest(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("# a kernel, a kernel gone, a signature numba refuses, a module not ours\n"
                    f"ir_graph.control_kernels\tis_sorted\t0\t0.1\t({I32},)\n"
                    "ir_graph.control_kernels\tno_such_kernel\t0\t0.1\t(int64,)\n"
                    f"ir_graph.control_kernels\tis_sorted\t0\t0.1\t({I32}, {I32}, {I32})\n"
                    "json\tdumps\t0\t0.1\t(int64,)\n")
    return path


def test_helper_compiles_the_manifest_into_the_cache_and_skips_stale_lines(tmp_path):
    run = subprocess.run([sys.executable, "-m", "vcut_base.ahead", "run",
                          str(_manifest(tmp_path)), str(os.getpid())],
                         cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    fresh = subprocess.run([sys.executable, "-c", LOADS], cwd=ROOT, env=_env(tmp_path),
                           capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    # the fresh process loads the signature the helper compiled: 0 compiled, 1 loaded
    assert json.loads(fresh.stdout) == [True, [0, 1]]


def test_helper_stops_once_the_command_is_gone(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    run = subprocess.run([sys.executable, "-m", "vcut_base.ahead", "run",
                          str(_manifest(tmp_path)), str(gone.pid)],
                         cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    fresh = subprocess.run([sys.executable, "-c", LOADS], cwd=ROOT, env=_env(tmp_path),
                           capture_output=True, text=True, timeout=300)
    assert json.loads(fresh.stdout) == [True, [1, 0]]  # nothing was compiled ahead


def test_command_of_reads_the_first_line(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("# command: python -m vcut analyze 'a b.c' -p 8\n")
    assert ahead.command_of(path) == ["python", "-m", "vcut", "analyze", "a b.c", "-p", "8"]
    path.write_text("ir_graph.control_kernels\tis_sorted\t0\t0.1\t(int64,)\n")
    with pytest.raises(ValueError, match="names no command"):
        ahead.command_of(path)


def test_ahead_usage_error_exits_2():
    run = subprocess.run([sys.executable, "-m", "vcut_base.ahead", "nonsense"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr.startswith("usage: python -m vcut_base.ahead run MANIFEST PID")


def test_spawn_starts_a_helper_of_these_packages_whatever_the_directory(tmp_path,
                                                                         monkeypatch):
    """From a directory holding another ``vcut_base`` (one that cannot be imported), the
    helper still imports this one and compiles into the cache of this process's
    environment."""
    manifest = _manifest(tmp_path)
    (tmp_path / "vcut_base").mkdir()
    (tmp_path / "vcut_base" / "__init__.py").write_text("raise ImportError('the wrong copy')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ahead, "_STARTED", [])
    monkeypatch.setattr(ahead, "cores", lambda: 2)
    monkeypatch.delenv("VCUT_COMPILE_AHEAD", raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    helper = ahead.spawn(str(manifest))
    assert helper is not None and ahead._STARTED == [helper]
    assert helper.wait(timeout=300) == 0
    fresh = subprocess.run([sys.executable, "-c", LOADS], cwd=ROOT, env=_env(tmp_path),
                           capture_output=True, text=True, timeout=300)
    assert json.loads(fresh.stdout) == [True, [0, 1]]


def test_spawn_refuses_where_nothing_is_to_gain(tmp_path, monkeypatch):
    manifest = _manifest(tmp_path)
    monkeypatch.setattr(ahead, "_STARTED", [])
    monkeypatch.setenv("VCUT_COMPILE_AHEAD", "0")
    assert ahead.spawn(str(manifest)) is None
    monkeypatch.delenv("VCUT_COMPILE_AHEAD")
    monkeypatch.setattr(ahead, "cores", lambda: 1)
    assert ahead.spawn(str(manifest)) is None
    monkeypatch.setattr(ahead, "cores", lambda: 2)
    assert ahead.spawn(str(tmp_path / "missing.txt")) is None
    monkeypatch.setattr(ahead, "_STARTED", ["a helper already"])
    assert ahead.spawn(str(manifest)) is None
    assert ahead._STARTED == ["a helper already"]


def test_cold_reads_the_index_of_the_manifests_last_kernel(tmp_path):
    from ir_graph.control_kernels import is_sorted

    index = Path(is_sorted._cache._cache_file._index_path)
    manifest = tmp_path / "m.txt"
    manifest.write_text(f"ir_graph.control_kernels\tis_sorted\t0\t0.1\t({I32},)\n")
    assert ahead.cold(str(manifest)) is (not index.exists())
    assert not ahead.cold(str(tmp_path / "missing.txt"))
    (tmp_path / "stale.txt").write_text("ir_graph.control_kernels\tgone\t0\t0.1\t(int64,)\n")
    assert not ahead.cold(str(tmp_path / "stale.txt"))


# --- the compile lock ---------------------------------------------------------------------

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(0.5)
open(sys.argv[2], "w").write("done")
os.close(fd)
"""


def test_a_load_waits_for_another_process_compiling_the_kernel(tmp_path):
    index = str(tmp_path / "k.nbi")
    marker = tmp_path / "saved"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, index + ".compiling",
                               str(marker)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        jitcache._wait_compiling(index)
        # the holder writes its marker (its cache entry) before it lets go of the lock
        assert marker.read_text() == "done"
    finally:
        holder.wait(timeout=60)


def test_no_wait_without_a_lock_file_or_for_this_process_own_compile(tmp_path, monkeypatch):
    def no_sleep(_):
        raise AssertionError("waited")

    monkeypatch.setattr(jitcache.time, "sleep", no_sleep)
    index = str(tmp_path / "k.nbi")
    jitcache._wait_compiling(index)  # no lock file: nobody compiles it
    fd = os.open(index + ".compiling", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    monkeypatch.setitem(jitcache._HELD, fd, index + ".compiling")
    try:
        jitcache._wait_compiling(index)  # this process compiles it (a recursive kernel)
    finally:
        os.close(fd)


# --- the command line's use ---------------------------------------------------------------

def test_commands_name_their_manifests():
    from vcut.cli import ahead_manifest

    assert ahead_manifest(SimpleNamespace(command="analyze")).endswith("ahead/analyze.txt")
    assert ahead_manifest(SimpleNamespace(command="partition", algo="best")).endswith(
        "ahead/partition-best.txt")
    assert ahead_manifest(SimpleNamespace(command="partition", algo="hdrf")).endswith(
        "ahead/partition-hdrf.txt")
    assert ahead_manifest(SimpleNamespace(command="partition", algo="random")) is None
    assert ahead_manifest(SimpleNamespace(command="schedule")) is None


DUMP = """
import json, sys
from numba.core.dispatcher import Dispatcher
from vcut.cli import main
code = main(sys.argv[1:])
seen = set()
for name, module in list(sys.modules.items()):
    for obj in list(vars(module).values() if module else ()):
        if isinstance(obj, Dispatcher):
            for sig in obj.overloads:
                seen.add("\\t".join([obj.py_func.__module__, obj.py_func.__qualname__,
                                     repr(tuple(sig))]))
print(json.dumps([code, sorted(seen)]))
"""


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.stem)
def test_each_manifest_is_what_its_command_compiles_now(manifest, tmp_path):
    """Every signature of a manifest is one its recorded command still reaches (re-record
    it with the command of its first line where a kernel changed)."""
    argv = ahead.command_of(manifest)
    assert argv[:3] == ["python", "-m", "vcut"]
    argv = argv[3:]
    if "-o" in argv:
        k = argv.index("-o") + 1
        argv[k] = str(tmp_path / os.path.basename(argv[k]))
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(DUMP), *argv], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    code, seen = json.loads(run.stdout.splitlines()[-1])
    assert code == 0
    entries = read_manifest(manifest)
    assert entries
    missing = [f"{e.module}.{e.qualname} {e.types}" for e in entries
               if "\t".join([e.module, e.qualname, e.types]) not in seen]
    assert missing == []
    for e in entries:  # and the helper can read each one back
        parse_types(e.types)


def test_a_cold_command_starts_the_helper_before_its_first_compile(monkeypatch):
    import vcut.cli as cli

    started = []
    monkeypatch.setattr(cli, "spawn", lambda m: started.append(m))
    monkeypatch.setattr(cli, "cold", lambda m: True)
    note = cli._compile_note(True, SimpleNamespace(command="analyze"))
    note.early()
    assert [Path(m).name for m in started] == ["analyze.txt"]
    assert cli._compile_note(False, SimpleNamespace(command="analyze")) is None
    assert cli._compile_note(True, SimpleNamespace(command="compile")) is None
    monkeypatch.setattr(cli, "cold", lambda m: False)
    cli._compile_note(True, SimpleNamespace(command="analyze")).early()
    assert len(started) == 1  # warm: nothing started before a compile


def test_a_wait_gives_up_after_its_limit(tmp_path):
    """A holder that never lets go: the wait ends after WAIT_LIMIT seconds, not before."""
    index = str(tmp_path / "k.nbi")
    fd = os.open(index + ".compiling", os.O_RDWR | os.O_CREAT, 0o644)
    code = ("import sys, time; from vcut_base import jitcache; jitcache.WAIT_LIMIT = 0.2; "
            "t = time.monotonic(); jitcache._wait_compiling(sys.argv[1]); "
            "print(time.monotonic() - t >= 0.2)")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        run = subprocess.run([sys.executable, "-c", code, index], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    finally:
        os.close(fd)
    assert run.stdout.strip() == "True", run.stderr
