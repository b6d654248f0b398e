"""numba's on-disk cache, made safe for processes that compile at the same time.

Every compiled kernel of vcut is ``@njit(cache=True)``: the machine code is kept
in an index file and numbered data files beside the module. numba 0.68 writes
them without a lock: two processes that compile different signatures of one
function at once both read the same index, both take the first free number and
both write it, so the index names one signature and the data file holds the
other's code. A later process that loads the first signature runs the second
one's machine code on its arguments (seen here as ``NRT_adapt_ndarray_to_python:
'descr' is NULL`` in a test run under pytest-xdist; a wrong dtype could as well
crash or compute garbage). The same happens to users who start several vcut
processes on a fresh install or after an upgrade.

`install` wraps the cache file's ``save`` and ``flush`` (which read the index,
choose a data file and write both) in an exclusive ``flock`` on a lock file beside
the index, and ``load`` (index, then the data file it names) in a shared one, so
each writer sees the index as the last one left it and no reader sees an index
entry whose data is not written yet. Where the lock file cannot be created (a
read-only cache directory), the file system refuses locks or ``fcntl`` is missing
(Windows), numba's own behaviour stands. The kernel modules import ``njit`` from here,
so the lock is in place before the first cached function is compiled or loaded.

`install` also registers a listener of numba's ``numba:compile`` event, which numba
fires only when it compiles (a signature missing from the cache, never on a load): it
counts the compiles of vcut's kernels (`kernel_counts`, for ``vcut compile``) and tells
`vcut_base.progress.compiling`, which prints the command line's first-run note. So the
note costs no look at the cache directory and no numba import of its own.

Before the first of vcut's kernels is loaded or compiled in a process, `start_target`
imports numba's ``numba.np.arraymath`` (which numba's CPU target imports on its first
load or compile) without the BLAS probe it runs at import: ``import
scipy.linalg.cython_blas``, which imports ``scipy.linalg`` and, through scipy's array-API
layer, ``numpy.f2py`` and ``numpy.testing``: 100-180 ms of a warm ``vcut partition ...
--algo hdrf`` of about 600 ms, for a flag (``_HAVE_BLAS``) only numba's ``np.convolve``
and ``np.correlate`` read, which no kernel of vcut calls. The flag becomes an object that
runs numba's own probe when it is first read, so numba behaves as before for any code
of the process that does call them. The probe's import is refused by an import finder to
the starting thread alone, for the few milliseconds of that import: another thread may
import scipy meanwhile.

A kernel's load or compile is not interrupted by SIGINT or SIGTERM: in the main thread
(the only one Python's signal handlers run in) they are held back until it has ended
(`vcut_base.atomic.signals_held`) and then delivered. numba and llvmlite hand objects to
LLVM and record it in two steps, and call Python back from LLVM (the object cache): the
signal's exception raised between two such steps, or inside a callback, left LLVM's and
numba's books disagreeing, and the process ended with a segmentation fault instead of
``error: terminated`` (one kill in a few hundred during ``vcut graph``'s load of a kernel,
on a loaded machine). A load takes milliseconds; a first run's compile of one kernel a
few seconds, the longest a signal then waits. The wait for another process's compile of
the kernel (`_wait_compiling`) ends at once when a signal is held, before numba has
touched LLVM, and the signal is delivered; in a worker thread (whose kernel the main
thread stops on a signal, `vcut_base.progress`) it ends when the kernels are being stopped.
"""

import contextlib
import functools
import os
import sys
import threading
import time

import numba
from numba import prange  # noqa: F401  (re-exported for the kernel modules)
from numba.core import caching, event, sigutils, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher

from . import progress
from .atomic import signals_held

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux / macOS
    fcntl = None

__all__ = ["njit", "helper", "prange", "install", "kernel_counts", "index_path", "start_target"]

#: The packages whose compiled kernels `kernel_counts` counts and `progress.compiling` hears of.
PACKAGES = ("vcut_base", "frontend", "ir_graph", "runtime", "mapping", "vcut")


