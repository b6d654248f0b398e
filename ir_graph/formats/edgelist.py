"""The edge-list format (SNAP text): its Python reader, its compiled reader and its writer.

``u v [w]`` per line; ``#``/``%`` comments; a first line of column names (no
number among its tokens) is skipped. Ids are renumbered to ``0..n-1`` in
increasing order when they are not already (the originals in ``labels``),
except in files vcut wrote, whose ``# vcut graph: N nodes`` header keeps ids
and isolated nodes.
"""

import io
import re

import numpy as np

from vcut_base.errors import GraphFormatError, InputTooLarge, excerpt
from vcut_base.memory import check_memory

from ..graph import Graph, check_node_count, index_dtype
from . import line_protocol as P
from .chunks import (
    Chunks,
    GrowingArray,
    Unsupported,
    capacity,
    consume,
    grow,
    new_state,
    reraise,
    run_kernel,
)
from .line_kernels import edgelist_lines
from .lines import parse_number, text_lines
from .renumber_kernels import first_at_least, renumber_dense, renumber_sorted
from .token_kernels import POW10

__all__ = ["read_edgelist", "read_edgelist_fast", "write_edgelist", "edgelist_empty"]


_VCUT_HEADER = re.compile(r"^# vcut graph: (\d+) nodes, \d+ edges, (directed|undirected)")


def read_edgelist(path, text):
    rows = []
    header = None
    declared = None
    directed = False
    first_data = True
    for k, ln in text_lines(text):
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
        raise GraphFormatError(edgelist_empty(path))
    ncol = len(rows[0][1])
    for k, tok in rows:
        if len(tok) != ncol:
            raise GraphFormatError(_edgelist_mismatch(path, k, len(tok), ncol))
    ids = np.empty((len(rows), 2), dtype=np.int64)
    for r, (k, tok) in enumerate(rows):
        ids[r] = _edgelist_ids(path, k, tok)
    if ncol == 3:
        w = np.array([parse_number(path, k, tok[2], "edge weight") for k, tok in rows], dtype=np.float64)
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


def edgelist_empty(path):
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


def write_edgelist(g, fh):
    out = io.StringIO()
    out.write(f"# vcut graph: {g.n} nodes, {g.m} edges, {'directed' if g.directed else 'undirected'}\n")
    out.write("# source target weight (0-based node ids")
    out.write(", execution order)\n" if g.meta.get("kind") == "ir" else ")\n")
    for s, d, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()):
        out.write(f"{s} {d} {w:.17g}\n")
    fh.write(out.getvalue())
    return {}


#: Edge-list ids are stored as int32 until one exceeds this (then int64).
_INT32_IDS = 2**31 - 1


def read_edgelist_fast(path, c, stop=-1, *, piece=None):
    """`read_edgelist` by `line_kernels.edgelist_lines`.

    With ``stop`` >= 0, returns the line number of edge ``stop`` instead
    (the file was read once already without errors). With ``piece`` = ``(first,
    line0)`` ``c`` holds a piece of the file (`ir_graph.pieces`) whose first
    line is line ``line0 + 1``, the file's first line when ``first``; the
    piece's edges are returned as read: ``(src, dst, weight or None, columns,
    declared node count or None, directed)``, ids not renumbered.
    """
    st = new_state()
    st[P.FIRST] = 1 if piece is None or piece[0] else 0
    st[P.LINE] = 0 if piece is None else piece[1]
    st[P.STOP] = stop
    cap = capacity(c)
    src, dst = GrowingArray(path, np.int32, cap), GrowingArray(path, np.int32, cap)
    w = GrowingArray(path, np.float64, 1)
    maxid = _INT32_IDS
    declared, directed, header = None, False, None
    errors = {}
    while True:
        status = run_kernel(edgelist_lines, c, st, src.a, dst.a, w.a, maxid, POW10, c.scratch)
        if status == P.NEED:
            break
        if status == P.FULL:
            grow(st[P.REQ_E], src, dst)
            if st[P.NCOL] == 3:
                grow(len(src), w)
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
        consume(st)
    if stop >= 0:
        raise Unsupported("edge not found again")
    count, ncol = int(st[P.COUNT]), int(st[P.NCOL])
    if not ncol and piece is None:
        raise GraphFormatError(edgelist_empty(path))
    if P.K_MISMATCH in errors:
        k, ln = errors[P.K_MISMATCH]
        raise GraphFormatError(_edgelist_mismatch(path, k, len(ln.split()), ncol))
    if P.K_IDS in errors:
        reraise(_edgelist_ids, path, errors[P.K_IDS][0], errors[P.K_IDS][1].split())
    if P.K_WEIGHT in errors:
        k, ln = errors[P.K_WEIGHT]
        reraise(parse_number, path, k, ln.split()[2], "edge weight")
    src, dst = src.done(count), dst.done(count)
    if piece is not None:
        return src, dst, (w.done(count) if ncol == 3 else None), ncol, declared, directed
    w = w.done(count) if ncol == 3 else np.ones(count)
    if declared is not None:
        # written by vcut: ids are 0..n-1 already, isolated nodes included
        r = first_at_least(src, dst, count, declared)
        if r >= 0:
            node = int(max(src[r], dst[r]))
            del src, dst, w
            with Chunks(path, c.chunk) as again:
                k = read_edgelist_fast(path, again, stop=r)
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
    """`GrowingArray` ``x`` as int64 (same length, first ``count`` entries copied)."""
    out = GrowingArray(x.path, np.int64, len(x))
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
        n, labels = renumber_dense(src, dst, count, np.zeros(top + 1, rdt))
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
    renumber_sorted(src, dst, count, labels)
    return n, labels
