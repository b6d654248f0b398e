"""Repeated edges in graph files (issue 61, item 4): ``u v`` and ``v u`` of an undirected
file are one edge of weight 1, a repeated line is the same edge again, in every text format;
``--duplicates sum`` adds the weights, ``keep`` reads every line; files vcut wrote are read as
written. The expectations are worked out by hand from the small files below."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph import Graph, read_graph, write_graph
from ir_graph.formats import _read_python
from tests.helpers import run_cli

#: A 4-cycle 0-1-2-3 listed both ways, as SNAP lists undirected graphs.
SQUARE_BOTH_WAYS = "0 1\n1 0\n1 2\n2 1\n2 3\n3 2\n3 0\n0 3\n"


def edges(g):
    return list(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))


def merged(g):
    m = g.meta["merged"]
    return m["repeated_edges"], m["reverse_pairs"], m["duplicates"]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# -- reading ------------------------------------------------------------------------------
def test_an_edge_listed_both_ways_is_one_edge_of_weight_1(tmp_path):
    g = read_graph(write(tmp_path, "square.txt", SQUARE_BOTH_WAYS))
    assert g.n == 4 and not g.directed
    # each pair where it first appears, written as it first appears
    assert edges(g) == [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 0, 1.0)]
    assert merged(g) == (0, 4, "first")


def test_a_repeated_line_is_the_same_edge_and_the_first_weight_wins(tmp_path):
    path = write(tmp_path, "w.txt", "0 1 5\n1 0 2\n0 1 7\n1 2 1\n2 2 4\n2 2 3\n")
    g = read_graph(path)
    assert edges(g) == [(0, 1, 5.0), (1, 2, 1.0), (2, 2, 4.0)]  # the self-loop kept, once
    assert merged(g) == (2, 1, "first")  # '0 1 7' and the second loop; '1 0 2' the other way
    s = read_graph(path, duplicates="sum")
    assert edges(s) == [(0, 1, 14.0), (1, 2, 1.0), (2, 2, 7.0)]
    assert merged(s) == (2, 1, "sum")
    k = read_graph(path, duplicates="keep")
    assert edges(k) == [(0, 1, 5.0), (1, 0, 2.0), (0, 1, 7.0), (1, 2, 1.0), (2, 2, 4.0),
                        (2, 2, 3.0)]
    assert merged(k) == (0, 0, "keep")


def test_a_few_repeats_among_many_edges(tmp_path):
    """Most edges kept (the arrays are compacted where they are): order and weights hold."""
    path = write(tmp_path, "w.txt", "0 1 1\n1 2 2\n2 3 3\n1 0 4\n3 4 5\n4 5 6\n")
    assert edges(read_graph(path)) == [(0, 1, 1.0), (1, 2, 2.0), (2, 3, 3.0), (3, 4, 5.0),
                                       (4, 5, 6.0)]
    assert edges(read_graph(path, duplicates="sum")) == [(0, 1, 5.0), (1, 2, 2.0), (2, 3, 3.0),
                                                         (3, 4, 5.0), (4, 5, 6.0)]


def test_the_python_reader_merges_as_the_compiled_one(tmp_path):
    """A no-break space between two ids sends the file to the Python reader (the kernels
    read ASCII only); it must merge the same edges the same way."""
    text = "0 1 5\n1\u00a00 2\n0 1 7\n1 2 1\n"
    path = write(tmp_path, "w.txt", text)
    g = read_graph(path)
    assert edges(g) == [(0, 1, 5.0), (1, 2, 1.0)] and merged(g) == (1, 1, "first")
    plain = read_graph(write(tmp_path, "p.txt", text.replace("\u00a0", " ")))
    assert edges(plain) == edges(g) and merged(plain) == merged(g)
    assert edges(_read_python(path, "edgelist")) == [(0, 1, 5.0), (1, 0, 2.0), (0, 1, 7.0),
                                                     (1, 2, 1.0)]  # as read, before merging


def test_undirected_lg_merges_both_ways(tmp_path):
    g = read_graph(write(tmp_path, "g.lg", "3,4,u,graph\n1,2\n2,1\n2,3\n2,3\n"))
    assert edges(g) == [(0, 1, 1.0), (1, 2, 1.0)] and merged(g) == (1, 1, "first")


def test_directed_lg_keeps_both_arcs_and_merges_repeats(tmp_path):
    path = write(tmp_path, "g.lg", "3,4,d,graph\n1,2\n2,1\n2,3\n2,3\n")
    g = read_graph(path)
    assert g.directed and edges(g) == [(0, 1, 1.0), (1, 0, 1.0), (1, 2, 1.0)]
    assert merged(g) == (1, 0, "first")
    u = read_graph(path, directed=False)  # as the partitioners read it
    assert not u.directed and edges(u) == [(0, 1, 1.0), (1, 2, 1.0)]
    assert merged(u) == (1, 1, "first")


def test_an_edge_list_read_as_directed_keeps_both_arcs(tmp_path):
    g = read_graph(write(tmp_path, "square.txt", SQUARE_BOTH_WAYS), directed=True)
    assert g.directed and g.m == 8 and merged(g) == (0, 0, "first")


def test_matrix_market_symmetric_and_general(tmp_path):
    sym = ("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n2 1 3.5\n1 2 9\n3 2 1\n"
           "3 2 2\n")
    g = read_graph(write(tmp_path, "s.mtx", sym))
    assert edges(g) == [(1, 0, 3.5), (2, 1, 1.0)] and merged(g) == (1, 1, "first")
    assert edges(read_graph(write(tmp_path, "s2.mtx", sym), duplicates="sum")) == \
        [(1, 0, 12.5), (2, 1, 3.0)]
    gen = sym.replace("symmetric", "general")
    d = read_graph(write(tmp_path, "g.mtx", gen))
    assert d.directed and edges(d) == [(1, 0, 3.5), (0, 1, 9.0), (2, 1, 1.0)]
    assert merged(d) == (1, 0, "first")


def test_metis_pairs_entries_and_merges_a_neighbour_listed_twice(tmp_path):
    # vertex 1 lists 2 twice (weights 4 and 6), vertex 2 lists 1 twice: a repeated edge 1-2
    text = "3 3 1\n2 4 2 6\n1 4 1 6 3 1\n2 1\n"
    g = read_graph(write(tmp_path, "g.graph", text))
    assert edges(g) == [(0, 1, 4.0), (1, 2, 1.0)] and merged(g) == (1, 0, "first")
    s = read_graph(write(tmp_path, "s.graph", text), duplicates="sum")
    assert edges(s) == [(0, 1, 10.0), (1, 2, 1.0)]
    assert read_graph(write(tmp_path, "k.graph", text), duplicates="keep").m == 3
    # every METIS edge is listed at both ends: that is one edge, nothing merged
    clean = read_graph(write(tmp_path, "c.graph", "3 2\n2\n1 3\n2\n"))
    assert edges(clean) == [(0, 1, 1.0), (1, 2, 1.0)] and merged(clean) == (0, 0, "first")


@pytest.mark.parametrize("name", ["g.edgelist", "g.mtx", "g.npz"])
def test_files_vcut_wrote_are_read_as_written(tmp_path, name):
    """An IR graph's parallel dependencies are edges of their own."""
    g = Graph(n=3, src=np.array([0, 0, 1], np.int32), dst=np.array([1, 1, 2], np.int32),
              weight=np.array([2.0, 3.0, 1.0]), directed=True).validate()
    write_graph(g, tmp_path / name)
    back = read_graph(tmp_path / name)
    assert edges(back) == [(0, 1, 2.0), (0, 1, 3.0), (1, 2, 1.0)]
    assert "merged" not in back.meta