def njit(*args, **options):
    """``numba.njit`` (the same forms: ``@njit``, ``@njit(cache=True, ...)``) for vcut's
    kernels, whose calls from other compiled functions never specialise on constants.

    numba compiles a function called from compiled code for the exact argument types,
    literal constants included: ``_push(heap, keys, 0, t, 0, 2, e)`` and
    ``_push(heap, keys, n, t, 1, 2, e)`` were two compiles of the same code, each
    ~0.1 s the first time (nine of ``_push`` in one ``vcut analyze``; 34 of the 129
    signatures the README's job compiled were such copies). Here a call from compiled
    code types its constants as their plain type (``Literal[int](0)`` as ``int64``,
    ``Literal[bool](True)`` as ``bool``) before numba looks for a compiled version,
    and a narrow signed integer (an ``int32`` read from an array) as ``int64``, so each
    function is compiled once per plain signature (`_plain`). LLVM still sees the
    constant where it inlines the call. Calls from Python are unchanged (numba never
    specialises those on values).

    No kernel gets numba's C-callable wrapper (``no_cfunc_wrapper``), which only a
    kernel passed to compiled code as a first-class function value would use (none
    is): lowering one per kernel was about 0.4 s of the 17 s a first ``vcut analyze``
    compiled.

    Every kernel releases the GIL (``nogil``) unless it says otherwise. numba compiles
    an ``np.empty``, ``np.zeros``, ``min``, ... that a kernel calls once per argument
    types *and the caller's flags*, so kernels with and without ``nogil`` each had their
    own copies: one flag for all is 9 of the 69 such compiles of a first ``vcut analyze``
    of strassen (N = 4) fewer, 21.4 s -> 20.8 s of compiling in one process. The kernels
    hold no Python objects, so nothing else changes, save that jobs run side by side
    (`vcut_base.progress.run_parallel`) now overlap in every kernel, not only in those
    marked before; each job writes arrays of its own.
    """
    options.setdefault("no_cfunc_wrapper", True)
    options.setdefault("nogil", True)
    made = numba.njit(*args, **options)
    if isinstance(made, Dispatcher):
        return _plain_calls(made)
    return lambda func: _plain_calls(made(func))


