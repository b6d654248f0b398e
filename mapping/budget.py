"""The budget of an analysis: time and memory estimated from the trace size, before the work.

The memory estimate is meant as an upper bound of the peak resident memory of a whole
``vcut analyze`` with its default options: a fixed part (the interpreter, numba, LLVM and
the compiled kernels, `BASE_BYTES`) and a part that grows linearly with the dynamic
instructions (`BYTES_PER_NODE`), plus the greedy vertex cuts' replica sets beyond those of
p = 8 (`ir_graph.replicas.replica_set_bytes`). ``python bench/bench_budget.py`` measures
the peak beside the estimate on traces of three shapes (a dense matrix multiply, MiBench's
dijkstra, pointer chasing) at two sizes each; docs/benchmarks.md holds its last run. The
time estimate is a planning figure only.
"""

import shutil

from ir_graph.replicas import replica_set_bytes
from vcut_base.errors import InputError
from vcut_base.memory import available_bytes, format_bytes, resident_bytes

__all__ = ["estimate", "check_budget", "BASE_BYTES", "BYTES_PER_NODE", "GRAPH_BYTES_PER_NODE",
           "NODES_PER_SECOND", "SPILL_BYTES_PER_NODE", "SPILL_DISK_BYTES_PER_NODE"]

#: The fixed part of an analysis's peak: the interpreter with numpy, numba, LLVM and the
#: kernels loaded, and the report's figures (``bench/bench_budget.py``: about 0.5 GiB
#: where the per-node lines of its three shapes meet zero nodes).
BASE_BYTES = 640 * 2**20

#: Peak resident bytes per dynamic instruction of ``vcut analyze`` with its defaults
#: (``par`` clusters, the time-aware mapping, the baseline mappings simulated two at a
#: time where two CPUs and the memory allow), at p = 8: the slopes measured with
#: ``bench/bench_budget.py`` between its two sizes are 230-250 on its three shapes.
BYTES_PER_NODE = 280

#: End-to-end analysis rate, nodes per second, without and with the baseline
#: mappings, of the default ``par`` analysis at p = 8, measured with
#: `bench/bench_scale.py`: 0.43 M and 0.34 M at 10 M nodes, 0.35 M and 0.26 M at 50 M.
#: (``--algo wb-libra`` clusters: 0.77-0.86 M and 0.35-0.50 M; 0.59 M and 0.25 M
#: disk-backed at 304 M; docs/notes/mapping-scale.md.)
NODES_PER_SECOND = {False: 350_000, True: 250_000}


#: Peak resident bytes per dynamic instruction of building the graph of a trace
#: (trace and graph together, beyond `BASE_BYTES`): what a ``--window`` analysis needs
#: for the whole run (about 125 on a dense matrix multiply).
GRAPH_BYTES_PER_NODE = 140


#: Disk-backed analyses (``--spill``): peak resident (anonymous) bytes per
#: dynamic instruction, the running phase's working arrays (measured 44 at
#: 304 M nodes, p = 8), and bytes of spill files per instruction (106 at p = 8,
#: plus the finish times of the baseline simulations running at once).
SPILL_BYTES_PER_NODE = 50
SPILL_DISK_BYTES_PER_NODE = 120


def estimate(nodes, p, baselines=True, window=None, windows=1, spill=False):
    """``(bytes, seconds)`` an analysis of ``nodes`` dynamic instructions into ``p``
    clusters is expected to take; ``window`` (nodes in the analysed slice) when
    only a slice of the run is analysed, ``windows`` such slices one after
    another (``--windows``: the memory of one, the time of all); ``spill``:
    a disk-backed analysis (the memory that stays resident)."""
    # the streaming cuts' replica sets beyond those of p = 8 (dense bitsets up to
    # p = 128, then compact sets; a p beyond the node count fails later with its
    # own message: p <= |E|)
    clusters = min(int(p), max(int(nodes), 1))
    per_node = (SPILL_BYTES_PER_NODE if spill else BYTES_PER_NODE) + max(replica_set_bytes(1, clusters) - replica_set_bytes(1, 8), 0)
    if window is None:
        need = BASE_BYTES + float(nodes) * per_node
        analysed = nodes
    else:
        need = BASE_BYTES + max(float(nodes) * GRAPH_BYTES_PER_NODE, float(window) * per_node)
        analysed = window
    return need, float(analysed) * int(windows) / NODES_PER_SECOND[bool(baselines)]


def check_budget(nodes, p, baselines=True, *, window=None, windows=1, available=None, say=None,
                 spill=None, disk=None):
    """Refuse (`InputError`, exit 2) an analysis whose estimate exceeds the memory
    (or, with ``spill`` a directory, the free space there: ``disk`` bytes, measured
    when None).

    ``say`` (a callable taking a line) gets the estimate when the analysis
    will take more than a few seconds.
    """
    need, seconds = estimate(nodes, p, baselines, window, windows, spill=bool(spill))
    # what this process holds already (the interpreter, the kernels: part of BASE_BYTES)
    # is not needed again
    avail = available_bytes() + resident_bytes() if available is None else available
    if need > avail:
        raise InputError(
            f"analysing {int(nodes):,} instructions into {int(p)} clusters needs about "
            f"{format_bytes(need)}{' with --spill' if spill else ''} but {format_bytes(avail)} "
            "is available; analyse a slice (--window START:END), trace fewer instructions "
            "(--max-instructions) or a region (--roi FUNC)"
            + ("" if spill else ", keep the large arrays on disk (--spill DIR)")
            + ", or use a machine with more memory")
    if spill:
        analysed = nodes if window is None else window
        on_disk = float(analysed) * SPILL_DISK_BYTES_PER_NODE
        free = shutil.disk_usage(spill).free if disk is None else disk
        if on_disk > free:
            raise InputError(
                f"a disk-backed analysis of {int(analysed):,} instructions needs about "
                f"{format_bytes(on_disk)} in {spill} but {format_bytes(free)} is free there; "
                "give --spill a directory on a disk with more free space, or analyse a slice "
                "(--window START:END)")
    if say is not None and seconds > 5:
        say(f"estimate: about {seconds:,.0f} s and {format_bytes(need)} for {int(nodes):,} "
            f"instructions (of {format_bytes(avail)} available)")
    return need, seconds
