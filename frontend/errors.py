"""The project's exception hierarchy.

Every error raised on purpose by any vcut package derives from `VcutError`.
Its message is one line that says what was wrong, the value seen and what to
do; the command line prints exactly that line and exits with ``exit_code``.
Errors that carry a tool's own multi-line diagnostics (the C compiler's)
keep them in ``details``, printed above the one-line message.
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
]


class VcutError(Exception):
    """Base of every error vcut raises on purpose.

    Parameters
    ----------
    message : str
        One line: what was wrong, the value seen, what to do.
    details : str, optional
        Multi-line diagnostics from an underlying tool (shown above the
        message by the command line).
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
