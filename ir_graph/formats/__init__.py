"""Read and write graphs: METIS, edge list, Matrix Market, LG, and vcut's own.

=============  ===============================  =====================================
format         suffixes                         notes
=============  ===============================  =====================================
``metis``      ``.graph``, ``.metis``           METIS/Chaco: header ``n m [fmt [ncon]]``,
                                                one 1-based neighbour line per vertex;
                                                fmt digits: vertex sizes, vertex
                                                weights, edge weights; undirected
``edgelist``   ``.edgelist``, ``.edges``,       ``u v [w]`` per line; ``#``/``%``
               ``.txt``, ``.el``                comments; ids renumbered to 0..n-1 in
                                                increasing order when they are not
                                                already (originals in ``labels``),
                                                except in files vcut wrote, whose
                                                ``# vcut graph: N nodes`` header keeps
                                                ids and isolated nodes
``mtx``        ``.mtx``                         Matrix Market coordinate
                                                (pattern/real/integer,
                                                general/symmetric), square
``lg``         ``.lg``                          Graphs.jl: ``nv,ne,d|u,...`` then
                                                ``src,dst`` (1-based)
``npz``        ``.npz``                         vcut's own binary format (all arrays
                                                and attributes, versioned)
=============  ===============================  =====================================

Any of them may be gzip-compressed (``.gz`` after the suffix). Readers
validate everything they read and raise `GraphFormatError` naming the file,
the line and what is wrong, quoting at most ``QUOTE_CHARS`` characters of
it (`vcut_base.errors.excerpt`: the offending token and its column in a
long line). A line longer than `MAX_LINE` bytes (a METIS vertex line: 64
bytes per vertex and edge weight the header allows, at least `MAX_LINE`) is
refused as soon as the reader has passed that many bytes of it, so that a
file of one enormous line (a gzip bomb) costs a few MiB of reading, not the
whole stream. A size that cannot fit in memory is `InputTooLarge`.
Writers go through a temporary file.

Repeated edges. A graph file is read as METIS and networkx's ``Graph`` read
it: in an undirected graph ``u v`` and ``v u`` are one edge, and a line
repeated is the same edge again, not a second one or extra weight. Every
edge after the first of its pair is merged into that first one, which keeps
its place, its direction and its weight (``duplicates="sum"``: the weights
of all of them summed; ``"keep"``: nothing merged, every line an edge of its
own). A directed file (LG ``d``, Matrix Market ``general``) keeps ``u v``
and ``v u`` as two arcs and merges repeats of the same arc, unless it is
read as undirected (``directed=False``, as the partitioners read it). METIS
lists every edge at both ends by definition: each pair of entries is one
edge, and a vertex that lists a neighbour twice has a repeated edge.
``meta["merged"]`` counts what was merged. Self-loops are kept (once).
Files vcut wrote are read exactly as written: ``.npz``, and edge lists and
Matrix Market files with vcut's ``vcut graph:`` comment (an IR graph's
parallel dependencies are edges of their own).

Text formats are read in chunks (`CHUNK_BYTES`) by compiled tokenizers
(`ir_graph._parse`) that write the numbers straight into the graph's
arrays, at 8-40 M edges/s and 18-29 bytes per edge. They decide every
line as the Python readers below do (``_read_metis``, ``_read_edgelist``,
...), which word the messages: a kernel reports the first bad line of each
kind and the Python reader's check of that one line raises. A file with
bytes the kernels do not split exactly as Python would (non-ASCII in a data
line) is read by the Python readers instead.
"""

import gzip
import io
import json
import mmap
import os
import re
from dataclasses import replace

import numpy as np

from vcut_base.atomic import atomic_output
from vcut_base.errors import QUOTE_CHARS, GraphFormatError, InputError, InputTooLarge, excerpt
from vcut_base.inputs import InputStream, check_input_file
from vcut_base.memory import check_memory, format_bytes
from vcut_base.npzfile import read_versioned_npz

from . import _parse as P
from .graph import Graph, check_node_count, index_dtype

__all__ = ["read_graph", "write_graph", "detect_format", "FORMATS", "GRAPH_FORMAT_VERSION",
           "DUPLICATES", "MAX_LINE", "METIS_LINE_BYTES"]

GRAPH_FORMAT_VERSION = 1

#: What `read_graph` does with an edge that repeats an earlier one (module docstring).
DUPLICATES = ("first", "sum", "keep")

#: The longest line of a text graph, in bytes (without its line break).
MAX_LINE = 1 << 20
#: Bytes a METIS vertex line may take per vertex (and per vertex weight) the header
#: declares: room for an id, an edge weight and the blanks between them.
METIS_LINE_BYTES = 64

#: Each text format, with its article, as messages name it.
_FORMAT_NAMES = {"metis": "a METIS", "edgelist": "an edge-list", "mtx": "a Matrix Market",
                 "lg": "an LG"}

_SUFFIXES = {
    ".graph": "metis",
    ".metis": "metis",
    ".edgelist": "edgelist",
    ".edges": "edgelist",
    ".txt": "edgelist",
    ".el": "edgelist",
    ".mtx": "mtx",
    ".lg": "lg",
    ".npz": "npz",
}
FORMATS = ("metis", "edgelist", "mtx", "lg", "npz")


def detect_format(path):
    """Format name from the file name (``.gz`` ignored)."""
    name = os.path.basename(os.fspath(path)).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix, fmt in _SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    raise InputError(
        f"cannot tell the graph format of {path}: use a suffix among "
        f"{', '.join(sorted(_SUFFIXES))} (optionally .gz) or give --format"
    )


#: Bytes the Python readers read at a time.
_PY_CHUNK = 1 << 22

#: Line ends of the kernels (`ir_graph._parse`): LF, CR, CR LF, VT, FF, FS, GS, RS.
_LINE_END = re.compile(rb"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e]")


def _open_text(path, fmt):
    """The text of a graph file for the Python readers, decoded.

    Read in pieces with the checks of `vcut_base.inputs.InputStream` (a file
    past the size bound is refused first); a NUL among the first 64 KiB is
    binary data; a line longer than its bound (`MAX_LINE`; METIS vertex
    lines `_metis_line_limit`) is refused as soon as it is read, as the
    compiled readers refuse it.
    """
    chunks, total, run, limit = [], 0, 0, MAX_LINE
    binary = False
    header = _MetisHead(path) if fmt == "metis" else None
    view = bytearray(_PY_CHUNK)
    with InputStream(path, "graph file", GraphFormatError) as stream:
        while True:
            got = stream.readinto(view)
            if not got:
                break
            chunk = bytes(view[:got])
            if total < _BINARY_PREFIX and b"\0" in chunk[:_BINARY_PREFIX - total]:
                binary = True  # read on: the size bound and read errors come first
            total += got
            if binary:
                continue
            chunks.append(chunk)
            arr = np.frombuffer(chunk, np.uint8)
            split = 0
            if header is not None and header.limit is None:
                end = header.feed(chunk, total - got)
                if header.limit is not None:
                    split = min(max(end - (total - got), 0), got)
            at, run = P.long_line(arr[:split], run, limit) if split else (-1, run)
            if at < 0:
                if header is not None and header.limit is not None:
                    limit = header.limit
                at, run = P.long_line(arr[split:], run, limit)
                at = at + split if at >= 0 else at
            if at >= 0:
                data = b"".join(chunks)
                start = total - got + at - limit  # the long line's first byte
                k = len(data[:start].decode("utf-8", errors="replace").splitlines()) + 1
                raise GraphFormatError(_long_line(path, k, data[start:start + QUOTE_CHARS],
                                                  limit, fmt))
    if binary:
        raise GraphFormatError(_binary_message(path))
    return b"".join(chunks).decode("utf-8", errors="replace")


