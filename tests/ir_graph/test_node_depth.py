"""The call depth of every node of an IR graph (Graph.node_depth)."""

import numpy as np
import pytest

from ir_graph.formats import read_graph, write_graph
from ir_graph.graph import Graph, GraphFormatError
from tests.helpers import Built


def test_depth_by_hand(cfile):
    b = Built(cfile("d.c", """
        static int g(int x) {
            return x * 3;                   /* @g */
        }
        static int f(int x) {
            return g(x) + 1;                /* @f */
        }
        static int rec(int n) {
            if (n == 0) return 0;
            return rec(n - 1) - 2;          /* @rec */
        }
        int main(void) {
            volatile int a = 2;
            return f(a) * f(a + 1) + rec(3); /* @m */
        }
        """))
    d = b.g.node_depth
    assert d.dtype == np.int32 and len(d) == b.g.n
    assert d[b.nodes("@g", "mul")].tolist() == [2, 2]  # main -> f -> g, twice
    assert d[b.nodes("@f", "add")].tolist() == [1, 1]
    assert d[b.nodes("@m", "mul")].tolist() == [0]
    # rec(3) runs at depth 1 and recurses to rec(0) at 4: n - 1 on the way in (rec(3),
    # rec(2), rec(1)), then - 2 on the way back, innermost first (rec(0) returns early)
    assert d[b.nodes("@rec", "sub")].tolist() == [1, 2, 3, 3, 2, 1]
    # every node's depth is its activation's nesting
    parent = b.trace.act_parent
    for v in range(0, b.g.n, 7):
        a, k = b.act(v), 0
        while parent[a] >= 0:
            a, k = parent[a], k + 1
        assert d[v] == k


def test_depth_travels_with_the_graph(tmp_path):
    d = np.array([0, 1, 1, 2, 0], dtype=np.int32)
    g = Graph(n=5, src=np.array([0, 1, 2, 3]), dst=np.array([1, 2, 3, 4]), weight=np.ones(4),
              directed=True, node_depth=d)
    path = str(tmp_path / "g.npz")
    write_graph(g, path)
    back = read_graph(path)
    assert np.array_equal(back.node_depth, d)
    assert back.window(1, 4).node_depth.tolist() == [1, 1, 2]
    with pytest.raises(GraphFormatError, match="node_depth -1 is not a call depth"):
        Graph(n=5, src=g.src, dst=g.dst, weight=g.weight, node_depth=d - 1).validate()
    with pytest.raises(GraphFormatError, match="node_depth has 4 entries for 5 nodes"):
        Graph(n=5, src=g.src, dst=g.dst, weight=g.weight, node_depth=d[:4]).validate()
    with pytest.raises(GraphFormatError, match="node_depth"):
        Graph(n=5, src=g.src, dst=g.dst, weight=g.weight,
              node_depth=d.astype(np.float64)).validate()
