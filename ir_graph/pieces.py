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
* **vcut .npz** graphs (stored uncompressed, as vcut writes them): pieces of
  ``piece_edges`` edges, each mapped from the file and validated alone.

A gzipped edge list cannot be split (a deflate stream is read from its start)
and the other text formats name vertices by line (METIS) or are rarely large
(Matrix Market, LG): `plan_pieces` refuses them with what to do instead.
"""

import os
import zipfile

import numpy as np

from frontend.errors import GraphFormatError, InputError
from frontend.inputs import check_input_file

from . import formats as F
from .graph import Graph, check_node_count

__all__ = ["PIECE_BYTES", "PIECE_EDGES", "PiecePlan", "plan_pieces", "read_piece"]

#: Bytes of edge-list text per piece (about 3 M edges of SNAP-style text).
PIECE_BYTES = 64 << 20
#: Edges per piece of a .npz graph.
PIECE_EDGES = 1 << 22
#: Bytes read at a time while looking for a line's end.
_SCAN = 1 << 16


class PiecePlan:
    """The pieces of one file: ``ranges`` (byte ranges of an edge list, edge
    ranges of a .npz), ``fmt``; for a .npz also ``n`` and ``directed``."""

    def __init__(self, path, fmt, ranges, n=None, directed=None, edges=None):
        self.path, self.fmt, self.ranges = path, fmt, ranges
        self.n, self.directed, self.edges = n, directed, edges

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
    if fmt != "edgelist":
        raise InputError(f"{path}: out-of-core reading splits edge lists and .npz graphs, not "
                         f"{fmt}; convert it once with 'vcut graph {os.path.basename(path)} "
                         "OUT.npz' on a machine that holds it, or drop --out-of-core")
    if path.endswith(".gz"):
        raise InputError(f"{path}: a gzipped edge list cannot be split among workers (it is "
                         "decompressed from its start); gunzip it first, or drop --out-of-core")
    step = _smaller(piece_bytes, size, at_least, 1 << 20)
    # the first piece reaches past the first data line (a column-names line, a vcut header)
    head = _first_data_end(path)
    bounds = [0] + [b for b in range(step, size, step) if b > head] + [size]
    ranges = [(a, b) for a, b in zip(bounds[:-1], bounds[1:])] or [(0, 0)]
    return PiecePlan(path, fmt, ranges)


def _smaller(step, total, at_least, floor):
    """``step``, or less (not below ``floor``) to cut ``total`` into ``at_least`` pieces."""
    step = max(int(step), 1)
    if at_least > 1:
        step = min(step, max(-(-int(total) // int(at_least)), floor))
    return step


def _open_npz(path):
    from frontend.npzfile import read_versioned_npz

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
    with open(plan.path, "rb") as fh:
        a, b = _line_start(fh, lo), _line_start(fh, hi)
    if a >= b:
        return {"src": np.empty(0, np.int64), "dst": np.empty(0, np.int64), "weight": None,
                "columns": 0, "declared": None, "directed": False}
    try:
        got = _parse(plan.path, a, b, index == 0, 0)
    except GraphFormatError:
        # number the lines from the file's start: count those before the piece, parse again
        got = _parse(plan.path, a, b, index == 0, _lines_before(plan.path, a))
        raise AssertionError("a piece parsed with an error once and without it again") from None
    src, dst, w, ncol, declared, directed = got
    return {"src": src.astype(np.int64), "dst": dst.astype(np.int64), "weight": w,
            "columns": ncol, "declared": declared, "directed": directed}


def _parse(path, a, b, first, line0):
    with _RangeChunks(path, a, b) as c:
        return F._fast_edgelist(path, c, piece=(first, line0))


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


def _lines_before(path, pos):
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


class _RangeChunks(F._Chunks):
    """`formats._Chunks` over bytes ``a..b`` of a plain file."""

    def __init__(self, path, a, b):
        self.path = path
        self.chunk = F.CHUNK_BYTES
        self.broken = False
        self._fh = open(path, "rb")
        self._fh.seek(a)
        self._left = b - a
        try:
            head = np.empty(min(F._BINARY_PREFIX, max(self._left, 1)), np.uint8)
            self._head = head[:self._stream_read(head)]
            self._hpos = 0
            if np.any(self._head == 0):
                raise GraphFormatError(F._binary_message(path))
            self.buf = np.empty(self.chunk + F._BINARY_PREFIX, np.uint8)
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