class _MetisHead:
    """Finds a METIS file's header in its first bytes, for the bound of its lines."""

    def __init__(self, path):
        self.path = path
        self.pending = b""  # the bytes after the last complete line looked at
        self.at = 0  # the file offset of pending
        self.lines = 0  # lines looked at
        self.limit = None

    def feed(self, chunk, offset):
        """Look at the complete lines of ``chunk`` (at file ``offset``); returns the
        file offset of the header line's end once it is found (``limit`` set then)."""
        data = self.pending + chunk
        pos = 0
        for m in _LINE_END.finditer(data):
            if m.end() == len(data) and data[-1:] == b"\r":
                break  # a CR LF cut between two chunks: one line end, seen with the next
            line = data[pos:m.start()].decode("utf-8", errors="replace").strip()
            self.lines += 1
            if not line.startswith("%"):
                self.limit = _metis_line_limit(self.path, self.lines, line)
                return self.at + m.start()
            pos = m.end()
        self.at += pos
        self.pending = data[pos:]
        return None


def _metis_line_limit(path, k, header):
    """The longest line (bytes) of a METIS file whose header, line ``k``, is ``header``:
    `METIS_LINE_BYTES` per vertex and vertex weight it declares (at least `MAX_LINE`);
    `MAX_LINE` for a header the reader will refuse."""
    try:
        n, m, _, ncon = _metis_header(path, k, header)
    except GraphFormatError:
        return MAX_LINE
    return _metis_bound(n, m, ncon)


def _metis_bound(n, m, ncon):
    """`_metis_line_limit` of the header values ``n m fmt ncon``: a vertex line lists at most
    ``min(n, m)`` neighbours and ``ncon`` vertex weights."""
    return max(MAX_LINE, METIS_LINE_BYTES * (min(n, m, 2**40) + min(ncon, 2**20) + 1))


def _long_line(path, k, head, limit, fmt):
    """The message of line ``k``, longer than ``limit`` bytes, starting with bytes ``head``."""
    name = _FORMAT_NAMES.get(fmt, "a text")
    why = f" ({METIS_LINE_BYTES} bytes per vertex of its header)" if limit > MAX_LINE else ""
    text = bytes(head[:QUOTE_CHARS]).decode("utf-8", errors="replace")
    return (f"{path}:{k}: line longer than {limit:,} bytes, the most {name} line may have{why}; "
            f"it begins {text!r}...; the file is not {name} graph, or it is corrupt")


#: Leading bytes of a text graph searched for NUL (binary data).
_BINARY_PREFIX = 65536


def _binary_message(path):
    return f"{path}: binary data where a text graph was expected"


def _read_python(path, fmt):
    """Read a text graph with the Python readers (the whole text in memory)."""
    reader = {"metis": _read_metis, "edgelist": _read_edgelist, "mtx": _read_mtx, "lg": _read_lg}[fmt]
    return reader(path, _open_text(path, fmt))


def read_graph(path, format=None, *, duplicates="first", directed=None):
    """Read a graph file (see the module docstring for formats and repeated edges).

    Parameters
    ----------
    path : str
    format : str, optional
        One of `FORMATS`; default: from the suffix.
    duplicates : {"first", "sum", "keep"}
        An edge that repeats an earlier one (the same pair again, or in an
        undirected graph the same pair the other way round) is merged into
        the first, which keeps its weight (``"first"``) or gets the sum of
        theirs (``"sum"``); ``"keep"`` keeps every line as an edge of its own.
        Files vcut wrote are read as written whatever this says.
    directed : bool, optional
        Read the edges as arcs (``u v`` and ``v u`` two edges) or as
        undirected edges (one); default: as the file says (edge lists,
        METIS, LG ``u`` and symmetric Matrix Market are undirected). METIS
        graphs are undirected whatever this says.

    Returns
    -------
    Graph
        ``meta["merged"]``: ``{"repeated_edges", "reverse_pairs",
        "duplicates"}``, the edges merged into an earlier one written the
        same way round and the other way round (absent for files read as
        written).

    Raises
    ------
    InputError
        Missing file, unknown format, or ``duplicates`` or ``directed`` not
        one of their values.
    InputTooLarge
        The file, or the graph its header declares, needs more memory than
        is available.
    GraphFormatError
        Malformed content: names the file, the line and what is wrong.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "square.txt")
    >>> _ = open(path, "w").write("0 1\\n1 0\\n1 2\\n2 3\\n3 0\\n0 3\\n")
    >>> g = read_graph(path)
    >>> g.m, g.meta["merged"]["reverse_pairs"]
    (4, 2)
    >>> read_graph(path, duplicates="sum").weight.tolist()
    [2.0, 1.0, 1.0, 2.0]
    """
    path = os.fspath(path)
    fmt = format or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown graph format {fmt!r}; use one of {', '.join(FORMATS)}")
    if duplicates not in DUPLICATES:
        raise InputError(f"duplicates must be one of {', '.join(DUPLICATES)}, got {duplicates!r}")
    if directed not in (None, True, False):
        raise InputError(f"directed must be True, False or None (as the file says), got "
                         f"{directed!r}")
    if fmt == "npz":
        return _read_npz(path)
    try:
        g = _read_fast(path, fmt)
    except _Unsupported:  # a byte the kernels do not decide like Python (non-ASCII)
        g = _read_python(path, fmt)
    g.meta.setdefault("source", os.path.abspath(path))
    g.meta.setdefault("format", fmt)
    # the first vertex id of the format, for ids in what commands print and read
    g.meta.setdefault("id_base", 1 if fmt in ("metis", "mtx", "lg") else 0)
    g = g.validate(path)
    if g.meta.get("vcut_header"):  # written by vcut: its edges as they are
        return g
    return _merge_repeats(g, path, duplicates,
                          g.directed if directed is None or fmt == "metis" else directed)


def _merge_repeats(g, path, duplicates, directed):
    """``g`` with every edge that repeats an earlier one merged into it (module
    docstring), as a graph with ``directed``; ``meta["merged"]`` says what was."""
    from vcut_base import arrays

    counts = {"repeated_edges": 0, "reverse_pairs": 0, "duplicates": duplicates}
    meta = dict(g.meta, merged=counts)
    if duplicates == "keep" or g.m < 2:
        return replace(g, directed=directed, meta=meta)
    n, m = int(g.n), g.m
    idt = index_dtype(m)
    check_memory(arrays.resident((1.0 + np.dtype(idt).itemsize + 8.0 * (duplicates == "sum")) * m)
                 + 16.0 * (n + 1), f"{path}: merging the repeated edges of {m:,} edges",
                 "use a machine with more memory, or read the file as written (--duplicates "
                 "keep)", error=InputTooLarge)
    first = arrays.empty(m, np.bool_)
    rep = arrays.empty(m if duplicates == "sum" else 0, np.int64)
    order = arrays.empty(m, idt)
    ptr = np.zeros(n + 1, np.int64)
    mark = np.full(n, -1, np.int64)
    repeats, reverse = P.first_of_pairs(g.src, g.dst, n, directed, first, rep, order, ptr, mark)
    del order, ptr, mark
    counts.update(repeated_edges=int(repeats), reverse_pairs=int(reverse))
    if repeats + reverse == 0:
        return replace(g, directed=directed, meta=meta)
    # in place: the reader's arrays are this graph's alone (a read-only map is copied)
    src, dst, w = (a if a.flags.writeable else a.copy() for a in (g.src, g.dst, g.weight))
    k = P.compact_pairs(first, rep, src, dst, w, duplicates == "sum")
    del rep, first
    if k <= g.m // 2:  # most of the file merged away: give that memory back
        src, dst, w = src[:k].copy(), dst[:k].copy(), w[:k].copy()
    return replace(g, src=arrays.spill(src[:k]), dst=arrays.spill(dst[:k]),
                   weight=arrays.spill(w[:k]), directed=directed, meta=meta)


def _lines(text):
    """(line number, stripped line) for every line."""
    return [(k, ln.strip()) for k, ln in enumerate(text.splitlines(), 1)]


