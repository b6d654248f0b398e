"""Numba kernels of the text graph readers: line tokenizers over raw bytes.

`ir_graph.formats` reads a text graph in chunks into a ``uint8`` buffer and
hands each chunk to the kernel of its format (`edgelist_lines`,
`metis_lines`, `mtx_lines`, `lg_lines`). A kernel reads the complete lines
of ``buf[st[POS]:filled]``, writes their numbers straight into the output
arrays and returns a status:

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
calling it again reads the same line (`consume` skips it). Lines follow
``str.splitlines`` (``\\n``, ``\\r\\n``, ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``
end a line) and are stripped and split as ``str.split`` does on ASCII (tab,
``\\x1f`` and space separate tokens). Integers follow Python's ``int()`` and
numbers Python's ``float()`` (ASCII digits, ``_`` between digits, ``inf``,
``nan``; decimal strings are converted exactly: by one exact multiplication
when the digits and the exponent are small, by libc's ``strtod``
otherwise), so that a line a kernel accepts is one the Python reader
accepts with the same values, and a line it flags is one the Python reader
refuses (which then words the message).
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from vcut_base.jitcache import helper, njit

__all__ = [
    "edgelist_lines",
    "metis_lines",
    "mtx_lines",
    "lg_lines",
    "metis_symmetric",
    "renumber_dense",
    "renumber_sorted",
    "first_at_least",
    "POW10",
    "NEED",
    "FULL",
    "EVENT",
    "UNSUPPORTED",
    "WIDEN",
    "LONG",
    "first_of_pairs",
    "compact_pairs",
    "long_line",
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

#: exact powers of ten 1e0..1e22 (the fast path of `_parse_float`)
POW10 = np.array([float(10**k) for k in range(23)])

_INT_MAX = 9223372036854775807


# -- libc strtod -------------------------------------------------------------------
@intrinsic
def _strtod(typingctx, buf, pos):
    """``strtod(&buf[pos], &end)`` of libc: (value, bytes consumed)."""
    sig = types.Tuple((types.float64, types.intp))(buf, pos)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        start = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        end = cgutils.alloca_once(builder, i8p)
        fnty = ir.FunctionType(ir.DoubleType(), [i8p, i8p.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "strtod")
        value = builder.call(fn, [start, end])
        used = builder.sub(builder.ptrtoint(builder.load(end), context.get_value_type(types.intp)),
                           builder.ptrtoint(start, context.get_value_type(types.intp)))
        return context.make_tuple(builder, signature.return_type, [value, used])

    return sig, codegen


# -- bytes -------------------------------------------------------------------------
#: `_find_line`: the line is longer than its bound
_TOO_LONG = -2


@njit(cache=True, inline="always")
def _find_line(buf, pos, filled, final, limit):
    """End of the line starting at ``pos``: (end, next line, non-ASCII seen).

    ``end`` is -1 when the line is not complete in ``buf[:filled]`` (or there
    is no line left at the end of the data), `_TOO_LONG` when its bytes so
    far, complete or not, are more than ``limit``.
    """
    e = pos
    hi = False
    while e < filled:
        c = buf[e]
        if c < 32:
            if c == 10 or c == 13 or c == 11 or c == 12 or c == 28 or c == 29 or c == 30:
                break
        elif c >= 128:
            hi = True
        e += 1
    if e - pos > limit:
        return _TOO_LONG, 0, hi
    if e == filled:
        if not final or e == pos:
            return -1, 0, hi
        return e, e, hi
    nxt = e + 1
    if buf[e] == 13:
        if nxt == filled:
            if not final:
                return -1, 0, hi
        elif buf[nxt] == 10:
            nxt += 1
    return e, nxt, hi


@helper
def _is_space(c):
    return c == 32 or c == 9 or c == 31


@helper
def _strip(buf, a, b):
    while a < b and _is_space(buf[a]):
        a += 1
    while b > a and _is_space(buf[b - 1]):
        b -= 1
    return a, b


@helper
def _unicode_break(buf, a, b):
    """Whether ``buf[a:b]`` holds U+0085, U+2028 or U+2029 in UTF-8 (line breaks to Python)."""
    for i in range(a + 1, b):
        c = buf[i]
        if c == 0x85 and buf[i - 1] == 0xC2:
            return True
        if (c == 0xA8 or c == 0xA9) and i >= a + 2 and buf[i - 1] == 0x80 and buf[i - 2] == 0xE2:
            return True
    return False


@helper
def _next_token(buf, i, b):
    """(start, end) of the first token of ``buf[i:b]``; start == b when none."""
    while i < b and _is_space(buf[i]):
        i += 1
    j = i
    while j < b and not _is_space(buf[j]):
        j += 1
    return i, j


@helper
def _is_digit(c):
    return 48 <= c <= 57


@helper
def _digit_run(buf, i, b):
    """(end, value) of the digits from ``i`` (value meaningful for at most 18 digits)."""
    v = 0
    j = i
    while j < b:
        c = buf[j]
        if c < 48 or c > 57:
            break
        v = v * 10 + (c - 48)
        j += 1
    return j, v


@helper
def _plain_decimal(buf, i, b, pow10):
    """(end, value) of a plain ``digits[.digits]`` number of at most 15 digits from ``i``.

    ``end`` is -1 for anything else (the caller checks what follows it). The
    value is exact: at most 15 digits over a power of ten up to 1e15, one
    correctly rounded division, as ``float()`` gives.
    """
    w = 0
    nd = 0
    fd = 0
    dot = False
    j = i
    while j < b:
        c = buf[j]
        if 48 <= c <= 57:
            w = w * 10 + (c - 48)
            nd += 1
            if dot:
                fd += 1
        elif c == 46 and not dot:
            dot = True
        else:
            break
        j += 1
    if nd == 0 or nd > 15:
        return -1, 0.0
    return j, float(w) / pow10[fd]


@helper
def _parse_int(buf, a, b):
    """Python ``int(buf[a:b])`` on ASCII: (status, value).

    status 0: ``value`` is the integer; 1: not an integer; 2: an integer
    beyond int64 (magnitude > 2**63 - 1).
    """
    i = a
    neg = False
    if i < b and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    if i >= b:
        return 1, 0
    v = 0
    big = False
    prev = False
    while i < b:
        c = buf[i]
        if _is_digit(c):
            d = c - 48
            if not big:
                if v > (_INT_MAX - d) // 10:
                    big = True
                else:
                    v = v * 10 + d
            prev = True
        elif c == 95 and prev and i + 1 < b and _is_digit(buf[i + 1]):
            prev = False
        else:
            return 1, 0
        i += 1
    if big:
        return 2, 0
    return 0, -v if neg else v


@helper
def _lower(c):
    return c | 32 if 65 <= c <= 90 else c


@helper
def _word(buf, a, b, w):
    """Whether ``buf[a:b]`` is the lower-case ASCII word ``w`` ignoring case."""
    if b - a != len(w):
        return False
    for k in range(len(w)):
        if _lower(buf[a + k]) != w[k]:
            return False
    return True


_INF = np.array([105, 110, 102], np.uint8)  # inf
_INFINITY = np.array([105, 110, 102, 105, 110, 105, 116, 121], np.uint8)  # infinity
_NAN = np.array([110, 97, 110], np.uint8)  # nan


@helper
def _digits(buf, i, b):
    """Skip a Python ``digitpart`` (digits, single ``_`` between digits) from ``i``.

    Returns the index after it (``i`` when there is none) or -1 when an
    underscore is misplaced.
    """
    j = i
    while j < b:
        c = buf[j]
        if _is_digit(c):
            j += 1
        elif c == 95 and j > i and _is_digit(buf[j - 1]) and j + 1 < b and _is_digit(buf[j + 1]):
            j += 1
        else:
            break
    return j


@njit(cache=True, inline="always")
def _parse_float(buf, a, b, pow10, scratch):
    """Python ``float(buf[a:b])`` on ASCII: (status, value).

    status 0: ``value`` is the number (inf or nan possibly); 1: not a
    number; 2: ``strtod`` did not read the whole token the syntax check
    accepted (not expected; the caller treats the line as unsupported).
    ``scratch`` is a uint8 work array for the NUL-terminated copy given to
    ``strtod`` (a longer one is made for a longer number).
    """
    i = a
    neg = False
    if i < b and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    if i >= b:
        return 1, 0.0
    c = _lower(buf[i])
    if c == 105 or c == 110:  # i, n
        if _word(buf, i, b, _INF) or _word(buf, i, b, _INFINITY):
            return 0, -np.inf if neg else np.inf
        if _word(buf, i, b, _NAN):
            return 0, np.nan
        return 1, 0.0
    # mantissa
    w = 0
    sd = 0  # significant digits
    fd = 0  # digits after the point
    j = _digits(buf, i, b)
    nint = j - i
    for k in range(i, j):
        if buf[k] != 95:
            d = int(buf[k]) - 48
            if sd > 0 or d != 0:
                sd += 1
                if sd <= 18:
                    w = w * 10 + d
    nfrac = 0
    if j < b and buf[j] == 46:  # '.'
        k0 = j + 1
        j = _digits(buf, k0, b)
        nfrac = j - k0
        for k in range(k0, j):
            if buf[k] != 95:
                d = int(buf[k]) - 48
                fd += 1
                if sd > 0 or d != 0:
                    sd += 1
                    if sd <= 18:
                        w = w * 10 + d
    if nint == 0 and nfrac == 0:
        return 1, 0.0
    e10 = 0
    if j < b and (buf[j] == 101 or buf[j] == 69):  # e, E
        j += 1
        eneg = False
        if j < b and (buf[j] == 43 or buf[j] == 45):
            eneg = buf[j] == 45
            j += 1
        k0 = j
        j = _digits(buf, k0, b)
        if j == k0:
            return 1, 0.0
        for k in range(k0, j):
            if buf[k] != 95 and e10 < 100000:
                e10 = e10 * 10 + int(buf[k]) - 48
        if eneg:
            e10 = -e10
    if j != b:
        return 1, 0.0
    if sd == 0:
        return 0, -0.0 if neg else 0.0
    if sd <= 15:
        e = e10 - fd
        if 0 <= e <= 22:
            v = float(w) * pow10[e]
            return 0, -v if neg else v
        if -22 <= e < 0:
            v = float(w) / pow10[-e]
            return 0, -v if neg else v
    return _exact(buf, a, b, scratch)


@njit(cache=True)
def _exact(buf, a, b, scratch):
    """libc's correctly rounded ``strtod`` of ``buf[a:b]`` without its underscores: (status, value)."""
    if len(scratch) <= b - a:
        scratch = np.empty(b - a + 1, np.uint8)
    n = 0
    for k in range(a, b):
        if buf[k] != 95:
            scratch[n] = buf[k]
            n += 1
    scratch[n] = 0
    v, used = _strtod(scratch, 0)
    if used != n:
        return 2, 0.0
    return 0, v