def test_unknown_duplicates_mode(tmp_path):
    with pytest.raises(InputError) as exc:
        read_graph(write(tmp_path, "g.txt", "0 1\n"), duplicates="max")
    assert str(exc.value) == "duplicates must be one of first, sum, keep, got 'max'"


def test_clean_files_come_back_unchanged(tmp_path):
    text = "0 1 2\n1 2 3\n2 0 4\n"
    g = read_graph(write(tmp_path, "t.txt", text))
    assert edges(g) == [(0, 1, 2.0), (1, 2, 3.0), (2, 0, 4.0)] and merged(g) == (0, 0, "first")


# -- command lines --------------------------------------------------------------------------
NOTE = ("note: {path}: 4 edges listed both ways (u v and v u) and 0 repeated lines merged into "
        "one edge each, the first line's weight (--duplicates sum adds them); --duplicates keep "
        "reads every line as an edge")


def test_multilevel_edge_cut_counts_each_cut_edge_once(capsys, tmp_path):
    """The square cut in two cuts 2 of its 4 edges; it was reported as 4."""
    path = write(tmp_path, "square.txt", SQUARE_BOTH_WAYS)
    out = tmp_path / "square.part"
    code, stdout, stderr = run_cli(capsys, "partition", path, "-p", "2", "--algo", "multilevel",
                                   "--json", "-o", out)
    assert code == 0
    r = json.loads(stdout)
    part = [int(x) for x in out.read_text().split()]
    cut = sum(part[a] != part[b] for a, b in [(0, 1), (1, 2), (2, 3), (3, 0)])
    assert r["edge_cut"] == cut == 2
    assert r["merged_on_read"] == {"repeated_edges": 0, "reverse_pairs": 4, "duplicates": "first"}
    assert stderr.strip() == NOTE.format(path=path)
    # --duplicates sum: each listing adds its weight (the old reading, asked for)
    code, stdout, _ = run_cli(capsys, "partition", path, "-p", "2", "--algo", "multilevel", "--json",
                              "--duplicates", "sum")
    assert code == 0 and json.loads(stdout)["edge_cut"] == 4


