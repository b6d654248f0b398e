"""A graph file read in pieces: the pieces' edges, concatenated, are the file's
edges wherever the byte ranges fall; errors carry the line numbers and words of
`read_graph`; files that cannot be split are refused."""

import gzip

import numpy as np
import pytest

from vcut_base.errors import GraphFormatError, InputError
from ir_graph import Graph, read_graph, write_graph
from ir_graph.pieces import plan_pieces, read_piece


def _text(tmp_path, lines, name="g.txt", newline="\n"):
    path = tmp_path / name
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return str(path)


def _edges(plan):
    got = [read_piece(plan, i) for i in range(len(plan))]
    src = np.concatenate([g["src"] for g in got])
    dst = np.concatenate([g["dst"] for g in got])
    ws = [g["weight"] for g in got if g["columns"]]
    return src, dst, got, (np.concatenate(ws) if all(w is not None for w in ws) else None)


def _errors(plan):
    """The message of every piece that does not read."""
    out = []
    for i in range(len(plan)):
        try:
            read_piece(plan, i)
        except GraphFormatError as exc:
            out.append(str(exc))
    return out


def _lines(seed, m, weighted=False):
    rng = np.random.default_rng(seed)
    out = ["# a comment", "source target" + (" weight" if weighted else "")]
    for e in range(m):
        u, v = rng.integers(0, 40, 2) * 11
        out.append(f"{u} {v}" + (f" {rng.integers(1, 9)}" if weighted else ""))
        if e % 97 == 0:
            out.append("% a comment between edges")
        if e % 131 == 0:
            out.append("")
    return out


@pytest.mark.parametrize("piece_bytes", [1, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_pieces_are_the_file_wherever_they_cut(tmp_path, piece_bytes, newline):
    path = _text(tmp_path, _lines(piece_bytes, 600, weighted=True), newline=newline)
    g = read_graph(path, duplicates="keep")  # the pieces are the file's lines as written
    plan = plan_pieces(path, piece_bytes=piece_bytes)
    src, dst, got, w = _edges(plan)
    # the reader renumbers ids 0, 11, 22, ... to 0..n-1; the pieces keep the file's ids
    assert np.array_equal(src, g.labels[g.src]) and np.array_equal(dst, g.labels[g.dst])
    assert np.array_equal(w, g.weight)
    assert {x["columns"] for x in got} <= {0, 3}
    assert (len(plan) == 1) == (piece_bytes == 1 << 20)


def test_a_vcut_edge_list_declares_its_nodes(tmp_path):
    g = Graph(n=50, src=np.array([0, 3, 7]), dst=np.array([3, 7, 9]), weight=np.ones(3))
    path = str(tmp_path / "g.edgelist")
    write_graph(g, path)
    plan = plan_pieces(path, piece_bytes=4)
    src, dst, got, _ = _edges(plan)
    assert got[0]["declared"] == 50
    assert src.tolist() == [0, 3, 7] and dst.tolist() == [3, 7, 9]


def test_npz_pieces_are_ranges_of_edges(tmp_path):
    rng = np.random.default_rng(3)
    g = Graph(n=70, src=rng.integers(0, 70, 1000), dst=rng.integers(0, 70, 1000),
              weight=rng.integers(1, 5, 1000).astype(float))
    path = str(tmp_path / "g.npz")
    write_graph(g, path)
    plan = plan_pieces(path, piece_edges=300)
    assert plan.ranges == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    assert plan.n == 70 and plan.edges == 1000
    src, dst, got, w = _edges(plan)
    assert np.array_equal(src, g.src) and np.array_equal(dst, g.dst) and np.array_equal(w, g.weight)


def test_a_bad_line_in_a_later_piece_is_numbered_from_the_file_start(tmp_path):
    lines = _lines(1, 400)
    lines[300] = "12 x7"
    path = _text(tmp_path, lines)
    with pytest.raises(GraphFormatError) as whole:
        read_graph(path)
    messages = _errors(plan_pieces(path, piece_bytes=500))
    assert messages == [str(whole.value)]
    assert ":301:" in messages[0]


def test_a_column_names_line_only_at_the_top(tmp_path):
    lines = _lines(2, 200)
    lines[150] = "from to"  # past the first edge line: an error, in whichever piece
    path = _text(tmp_path, lines)
    errors = _errors(plan_pieces(path, piece_bytes=100))
    assert len(errors) == 1 and ":151:" in errors[0]


def test_files_that_cannot_be_split_are_refused(tmp_path):
    def gz(name, text):
        path = tmp_path / name
        with gzip.open(path, "wt") as fh:
            fh.write(text)
        return str(path)

    with pytest.raises(InputError, match="gunzip it first"):
        plan_pieces(gz("g.txt.gz", "0 1\n1 2\n"))
    mtx = tmp_path / "g.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    with pytest.raises(InputError, match="convert it once"):
        plan_pieces(str(mtx))
    with pytest.raises(InputError, match="gunzip it first"):
        plan_pieces(gz("g.graph.gz", "2 1\n2\n1\n"))
    nonascii = tmp_path / "u.txt"
    nonascii.write_text("0 1\n1 2 \u00e9\n", encoding="utf-8")
    with pytest.raises(GraphFormatError, match="non-ASCII"):
        read_piece(plan_pieces(str(nonascii)), 0)
    with pytest.raises(InputError, match="not found"):
        plan_pieces(str(tmp_path / "missing.txt"))
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"0 1\n\x00\x01\x02")
    with pytest.raises(GraphFormatError, match="binary data"):
        read_piece(plan_pieces(str(binary)), 0)


def test_a_growing_array_survives_a_view_held_elsewhere():
    # a Dask worker's profiler may hold a frame whose locals view the map mid-read
    from ir_graph.formats.chunks import GrowingArray

    x = GrowingArray("g.txt", np.int64, 4)
    x.a[:] = [1, 2, 3, 4]
    held = x.a[:2]
    x.grow(100)
    assert len(x) >= 100 and x.a[:4].tolist() == [1, 2, 3, 4]
    held2 = x.a[:1]
    assert x.done(3).tolist() == [1, 2, 3]
    assert held.tolist() == [1, 2] and held2.tolist() == [1]
