"""The job kinds of the scheduler: CPU and GPU (numba's CUDA simulator in CI)
implementations against hand-derived results and each job's plain reference."""

import gc
import types

import numpy as np
import pytest
from numba import cuda

from vcut_base.errors import InputError
from ir_graph import Graph
from runtime.scheduler import CudaDevice, schedule
from runtime.scheduler.jobs import (
    BfsBatch,
    Matmul,
    StringSearch,
    make_job,
)
from vcut.partition_batch import PartitionBatch
from tests.helpers import path_graph

pytestmark = pytest.mark.usefixtures("small_launches")


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


class CountingCuda:
    """numba.cuda, counting host-to-device transfers (bytes of each)."""

    def __init__(self):
        self.sent = []

    def to_device(self, a, **kw):
        self.sent.append(np.asarray(a).nbytes)
        return cuda.to_device(a, **kw)

    def __getattr__(self, name):
        return getattr(cuda, name)


def stand_in():
    """The gpu object run_gpu sees, without the scheduler's CudaDevice."""
    return types.SimpleNamespace(cuda=CountingCuda(), stream=cuda.stream(), cache={})


class CountLaunches:
    def __init__(self, kernel):
        self.kernel, self.n = kernel, 0

    def __getitem__(self, config):
        self.n += 1
        return self.kernel[config]


def test_by_hand_on_the_gpu():
    g = stand_in()
    job = StringSearch(b"abcabcab", b"abc", 4)  # the match at 3 straddles units 1 and 2
    assert [r.tolist() for r in job.run_gpu(np.array([2, 0, 3, 1]), g)] == [[], [0], [], [3]]
    job = StringSearch(b"abcabcab", b"abc", 3)
    assert [r.tolist() for r in job.run_gpu(np.array([1, 2]), g)] == [[3], []]
    job = Matmul(3, 2, seed=0)  # tiles of 2 rows and 1 row
    job.a[:] = [[1, 2, 0], [0, 1, 0], [3, 0, 1]]
    job.b[:] = [[1, 0, 2], [0, 1, 0], [4, 0, 1]]
    assert [c.tolist() for c in job.run_gpu(np.array([1, 0]), g)] == \
        [[[7, 0, 7]], [[1, 2, 2], [0, 1, 0]]]
    job = BfsBatch(path_graph(5), [0, 4, 2], 2)
    assert job.combine(dict(zip([1, 0], job.run_gpu(np.array([1, 0]), g)))).tolist() == \
        [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 1, 0, 1, 2]]


def test_directed_bfs_by_hand():
    # 0 -> 1 -> 2 <- 3: followed along the edges only; -1 where not reached
    g = Graph(n=4, src=np.array([0, 1, 3]), dst=np.array([1, 2, 2]), weight=np.ones(3),
              directed=True)
    job = BfsBatch(g, [0, 3, 2], 3)
    want = [[0, 1, 2, -1], [-1, -1, 1, 0], [-1, -1, 0, -1]]
    assert job.reference().tolist() == want
    assert np.vstack(job.run_cpu(np.arange(3))).tolist() == want
    assert np.vstack(job.run_gpu(np.arange(3), stand_in())).tolist() == want


@pytest.mark.parametrize("make, kernel", [
    (lambda: StringSearch.generate(300, pattern=b"ac", n_units=6, seed=2), "search"),
    (lambda: Matmul(12, 6, seed=3), "mm"),
    (lambda: BfsBatch.generate(4, 4, n_sources=6, n_units=6, seed=4), "bfs_distances_gpu"),
])
def test_a_gpu_call_is_one_bundle(make, kernel, monkeypatch):
    from runtime.scheduler.jobs import job_kernels_gpu

    job, g = make(), stand_in()
    launches = CountLaunches(getattr(job_kernels_gpu, kernel))
    monkeypatch.setattr(job_kernels_gpu, kernel, launches)
    job.run_gpu(np.array([0]), g)  # the first call also moves the setup data
    assert sum(g.cuda.sent[:-1]) == job.setup_bytes() and launches.n == 1
    g.cuda.sent.clear()
    units = np.array([4, 1, 3])
    job.run_gpu(units, g)
    assert len(g.cuda.sent) == 1 and launches.n == 2
    assert g.cuda.sent[0] <= len(units) * job.unit_bytes()


def test_device_data_is_never_a_dead_jobs():
    # a new job may get a collected job's id; it must not get that job's B
    g = stand_in()
    for seed in range(6):
        job = Matmul(5, 1, seed=seed)
        assert job.same(job.run_gpu(np.array([0]), g)[0], job.reference())
        assert len(g.cache) == 1  # dead jobs' device data is dropped
        del job
        gc.collect()


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
    from runtime.generators import rmat
    from vcut.partition import partition_graph

    g = rmat(6, 4, seed=1)
    job = PartitionBatch([g, path_graph(9)], [2, 3], seed=5)
    assert job.n_units == 4 and not job.gpu_capable
    got = job.run_cpu(np.array([1]))[0]
    assert np.array_equal(got, partition_graph(g, 3, "wb-libra", seed=5).assignment)
    with pytest.raises(NotImplementedError, match="sequential stream, which runs on the CPU"):
        job.run_gpu(np.array([0]), None)
    assert job.same(by_calls(job, job.run_cpu, [3, 1]), job.reference())


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
    with pytest.raises(InputError, match="^--units 9: matmul of --size 8 has at most 8 sub-loads "
                       r"\(rows\); use fewer$"):
        make_job("matmul", size=8, units=9)
    with pytest.raises(InputError, match="--size 2.5: string-search takes a whole number"):
        make_job("string-search", size=2.5)
    with pytest.raises(InputError, match="--size '8': matmul"):
        make_job("matmul", size="8")
    with pytest.raises(InputError, match="pattern .4 bytes. is longer than the text .2 bytes"):
        make_job("string-search", size=2)
    with pytest.raises(InputError, match="--units 3: .* one sub-load per graph and k, here 4"):
        make_job("partition-batch", size=2, units=3, scale=4, ks=(2, 3))
    with pytest.raises(ValueError, match="at least one source"):
        BfsBatch(path_graph(5), [], 1)
    with pytest.raises(ValueError, match="k = 1; use k >= 2"):
        PartitionBatch([path_graph(5)], [1])


def test_make_job_sizes_and_options():
    job = make_job("string-search", size=1000, units=7, pattern=b"ab", seed=1)
    assert job.describe() == {"kind": "string-search", "units": 7, "bytes": 1000, "pattern": "ab"}
    assert len(job.reference()) > 0
    assert make_job("matmul", size=10, units=6).n_units == 5  # tiles of 2 rows: no empty tile
    assert StringSearch(b"a" * 10, b"a", 6).n_units == 5
    assert make_job("matmul", size=64).describe()["units"] == 64  # never more units than rows
    job = make_job("bfs-batch", size=5, units=4, n_sources=10, edge_factor=2)
    assert (job.n_units, job.describe()["sources"], job.graph.n) == (4, 10, 32)
    job = make_job("partition-batch", size=2, units=4, scale=4, ks=(2, 3))
    assert job.n_units == 4 and not job.gpu_capable
