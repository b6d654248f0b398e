"""The binary event stream written by instrumented programs.

The stream is a flat array of little-endian uint64 words. Each event starts
with a header word ``(id << 32) | (aux << 8) | kind`` followed by a fixed
number of payload words that depends on the kind:

========  ====  ===========================  =================================
kind      code  id                           payload words
========  ====  ===========================  =================================
BLOCK     1     block id                     none
READ      2     instruction id               address
WRITE     3     instruction id               address
CALLRET   4     instruction id of the call   none
ALLOC     5     instruction id               base address, size in bytes
FREE      6     instruction id               base address
END       7     reason (`END_REASONS`)       none
READN     8     instruction id               address, size in bytes
WRITEN    9     instruction id               address, size in bytes
========  ====  ===========================  =================================

READ/WRITE are accesses whose size is static (loads, stores, atomics: the
ABI size of the accessed type, kept in the static table); READN/WRITEN carry
a run-time size (memcpy, memmove, memset). For all four, ``aux`` is the
cycle-counter difference read around the operation (``llvm.readcyclecounter``
before and after), saturated at 2^24 - 1, or 0 when timing is off. A copy
gives a READN of the source then a WRITEN of the destination, an atomic
read-modify-write a READ then a WRITE of the same address; both carry the
instruction's time.
"""

__all__ = [
    "EV_BLOCK",
    "EV_READ",
    "EV_WRITE",
    "EV_CALLRET",
    "EV_ALLOC",
    "EV_FREE",
    "EV_END",
    "EV_READN",
    "EV_WRITEN",
    "MAX_CYCLES",
    "EVENT_WORDS",
    "END_MAIN_RETURNED",
    "END_EXIT_CALLED",
    "END_BUDGET",
    "END_ALLOC_FAILED",
    "END_RECOVERED",
    "END_REASONS",
    "header",
]

EV_BLOCK, EV_READ, EV_WRITE, EV_CALLRET, EV_ALLOC, EV_FREE, EV_END, EV_READN, EV_WRITEN = range(1, 10)

#: Total words (header included) of each event kind, indexed by kind.
EVENT_WORDS = (0, 1, 2, 2, 1, 3, 2, 1, 3, 3)

#: Largest cycle count an access event can carry.
MAX_CYCLES = (1 << 24) - 1

END_MAIN_RETURNED, END_EXIT_CALLED, END_BUDGET, END_ALLOC_FAILED, END_RECOVERED = range(5)
END_REASONS = {
    END_MAIN_RETURNED: "main returned",
    END_EXIT_CALLED: "exit() called",
    END_BUDGET: "dynamic-instruction budget exceeded",
    END_ALLOC_FAILED: "a heap allocation failed under the memory limit",
    # written by the tracer, not the runtime: the program left without running
    # exit handlers and its last events were recovered from the shared buffer
    END_RECOVERED: "_exit() or an exit system call (last events recovered)",
}

#: Exit status of the traced child when the runtime stops it (budget, failed
#: allocation) and when writing the event file fails.
EXIT_STOPPED = 120
EXIT_WRITE_FAILED = 121


def header(ident, kind):
    """The header word of an event."""
    return (int(ident) << 32) | int(kind)
