"""The compiled text readers (`ir_graph.formats._read_fast`, kernels in
`ir_graph.formats.line_kernels`).

Known answers on hand-written files, read whole and in chunks of 1 byte
upwards (lines, CRLF pairs and numbers cut across chunks, files without a
final line break, gzip); every error message, with its line, from the fast
path itself (the Python readers are not involved unless a test says so);
and a property test: for any small file built from the formats' tokens,
separators and mistakes, the fast reader returns the same graph as the
Python reader or raises the same message.
"""

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vcut_base.errors import GraphFormatError, InputTooLarge
from ir_graph import formats, read_graph
from ir_graph.formats import _read_fast, _read_python, detect_format
from ir_graph.formats.chunks import Unsupported

#: chunk sizes: whole file, then lines and tokens cut everywhere
CHUNKS = [None, 1, 2, 3, 5, 8, 13]


def write(tmp_path, name, text):
    path = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return str(path)


def fast(path, chunk=None, fmt=None):
    """The fast reader's graph (an `Unsupported` fails the test)."""
    return _read_fast(path, fmt or detect_format(path), chunk)


def fast_error(path, chunk=None):
    with pytest.raises(GraphFormatError) as exc:
        fast(path, chunk)
    return str(exc.value)


def python_error(path):
    with pytest.raises(GraphFormatError) as exc:
        _read_python(path, detect_format(path))
    return str(exc.value)


def check(g, n, src, dst, weight=None, directed=False, labels=None, node_weight=None, meta=None):
    assert g.n == n
    assert g.src.tolist() == src and g.dst.tolist() == dst
    assert g.src.dtype == g.dst.dtype == np.int32
    w = np.ones(len(src)) if weight is None else np.array(weight, np.float64)
    assert g.weight.dtype == np.float64 and g.weight.tobytes() == w.tobytes()  # bit for bit
    assert g.directed == directed
    assert (g.labels is None) == (labels is None)
    if labels is not None:
        assert g.labels.dtype == np.int64 and g.labels.tolist() == labels
    assert (g.node_weight is None) == (node_weight is None)
    if node_weight is not None:
        assert g.node_weight.tolist() == node_weight
    assert g.meta == (meta or {})


# -- known answers -----------------------------------------------------------------------
SNAP = ("# Directed graph (each unordered pair of nodes is saved once)\r\n"
        "# Nodes: 4 Edges: 4\r\n"
        "FromNodeId\tToNodeId\r\n"
        "\r\n"
        "  10\t30\r\n"
        "30 \t 20\r\n"
        "% another comment\r\n"
        "20\t10\r\n"
        "99\t10")  # no final line break


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", ["e.txt", "e.txt.gz"])
def test_snap_edge_list_renumbered_with_labels(tmp_path, chunk, name):
    g = fast(write(tmp_path, name, SNAP), chunk)
    check(g, 4, [0, 2, 1, 3], [2, 1, 0, 0], labels=[10, 20, 30, 99],
          meta={"header": "FromNodeId\tToNodeId"})


@pytest.mark.parametrize("chunk", CHUNKS)
def test_weighted_edge_list_numbers_as_python_float(tmp_path, chunk):
    tokens = ["1", "2.5", "1_000.5", "1e-3", ".5", "7.", "0.1000000000000000055511151231257827021181583404541015625",
              "123456789012345678901234567890", "4.9e-324", "1E+2", "-0.0", "16"]
    text = "".join(f"{k} {k + 1} {t}\n" for k, t in enumerate(tokens))
    g = fast(write(tmp_path, "w.edgelist", text), chunk)
    n = len(tokens)
    check(g, n + 1, list(range(n)), list(range(1, n + 1)), weight=[float(t) for t in tokens])


