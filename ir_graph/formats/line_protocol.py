"""The calling convention of the text graph line kernels: statuses, state slots, event kinds.

`ir_graph.formats` reads a text graph in chunks into a ``uint8`` buffer and
hands each chunk to the kernel of its format (`edgelist_lines`,
`metis_lines`, `mtx_lines`, `lg_lines` of `ir_graph.formats.line_kernels`).
A kernel reads the complete lines of ``buf[st[POS]:filled]``, writes their
numbers straight into the output arrays and returns a status:

=================  ==============================================================
`NEED`             every complete line is read (``st[POS]`` is the first byte of
                   the incomplete last one): refill the buffer, or stop at the end
`FULL`             an output array is too short for the next line: grow the arrays
                   to the lengths in ``st[REQ_E]``, ``st[REQ_F]``, ``st[REQ_V]``
`EVENT`            a line Python must look at (a header, the first error of its
                   kind, ...): kind ``st[KIND]``, bytes ``buf[st[A]:st[B]]``
                   (without the line break), number ``st[EVLINE]``
`UNSUPPORTED`      a line with bytes the kernel does not split and strip exactly as
                   Python's ``str.splitlines``/``str.split`` would (non-ASCII): read
                   the file with the Python reader instead
`WIDEN`            edge lists: an id does not fit the id arrays' dtype
`LONG`             the line at ``st[POS]`` (number ``st[LINE] + 1``) is longer than
                   ``st[MAXLEN]`` bytes, complete or not: refuse the file
=================  ==============================================================

A line is not consumed when a kernel returns `FULL`, `EVENT`, `WIDEN` or `LONG`:
calling it again reads the same line (`ir_graph.formats.chunks.consume` skips
it). How the kernels split lines and read numbers:
`ir_graph.formats.token_kernels`. The constants here are plain integers,
which the kernels read as compile-time constants.
"""

__all__ = [
    "NEED", "FULL", "EVENT", "UNSUPPORTED", "WIDEN", "LONG", "POS", "LINE", "COUNT", "A", "B",
    "NEXT", "EVLINE", "KIND", "PHASE", "LEVEL", "REQ_E", "REQ_F", "REQ_V", "NCOL", "FIRST",
    "VERTEX", "FWD", "BODY", "STOP", "BASE", "MAXLEN", "NSLOTS", "NO_ERROR", "K_FIRST", "K_VCUT",
    "K_COLS", "K_MISMATCH", "K_IDS", "K_WEIGHT", "K_STOP", "K_HEADER", "K_BANNER", "K_BAD",
    "K_EXTRA",
]

# -- statuses ------------------------------------------------------------------------
NEED = 0
FULL = 1
EVENT = 2
UNSUPPORTED = 3
WIDEN = 4
LONG = 5

# -- slots of the state array ``st`` (int64) -------------------------------------------
POS = 0  # first unread byte of buf
LINE = 1  # lines read before POS
COUNT = 2  # entries written to the output arrays
A = 3  # event line: first byte
B = 4  # event line: end (before its line break)
NEXT = 5  # event line: first byte of the next line
EVLINE = 6  # event line: its number (1-based)
KIND = 7  # event kind (K_*)
PHASE = 8  # format-specific phase
LEVEL = 9  # lowest error class recorded (edge lists), 1 after a bad line (others); 99: none
REQ_E = 10  # FULL: entries the output arrays must hold
REQ_F = 11  # FULL (METIS): forward edges the edge arrays must hold
REQ_V = 12  # FULL (METIS): vertex slots the vertex arrays must hold
NCOL = 13  # edge lists: columns of the first edge line (0: none yet)
FIRST = 14  # edge lists: 1 while the first data line is still to come
VERTEX = 15  # METIS: vertex lines read
FWD = 16  # METIS: forward entries (u < v) written
BODY = 17  # Matrix Market / LG: entry lines read
STOP = 18  # edge lists: report (K_STOP) the line of this entry (-1: never)
BASE = 19  # METIS: the vertex of xadj[0] / vw[0] (a piece of the file: ir_graph.pieces)
MAXLEN = 20  # the longest line accepted, in bytes (without its line break): LONG beyond
NSLOTS = 21

NO_ERROR = 99

# -- event kinds -------------------------------------------------------------------
K_FIRST = 1  # edge list: the first data line (a column-name line?)
K_VCUT = 2  # edge list: a '# vcut graph:' comment; Matrix Market: '% vcut graph:' before the size
K_COLS = 3  # edge list: not 2 or 3 columns (class 1: raised at once)
K_MISMATCH = 4  # edge list: column count differs from the first edge line (class 3)
K_IDS = 5  # edge list: bad node id (class 4)
K_WEIGHT = 6  # edge list: bad weight (class 5)
K_STOP = 7  # edge list: the entry st[STOP]
K_HEADER = 8  # METIS / LG header, Matrix Market size line
K_BANNER = 9  # Matrix Market first line
K_BAD = 10  # METIS / Matrix Market / LG: first bad line
K_EXTRA = 11  # METIS: a vertex line beyond the header's count
