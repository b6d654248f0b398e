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
    # 2 + 2, 1.5 + 1.5, 1j + 1j, float32 1.25 + 1.25 (returned as a float): each's own
    # code, from the cache
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


def test_kernels_have_no_c_callable_wrapper_and_run_from_python_and_compiled_code():
    # vcut's njit leaves out numba's cfunc wrapper (first run's compile time); the kernel
    # still runs from Python (its CPython wrapper) and from another kernel, and an explicit
    # option still wins
    import numpy as np

    from vcut_base.jitcache import njit

    @njit(cache=False)
    def total(a):
        return a.sum()

    @njit
    def twice(a):
        return 2 * total(a)

    a = np.arange(5.0)
    assert total(a) == 10.0 and twice(a) == 20.0
    assert total.targetoptions["no_cfunc_wrapper"] is True
    assert twice.targetoptions["no_cfunc_wrapper"] is True
    sig = total.signatures[0]
    library = total.overloads[sig].library
    names = {f.name for f in library._final_module.functions}
    assert not any(n.startswith("cfunc.") for n in names), sorted(names)

    @njit(cache=False, no_cfunc_wrapper=False)
    def with_wrapper(a):
        return a.sum()

    assert with_wrapper(a) == 10.0
    library = with_wrapper.overloads[with_wrapper.signatures[0]].library
    assert any(f.name.startswith("cfunc.") for f in library._final_module.functions)


def test_kernels_release_the_gil_by_default_so_numbas_own_compiles_are_shared():
    # numba compiles np.zeros & co. once per argument types and caller's flags: a kernel of
    # the default options and one that asks for nogil itself share them (the second
    # compiles no np.zeros of its own); an explicit nogil=False still wins
    import numpy as np
    from numba.core import event

    from vcut_base.jitcache import njit

    @njit(cache=False)
    def plain(n):
        return np.zeros((n, 3, 2), np.uint16).size  # a shape and type no kernel allocates

    @njit(cache=False, nogil=True)
    def explicit(n):
        return np.zeros((n, 3, 2), np.uint16).size + 1

    @njit(cache=False, nogil=False)
    def holding(n):
        return n

    assert plain.targetoptions["nogil"] is True and holding.targetoptions["nogil"] is False
    assert plain(2) == 12
    compiled = []

    class Seen(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Seen()):
        assert explicit(2) == 13
    assert compiled and compiled[0].endswith("explicit")
    assert not [q for q in compiled if "zeros" in q], compiled


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


def _in_child(tmp_path, name, source, script, timeout, **fields):
    """``script`` (its fields ``root``, ``tmp`` and ``fields``) run by a fresh interpreter
    in ``tmp_path``, with the module ``name`` (``source``) beside it and an empty cache
    there; vcut's compile-ahead helper and first-run note off."""
    (tmp_path / f"{name}.py").write_text(source)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), VCUT_COMPILE_AHEAD="0",
               VCUT_COMPILE_NOTE="0")
    return subprocess.run([sys.executable, "-c", script.format(
        root=str(ROOT), tmp=str(tmp_path), **fields)], capture_output=True, text=True,
        env=env, timeout=timeout, cwd=tmp_path)


SIGNAL_IN_LLVM = """
import signal, sys
sys.path[:0] = [{root!r}, {tmp!r}]
from llvmlite.binding import executionengine, ffi
import vcut.cli, vcut.cli.stats

added = []


def add_module(self, module):  # llvmlite's, with SIGTERM between LLVM's step and its own
    ffi.lib.LLVMPY_AddModule(self, module)
    if not added:
        signal.raise_signal(signal.SIGTERM)
    added.append(module)
    module._owned = True
    self._modules.add(module)


executionengine.ExecutionEngine.add_module = add_module


def run(args, program_args):
    import kern
    print("result", kern.twice(2))
    return 0


vcut.cli.stats.run = run
sys.argv = ["vcut", "stats", "g.txt"]
code = vcut.cli.main()
import kern
print("added", len(added), "owned", all(m._owned for m in added),
      "compiled", len(kern.twice.overloads))
sys.exit(code)
"""


def test_a_signal_inside_a_kernels_compile_is_delivered_after_it(tmp_path):
    """SIGTERM arrives while numba compiles a kernel, between LLVM taking a module and
    llvmlite noting that it did (the exception raised there left the module freed twice:
    a segmentation fault at the exit, or in a later load). The compile ends whole, then
    the command ends as a signal ends it: one line, exit 143."""
    done = _in_child(tmp_path, "kern", MODULE, SIGNAL_IN_LLVM, 120)
    assert (done.returncode, done.stderr) == (143, "error: terminated\n")
    # the modules handed to LLVM are noted as LLVM's, the kernel compiled; the command's
    # own line never printed (the signal came before its kernel returned)
    words = done.stdout.split()
    assert (words[0::2], words[3:]) == (["added", "owned", "compiled"], ["True", "compiled", "1"])
    assert int(words[1]) >= 1