@pytest.mark.parametrize("chunk", CHUNKS)
def test_own_edge_list_keeps_node_count_and_direction(tmp_path, chunk):
    text = ("# vcut graph: 7 nodes, 3 edges, directed\n# source target weight\n"
            "0 2 1\n2 3 0.25\n5 2 3\n")
    g = fast(write(tmp_path, "g.edgelist", text), chunk)
    check(g, 7, [0, 2, 5], [2, 3, 2], weight=[1, 0.25, 3], directed=True,
          meta={"vcut_header": True})


@pytest.mark.parametrize("chunk", [None, 1, 4])
def test_ids_beyond_int32_and_sparse_ids(tmp_path, chunk):
    big = 2**40
    text = f"5 {2**31}\n{2**31} {big}\n{big} 5\n{2**63 - 1} 0\n"
    g = fast(write(tmp_path, "e.txt", text), chunk)
    check(g, 5, [1, 2, 3, 4], [2, 3, 1, 0], labels=[0, 5, 2**31, big, 2**63 - 1])


def test_dense_ids_keep_their_arrays_and_no_labels(tmp_path):
    g = fast(write(tmp_path, "e.txt", "2 0\n1 2\n0 1\n"))
    check(g, 3, [2, 1, 0], [0, 2, 1])


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", ["g.graph", "g.graph.gz"])
def test_metis_sizes_weights_comments_and_blank_vertices(tmp_path, chunk, name):
    # fmt 111, ncon 2: size, 2 vertex weights (the first is kept), neighbour/weight pairs;
    # vertex 4 is a blank line (no neighbours); '%' lines are comments
    text = ("% a comment\n4 2 111 2\n"
            "9 3 0 2 5\n"
            "% inside\n"
            "9 1 1 1 5 3 2\r\n"
            "9 2 0 2 2\n"
            "9 0 0\n\n")
    g = fast(write(tmp_path, name, text), chunk)
    check(g, 4, [0, 1], [1, 2], weight=[5, 2], node_weight=[3, 1, 2, 0],
          meta={"metis_fmt": "111"})


@pytest.mark.parametrize("chunk", CHUNKS)
def test_metis_forward_entries_in_file_order_and_a_blank_vertex(tmp_path, chunk):
    # edges 1-4, 1-2, 2-5, 2-4, 4-5; vertex 3 has no neighbours (a blank line)
    text = "5 5\n4 2\n5 1 4\n\n1 2 5\n2 4"  # no final line break
    g = fast(write(tmp_path, "g.graph", text), chunk)
    check(g, 5, [0, 0, 1, 1, 3], [3, 1, 4, 3, 4], meta={"metis_fmt": "000"})


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", ["m.mtx", "m.mtx.gz"])
def test_matrix_market_real_general(tmp_path, chunk, name):
    text = ("%%MatrixMarket matrix coordinate real general\n% comment\n\n"
            "3 3 3\n1 2 0.5\n3 1 2\n\n2 3 1e1\n")
    g = fast(write(tmp_path, name, text), chunk)
    check(g, 3, [0, 2, 1], [1, 0, 2], weight=[0.5, 2, 10], directed=True,
          meta={"mtx": "real general"})


@pytest.mark.parametrize("chunk", CHUNKS)
def test_matrix_market_pattern_symmetric(tmp_path, chunk):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\r\n2 2 2\r\n2 1\r\n2 2"
    g = fast(write(tmp_path, "m.mtx", text), chunk)
    check(g, 2, [1, 1], [0, 1], meta={"mtx": "pattern symmetric"})


@pytest.mark.parametrize("chunk", CHUNKS)
def test_lg(tmp_path, chunk):
    text = "3,3,d,name,Int64,simplegraph\n1,2\n 2 , 3 \n\n3,1"
    g = fast(write(tmp_path, "g.lg", text), chunk)
    check(g, 3, [0, 1, 2], [1, 2, 0], directed=True)


def test_read_graph_takes_the_fast_path_in_tiny_chunks(tmp_path, monkeypatch):
    path = write(tmp_path, "e.txt", SNAP)
    monkeypatch.setattr(formats, "CHUNK_BYTES", 3)
    monkeypatch.setattr(formats, "_read_python", None)  # a fallback would fail
    g = read_graph(path)
    assert g.labels.tolist() == [10, 20, 30, 99] and g.meta["format"] == "edgelist"


