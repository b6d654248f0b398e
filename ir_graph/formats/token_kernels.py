"""Numba helpers of the text graph line kernels: lines, tokens, integers and numbers in raw bytes.

Lines follow ``str.splitlines`` (``\\n``, ``\\r\\n``, ``\\r``, ``\\v``, ``\\f``,
``\\x1c``-``\\x1e`` end a line) and are stripped and split as ``str.split`` does
on ASCII (tab, ``\\x1f`` and space separate tokens). Integers follow Python's
``int()`` and numbers Python's ``float()`` (ASCII digits, ``_`` between digits,
``inf``, ``nan``; decimal strings are converted exactly: by one exact
multiplication when the digits and the exponent are small, by libc's
``strtod`` otherwise), so that a line a kernel accepts is one the Python
reader accepts with the same values. The ``_``-named helpers are inlined into
the line kernels (`ir_graph.formats.line_kernels`), which import them;
`long_line` is called from Python. The state slots and statuses are those of
`ir_graph.formats.line_protocol`.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from vcut_base.jitcache import helper, njit

from .line_protocol import (
    BODY,
    COUNT,
    EVENT,
    EVLINE,
    KIND,
    LEVEL,
    LINE,
    NEXT,
    PHASE,
    POS,
    A,
    B,
)

__all__ = ["POW10", "long_line"]

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


@helper
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


@njit(cache=True)
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


@njit(cache=True)
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




# -- long lines ------------------------------------------------------------------------
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