def _plain(ty):
    """The type a compiled call passes for an argument of type ``ty``: no literal, and a
    signed integer scalar narrower than 64 bits as ``int64`` (numba computes with such
    integers as ``int64`` anyway, so the helper's arithmetic is the same)."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Integer) and ty.signed and ty.bitwidth < 64:
        return types.int64
    return ty


def _plain_calls(dispatcher):
    """``dispatcher`` with its compiled-code call typing on unliteral argument types."""
    if dispatcher.targetoptions.get("no_cpython_wrapper"):
        _compiled_calls_only(dispatcher)
    typed = dispatcher.get_call_template

    def get_call_template(args, kws):
        return typed(tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    dispatcher.compile = _locked_compile(dispatcher, dispatcher.compile)
    return dispatcher


def _compiled_calls_only(dispatcher):
    """A `helper` has no entry point for Python (numba builds none without the CPython
    wrapper, and would jump to the missing one): its signatures stay out of the table
    numba's dispatcher matches Python calls against, and a call from Python, which then
    asks `compile` for the code to run, gets a function that raises TypeError."""
    name = getattr(dispatcher.py_func, "__qualname__", "this helper")

    def refuse(*args, **kws):
        raise TypeError(f"{name} is a helper of compiled kernels (@helper): it has no Python "
                        "entry point; call it from an @njit kernel")

    def add_overload(cres):  # numba's, without entering the signature for Python calls
        dispatcher.overloads[tuple(cres.signature.args)] = cres

    compile_ = dispatcher.compile

    def compile(sig):
        compile_(sig)
        return refuse

    dispatcher.add_overload = add_overload
    dispatcher.compile = compile


def _locked_compile(dispatcher, compile_):
    """``dispatcher.compile`` (load a signature from numba's cache, else compile it and
    save it there) under the kernel's compile lock (`_hold_compiling`) where the signature
    is not compiled in this process yet. numba saves after its compile event ends, so the
    lock is held here, around load, compile and save.

    The compile lock is taken inside numba's own (``global_compiler_lock``, which numba's
    compile takes anyway), never before it: a thread holding a kernel's compile lock while
    it waited for numba's lock, held by another thread of this process that was waiting
    in `_wait_compiling` for that compile lock (its owner not yet in `_HELD`), stalled both
    for `WAIT_LIMIT` seconds (two simulations loading the simulator at once: a warm `vcut
    analyze` took 62 s instead of 2 now and then). In this order only the thread holding
    numba's lock holds or waits for compile locks, and a process waits only for a kernel
    another process compiles, one its own compile calls: no cycle.

    SIGINT and SIGTERM are held back for the whole call and delivered after it (module
    docstring); a handler that raises nothing then (a disarmed one) lets the call run
    again where a held signal ended `_wait_compiling`."""

    def compile(sig):
        with signals_held() as caught:  # module docstring: never interrupted halfway
            stack = _CAUGHT.__dict__.setdefault("stack", [])
            stack.append(caught)
            try:
                return locked(sig)
            except _Interrupted:  # a signal during `_wait_compiling`: delivered below
                if len(stack) > 1 or threading.current_thread() is not threading.main_thread():
                    raise  # by the outermost compile (of a kernel that calls this one); in
                    # another thread the job it runs is being stopped (`progress.stopping`)
            finally:
                stack.pop()
        return compile(sig)  # the signal's handler raised nothing (disarmed, ignored)

    def locked(sig):
        start_target()
        if fcntl is None or getattr(dispatcher, "_cache", None) is None:
            return compile_(sig)
        with global_compiler_lock:
            try:
                args, _ = sigutils.normalize_signature(sig)
                if tuple(args) in dispatcher.overloads:
                    return compile_(sig)
            except Exception:  # noqa: BLE001 - numba's own call says what is wrong
                return compile_(sig)
            fd = _hold_compiling(dispatcher)
            try:
                return compile_(sig)
            finally:
                if fd is not None:
                    _HELD.pop(fd, None)
                    os.close(fd)  # releases the lock

    return compile


_TARGET = threading.Lock()
#: The package numba's BLAS probe imports (``scipy.linalg.cython_blas``) is part of.
BLAS_PACKAGE = "scipy.linalg"


class _BlasFlag:
    """numba's ``numba.np.arraymath._HAVE_BLAS`` made lazy: ``check`` (numba's
    ``_check_blas``, which imports scipy's BLAS) runs when the flag is first read."""

    def __init__(self, check):
        self.check, self.value = check, None

    def __bool__(self):
        if self.value is None:
            self.value = bool(self.check())
        return self.value


class _NoProbe:
    """An import finder that refuses `BLAS_PACKAGE` to one thread (the one starting numba's
    target) while it is on ``sys.meta_path``; other threads import it as usual."""

    def __init__(self):
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if name == BLAS_PACKAGE and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"{name} is not imported while numba's CPU target "
                                      "starts (vcut_base.jitcache.start_target)", name=name)
        return None


def start_target():
    """Import ``numba.np.arraymath`` once, without its BLAS probe at import (see the
    module docstring); nothing when numba's CPU target has imported it already or scipy's
    BLAS is loaded (the probe is then cheap). Thread-safe; once arraymath is loaded, one
    look at ``sys.modules``."""
    if "numba.np.arraymath" in sys.modules:
        return
    with _TARGET:
        if "numba.np.arraymath" in sys.modules or BLAS_PACKAGE in sys.modules:
            return
        finder = _NoProbe()
        sys.meta_path.insert(0, finder)  # the probe's import fails at once, here only
        try:
            from numba.np import arraymath
        finally:
            sys.meta_path.remove(finder)
        if getattr(arraymath, "_HAVE_BLAS", True) is False and \
                callable(getattr(arraymath, "_check_blas", None)):
            arraymath._HAVE_BLAS = _BlasFlag(arraymath._check_blas)