@pytest.mark.parametrize("chunk", [None, 7])
def test_arrays_grow_past_the_first_guess(tmp_path, chunk):
    # 40,000 lines compress ~250x: the first guess (4 x the gzip size) is too small
    m = 40_000
    text = "".join(f"{k % 7} {(k * 3) % 11}\n" for k in range(m))
    g = fast(write(tmp_path, "e.txt.gz", text), chunk)
    assert g.m == m and g.n == 11
    assert g.src.tolist() == [k % 7 for k in range(m)]
    assert g.dst.tolist() == [(k * 3) % 11 for k in range(m)]


@pytest.mark.parametrize("name, head, line, message", [
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n", "2 1\n",
     "g.mtx: size line says 1 entries, found 40"),
    ("g.lg", "3,1,u,graph\n", "1,2\n", "g.lg: header says 1 edges, found 40"),
])
def test_more_entries_than_the_header_grow_the_arrays(tmp_path, name, head, line, message):
    # the arrays start at 16 entries (the header's count, at least 16): 40 lines grow them
    # while the kernel's arguments are dropped, and the count error follows
    path = write(tmp_path, name, head + line * 40)
    assert fast_error(path) == str(tmp_path / message)


def test_a_line_longer_than_the_buffer(tmp_path):
    n = 30_000  # one METIS vertex line of ~170 KB, read in 1 KiB chunks
    text = f"{n + 1} {n}\n" + " ".join(str(v) for v in range(2, n + 2)) + "\n" + "1\n" * n
    g = fast(write(tmp_path, "star.graph", text), 1024)
    assert g.m == n and g.src.tolist() == [0] * n and g.dst.tolist() == list(range(1, n + 1))


def test_non_ascii_data_lines_fall_back_to_the_python_reader(tmp_path):
    path = write(tmp_path, "e.txt", "# r\u00e9seau\n0 1\n1\u00a02\n")  # NBSP splits tokens in Python
    with pytest.raises(Unsupported):
        fast(path)
    g = read_graph(path)
    assert g.src.tolist() == [0, 1] and g.dst.tolist() == [1, 2]


def test_non_ascii_comments_stay_on_the_fast_path(tmp_path):
    path = write(tmp_path, "e.txt", "# r\u00e9seau \u00e9tudi\u00e9\n0 1\n")
    assert fast(path).m == 1
    path = write(tmp_path, "f.txt", "# a\u2028 0 1\n")  # U+2028 ends a line in Python
    with pytest.raises(Unsupported):
        fast(path)
    assert read_graph(path).m == 1


