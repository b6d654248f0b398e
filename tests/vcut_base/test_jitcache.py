"""numba's on-disk cache when processes compile at the same time (vcut_base.jitcache).

Four processes each compile one signature of the same ``cache=True`` function into
an empty cache directory, started together, with numba's index write slowed by
0.5 s so that all four read the index before any writes it. With the lock, a fresh
process then loads all four signatures from the cache and each computes its own
result; with numba's own unlocked files (the control) the four took the same data
file number and the fresh process finds at most one of them.
"""

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MODULE = """
from vcut_base.jitcache import njit


@njit(cache=True)
def twice(x):
    return x + x
"""

ARGS = ["2", "1.5", "1j", "np.float32(1.25)"]

COMPILE = """
import os, sys, time
sys.path[:0] = [{root!r}, {tmp!r}]
import numpy as np
from numba.core import caching
import vcut_base.jitcache
cls = caching.IndexDataCacheFile
if {unlocked}:
    cls.save, cls.load, cls.flush = cls._vcut_unlocked
write = cls._save_index
def slow(self, overloads):
    time.sleep(0.5)
    write(self, overloads)
cls._save_index = slow
import kern
open(os.path.join({tmp!r}, "ready-{i}"), "w").close()
while not os.path.exists(os.path.join({tmp!r}, "go")):
    time.sleep(0.01)
kern.twice({arg})
"""

CHECK = """
import sys
sys.path[:0] = [{root!r}, {tmp!r}]
import numpy as np
import vcut_base.jitcache
import kern
out = [kern.twice(2), kern.twice(1.5), kern.twice(1j), kern.twice(np.float32(1.25))]
print(repr(out), kern.twice.stats.cache_hits.total(), kern.twice.stats.cache_misses.total())
"""


def _race(tmp, unlocked):
    (tmp / "kern.py").write_text(MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "cache"), PYTHONDONTWRITEBYTECODE="1")
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(COMPILE.format(
        root=str(ROOT), tmp=str(tmp), unlocked=unlocked, i=i, arg=arg))], env=env)
        for i, arg in enumerate(ARGS)]
    deadline = time.monotonic() + 120
    while not all((tmp / f"ready-{i}").exists() for i in range(len(ARGS))):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    (tmp / "go").touch()
    assert [p.wait(timeout=120) for p in procs] == [0] * len(ARGS)
    return subprocess.run([sys.executable, "-c", CHECK.format(root=str(ROOT), tmp=str(tmp))],
                          env=env, capture_output=True, text=True, timeout=120)


def test_processes_compiling_at_once_keep_every_signature(tmp_path):
    res = _race(tmp_path, unlocked=False)
    assert res.returncode == 0, res.stderr
    # 2 + 2, 1.5 + 1.5, 1j + 1j, float32 1.25 + 1.25 (returned as a float): each's own code, from the cache
    assert res.stdout.split() == ["[4,", "3.0,", "2j,", "2.5]", "4", "0"]


def test_without_the_lock_the_processes_overwrite_each_other(tmp_path):
    # the control: the same race on numba's own cache files loses entries (or worse)
    res = _race(tmp_path, unlocked=True)
    hits = int(res.stdout.split()[-2]) if res.returncode == 0 else 0
    assert hits < len(ARGS)


def test_a_cache_directory_without_locks_or_writes_falls_back_to_numba(tmp_path, monkeypatch):
    # flock refused (a network mount) or no lock file possible (read-only directory): the
    # wrapped call still runs, once, unlocked
    import fcntl

    from vcut_base import jitcache

    calls = []

    def refuse(fd, op):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    with jitcache._locked(str(tmp_path / "index.nbi"), True):
        calls.append("locked")
    with jitcache._locked(str(tmp_path / "missing" / "index.nbi"), False):
        calls.append("no lock file")
    assert calls == ["locked", "no lock file"]
    assert (tmp_path / "index.nbi.lock").exists() and not (tmp_path / "missing").exists()