@njit(cache=True, inline="always")
def _number(buf, a, b, pow10, scratch):
    """A weight as the Python readers' ``_number`` takes it: (status, value).

    status 0: a finite, non-negative number; 1: refused (not a number,
    not finite, negative); 2: unsupported (see `_parse_float`).
    """
    s, v = _parse_float(buf, a, b, pow10, scratch)
    if s:
        return s, v
    if not np.isfinite(v) or v < 0:
        return 1, v
    return 0, v


@helper
def _event(st, kind, pos, a, b, nxt, line):
    st[POS] = pos
    st[LINE] = line
    st[KIND] = kind
    st[A] = a
    st[B] = b
    st[NEXT] = nxt
    st[EVLINE] = line + 1
    return EVENT


@helper
def _resume(st):
    """A line kernel's place and counters as `_park` left them, with its phase and
    error level: ``(pos, line, count, body, phase, level)``."""
    return st[POS], st[LINE], st[COUNT], st[BODY], st[PHASE], st[LEVEL]


@helper
def _park(st, pos, line, count, body):
    """Save a line kernel's place and counters in ``st``: where the next call
    resumes, or what Python reads after an event."""
    st[POS] = pos
    st[LINE] = line
    st[COUNT] = count
    st[BODY] = body


# -- edge list ---------------------------------------------------------------------
@njit(cache=True)
def edgelist_lines(buf, filled, final, st, src, dst, w, maxid, pow10, scratch):
    """Read the complete edge-list lines of ``buf[st[POS]:filled]``.

    Parameters
    ----------
    buf : uint8[:]
        Text; ``buf[:filled]`` holds data.
    filled : int
    final : bool
        Whether the data end at ``filled`` (a last line without a line break).
    st : int64[NSLOTS]
        State (slots above), updated in place.
    src, dst : int32[:] or int64[:]
        Node ids of the edge lines, as written (``st[COUNT]`` of them).
    w : float64[:]
        Weights (third column; length 0 until the first edge line has three).
    maxid : int
        Largest id ``src`` and ``dst`` hold (`WIDEN` beyond).
    pow10 : float64[23]
        `POW10`.
    scratch : uint8[:]
        Work array for numbers (length at least that of the longest line + 1).

    Returns
    -------
    int
        A status (module docstring). Events: `K_VCUT`, `K_FIRST` (``st[FIRST]``
        set), `K_COLS`, and the first line of each error class below
        ``st[LEVEL]``: `K_MISMATCH` (3), `K_IDS` (4), `K_WEIGHT` (5), which
        Python records by setting ``st[LEVEL]``; after one, lines are only
        checked for the classes before it and nothing more is written. With
        ``st[STOP] >= 0``, `K_STOP` at the line of that entry.
    """
    pos = st[POS]
    line = st[LINE]
    count = st[COUNT]
    ncol = st[NCOL]
    level = st[LEVEL]
    plain = level == NO_ERROR and st[FIRST] == 0
    stop = st[STOP]
    limit = st[MAXLEN]
    while True:
        if plain:
            # the common line in one pass: 'u v' or 'u v w', plain digits, space or tab
            # separated, ended by LF or CRLF in the buffer; anything else takes the full path
            i = pos
            while i < filled and (buf[i] == 32 or buf[i] == 9):
                i += 1
            j, v0 = _digit_run(buf, i, filled)
            if i < j <= i + 18 and j < filled and (buf[j] == 32 or buf[j] == 9):
                while j < filled and (buf[j] == 32 or buf[j] == 9):
                    j += 1
                k, v1 = _digit_run(buf, j, filled)
                if j < k <= j + 18:
                    nt = 2
                    x = 1.0
                    t = k
                    while t < filled and (buf[t] == 32 or buf[t] == 9):
                        t += 1
                    if k < t < filled and (48 <= buf[t] <= 57 or buf[t] == 46):
                        t, x = _plain_decimal(buf, t, filled, pow10)
                        nt = 3
                        while 0 <= t < filled and (buf[t] == 32 or buf[t] == 9):
                            t += 1
                    nxt = -1
                    if 0 <= t < filled:
                        if buf[t] == 10:
                            nxt = t + 1
                        elif buf[t] == 13 and t + 1 < filled and buf[t + 1] == 10:
                            nxt = t + 2
                    if (nxt > 0 and t - pos <= limit and (ncol == nt or ncol == 0)
                            and v0 <= maxid and v1 <= maxid
                            and count < len(src) and (nt == 2 or count < len(w)) and count != stop):
                        if ncol == 0:
                            ncol = nt
                            st[NCOL] = nt
                        src[count] = v0
                        dst[count] = v1
                        if nt == 3:
                            w[count] = x
                        count += 1
                        pos = nxt
                        line += 1
                        continue
        e, nxt, hi = _find_line(buf, pos, filled, final, limit)
        if e < 0:
            if e == _TOO_LONG:
                st[POS] = pos
                st[LINE] = line
                st[COUNT] = count
                return LONG
            break
        a, b = _strip(buf, pos, e)
        if a == b:
            if hi:
                st[POS] = pos
                st[LINE] = line
                return UNSUPPORTED
            pos = nxt
            line += 1
            continue
        c = buf[a]
        if c == 35 or c == 37:  # '#', '%'
            if hi and _unicode_break(buf, a, b):
                st[POS] = pos
                st[LINE] = line
                return UNSUPPORTED
            # '# vcut graph: '
            if (b - a >= 14 and buf[a + 1] == 32 and buf[a + 2] == 118 and buf[a + 3] == 99
                    and buf[a + 4] == 117 and buf[a + 5] == 116 and buf[a + 6] == 32
                    and buf[a + 7] == 103 and buf[a + 8] == 114 and buf[a + 9] == 97
                    and buf[a + 10] == 112 and buf[a + 11] == 104 and buf[a + 12] == 58
                    and buf[a + 13] == 32 and c == 35):
                st[COUNT] = count
                return _event(st, K_VCUT, pos, a, b, nxt, line)
            pos = nxt
            line += 1
            continue
        if hi:
            st[POS] = pos
            st[LINE] = line
            st[COUNT] = count
            return UNSUPPORTED
        if st[FIRST]:
            st[COUNT] = count
            return _event(st, K_FIRST, pos, a, b, nxt, line)
        t0a, t0b = _next_token(buf, a, b)
        t1a, t1b = _next_token(buf, t0b, b)
        t2a, t2b = _next_token(buf, t1b, b)
        t3a, t3b = _next_token(buf, t2b, b)
        nt = 1 if t1a == b else (2 if t2a == b else (3 if t3a == b else 4))
        if nt != 2 and nt != 3:
            st[COUNT] = count
            return _event(st, K_COLS, pos, a, b, nxt, line)
        if level > 3:
            if ncol == 0:
                ncol = nt
                st[NCOL] = ncol
            if nt != ncol:
                st[COUNT] = count
                return _event(st, K_MISMATCH, pos, a, b, nxt, line)
        if level > 4:
            s0, v0 = _parse_int(buf, t0a, t0b)
            s1, v1 = _parse_int(buf, t1a, t1b)
            if s0 != 0 or s1 != 0 or v0 < 0 or v1 < 0:
                st[COUNT] = count
                return _event(st, K_IDS, pos, a, b, nxt, line)
            if level > 5:
                x = 1.0
                if nt == 3:
                    bad, x = _number(buf, t2a, t2b, pow10, scratch)
                    if bad == 2:
                        st[POS] = pos
                        st[LINE] = line
                        st[COUNT] = count
                        return UNSUPPORTED
                    if bad:
                        st[COUNT] = count
                        return _event(st, K_WEIGHT, pos, a, b, nxt, line)
                if v0 > maxid or v1 > maxid:
                    st[POS] = pos
                    st[LINE] = line
                    st[COUNT] = count
                    return WIDEN
                if count == stop:
                    st[COUNT] = count
                    return _event(st, K_STOP, pos, a, b, nxt, line)
                if count >= len(src) or (nt == 3 and count >= len(w)):
                    st[POS] = pos
                    st[LINE] = line
                    st[COUNT] = count
                    st[REQ_E] = count + 1
                    return FULL
                src[count] = v0
                dst[count] = v1
                if nt == 3:
                    w[count] = x
                count += 1
        pos = nxt
        line += 1
    st[POS] = pos
    st[LINE] = line
    st[COUNT] = count
    return NEED