def _ints(path, lineno, tokens, line=None, first=0, step=1, sep=None):
    """The integers of ``tokens``, which are tokens ``first``, ``first + step``, ...
    of ``line`` split at ``sep`` (white space when None)."""
    out = []
    for i, t in enumerate(tokens):
        try:
            out.append(int(t))
        except ValueError:
            joined = " ".join(tokens)
            if len(joined) <= QUOTE_CHARS or line is None:
                found = excerpt(joined)
            else:  # a long line: the bad token and where it is
                found = excerpt(t) + _column(line, first + i * step, sep)
            raise GraphFormatError(f"{path}:{lineno}: expected integers, found {found}") from None
    return out


def _number(path, lineno, tok, what, line=None, index=None):
    """The weight ``tok`` (token ``index`` of ``line``): finite and non-negative."""
    try:
        v = float(tok)
    except ValueError:
        v = None
    where = _column(line, index) if line is not None and len(line) > QUOTE_CHARS else ""
    if v is None:
        raise GraphFormatError(f"{path}:{lineno}: {what} {excerpt(tok)}{where} is not a number")
    if not np.isfinite(v):
        raise GraphFormatError(f"{path}:{lineno}: {what} {_shown(tok)}{where} is not a finite "
                               "number")
    if v < 0:
        raise GraphFormatError(f"{path}:{lineno}: {what} {_shown(tok)}{where} is negative")
    return v


def _shown(text):
    """``text`` as it is when short, else quoted in part (`vcut_base.errors.excerpt`)."""
    text = str(text)
    return text if len(text) <= QUOTE_CHARS else excerpt(text)


def _column(line, index, sep=None):
    """`` at column C`` of token ``index`` of ``line`` split at ``sep`` (white space
    when None), counted from the line's first character other than white space."""
    if sep is None:
        for k, m in enumerate(re.finditer(r"\S+", line)):
            if k == index:
                return f" at column {m.start() + 1:,}"
        return ""
    parts = line.split(sep)
    return f" at column {sum(len(p) + 1 for p in parts[:index]) + 1:,}"


# -- METIS --------------------------------------------------------------------
def _read_metis(path, text):
    lines = [(k, ln) for k, ln in _lines(text) if not ln.startswith("%")]
    if not lines:
        raise GraphFormatError(_metis_empty(path))
    hk, header = lines[0]
    n, m, fmt, ncon = _metis_header(path, hk, header)
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    body = lines[1:]
    if len(body) < n:
        raise GraphFormatError(_metis_few(path, n, len(body)))
    extra = [k for k, ln in body[n:] if ln]
    if extra:
        raise GraphFormatError(_metis_extra(path, extra[0], n))
    us, vs, ws = [], [], []
    vw = np.ones(n, dtype=np.float64) if has_vw else None
    for u, (k, ln) in enumerate(body[:n]):
        nb, ew, x = _metis_vertex(path, k, ln, u, n, has_size, has_vw, has_ew, ncon)
        if has_vw:
            vw[u] = x
        us.extend([u] * len(nb))
        vs.extend(v - 1 for v in nb)
        ws.extend(ew)
    u = np.array(us, dtype=np.int64)
    v = np.array(vs, dtype=np.int64)
    if len(u) != 2 * m:
        raise GraphFormatError(_metis_count(path, m, len(u)))
    fwd = u < v
    a = np.sort(u[fwd] * n + v[fwd])
    b = np.sort(v[~fwd] * n + u[~fwd])
    if len(a) != len(b) or not np.array_equal(a, b):
        raise GraphFormatError(_metis_asymmetric(path))
    w = np.array(ws, dtype=np.float64)[fwd] if has_ew else np.ones(int(fwd.sum()))
    idt = index_dtype(max(n, m))
    return Graph(n=n, src=u[fwd].astype(idt), dst=v[fwd].astype(idt), weight=w, directed=False,
                 node_weight=vw, meta={"metis_fmt": fmt})


def _metis_empty(path):
    return f"{path}: empty file, expected a METIS header 'n m [fmt]'"


def _metis_few(path, n, found):
    return f"{path}: header says {n} vertices, found {found} vertex lines"


def _metis_extra(path, k, n):
    return f"{path}:{k}: more vertex lines than the {n} the header gives"


def _metis_count(path, m, entries):
    return (f"{path}: header says {_shown(m)} edges, the neighbour lists hold {entries} entries "
            f"(expected {_shown(2 * m)}: each edge is listed by both ends)")


def _metis_asymmetric(path):
    return f"{path}: neighbour lists are not symmetric (u lists v but v does not list u)"


def _metis_header(path, hk, header):
    """``(n, m, fmt, ncon)`` of the METIS header line ``header`` (line ``hk``)."""
    head = _ints(path, hk, header.split(), header)
    if len(head) < 2:
        raise GraphFormatError(f"{path}:{hk}: METIS header needs at least 'n m', found "
                               f"{excerpt(header)}")
    n, m = head[0], head[1]
    fmt = f"{head[2]:03d}" if len(head) > 2 else "000"
    ncon = head[3] if len(head) > 3 else 1
    if n < 0 or m < 0 or ncon < 1 or len(fmt) != 3 or set(fmt) - {"0", "1"}:
        raise GraphFormatError(f"{path}:{hk}: invalid METIS header {excerpt(header)}")
    check_node_count(n, f"{path}:{hk}")
    return n, m, fmt, ncon


def _metis_vertex(path, k, ln, u, n, has_size, has_vw, has_ew, ncon):
    """Vertex ``u``'s line ``ln`` (line ``k``): (1-based neighbours, edge weights, vertex weight)."""
    tok = ln.split()
    pos = 0
    vweight = None
    if has_size:
        pos += 1
    if has_vw:
        if len(tok) < pos + ncon:
            raise GraphFormatError(f"{path}:{k}: missing vertex weight")
        vweight = _number(path, k, tok[pos], "vertex weight", ln, pos)
        pos += ncon
    rest = tok[pos:]
    step = 2 if has_ew else 1
    if len(rest) % step:
        raise GraphFormatError(f"{path}:{k}: neighbour without its edge weight")
    nb = _ints(path, k, rest[0::step], ln, pos, step)
    long = len(ln) > QUOTE_CHARS
    for i, v in enumerate(nb):
        if v < 1 or v > n:
            where = _column(ln, pos + i * step) if long else ""
            raise GraphFormatError(f"{path}:{k}: neighbour {_shown(v)}{where} out of range 1..{n}")
        if v == u + 1:
            where = _column(ln, pos + i * step) if long else ""
            raise GraphFormatError(f"{path}:{k}: vertex {u + 1} lists itself{where} (METIS has "
                                   "no self-loops)")
    ew = [_number(path, k, t, "edge weight", ln, pos + 2 * i + 1)
          for i, t in enumerate(rest[1::step])] if has_ew else []
    return nb, ew, vweight


def _merge_undirected(g):
    """Simple undirected view: parallel edges merged (weights summed), loops dropped."""
    a = np.minimum(g.src, g.dst).astype(np.int64)
    b = np.maximum(g.src, g.dst).astype(np.int64)
    keep = a != b
    keys = a[keep] * np.int64(max(g.n, 1)) + b[keep]
    uniq, inv = np.unique(keys, return_inverse=True)
    w = np.bincount(inv, weights=g.weight[keep], minlength=len(uniq))
    return uniq // max(g.n, 1), uniq % max(g.n, 1), w, int((~keep).sum()), int(keep.sum() - len(uniq))


