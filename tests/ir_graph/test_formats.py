"""Graph file formats: round trips, the shared datasets, and malformed input."""

import gzip

import networkx as nx
import numpy as np
import pytest

from vcut_base.errors import GraphFormatError, InputError
from ir_graph import Graph, read_graph, write_graph
from tests.helpers import bump_npz_version, dataset


def small_graph(directed):
    src = np.array([0, 0, 1, 2, 3], np.int32)
    dst = np.array([1, 2, 2, 3, 4], np.int32)
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.5])
    return Graph(n=5, src=src, dst=dst, weight=w, directed=directed,
                 node_sid=np.arange(5, dtype=np.int32), edge_kind=np.ones(5, np.uint8),
                 meta={"kind": "ir"}).validate()


def edge_set(g):
    return sorted((min(a, b), max(a, b), w) for a, b, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))


@pytest.mark.parametrize("name", ["g.npz", "g.edgelist", "g.mtx", "g.edgelist.gz", "g.mtx.gz"])
def test_round_trip_keeps_edges_and_weights(tmp_path, name):
    g = small_graph(directed=True)
    write_graph(g, tmp_path / name)
    back = read_graph(tmp_path / name)
    assert back.n == 5
    assert edge_set(back) == edge_set(g)
    if name.startswith("g.npz"):
        assert back.directed and np.array_equal(back.node_sid, g.node_sid)
        assert np.array_equal(back.src, g.src) and np.array_equal(back.edge_kind, g.edge_kind)


def test_metis_round_trip_rounds_weights_and_reports_it(tmp_path):
    g = small_graph(directed=False)
    report = write_graph(g, tmp_path / "g.graph")
    assert report == {"self_loops_dropped": 0, "parallel_edges_merged": 0, "weights_rounded": True}
    text = (tmp_path / "g.graph").read_text().splitlines()
    assert text[0] == "5 5 001"
    assert text[1] == "2 1 3 2"  # vertex 1: neighbours 2 (w 1) and 3 (w 2)
    back = read_graph(tmp_path / "g.graph")
    assert [(a, b) for a, b, _ in edge_set(back)] == [(a, b) for a, b, _ in edge_set(g)]
    assert back.weight[-1] == 6.0  # 5.5 rounded half to even


def test_metis_merges_parallel_edges_and_drops_loops(tmp_path):
    g = Graph(n=3, src=np.array([0, 1, 2, 2]), dst=np.array([1, 0, 2, 1]), weight=np.ones(4))
    report = write_graph(g, tmp_path / "g.graph")
    assert report["self_loops_dropped"] == 1 and report["parallel_edges_merged"] == 1
    back = read_graph(tmp_path / "g.graph")
    assert edge_set(back) == [(0, 1, 2.0), (1, 2, 1.0)]


def test_npz_is_not_gzipped(tmp_path):
    with pytest.raises(InputError, match=r"\.npz graphs are not gzipped; write .*g\.npz$"):
        write_graph(small_graph(True), tmp_path / "g.npz.gz")
    assert list(tmp_path.iterdir()) == []


def test_networkx_round_trip():
    g = small_graph(directed=True)
    nxg = g.to_networkx()
    assert isinstance(nxg, nx.DiGraph) and nxg.number_of_edges() == 5
    assert nxg[3][4]["weight"] == 5.5
    back = Graph.from_networkx(nxg)
    assert edge_set(back) == edge_set(g)
    und = Graph.from_networkx(nx.path_graph(["a", "b", "c"]))
    assert und.n == 3 and not und.directed and und.labels is None


@pytest.mark.parametrize("name, n, simple_edges", [
    ("3elt.graph.gz", 4720, 13722),
    ("wiki-Vote.txt.gz", 7115, 100762),
    ("ca-HepPh.txt.gz", 12008, 118489),
    ("rgg_n_2_15_s0.graph.gz", 32768, 160240),
    ("luxembourg_osm.mtx.gz", 114599, 119666),
    ("delaunay_n16.edges.gz", 65536, 196575),
])
def test_shared_datasets_match_their_readme(name, n, simple_edges):
    """Counts from ../shared/datasets/README.md (undirected, simple)."""
    g = read_graph(dataset(name))
    loops, dup = g.simple_counts()
    assert g.n == n
    assert g.m - loops - dup == simple_edges


def test_own_edgelist_keeps_isolated_nodes(tmp_path):
    g = Graph(n=6, src=np.array([0, 2]), dst=np.array([2, 3]), weight=np.ones(2), directed=True)
    write_graph(g, tmp_path / "g.edgelist")
    back = read_graph(tmp_path / "g.edgelist")
    assert back.n == 6 and back.labels is None and back.directed
    assert back.src.tolist() == [0, 2] and back.dst.tolist() == [2, 3]


