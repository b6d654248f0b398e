"""The greedy family's batched stream with the decide step on the GPU (`vcut.gpu_greedy`).

Without a GPU the kernels run under numba's CUDA simulator (tests/conftest.py);
launches are patched to 8 threads per block so that a batch spans several blocks.
"""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcut_base.errors import InputError
from runtime import config, gpu as runtime_gpu
from runtime.generators import rmat
from tests.helpers import graph, greedy_reference, rounds_of, weighted_graphs
from vcut import gpu_greedy
from vcut.partition import partition_graph

GREEDY = ("pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra")

pytestmark = pytest.mark.usefixtures("small_launches")


def test_gpu_batches_equal_the_cpu_batches_and_one_edge_batches_the_stream():
    # the recheck form: decisions on the device, the apply on the host
    g = rmat(6, 4, seed=4)
    small = rmat(4, 3, seed=4)  # one launch per edge: a short stream
    for algo in GREEDY:
        for batch in (9, 64, 10_000):
            cpu = partition_graph(g, 6, algo, options={"batch": batch})
            gpu = partition_graph(g, 6, algo, options={"batch": batch, "apply": "recheck"},
                                  device="gpu")
            assert gpu.assignment.tolist() == cpu.assignment.tolist(), (algo, batch)
            assert gpu.info["redecided"] == cpu.info["redecided"]
            assert gpu.info["device"] == "gpu" and "device" not in cpu.info
            m = gpu.info["simple_edges"]
            # a decide launch per batch, a scatter launch between two batches
            assert gpu.info["launches"] == 2 * math.ceil(m / min(batch, m)) - 1
        seq = partition_graph(small, 6, algo)
        assert partition_graph(small, 6, algo, options={"batch": 1, "apply": "recheck"},
                               device="gpu").assignment.tolist() == seq.assignment.tolist()


@settings(max_examples=25, deadline=None)
@given(weighted_graphs(), st.integers(2, 9), st.sampled_from(["pg", "libra", "wb-pg", "wb-libra"]),
       st.sampled_from([1, 3, 64]))
def test_gpu_batches_equal_the_literal_batches(gw, p, algo, batch):
    edges, weights = gw
    p = min(p, len(edges))
    weighted = algo.startswith("w")
    ref = greedy_reference(edges, weights if weighted else [1] * len(edges), p,
                           rule="libra" if "libra" in algo else "pg", bounded=algo.startswith("wb"),
                           lam=1.0, batch=batch)
    got = partition_graph(graph(edges, weights), p, algo,
                          options={"batch": batch, "apply": "recheck"}, device="gpu")
    assert got.assignment.tolist() == ref


def test_gpu_rounds_equal_the_cpu_twin():
    # every round on the device (one cooperative launch per CHUNK edges): the CPU twin's
    # assignment, re-decisions and rounds (the twin itself equals a literal transcription,
    # tests/vcut/test_rounds.py); a single block of 8 threads under the simulator
    g = rmat(5, 4, seed=4)
    for algo, batch, rounds, p in (("wb-libra", 16, 64, 6), ("pg", 1000, 64, 5),
                                   ("w-pg", 13, 2, 3)):
        with rounds_of(rounds):
            cpu = partition_graph(g, p, algo, options={"batch": batch, "apply": "rounds"})
            gpu = partition_graph(g, p, algo, options={"batch": batch}, device="gpu")
        assert gpu.assignment.tolist() == cpu.assignment.tolist(), algo
        for key in ("redecided", "apply_rounds", "apply"):
            assert gpu.info[key] == cpu.info[key], key
        assert gpu.info["device"] == "gpu" and gpu.info["launches"] == 1  # m < CHUNK


def test_gpu_rounds_launch_per_chunk_and_one_edge_batches(monkeypatch):
    small = rmat(3, 3, seed=4)
    seq = partition_graph(small, 3, "wb-libra")
    monkeypatch.setattr(gpu_greedy, "CHUNK", 4)
    gpu = partition_graph(small, 3, "wb-libra", options={"batch": 1}, device="gpu")
    m = seq.info["simple_edges"]
    assert gpu.assignment.tolist() == seq.assignment.tolist()
    assert gpu.info["launches"] == math.ceil(m / 4) and gpu.info["apply_rounds"] == m