def _write_metis(g, fh):
    a, b, w, loops, merged = _merge_undirected(g)
    wi = np.maximum(np.rint(w), 1).astype(np.int64)
    has_ew = not np.all(wi == 1)
    has_vw = g.node_weight is not None
    fmt = f"0{int(has_vw)}{int(has_ew)}"
    u = np.concatenate([a, b])
    v = np.concatenate([b, a])
    ww = np.concatenate([wi, wi])
    order = np.lexsort((v, u))
    u, v, ww = u[order], v[order], ww[order]
    ptr = np.searchsorted(u, np.arange(g.n + 1))
    out = io.StringIO()
    out.write(f"{g.n} {len(a)}" + (f" {fmt}" if fmt != "000" else "") + "\n")
    for x in range(g.n):
        parts = []
        if has_vw:
            parts.append(str(int(max(round(g.node_weight[x]), 0))))
        for k in range(ptr[x], ptr[x + 1]):
            parts.append(str(v[k] + 1))
            if has_ew:
                parts.append(str(ww[k]))
        out.write(" ".join(parts) + "\n")
    fh.write(out.getvalue())
    return {"self_loops_dropped": loops, "parallel_edges_merged": merged,
            "weights_rounded": bool(np.any(wi != w))}


# -- edge list --------------------------------------------------------------------
_VCUT_HEADER = re.compile(r"^# vcut graph: (\d+) nodes, \d+ edges, (directed|undirected)")


def _read_edgelist(path, text):
    rows = []
    header = None
    declared = None
    directed = False
    first_data = True
    for k, ln in _lines(text):
        if not ln or ln[0] in "#%":
            got = _edgelist_comment(path, k, ln)
            if got:
                declared, directed = got
            continue
        tok = ln.split()
        if first_data and _is_column_names(tok):
            header = ln  # a column-name line (SNAP ca-HepPh has one without '#')
            first_data = False
            continue
        first_data = False
        if len(tok) not in (2, 3):
            raise GraphFormatError(_edgelist_columns(path, k, ln))
        rows.append((k, tok))
    if not rows:
        raise GraphFormatError(_edgelist_empty(path))
    ncol = len(rows[0][1])
    for k, tok in rows:
        if len(tok) != ncol:
            raise GraphFormatError(_edgelist_mismatch(path, k, len(tok), ncol))
    ids = np.empty((len(rows), 2), dtype=np.int64)
    for r, (k, tok) in enumerate(rows):
        ids[r] = _edgelist_ids(path, k, tok)
    if ncol == 3:
        w = np.array([_number(path, k, tok[2], "edge weight") for k, tok in rows], dtype=np.float64)
    else:
        w = np.ones(len(rows), dtype=np.float64)
    if declared is not None:
        # written by vcut: ids are 0..n-1 already, isolated nodes included
        if ids.max() >= declared:
            r = int(np.flatnonzero((ids >= declared).any(axis=1))[0])
            raise GraphFormatError(_edgelist_beyond(path, rows[r][0], int(ids[r].max()), declared))
        n, labels, inv = declared, None, ids
    else:
        uniq, inv = np.unique(ids.ravel(), return_inverse=True)
        n = len(uniq)
        labels = None if np.array_equal(uniq, np.arange(n)) else uniq
        inv = inv.reshape(-1, 2)
    idt = index_dtype(max(n, len(rows)))
    meta = {"header": header} if header else {}
    if declared is not None:
        meta["vcut_header"] = True
    return Graph(n=n, src=inv[:, 0].astype(idt), dst=inv[:, 1].astype(idt), weight=w,
                 directed=directed, labels=labels, meta=meta)


def _edgelist_comment(path, k, ln):
    """``(declared nodes, directed)`` of a ``# vcut graph:`` comment line, else None."""
    m = _VCUT_HEADER.match(ln)
    if not m:
        return None
    declared = int(m.group(1))
    check_node_count(declared, f"{path}:{k}")
    return declared, m.group(2) == "directed"


def _is_column_names(tok):
    """Whether the tokens of a first data line are column names (none is a number)."""
    return not any(_is_number(t) for t in tok)


def _edgelist_columns(path, k, ln):
    return f"{path}:{k}: expected 'u v' or 'u v weight', found {excerpt(ln)}"


def _edgelist_empty(path):
    return f"{path}: no edges found"


def _edgelist_mismatch(path, k, found, ncol):
    return f"{path}:{k}: {found} columns where the first edge line has {ncol}"


def _edgelist_beyond(path, k, node, declared):
    return (f"{path}:{k}: node id {node} out of range 0..{declared - 1} "
            f"(the header declares {declared} nodes)")


def _edgelist_ids(path, k, tok):
    """The two node ids of edge line ``k`` (tokens ``tok``): non-negative int64."""
    ids = []
    for t in tok[:2]:
        try:
            v = int(t)
        except ValueError:
            raise GraphFormatError(f"{path}:{k}: node ids must be integers, found "
                                   f"{excerpt(tok[0])} {excerpt(tok[1])}") from None
        if not -2**63 <= v < 2**63:
            raise GraphFormatError(f"{path}:{k}: node id in {excerpt(' '.join(tok[:2]))} is larger "
                                   f"than {2**63 - 1}, the largest id vcut reads")
        ids.append(v)
    if ids[0] < 0 or ids[1] < 0:
        raise GraphFormatError(f"{path}:{k}: negative node id in {excerpt(' '.join(tok[:2]))}")
    return ids


def _is_number(tok):
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _write_edgelist(g, fh):
    out = io.StringIO()
    out.write(f"# vcut graph: {g.n} nodes, {g.m} edges, {'directed' if g.directed else 'undirected'}\n")
    out.write("# source target weight (0-based node ids")
    out.write(", execution order)\n" if g.meta.get("kind") == "ir" else ")\n")
    for s, d, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()):
        out.write(f"{s} {d} {w:.17g}\n")
    fh.write(out.getvalue())
    return {}


# -- Matrix Market -----------------------------------------------------------------
def _read_mtx(path, text):
    lines = _lines(text)
    field_, symmetry = _mtx_banner(path, lines[0][1] if lines else None)
    body = [(k, ln) for k, ln in lines[1:] if ln and not ln.startswith("%")]
    if not body:
        raise GraphFormatError(_mtx_no_size(path))
    sk, size = body[0]
    own = any(ln.startswith(_MTX_VCUT) for k, ln in lines[1:sk - 1])
    rows, nnz = _mtx_size(path, sk, size)
    entries = body[1:]
    if len(entries) != nnz:
        raise GraphFormatError(_mtx_count(path, nnz, len(entries)))
    need = 2 if field_ == "pattern" else 3
    src = np.empty(nnz, dtype=np.int64)
    dst = np.empty(nnz, dtype=np.int64)
    w = np.ones(nnz, dtype=np.float64)
    for r, (k, ln) in enumerate(entries):
        i, j, x = _mtx_entry(path, k, ln, need, rows)
        src[r], dst[r] = i - 1, j - 1
        if need == 3:
            w[r] = x
    idt = index_dtype(max(rows, nnz))
    return Graph(n=rows, src=src.astype(idt), dst=dst.astype(idt), weight=w,
                 directed=symmetry == "general", meta=_mtx_meta(field_, symmetry, own))


#: The comment vcut writes after a Matrix Market banner (`_write_mtx`).
_MTX_VCUT = "% vcut graph: "


def _mtx_meta(field_, symmetry, own):
    meta = {"mtx": f"{field_} {symmetry}"}
    if own:
        meta["vcut_header"] = True
    return meta


def _mtx_banner(path, first):
    """``(field, symmetry)`` of the stripped first line ``first`` (None: no lines)."""
    if first is None or not first.lower().startswith("%%matrixmarket"):
        raise GraphFormatError(f"{path}:1: missing '%%MatrixMarket matrix coordinate ...' banner")
    banner = first.lower().split()
    if len(banner) < 5 or banner[1] != "matrix" or banner[2] != "coordinate":
        raise GraphFormatError(f"{path}:1: only 'matrix coordinate' Matrix Market files are "
                               f"graphs, found {excerpt(first)}")
    field_, symmetry = banner[3], banner[4]
    if field_ not in ("pattern", "real", "integer"):
        raise GraphFormatError(f"{path}:1: unsupported field {excerpt(field_)} (pattern, real or "
                               "integer)")
    if symmetry not in ("general", "symmetric"):
        raise GraphFormatError(f"{path}:1: unsupported symmetry {excerpt(symmetry)} (general or "
                               "symmetric)")
    return field_, symmetry


