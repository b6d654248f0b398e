"""The greedy family: PowerGraph and Libra, unweighted, weighted and weight-balanced.

=============  ==============================================================
``pg``         PowerGraph greedy, unweighted (loads = edge counts)
``libra``      Libra: the same rules, case 2 cuts the higher-degree endpoint
``w-pg``       weighted PowerGraph (loads = edge weights)
``wb-pg``      weight-balanced PowerGraph: W-PG with the bound lambda * W * cap
``w-libra``    weighted Libra
``wb-libra``   weight-balanced Libra (Algorithm 1 of the spec)
=============  ==============================================================

The stream runs sequentially (`vcut.greedy_kernels.greedy_assign`) or in batches decided in
parallel, on the cores or on the GPU (`vcut.gpu_greedy`), applied in stream order
(``recheck``) or in parallel rounds (``rounds``, `vcut.greedy_rounds`).
"""

from dataclasses import dataclass, replace

import numpy as np

from ir_graph.replicas import DENSE_WORDS, replica_sets
from runtime.gpu import gpu_available, require_gpu
from vcut_base.errors import InputError
from vcut_base.progress import run_kernel

from .. import greedy_rounds  # ROUNDS read at each run: tests set it
from ..greedy_kernels import (
    FULL_TOLERANCE,
    RECHECK,
    RULE_LIBRA,
    RULE_PG,
    greedy_assign,
    greedy_batched,
)
from .base import (
    Assigned,
    check_imbalance,
    check_lambda,
    check_order,
    check_replica_memory,
    new_assignment,
    stream_order,
)

__all__ = ["GreedyOptions", "VARIANTS", "GREEDY", "APPLIES", "device", "check", "run"]

VARIANTS = {  # name: (case-2 rule, weighted, bounded)
    "pg": (RULE_PG, False, False),
    "libra": (RULE_LIBRA, False, False),
    "w-pg": (RULE_PG, True, False),
    "wb-pg": (RULE_PG, True, True),
    "w-libra": (RULE_LIBRA, True, False),
    "wb-libra": (RULE_LIBRA, True, True),
}
#: the greedy family: the algorithms that stream in batches (on the CPU or the GPU)
GREEDY = tuple(VARIANTS)
#: how a batch is applied (`GreedyOptions.apply`)
APPLIES = ("recheck", "rounds")


@dataclass(frozen=True, eq=False)
class GreedyOptions:
    """Options of the greedy family.

    Attributes
    ----------
    lam : float
        lambda >= 1 of the WB bound (``wb-pg``, ``wb-libra``; the others ignore it).
    order : {"given", "random", "bfs", "dfs"}
        Edge stream order.
    batch : int, optional
        p <= 128 only: stream in batches of ``batch`` edges that decide in parallel
        against the state frozen at the batch's start, then apply in order
        (`vcut.greedy_kernels.greedy_batched`); 1 gives the sequential result exactly.
        None: sequential (on the GPU: 65,536).
    apply : {"recheck", "rounds"}, optional
        How a batch is applied: ``"recheck"`` (the CPU's default) in stream order,
        deciding again each edge whose frozen choice would add a replica; ``"rounds"``
        (the GPU's default; `vcut.greedy_rounds`) in a few parallel rounds, so that the GPU
        never returns to the host within the stream.
    refine : bool
        Refine the result (`vcut.quality.refine_assignment`) within ``imbalance``.
    imbalance : float
        Balance tolerance of the refinement (>= 1).
    """

    lam: float = 1.0
    order: str = "given"
    batch: int = None
    apply: str = None
    refine: bool = False
    imbalance: float = 1.03

    def __post_init__(self):
        check_order(self.order)
        check_lambda(self.lam)
        check_imbalance(self.imbalance)
        if self.apply is not None and self.apply not in APPLIES:
            raise InputError(f"unknown apply {self.apply!r}; use {' or '.join(APPLIES)}")
        batch = self.batch
        if batch is not None and (isinstance(batch, bool)
                                  or not isinstance(batch, (int, np.integer)) or batch < 1):
            raise InputError(f"the batch must be a whole number of edges >= 1, got {batch!r}")


