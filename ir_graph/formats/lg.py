"""The LG format of Graphs.jl: its Python reader and its compiled reader (vcut does not write it).

A header ``nv,ne,d|u,...``, then ``src,dst`` per line (1-based).
"""

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
from .line_kernels import lg_lines
from .lines import parse_ints, shown, text_lines

__all__ = ["read_lg", "read_lg_fast"]


def read_lg(path, text):
    lines = [(k, ln) for k, ln in text_lines(text) if ln]
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
    return f"{path}: header says {shown(ne)} edges, found {found}"


def _lg_header(path, hk, header):
    """``(nv, ne, directed)`` of the LG header line ``header`` (line ``hk``)."""
    parts = header.split(",")
    if len(parts) < 3 or parts[2] not in ("d", "u"):
        raise GraphFormatError(f"{path}:{hk}: LG header must be 'nv,ne,d|u,...', found "
                               f"{excerpt(header)}")
    nv, ne = parse_ints(path, hk, parts[:2], header, sep=",")
    check_node_count(nv, f"{path}:{hk}")
    return nv, ne, parts[2] == "d"


def _lg_edge(path, k, ln, nv):
    """The 1-based ``(src, dst)`` of LG edge line ``ln`` (line ``k``)."""
    tok = ln.split(",")
    if len(tok) != 2:
        raise GraphFormatError(f"{path}:{k}: expected 'src,dst', found {excerpt(ln)}")
    a, b = parse_ints(path, k, tok, ln, sep=",")
    if not (1 <= a <= nv and 1 <= b <= nv):
        raise GraphFormatError(f"{path}:{k}: edge {shown(a)},{shown(b)} out of range 1..{nv}")
    return a, b


def read_lg_fast(path, c):
    """`read_lg` by `line_kernels.lg_lines`."""
    st = new_state()
    none_i = np.empty(0, np.int32)
    if run_kernel(lg_lines, c, st, 0, none_i, none_i) == P.NEED:
        raise GraphFormatError(_lg_empty(path))
    nv, ne, directed = _lg_header(path, int(st[P.EVLINE]), c.line(st))
    consume(st)
    st[P.PHASE] = 1
    idt = index_dtype(max(nv, ne))
    cap = capacity(c, ne)
    src, dst = GrowingArray(path, idt, cap), GrowingArray(path, idt, cap)
    bad = entry_lines(c, st, lambda: (lg_lines, nv, src.a, dst.a), [src, dst])
    found = int(st[P.BODY])
    if found != ne:
        raise GraphFormatError(_lg_count(path, ne, found))
    if bad:
        reraise(_lg_edge, path, *bad, nv)
    count = int(st[P.COUNT])
    return Graph(n=nv, src=src.done(count), dst=dst.done(count), weight=np.ones(count),
                 directed=directed)
