"""The numpy / numba-cuda pair the GPU kernels need: the known break (numba-cuda
0.30.4 calls np.row_stack, gone in numpy 2.5) is refused with one line naming the
versions and the fix, ``auto`` falls back to the CPU, and the gpu extra pins a pair
that works."""

import os
import tomllib

import numpy as np
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



PACE = """
import sys
import numpy as np
import runtime.gpu as G
G._device_present()
seen = []
if G.is_simulator():
    from numba import cuda

    @cuda.jit
    def k(out):
        out[cuda.grid(1)] = sys.getswitchinterval()

    def launch():
        out = np.zeros(16)
        k[2, 8](out)
        seen.extend(out.tolist())

    launch()
    launch()
    from numba.cuda.simulator import kernelapi
    locked = getattr(kernelapi.FakeCUDAShared, "_vcut_locked", False)
else:
    locked = "none"
print(sorted(set(seen)), len(seen), sys.getswitchinterval(), locked)
"""


@pytest.mark.parametrize("simulator", ["1", "0"])
def test_the_simulator_paces_pythons_thread_switches_while_a_block_runs(simulator):
    # under numba's CUDA simulator every thread of a block sees the switch interval at
    # SIMULATOR_SWITCH_INTERVAL (its launches poll their threads holding the GIL); between
    # and after launches, and without the simulator (no card here either), the process
    # keeps Python's default; the shared arrays come locked (runtime.gpu._lock_shared_arrays)
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_ENABLE_CUDASIM=simulator)
    out = subprocess.run([sys.executable, "-c", PACE], capture_output=True, text=True, cwd=ROOT,
                         env=env, check=True).stdout.split("]")
    inside = [round(float(x), 9) for x in out[0].strip("[ ").split(",") if x.strip()]
    count, after, locked = out[1].split()
    assert inside == ([G.SIMULATOR_SWITCH_INTERVAL] if simulator == "1" else [])
    assert int(count) == (32 if simulator == "1" else 0) and float(after) == 0.005
    # a command's process gets the simulator's shared-array lock with its pace
    assert locked == ("True" if simulator == "1" else "none")
    assert G.SIMULATOR_SWITCH_INTERVAL == 1e-4


def test_blocks_run_side_by_side_share_one_lowering():
    # two blocks that overlap in time (each waits for the other inside): both run at the
    # lowered interval, and the interval is Python's again only after the second ends
    import sys
    import threading

    from numba.cuda.simulator import kernel as simulated

    G._pace_simulator()
    G._pace_simulator()  # once per process, however often asked
    assert simulated.BlockManager._vcut_paced
    meet, seen = threading.Barrier(2, timeout=60), []

    def body(tag):
        seen.append((tag, "in", sys.getswitchinterval()))
        meet.wait()  # both blocks running
        if tag == "short":
            return
        meet.wait()  # the short block's manager has returned
        seen.append((tag, "late", sys.getswitchinterval()))

    before = sys.getswitchinterval()

    def block(tag):
        simulated.BlockManager(body, (1, 1, 1), (1, 1, 1), False).run((0, 0, 0), tag)
        if tag == "short":
            seen.append((tag, "out", sys.getswitchinterval()))
            meet.wait()

    both = [threading.Thread(target=block, args=(t,)) for t in ("short", "long")]
    for t in both:
        t.start()
    for t in both:
        t.join(60)
    low = G.SIMULATOR_SWITCH_INTERVAL
    got = {(tag, when): round(v, 9) for tag, when, v in seen}
    assert got == {("short", "in"): low, ("long", "in"): low, ("short", "out"): low,
                   ("long", "late"): low}
    assert sys.getswitchinterval() == before and G._pace["blocks"] == 0


DEVICE = """
def dev(flag, i):
    if i == 0:
        flag[2] = 1  # thread 0 is inside
        while flag[1] == 0:  # until thread 1 is inside too
            pass
        return 0
    flag[1] = 1
    while flag[0] == 0:  # until thread 0 has returned
        pass
    return cuda.threadIdx.x
"""

KERNEL = """
def kernel(flag, out):
    i = cuda.threadIdx.x
    if i == 1:
        while flag[2] == 0:  # thread 0 enters first
            pass
    out[i] = dev(flag, i)
    if i == 0:
        flag[0] = 1
"""


@pytest.mark.skipif(not G.is_simulator(), reason="numba's CUDA simulator only")
def test_a_device_function_of_another_module_keeps_the_fake_cuda_until_its_last_thread_returns():
    # the simulator swaps its fake cuda module into a device function's module for each
    # call: thread 0 returns while thread 1 is still inside, and thread 1 then reads
    # cuda.threadIdx (numba's own simulator put the real module back under it: an
    # AttributeError); `runtime.gpu._pace_simulator` swaps back when the last thread leaves
    from numba import cuda

    G._pace_simulator()
    lib, main = {"cuda": cuda}, {"cuda": cuda}  # the globals of two modules
    exec(DEVICE, lib)
    main["dev"] = cuda.jit(device=True)(lib["dev"])
    exec(KERNEL, main)
    kernel = cuda.jit(main["kernel"])
    flag, out = np.zeros(3, dtype=np.int64), np.full(2, -1, dtype=np.int64)
    kernel[1, 2](flag, out)
    assert out.tolist() == [0, 1] and lib["cuda"] is cuda and main["cuda"] is cuda
