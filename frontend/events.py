"""The binary event stream written by instrumented programs.

The stream is a flat array of little-endian uint64 words. Each event starts
with a header word ``(id << 8) | kind`` followed by a fixed number of payload
words that depends on the kind:

========  ====  ===========================  =================================
kind      code  id                           payload words
========  ====  ===========================  =================================
BLOCK     1     block id                     none
READ      2     instruction id               address, ``size | min(dt, 2^32-1) << 32``
WRITE     3     instruction id               address, ``size | min(dt, 2^32-1) << 32``
CALLRET   4     instruction id of the call   none
ALLOC     5     instruction id               base address, size in bytes
FREE      6     instruction id               base address
END       7     reason (`END_REASONS`)       none
========  ====  ===========================  =================================

``dt`` is the cycle-counter difference read around the memory operation
(``llvm.readcyclecounter`` before and after; 0 when timing is off). A copy
(memcpy/memmove) gives a READ of the source then a WRITE of the destination,
an atomic read-modify-write a READ then a WRITE of the same address; both
carry the instruction's ``dt``.
"""

__all__ = [
    "EV_BLOCK",
    "EV_READ",
    "EV_WRITE",
    "EV_CALLRET",
    "EV_ALLOC",
    "EV_FREE",
    "EV_END",
    "EVENT_WORDS",
    "END_MAIN_RETURNED",
    "END_EXIT_CALLED",
    "END_BUDGET",
    "END_ALLOC_FAILED",
    "END_REASONS",
    "header",
]

EV_BLOCK, EV_READ, EV_WRITE, EV_CALLRET, EV_ALLOC, EV_FREE, EV_END = range(1, 8)

#: Total words (header included) of each event kind, indexed by kind.
EVENT_WORDS = (0, 1, 3, 3, 1, 3, 2, 1)

END_MAIN_RETURNED, END_EXIT_CALLED, END_BUDGET, END_ALLOC_FAILED = range(4)
END_REASONS = {
    END_MAIN_RETURNED: "main returned",
    END_EXIT_CALLED: "exit() called",
    END_BUDGET: "dynamic-instruction budget exceeded",
    END_ALLOC_FAILED: "a heap allocation failed under the memory limit",
}

#: Exit status of the traced child when the runtime stops it (budget, failed
#: allocation) and when writing the event file fails.
EXIT_STOPPED = 120
EXIT_WRITE_FAILED = 121


def header(ident, kind):
    """The header word of an event."""
    return (int(ident) << 8) | int(kind)