def device(options, p, device):
    """The device the stream runs on: the GPU when asked (or ``"auto"`` and one is
    usable), else the CPU; `InputError` for more clusters than dense rows hold."""
    dense = 64 * DENSE_WORDS
    if options.batch is not None and p > dense:
        raise InputError(f"batched streaming keeps dense replica sets, p <= {dense}; got p = {p}: "
                         "use fewer clusters or drop --batch")
    if device == "cpu":
        return "cpu"
    if p > dense:
        if device == "auto":
            return "cpu"
        raise InputError(f"--device gpu keeps dense replica sets, p <= {dense}; got p = {p}: "
                         "use fewer clusters or --device cpu")
    if device == "auto":
        return "gpu" if gpu_available() else "cpu"
    require_gpu()  # a one-line error when there is none
    return "gpu"


def check(algo, options, graph, p, capacities, asked, device):
    """``options`` with ``apply`` settled: the one asked for, else ``rounds`` on the GPU
    and ``recheck`` on the CPU; None for a sequential stream (also where ``auto`` fell
    back to it)."""
    apply, batch = options.apply, options.batch
    if batch is None and device == "cpu" and asked == "auto":
        apply = None
    elif apply is None:
        apply = "rounds" if device == "gpu" else ("recheck" if batch is not None else None)
    elif batch is None and device != "gpu":
        raise InputError("--apply is for the greedy family's batched stream: give --batch "
                         "or --device gpu, or drop --apply")
    return options if apply == options.apply else replace(options, apply=apply)


def run(algo, options, cut):
    """The greedy cut ``algo`` of ``cut`` (a `vcut.cuts.base.CutInput`)."""
    src, dst, n, m, p, cap, deg = cut.src, cut.dst, cut.n, cut.m, cut.p, cut.cap, cut.deg
    check_replica_memory(algo, n, p)
    stream = stream_order(options.order, src, dst, n, cut.seed)
    out = new_assignment(m)
    extra = {}
    rule, weighted, bounded = VARIANTS[algo]
    w = cut.weight if weighted else np.ones(m)
    limit = options.lam * float(w.sum()) if bounded else np.inf
    batch, apply = options.batch, options.apply
    if batch is None and cut.device == "cpu":
        run_kernel("partition", "edges", m, greedy_assign, src, dst, w, stream, n, p,
                   deg, cap, limit, rule, out, replica_sets(n, p))
        return Assigned(out, extra)
    # batches, decided on the cores or on the GPU
    full = limit * (1.0 - FULL_TOLERANCE) * cap
    rows = replica_sets(n, p)[3]
    if batch is None:
        from ..gpu_greedy import default_batch  # lazy: numba.cuda is optional

        batch = default_batch(m)
    if apply == "rounds":
        wq, shift = greedy_rounds.quantize(w)
        fn = greedy_rounds.greedy_rounds
        if cut.device == "gpu":
            from ..gpu_greedy import (
                greedy_rounds_gpu as fn,  # lazy: numba.cuda is optional
            )
        res = run_kernel("partition", "edges", m, fn, src, dst, wq, stream,
                         deg.astype(np.int64), cap, np.ldexp(full, shift), rule, out, rows,
                         int(batch), greedy_rounds.ROUNDS)
        redo = res[1]
        extra.update(apply="rounds", apply_rounds=int(res[2]))
        if cut.device == "gpu":
            extra.update(device="gpu", device_seconds=res[3]["device_seconds"],
                         launches=res[3]["launches"])
    elif cut.device == "gpu":
        from ..gpu_greedy import greedy_batched_gpu  # lazy: numba.cuda is optional

        _, redo, ginfo = run_kernel("partition", "edges", m, greedy_batched_gpu, src, dst,
                                    w, stream, deg, cap, full, rule, out, rows,
                                    int(batch), RECHECK)
        extra.update(device="gpu", device_seconds=ginfo["device_seconds"],
                     launches=ginfo["launches"])
    else:
        _, redo = run_kernel("partition", "edges", m, greedy_batched, src, dst, w, stream, deg,
                             cap, full, rule, out, rows, int(batch), RECHECK)
    extra.update(batch=int(batch), redecided=int(redo))
    return Assigned(out, extra)