# -- METIS -------------------------------------------------------------------------
@njit(cache=True)
def metis_lines(buf, filled, final, st, n, has_size, has_vw, has_ew, ncon, adj, xadj, vw,
                src, dst, w, pow10, scratch):
    """Read the complete METIS lines of ``buf[st[POS]:filled]``.

    Phase 0 (``st[PHASE]``) looks for the header (the first line not starting
    with ``%``: a `K_HEADER` event; Python sets phase 1 and the header's
    values). Phase 1 reads vertex lines (``st[VERTEX]`` so far; blank lines
    are vertices without neighbours, ``%`` lines comments) and, after ``n``
    of them, reports the first non-blank line as `K_EXTRA`. The first bad
    vertex line is a `K_BAD` event; with ``st[LEVEL]`` then set, vertex lines
    are only counted.

    Parameters
    ----------
    buf, filled, final, st, pow10, scratch
        As in `edgelist_lines`.
    n : int
        Vertices of the header (at most 2**62).
    has_size, has_vw, has_ew : bool
        The header's fmt digits.
    ncon : int
        Vertex weights per vertex (the first is read, the others skipped).
    adj : int32[:] or int64[:]
        Every neighbour entry, 0-based, in file order (``st[COUNT]``).
    xadj : int64[:]
        ``xadj[u + 1]``: entries of vertices 0..u (``xadj[0]`` is 0); with
        ``st[BASE]`` = b > 0, ``xadj[u - b + 1]`` (a piece starting at vertex b).
    vw : float64[:]
        Vertex weights (length 0 without), ``vw[u - st[BASE]]``.
    src, dst : like ``adj``
        The entries ``u -> v`` with ``u < v`` (``st[FWD]``), in file order.
    w : float64[:]
        Their edge weights (length 0 without).

    Returns
    -------
    int
        A status (module docstring).
    """
    pos = st[POS]
    line = st[LINE]
    cnt = st[COUNT]
    u = st[VERTEX]
    f = st[FWD]
    phase = st[PHASE]
    level = st[LEVEL]
    base = st[BASE]
    limit = st[MAXLEN]
    x = 1.0
    while True:
        e, nxt, hi = _find_line(buf, pos, filled, final, limit)
        if e < 0:
            if e == _TOO_LONG:
                st[POS] = pos
                st[LINE] = line
                st[COUNT] = cnt
                st[VERTEX] = u
                st[FWD] = f
                return LONG
            break
        a, b = _strip(buf, pos, e)
        if a < b and buf[a] == 37:  # '%'
            if hi and _unicode_break(buf, a, b):
                st[POS] = pos
                st[LINE] = line
                return UNSUPPORTED
            pos = nxt
            line += 1
            continue
        if hi:
            st[POS] = pos
            st[LINE] = line
            return UNSUPPORTED
        if phase == 0:
            return _event(st, K_HEADER, pos, a, b, nxt, line)
        if u >= n:
            if a < b:
                st[COUNT] = cnt
                st[VERTEX] = u
                st[FWD] = f
                return _event(st, K_EXTRA, pos, a, b, nxt, line)
            pos = nxt
            line += 1
            continue
        if level == NO_ERROR:
            bound = (b - a + 1) // 2
            if (cnt + bound > len(adj) or f + bound > len(src) or (has_ew and f + bound > len(w))
                    or u - base + 2 > len(xadj) or (has_vw and u - base + 1 > len(vw))):
                st[POS] = pos
                st[LINE] = line
                st[COUNT] = cnt
                st[VERTEX] = u
                st[FWD] = f
                st[REQ_E] = cnt + bound
                st[REQ_F] = f + bound
                st[REQ_V] = u - base + 2
                return FULL
            bad = 0
            i = a
            if has_size:
                ta, i = _next_token(buf, i, b)
            if has_vw:
                ta, tb = _next_token(buf, i, b)
                if ta == b:
                    bad = 1
                else:
                    bad, x = _number(buf, ta, tb, pow10, scratch)
                    if bad == 0:
                        vw[u - base] = x
                    i = tb
                    for _ in range(ncon - 1):
                        ta, i = _next_token(buf, i, b)
                        if ta == b:
                            bad = 1
                            break
            start = cnt
            fstart = f
            while bad == 0:
                while i < b and _is_space(buf[i]):
                    i += 1
                if i == b:
                    break
                j, v = _digit_run(buf, i, b)
                if not (i < j <= i + 18 and (j == b or _is_space(buf[j]))):  # not plain digits
                    ta, j = _next_token(buf, i, b)
                    s, v = _parse_int(buf, ta, j)
                    if s != 0:
                        bad = 1
                        break
                if v < 1 or v > n or v == u + 1:
                    bad = 1
                    break
                adj[cnt] = v - 1
                i = j
                if has_ew:
                    while i < b and _is_space(buf[i]):
                        i += 1
                    if i == b:
                        bad = 1
                        break
                    j, x = _plain_decimal(buf, i, b, pow10)
                    if not (j >= 0 and (j == b or _is_space(buf[j]))):
                        wa, j = _next_token(buf, i, b)
                        bad, x = _number(buf, wa, j, pow10, scratch)
                        if bad:
                            break
                    i = j
                if v - 1 > u:
                    src[f] = u
                    dst[f] = v - 1
                    if has_ew:
                        w[f] = x
                    f += 1
                cnt += 1
            if bad == 2:
                st[POS] = pos
                st[LINE] = line
                return UNSUPPORTED
            if bad:
                cnt = start
                f = fstart
                st[COUNT] = cnt
                st[VERTEX] = u
                st[FWD] = f
                return _event(st, K_BAD, pos, a, b, nxt, line)
            xadj[u - base + 1] = cnt
        u += 1
        pos = nxt
        line += 1
    st[POS] = pos
    st[LINE] = line
    st[COUNT] = cnt
    st[VERTEX] = u
    st[FWD] = f
    return NEED