#: ``@helper``: ``@njit(cache=True)`` for a kernel's
#: helper that allocates nothing, compiled without numba's reference counting. A
#: compiled function counts a reference to each array argument it holds, atomically, on
#: entry and again on exit; for a helper called per edge with a dozen array arguments
#: those atomic operations cost more than its work (neighbour expansion: 3.5x faster
#: without them on whitaker3, 1.7x on cit-HepPh; measured with bench/bench_quality.py).
#: The caller holds the references meanwhile, so a helper that creates no array needs
#: none; one that does fails to compile (numba refuses allocation without its runtime),
#: never silently. numba's own inlining (``inline="always"``) types the helper's code again
#: at each call site: LLVM inlines a small helper anyway, and the first run of ``vcut
#: partition --algo multilevel`` compiled 19 % less without it (kway_fm 4.7 s to 1.4 s).
#: Only a helper that returns arrays, called per element, keeps it (a call would count
#: references: `runtime.multilevel.refinement_kernels._push_grow`). A helper is called
#: from compiled code only, so numba builds neither its CPython wrapper (which unboxes
#: every argument: `mapping.simulation_kernels._events` takes 48) nor its C-callable one:
#: the first run of ``vcut analyze`` of strassen, N = 4, compiled 22 s instead of 25 s. A
#: call from Python raises TypeError (`_compiled_calls_only`).
helper = functools.partial(njit, cache=True, _nrt=False, no_cpython_wrapper=True,
                           no_cfunc_wrapper=True)


@contextlib.contextmanager
def _locked(index_path, exclusive):
    try:
        fd = os.open(index_path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a directory numba can read but not write: nothing to protect
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError:  # a file system without locks (some network mounts): as numba does
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def _ours(dispatcher):
    """A cached kernel (``cache=True``) of one of vcut's packages."""
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", None) or ""
    return (module.split(".")[0] in PACKAGES
            and not isinstance(getattr(dispatcher, "_cache", None), caching.NullCache))


class _Compiles(event.Listener):
    """Hears numba start a compile (a signature not in the cache, or a cache gone cold):
    counts vcut's and tells `vcut_base.progress` (the command line's first-run note)."""

    compiled = 0
    stack = []  # per compile under way, innermost last: what `_record` is to write, or None

    def on_start(self, ev):
        data = ev.data if isinstance(ev.data, dict) else {}
        dispatcher = data.get("dispatcher")
        note = None
        if _ours(dispatcher):
            type(self).compiled += 1
            if not self.stack and os.environ.get(RECORD_ENV):
                note = (dispatcher, data.get("args"), time.perf_counter())
            progress.compiling()
        self.stack.append(note)

    def on_end(self, ev):
        note = self.stack.pop() if self.stack else None
        if note is not None:
            _record(*note)


#: The environment variable naming the file that `vcut_base.ahead.record`'s command
#: appends the kernels it compiles from Python to.
RECORD_ENV = "VCUT_AHEAD_RECORD"
_T0 = time.perf_counter()


def _record(dispatcher, args, started):
    """Append a kernel compiled from Python to the manifest being recorded
    (`RECORD_ENV`): module, qualified name, seconds from the start of the process to the
    compile's, seconds the compile took, argument types."""
    func = dispatcher.py_func
    now = time.perf_counter()
    with open(os.environ[RECORD_ENV], "a", encoding="utf-8") as f:
        f.write(f"{func.__module__}\t{func.__qualname__}\t{started - _T0:.3f}\t"
                f"{now - started:.3f}\t{tuple(args)!r}\n")


_HELD = {}  # fd -> path of each compile lock this process holds


def index_path(dispatcher):
    """The path of a cached kernel's index file in numba's cache (None where it has no
    on-disk cache)."""
    return getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None),
                   "_index_path", None)


