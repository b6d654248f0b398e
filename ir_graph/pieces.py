"""A graph file cut into pieces that are read one by one, by different processes.

The input side of out-of-core partitioning (`vcut.outofcore`): no process
reads the whole file; each Dask task reads one piece.

* **Edge lists** (plain text, not gzipped): pieces of about ``piece_bytes``
  bytes. A piece owns the lines that *start* in its byte range, so every
  line belongs to exactly one piece wherever the ranges fall. Each piece is
  parsed by the compiled line kernel of `ir_graph.formats`, with the same
  checks and messages (line numbers counted from the file's start, found
  again only when a piece has an error); only the first piece may have a
  column-names line.
* **METIS** graphs (plain text): byte ranges as for edge lists; a vertex is
  named by its line, so a first pass counts each piece's vertex lines
  (`count_vertex_lines`: lines not starting with ``%``, blank ones included)
  and each piece is then parsed knowing its first vertex. The checks that
  span the file are made on the pieces' totals: the vertex lines and entries
  against the header, and symmetry by comparing the sums (mod 2^64) of a
  64-bit mix of every entry ``u -> v`` with ``u < v`` and of every ``v -> u``:
  equal multisets give equal sums; unequal ones give equal sums with
  probability about 2^-64.
* **vcut .npz** graphs (stored uncompressed, as vcut writes them): pieces of
  ``piece_edges`` edges, each mapped from the file and validated alone.

A gzipped file cannot be split (a deflate stream is read from its start) and
Matrix Market and LG files are rarely large: `plan_pieces` refuses them with
what to do instead. Text with non-ASCII bytes in a data line is refused too
(`read_graph` reads it with its Python reader).
"""

import os
import zipfile

import numpy as np

from vcut_base.errors import GraphFormatError, InputError
from vcut_base.hashing import mix64
from vcut_base.inputs import check_input_file
from vcut_base.jitcache import njit
from vcut_base.npzfile import read_versioned_npz

from . import formats as F
from .formats.chunks import Chunks, Unsupported
from .formats.edgelist import read_edgelist_fast
from .formats.lines import BINARY_PREFIX, binary_message
from .formats.metis import metis_empty, metis_header, read_metis_fast
from .graph import Graph, check_node_count

__all__ = ["PIECE_BYTES", "PIECE_EDGES", "PiecePlan", "plan_pieces", "read_piece",
           "count_vertex_lines", "lines_before"]

#: Bytes of edge-list text per piece (about 3 M edges of SNAP-style text).
PIECE_BYTES = 64 << 20
#: Edges per piece of a .npz graph.
PIECE_EDGES = 1 << 22
#: Bytes read at a time while looking for a line's end.
_SCAN = 1 << 16


class PiecePlan:
    """The pieces of one file: ``ranges`` (byte ranges of an edge list, edge
    ranges of a .npz), ``fmt``; for a .npz also ``n`` and ``directed``."""

    def __init__(self, path, fmt, ranges, n=None, directed=None, edges=None, header=None):
        self.path, self.fmt, self.ranges = path, fmt, ranges
        self.n, self.directed, self.edges = n, directed, edges
        self.header = header  # METIS: (n, m, fmt, ncon)
        self.vertex0 = None  # METIS: each piece's first vertex, from `count_vertex_lines`

    def __len__(self):
        return len(self.ranges)


def plan_pieces(path, fmt=None, *, piece_bytes=PIECE_BYTES, piece_edges=PIECE_EDGES, at_least=1):
    """The `PiecePlan` of ``path``; `InputError` for a file that cannot be split.

    With ``at_least`` > 1 pieces are made smaller (down to 1 MiB of text or
    65,536 edges) so that there are at least that many, when the file allows:
    work for every worker on a file smaller than ``at_least`` default pieces.
    """
    path = os.fspath(path)
    fmt = fmt or F.detect_format(path)
    if fmt not in F.FORMATS:
        raise InputError(f"unknown graph format {fmt!r}; use one of {', '.join(F.FORMATS)}")
    size = check_input_file(path, "graph file", GraphFormatError).st_size
    if fmt == "npz":
        meta, arrays = _open_npz(path)
        m = len(arrays["src"])
        piece_edges = _smaller(piece_edges, m, at_least, 1 << 16)
        starts = list(range(0, m, piece_edges)) or [0]
        ranges = [(a, min(a + piece_edges, m)) for a in starts]
        info = meta["graph"]
        return PiecePlan(path, fmt, ranges, n=info["n"], directed=info["directed"], edges=m)
    if fmt not in ("edgelist", "metis"):
        raise InputError(f"{path}: out-of-core reading splits edge lists, METIS and .npz graphs, "
                         f"not {fmt}; convert it once with 'vcut graph {os.path.basename(path)} "
                         "OUT.npz' on a machine that holds it, or drop --out-of-core")
    if path.endswith(".gz"):
        raise InputError(f"{path}: a gzipped graph cannot be split among workers (it is "
                         "decompressed from its start); gunzip it first, or drop --out-of-core")
    header = _metis_header(path) if fmt == "metis" else None
    step = _smaller(piece_bytes, size, at_least, 1 << 20)
    # the first piece reaches past the first data line (a column-names line, a vcut header)
    head = _first_data_end(path)
    bounds = [0] + [b for b in range(step, size, step) if b > head] + [size]
    ranges = [(a, b) for a, b in zip(bounds[:-1], bounds[1:])] or [(0, 0)]
    return PiecePlan(path, fmt, ranges, header=header,
                     n=header[0] if header else None, directed=False if header else None)