def _mtx_no_size(path):
    return f"{path}: missing the 'rows cols entries' size line"


def _mtx_count(path, nnz, found):
    return f"{path}: size line says {_shown(nnz)} entries, found {found}"


def _mtx_size(path, sk, size):
    """``(rows, entries)`` of the size line ``size`` (line ``sk``) of a square matrix."""
    dims = _ints(path, sk, size.split(), size)
    if len(dims) != 3:
        raise GraphFormatError(f"{path}:{sk}: size line must be 'rows cols entries', found "
                               f"{excerpt(size)}")
    rows, cols, nnz = dims
    if rows != cols:
        raise GraphFormatError(f"{path}:{sk}: a {_shown(rows)} x {_shown(cols)} matrix is not "
                               "square, so it is not a graph")
    check_node_count(rows, f"{path}:{sk}")
    return rows, nnz


def _mtx_entry(path, k, ln, need, rows):
    """``(i, j, value)`` of entry line ``ln`` (line ``k``; value None for a pattern)."""
    tok = ln.split()
    if len(tok) != need:
        raise GraphFormatError(f"{path}:{k}: expected {need} values per entry, found {excerpt(ln)}")
    i, j = _ints(path, k, tok[:2], ln)
    if not (1 <= i <= rows and 1 <= j <= rows):
        raise GraphFormatError(f"{path}:{k}: entry ({_shown(i)}, {_shown(j)}) out of range "
                               f"1..{rows}")
    return i, j, _number(path, k, tok[2], "entry value", ln, 2) if need == 3 else None


def _write_mtx(g, fh):
    out = io.StringIO()
    sym = "general" if g.directed else "symmetric"
    out.write(f"%%MatrixMarket matrix coordinate real {sym}\n")
    out.write(f"% vcut graph: {g.n} nodes, {g.m} edges\n")
    out.write(f"{g.n} {g.n} {g.m}\n")
    if g.directed:
        rows, cols = g.src, g.dst
    else:  # lower triangle
        rows, cols = np.maximum(g.src, g.dst), np.minimum(g.src, g.dst)
    for i, j, w in zip(rows.tolist(), cols.tolist(), g.weight.tolist()):
        out.write(f"{i + 1} {j + 1} {w:.17g}\n")
    fh.write(out.getvalue())
    return {}


# -- LG ------------------------------------------------------------------------------
def _read_lg(path, text):
    lines = [(k, ln) for k, ln in _lines(text) if ln]
    if not lines:
        raise GraphFormatError(_lg_empty(path))
    hk, header = lines[0]
    nv, ne, directed = _lg_header(path, hk, header)
    body = lines[1:]
    if len(body) != ne:
        raise GraphFormatError(_lg_count(path, ne, len(body)))
    src = np.empty(ne, dtype=np.int64)
    dst = np.empty(ne, dtype=np.int64)
    for r, (k, ln) in enumerate(body):
        a, b = _lg_edge(path, k, ln, nv)
        src[r], dst[r] = a - 1, b - 1
    idt = index_dtype(max(nv, ne))
    return Graph(n=nv, src=src.astype(idt), dst=dst.astype(idt), weight=np.ones(ne),
                 directed=directed)


def _lg_empty(path):
    return f"{path}: empty file, expected an 'nv,ne,d|u,...' header"


def _lg_count(path, ne, found):
    return f"{path}: header says {_shown(ne)} edges, found {found}"


def _lg_header(path, hk, header):
    """``(nv, ne, directed)`` of the LG header line ``header`` (line ``hk``)."""
    parts = header.split(",")
    if len(parts) < 3 or parts[2] not in ("d", "u"):
        raise GraphFormatError(f"{path}:{hk}: LG header must be 'nv,ne,d|u,...', found "
                               f"{excerpt(header)}")
    nv, ne = _ints(path, hk, parts[:2], header, sep=",")
    check_node_count(nv, f"{path}:{hk}")
    return nv, ne, parts[2] == "d"


def _lg_edge(path, k, ln, nv):
    """The 1-based ``(src, dst)`` of LG edge line ``ln`` (line ``k``)."""
    tok = ln.split(",")
    if len(tok) != 2:
        raise GraphFormatError(f"{path}:{k}: expected 'src,dst', found {excerpt(ln)}")
    a, b = _ints(path, k, tok, ln, sep=",")
    if not (1 <= a <= nv and 1 <= b <= nv):
        raise GraphFormatError(f"{path}:{k}: edge {_shown(a)},{_shown(b)} out of range 1..{nv}")
    return a, b


# -- compiled text readers ------------------------------------------------------------
#: Bytes read from a text graph at a time (decompressed): 4 MiB (16 and 64 MiB measured no
#: faster, and slower for gzip). Tests make it tiny to cut lines across chunks; a line longer
#: than the buffer grows it.
CHUNK_BYTES = 1 << 22

#: Edge-list ids are stored as int32 until one exceeds this (then int64).
_INT32_IDS = 2**31 - 1


class _Unsupported(Exception):
    """A kernel met bytes it does not decide exactly like the Python reader (non-ASCII)."""


