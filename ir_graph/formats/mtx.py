"""The Matrix Market format: its Python reader, its compiled reader and its writer.

Coordinate matrices only (``pattern``, ``real`` or ``integer``; ``general``
or ``symmetric``), square: row ``i``, column ``j`` is an edge ``i - 1 ->
j - 1``. vcut writes ``% vcut graph:`` after the banner; such a file is
read as written.
"""

import io

import numpy as np

from vcut_base.errors import GraphFormatError, excerpt

from ..graph import Graph, check_node_count, index_dtype
from . import line_protocol as P
from .chunks import (
    GrowingArray,
    capacity,
    consume,
    entry_lines,
    new_state,
    reraise,
    run_kernel,
)
from .line_kernels import mtx_lines
from .lines import parse_ints, parse_number, shown, text_lines
from .token_kernels import POW10

__all__ = ["read_mtx", "read_mtx_fast", "write_mtx"]


def read_mtx(path, text):
    lines = text_lines(text)
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


#: The comment vcut writes after a Matrix Market banner (`write_mtx`).
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
    return f"{path}: size line says {shown(nnz)} entries, found {found}"


def _mtx_size(path, sk, size):
    """``(rows, entries)`` of the size line ``size`` (line ``sk``) of a square matrix."""
    dims = parse_ints(path, sk, size.split(), size)
    if len(dims) != 3:
        raise GraphFormatError(f"{path}:{sk}: size line must be 'rows cols entries', found "
                               f"{excerpt(size)}")
    rows, cols, nnz = dims
    if rows != cols:
        raise GraphFormatError(f"{path}:{sk}: a {shown(rows)} x {shown(cols)} matrix is not "
                               "square, so it is not a graph")
    check_node_count(rows, f"{path}:{sk}")
    return rows, nnz


def _mtx_entry(path, k, ln, need, rows):
    """``(i, j, value)`` of entry line ``ln`` (line ``k``; value None for a pattern)."""
    tok = ln.split()
    if len(tok) != need:
        raise GraphFormatError(f"{path}:{k}: expected {need} values per entry, found {excerpt(ln)}")
    i, j = parse_ints(path, k, tok[:2], ln)
    if not (1 <= i <= rows and 1 <= j <= rows):
        raise GraphFormatError(f"{path}:{k}: entry ({shown(i)}, {shown(j)}) out of range "
                               f"1..{rows}")
    return i, j, parse_number(path, k, tok[2], "entry value", ln, 2) if need == 3 else None


def write_mtx(g, fh):
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


def read_mtx_fast(path, c):
    """`read_mtx` by `line_kernels.mtx_lines`."""
    st = new_state()
    none_i, none_f = np.empty(0, np.int32), np.empty(0)
    status = run_kernel(mtx_lines, c, st, 0, 2, none_i, none_i, none_f, POW10, c.scratch)
    field_, symmetry = _mtx_banner(path, c.line(st) if status == P.EVENT else None)
    consume(st)
    st[P.PHASE] = 1
    own = False
    while True:
        status = run_kernel(mtx_lines, c, st, 0, 2, none_i, none_i, none_f, POW10, c.scratch)
        if status != P.EVENT or st[P.KIND] != P.K_VCUT:
            break
        own = True
        consume(st)
    if status == P.NEED:
        raise GraphFormatError(_mtx_no_size(path))
    rows, nnz = _mtx_size(path, int(st[P.EVLINE]), c.line(st))
    consume(st)
    st[P.PHASE] = 2
    need = 2 if field_ == "pattern" else 3
    idt = index_dtype(max(rows, nnz))
    cap = capacity(c, nnz)
    src, dst = GrowingArray(path, idt, cap), GrowingArray(path, idt, cap)
    w = GrowingArray(path, np.float64, cap if need == 3 else 1)
    bad = entry_lines(c, st, lambda: (mtx_lines, rows, need, src.a, dst.a, w.a, POW10,
                                       c.scratch), [src, dst, *([w] if need == 3 else [])])
    found = int(st[P.BODY])
    if found != nnz:
        raise GraphFormatError(_mtx_count(path, nnz, found))
    if bad:
        reraise(_mtx_entry, path, *bad, need, rows)
    count = int(st[P.COUNT])
    return Graph(n=rows, src=src.done(count), dst=dst.done(count),
                 weight=w.done(count) if need == 3 else np.ones(count),
                 directed=symmetry == "general", meta=_mtx_meta(field_, symmetry, own))
