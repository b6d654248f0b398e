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

from runtime import config  # noqa: E402  (numba.cuda loads below this line, see above)
from runtime.dask_cluster import dask_client as connect  # noqa: E402
from tests.helpers import ROOT, write_c  # noqa: E402


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
def dask_client():
    """One LocalCluster of 2 worker processes (1 thread each) for the whole session:
    the configuration the scale-out tests are specified on."""
    with connect(workers=2) as client:
        yield client


@pytest.fixture(scope="session")
def strassen8():
    """Trace and model-weighted graph of samples/strassen.c with N = 8 (~118 k instructions)."""
    from frontend import compile_program, trace_program
    from ir_graph import build_graph

    cm = compile_program([os.path.join(ROOT, "samples", "strassen.c")], defines=["N=8"])
    trace = trace_program(cm, timing=False)
    return trace, build_graph(trace, weights="model")