@njit(cache=True)
def metis_symmetric(adj, xadj, n):
    """Whether every entry ``u -> v`` is matched by one ``v -> u`` (multisets equal).

    Sorts each vertex's neighbours in place (``adj[xadj[u]:xadj[u + 1]]``).

    Parameters
    ----------
    adj : int32[:] or int64[:]
        Neighbour entries of vertices 0..n-1 (CSR over ``xadj``), no self-loops.
    xadj : int64[n + 1]
    n : int

    Returns
    -------
    bool
    """
    for u in range(n):
        adj[xadj[u]:xadj[u + 1]].sort()
    ptr = xadj[:n].copy()  # next unmatched entry below v of vertex v
    for u in range(n):
        for k in range(xadj[u], xadj[u + 1]):
            v = adj[k]
            if v > u:
                p = ptr[v]
                if p >= xadj[v + 1] or adj[p] != u:
                    return False
                ptr[v] = p + 1
    for v in range(n):
        p = ptr[v]
        if p < xadj[v + 1] and adj[p] < v:
            return False
    return True


# -- Matrix Market -------------------------------------------------------------------
_VCUT_COMMENT = np.array([ord(c) for c in "% vcut graph: "], np.uint8)


@helper
def _vcut_comment(buf, a, b):
    """Whether ``buf[a:b]`` starts with ``% vcut graph: `` (vcut wrote the file)."""
    if b - a < len(_VCUT_COMMENT):
        return False
    for k in range(len(_VCUT_COMMENT)):
        if buf[a + k] != _VCUT_COMMENT[k]:
            return False
    return True


