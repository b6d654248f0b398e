"""Defects the ``cli-schedule`` fuzz target found in ``vcut schedule``, one test each: the
exact exit status and the one error line (no traceback, no hang, nothing written)."""

import json
import os
import time

import pytest

from vcut.cli import main


def _run(capsys, *argv):
    code = main(["schedule", *argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    return code, lines[-1] if lines else "", out


def test_every_device_failing_is_a_documented_exit(capsys):
    """Was exit 1 (undocumented): the injected fault of the only device ended the run."""
    code, err, _ = _run(capsys, "--job=bfs-batch", "--size=1", "--rounds=4", "--policy=hass",
                        "--devices=sim:gpu:fail=3", "--check")
    assert code == 7
    assert err.startswith("error: every device failed, the last sim:gpu (sim:gpu: injected "
                          "fault on call 3); ")
    assert err.endswith("add a device to --devices or set its fail= to a later call")


@pytest.mark.parametrize("devices, what", [
    # was a hang: the ideal split's search doubled its bound to inf and looped there
    ("sim:gpu:latency=1e308", "sim:gpu"),
    # was OverflowError (time.sleep, threading wait) with a real CPU in the run
    ("cpu,sim:gpu:launch=1e308", "sim:gpu"),
    ("sim:gpu,cpu,sim:gpu:fail=2:latency=1e308", "sim:gpu#2"),
    # was a hang: a wall-clock run slept 1.7e308 s
    ("sim:cpu:overhead=1.7e308,cpu", "sim:cpu"),
    ("sim:gpu:speed=1e-320", "sim:gpu"),  # work / rate overflows
])
def test_modelled_times_past_the_clock_are_refused(capsys, devices, what):
    t0 = time.perf_counter()
    code, err, out = _run(capsys, "--job=string-search", "--size=100", "--units=4", "--rounds=1",
                          f"--devices={devices}", "--json")
    assert code == 2
    assert err.startswith(f"error: simulated device {what}: string-search's 4 sub-loads are "
                          "modelled at ")
    assert err.endswith("past the 1e+300 s a schedule can add up; use a smaller overhead, "
                        "latency, launch or saturation, or a larger speed or bandwidth")
    assert json.loads(out)["exit_code"] == 2
    assert time.perf_counter() - t0 < 30


def test_a_wall_clock_run_refuses_an_hour_long_modelled_call(capsys):
    code, err, _ = _run(capsys, "--job=matmul", "--size=8", "--rounds=1",
                        "--devices=cpu,sim:gpu:latency=5000")
    assert code == 2
    assert err == ("error: simulated device sim:gpu: one call is modelled at 5e+03 s, and with "
                   "a real device in --devices the wall clock waits modelled time out (at most "
                   "3600 s a call); use simulated devices only (sim:cpu: a virtual clock) or a "
                   "faster model")


def test_the_same_latency_runs_on_the_virtual_clock(capsys):
    code, _, out = _run(capsys, "--job=matmul", "--size=8", "--rounds=1",
                        "--devices=sim:cpu,sim:gpu:latency=5000", "--json")
    assert code == 0
    assert sum(json.loads(out)["results"][0]["units"].values()) == 8


@pytest.mark.parametrize("key", ["latency", "overhead", "launch", "saturation", "speed"])
def test_infinite_model_times_are_refused(capsys, key):
    code, err, _ = _run(capsys, "--job=matmul", "--size=8", "--rounds=1",
                        f"--devices=sim:gpu:{key}=inf")
    assert code == 2
    assert err == (f"error: simulated device sim:gpu: {key}=inf must be a finite number (only "
                   "bandwidth and memory may be inf)")


def test_wall_clock_waits_are_bounded(monkeypatch):
    """Was OverflowError: the engine slept a simulated call's modelled time in one piece."""
    import threading

    import numpy as np

    from runtime.scheduler import engine as E
    from runtime.scheduler.devices import CpuDevice, SimDevice
    from runtime.scheduler.jobs import make_job

    class Stop(Exception):
        pass

    waits = []

    def sleep(seconds):
        waits.append(seconds)
        raise Stop

    job = make_job("matmul", size=2, units=2)
    sim = SimDevice("gpu", latency=1e300)
    eng = E.Engine([CpuDevice(), sim], job)
    try:
        eng.start(sim, np.arange(1, dtype=np.int64), "call")
        monkeypatch.setattr(E.time, "sleep", sleep)
        with pytest.raises(Stop):
            eng._next()
    finally:
        monkeypatch.undo()
        eng.close()
    assert waits == [threading.TIMEOUT_MAX]
    assert sim.units_by(job, float("inf")) == float("inf")  # was an endless doubling


@pytest.mark.parametrize("argv, message", [
    # was 'error: Maximum allowed dimension exceeded' (numpy, 2**63 sources drawn)
    (["--job=bfs-batch", "--size=3", "--units=9223372036854775808"],
     "error: bfs-batch of --size 3 in 9,223,372,036,854,775,808 sub-loads needs about 1.25e+21 "
     "bytes of memory but 1.0 GiB are available; use a smaller --size or fewer --units"),
    # was an attempt to allocate 16 GiB of sources
    (["--job=bfs-batch", "--size=3", "--units=2147483648"],
     "error: bfs-batch of --size 3 in 2,147,483,648 sub-loads needs about 272.0 GiB of memory "
     "but 1.0 GiB are available; use a smaller --size or fewer --units"),
    # were MemoryError (exit 11) or the OOM killer: sizes within the kinds' limits
    (["--job=string-search", "--size=17179869184"],
     "error: string-search of --size 17,179,869,184 needs about 160.0 GiB of memory but "
     "1.0 GiB are available; use a smaller --size"),
    (["--job=matmul", "--size=65536"],
     "error: matmul of --size 65,536 needs about 192.0 GiB of memory but 1.0 GiB are "
     "available; use a smaller --size"),
    (["--job=partition-batch", "--size=4096"],
     "error: partition-batch of --size 4,096 needs about 16.0 GiB of memory but 1.0 GiB are "
     "available; use a smaller --size"),
    # was checked after generating the whole text
    (["--job=string-search", "--size=10", "--units=11"],
     "error: --units 11: string-search of --size 10 has at most 10 sub-loads (bytes); use fewer"),
])
def test_job_sizes_are_checked_before_allocating(capsys, monkeypatch, argv, message):
    monkeypatch.setattr("vcut_base.memory.available_bytes", lambda: 1 << 30)
    code, err, _ = _run(capsys, *argv, "--devices=cpu")
    assert (code, err) == (2, message)


@pytest.mark.parametrize("seed", ["-1", "9223372036854775808"])
@pytest.mark.parametrize("devices", ["cpu", "sim:cpu"])
def test_seed_out_of_range_names_the_seed(capsys, seed, devices):
    """Were 'error: expected non-negative integer' (numpy) and, for 2**63, a partition batch
    whose every device 'failed' (its warm-up call, or exit 7 on the virtual clock)."""
    code, err, _ = _run(capsys, "--job=partition-batch", "--size=1", "--rounds=1",
                        f"--devices={devices}", f"--seed={seed}")
    assert (code, err) == (2, f"error: --seed {seed}: the job's seed is a whole number in "
                              "0 .. 9223372036854775807")


def test_gpu_without_a_gpu_names_the_devices_option(capsys, monkeypatch):
    """Was '--device gpu: ... use --device cpu': an option vcut schedule does not have."""
    monkeypatch.setattr("runtime.gpu._device_present", lambda: False)
    code, err, _ = _run(capsys, "--job=matmul", "--size=8", "--rounds=1", "--devices=cpu,gpu")
    assert (code, err) == (2, "error: --devices gpu:0: no CUDA GPU is available here (numba.cuda "
                              "found none); use cpu, a simulated GPU (sim:gpu[:key=value...]) or "
                              "auto (the CPU and every GPU found)")


def test_refusals_leave_no_report(tmp_path, capsys):
    report = tmp_path / "sched.html"
    code, _, _ = _run(capsys, "--job=matmul", "--size=8", "--rounds=1",
                      "--devices=sim:gpu:fail=1", f"--report={report}")
    assert code == 7
    assert os.listdir(tmp_path) == []
