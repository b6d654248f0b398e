"""Edge-cut baselines (METIS, CompNet-style) and partitions given as files."""

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph import Graph
from vcut.label_propagation import label_propagation
from vcut.spac_kernels import symmetric_csr
from vcut.edge_cut import edge_cut, vertex_work
from vcut.output import read_assignment
from vcut.partition import partition_from_assignment

# two triangles {0, 1, 2} and {3, 4, 5} joined by the edge 2-3
SRC = np.array([0, 0, 1, 2, 3, 3, 4])
DST = np.array([1, 2, 2, 3, 4, 5, 5])


def test_vertex_work_is_the_in_edge_weight():
    w = np.array([1.0, 2, 3, 4, 5, 6, 7])
    # edges oriented low -> high: vertex 2 receives 0-2 and 1-2, vertex 5 receives 3-5 and 4-5
    assert vertex_work(SRC, DST, w, 6).tolist() == [0, 1, 2 + 3, 4, 5, 6 + 7]
    assert vertex_work(DST, SRC, w, 6).tolist() == [0, 1, 5, 4, 5, 13]  # direction is ignored


def test_label_propagation_by_hand():
    xadj, adj, w = symmetric_csr(SRC.astype(np.int64), DST.astype(np.int64),
                                          np.ones(7, dtype=np.int64), 6)
    labels = np.arange(6, dtype=np.int64)
    # in order 0..5 with community size <= 3: 0 joins 1 (tie 1/2: the first best), 1 stays,
    # 2 joins label 1 (weight 2), 3 cannot join the full label 1 and takes 4, 4 stays,
    # 5 joins label 4 (weight 2); the second round moves nothing
    rounds = label_propagation(xadj, adj, w.astype(float), np.ones(6), 3.0,
                                        np.arange(6, dtype=np.int64), 10, labels)
    assert labels.tolist() == [1, 1, 1, 4, 4, 4] and rounds == 2


def test_edge_cuts():
    w = np.ones(7)
    for method in ("metis", "multilevel"):
        parts = edge_cut(SRC, DST, w, 6, 2, method)
        assert np.count_nonzero(parts[SRC] != parts[DST]) == 1  # the bridge only
        assert sorted(parts.tolist()) == [0, 0, 0, 1, 1, 1]
    c = edge_cut(SRC, DST, w, 6, 2, "compnet", seed=1)
    assert set(c.tolist()) == {0, 1}
    assert np.array_equal(c, edge_cut(SRC, DST, w, 6, 2, "compnet", seed=1))
    assert edge_cut(SRC, DST, w, 6, 1, "compnet").tolist() == [0] * 6
    with pytest.raises(InputError, match="unknown edge cut 'kl'"):
        edge_cut(SRC, DST, w, 6, 2, "kl")
    with pytest.raises(InputError, match="7 clusters but the graph has only 6 vertices"):
        edge_cut(SRC, DST, w, 6, 7, "metis")


def test_partition_from_assignment():
    # edges: 0-1, 1-0 (a repeat), 2-2 (a self-loop), 1-2
    g = Graph(n=3, src=np.array([0, 1, 2, 1]), dst=np.array([1, 0, 2, 2]),
              weight=np.array([1.0, 2.0, 5.0, 3.0]))
    part = partition_from_assignment(g, [1, 0, 1, 0])
    assert part.info["p"] == 2 and part.simple_assignment.tolist() == [1, 0]  # 0-1 takes edge 0's
    assert part.weight.tolist() == [3.0, 3.0]
    assert part.metrics.loads == [3.0, 3.0] and part.metrics.replication_factor == 4 / 3
    assert partition_from_assignment(g, [1, 0, 1, 0], p=4).metrics.p == 4
    with pytest.raises(InputError, match="assigns 3 edges but the graph has 4"):
        partition_from_assignment(g, [0, 1, 0])
    with pytest.raises(InputError, match="cluster ids up to 3 but p = 2"):
        partition_from_assignment(g, [0, 1, 3, 0], p=2)
    with pytest.raises(InputError, match=">= 0"):
        partition_from_assignment(g, [0, -1, 0, 0])


def test_read_assignment(tmp_path):
    f = tmp_path / "g.part"
    f.write_text("0\n2\n1\n")
    assert read_assignment(str(f)).tolist() == [0, 2, 1]
    f.write_text("0\nx1\n")
    with pytest.raises(InputError, match="'x1' is not a cluster id"):
        read_assignment(str(f))
    with pytest.raises(InputError, match="cannot read partition file"):
        read_assignment(str(tmp_path / "missing.part"))
