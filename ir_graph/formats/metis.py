"""The METIS graph format: its Python reader, its compiled reader and its writer.

METIS/Chaco: a header ``n m [fmt [ncon]]``, then one line of 1-based
neighbours per vertex (fmt digits: vertex sizes, vertex weights, edge
weights); undirected, every edge listed at both ends, no self-loops. A vertex
line may be `METIS_LINE_BYTES` per vertex (and vertex weight) the header
declares long (`MetisHead` finds the header among a file's first bytes).
The messages other modules raise for a METIS file in pieces (`vcut.outofcore`,
`ir_graph.pieces`) are the functions ``metis_*`` here.
"""

import io
import re

import numpy as np

from vcut_base.errors import QUOTE_CHARS, GraphFormatError, excerpt

from ..graph import Graph, check_node_count, index_dtype
from . import line_protocol as P
from .chunks import (
    GrowingArray,
    capacity,
    consume,
    grow,
    new_state,
    reraise,
    run_kernel,
)
from .line_kernels import metis_lines, metis_symmetric
from .lines import (
    MAX_LINE,
    METIS_LINE_BYTES,
    column_at,
    parse_ints,
    parse_number,
    shown,
    text_lines,
)
from .token_kernels import POW10

__all__ = ["read_metis", "read_metis_fast", "write_metis", "MetisHead", "metis_header",
           "metis_empty", "metis_few", "metis_count", "metis_asymmetric"]

#: Line ends of the kernels (`ir_graph.formats.token_kernels`): LF, CR, CR LF, VT, FF, FS, GS, RS.
_LINE_END = re.compile(rb"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e]")


def read_metis(path, text):
    lines = [(k, ln) for k, ln in text_lines(text) if not ln.startswith("%")]
    if not lines:
        raise GraphFormatError(metis_empty(path))
    hk, header = lines[0]
    n, m, fmt, ncon = metis_header(path, hk, header)
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    body = lines[1:]
    if len(body) < n:
        raise GraphFormatError(metis_few(path, n, len(body)))
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
        raise GraphFormatError(metis_count(path, m, len(u)))
    fwd = u < v
    a = np.sort(u[fwd] * n + v[fwd])
    b = np.sort(v[~fwd] * n + u[~fwd])
    if len(a) != len(b) or not np.array_equal(a, b):
        raise GraphFormatError(metis_asymmetric(path))
    w = np.array(ws, dtype=np.float64)[fwd] if has_ew else np.ones(int(fwd.sum()))
    idt = index_dtype(max(n, m))
    return Graph(n=n, src=u[fwd].astype(idt), dst=v[fwd].astype(idt), weight=w, directed=False,
                 node_weight=vw, meta={"metis_fmt": fmt})


def metis_empty(path):
    return f"{path}: empty file, expected a METIS header 'n m [fmt]'"


def metis_few(path, n, found):
    return f"{path}: header says {n} vertices, found {found} vertex lines"


def _metis_extra(path, k, n):
    return f"{path}:{k}: more vertex lines than the {n} the header gives"


def metis_count(path, m, entries):
    return (f"{path}: header says {shown(m)} edges, the neighbour lists hold {entries} entries "
            f"(expected {shown(2 * m)}: each edge is listed by both ends)")


def metis_asymmetric(path):
    return f"{path}: neighbour lists are not symmetric (u lists v but v does not list u)"


def metis_header(path, hk, header):
    """``(n, m, fmt, ncon)`` of the METIS header line ``header`` (line ``hk``)."""
    head = parse_ints(path, hk, header.split(), header)
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
        vweight = parse_number(path, k, tok[pos], "vertex weight", ln, pos)
        pos += ncon
    rest = tok[pos:]
    step = 2 if has_ew else 1
    if len(rest) % step:
        raise GraphFormatError(f"{path}:{k}: neighbour without its edge weight")
    nb = parse_ints(path, k, rest[0::step], ln, pos, step)
    long = len(ln) > QUOTE_CHARS
    for i, v in enumerate(nb):
        if v < 1 or v > n:
            where = column_at(ln, pos + i * step) if long else ""
            raise GraphFormatError(f"{path}:{k}: neighbour {shown(v)}{where} out of range 1..{n}")
        if v == u + 1:
            where = column_at(ln, pos + i * step) if long else ""
            raise GraphFormatError(f"{path}:{k}: vertex {u + 1} lists itself{where} (METIS has "
                                   "no self-loops)")
    ew = [parse_number(path, k, t, "edge weight", ln, pos + 2 * i + 1)
          for i, t in enumerate(rest[1::step])] if has_ew else []
    return nb, ew, vweight


class MetisHead:
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
        n, m, _, ncon = metis_header(path, k, header)
    except GraphFormatError:
        return MAX_LINE
    return _metis_bound(n, m, ncon)