def test_a_held_signal_ends_the_wait_for_another_processs_compile(tmp_path, monkeypatch):
    """A compile waiting for another process's compile of its kernel (`_wait_compiling`)
    with a signal held back stops waiting (`_Interrupted`, before numba reads the cache)
    so that `_locked_compile` can deliver the signal; without one it waits to the limit."""
    import fcntl
    import signal

    from vcut_base import jitcache

    index = str(tmp_path / "kern.twice-1.py311.nbi")
    other = os.open(index + ".compiling", os.O_RDWR | os.O_CREAT)  # another's compile lock
    fcntl.flock(other, fcntl.LOCK_EX)
    monkeypatch.setattr(jitcache, "WAIT_LIMIT", 0.05)
    try:
        monkeypatch.setattr(jitcache._CAUGHT, "stack", [[]], raising=False)
        assert jitcache._wait_compiling(index) is None  # waited to the limit
        jitcache._CAUGHT.stack[:] = [[signal.SIGTERM], []]  # held by an outer compile
        with pytest.raises(jitcache._Interrupted):
            jitcache._wait_compiling(index)
    finally:
        os.close(other)


NESTED = """
from vcut_base.jitcache import njit


@njit(cache=True)
def inner(x):
    return x + 1


@njit(cache=True)
def outer(x):
    return inner(x) * 2
"""

WAIT_RUN = """
import fcntl, os, signal, sys, threading, time
sys.path[:0] = [{root!r}, {tmp!r}]
import vcut.cli, vcut.cli.stats
from vcut_base import jitcache
import nested

# another process compiles `inner` (its compile lock held on another open file)
other = os.open(jitcache.index_path(nested.inner) + ".compiling", os.O_RDWR | os.O_CREAT)
fcntl.flock(other, fcntl.LOCK_EX)
waits = []
wait = jitcache._wait_compiling


def counted(path):
    waits.append(os.path.basename(path))
    if path.startswith(jitcache.index_path(nested.inner)):
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIG{sig})).start()
    return wait(path)


jitcache._wait_compiling = counted


def run(args, program_args):
    print("result", nested.outer(2))
    return 0


vcut.cli.stats.run = run
sys.argv = ["vcut", "stats", "g.txt"]
t0 = time.monotonic()
code = vcut.cli.main()
print(waits[-1].split("-")[0], time.monotonic() - t0 < 20)
sys.exit(code)
"""


@pytest.mark.parametrize("sig, code, line", [("TERM", 143, "error: terminated\n"),
                                              ("INT", 130, "error: interrupted\n")])
def test_a_signal_while_waiting_for_another_compile_ends_the_command(tmp_path, sig, code,
                                                                     line):
    """Ctrl-C (or SIGTERM) while the command waits for another process's compile of a
    kernel that its kernel calls (`_wait_compiling`, at most `WAIT_LIMIT` = 60 s) ends
    the command at once, with its one line."""
    done = _in_child(tmp_path, "nested", NESTED, WAIT_RUN, 50, sig=sig)
    # the wait was for `inner`, inside `outer`'s compile; ended long before the limit
    assert (done.returncode, done.stderr, done.stdout.split()) == (
        code, line, ["nested.inner", "True"])


COUNTING = """
from vcut_base.jitcache import njit


@njit(cache=True, nogil=True)
def count(n, counter):
    s = 0
    for i in range(n):
        s += i
    counter[0] = n
    return s
"""

STOP_RUN = """
import fcntl, os, signal, sys, threading, time
sys.path[:0] = [{root!r}, {tmp!r}]
from vcut_base import jitcache, progress
import counting

# another process compiles `count` (its compile lock held on another open file)
other = os.open(jitcache.index_path(counting.count) + ".compiling", os.O_RDWR | os.O_CREAT)
fcntl.flock(other, fcntl.LOCK_EX)
jitcache.start_target()
n = progress.THREAD_MIN


def waiting():  # a job whose kernel waits for that compile
    return progress.run_kernel("count", "steps", n, counting.count, n)


def failing():
    time.sleep(0.3)
    raise ValueError("the other job failed")


t0 = time.monotonic()
try:
    if {mode!r} == "parallel":
        progress.run_parallel([waiting, failing], 2)
    else:  # the main thread's kernel, in its worker thread; SIGINT meanwhile (Python's
        # handler, as at a terminal: a test run in the background inherits SIGINT ignored)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        progress.run_kernel("count", "steps", n, counting.count, n)
except (ValueError, KeyboardInterrupt) as exc:
    print(type(exc).__name__, time.monotonic() - t0 < 20)
"""


@pytest.mark.parametrize("mode, raised", [("parallel", "ValueError"),
                                          ("kernel", "KeyboardInterrupt")])
def test_a_worker_waiting_for_another_compile_gives_up_when_its_job_is_stopped(tmp_path, mode,
                                                                               raised):
    """A kernel loaded in a worker thread (`vcut_base.progress`) waits for another
    process's compile of it (the compile-ahead helper's, on a first run); when the other
    job fails, or SIGINT stops the main thread's kernel, the wait ends at once instead of
    at the compile's end or `WAIT_LIMIT` (60 s)."""
    done = _in_child(tmp_path, "counting", COUNTING, STOP_RUN, 50, mode=mode)
    assert (done.returncode, done.stdout.split()) == (0, [raised, "True"]), done.stderr