def test_every_cached_kernel_module_takes_njit_from_jitcache():
    # the lock must be installed before a module's first cached function is compiled or
    # loaded: each package module that caches kernels imports njit from vcut_base.jitcache
    missing = []
    for package in ("vcut_base", "frontend", "ir_graph", "vcut", "mapping", "runtime"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text()
            if "cache=True" not in text or path.name == "jitcache.py":
                continue
            takes = re.search(r"from (vcut_base\.|\.)jitcache import [^\n]*\bnjit\b", text)
            if not takes or "from numba import njit" in text:
                missing.append(str(path.relative_to(ROOT)))
    assert missing == []


def test_helper_compiles_without_reference_counting_and_refuses_allocation():
    # a helper that only reads and writes its arguments runs as njit would; one that
    # creates an array cannot be compiled without numba's runtime and says so at once
    import numpy as np
    from numba.core.errors import TypingError

    from vcut_base.jitcache import helper, njit

    @helper
    def bump(a, i):
        a[i] += 1
        return a[i] * 2

    @njit
    def caller(a):
        s = 0
        for i in range(a.shape[0]):
            s += bump(a, i)
        return s

    a = np.arange(4)
    assert caller(a) == 2 * (1 + 2 + 3 + 4) and a.tolist() == [1, 2, 3, 4]
    assert bump.targetoptions["_nrt"] is False and type(bump._cache).__name__ == "FunctionCache"

    @helper
    def allocates(n):
        return np.zeros(n).sum()

    with pytest.raises(TypingError):
        allocates(3)


HELPER_MODULE = """
from vcut_base.jitcache import helper, njit


@helper
def inc(x):
    return x + 1


@njit(cache=True)
def twice_inc(x):
    return 2 * inc(x)
"""

HELPER_RUN = """
import sys
sys.path[:0] = [{root!r}, {tmp!r}]
import hmod
print(hmod.twice_inc(3), hmod.inc.targetoptions["no_cpython_wrapper"])
for a in (3, 2.5):
    try:
        hmod.inc(a)
    except TypeError as exc:
        print("refused:", exc)
"""


def test_a_helper_has_no_python_entry_and_says_so(tmp_path):
    """numba builds no CPython wrapper for a helper; called from Python it would jump to the
    missing one (a segfault): here it raises TypeError, before and after a compiled caller
    used it, compiled afresh (first process) and loaded from the cache (second)."""
    (tmp_path / "hmod.py").write_text(HELPER_MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    refused = ("refused: inc is a helper of compiled kernels (@helper): it has no Python "
               "entry point; call it from an @njit kernel")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", HELPER_RUN.format(root=str(ROOT),
                                                                    tmp=str(tmp_path))],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["8 True", refused, refused]
    assert any(p.name.startswith("hmod.inc-") for p in (tmp_path / "cache").rglob("*.nbi"))


THREADS_LOAD = """
import sys, threading, time
import fcntl as real
sys.path[:0] = [{root!r}, {tmp!r}]
from vcut_base import jitcache
jitcache.WAIT_LIMIT = 30.0
import kern
if {compile}:
    kern.twice(1)
    sys.exit()
jitcache.start_target()
first = []


class Slow:  # the first thread's compile lock taken, then a pause before it is in _HELD
    def __getattr__(self, name):
        return getattr(real, name)

    def flock(self, fd, op):
        real.flock(fd, op)
        if op == real.LOCK_EX | real.LOCK_NB and not first:
            first.append(threading.current_thread().name)
            time.sleep(1.0)


jitcache.fcntl = Slow()
t0 = time.monotonic()
threads = [threading.Thread(target=kern.twice, args=(2,), name=str(i)) for i in range(2)]
threads[0].start()
time.sleep(0.05)
threads[1].start()
for t in threads:
    t.join()
print(first, round(time.monotonic() - t0, 1) < 15, kern.twice.stats.cache_hits.total())
"""