@njit(cache=True)
def mtx_lines(buf, filled, final, st, rows, need, src, dst, w, pow10, scratch):
    """Read the complete Matrix Market lines of ``buf[st[POS]:filled]``.

    Phase 0: the first line is a `K_BANNER` event. Phase 1: the first line
    that is neither blank nor a ``%`` comment is the size line (`K_HEADER`);
    a comment ``% vcut graph: ...`` before it is a `K_VCUT` event.
    Phase 2: entry lines (``st[BODY]`` counts them): ``need`` values (2 for
    pattern, 3 with a value), 1-based ``i j`` in ``1..rows``, stored 0-based
    in ``src``, ``dst`` (``st[COUNT]``), the value in ``w``. The first bad
    entry line is a `K_BAD` event; with ``st[LEVEL]`` then set, lines are
    only counted.

    Parameters
    ----------
    buf, filled, final, st, pow10, scratch
        As in `edgelist_lines`.
    rows : int
    need : int
    src, dst : int32[:] or int64[:]
    w : float64[:]
        Length 0 when ``need`` is 2.

    Returns
    -------
    int
        A status (module docstring).
    """
    pos, line, count, body, phase, level = _resume(st)
    limit = st[MAXLEN]
    while True:
        e, nxt, hi = _find_line(buf, pos, filled, final, limit)
        if e < 0:
            if e == _TOO_LONG:
                _park(st, pos, line, count, body)
                return LONG
            break
        a, b = _strip(buf, pos, e)
        if phase == 0:
            if hi and _unicode_break(buf, a, b):
                _park(st, pos, line, count, body)
                return UNSUPPORTED
            return _event(st, K_BANNER, pos, a, b, nxt, line)
        if a == b or buf[a] == 37:
            if hi and _unicode_break(buf, a, b):
                _park(st, pos, line, count, body)
                return UNSUPPORTED
            if phase == 1 and _vcut_comment(buf, a, b):
                return _event(st, K_VCUT, pos, a, b, nxt, line)
            pos = nxt
            line += 1
            continue
        if hi:
            _park(st, pos, line, count, body)
            return UNSUPPORTED
        if phase == 1:
            return _event(st, K_HEADER, pos, a, b, nxt, line)
        body += 1
        if level == NO_ERROR:
            t0a, t0b = _next_token(buf, a, b)
            t1a, t1b = _next_token(buf, t0b, b)
            t2a, t2b = _next_token(buf, t1b, b)
            t3a, t3b = _next_token(buf, t2b, b)
            nt = 1 if t1a == b else (2 if t2a == b else (3 if t3a == b else 4))
            bad = 0
            x = 1.0
            if nt != need:
                bad = 1
            else:
                s0, v0 = _parse_int(buf, t0a, t0b)
                s1, v1 = _parse_int(buf, t1a, t1b)
                if s0 != 0 or s1 != 0 or v0 < 1 or v0 > rows or v1 < 1 or v1 > rows:
                    bad = 1
                elif need == 3:
                    bad, x = _number(buf, t2a, t2b, pow10, scratch)
            if bad == 2:
                _park(st, pos, line, count, body - 1)
                return UNSUPPORTED
            if bad:
                _park(st, pos, line, count, body - 1)
                return _event(st, K_BAD, pos, a, b, nxt, line)
            if count >= len(src) or (need == 3 and count >= len(w)):
                _park(st, pos, line, count, body - 1)
                st[REQ_E] = count + 1
                return FULL
            src[count] = v0 - 1
            dst[count] = v1 - 1
            if need == 3:
                w[count] = x
            count += 1
        pos = nxt
        line += 1
    _park(st, pos, line, count, body)
    return NEED


