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
the line and what is wrong; nothing is dropped silently (self-loops and
repeated edges are kept as given). Writers go through a temporary file.
"""

import gzip
import io
import json
import os
import re

import numpy as np

from frontend.atomic import atomic_output
from frontend.errors import GraphFormatError, InputError
from frontend.inputs import check_input_file, read_input
from frontend.npzfile import read_versioned_npz

from .graph import Graph, check_node_count, index_dtype

__all__ = ["read_graph", "write_graph", "detect_format", "FORMATS", "GRAPH_FORMAT_VERSION"]

GRAPH_FORMAT_VERSION = 1

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


def _open_text(path):
    data = read_input(os.fspath(path), "graph file", GraphFormatError)
    if b"\0" in data[:65536]:
        raise GraphFormatError(f"{path}: binary data where a text graph was expected")
    return data.decode("utf-8", errors="replace")


def read_graph(path, format=None):
    """Read a graph file (see the module docstring for formats).

    Parameters
    ----------
    path : str
    format : str, optional
        One of `FORMATS`; default: from the suffix.

    Returns
    -------
    Graph

    Raises
    ------
    InputError
        Missing file or unknown format.
    GraphFormatError
        Malformed content: names the file, the line and what is wrong.
    """
    path = os.fspath(path)
    fmt = format or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown graph format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "npz":
        return _read_npz(path)
    text = _open_text(path)
    reader = {"metis": _read_metis, "edgelist": _read_edgelist, "mtx": _read_mtx, "lg": _read_lg}[fmt]
    g = reader(path, text)
    g.meta.setdefault("source", os.path.abspath(path))
    g.meta.setdefault("format", fmt)
    # the first vertex id of the format, for ids in what commands print and read
    g.meta.setdefault("id_base", 1 if fmt in ("metis", "mtx", "lg") else 0)
    return g.validate(path)


def _lines(text):
    """(line number, stripped line) for every line."""
    return [(k, ln.strip()) for k, ln in enumerate(text.splitlines(), 1)]


def _ints(path, lineno, tokens):
    try:
        return [int(t) for t in tokens]
    except ValueError:
        raise GraphFormatError(f"{path}:{lineno}: expected integers, found {' '.join(tokens)!r}") from None


def _number(path, lineno, tok, what):
    try:
        v = float(tok)
    except ValueError:
        raise GraphFormatError(f"{path}:{lineno}: {what} {tok!r} is not a number") from None
    if not np.isfinite(v):
        raise GraphFormatError(f"{path}:{lineno}: {what} {tok} is not a finite number")
    if v < 0:
        raise GraphFormatError(f"{path}:{lineno}: {what} {tok} is negative")
    return v


# -- METIS --------------------------------------------------------------------
def _read_metis(path, text):
    lines = [(k, ln) for k, ln in _lines(text) if not ln.startswith("%")]
    if not lines:
        raise GraphFormatError(f"{path}: empty file, expected a METIS header 'n m [fmt]'")
    hk, header = lines[0]
    head = _ints(path, hk, header.split())
    if len(head) < 2:
        raise GraphFormatError(f"{path}:{hk}: METIS header needs at least 'n m', found {header!r}")
    n, m = head[0], head[1]
    fmt = f"{head[2]:03d}" if len(head) > 2 else "000"
    ncon = head[3] if len(head) > 3 else 1
    if n < 0 or m < 0 or ncon < 1 or len(fmt) != 3 or set(fmt) - {"0", "1"}:
        raise GraphFormatError(f"{path}:{hk}: invalid METIS header {header!r}")
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    body = lines[1:]
    if len(body) < n:
        raise GraphFormatError(f"{path}: header says {n} vertices, found {len(body)} vertex lines")
    extra = [k for k, ln in body[n:] if ln]
    if extra:
        raise GraphFormatError(f"{path}:{extra[0]}: more vertex lines than the {n} the header gives")
    us, vs, ws = [], [], []
    vw = np.ones(n, dtype=np.float64) if has_vw else None
    step = 2 if has_ew else 1
    for u, (k, ln) in enumerate(body[:n]):
        tok = ln.split()
        pos = 0
        if has_size:
            pos += 1
        if has_vw:
            if len(tok) < pos + ncon:
                raise GraphFormatError(f"{path}:{k}: missing vertex weight")
            vw[u] = _number(path, k, tok[pos], "vertex weight")
            pos += ncon
        rest = tok[pos:]
        if len(rest) % step:
            raise GraphFormatError(f"{path}:{k}: neighbour without its edge weight")
        nb = _ints(path, k, rest[0::step])
        for v in nb:
            if v < 1 or v > n:
                raise GraphFormatError(f"{path}:{k}: neighbour {v} out of range 1..{n}")
            if v == u + 1:
                raise GraphFormatError(f"{path}:{k}: vertex {u + 1} lists itself (METIS has no self-loops)")
        us.extend([u] * len(nb))
        vs.extend(v - 1 for v in nb)
        if has_ew:
            ws.extend(_number(path, k, t, "edge weight") for t in rest[1::step])
    u = np.array(us, dtype=np.int64)
    v = np.array(vs, dtype=np.int64)
    if len(u) != 2 * m:
        raise GraphFormatError(
            f"{path}: header says {m} edges, the neighbour lists hold {len(u)} entries "
            f"(expected {2 * m}: each edge is listed by both ends)"
        )
    fwd = u < v
    a = np.sort(u[fwd] * n + v[fwd])
    b = np.sort(v[~fwd] * n + u[~fwd])
    if len(a) != len(b) or not np.array_equal(a, b):
        raise GraphFormatError(f"{path}: neighbour lists are not symmetric (u lists v but v does not list u)")
    w = np.array(ws, dtype=np.float64)[fwd] if has_ew else np.ones(int(fwd.sum()))
    idt = index_dtype(max(n, m))
    return Graph(n=n, src=u[fwd].astype(idt), dst=v[fwd].astype(idt), weight=w, directed=False,
                 node_weight=vw, meta={"metis_fmt": fmt})


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
            m = _VCUT_HEADER.match(ln)
            if m:
                declared = int(m.group(1))
                check_node_count(declared, f"{path}:{k}")
                directed = m.group(2) == "directed"
            continue
        tok = ln.split()
        if first_data and not any(_is_number(t) for t in tok):
            header = ln  # a column-name line (SNAP ca-HepPh has one without '#')
            first_data = False
            continue
        first_data = False
        if len(tok) not in (2, 3):
            raise GraphFormatError(f"{path}:{k}: expected 'u v' or 'u v weight', found {ln!r}")
        rows.append((k, tok))
    if not rows:
        raise GraphFormatError(f"{path}: no edges found")
    ncol = len(rows[0][1])
    for k, tok in rows:
        if len(tok) != ncol:
            raise GraphFormatError(f"{path}:{k}: {len(tok)} columns where the first edge line has {ncol}")
    ids = np.empty((len(rows), 2), dtype=np.int64)
    for r, (k, tok) in enumerate(rows):
        try:
            ids[r, 0] = int(tok[0])
            ids[r, 1] = int(tok[1])
        except ValueError:
            raise GraphFormatError(f"{path}:{k}: node ids must be integers, found {tok[0]!r} {tok[1]!r}") from None
        except OverflowError:
            raise GraphFormatError(f"{path}:{k}: node id in {' '.join(tok[:2])!r} is larger than "
                                   f"{2**63 - 1}, the largest id vcut reads") from None
        if ids[r, 0] < 0 or ids[r, 1] < 0:
            raise GraphFormatError(f"{path}:{k}: negative node id in {' '.join(tok[:2])!r}")
    if ncol == 3:
        w = np.array([_number(path, k, tok[2], "edge weight") for k, tok in rows], dtype=np.float64)
    else:
        w = np.ones(len(rows), dtype=np.float64)
    if declared is not None:
        # written by vcut: ids are 0..n-1 already, isolated nodes included
        if ids.max() >= declared:
            r = int(np.flatnonzero((ids >= declared).any(axis=1))[0])
            raise GraphFormatError(
                f"{path}:{rows[r][0]}: node id {int(ids[r].max())} out of range 0..{declared - 1} "
                "(the header declares {declared} nodes)".replace("{declared}", str(declared))
            )
        n, labels, inv = declared, None, ids
    else:
        uniq, inv = np.unique(ids.ravel(), return_inverse=True)
        n = len(uniq)
        labels = None if np.array_equal(uniq, np.arange(n)) else uniq
        inv = inv.reshape(-1, 2)
    idt = index_dtype(max(n, len(rows)))
    meta = {"header": header} if header else {}
    return Graph(n=n, src=inv[:, 0].astype(idt), dst=inv[:, 1].astype(idt), weight=w,
                 directed=directed, labels=labels, meta=meta)


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
    if not lines or not lines[0][1].lower().startswith("%%matrixmarket"):
        raise GraphFormatError(f"{path}:1: missing '%%MatrixMarket matrix coordinate ...' banner")
    banner = lines[0][1].lower().split()
    if len(banner) < 5 or banner[1] != "matrix" or banner[2] != "coordinate":
        raise GraphFormatError(f"{path}:1: only 'matrix coordinate' Matrix Market files are graphs, found {lines[0][1]!r}")
    field_, symmetry = banner[3], banner[4]
    if field_ not in ("pattern", "real", "integer"):
        raise GraphFormatError(f"{path}:1: unsupported field {field_!r} (pattern, real or integer)")
    if symmetry not in ("general", "symmetric"):
        raise GraphFormatError(f"{path}:1: unsupported symmetry {symmetry!r} (general or symmetric)")
    body = [(k, ln) for k, ln in lines[1:] if ln and not ln.startswith("%")]
    if not body:
        raise GraphFormatError(f"{path}: missing the 'rows cols entries' size line")
    sk, size = body[0]
    dims = _ints(path, sk, size.split())
    if len(dims) != 3:
        raise GraphFormatError(f"{path}:{sk}: size line must be 'rows cols entries', found {size!r}")
    rows, cols, nnz = dims
    if rows != cols:
        raise GraphFormatError(f"{path}:{sk}: a {rows} x {cols} matrix is not square, so it is not a graph")
    check_node_count(rows, f"{path}:{sk}")
    entries = body[1:]
    if len(entries) != nnz:
        raise GraphFormatError(f"{path}: size line says {nnz} entries, found {len(entries)}")
    need = 2 if field_ == "pattern" else 3
    src = np.empty(nnz, dtype=np.int64)
    dst = np.empty(nnz, dtype=np.int64)
    w = np.ones(nnz, dtype=np.float64)
    for r, (k, ln) in enumerate(entries):
        tok = ln.split()
        if len(tok) != need:
            raise GraphFormatError(f"{path}:{k}: expected {need} values per entry, found {ln!r}")
        i, j = _ints(path, k, tok[:2])
        if not (1 <= i <= rows and 1 <= j <= cols):
            raise GraphFormatError(f"{path}:{k}: entry ({i}, {j}) out of range 1..{rows}")
        src[r], dst[r] = i - 1, j - 1
        if need == 3:
            w[r] = _number(path, k, tok[2], "entry value")
    idt = index_dtype(max(rows, nnz))
    return Graph(n=rows, src=src.astype(idt), dst=dst.astype(idt), weight=w,
                 directed=symmetry == "general", meta={"mtx": f"{field_} {symmetry}"})


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
        raise GraphFormatError(f"{path}: empty file, expected an 'nv,ne,d|u,...' header")
    hk, header = lines[0]
    parts = header.split(",")
    if len(parts) < 3 or parts[2] not in ("d", "u"):
        raise GraphFormatError(f"{path}:{hk}: LG header must be 'nv,ne,d|u,...', found {header!r}")
    nv, ne = _ints(path, hk, parts[:2])
    check_node_count(nv, f"{path}:{hk}")
    body = lines[1:]
    if len(body) != ne:
        raise GraphFormatError(f"{path}: header says {ne} edges, found {len(body)}")
    src = np.empty(ne, dtype=np.int64)
    dst = np.empty(ne, dtype=np.int64)
    for r, (k, ln) in enumerate(body):
        tok = ln.split(",")
        if len(tok) != 2:
            raise GraphFormatError(f"{path}:{k}: expected 'src,dst', found {ln!r}")
        a, b = _ints(path, k, tok)
        if not (1 <= a <= nv and 1 <= b <= nv):
            raise GraphFormatError(f"{path}:{k}: edge {a},{b} out of range 1..{nv}")
        src[r], dst[r] = a - 1, b - 1
    idt = index_dtype(max(nv, ne))
    return Graph(n=nv, src=src.astype(idt), dst=dst.astype(idt), weight=np.ones(ne),
                 directed=parts[2] == "d")


# -- own format ------------------------------------------------------------------------
_OPTIONAL = ("node_sid", "node_opclass", "node_object", "node_weight", "edge_kind", "labels")


#: dtype the arrays of a graph ``.npz`` that kernels read are given (after their
#: kind and values are checked); the other node attributes keep theirs.
_NPZ_DTYPES = {"weight": np.float64, "node_weight": np.float64, "node_object": np.int64}


def _read_npz(path):
    check_input_file(path, "graph file", GraphFormatError)
    meta, arrays = read_versioned_npz(
        path, kind="graph", version=GRAPH_FORMAT_VERSION, error=GraphFormatError,
        remake="rebuild it with 'vcut graph'", required=("src", "dst", "weight"),
        optional=_OPTIONAL,
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
                 **{k: np.ascontiguousarray(a, dtype=conv.get(k, a.dtype)) for k, a in arrays.items()})


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