def test_two_threads_loading_one_kernel_do_not_wait_for_each_other(tmp_path):
    """Two threads call a cached kernel at once (two simulations starting side by side);
    the first is paused between taking the kernel's compile lock and noting it in
    `_HELD`, as a thread the GIL passes over is after its ``flock``. The second must not
    wait for that lock while it holds numba's compiler lock, which the first then needs:
    the two stalled for `WAIT_LIMIT` seconds (here 30) before the compile lock was taken
    inside numba's."""
    (tmp_path / "kern.py").write_text(MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    for compile_ in (True, False):  # into the cache, then loaded by the two threads
        done = subprocess.run([sys.executable, "-c", THREADS_LOAD.format(
            root=str(ROOT), tmp=str(tmp_path), compile=compile_)],
            capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
    # the first thread paused holding the lock; both done well within the wait limit,
    # the signature loaded once from the cache
    assert done.stdout.split() == ["['0']", "True", "1"]


BLAS_RUN = """
import json, sys
import numpy as np
from vcut_base.jitcache import njit

@njit(cache=False)
def first(x):
    return x + 1

@njit(cache=False)
def convolved(a, b):
    return np.convolve(a, b)

first(1)  # numba's CPU target starts here, without its BLAS probe
from numba.np import arraymath
before = {"scipy.linalg": "scipy.linalg" in sys.modules,
          "numpy.f2py": "numpy.f2py" in sys.modules,
          "probe_entry": "scipy.linalg.cython_blas" in sys.modules,
          "finders": sum(type(f).__name__ == "_NoProbe" for f in sys.meta_path),
          "flag": type(arraymath._HAVE_BLAS).__name__}
a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
got = convolved(a, b)
print(json.dumps({"before": before, "after_blas": bool(arraymath._HAVE_BLAS),
                  "scipy_linalg_after": "scipy.linalg" in sys.modules,
                  "same": got.tolist() == np.convolve(a, b).tolist()}))
"""


def test_numbas_blas_probe_waits_until_its_flag_is_read():
    """`start_target`: a process that runs a kernel imports no scipy.linalg (nor numpy.f2py)
    at numba's start-up, leaves no trace in sys.modules, and numba's np.convolve, which reads
    the flag, still finds scipy's BLAS and computes what numpy does."""
    done = subprocess.run([sys.executable, "-c", BLAS_RUN], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    result = __import__("json").loads(done.stdout.splitlines()[-1])
    assert result["before"] == {"scipy.linalg": False, "numpy.f2py": False,
                                "probe_entry": False, "finders": 0, "flag": "_BlasFlag"}
    assert result["after_blas"] is True
    assert result["scipy_linalg_after"] is True
    assert result["same"] is True


def test_the_target_is_left_alone_where_scipys_blas_is_loaded_already():
    code = ("import sys, scipy.linalg\n" + BLAS_RUN.split("first(1)")[0]
            + "first(1)\nfrom numba.np import arraymath\n"
            "print(type(arraymath._HAVE_BLAS).__name__, arraymath._HAVE_BLAS)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    assert done.stdout.split()[-2:] == ["bool", "True"]


def test_the_probes_import_is_refused_to_the_starting_thread_only():
    # `start_target` holds its finder on sys.meta_path for the few milliseconds of its
    # import of arraymath: another thread importing scipy meanwhile is not refused
    import threading

    from vcut_base.jitcache import _NoProbe

    finder = _NoProbe()
    with pytest.raises(ModuleNotFoundError, match="scipy.linalg is not imported while"):
        finder.find_spec("scipy.linalg")
    assert finder.find_spec("scipy.sparse") is None
    seen = []
    other = threading.Thread(target=lambda: seen.append(finder.find_spec("scipy.linalg")))
    other.start()
    other.join()
    assert seen == [None]