# -- LG ------------------------------------------------------------------------------
@helper
def _lg_id(buf, a, b, nv):
    """The id of one ``src`` or ``dst`` field; -1 if not in 1..nv.

    Spaces and tabs around it are allowed (``int()`` strips them, but not
    ``\x1f``, which ``str.split`` takes for a space).
    """
    while a < b and (buf[a] == 32 or buf[a] == 9):
        a += 1
    while b > a and (buf[b - 1] == 32 or buf[b - 1] == 9):
        b -= 1
    s, v = _parse_int(buf, a, b)
    if s != 0 or v < 1 or v > nv:
        return -1
    return v


@njit(cache=True)
def lg_lines(buf, filled, final, st, nv, src, dst):
    """Read the complete LG lines of ``buf[st[POS]:filled]``.

    Blank lines are skipped. Phase 0: the first line is the header
    (`K_HEADER`). Phase 1: ``src,dst`` lines (``st[BODY]`` counts them),
    1-based ids in ``1..nv`` stored 0-based in ``src``, ``dst``
    (``st[COUNT]``). The first bad line is a `K_BAD` event; with
    ``st[LEVEL]`` then set, lines are only counted.

    Parameters
    ----------
    buf, filled, final, st
        As in `edgelist_lines`.
    nv : int
    src, dst : int32[:] or int64[:]

    Returns
    -------
    int
        A status (module docstring).
    """
    pos, line, count, body, phase, level = _resume(st)
    limit = st[MAXLEN]
    while True:
        e, nxt, hi = _find_line(buf, pos, filled, final, limit)
        if e < 0:
            if e == _TOO_LONG:
                _park(st, pos, line, count, body)
                return LONG
            break
        a, b = _strip(buf, pos, e)
        if hi:
            _park(st, pos, line, count, body)
            return UNSUPPORTED
        if a == b:
            pos = nxt
            line += 1
            continue
        if phase == 0:
            return _event(st, K_HEADER, pos, a, b, nxt, line)
        body += 1
        if level == NO_ERROR:
            comma = -1
            two = False
            for i in range(a, b):
                if buf[i] == 44:
                    if comma >= 0:
                        two = True
                        break
                    comma = i
            v0 = -1
            v1 = -1
            if comma >= 0 and not two:
                v0 = _lg_id(buf, a, comma, nv)
                v1 = _lg_id(buf, comma + 1, b, nv)
            if v0 < 0 or v1 < 0:
                _park(st, pos, line, count, body - 1)
                return _event(st, K_BAD, pos, a, b, nxt, line)
            if count >= len(src):
                _park(st, pos, line, count, body - 1)
                st[REQ_E] = count + 1
                return FULL
            src[count] = v0 - 1
            dst[count] = v1 - 1
            count += 1
        pos = nxt
        line += 1
    _park(st, pos, line, count, body)
    return NEED


