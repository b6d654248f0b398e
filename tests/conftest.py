"""The suite's fixtures; the shared builders and helpers are in tests/helpers.py."""

import os

import pytest

# GPU kernels run under numba's CUDA simulator unless VCUT_REAL_GPU=1 (on a machine with a
# GPU); this must be decided before numba.cuda is first imported, so before tests.helpers.
if os.environ.get("VCUT_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

# the first-run note ("compiling kernels, first run only") stays out of the stderr the tests
# compare, whichever subprocess happens to compile first; tests/vcut/cli/test_compile.py
# turns it back on for its own commands
os.environ.setdefault("VCUT_COMPILE_NOTE", "0")
# nor does a command start the helper that compiles its later kernels beside it: the two
# test workers keep both cores busy, and a helper, stopped when its command ends, would
# mostly take their time on a cold cache (tests/vcut_base/test_ahead.py starts it itself)
os.environ.setdefault("VCUT_COMPILE_AHEAD", "0")

# numba.cuda loads below this line, see above
from runtime import config, gpu as runtime_gpu  # noqa: E402
from runtime.dask_cluster import dask_client as connect  # noqa: E402
from tests.helpers import ROOT, write_c  # noqa: E402


if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    # the blocks' pace and the simulator's locks (runtime.gpu sets them where a command asks
    # for the device; the tests also launch kernels directly)
    runtime_gpu._pace_simulator()


@pytest.fixture
def cfile(tmp_path):
    """``cfile(name, code)`` writes a C file into the test's directory."""

    def make(name, code):
        return write_c(str(tmp_path), name, code)

    return make


@pytest.fixture
def small_launches(monkeypatch):
    """Launches of 8 threads a block, so that small graphs span several blocks. A module that
    wants smaller launches still overrides this fixture, requesting it by its own name."""
    monkeypatch.setattr(config, "THREADS_PER_BLOCK", 8)


@pytest.fixture(scope="session")
def _dask_session():
    with connect(workers=2) as client:
        yield client


@pytest.fixture
def dask_client(_dask_session):
    """One LocalCluster of 2 worker processes (1 thread each) for the whole session:
    the configuration the scale-out tests are specified on; each test gets it with both
    workers up (a test that kills one leaves its restart to the nanny: a clean-clone CI
    saw the next test find no worker)."""
    _dask_session.wait_for_workers(2, timeout=120)
    return _dask_session


@pytest.fixture(scope="session")
def strassen8():
    """Trace and model-weighted graph of samples/strassen.c with N = 8 (~118 k instructions)."""
    from frontend import compile_program, trace_program
    from ir_graph import build_graph

    cm = compile_program([os.path.join(ROOT, "samples", "strassen.c")], defines=["N=8"])
    trace = trace_program(cm, timing=False)
    return trace, build_graph(trace, weights="model")



@pytest.fixture
def three_threads(monkeypatch):
    """Passes over edges (`vcut_base.memory.pass_threads`) in three threads from 100 edges
    on. ``watch(module)`` returns a list that gets the number of jobs of each
    `run_parallel` call ``module`` makes."""
    import vcut_base.memory as memory

    monkeypatch.setattr(memory, "PASS_EDGES", 100)
    monkeypatch.setattr(memory, "usable_cpus", lambda: 3)
    calls = []

    def watch(module):
        run = module.run_parallel
        monkeypatch.setattr(module, "run_parallel",
                            lambda jobs, k: calls.append(len(jobs)) or run(jobs, k))
        return calls

    return watch
