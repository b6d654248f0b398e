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
(`ir_graph.formats.line_kernels`) that write the numbers straight into the graph's
arrays, at 8-40 M edges/s and 18-29 bytes per edge. They decide every
line as the Python readers do (``read_metis`` of `ir_graph.formats.metis`,
``read_edgelist``, ...), which word the messages: a kernel reports the first bad line of each
kind and the Python reader's check of that one line raises. A file with
bytes the kernels do not split exactly as Python would (non-ASCII in a data
line) is read by the Python readers instead.

Here: `read_graph`, `write_graph` and the choice of format by name or suffix.
Each format's readers and writer: `ir_graph.formats.metis`, `~.edgelist`,
`~.mtx`, `~.lg`, `~.npz`. Shared by the text formats: `~.lines` (line bounds,
token checks, messages), `~.chunks` (the compiled readers' file in chunks,
growing arrays, kernel loop), the kernels (`~.line_kernels` over
`~.token_kernels`, in the calling convention of `~.line_protocol`;
`~.renumber_kernels`, `~.repeated_edge_kernels`).
"""

import gzip
import io
import os
from dataclasses import replace

import numpy as np

from vcut_base import arrays
from vcut_base.atomic import atomic_output
from vcut_base.errors import QUOTE_CHARS, GraphFormatError, InputError, InputTooLarge
from vcut_base.inputs import InputStream
from vcut_base.memory import check_memory

from ..graph import index_dtype
from .chunks import Chunks, Unsupported
from .edgelist import read_edgelist, read_edgelist_fast, write_edgelist
from .lg import read_lg, read_lg_fast
from .lines import (
    BINARY_PREFIX,
    MAX_LINE,
    METIS_LINE_BYTES,
    binary_message,
    long_line_message,
)
from .metis import MetisHead, read_metis, read_metis_fast, write_metis
from .mtx import read_mtx, read_mtx_fast, write_mtx
from .npz import GRAPH_FORMAT_VERSION, read_npz, write_npz
from .repeated_edge_kernels import compact_pairs, first_of_pairs
from .token_kernels import long_line

__all__ = ["read_graph", "write_graph", "detect_format", "FORMATS", "GRAPH_FORMAT_VERSION",
           "DUPLICATES", "MAX_LINE", "METIS_LINE_BYTES"]

#: What `read_graph` does with an edge that repeats an earlier one (module docstring).
DUPLICATES = ("first", "sum", "keep")

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


def _open_text(path, fmt):
    """The text of a graph file for the Python readers, decoded.

    Read in pieces with the checks of `vcut_base.inputs.InputStream` (a file
    past the size bound is refused first); a NUL among the first 64 KiB is
    binary data; a line longer than its bound (`MAX_LINE`; METIS vertex
    lines: `ir_graph.formats.metis.MetisHead`) is refused as soon as it is read, as the
    compiled readers refuse it.
    """
    chunks, total, run, limit = [], 0, 0, MAX_LINE
    binary = False
    header = MetisHead(path) if fmt == "metis" else None
    view = bytearray(_PY_CHUNK)
    with InputStream(path, "graph file", GraphFormatError) as stream:
        while True:
            got = stream.readinto(view)
            if not got:
                break
            chunk = bytes(view[:got])
            if total < BINARY_PREFIX and b"\0" in chunk[:BINARY_PREFIX - total]:
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
            at, run = long_line(arr[:split], run, limit) if split else (-1, run)
            if at < 0:
                if header is not None and header.limit is not None:
                    limit = header.limit
                at, run = long_line(arr[split:], run, limit)
                at = at + split if at >= 0 else at
            if at >= 0:
                data = b"".join(chunks)
                start = total - got + at - limit  # the long line's first byte
                k = len(data[:start].decode("utf-8", errors="replace").splitlines()) + 1
                raise GraphFormatError(long_line_message(
                    path, k, data[start:start + QUOTE_CHARS], limit, fmt))
    if binary:
        raise GraphFormatError(binary_message(path))
    return b"".join(chunks).decode("utf-8", errors="replace")


def _read_python(path, fmt):
    """Read a text graph with the Python readers (the whole text in memory)."""
    reader = {"metis": read_metis, "edgelist": read_edgelist, "mtx": read_mtx, "lg": read_lg}[fmt]
    return reader(path, _open_text(path, fmt))


def read_graph(path, format=None, *, duplicates="first", directed=None):
    """Read a graph file (see the module docstring for formats and repeated edges).

    Every value read is validated (`Graph.validate`); the text formats are
    read by compiled tokenizers, chunk by chunk. Any format may be gzipped
    (``.gz`` after its suffix).

    Parameters
    ----------
    path : str or path-like
        The file.
    format : str, optional
        One of `FORMATS` (``metis``, ``edgelist``, ``mtx``, ``lg``, ``npz``);
        default: from the suffix (``.graph``/``.metis``, ``.edgelist``/
        ``.edges``/``.txt``/``.el``, ``.mtx``, ``.lg``, ``.npz``).
    duplicates : {"first", "sum", "keep"}, default "first"
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
        Nodes ``0 .. n-1`` (``vertex_ids`` gives the file's own ids);
        ``meta`` holds ``source``, ``format``, ``id_base`` and
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

    See Also
    --------
    write_graph : the other way.

    Examples
    --------
    >>> from ir_graph import read_graph
    >>> g = read_graph("tests/data/power.graph.gz")
    >>> g.n, g.m, g.directed, g.meta["format"], g.meta["id_base"]
    (4941, 6594, False, 'metis', 1)

    An edge list that lists two edges both ways round:

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "square.txt")
    ...     _ = open(path, "w").write("0 1\\n1 0\\n1 2\\n2 3\\n3 0\\n0 3\\n")
    ...     g = read_graph(path)
    ...     summed = read_graph(path, duplicates="sum")
    ...     arcs = read_graph(path, directed=True)
    >>> g.m, g.meta["merged"]["reverse_pairs"]
    (4, 2)
    >>> summed.weight.tolist()
    [2.0, 1.0, 1.0, 2.0]
    >>> arcs.m, arcs.directed
    (6, True)
    >>> read_graph("tests/data/README.md")
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: cannot tell the graph format of tests/data/README.md: use a
    suffix among ... (optionally .gz) or give --format
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
        return read_npz(path)
    try:
        g = _read_fast(path, fmt)
    except Unsupported:  # a byte the kernels do not decide like Python (non-ASCII)
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
    repeats, reverse = first_of_pairs(g.src, g.dst, n, directed, first, rep, order, ptr, mark)
    del order, ptr, mark
    counts.update(repeated_edges=int(repeats), reverse_pairs=int(reverse))
    if repeats + reverse == 0:
        return replace(g, directed=directed, meta=meta)
    # in place: the reader's arrays are this graph's alone (a read-only map is copied)
    src, dst, w = (a if a.flags.writeable else a.copy() for a in (g.src, g.dst, g.weight))
    k = compact_pairs(first, rep, src, dst, w, duplicates == "sum")
    del rep, first
    if k <= g.m // 2:  # most of the file merged away: give that memory back
        src, dst, w = src[:k].copy(), dst[:k].copy(), w[:k].copy()
    return replace(g, src=arrays.spill(src[:k]), dst=arrays.spill(dst[:k]),
                   weight=arrays.spill(w[:k]), directed=directed, meta=meta)