def test_vertex_cut_sees_four_edges(capsys, tmp_path):
    path = write(tmp_path, "square.txt", SQUARE_BOTH_WAYS)
    out = tmp_path / "square.parts"
    code, stdout, stderr = run_cli(capsys, "partition", path, "-p", "2", "--algo", "hdrf", "--json",
                                   "-o", out)
    assert code == 0
    r = json.loads(stdout)
    assert len(out.read_text().split()) == 4  # one cluster per edge of the graph
    assert r["repeated_edges"] == 0 and r["merged_on_read"]["reverse_pairs"] == 4
    assert r["loads"] == [2.0, 2.0]  # the edge weights are 1, not 2
    assert stderr.strip() == NOTE.format(path=path)


def test_partition_reads_a_directed_file_as_undirected(capsys, tmp_path):
    path = write(tmp_path, "g.lg", "3,3,d,graph\n1,2\n2,1\n2,3\n")
    code, stdout, _ = run_cli(capsys, "partition", path, "-p", "2", "--algo", "dbh", "--json")
    assert code == 0
    r = json.loads(stdout)
    assert r["merged_on_read"] == {"repeated_edges": 0, "reverse_pairs": 1, "duplicates": "first"}
    assert sum(r["loads"]) == 2.0


def test_stats_reports_what_was_merged(capsys, tmp_path):
    path = write(tmp_path, "square.txt", SQUARE_BOTH_WAYS)
    code, stdout, stderr = run_cli(capsys, "stats", path, "--json")
    assert code == 0
    r = json.loads(stdout)
    assert (r["edges"], r["total_weight"], r["duplicate_edges"]) == (4, 4.0, 0)
    assert r["merged_on_read"] == {"repeated_edges": 0, "reverse_pairs": 4, "duplicates": "first"}
    assert stderr.strip() == NOTE.format(path=path)
    code, stdout, _ = run_cli(capsys, "stats", path, "--json", "--duplicates", "keep")
    assert code == 0 and json.loads(stdout)["edges"] == 8


def test_directed_traversal_keeps_both_arcs(capsys, tmp_path):
    """``bfs --directed`` reads u v and v u as two arcs: from 1, vertex 0 is one hop away."""
    path = write(tmp_path, "g.txt", "0 1\n1 0\n1 2\n")
    dist = tmp_path / "dist"
    code, _, _ = run_cli(capsys, "bfs", path, "--source", "1", "--directed", "-o", dist)
    assert code == 0
    assert dist.read_text() == "0 1\n1 0\n2 1\n"
    code, _, _ = run_cli(capsys, "bfs", path, "--source", "2", "--directed", "-o", dist)
    assert code == 0
    assert dist.read_text() == "0 inf\n1 inf\n2 0\n"
