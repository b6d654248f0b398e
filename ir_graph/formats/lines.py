"""Lines of a text graph: their length bound, and the checks and messages of their tokens.

The Python reader of each text format (`ir_graph.formats.metis`,
`~.edgelist`, `~.mtx`, `~.lg`) splits the decoded text with `text_lines` and
reads its tokens with `parse_ints` and `parse_number`, which raise
`GraphFormatError` naming the file, the line and what is wrong, quoting at
most ``QUOTE_CHARS`` characters (`shown`; the offending token and its column
in a long line, `column_at`). The compiled readers word their refusals with
the same functions.
"""

import re

import numpy as np

from vcut_base.errors import QUOTE_CHARS, GraphFormatError, excerpt

__all__ = ["MAX_LINE", "METIS_LINE_BYTES", "BINARY_PREFIX", "long_line_message", "binary_message",
           "text_lines", "parse_ints", "parse_number", "shown", "column_at"]

#: The longest line of a text graph, in bytes (without its line break).
MAX_LINE = 1 << 20
#: Bytes a METIS vertex line may take per vertex (and per vertex weight) the header
#: declares: room for an id, an edge weight and the blanks between them.
METIS_LINE_BYTES = 64
#: Each text format, with its article, as messages name it.
_FORMAT_NAMES = {"metis": "a METIS", "edgelist": "an edge-list", "mtx": "a Matrix Market",
                 "lg": "an LG"}
#: Leading bytes of a text graph searched for NUL (binary data).
BINARY_PREFIX = 65536


def long_line_message(path, k, head, limit, fmt):
    """The message of line ``k``, longer than ``limit`` bytes, starting with bytes ``head``."""
    name = _FORMAT_NAMES.get(fmt, "a text")
    why = f" ({METIS_LINE_BYTES} bytes per vertex of its header)" if limit > MAX_LINE else ""
    text = bytes(head[:QUOTE_CHARS]).decode("utf-8", errors="replace")
    return (f"{path}:{k}: line longer than {limit:,} bytes, the most {name} line may have{why}; "
            f"it begins {text!r}...; the file is not {name} graph, or it is corrupt")


def binary_message(path):
    return f"{path}: binary data where a text graph was expected"


def text_lines(text):
    """(line number, stripped line) for every line."""
    return [(k, ln.strip()) for k, ln in enumerate(text.splitlines(), 1)]


def parse_ints(path, lineno, tokens, line=None, first=0, step=1, sep=None):
    """The integers of ``tokens``, which are tokens ``first``, ``first + step``, ...
    of ``line`` split at ``sep`` (white space when None)."""
    out = []
    for i, t in enumerate(tokens):
        try:
            out.append(int(t))
        except ValueError:
            joined = " ".join(tokens)
            if len(joined) <= QUOTE_CHARS or line is None:
                found = excerpt(joined)
            else:  # a long line: the bad token and where it is
                found = excerpt(t) + column_at(line, first + i * step, sep)
            raise GraphFormatError(f"{path}:{lineno}: expected integers, found {found}") from None
    return out


def parse_number(path, lineno, tok, what, line=None, index=None):
    """The weight ``tok`` (token ``index`` of ``line``): finite and non-negative."""
    try:
        v = float(tok)
    except ValueError:
        v = None
    where = column_at(line, index) if line is not None and len(line) > QUOTE_CHARS else ""
    if v is None:
        raise GraphFormatError(f"{path}:{lineno}: {what} {excerpt(tok)}{where} is not a number")
    if not np.isfinite(v):
        raise GraphFormatError(f"{path}:{lineno}: {what} {shown(tok)}{where} is not a finite "
                               "number")
    if v < 0:
        raise GraphFormatError(f"{path}:{lineno}: {what} {shown(tok)}{where} is negative")
    return v


def shown(text):
    """``text`` as it is when short, else quoted in part (`vcut_base.errors.excerpt`)."""
    text = str(text)
    return text if len(text) <= QUOTE_CHARS else excerpt(text)


def column_at(line, index, sep=None):
    """`` at column C`` of token ``index`` of ``line`` split at ``sep`` (white space
    when None), counted from the line's first character other than white space."""
    if sep is None:
        for k, m in enumerate(re.finditer(r"\S+", line)):
            if k == index:
                return f" at column {m.start() + 1:,}"
        return ""
    parts = line.split(sep)
    return f" at column {sum(len(p) + 1 for p in parts[:index]) + 1:,}"