#: Bytes read from a text graph at a time (decompressed): 4 MiB (16 and 64 MiB measured no
#: faster, and slower for gzip). Tests make it tiny to cut lines across chunks; a line longer
#: than the buffer grows it.
CHUNK_BYTES = 1 << 22


def _read_fast(path, fmt, chunk=None):
    """Read a text graph with the compiled line kernels, chunk by chunk.

    Same result and same errors as the Python readers (`_read_python`).

    Raises
    ------
    Unsupported
        A line holds bytes the kernels do not split as Python does (non-ASCII
        in a data line); nothing is returned, read the file with
        `_read_python`.
    """
    reader = {"metis": read_metis_fast, "edgelist": read_edgelist_fast, "mtx": read_mtx_fast,
              "lg": read_lg_fast}[fmt]
    with Chunks(path, CHUNK_BYTES if chunk is None else chunk) as c:
        try:
            return reader(path, c)
        except GraphFormatError:
            c.drain()  # an unreadable or oversized rest of the file is reported first
            raise


def write_graph(g, path, format=None):
    """Write ``g`` to ``path`` atomically; returns a dict of what the format changed.

    The file is written to a temporary file and renamed into place, so a
    failed write leaves no partial file. METIS holds a simple undirected
    graph with integer weights: parallel edges are merged (weights summed),
    self-loops dropped and weights rounded (at least 1); the returned dict
    counts each. Edge lists and Matrix Market files get vcut's ``vcut
    graph:`` header, so `read_graph` reads them back as written; ``.npz``
    keeps every array and attribute.

    Parameters
    ----------
    g : Graph
        The graph.
    path : str or path-like
        The file; a ``.gz`` suffix after the format's gzips it (not ``.npz``).
    format : str, optional
        ``metis``, ``edgelist``, ``mtx`` or ``npz``; default: from the suffix
        (as `read_graph`). LG is read only.

    Returns
    -------
    dict
        METIS: ``{"self_loops_dropped", "parallel_edges_merged",
        "weights_rounded"}``; the other formats change nothing: ``{}``.

    Raises
    ------
    InputError
        An unknown suffix or format, LG, or a gzipped ``.npz``.
    OutputError
        The path's directory does not exist or is not writable.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from ir_graph import Graph, read_graph, write_graph
    >>> g = Graph(n=3, src=np.array([0, 1, 0, 2]), dst=np.array([1, 0, 2, 2]),
    ...           weight=np.array([1.5, 2.0, 0.2, 1.0]))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     report = write_graph(g, os.path.join(tmp, "g.graph"))
    ...     metis = read_graph(os.path.join(tmp, "g.graph"))
    ...     same = write_graph(g, os.path.join(tmp, "g.edgelist.gz"))
    ...     back = read_graph(os.path.join(tmp, "g.edgelist.gz"))
    >>> report
    {'self_loops_dropped': 1, 'parallel_edges_merged': 1, 'weights_rounded': True}
    >>> metis.m, metis.weight.tolist()
    (2, [4.0, 1.0])
    >>> same, back.m, back.weight.tolist()
    ({}, 4, [1.5, 2.0, 0.2, 1.0])
    """
    fmt = format or detect_format(path)
    if fmt == "lg":
        raise InputError("writing the LG format is not supported; use .graph, .edgelist, .mtx or .npz")
    writer = {"metis": write_metis, "edgelist": write_edgelist, "mtx": write_mtx, "npz": write_npz}[fmt]
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