# -- errors, from the fast path ---------------------------------------------------------
ERRORS = [
    ("g.edgelist", "0 1\n1 2 3\n", "g.edgelist:2: 3 columns where the first edge line has 2"),
    ("g.edgelist", "0 1\n1 2 3 4\n", "g.edgelist:2: expected 'u v' or 'u v weight', found '1 2 3 4'"),
    ("g.edgelist", "0 1 nan\n", "g.edgelist:1: edge weight nan is not a finite number"),
    ("g.edgelist", "0 1 1e999\n", "g.edgelist:1: edge weight 1e999 is not a finite number"),
    ("g.edgelist", "0 1 -2\n", "g.edgelist:1: edge weight -2 is negative"),
    ("g.edgelist", "0 1 1,5\n", "g.edgelist:1: edge weight '1,5' is not a number"),
    ("g.edgelist", "0 1\nx y\n", "g.edgelist:2: node ids must be integers, found 'x' 'y'"),
    ("g.edgelist", "0 1\n1 2__3\n", "g.edgelist:2: node ids must be integers, found '1' '2__3'"),
    ("g.edgelist", "0 -1\n", "g.edgelist:1: negative node id in '0 -1'"),
    ("g.edgelist", f"0 {2**63}\n", f"g.edgelist:1: node id in '0 {2**63}' is larger than {2**63 - 1}, "
                                   "the largest id vcut reads"),
    ("g.edgelist", "# only comments\n\n", "g.edgelist: no edges found"),
    ("g.edgelist", "# vcut graph: 3 nodes, 1 edges, directed\n0 1 1\n\n0 3 1.0\n",
     "g.edgelist:4: node id 3 out of range 0..2 (the header declares 3 nodes)"),
    # precedence: a column mismatch anywhere before any id error, id errors before weights
    ("g.edgelist", "0 1 x\n-1 2 1\n0 1\n", "g.edgelist:3: 2 columns where the first edge line has 3"),
    ("g.edgelist", "0 1 x\n0 1 1\n-1 2 1\n", "g.edgelist:3: negative node id in '-1 2'"),
    ("g.edgelist", "0 1 x\n0 1 -1\n", "g.edgelist:1: edge weight 'x' is not a number"),
    ("g.graph", "3 2\n2 4\n1\n\n", "g.graph:2: neighbour 4 out of range 1..3"),
    ("g.graph", "3 2\n2 3\n1\n2\n", "g.graph: neighbour lists are not symmetric (u lists v but v does "
                                    "not list u)"),
    ("g.graph", "3 2\n2\n1\n\n", "g.graph: header says 2 edges, the neighbour lists hold 2 entries "
                                 "(expected 4: each edge is listed by both ends)"),
    ("g.graph", "2 1 1\n2 -3\n1 -3\n", "g.graph:2: edge weight -3 is negative"),
    ("g.graph", "2 1 1\n2\n1 1\n", "g.graph:2: neighbour without its edge weight"),
    ("g.graph", "2 1 10\n\n1\n", "g.graph:2: missing vertex weight"),
    ("g.graph", "2 1\n1\n1\n", "g.graph:2: vertex 1 lists itself (METIS has no self-loops)"),
    ("g.graph", "2 1\n2\n", "g.graph: header says 2 vertices, found 1 vertex lines"),
    ("g.graph", "2 1\n2 x\n1\n", "g.graph:2: expected integers, found '2 x'"),
    ("g.graph", "2 1\n2 x\n1\n\n5\n", "g.graph:5: more vertex lines than the 2 the header gives"),
    ("g.graph", "2 1 2\n2\n1\n", "g.graph:1: invalid METIS header '2 1 2'"),
    ("g.graph", "% nothing\n", "g.graph: empty file, expected a METIS header 'n m [fmt]'"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n4 1\n",
     "g.mtx:3: entry (4, 1) out of range 1..3"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n4 1\n2 1\n1\n",
     "g.mtx: size line says 2 entries, found 3"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n2 1 1.0\n2 1 inf\n",
     "g.mtx:4: entry value inf is not a finite number"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n2 1 1.0\n",
     "g.mtx:2: a 2 x 3 matrix is not square, so it is not a graph"),
    ("g.mtx", "3 3 1\n1 2\n", "g.mtx:1: missing '%%MatrixMarket matrix coordinate ...' banner"),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n% c\n\n",
     "g.mtx: missing the 'rows cols entries' size line"),
    ("g.lg", "3,1,u,graph\n1,5\n", "g.lg:2: edge 1,5 out of range 1..3"),
    ("g.lg", "3,2,u,graph\n1,5\n", "g.lg: header says 2 edges, found 1"),
    ("g.lg", "3,1,u,graph\n\n1,\x1f2\n", "g.lg:3: expected integers, found '1 \\x1f2'"),
    ("g.lg", "3,1,x\n1,2\n", "g.lg:1: LG header must be 'nv,ne,d|u,...', found '3,1,x'"),
]