class _Chunks:
    """The text of a graph file, chunk by chunk, in the buffer the line kernels read.

    ``buf[:filled]`` holds data (``final``: up to the end of the file);
    `refill` keeps the bytes from ``st[POS]`` on (an incomplete line) and
    reads the next chunk after them. Made, it has checked the file like
    `vcut_base.inputs.read_input` and refused binary data (a NUL among the
    first 64 KiB).
    """

    def __init__(self, path, chunk):
        self.path = path
        self.chunk = max(int(chunk), 1)
        self.broken = False
        from vcut_base.arrays import spill_directory

        # under --spill the edges go to scratch files, not memory: no size bound
        self.stream = InputStream(path, "graph file", GraphFormatError,
                                  limit=(1 << 62) if spill_directory() else None)
        try:
            head = np.empty(_BINARY_PREFIX, np.uint8)
            self._head = head[:self._stream_read(head)]
            self._hpos = 0
            if np.any(self._head == 0):
                self.drain()
                raise GraphFormatError(_binary_message(path))
            self.buf = np.empty(self.chunk + _BINARY_PREFIX, np.uint8)
            self.filled = 0
            self.final = False
            self.scratch = np.empty(256, np.uint8)
            self.text_bytes = self.stream.size * (4 if path.endswith(".gz") else 1)  # a guess for .gz
        except BaseException:
            self.stream.close()
            raise

    def close(self):
        self.stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _stream_read(self, view):
        try:
            return self.stream.readinto(view)
        except (GraphFormatError, InputTooLarge):
            self.broken = True
            raise

    def _read(self, view):
        """Fill ``view`` from the first 64 KiB kept by the binary check, then the file."""
        got = 0
        if self._hpos < len(self._head):
            got = min(len(view), len(self._head) - self._hpos)
            view[:got] = self._head[self._hpos:self._hpos + got]
            self._hpos += got
        if got < len(view):
            got += self._stream_read(view[got:])
        return got

    def refill(self, st):
        """Drop the bytes before ``st[POS]``, read a chunk after the rest; ``st[POS]`` = 0."""
        pos = int(st[P.POS])
        tail = self.filled - pos
        if len(self.buf) - tail < max(self.chunk // 2, 1):
            size = max(tail + self.chunk, 2 * len(self.buf))
            check_memory(size, f"{self.path}: a line of {tail:,} bytes",
                         "the file is not a text graph, or use a machine with more memory",
                         error=InputTooLarge)
            buf = np.empty(size, np.uint8)
            buf[:tail] = self.buf[pos:self.filled]
            self.buf = buf
        elif tail and pos:
            self.buf[:tail] = self.buf[pos:self.filled]
        st[P.POS] = 0
        # a long line is read in ever larger pieces: each is scanned once more from its start
        want = min(len(self.buf) - tail, max(self.chunk, tail))
        got = self._read(self.buf[tail:tail + want])
        self.filled = tail + got
        self.final = got < want

    def drain(self):
        """Read the rest of the file (read errors and the size bound come before parse errors)."""
        if self.broken:
            return
        sink = np.empty(1 << 20, np.uint8)
        while self._stream_read(sink):
            pass

    def line(self, st):
        """The event line ``buf[st[A]:st[B]]`` as the Python readers see it (decoded, stripped)."""
        return bytes(self.buf[st[P.A]:st[P.B]]).decode("utf-8", errors="replace").strip()


def _state():
    """A fresh kernel state (`ir_graph._parse` slots): nothing read, no error, no stop,
    lines of at most `MAX_LINE` bytes."""
    st = np.zeros(P.NSLOTS, np.int64)
    st[P.LEVEL] = P.NO_ERROR
    st[P.STOP] = -1
    st[P.MAXLEN] = MAX_LINE
    return st


def _consume(st):
    """Skip the event line."""
    st[P.POS] = st[P.NEXT]
    st[P.LINE] = st[P.EVLINE]


def _capacity(c, hint=None):
    """First length of entry arrays: ``hint`` (a header's count) bounded by the text's size / 4."""
    est = c.text_bytes // 4 + 1024
    return int(est if hint is None or hint < 0 else max(min(est, hint), 16))


class _Array:
    """A typed array that grows without copying and takes memory only where written.

    It lives in an anonymous private memory map, moved by ``mremap`` when it
    grows (`mmap.mmap.resize`); pages never written are never allocated, so
    a generous length costs address space only. ``a`` is the current numpy
    array: take it afresh after `grow` (a view kept across `grow` stops the
    map from moving: ``BufferError``).
    """

    def __init__(self, path, dtype, n):
        from vcut_base.arrays import spill_file

        self.path = path
        self.dtype = np.dtype(dtype)
        self._fd = spill_file()  # --spill: the array is a spill file (vcut_base.arrays)
        self._mm = self._map(max(int(n), 1))
        self.a = np.frombuffer(self._mm, self.dtype)

    def __len__(self):
        return len(self.a)

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)
            self._fd = None

    def _map(self, n):
        size = n * self.dtype.itemsize
        if self._fd is not None:
            from vcut_base.arrays import map_reserved

            return map_reserved(self._fd, size)
        try:
            mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        except OSError:  # address space refused (strict overcommit, a ulimit)
            raise InputTooLarge(f"{self.path}: reading {n:,} entries needs {format_bytes(size)} of "
                                   "address space, more than this machine gives; use a machine with "
                                   "more memory or a smaller graph") from None
        if hasattr(mmap, "MADV_HUGEPAGE"):
            mm.madvise(mmap.MADV_HUGEPAGE)  # fewer page faults, as numpy does for large arrays
        return mm

    def grow(self, need):
        """Make room for at least ``need`` entries (twice the length, or more); contents kept."""
        need = int(need)
        if self._fd is None:
            check_memory((need - len(self.a)) * self.dtype.itemsize,
                         f"{self.path}: reading {need:,} entries",
                         "use a machine with more memory or a smaller graph", error=InputTooLarge)
        self._resize(max(need, 2 * len(self.a)))

    def _resize(self, n):
        self.a = None
        if self._fd is not None and n * self.dtype.itemsize > len(self._mm):
            from vcut_base.arrays import reserve

            reserve(self._fd, n * self.dtype.itemsize)
        try:
            self._mm.resize(n * self.dtype.itemsize)
        except (OSError, SystemError, BufferError):  # no mremap, it failed, or a view of the
            # map is still referenced (a profiler's frame: Dask samples worker threads' stacks)
            new = self._map(n)
            keep = min(len(self._mm), len(new))
            new[:keep] = self._mm[:keep]
            try:
                self._mm.close()
            except BufferError:
                pass  # unmapped when the last view goes
            self._mm = new
        self.a = np.frombuffer(self._mm, self.dtype)

    def done(self, count):
        """The first ``count`` entries as an array; the rest of the map is given back."""
        if not count:
            self.a = None
            return np.empty(0, self.dtype)
        self._resize(int(count))
        out, self.a = self.a, None
        return out


def _grow(need, *arrays):
    """Grow each `_Array` of ``arrays`` shorter than ``need`` entries."""
    for x in arrays:
        if len(x) < need:
            x.grow(need)


def _read_fast(path, fmt, chunk=None):
    """Read a text graph with the compiled line kernels, chunk by chunk.

    Same result and same errors as the Python readers (`_read_python`).

    Raises
    ------
    _Unsupported
        A line holds bytes the kernels do not split as Python does (non-ASCII
        in a data line); nothing is returned, read the file with
        `_read_python`.
    """
    reader = {"metis": _fast_metis, "edgelist": _fast_edgelist, "mtx": _fast_mtx, "lg": _fast_lg}[fmt]
    with _Chunks(path, CHUNK_BYTES if chunk is None else chunk) as c:
        try:
            return reader(path, c)
        except GraphFormatError:
            c.drain()  # an unreadable or oversized rest of the file is reported first
            raise


def _run(kernel, c, st, *args):
    """Call ``kernel`` until it returns something other than `NEED` before the end.

    Raises
    ------
    GraphFormatError
        A line longer than ``st[MAXLEN]`` (`LONG`): the rest of the file is not read.
    """
    while True:
        status = kernel(c.buf, c.filled, c.final, st, *args)
        if status == P.NEED and not c.final:
            c.refill(st)
            continue
        if status == P.UNSUPPORTED:
            raise _Unsupported(c.path)
        if status == P.LONG:
            c.broken = True  # refused now: not read to its end first (a gzip bomb)
            pos = int(st[P.POS])
            raise GraphFormatError(_long_line(c.path, int(st[P.LINE]) + 1,
                                              c.buf[pos:pos + QUOTE_CHARS], int(st[P.MAXLEN]),
                                              _KERNEL_FORMATS.get(kernel)))
        return status


_KERNEL_FORMATS = {P.edgelist_lines: "edgelist", P.metis_lines: "metis", P.mtx_lines: "mtx",
                   P.lg_lines: "lg"}


def _reraise(fn, *args):
    """Call a Python line check that must refuse the line; `_Unsupported` if it accepts it."""
    fn(*args)
    raise _Unsupported("kernel and Python reader disagree")


