"""Numba line kernels of the text graph readers: one per format, over raw bytes.

`edgelist_lines`, `metis_lines`, `mtx_lines` and `lg_lines` read the complete
lines of a chunk and write their numbers straight into the output arrays,
under the calling convention of `ir_graph.formats.line_protocol`; a line a
kernel accepts is one the Python reader of its format accepts with the same
values, and a line it flags is one the Python reader refuses (which then
words the message). `metis_symmetric` checks a METIS file's neighbour lists.
"""

import numpy as np

from vcut_base.jitcache import helper, njit

from .line_protocol import (
    BASE,
    COUNT,
    FIRST,
    FULL,
    FWD,
    K_BAD,
    K_BANNER,
    K_COLS,
    K_EXTRA,
    K_FIRST,
    K_HEADER,
    K_IDS,
    K_MISMATCH,
    K_STOP,
    K_VCUT,
    K_WEIGHT,
    LEVEL,
    LINE,
    LONG,
    MAXLEN,
    NCOL,
    NEED,
    NO_ERROR,
    PHASE,
    POS,
    REQ_E,
    REQ_F,
    REQ_V,
    STOP,
    UNSUPPORTED,
    VERTEX,
    WIDEN,
)
from .token_kernels import (
    _TOO_LONG,
    _digit_run,
    _event,
    _find_line,
    _is_space,
    _next_token,
    _number,
    _park,
    _parse_int,
    _plain_decimal,
    _resume,
    _strip,
    _unicode_break,
)

__all__ = ["edgelist_lines", "metis_lines", "metis_symmetric", "mtx_lines", "lg_lines"]


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
