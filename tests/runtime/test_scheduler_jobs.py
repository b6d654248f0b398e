"""The job kinds of the scheduler: CPU and GPU (numba's CUDA simulator in CI)
implementations against hand-derived results and each job's plain reference."""

import numpy as np
import pytest

from frontend.errors import InputError
from ir_graph import Graph
from runtime import config
from runtime.scheduler import CudaDevice, schedule
from runtime.scheduler.jobs import BfsBatch, Matmul, PartitionBatch, StringSearch, make_job


@pytest.fixture(autouse=True)
def small_launches(monkeypatch):
    monkeypatch.setattr(config, "THREADS_PER_BLOCK", 8)


def path_graph(n):
    return Graph(n=n, src=np.arange(n - 1), dst=np.arange(1, n), weight=np.ones(n - 1),
                 directed=False)


def by_calls(job, run, sizes):
    """Run every sub-load, shuffled, in calls of the given sizes; combine."""
    order = np.random.default_rng(3).permutation(job.n_units)
    out, pos = {}, 0
    for s in sizes:
        part = order[pos:pos + s]
        out.update(zip(part.tolist(), run(part)))
        pos += s
    assert pos == job.n_units
    return job.combine(out)


def test_string_search_by_hand():
    # "abcabcab", chunks of 3: "abc" | "abc" | "ab"; the match at 3 starts in chunk 1
    job = StringSearch(b"abcabcab", b"abc", 3)
    assert [r.tolist() for r in job.run_cpu(np.arange(3))] == [[0], [3], []]
    assert job.reference().tolist() == [0, 3]
    # chunks of 2: "ab" | "ca" | "bc" | "ab": the match at 3 straddles units 1 and 2
    job = StringSearch(b"abcabcab", b"abc", 4)
    assert [r.tolist() for r in job.run_cpu(np.arange(4))] == [[0], [3], [], []]


def test_matmul_by_hand():
    job = Matmul(3, 3, seed=0)
    job.a[:] = [[1, 2, 0], [0, 1, 0], [3, 0, 1]]
    job.b[:] = [[1, 0, 2], [0, 1, 0], [4, 0, 1]]
    want = [[1, 2, 2], [0, 1, 0], [7, 0, 7]]
    assert job.combine(dict(enumerate(job.run_cpu(np.arange(3))))).tolist() == want
    assert job.reference().tolist() == want


def test_bfs_batch_by_hand():
    job = BfsBatch(path_graph(5), [0, 4, 2], 2)
    assert job.combine(dict(enumerate(job.run_cpu(np.arange(2))))).tolist() == \
        [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 1, 0, 1, 2]]


def gpu():
    return CudaDevice(0)


@pytest.mark.parametrize("make", [
    lambda: StringSearch.generate(600, pattern=b"ac", n_units=7, seed=2),
    lambda: Matmul(20, 6, seed=3),
    lambda: BfsBatch.generate(5, 4, n_sources=9, n_units=4, seed=4),
])
def test_cpu_and_gpu_calls_give_the_reference(make):
    job = make()
    ref = job.reference()
    assert job.same(by_calls(job, job.run_cpu, [1, 2, job.n_units - 3]), ref)
    dev = gpu()
    assert job.same(by_calls(job, lambda u: job.run_gpu(u, dev), [job.n_units - 2, 2]), ref)


def test_partition_batch_is_the_partitioner_and_cpu_only():
    from vcut.partition import partition_graph
    from runtime.generators import rmat

    g = rmat(6, 4, seed=1)
    job = PartitionBatch([g, path_graph(9)], [2, 3], seed=5)
    assert job.n_units == 4 and not job.gpu_capable
    got = job.run_cpu(np.array([1]))[0]
    assert np.array_equal(got, partition_graph(g, 3, "wb-libra", seed=5).assignment)
    with pytest.raises(NotImplementedError, match="issue 15"):
        job.run_gpu(np.array([0]), None)


@pytest.mark.parametrize("policy", ["hass", "min-min", "greedy", "qilin"])
def test_every_policy_on_cpu_and_gpu_gives_the_reference(policy):
    from runtime.scheduler import CpuDevice

    job = StringSearch.generate(400, pattern=b"ac", n_units=8, seed=1)
    res = schedule(job, [CpuDevice(), gpu()], policy, rounds=2)
    assert job.same(res.result, job.reference())
    assert not res.virtual and sum(res.units.values()) == 8


def test_bad_jobs():
    with pytest.raises(ValueError, match="pattern is empty"):
        StringSearch(b"abc", b"", 1)
    with pytest.raises(ValueError, match="longer than the text"):
        StringSearch(b"ab", b"abc", 1)
    with pytest.raises(ValueError, match="0 sub-loads"):
        StringSearch(b"abc", b"a", 0)
    with pytest.raises(ValueError, match="5 sub-loads for 4 rows"):
        Matmul(4, 5)
    with pytest.raises(ValueError, match="sources must lie in 0 .. 4"):
        BfsBatch(path_graph(5), [5], 1)
    with pytest.raises(InputError, match="--job 'sort'"):
        make_job("sort")
    with pytest.raises(InputError, match="--size 0: matmul takes a whole number in 1 .."):
        make_job("matmul", size=0)
    with pytest.raises(InputError, match="^matmul: 9 sub-loads for 8 rows; use 1 .. 8$"):
        make_job("matmul", size=8, units=9)