@pytest.mark.parametrize("chunk", [None, 1, 4])
@pytest.mark.parametrize("name, text, message", ERRORS, ids=[m.split(": ", 1)[-1][:50] for _, _, m in ERRORS])
def test_errors_name_file_and_line_from_the_fast_path(tmp_path, chunk, name, text, message):
    path = write(tmp_path, name, text)
    assert fast_error(path, chunk) == f"{tmp_path}/{message}"
    assert python_error(path) == f"{tmp_path}/{message}"


@pytest.mark.parametrize("chunk", range(1, 12))
def test_error_on_a_line_cut_by_the_chunk_boundary(tmp_path, chunk):
    path = write(tmp_path, "g.graph.gz", "3 2\r\n2\r\n1 3\r\n2 17\r\n")
    assert fast_error(path, chunk) == f"{path}:4: neighbour 17 out of range 1..3"


def test_binary_data_is_refused(tmp_path):
    path = write(tmp_path, "e.txt", b"0 1\n\x00\x01\x02")
    assert fast_error(path) == f"{path}: binary data where a text graph was expected"


def test_read_errors_come_before_parse_errors(tmp_path):
    # a bad first line, then a corrupt deflate stream: the read error is reported (as before)
    noise = np.random.default_rng(0).bytes(200_000)
    data = bytearray(gzip.compress(b"0 1 2 3\n" + noise))
    data[-2000] ^= 0xFF
    path = tmp_path / "e.txt.gz"
    path.write_bytes(bytes(data))
    message = fast_error(str(path), 64)
    assert message.startswith(f"graph file {path}: cannot read: ")
    assert message == python_error(str(path))


def test_the_size_bound_comes_before_parse_errors(tmp_path, monkeypatch):
    import vcut_base.inputs

    monkeypatch.setattr(vcut_base.inputs, "text_limit", lambda: 1 << 16)
    path = write(tmp_path, "e.txt.gz", "0 1 2 3\n" + "0 1\n" * 50_000)
    with pytest.raises(InputTooLarge) as exc:  # exit 2, as every input too large for memory
        fast(path, 1024)
    assert str(exc.value) == (
        f"graph file {path} is larger than 64.0 KiB decompressed, more than this machine's "
        "memory allows reading; use a smaller file or a machine with more memory")


# -- the fast reader decides like the Python reader --------------------------------------
#: odd tokens a mutation puts in place of one of a file's numbers
_ODD = ["0", "-1", "+2", "1_0", "2__1", "007", "1.5", "2e0", "nan", "inf", "-0", "1e999", "x", "",
        "9223372036854775807", "9223372036854775808", "2147483648", "%", "#", "1,2", "\u00e9",
        "\u00a0", "\x1f"]
_SEPARATORS = [" ", " ", "\t", "  ", " \t", "\x1f"]
_BREAKS = ["\n", "\n", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\n\n"]


def _spell_int(draw, v):
    return draw(st.sampled_from([str(v), str(v), f"+{v}", f"00{v}", "_".join(str(v)) if v > 9 else str(v)]))


def _spell_weight(draw):
    return draw(st.sampled_from(["1", "2", "0.5", "1e1", "2.50", "1_0", "0.1000000000000000055511151231257827",
                                 "3E-2", ".5", "7.", "123456789012345", "1234567890.123456",
                                 "0.000000000000001"]))


@st.composite
def _edges(draw, n, m):
    return draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=m))