def _compiling_path(dispatcher):
    """The compile lock of a kernel: a file beside its index in numba's cache."""
    index = index_path(dispatcher)
    return None if index is None else index + ".compiling"


def _hold_compiling(dispatcher):
    """Take the compile lock of a kernel ``dispatcher`` is about to load or compile
    (exclusive; `_locked_compile` holds it until the result is in the cache), so another
    process that wants this kernel meanwhile waits for it in `_wait_compiling` and loads
    it instead of compiling it too (the helper of `vcut_base.ahead` and the command it
    helps meet there). The fd, or None where the lock is not to be had (another process
    holds it; no locks here)."""
    path = _compiling_path(dispatcher)
    if fcntl is None or path is None:
        return None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    _HELD[fd] = path
    return fd


#: The signals held back by the compiles this thread is in (`_locked_compile`), innermost
#: last, as the lists `signals_held` fills; ``stack`` unset or empty outside them.
_CAUGHT = threading.local()


class _Interrupted(BaseException):
    """A signal was held back while `_wait_compiling` waited, or the job of the thread
    waiting is being stopped: the compile gives up before numba reads the cache, and
    `_locked_compile` delivers the signal (in the main thread) or ends the job."""


def _give_up():
    """Whether a signal is held back by a compile this thread is in, or this thread is a
    worker whose job is being stopped (`progress.stopping`)."""
    return any(_CAUGHT.__dict__.get("stack", ())) or progress.stopping()


#: The longest wait for another process's compile of a kernel (seconds), after which this
#: one goes on as if nobody compiled it; polled every `WAIT_STEP` seconds.
WAIT_LIMIT = 60.0
WAIT_STEP = 0.01


def _wait_compiling(index_path):
    """Before a kernel's cache is read: while another process holds its compile lock
    (`_hold_compiling`), wait for that compile to end (at most `WAIT_LIMIT` s), so that
    the read finds its result. No wait where nobody compiles it or this process does; a
    signal held back by the compile meanwhile, or in a worker thread its job's stop, ends
    it (`_Interrupted`)."""
    path = index_path + ".compiling"
    if fcntl is None or path in _HELD.values():
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # never compiled under a lock: nobody compiles it now
        return
    try:
        deadline = time.monotonic() + WAIT_LIMIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return
                if _give_up():
                    raise _Interrupted() from None
                time.sleep(WAIT_STEP)
            except OSError:  # a file system without locks
                return
    finally:
        os.close(fd)


def kernel_counts():
    """``(compiled, loaded)``: signatures of vcut's cached kernels this process compiled
    (numba found no cache entry) and loaded from numba's cache, over the kernel modules
    imported so far (helpers inlined into a loaded kernel are not loaded on their own)."""
    loaded = 0
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in PACKAGES:
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, Dispatcher) and _ours(obj):
                loaded += sum(obj.stats.cache_hits.values())
    return _Compiles.compiled, loaded


def install():
    """Lock numba's cache index (module docstring); idempotent."""
    if not getattr(_Compiles, "registered", False):
        event.register("numba:compile", _Compiles())
        _Compiles.registered = True
    cls = getattr(caching, "IndexDataCacheFile", None)
    if fcntl is None or cls is None or getattr(cls, "_vcut_locked", False):
        return
    if not all(callable(getattr(cls, name, None)) for name in ("save", "load", "flush")):
        return  # a numba whose cache file differs: leave it alone
    save, load, flush = cls.save, cls.load, cls.flush

    def locked_save(self, key, data):
        with _locked(self._index_path, True):
            return save(self, key, data)

    def locked_load(self, key):
        _wait_compiling(self._index_path)
        with _locked(self._index_path, False):
            return load(self, key)

    def locked_flush(self):
        with _locked(self._index_path, True):
            return flush(self)

    cls._vcut_unlocked = (save, load, flush)  # numba's own, for the test that shows the race
    cls.save, cls.load, cls.flush = locked_save, locked_load, locked_flush
    cls._vcut_locked = True


install()