def test_default_batch_capacities_and_the_bound():
    g = rmat(5, 6, seed=7)
    caps = [1, 2, 3, 2]
    gpu = partition_graph(g, 4, "wb-libra", options={"lam": 1.1}, device="gpu", capacities=caps)
    m = gpu.info["simple_edges"]
    assert gpu.info["batch"] == min(m, 65536) == gpu_greedy.default_batch(m)
    assert gpu.info["apply"] == "rounds"
    cpu = partition_graph(g, 4, "wb-libra",
                          options={"batch": gpu.info["batch"], "lam": 1.1, "apply": "rounds"},
                          capacities=caps)
    assert gpu.assignment.tolist() == cpu.assignment.tolist()
    loads = np.bincount(gpu.assignment, minlength=4)
    share = np.array(caps) / sum(caps)
    # the bound lambda * share * W, plus the one edge that may cross it when it fills
    assert (loads <= 1.1 * share * m + 1).all()


def test_auto_takes_the_gpu_when_one_is_usable(monkeypatch):
    g = graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    assert partition_graph(g, 2, "wb-libra", device="auto").info.get("device") == "gpu"
    assert "device" not in partition_graph(g, 2, "hdrf", device="auto").info  # the CPU's
    monkeypatch.setattr(runtime_gpu, "_device_present", lambda: False)
    part = partition_graph(g, 2, "wb-libra", device="auto")
    assert "device" not in part.info and "batch" not in part.info  # the sequential stream


def test_bad_devices_and_memory(monkeypatch):
    g = graph([(0, 1), (1, 2), (2, 3)])
    with pytest.raises(InputError, match="^unknown device 'tpu'; use cpu, gpu or auto$"):
        partition_graph(g, 2, "wb-libra", device="tpu")
    with pytest.raises(InputError, match="hdrf runs on the CPU: drop --device"):
        partition_graph(g, 2, "hdrf", device="gpu")
    big = rmat(9, 4, seed=1)
    with pytest.raises(InputError, match="p <= 128; got p = 129"):
        partition_graph(big, 129, "wb-libra", device="gpu")
    need = gpu_greedy.device_bytes(4, 3, 1, 65536)
    assert need == 8 * (3 * 3 + 4 + 8 + 3 + 2 * 3 * 3)
    monkeypatch.setattr(config, "DEVICE_MEMORY", need - 1)
    with pytest.raises(InputError, match=f"needs {need / 2**20:,.1f} MiB of device memory"):
        partition_graph(g, 2, "wb-libra", options={"apply": "recheck"}, device="gpu")
    # rounds: quanta (m), rows (n), degrees, counts, first writers (3 n), choices, bits,
    # states, tiles (4 B), 4 per-cluster arrays, the counters in 8 bytes; ends, order and
    # the assignment in 4 (int32 while they fit)
    need = gpu_greedy.rounds_bytes(4, 3, 1, 65536, 2)
    assert need == 8 * (3 + 4 + 3 * 4 + 4 * 3 + 4 * 2 + 6) + 4 * 4 * 3
    monkeypatch.setattr(config, "DEVICE_MEMORY", need - 1)
    with pytest.raises(InputError, match="needs 0.0 MiB of device memory, 0.0 MiB are free"):
        partition_graph(g, 2, "wb-libra", device="gpu")
    monkeypatch.setattr(config, "DEVICE_MEMORY", None)
    monkeypatch.setattr(runtime_gpu, "_device_present", lambda: False)
    with pytest.raises(InputError, match="no CUDA GPU is available here"):
        partition_graph(g, 2, "wb-libra", device="gpu")


def test_cli(tmp_path):
    path = tmp_path / "g.txt"
    g = rmat(5, 4, seed=2)
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(g.src.tolist(), g.dst.tolist())))

    def run(*a):
        return subprocess.run([sys.executable, "-m", "vcut", "partition", str(path), "-p", "4",
                               *a], capture_output=True, text=True)

    r = run("--device", "gpu", "--batch", "50", "--json")
    assert r.returncode == 0, r.stderr
    gpu = json.loads(r.stdout)
    r = run("--batch", "50", "--json", "--apply", "rounds")
    cpu = json.loads(r.stdout)
    assert (gpu["device"], cpu["device"]) == ("gpu", "cpu")
    for key in ("replication_factor", "edge_weight_imbalance", "batch", "redecided", "loads",
                "apply", "apply_rounds"):
        assert gpu[key] == cpu[key], key
    assert gpu["apply"] == "rounds"
    r = run("--apply", "rounds")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: --apply is for the greedy family's batched stream: give --batch or --device "
        "gpu, or drop --apply"]
    r = run("--device", "gpu", "--workers", "2")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: --device gpu runs in this process; the Dask workers (--workers, --scheduler, "
        "--out-of-core) partition on their CPUs: drop one"]
    r = run("--device", "gpu", "--algo", "ne")
    assert r.returncode == 2 and "ne runs on the CPU: drop --device" in r.stderr
