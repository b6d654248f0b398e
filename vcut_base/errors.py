"""The project's exception hierarchy.

Every error raised on purpose by any vcut package derives from `VcutError`.
Its message is one line that says what was wrong, the value seen and what to
do; the command line prints exactly that line and exits with ``exit_code``.
Errors that carry a tool's own multi-line diagnostics (the C compiler's)
keep them in ``details``, printed above the one-line message.

One rule for sizes: an input that declares, or would need, more memory than
the machine has (a graph header's node count, a gzip that decompresses past
the bound, a machine of too many cores) is refused before anything is
allocated with `InputTooLarge`, a kind of `InputError` (exit 2), whatever
file or argument it comes from; `OutOfMemory` (exit 11) is for running out
of memory while working, after those checks let the work start.

Messages that quote what a file holds go through `excerpt` (text) or
`quoted` (a value read from a file): at most `QUOTE_CHARS` characters of it,
with the columns shown when that is a part.
"""

__all__ = [
    "VcutError",
    "InputError",
    "ToolchainError",
    "CompileError",
    "LinkError",
    "UnsupportedIRError",
    "ProgramError",
    "ProgramCrashed",
    "ProgramTimeout",
    "ProgramOutOfMemory",
    "SandboxUnavailable",
    "TraceFormatError",
    "OutputError",
    "GraphFormatError",
    "OutOfMemory",
    "InputTooLarge",
    "excerpt",
    "quoted",
    "QUOTE_CHARS",
]

#: Most characters of a file's text that a message quotes (`excerpt`).
QUOTE_CHARS = 120


class VcutError(Exception):
    """Base of every error vcut raises on purpose.

    Each subclass is one kind of failure with its own exit status of the
    command line (``exit_code``: 1 here; `InputError` 2, `CompileError` 4,
    `ProgramError` 7, `GraphFormatError` 10, ...), so a caller can catch
    ``VcutError`` for all of them or a subclass for one.

    Parameters
    ----------
    message : str
        One line: what was wrong, the value seen, what to do.
    details : str, optional
        Multi-line diagnostics from an underlying tool (shown above the
        message by the command line).

    Attributes
    ----------
    message : str
        The one-line message (also ``str(error)``).
    details : str
        The diagnostics (empty when none).
    exit_code : int
        The command line's exit status for this kind of error.

    Examples
    --------
    >>> from frontend import VcutError, compile_program
    >>> try:
    ...     compile_program("no-such-file.c")
    ... except VcutError as exc:
    ...     print(type(exc).__name__, exc.exit_code, "|", exc)
    InputError 2 | input file not found: .../no-such-file.c; check the path
    >>> err = VcutError("the thing failed; try again", details="line 1\\nline 2")
    >>> err.exit_code, err.message, err.details.splitlines()
    (1, 'the thing failed; try again', ['line 1', 'line 2'])
    """

    exit_code = 1

    def __init__(self, message, details=""):
        super().__init__(message)
        self.message = message
        self.details = details


class InputError(VcutError):
    """A file or argument given by the user is missing, unreadable or invalid."""

    exit_code = 2


class ToolchainError(VcutError):
    """No usable C compiler could be found or run."""

    exit_code = 3


class CompileError(VcutError):
    """The C compiler rejected the program; ``details`` holds its diagnostics."""

    exit_code = 4


class LinkError(VcutError):
    """A symbol the program needs is defined neither in it nor in the C libraries."""

    exit_code = 5


class UnsupportedIRError(VcutError):
    """The program uses a construct the tracer cannot follow (inline asm, setjmp, ...)."""

    exit_code = 6


class ProgramError(VcutError):
    """The traced program failed while running."""

    exit_code = 7


class ProgramCrashed(ProgramError):
    """The traced program was killed by a signal (segmentation fault, abort, ...)."""


class ProgramTimeout(ProgramError):
    """The traced program ran past its wall-clock limit."""


class ProgramOutOfMemory(ProgramError):
    """The traced program ran past its memory limit."""


class InputTooLarge(InputError):
    """An input declares, or would need, more memory than this machine has (exit 2).

    Raised before anything is allocated for it: a graph header's node count,
    a file or gzip larger than the reading bound, a machine of too many cores.
    """


class SandboxUnavailable(InputError):
    """The sandbox level asked for (``--sandbox LEVEL``) is not granted on this machine."""


class TraceFormatError(VcutError):
    """A trace file is corrupt, of another format version, or not a trace."""

    exit_code = 8


class OutputError(VcutError):
    """An output path cannot be written."""

    exit_code = 9


class GraphFormatError(VcutError):
    """A graph file or graph object is malformed (file, line and what is wrong)."""

    exit_code = 10


class OutOfMemory(VcutError):
    """A phase ran out of memory (``MemoryError``) after the budget check let it start."""

    exit_code = 11


def excerpt(text, start=0, end=None, width=QUOTE_CHARS):
    """``text`` quoted for a one-line message: ``repr(text)``, or a part of it.

    A text of at most ``width`` characters is quoted whole (``'2 x'``). A
    longer one is cut to the ``width`` characters around ``text[start:end]``
    (the offending part; default its start), ``...`` marking what is left
    out, followed by the columns shown: ``'1 2 3'... (columns 1-120 of
    10,103)``.

    Parameters
    ----------
    text : str
    start, end : int, optional
        The offending part of ``text`` (0-based, ``end`` exclusive).
    width : int
        Most characters quoted.

    Returns
    -------
    str

    Examples
    --------
    >>> excerpt("2 x")
    "'2 x'"
    >>> excerpt("1 " * 100 + "x", start=200, width=10)
    "...' 1 1 1 1 x' (columns 192-201 of 201)"
    """
    text = str(text)
    n = len(text)
    if n <= width:
        return repr(text)
    end = start + 1 if end is None else end
    start = min(max(int(start), 0), n)
    # the offending part from its start, with some context before it when it is short
    lo = max(0, min(start - max(width - (end - start), 0) // 2, n - width))
    if lo > start:
        lo = start
    hi = min(lo + width, n)
    return (("..." if lo else "") + repr(text[lo:hi]) + ("..." if hi < n else "")
            + f" (columns {lo + 1:,}-{hi:,} of {n:,})")


def quoted(value, width=QUOTE_CHARS):
    """``repr(value)`` for a one-line message, cut by `excerpt` when it is long.

    A string is quoted as `excerpt` quotes text; another value (a list read
    from a JSON file, ...) is its ``repr`` when that has at most ``width``
    characters, else an excerpt of that ``repr``.

    Examples
    --------
    >>> quoted([1, 2])
    '[1, 2]'
    >>> quoted(list(range(100)), width=12)
    "'[0, 1, 2, 3,'... (columns 1-12 of 390)"
    """
    if isinstance(value, str):
        return excerpt(value, width=width)
    text = repr(value)
    return text if len(text) <= width else excerpt(text, width=width)