def _metis_bound(n, m, ncon):
    """`_metis_line_limit` of the header values ``n m fmt ncon``: a vertex line lists at most
    ``min(n, m)`` neighbours and ``ncon`` vertex weights."""
    return max(MAX_LINE, METIS_LINE_BYTES * (min(n, m, 2**40) + min(ncon, 2**20) + 1))


def _merge_undirected(g):
    """Simple undirected view: parallel edges merged (weights summed), loops dropped."""
    a = np.minimum(g.src, g.dst).astype(np.int64)
    b = np.maximum(g.src, g.dst).astype(np.int64)
    keep = a != b
    keys = a[keep] * np.int64(max(g.n, 1)) + b[keep]
    uniq, inv = np.unique(keys, return_inverse=True)
    w = np.bincount(inv, weights=g.weight[keep], minlength=len(uniq))
    return uniq // max(g.n, 1), uniq % max(g.n, 1), w, int((~keep).sum()), int(keep.sum() - len(uniq))


def write_metis(g, fh):
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


def read_metis_fast(path, c, *, piece=None):
    """`read_metis` by `line_kernels.metis_lines`.

    With ``piece`` = ``(line0, v0, header)``, ``c`` holds a piece of the file
    (`ir_graph.pieces`) whose first line is line ``line0 + 1`` and first vertex
    line vertex ``v0``; ``header`` is the file's ``(n, m, fmt, ncon)``, or None
    when the piece holds it. Returns ``(src, dst, weight or None, vertex lines,
    entries, forward, adj, xadj)`` of the piece, unchecked against the file's totals.
    """
    st = new_state()
    none_i, none_f = np.empty(0, np.int32), np.empty(0)
    if piece is not None:
        st[P.LINE] = piece[0]
    if piece is None or piece[2] is None:
        status = run_kernel(metis_lines, c, st, 0, False, False, False, 1, none_i,
                            np.zeros(1, np.int64), none_f, none_i, none_i, none_f, POW10,
                            c.scratch)
        if status == P.NEED:
            raise GraphFormatError(metis_empty(path))
        k, header = int(st[P.EVLINE]), c.line(st)
        n, m, fmt, ncon = metis_header(path, k, header)
        st[P.MAXLEN] = _metis_line_limit(path, k, header)
        consume(st)
    else:
        n, m, fmt, ncon = piece[2]
        st[P.VERTEX] = st[P.BASE] = piece[1]
        st[P.MAXLEN] = _metis_bound(n, m, ncon)
    st[P.PHASE] = 1
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    idt = index_dtype(max(n, m))
    adj = GrowingArray(path, idt, capacity(c, 2 * m))
    cap = capacity(c, m)
    src, dst = GrowingArray(path, idt, cap), GrowingArray(path, idt, cap)
    w = GrowingArray(path, np.float64, cap if has_ew else 1)
    lines = capacity(c, n + 2)
    xadj = GrowingArray(path, np.int64, lines)
    vw = GrowingArray(path, np.float64, lines if has_vw else 1)
    bad = None
    while True:
        status = run_kernel(metis_lines, c, st, min(n, 2**62), has_size, has_vw, has_ew,
                            min(ncon, 2**62), adj.a, xadj.a, vw.a, src.a, dst.a, w.a, POW10,
                            c.scratch)
        if status == P.NEED:
            break
        if status == P.FULL:
            grow(st[P.REQ_E], adj)
            grow(st[P.REQ_F], src, dst, *([w] if has_ew else []))
            grow(st[P.REQ_V], xadj, *([vw] if has_vw else []))
            continue
        k = int(st[P.EVLINE])
        if st[P.KIND] == P.K_EXTRA:
            raise GraphFormatError(_metis_extra(path, k, n))
        bad = (k, c.line(st), int(st[P.VERTEX]))  # K_BAD: count the other vertex lines
        st[P.LEVEL] = 1
        consume(st)
        st[P.VERTEX] += 1
    found = int(st[P.VERTEX])
    if found < n and piece is None:
        raise GraphFormatError(metis_few(path, n, found))
    if bad:
        k, ln, u = bad
        reraise(_metis_vertex, path, k, ln, u, n, has_size, has_vw, has_ew, ncon)
    entries, f = int(st[P.COUNT]), int(st[P.FWD])
    if piece is not None:
        lines = found - int(st[P.BASE])
        return (src.done(f), dst.done(f), w.done(f) if has_ew else None, lines, entries, f,
                adj.done(entries), xadj.done(lines + 1))
    if entries != 2 * m:
        raise GraphFormatError(metis_count(path, m, entries))
    if not metis_symmetric(adj.a, xadj.a, n):
        raise GraphFormatError(metis_asymmetric(path))
    del adj, xadj
    return Graph(n=n, src=src.done(f), dst=dst.done(f), weight=w.done(f) if has_ew else np.ones(f),
                 directed=False, node_weight=vw.done(n) if has_vw else None, meta={"metis_fmt": fmt})
