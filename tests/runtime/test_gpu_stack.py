"""The numpy / numba-cuda pair the GPU kernels need: the known break (numba-cuda
0.30.4 calls np.row_stack, gone in numpy 2.5) is refused with one line naming the
versions and the fix, ``auto`` falls back to the CPU, and the gpu extra pins a pair
that works."""

import os
import tomllib

import pytest
from packaging.requirements import Requirement

import runtime.gpu as G
from vcut_base.errors import InputError
from runtime.gpu import resolve_device

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("numpy, cuda, broken", [
    ("2.5.0", "0.30.4", True),
    ("2.5.0rc1", "0.30.4", True),
    ("2.6.1", "0.20.0", True),
    ("2.4.6", "0.30.4", False),
    ("1.26.4", "0.30.4", False),
    ("2.5.0", "0.31.0", False),     # a later numba-cuda is not assumed broken
    ("2.5.0", None, False),         # numba's own numba.cuda
])
def test_known_broken_pairs(numpy, cuda, broken):
    problem = G.stack_problem(numpy, cuda)
    assert (problem is not None) == broken
    if broken:
        assert f"numba-cuda {cuda}" in problem and f"numpy {numpy}" in problem
        assert "numpy<2.5" in problem and "\n" not in problem


def test_release_fields():
    assert G._release("2.5.0rc1") == (2, 5, 0)
    assert G._release("0.30.4") == (0, 30, 4)
    assert G._release("2.4.6.post1") == (2, 4, 6)


def test_a_broken_pair_is_one_line_and_auto_falls_back(monkeypatch):
    monkeypatch.setattr(G, "is_simulator", lambda: False)
    monkeypatch.setattr(G, "_device_present", lambda: True)
    monkeypatch.setattr(G, "_installed_stack", lambda: ("2.5.0", "0.30.4"))
    with pytest.raises(InputError, match=r"numba-cuda 0.30.4 cannot compile kernels with numpy 2.5.0"):
        resolve_device("gpu")
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(G, "_installed_stack", lambda: ("2.4.6", "0.30.4"))
    assert resolve_device("auto") == "gpu"


def test_the_gpu_extra_pins_a_working_pair():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    reqs = {Requirement(r).name: Requirement(r) for r in project["optional-dependencies"]["gpu"]}
    cuda, numpy = reqs["numba-cuda"], reqs["numpy"]
    # every numba-cuda the extra admits that a break names is paired with a numpy below it
    for last, first in G.BROKEN_STACKS:
        if ".".join(map(str, last)) in cuda.specifier:
            below = ".".join(map(str, first))
            assert f"{below}.0" not in numpy.specifier and "2.4.6" in numpy.specifier
    # the base dependency still admits what the extra asks for
    base = next(Requirement(r) for r in project["dependencies"] if r.startswith("numpy"))
    assert "2.4.6" in base.specifier


def test_the_under_utilization_warning_is_filtered():
    import warnings

    from numba.core.errors import NumbaPerformanceWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()  # not the suite's own filter (pyproject's filterwarnings)
        warnings.simplefilter("always")
        G._cuda()  # every GPU path goes through it
        warnings.warn(NumbaPerformanceWarning(
            "Grid size 1 will likely result in GPU under-utilization due to low occupancy."))
        warnings.warn(NumbaPerformanceWarning("some other performance note"))

        class CudaTargetWarning(UserWarning):  # numba-cuda's own class, unrelated to numba's
            pass

        warnings.warn(CudaTargetWarning(
            "\x1b[1mGrid size 4 will likely result in GPU under-utilization due to low "
            "occupancy.\x1b[0m"))
    assert len(seen) == 1 and "some other performance note" in str(seen[0].message)


@pytest.mark.parametrize("simulator, after", [("1", 1e-4), ("0", 0.005)])
def test_the_simulator_paces_pythons_thread_switches(simulator, after):
    # under numba's CUDA simulator the first look at the device lowers the switch interval
    # to SIMULATOR_SWITCH_INTERVAL (its launches poll their threads holding the GIL); without
    # it (no card here either) the interval stays Python's default
    import subprocess
    import sys

    code = ("import sys; import runtime.gpu as G; before = sys.getswitchinterval(); "
            "G._device_present(); print(before, sys.getswitchinterval())")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM=simulator)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=env, check=True).stdout.split()
    assert [round(float(x), 9) for x in out] == [0.005, after]  # held in microseconds
    assert G.SIMULATOR_SWITCH_INTERVAL == 1e-4