def _fast_edgelist(path, c, stop=-1, *, piece=None):
    """`_read_edgelist` by `_parse.edgelist_lines`.

    With ``stop`` >= 0, returns the line number of edge ``stop`` instead
    (the file was read once already without errors). With ``piece`` = ``(first,
    line0)`` ``c`` holds a piece of the file (`ir_graph.pieces`) whose first
    line is line ``line0 + 1``, the file's first line when ``first``; the
    piece's edges are returned as read: ``(src, dst, weight or None, columns,
    declared node count or None, directed)``, ids not renumbered.
    """
    st = _state()
    st[P.FIRST] = 1 if piece is None or piece[0] else 0
    st[P.LINE] = 0 if piece is None else piece[1]
    st[P.STOP] = stop
    cap = _capacity(c)
    src, dst = _Array(path, np.int32, cap), _Array(path, np.int32, cap)
    w = _Array(path, np.float64, 1)
    maxid = _INT32_IDS
    declared, directed, header = None, False, None
    errors = {}
    while True:
        status = _run(P.edgelist_lines, c, st, src.a, dst.a, w.a, maxid, P.POW10, c.scratch)
        if status == P.NEED:
            break
        if status == P.FULL:
            _grow(st[P.REQ_E], src, dst)
            if st[P.NCOL] == 3:
                _grow(len(src), w)
            continue
        if status == P.WIDEN:
            src, dst, maxid = _widen(src, st[P.COUNT]), _widen(dst, st[P.COUNT]), 2**63 - 1
            continue
        kind, k, ln = st[P.KIND], int(st[P.EVLINE]), c.line(st)
        if kind == P.K_STOP:
            return k
        if kind == P.K_VCUT:
            got = _edgelist_comment(path, k, ln) if stop < 0 else None
            if got:
                declared, directed = got
        elif kind == P.K_FIRST:
            st[P.FIRST] = 0
            if not _is_column_names(ln.split()):
                continue  # an edge line: read it again
            header = ln
        elif kind == P.K_COLS:
            raise GraphFormatError(_edgelist_columns(path, k, ln))
        else:  # the first error of a class: lines after it are checked for earlier classes only
            errors[kind] = (k, ln)
            st[P.LEVEL] = {P.K_MISMATCH: 3, P.K_IDS: 4, P.K_WEIGHT: 5}[kind]
        _consume(st)
    if stop >= 0:
        raise _Unsupported("edge not found again")
    count, ncol = int(st[P.COUNT]), int(st[P.NCOL])
    if not ncol and piece is None:
        raise GraphFormatError(_edgelist_empty(path))
    if P.K_MISMATCH in errors:
        k, ln = errors[P.K_MISMATCH]
        raise GraphFormatError(_edgelist_mismatch(path, k, len(ln.split()), ncol))
    if P.K_IDS in errors:
        _reraise(_edgelist_ids, path, errors[P.K_IDS][0], errors[P.K_IDS][1].split())
    if P.K_WEIGHT in errors:
        k, ln = errors[P.K_WEIGHT]
        _reraise(_number, path, k, ln.split()[2], "edge weight")
    src, dst = src.done(count), dst.done(count)
    if piece is not None:
        return src, dst, (w.done(count) if ncol == 3 else None), ncol, declared, directed
    w = w.done(count) if ncol == 3 else np.ones(count)
    if declared is not None:
        # written by vcut: ids are 0..n-1 already, isolated nodes included
        r = P.first_at_least(src, dst, count, declared)
        if r >= 0:
            node = int(max(src[r], dst[r]))
            del src, dst, w
            with _Chunks(path, c.chunk) as again:
                k = _fast_edgelist(path, again, stop=r)
            raise GraphFormatError(_edgelist_beyond(path, k, node, declared))
        n, labels = declared, None
    else:
        n, labels = _renumber(path, src, dst, count)
    idt = index_dtype(max(n, count))
    if src.dtype != idt:
        src, dst = src.astype(idt), dst.astype(idt)
    meta = {"header": header} if header else {}
    if declared is not None:
        meta["vcut_header"] = True
    return Graph(n=n, src=src, dst=dst, weight=w, directed=directed, labels=labels, meta=meta)


def _widen(x, count):
    """`_Array` ``x`` as int64 (same length, first ``count`` entries copied)."""
    out = _Array(x.path, np.int64, len(x))
    out.a[:count] = x.a[:count]
    return out


def _renumber(path, src, dst, count):
    """Ids renumbered in place to 0..n-1 in increasing order: ``(n, labels)``.

    ``labels`` (int64, the original ids) is None when the ids are 0..n-1
    already. Through a table over 0..max id when it is no larger than the id
    arrays (or 64 MiB), else by sorting the ids.
    """
    top = int(max(src.max(), dst.max()))
    rdt = np.int32 if top < 2**31 - 1 else np.int64
    table = (top + 1) * np.dtype(rdt).itemsize
    if table <= max(2 * count * src.itemsize, 1 << 26):
        check_memory(table, f"{path}: renumbering node ids up to {top:,}",
                     "use a machine with more memory", error=InputTooLarge)
        n, labels = P.renumber_dense(src, dst, count, np.zeros(top + 1, rdt))
        return n, (labels if n != top + 1 else None)
    check_memory(4 * count * src.itemsize, f"{path}: renumbering {count:,} edges",
                 "use a machine with more memory", error=InputTooLarge)
    ids = np.concatenate([src, dst])
    ids.sort()
    keep = np.empty(len(ids), bool)
    keep[0] = True
    np.not_equal(ids[1:], ids[:-1], out=keep[1:])
    labels = ids[keep].astype(np.int64)
    del ids, keep
    n = len(labels)
    if labels[0] == 0 and labels[-1] == n - 1:
        return n, None
    P.renumber_sorted(src, dst, count, labels)
    return n, labels


def _fast_metis(path, c, *, piece=None):
    """`_read_metis` by `_parse.metis_lines`.

    With ``piece`` = ``(line0, v0, header)``, ``c`` holds a piece of the file
    (`ir_graph.pieces`) whose first line is line ``line0 + 1`` and first vertex
    line vertex ``v0``; ``header`` is the file's ``(n, m, fmt, ncon)``, or None
    when the piece holds it. Returns ``(src, dst, weight or None, vertex lines,
    entries, forward, adj, xadj)`` of the piece, unchecked against the file's totals.
    """
    st = _state()
    none_i, none_f = np.empty(0, np.int32), np.empty(0)
    if piece is not None:
        st[P.LINE] = piece[0]
    if piece is None or piece[2] is None:
        status = _run(P.metis_lines, c, st, 0, False, False, False, 1, none_i, np.zeros(1, np.int64),
                      none_f, none_i, none_i, none_f, P.POW10, c.scratch)
        if status == P.NEED:
            raise GraphFormatError(_metis_empty(path))
        k, header = int(st[P.EVLINE]), c.line(st)
        n, m, fmt, ncon = _metis_header(path, k, header)
        st[P.MAXLEN] = _metis_line_limit(path, k, header)
        _consume(st)
    else:
        n, m, fmt, ncon = piece[2]
        st[P.VERTEX] = st[P.BASE] = piece[1]
        st[P.MAXLEN] = _metis_bound(n, m, ncon)
    st[P.PHASE] = 1
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    idt = index_dtype(max(n, m))
    adj = _Array(path, idt, _capacity(c, 2 * m))
    cap = _capacity(c, m)
    src, dst, w = _Array(path, idt, cap), _Array(path, idt, cap), _Array(path, np.float64, cap if has_ew else 1)
    lines = _capacity(c, n + 2)
    xadj, vw = _Array(path, np.int64, lines), _Array(path, np.float64, lines if has_vw else 1)
    bad = None
    while True:
        status = _run(P.metis_lines, c, st, min(n, 2**62), has_size, has_vw, has_ew, min(ncon, 2**62),
                      adj.a, xadj.a, vw.a, src.a, dst.a, w.a, P.POW10, c.scratch)
        if status == P.NEED:
            break
        if status == P.FULL:
            _grow(st[P.REQ_E], adj)
            _grow(st[P.REQ_F], src, dst, *([w] if has_ew else []))
            _grow(st[P.REQ_V], xadj, *([vw] if has_vw else []))
            continue
        k = int(st[P.EVLINE])
        if st[P.KIND] == P.K_EXTRA:
            raise GraphFormatError(_metis_extra(path, k, n))
        bad = (k, c.line(st), int(st[P.VERTEX]))  # K_BAD: count the other vertex lines
        st[P.LEVEL] = 1
        _consume(st)
        st[P.VERTEX] += 1
    found = int(st[P.VERTEX])
    if found < n and piece is None:
        raise GraphFormatError(_metis_few(path, n, found))
    if bad:
        k, ln, u = bad
        _reraise(_metis_vertex, path, k, ln, u, n, has_size, has_vw, has_ew, ncon)
    entries, f = int(st[P.COUNT]), int(st[P.FWD])
    if piece is not None:
        lines = found - int(st[P.BASE])
        return (src.done(f), dst.done(f), w.done(f) if has_ew else None, lines, entries, f,
                adj.done(entries), xadj.done(lines + 1))
    if entries != 2 * m:
        raise GraphFormatError(_metis_count(path, m, entries))
    if not P.metis_symmetric(adj.a, xadj.a, n):
        raise GraphFormatError(_metis_asymmetric(path))
    del adj, xadj
    return Graph(n=n, src=src.done(f), dst=dst.done(f), weight=w.done(f) if has_ew else np.ones(f),
                 directed=False, node_weight=vw.done(n) if has_vw else None, meta={"metis_fmt": fmt})