def _metis_header(path, limit=1 << 20):
    """``(n, m, fmt, ncon)`` of a METIS file's header (its first line not a comment)."""
    with open(path, "rb") as fh:
        text = fh.read(limit)
    for k, raw in enumerate(text.split(b"\n")[:-1] if len(text) == limit else text.split(b"\n")):
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("%"):
            return metis_header(path, k + 1, line)
    raise GraphFormatError(metis_empty(path))


def _smaller(step, total, at_least, floor):
    """``step``, or less (not below ``floor``) to cut ``total`` into ``at_least`` pieces."""
    step = max(int(step), 1)
    if at_least > 1:
        step = min(step, max(-(-int(total) // int(at_least)), floor))
    return step


def _open_npz(path):
    meta, arrays = read_versioned_npz(
        path, kind="graph", version=F.GRAPH_FORMAT_VERSION, error=GraphFormatError,
        remake="rebuild it with 'vcut graph'", required=("src", "dst", "weight"), mmap=True)
    with zipfile.ZipFile(path) as zf:
        packed = [k for k in arrays if zf.getinfo(k + ".npy").compress_type != zipfile.ZIP_STORED]
    for k in packed:
        if arrays[k].size > 1 << 16:
            raise InputError(f"{path}: array {k!r} is stored compressed and cannot be read in "
                             "pieces; rewrite the file with 'vcut graph', which stores it plain")
    info = meta.get("graph")
    if not isinstance(info, dict) or not isinstance(info.get("n"), int) or \
            isinstance(info.get("n"), bool) or not isinstance(info.get("directed"), bool):
        raise GraphFormatError(f"{path}: meta 'graph' must be {{\"n\": node count, \"directed\": "
                               f"true|false}}, got {info!r:.80}; rebuild the file with 'vcut graph'")
    check_node_count(info["n"], path)
    return meta, arrays


def read_piece(plan, index):
    """Piece ``index`` of ``plan``: a dict with ``src``, ``dst`` (int64 ids as in the
    file), ``weight`` (float64, or None: all 1), ``columns``, ``declared`` (the node
    count of a vcut edge-list header seen in it, or None), ``directed``.

    Raises
    ------
    GraphFormatError
        A malformed line (numbered from the file's start) or array.
    """
    lo, hi = plan.ranges[index]
    if plan.fmt == "npz":
        _, arrays = _open_npz(plan.path)
        piece = {k: np.array(arrays[k][lo:hi]) for k in ("src", "dst", "weight")}
        g = Graph(n=plan.n, directed=plan.directed, **piece)
        g.validate(f"{plan.path} (edges {lo:,}..{hi - 1:,})")
        return {"src": piece["src"].astype(np.int64), "dst": piece["dst"].astype(np.int64),
                "weight": piece["weight"].astype(np.float64), "columns": 3, "declared": plan.n,
                "directed": plan.directed}
    a, b = _byte_range(plan, index)
    if plan.fmt == "metis":
        return _metis_piece(plan, index, a, b)
    if a >= b:
        return {"src": np.empty(0, np.int64), "dst": np.empty(0, np.int64), "weight": None,
                "columns": 0, "declared": None, "directed": False}
    src, dst, w, ncol, declared, directed = _parse(plan, a, b, index == 0)
    return {"src": src.astype(np.int64), "dst": dst.astype(np.int64), "weight": w,
            "columns": ncol, "declared": declared, "directed": directed}


def _byte_range(plan, index):
    """The bytes of piece ``index``: from the first line starting in its range to the
    first line starting after it."""
    lo, hi = plan.ranges[index]
    with open(plan.path, "rb") as fh:
        return _line_start(fh, lo), _line_start(fh, hi)


def _parse(plan, a, b, *args):
    """The piece ``a..b`` through the format's line kernel; on an error, parsed again
    with the lines before it counted, so that the message numbers lines from the
    file's start."""
    try:
        return _parse_at(plan, a, b, 0, *args)
    except GraphFormatError:
        _parse_at(plan, a, b, lines_before(plan.path, a), *args)
        raise AssertionError("a piece parsed with an error once and without it again") from None


def _parse_at(plan, a, b, line0, *args):
    with _RangeChunks(plan.path, a, b) as c:
        try:
            if plan.fmt == "metis":
                v0, header = args
                return read_metis_fast(plan.path, c, piece=(line0, v0, header))
            return read_edgelist_fast(plan.path, c, piece=(args[0], line0))
        except Unsupported:
            raise GraphFormatError(f"{plan.path}: non-ASCII bytes in a data line after byte {a:,}; "
                                   "reading in pieces takes ASCII text: convert the file once with "
                                   "'vcut graph', or drop --out-of-core") from None


def count_vertex_lines(plan, index):
    """Lines of METIS piece ``index`` that are not comments (its header included)."""
    a, b = _byte_range(plan, index)
    with open(plan.path, "rb") as fh:
        fh.seek(a)
        data = np.frombuffer(fh.read(b - a), np.uint8)
    return int(_count_lines(data))


@njit(cache=True)
def _count_lines(buf):
    """Lines whose first byte other than white space is not ``%`` (blank lines count)."""
    count = 0
    seen = False  # a byte other than white space met on this line
    comment = False
    for i in range(len(buf)):
        c = buf[i]
        if c == 10:
            if not comment:
                count += 1
            seen = False
            comment = False
        elif not seen and not (c == 32 or c == 9 or c == 13 or c == 11 or c == 12):
            seen = True
            comment = c == 37
    if len(buf) and buf[len(buf) - 1] != 10 and not comment:
        count += 1
    return count


def _metis_piece(plan, index, a, b):
    n, m, fmt, ncon = plan.header
    v0 = plan.vertex0[index]
    empty = {"src": np.empty(0, np.int64), "dst": np.empty(0, np.int64), "columns": 0,
             "declared": n, "directed": False, "lines": 0, "entries": 0, "symmetry": (0, 0, 0, 0)}
    weighted = fmt[2] == "1"
    if a >= b:
        return dict(empty, weight=np.empty(0) if weighted else None)
    src, dst, w, lines, entries, f, adj, xadj = _parse(plan, a, b, v0, None if index == 0 else plan.header)
    # symmetry: every u -> v (u < v) against every v -> u, as sums of their mixed pair keys
    u = np.repeat(np.arange(v0, v0 + lines, dtype=np.int64), np.diff(xadj))
    v = adj.astype(np.int64)
    up = v > u
    fwd = mix64(u[up] * n + v[up]).sum(dtype=np.uint64)
    back = mix64(v[~up] * n + u[~up]).sum(dtype=np.uint64)
    return {"src": src.astype(np.int64), "dst": dst.astype(np.int64), "weight": w,
            "columns": 3 if weighted else 2, "declared": n, "directed": False, "lines": lines,
            "entries": entries, "symmetry": (int(up.sum()), int(fwd), int((~up).sum()), int(back))}


def _line_start(fh, pos):
    """The first line start at or after byte ``pos`` (the file's size if none)."""
    if pos == 0:
        return 0
    fh.seek(pos - 1)
    at = pos - 1
    while True:
        block = fh.read(_SCAN)
        if not block:
            return at
        k = block.find(b"\n")
        if k >= 0:
            return at + k + 1
        at += len(block)


def _first_data_end(path, limit=1 << 20):
    """The byte after the first line that is neither blank nor a comment (within
    the first ``limit`` bytes; 0 if none there)."""
    with open(path, "rb") as fh:
        text = fh.read(limit)
    at = 0
    while at < len(text):
        end = text.find(b"\n", at)
        end = len(text) if end < 0 else end + 1
        line = text[at:end].strip()
        if line and not line.startswith((b"#", b"%")):
            return end
        at = end
    return 0


def lines_before(path, pos):
    """Line breaks in the first ``pos`` bytes of ``path``."""
    count = 0
    with open(path, "rb") as fh:
        left = pos
        while left:
            block = fh.read(min(left, 1 << 24))
            if not block:
                break
            count += block.count(b"\n")
            left -= len(block)
    return count


class _RangeChunks(Chunks):
    """`ir_graph.formats.chunks.Chunks` over bytes ``a..b`` of a plain file."""

    def __init__(self, path, a, b):
        self.path = path
        self.chunk = F.CHUNK_BYTES
        self.broken = False
        self._fh = open(path, "rb")
        self._fh.seek(a)
        self._left = b - a
        try:
            head = np.empty(min(BINARY_PREFIX, max(self._left, 1)), np.uint8)
            self._head = head[:self._stream_read(head)]
            self._hpos = 0
            if np.any(self._head == 0):
                raise GraphFormatError(binary_message(path))
            self.buf = np.empty(self.chunk + BINARY_PREFIX, np.uint8)
            self.filled = 0
            self.final = False
            self.scratch = np.empty(256, np.uint8)
            self.text_bytes = b - a
        except BaseException:
            self._fh.close()
            raise

    def close(self):
        self._fh.close()

    def _stream_read(self, view):
        want = min(len(view), self._left)
        if want <= 0:
            return 0
        got = self._fh.readinto(memoryview(view)[:want])
        self._left -= got
        return got

    def drain(self):
        pass
