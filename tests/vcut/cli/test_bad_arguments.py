"""Arguments of `partition_graph` that crashed or exhausted memory (issue 11, section 4)."""

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph import Graph
from tests.helpers import path_graph
from vcut.partition import partition_graph


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, True])
def test_seed_out_of_range(seed):
    with pytest.raises(InputError) as exc:
        partition_graph(path_graph(5), 2, "random", seed=seed)
    assert str(exc.value) == f"the seed must be an integer in 0..{2**63 - 1}, got {seed!r}"


def test_largest_valid_seed_works():
    part = partition_graph(path_graph(9), 2, "dbh", seed=2**63 - 1)
    assert set(part.assignment.tolist()) <= {0, 1}


def test_replica_sets_are_checked_before_allocating(monkeypatch):
    import vcut.cuts.base

    m = 2000
    g = path_graph(m + 1)
    asked = []

    def check_memory(need, what, hint):  # refuses, as when memory is short
        asked.append((need, what, hint))
        raise InputError("short")

    monkeypatch.setattr(vcut.cuts.base, "check_memory", check_memory)
    # p = 2000 > 128: compact sets, 2001 vertices x (count 4 + overflow row 4 + 3 int16 ids)
    # = 28,014 bytes; p = 100: dense bitsets, 2001 x (count 4 + 2 words of 8) = 40,020 bytes
    for p, need in ((m, 28_014), (100, 40_020)):
        with pytest.raises(InputError, match="short"):
            partition_graph(g, p, "wb-libra")
        assert asked.pop() == (need, f"wb-libra with p = {p} on 2,001 vertices",
                               "use fewer clusters")


def test_loads_that_overflow_against_tiny_capacities_still_pick_a_cluster():
    g = Graph(n=4, src=np.array([0, 1, 2, 0]), dst=np.array([1, 2, 3, 3]),
              weight=np.array([1e308, 1e307, 1.0, 5.0]))
    for algo in ("w-pg", "wb-libra", "w-libra", "wb-pg"):
        part = partition_graph(g, 2, algo, capacities=[1e-300, 1.0])
        assert part.assignment.min() >= 0 and part.assignment.max() <= 1, algo
