"""Long lines in graph files (issue 61): a message quotes at most ~120 characters of a bad
line, with the column of what is wrong (item 11); a line longer than `MAX_LINE` bytes is
refused as soon as the reader has passed that many bytes of it, by the compiled readers and
the Python ones alike (item 12)."""

import gzip

import pytest

import vcut_base.inputs
from vcut_base.errors import QUOTE_CHARS, GraphFormatError
from ir_graph import read_graph
from ir_graph.formats import CHUNK_BYTES, MAX_LINE, _PY_CHUNK, _read_python


def error(path, python=False, fmt=None):
    with pytest.raises(GraphFormatError) as exc:
        if python:
            _read_python(str(path), fmt)
        else:
            read_graph(path)
    return str(exc.value)


def both(path, fmt):
    """The message of the compiled reader (through `read_graph`) and of the Python one,
    which must be the same."""
    fast, slow = error(path), error(path, python=True, fmt=fmt)
    assert fast == slow
    return fast


# -- item 11: messages quote a part of a long line ----------------------------------------
def test_too_many_columns_quotes_the_line_start_with_its_columns(tmp_path):
    line = " ".join(["7"] * 5051) + " 9"  # 10,103 characters
    assert len(line) == 10_103
    p = tmp_path / "e.txt"
    p.write_text("0 1\n" + line + "\n")
    assert both(p, "edgelist") == (f"{p}:2: expected 'u v' or 'u v weight', found "
                                   f"{line[:120]!r}... (columns 1-120 of 10,103)")


def test_a_bad_neighbour_in_a_long_metis_line_is_named_with_its_column(tmp_path):
    n = 3000
    nbrs = [str(v) for v in range(2, n + 1)]
    nbrs[2000] = "x2002"  # the 2,001st neighbour, token 2,001 of the line
    col = len(" ".join(nbrs[:2000])) + 2
    lines = [" ".join(nbrs)] + ["1"] * (n - 1)
    p = tmp_path / "g.graph"
    p.write_text(f"{n} {n - 1}\n" + "\n".join(lines) + "\n")
    assert both(p, "metis") == f"{p}:2: expected integers, found 'x2002' at column {col:,}"


def test_a_long_neighbour_id_is_cut(tmp_path):
    big = "9" * 4000  # an integer of 4,000 digits: out of range
    p = tmp_path / "g.graph"
    p.write_text(f"2 1\n{big}\n1\n")
    assert both(p, "metis") == (f"{p}:2: neighbour {big[:120]!r}... (columns 1-120 of 4,000) "
                                "at column 1 out of range 1..2")


def test_a_long_weight_is_cut(tmp_path):
    w = "-1." + "0" * 10_000
    p = tmp_path / "e.txt"
    p.write_text(f"0 1 {w}\n")
    assert both(p, "edgelist") == (f"{p}:1: edge weight {w[:120]!r}... (columns 1-120 of "
                                   "10,003) is negative")


def test_long_lg_and_matrix_market_lines_are_cut(tmp_path):
    junk = "a" * 5000
    lg = tmp_path / "g.lg"
    lg.write_text(f"2,1,u,graph\n1,2,{junk}\n")
    assert both(lg, "lg") == (f"{lg}:2: expected 'src,dst', found {('1,2,' + junk)[:120]!r}... "
                              "(columns 1-120 of 5,004)")
    mtx = tmp_path / "g.mtx"
    mtx.write_text(f"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 {junk}\n")
    assert both(mtx, "mtx") == (f"{mtx}:3: expected integers, found {junk[:120]!r}... "
                                "(columns 1-120 of 5,000) at column 3")