# -- ids ---------------------------------------------------------------------------
@njit(cache=True)
def renumber_dense(src, dst, count, rank):
    """Renumber ids through a table over ``0..max``: ranks in increasing order.

    Parameters
    ----------
    src, dst : int32[:] or int64[:]
        Ids ``0..len(rank) - 1`` in their first ``count`` entries; replaced
        in place by their ranks when the ids are not ``0..n-1`` already.
    count : int
    rank : int32[:] or int64[:]
        Zeros, one per possible id; overwritten (present ids: their rank).

    Returns
    -------
    n : int
        Distinct ids.
    labels : int64[n]
        The distinct ids in increasing order (empty when they are ``0..n-1``,
        in which case ``src`` and ``dst`` are left unchanged).
    """
    for k in range(count):
        rank[src[k]] = 1
        rank[dst[k]] = 1
    n = 0
    for x in range(len(rank)):
        n += rank[x]
    if n == len(rank):
        return n, np.empty(0, np.int64)
    labels = np.empty(n, np.int64)
    r = 0
    for x in range(len(rank)):
        if rank[x]:
            rank[x] = r
            labels[r] = x
            r += 1
    for k in range(count):
        src[k] = rank[src[k]]
        dst[k] = rank[dst[k]]
    return n, labels


@njit(cache=True)
def renumber_sorted(src, dst, count, labels):
    """Replace each id by its index in the sorted distinct ids ``labels`` (in place).

    Parameters
    ----------
    src, dst : int32[:] or int64[:]
        First ``count`` entries: ids, each present in ``labels``.
    count : int
    labels : int64[n]
        Sorted, distinct.
    """
    for k in range(count):
        src[k] = np.searchsorted(labels, src[k])
        dst[k] = np.searchsorted(labels, dst[k])