@st.composite
def text_files(draw):
    """(format, text): a valid file of a random format, spelled variously, then maybe damaged."""
    fmt = draw(st.sampled_from(["edgelist", "metis", "mtx", "lg"]))
    sep = lambda: draw(st.sampled_from(_SEPARATORS))  # noqa: E731
    lines = []
    if fmt == "edgelist":
        big = draw(st.sampled_from([1, 1, 10, 2**31, 2**40, 10**17 + 1, 2**62]))
        edges = draw(_edges(6, 8))
        weighted = draw(st.booleans())
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["# comment", "FromNodeId\tToNodeId", "% c",
                                               "# vcut graph: 9 nodes, 1 edges, directed"])))
        for u, v in edges:
            line = _spell_int(draw, u * big) + sep() + _spell_int(draw, v * big)
            lines.append(line + (sep() + _spell_weight(draw) if weighted else ""))
    elif fmt == "metis":
        n = draw(st.integers(1, 6))
        pairs = sorted({(min(u, v), max(u, v)) for u, v in draw(_edges(n, 8)) if u != v})
        fmtcode, ncon = draw(st.sampled_from([("", 1), ("0", 1), ("1", 1), ("10", 1), ("11", 1),
                                              ("100", 1), ("111", 2), ("011", 3)]))
        head = f"{n} {len(pairs)}" + (f" {fmtcode}" if fmtcode else "") + (f" {ncon}" if ncon > 1 else "")
        lines.append(head)
        code = f"{int(fmtcode or '0'):03d}"
        for u in range(n):
            toks = (["9"] if code[0] == "1" else []) + (["3"] * ncon if code[1] == "1" else [])
            for a, b in pairs:
                if u in (a, b):
                    toks.append(_spell_int(draw, (b if u == a else a) + 1))
                    if code[2] == "1":
                        toks.append(_spell_int(draw, draw(st.integers(0, 4))))
            lines.append(sep().join(toks))
            if draw(st.integers(0, 5)) == 0:
                lines.append("% comment")
    elif fmt == "mtx":
        field_ = draw(st.sampled_from(["pattern", "real", "integer"]))
        edges = draw(_edges(5, 6))
        lines += [f"%%MatrixMarket matrix coordinate {field_} "
                  f"{draw(st.sampled_from(['general', 'symmetric']))}", "% comment", f"5 5 {len(edges)}"]
        for u, v in edges:
            line = _spell_int(draw, u + 1) + sep() + _spell_int(draw, v + 1)
            lines.append(line + (sep() + _spell_weight(draw) if field_ != "pattern" else ""))
    else:
        edges = draw(_edges(5, 6))
        lines.append(f"5,{len(edges)},{draw(st.sampled_from(['d', 'u']))},name")
        for u, v in edges:
            lines.append(f"{_spell_int(draw, u + 1)}{draw(st.sampled_from(['', ' ']))},"
                         f"{draw(st.sampled_from(['', ' ', chr(9)]))}{_spell_int(draw, v + 1)}")
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):  # damage
        if not lines:
            break
        k = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.integers(0, 3))
        if kind == 0:  # a number replaced
            toks = lines[k].split(" ")
            toks[draw(st.integers(0, len(toks) - 1))] = draw(st.sampled_from(_ODD))
            lines[k] = " ".join(toks)
        elif kind == 1:
            del lines[k]
        elif kind == 2:
            lines.insert(k, lines[k])
        else:
            lines[k] = draw(st.sampled_from(_SEPARATORS)) + lines[k] + draw(st.sampled_from(["", " ", "\t"]))
    text = "".join(ln + draw(st.sampled_from(_BREAKS)) for ln in lines)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    return fmt, text


def _outcome(fn):
    try:
        g = fn()
    except Unsupported:
        return None
    except GraphFormatError as exc:
        return ("error", str(exc))
    arrays = tuple(None if a is None else (a.dtype.str, a.tobytes())
                   for a in (g.src, g.dst, g.weight, g.labels, g.node_weight))
    return ("graph", g.n, g.directed, g.meta, arrays)


@settings(max_examples=600, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=text_files(), chunk=st.sampled_from([None, 1, 2, 3, 6]), gz=st.booleans())
def test_fast_reader_decides_like_the_python_reader(tmp_path_factory, case, chunk, gz):
    fmt, text = case
    d = tmp_path_factory.mktemp("prop")
    path = write(d, "g.txt.gz" if gz else "g.txt", text)
    expected = _outcome(lambda: _read_python(path, fmt))
    got = _outcome(lambda: _read_fast(path, fmt, chunk))
    if got is None:  # only for bytes the kernels leave to Python
        assert any(ord(ch) > 127 for ch in text)
        return
    assert got == expected