def test_edgelist_ids_are_renumbered_with_labels(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("# comment\nFromNodeId ToNodeId\n10 30\n30 20\n")
    g = read_graph(p)
    assert g.n == 3 and g.labels.tolist() == [10, 20, 30]
    assert list(zip(g.src.tolist(), g.dst.tolist())) == [(0, 2), (2, 1)]
    assert g.meta["header"] == "FromNodeId ToNodeId"


BAD = [
    ("g.graph", "3 2\n2 4\n1\n\n", "g.graph:2: neighbour 4 out of range 1..3"),
    ("g.graph", "3 2\n2\n1\n\n", "g.graph: header says 2 edges, the neighbour lists hold 2 entries (expected 4: each edge is listed by both ends)"),
    ("g.graph", "3 1\n2\n\n\n", "g.graph: header says 1 edges, the neighbour lists hold 1 entries (expected 2: each edge is listed by both ends)"),
    ("g.graph", "2 1 1\n2 -3\n1 -3\n", "g.graph:2: edge weight -3 is negative"),
    ("g.graph", "2 1\n2\n", "g.graph: header says 2 vertices, found 1 vertex lines"),
    ("g.graph", "2 1\n2 x\n1\n", "g.graph:2: expected integers, found '2 x'"),
    ("g.edgelist", "0 1\n1 2 3\n", "g.edgelist:2: 3 columns where the first edge line has 2"),
    ("g.edgelist", "0 1 nan\n", "g.edgelist:1: edge weight nan is not a finite number"),
    ("g.edgelist", "0 1 -2\n", "g.edgelist:1: edge weight -2 is negative"),
    ("g.edgelist", "0 1\nx y\n", "g.edgelist:2: node ids must be integers, found 'x' 'y'"),
    ("g.edgelist", "0 -1\n", "g.edgelist:1: negative node id in '0 -1'"),
    ("g.edgelist", "# only comments\n", "g.edgelist: no edges found"),
    ("g.edgelist", "# vcut graph: 3 nodes, 1 edges, directed\n0 3 1.0\n",
     "g.edgelist:2: node id 3 out of range 0..2 (the header declares 3 nodes)"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n4 1\n", "g.mtx:3: entry (4, 1) out of range 1..3"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n2 1 1.0\n", "g.mtx: size line says 2 entries, found 1"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n2 1 1.0\n", "g.mtx:2: a 2 x 3 matrix is not square, so it is not a graph"),
    ("g.mtx", "3 3 1\n1 2\n", "g.mtx:1: missing '%%MatrixMarket matrix coordinate ...' banner"),
    ("g.lg", "3,1,u,graph\n1,5\n", "g.lg:2: edge 1,5 out of range 1..3"),
]


@pytest.mark.parametrize("name, text, message", BAD, ids=[m.split(": ", 1)[-1][:40] for _, _, m in BAD])
def test_malformed_files_name_file_line_and_problem(tmp_path, name, text, message):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(GraphFormatError) as exc:
        read_graph(p)
    assert str(exc.value) == f"{tmp_path}/{message}"


def test_missing_unknown_and_gzip_errors(tmp_path):
    with pytest.raises(InputError, match="graph file not found"):
        read_graph(tmp_path / "none.graph")
    (tmp_path / "x.weird").write_text("0 1\n")
    with pytest.raises(InputError, match="cannot tell the graph format"):
        read_graph(tmp_path / "x.weird")
    bad = tmp_path / "t.graph.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(GraphFormatError, match="cannot read"):
        read_graph(bad)
    (tmp_path / "ok.graph.gz").write_bytes(gzip.compress(b"2 1\n2\n1\n"))
    assert read_graph(tmp_path / "ok.graph.gz").m == 1


def test_graph_object_validation():
    with pytest.raises(GraphFormatError, match="edge target 7 out of range 0..2"):
        Graph(n=3, src=np.array([0]), dst=np.array([7]), weight=np.ones(1)).validate()
    with pytest.raises(GraphFormatError, match="edge weight nan at index 0 is not a finite number"):
        Graph(n=3, src=np.array([0]), dst=np.array([1]), weight=np.array([np.nan])).validate()
    with pytest.raises(GraphFormatError, match="edge weight -1.0 at index 0 is negative"):
        Graph(n=3, src=np.array([0]), dst=np.array([1]), weight=np.array([-1.0])).validate()


def test_own_format_version_mismatch_names_both(tmp_path):
    from ir_graph.formats import GRAPH_FORMAT_VERSION

    out = tmp_path / "g.npz"
    write_graph(small_graph(True), out)
    bump_npz_version(out)
    with pytest.raises(GraphFormatError) as exc:
        read_graph(out)
    assert str(exc.value) == (
        f"{out} has graph format version {GRAPH_FORMAT_VERSION + 1}, but this vcut reads version "
        f"{GRAPH_FORMAT_VERSION}; rebuild it with 'vcut graph'"
    )