def _entry_lines(c, st, call, arrays):
    """Run a body-line kernel (Matrix Market entries, LG edges) to the end of the file.

    ``call()`` gives ``(kernel, *args)`` with the arrays as they are now
    (they move when they grow); ``arrays`` grow together on `FULL`. After the
    first bad line (a `K_BAD` event) the other lines are only counted in
    ``st[BODY]``. Returns ``(line number, text)`` of that bad line, or None.
    """
    bad = None
    while True:
        kernel, *args = call()
        status = _run(kernel, c, st, *args)
        del args  # views of the arrays: a memory map cannot grow while they live
        if status == P.NEED:
            return bad
        if status == P.FULL:
            _grow(st[P.REQ_E], *arrays)
            continue
        bad = (int(st[P.EVLINE]), c.line(st))
        st[P.LEVEL] = 1
        _consume(st)
        st[P.BODY] += 1


def _fast_mtx(path, c):
    """`_read_mtx` by `_parse.mtx_lines`."""
    st = _state()
    none_i, none_f = np.empty(0, np.int32), np.empty(0)
    status = _run(P.mtx_lines, c, st, 0, 2, none_i, none_i, none_f, P.POW10, c.scratch)
    field_, symmetry = _mtx_banner(path, c.line(st) if status == P.EVENT else None)
    _consume(st)
    st[P.PHASE] = 1
    own = False
    while True:
        status = _run(P.mtx_lines, c, st, 0, 2, none_i, none_i, none_f, P.POW10, c.scratch)
        if status != P.EVENT or st[P.KIND] != P.K_VCUT:
            break
        own = True
        _consume(st)
    if status == P.NEED:
        raise GraphFormatError(_mtx_no_size(path))
    rows, nnz = _mtx_size(path, int(st[P.EVLINE]), c.line(st))
    _consume(st)
    st[P.PHASE] = 2
    need = 2 if field_ == "pattern" else 3
    idt = index_dtype(max(rows, nnz))
    cap = _capacity(c, nnz)
    src, dst = _Array(path, idt, cap), _Array(path, idt, cap)
    w = _Array(path, np.float64, cap if need == 3 else 1)
    bad = _entry_lines(c, st, lambda: (P.mtx_lines, rows, need, src.a, dst.a, w.a, P.POW10,
                                       c.scratch), [src, dst, *([w] if need == 3 else [])])
    found = int(st[P.BODY])
    if found != nnz:
        raise GraphFormatError(_mtx_count(path, nnz, found))
    if bad:
        _reraise(_mtx_entry, path, *bad, need, rows)
    count = int(st[P.COUNT])
    return Graph(n=rows, src=src.done(count), dst=dst.done(count),
                 weight=w.done(count) if need == 3 else np.ones(count),
                 directed=symmetry == "general", meta=_mtx_meta(field_, symmetry, own))


def _fast_lg(path, c):
    """`_read_lg` by `_parse.lg_lines`."""
    st = _state()
    none_i = np.empty(0, np.int32)
    if _run(P.lg_lines, c, st, 0, none_i, none_i) == P.NEED:
        raise GraphFormatError(_lg_empty(path))
    nv, ne, directed = _lg_header(path, int(st[P.EVLINE]), c.line(st))
    _consume(st)
    st[P.PHASE] = 1
    idt = index_dtype(max(nv, ne))
    cap = _capacity(c, ne)
    src, dst = _Array(path, idt, cap), _Array(path, idt, cap)
    bad = _entry_lines(c, st, lambda: (P.lg_lines, nv, src.a, dst.a), [src, dst])
    found = int(st[P.BODY])
    if found != ne:
        raise GraphFormatError(_lg_count(path, ne, found))
    if bad:
        _reraise(_lg_edge, path, *bad, nv)
    count = int(st[P.COUNT])
    return Graph(n=nv, src=src.done(count), dst=dst.done(count), weight=np.ones(count),
                 directed=directed)


# -- own format ------------------------------------------------------------------------
_OPTIONAL = ("node_sid", "node_opclass", "node_object", "node_depth", "node_weight", "edge_kind",
             "labels", "roi_starts")


#: dtype the arrays of a graph ``.npz`` that kernels read are given (after their
#: kind and values are checked); the other node attributes keep theirs.
_NPZ_DTYPES = {"weight": np.float64, "node_weight": np.float64, "node_object": np.int64,
               "roi_starts": np.int64}


def _read_npz(path):
    from vcut_base.arrays import spill, spill_directory

    check_input_file(path, "graph file", GraphFormatError)
    meta, arrays = read_versioned_npz(
        path, kind="graph", version=GRAPH_FORMAT_VERSION, error=GraphFormatError,
        remake="rebuild it with 'vcut graph'", required=("src", "dst", "weight"),
        optional=_OPTIONAL, mmap=spill_directory() is not None,  # --spill: mapped
    )
    info = meta.pop("graph", None)
    if not isinstance(info, dict) or not isinstance(info.get("n"), int) or \
            isinstance(info.get("n"), bool) or not isinstance(info.get("directed"), bool):
        raise GraphFormatError(
            f"{path}: meta 'graph' must be {{\"n\": node count, \"directed\": true|false}}, "
            f"got {info!r:.80}; rebuild the file with 'vcut graph'")
    meta.pop("format", None)
    meta.pop("format_version", None)
    n = info["n"]
    check_node_count(n, path)
    g = Graph(n=n, directed=info["directed"], meta=meta, **arrays).validate(path)
    # the kinds are checked: normalise the dtypes the kernels are compiled for
    idt = index_dtype(max(n, g.m))
    conv = {"src": idt, "dst": idt, **_NPZ_DTYPES}
    return Graph(n=n, directed=info["directed"], meta=meta,
                 **{k: spill(np.ascontiguousarray(a, dtype=conv.get(k, a.dtype)))
                    for k, a in arrays.items()})


def _write_npz(g, fh):
    arrays = {"src": g.src, "dst": g.dst, "weight": g.weight}
    for k in _OPTIONAL:
        if getattr(g, k) is not None:
            arrays[k] = getattr(g, k)
    meta = dict(g.meta, format="vcut-graph", format_version=GRAPH_FORMAT_VERSION,
                graph={"n": int(g.n), "directed": bool(g.directed)})
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(fh, **arrays)
    return {}


def write_graph(g, path, format=None):
    """Write ``g`` to ``path`` atomically; returns a dict of what the format changed.

    METIS holds a simple undirected graph with integer weights: parallel
    edges are merged (weights summed), self-loops dropped and weights rounded
    (at least 1); the returned dict counts each.
    """
    fmt = format or detect_format(path)
    if fmt == "lg":
        raise InputError("writing the LG format is not supported; use .graph, .edgelist, .mtx or .npz")
    writer = {"metis": _write_metis, "edgelist": _write_edgelist, "mtx": _write_mtx, "npz": _write_npz}[fmt]
    path = os.fspath(path)
    if path.endswith(".gz"):
        if fmt == "npz":
            raise InputError(f"{path}: .npz graphs are not gzipped; write {path[:-3]}")
        with atomic_output(path) as raw, gzip.GzipFile(fileobj=raw, mode="wb") as gz:
            text = io.TextIOWrapper(gz, encoding="utf-8")
            report = writer(g, text)
            text.flush()
            text.detach()
            return report
    with atomic_output(path, "wb" if fmt == "npz" else "w") as fh:
        return writer(g, fh)