def test_short_lines_are_quoted_whole(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("0 1\n0 1 2 3\n")
    assert both(p, "edgelist") == f"{p}:2: expected 'u v' or 'u v weight', found '0 1 2 3'"


@pytest.mark.parametrize("name, text", [
    ("e.txt", "0 1\n{junk} 1\n"),
    ("e.txt", "0 1 {junk}\n"),
    ("e.txt", "0 1\n0 1 {junk}\n"),
    ("g.graph", "2 1\n2 {junk}\n1\n"),
    ("g.graph", "{junk} 1\n2\n1\n"),
    ("g.graph", "2 1 1\n2 {junk}\n1 1\n"),
    ("g.mtx", "%%MatrixMarket matrix coordinate {junk} general\n2 2 1\n1 2\n"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n2 {junk} 1\n1 2 1\n"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 {junk}\n"),
    ("g.lg", "2,1,{junk}\n1,2\n"),
    ("g.lg", "2,1,u\n1,{junk}\n"),
])
@pytest.mark.parametrize("junk", ["x" * 10_000, "1" * 4_000, "-" + "9" * 4_000, "1," * 5000])
def test_every_message_is_short(tmp_path, name, text, junk):
    p = tmp_path / name
    p.write_text(text.format(junk=junk))
    message = error(p)
    assert len(message) - len(str(p)) <= 2 * QUOTE_CHARS + 150, message


# -- item 12: a line longer than the bound is refused at once ------------------------------
class Counting:
    """Counts the bytes read through `vcut_base.inputs.InputStream`."""

    def __init__(self, monkeypatch):
        self.read = 0
        orig = vcut_base.inputs.InputStream.readinto

        def readinto(stream, view):
            got = orig(stream, view)
            self.read += got
            return got

        monkeypatch.setattr(vcut_base.inputs.InputStream, "readinto", readinto)


def long_line_message(path, k, begins, name):
    return (f"{path}:{k}: line longer than 1,048,576 bytes, the most {name} line may have; it "
            f"begins {begins!r}...; the file is not {name} graph, or it is corrupt")


@pytest.mark.parametrize("python", [False, True])
def test_a_gzip_of_one_long_line_is_refused_after_a_few_mib(tmp_path, monkeypatch, python):
    p = tmp_path / "bomb.txt.gz"
    p.write_bytes(gzip.compress(b"0 1 " * (16 << 18)))  # one line of 16 MiB
    count = Counting(monkeypatch)
    assert error(p, python, "edgelist") == long_line_message(p, 1, "0 1 " * 30, "an edge-list")
    # the bound and one piece of reading past it, not the 16 MiB
    assert count.read <= MAX_LINE + max(CHUNK_BYTES, _PY_CHUNK) + 65536


@pytest.mark.parametrize("python", [False, True])
@pytest.mark.parametrize("name, head, article", [
    ("g.graph", "% a comment\n", "a METIS"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n", "a Matrix Market"),
    ("g.lg", "", "an LG"),
])
def test_every_format_refuses_a_long_line(tmp_path, monkeypatch, python, name, head, article):
    p = tmp_path / (name + ".gz")
    p.write_bytes(gzip.compress(head.encode() + b"1" * (12 << 20) + b"\n"))
    count = Counting(monkeypatch)
    k = head.count("\n") + 1
    assert error(p, python, name.split(".")[1].replace("graph", "metis")) == \
        long_line_message(p, k, "1" * 120, article)
    assert count.read <= MAX_LINE + max(CHUNK_BYTES, _PY_CHUNK) + 65536


@pytest.mark.parametrize("chunk", [None, 4096])
def test_the_bound_is_exact_and_counts_lines(tmp_path, monkeypatch, chunk):
    import ir_graph.formats as F

    if chunk:
        monkeypatch.setattr(F, "CHUNK_BYTES", chunk)
    ok = "0 1" + " " * (MAX_LINE - 3)  # MAX_LINE bytes: accepted
    p = tmp_path / "e.txt"
    p.write_text(f"0 1\n1 2\n{ok}\n{ok}\r\n")
    assert read_graph(p).m == 2
    p.write_text(f"0 1\n1 2\n{ok}\n{ok} \n")
    assert error(p) == long_line_message(p, 4, "0 1" + " " * 117, "an edge-list")
    assert error(p, True, "edgelist") == error(p)


def test_a_metis_vertex_line_may_be_longer_where_the_header_allows(tmp_path):
    """A hub of 200,000 neighbours: a 1.3 MB line, within 64 bytes per vertex of the header."""
    n = 200_001
    hub = " ".join(str(v) for v in range(2, n + 1))
    assert len(hub) > MAX_LINE
    p = tmp_path / "star.graph"
    p.write_text(f"{n} {n - 1}\n{hub}\n" + "1\n" * (n - 1))
    assert read_graph(p).m == n - 1
    assert _read_python(str(p), "metis").m == n - 1
    # a header of 3 vertices allows no such line
    p.write_text(f"3 2\n{hub}\n1\n1\n")
    assert error(p) == long_line_message(p, 2, hub[:120], "a METIS")
    assert error(p, True, "metis") == error(p)
