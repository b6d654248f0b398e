"""Balanced vertex partitions of a CSR graph, by one of three backends.

`vertex_partition` partitions a graph given as METIS CSR arrays (``xadj``, ``adjncy``,
``adjwgt``, ``vwgt``) into ``k`` parts of balanced vertex weight with a minimum edge
cut, by ``metis`` (pymetis; through its C interface without holding the GIL,
`runtime.metis`), ``kahip`` (kaffpa, eco preset) or ``multilevel`` (the runtime's own,
`runtime.multilevel`). Per-part targets (heterogeneous capacities) go to METIS as
``tpwgts`` and to the multilevel partitioner; KaHIP cannot take them and says so
(`KAHIP_TARGETS`). SPAC (`vcut.spac`), the WVP and edge-cut baselines and the mapping's
recursive bisection call it.
"""

import numpy as np

from vcut_base.errors import InputError, VcutError

from . import metis

__all__ = ["vertex_partition", "KAHIP_TARGETS", "MIN_TOLERANCE", "MAX_UFACTOR", "C_INT_SEEDS"]

#: The tolerance the backends are given for imbalance 1 (none): METIS's ufactor counts
#: thousandths (at least 1), KaHIP takes a tolerance of exactly 0 for its perfectly
#: balanced mode, which needs equal vertex weights and crashes (SIGSEGV) on SPAC's, and
#: the multilevel partitioner takes tolerances > 0 only.
MIN_TOLERANCE = 0.001
#: The largest METIS ufactor given (a tolerance of 2,147,483: no bound at all below that
#: many parts); it fits the options array of any METIS build.
MAX_UFACTOR = 2**31 - 1
#: KaHIP and Mt-KaHyPar take C ``int`` seeds: a seed is given to them modulo this.
C_INT_SEEDS = 2**31


def _tolerance(imbalance, k, targets):
    """The backends' tolerance (``imbalance - 1``) within what each of them can take:
    `MIN_TOLERANCE` for none (imbalance 1); at most the tolerance that lets the part of the
    smallest target hold the whole weight (``k - 1`` for equal shares): past it no part has
    a bound either way, and a larger number can overflow the backends' integer bounds."""
    if targets is None:
        top = float(k - 1)
    else:
        t = np.asarray(targets, dtype=np.float64)
        with np.errstate(divide="ignore", over="ignore"):
            top = float(t.sum() / t.min()) - 1.0 if t.min() > 0 else np.inf
    tolerance = float(imbalance) - 1.0
    return min(tolerance if tolerance > 0 else MIN_TOLERANCE, max(top, MIN_TOLERANCE))


def vertex_partition(xadj, adjncy, adjwgt, vwgt, k, *, backend="metis", imbalance=1.03,
                     targets=None, seed=0, recursive=False, device="cpu"):
    """Partition a CSR graph into ``k`` parts with the chosen backend.

    Parameters
    ----------
    imbalance : float
        Allowed max part weight over the average (1.03 = 3 %).
    targets : sequence of float, optional
        Target fraction of the weight per part (heterogeneous capacities).
    recursive : bool
        METIS only: recursive bisection instead of its k-way scheme (the default,
        as ``gpmetis``'s; pymetis's own default bisects up to 8 parts, which on the
        SPAC graphs of 5 meshes and 5 other graphs at k = 8 cut 0.2-8 % more in 1.1-1.9 x
        the time, and at k = 2 cut 11-16 % more, in less time).
    device : str
        The multilevel backend's device (``cpu``, ``gpu``, ``auto``); the others run on
        the CPU.

    Raises
    ------
    VcutError
        The backend is not installed, cannot take per-part targets, or failed.
    """
    n = len(xadj) - 1
    if k == 1:
        return np.zeros(n, dtype=np.int32)
    tolerance = _tolerance(imbalance, k, targets)
    if backend == "metis":
        try:
            import pymetis  # lazy: pymetis is optional
        except ImportError:
            raise VcutError("the METIS backend needs pymetis: pip install pymetis") from None
        ufactor = min(max(1, int(round(tolerance * 1000))), MAX_UFACTOR)
        if targets is None and metis.available():  # the same call, without holding the GIL
            try:
                return metis.part_graph(xadj, adjncy, vwgt, adjwgt, k, ufactor=ufactor,
                                         seed=seed, recursive=recursive)
            except RuntimeError as exc:
                raise VcutError(f"the METIS backend failed: {exc}") from None
        if targets is not None:  # METIS refuses a target that is 0 as its 32-bit real_t
            with np.errstate(over="ignore", under="ignore"):
                share = np.asarray(targets, dtype=np.float64)
                share = (share / share.sum()).astype(np.float32)
            if not (share > 0).all():
                b = int(np.flatnonzero(~(share > 0))[0])
                raise InputError(f"METIS takes per-part targets as 32-bit floats, where the "
                                 f"share of part {b}, {float(targets[b]):.3g} of the total, "
                                 "rounds to 0; give capacities within a factor of 1e40 of each "
                                 "other")
        opts = pymetis.Options(ufactor=ufactor, seed=seed)
        try:
            with metis.c_stdout_to_stderr():  # METIS's printf diagnostics
                res = pymetis.part_graph(
                    k, pymetis.CSRAdjacency(adj_starts=xadj, adjacent=adjncy), vweights=vwgt,
                    eweights=adjwgt,
                    tpwgts=None if targets is None else [float(t) for t in targets],
                    recursive=recursive, options=opts,
                )
        except Exception as exc:  # METIS reports its own failures
            raise VcutError(f"the METIS backend failed: {exc}") from None
        return np.asarray(res[1], dtype=np.int32)
    if backend == "kahip":
        if targets is not None:
            raise InputError(KAHIP_TARGETS)
        try:
            import kahip  # lazy: kahip is optional
        except ImportError:
            raise VcutError("the KaHIP backend needs kahip: pip install kahip") from None
        _, blocks = kahip.kaffpa(vwgt.tolist(), xadj.tolist(), adjwgt.tolist(), adjncy.tolist(),
                                 int(k), tolerance, True, int(seed) % C_INT_SEEDS, kahip.ECO)
        return np.asarray(blocks, dtype=np.int32)
    if backend == "multilevel":
        # lazy: the multilevel partitioner's kernels take 70 ms to import, for this backend only
        from .multilevel import csr_from_edges, multilevel_partition

        xadj = np.asarray(xadj, dtype=np.int64)
        adjncy = np.asarray(adjncy, dtype=np.int64)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(xadj))
        upper = rows < adjncy  # each undirected edge once
        level = csr_from_edges(rows[upper], adjncy[upper], np.asarray(adjwgt)[upper], n, vwgt)
        res = multilevel_partition(level, k, device=device, imbalance=tolerance, seed=seed,
                                   targets=targets)
        return res.part.astype(np.int32)
    raise InputError(f"unknown SPAC backend {backend!r}; use one of metis, kahip, multilevel")


#: Why KaHIP is refused heterogeneous capacities (`vertex_partition`; checked by
#: `vcut.partition.partition_graph` before any work).
KAHIP_TARGETS = ("the KaHIP backend cannot take per-part target weights (heterogeneous "
                 "capacities, --capacities / --units); use --backend metis or multilevel, or "
                 "drop the capacities")