@njit(cache=True)
def first_at_least(src, dst, count, bound):
    """Index of the first entry with an id >= ``bound`` (-1: none)."""
    for k in range(count):
        if src[k] >= bound or dst[k] >= bound:
            return k
    return -1


# -- repeated edges ------------------------------------------------------------------
@njit(cache=True)
def first_of_pairs(src, dst, n, directed, first, rep, order, ptr, mark):
    """Whether each edge is the first of its pair (``first``), and that first edge (``rep``).

    Undirected (``directed`` False), ``u v`` and ``v u`` are one pair; directed,
    ``u v`` and ``v u`` are two. O(n + m): the edges are grouped by their
    larger end (by ``dst`` when directed) with a counting sort, in edge order,
    and each group's other ends are looked up in ``mark``.

    Parameters
    ----------
    src, dst : int32[:] or int64[:]
        ``m`` edges over ids ``0..n-1``.
    n : int
    directed : bool
    first : bool[m]
        Output: whether edge ``e`` is the first of its pair.
    rep : int64[m] or int64[0]
        Output when of length ``m``: the first edge of each edge's pair (``e``
        itself when first).
    order : int32[m] or int64[m]
        Work array.
    ptr : int64[n + 1]
        Zeros; overwritten.
    mark : int64[n]
        -1 everywhere; left so.

    Returns
    -------
    repeats : int
        Edges that repeat their pair's first edge as written (same ends in
        the same order; a self-loop's repeats all count here).
    reverse : int
        Edges written the other way round from their pair's first edge.
    """
    m = len(src)
    for e in range(m):
        hi = dst[e] if directed else max(src[e], dst[e])
        ptr[hi + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    for e in range(m):
        hi = dst[e] if directed else max(src[e], dst[e])
        order[ptr[hi]] = e
        ptr[hi] += 1
    repeats = 0
    reverse = 0
    start = 0
    for v in range(n):  # ptr[v] is now the end of group v
        end = ptr[v]
        for k in range(start, end):
            e = order[k]
            lo = src[e] if directed else min(src[e], dst[e])
            f = mark[lo]
            first[e] = f < 0
            if f < 0:
                mark[lo] = e
                f = e
            else:
                if src[e] == src[f]:
                    repeats += 1
                else:
                    reverse += 1
            if len(rep):
                rep[e] = f
        for k in range(start, end):
            e = order[k]
            mark[src[e] if directed else min(src[e], dst[e])] = -1
        start = end
    return repeats, reverse


# -- long lines ----------------------------------------------------------------------
@njit(cache=True)
def long_line(buf, run, limit):
    """Look for a line longer than ``limit`` bytes in ``buf``, which continues a line
    of ``run`` bytes (lines end as in `_find_line`).

    Returns
    -------
    at : int
        The index in ``buf`` of the byte that makes a line longer than
        ``limit`` (the line starts ``limit`` bytes before it), or -1.
    run : int
        Bytes of the last, unfinished, line at the end of ``buf``.
    """
    for i in range(len(buf)):
        c = buf[i]
        if c == 10 or c == 13 or c == 11 or c == 12 or c == 28 or c == 29 or c == 30:
            run = 0
        else:
            run += 1
            if run > limit:
                return i, run
    return -1, run


@njit(cache=True)
def compact_pairs(first, rep, src, dst, w, add):
    """Keep the first edge of each pair (`first_of_pairs`), in place and in order.

    Parameters
    ----------
    first : bool[m]
    rep : int64[m]
        The first edge of each edge's pair (``add``); overwritten. Unused
        (length 0) without ``add``.
    src, dst : int32[m] or int64[m]
    w : float64[m]
        Weights; the first ``k`` entries become the kept edges' (with ``add``
        the sum of their pair's weights, added in edge order).
    add : bool

    Returns
    -------
    int
        ``k``, the edges kept: ``src[:k]``, ``dst[:k]``, ``w[:k]``.
    """
    k = 0
    for e in range(len(src)):
        x = w[e]  # not written yet: every write so far went to an index below e
        if first[e]:
            src[k] = src[e]
            dst[k] = dst[e]
            w[k] = x
            if add:
                rep[e] = k  # the new index of a first edge, for its repeats
            k += 1
        elif add:
            w[rep[rep[e]]] += x
    return k
