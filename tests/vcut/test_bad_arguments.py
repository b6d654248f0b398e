"""Arguments of `partition_graph` that crashed or exhausted memory (issue 11, section 4)."""

import numpy as np
import pytest

import frontend.memory
from frontend.errors import InputError
from ir_graph import Graph
from vcut.partition import partition_graph


def path_graph(m):
    return Graph(n=m + 1, src=np.arange(m), dst=np.arange(1, m + 1), weight=np.ones(m))


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, True])
def test_seed_out_of_range(seed):
    with pytest.raises(InputError) as exc:
        partition_graph(path_graph(4), 2, "random", seed=seed)
    assert str(exc.value) == f"the seed must be an integer in 0..{2**63 - 1}, got {seed!r}"


def test_largest_valid_seed_works():
    part = partition_graph(path_graph(8), 2, "dbh", seed=2**63 - 1)
    assert set(part.assignment.tolist()) <= {0, 1}


def test_replica_bitsets_are_checked_before_allocating(monkeypatch):
    monkeypatch.setattr(frontend.memory, "available_bytes", lambda: 200_000)
    m = 2000  # 2001 vertices x ceil(2000 / 64) = 32 words of 8 bytes = 512,256 bytes
    with pytest.raises(InputError) as exc:
        partition_graph(path_graph(m), m, "wb-libra")
    assert str(exc.value) == ("wb-libra with p = 2000 on 2,001 vertices needs about 500.2 KiB of "
                              "memory but 195.3 KiB are available; use fewer clusters")


def test_loads_that_overflow_against_tiny_capacities_still_pick_a_cluster():
    g = Graph(n=4, src=np.array([0, 1, 2, 0]), dst=np.array([1, 2, 3, 3]),
              weight=np.array([1e308, 1e307, 1.0, 5.0]))
    for algo in ("w-pg", "wb-libra", "w-libra", "wb-pg"):
        part = partition_graph(g, 2, algo, capacities=[1e-300, 1.0])
        assert part.assignment.min() >= 0 and part.assignment.max() <= 1, algo
