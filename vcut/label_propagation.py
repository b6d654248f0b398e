"""Size-constrained label propagation over a CSR graph (`label_propagation`, numba): the
communities of the CompNet-style edge cut (`vcut.edge_cut`)."""

import numpy as np

from vcut_base.jitcache import njit
from runtime.gain_kernels import gather

__all__ = ["label_propagation"]


@njit(cache=True)
def label_propagation(indptr, indices, ew, vw, cap, perm, iters, labels):
    """Size-constrained label propagation (in place on ``labels``).

    Visits vertices in ``perm`` order, ``iters`` rounds at most; a vertex takes
    the neighbouring label with the largest total edge weight ``ew`` whose
    community weight (sum of ``vw``) stays within ``cap`` with it (ties: the
    current label, then the smallest label). Returns the rounds run.
    """
    n = len(vw)
    size = np.zeros(n)
    for v in range(n):
        size[labels[v]] += vw[v]
    acc = np.zeros(n)
    touched = np.empty(n, dtype=np.int64)
    rounds = 0
    for _ in range(iters):
        rounds += 1
        moved = 0
        for v in perm:
            nt = gather(indptr, indices, ew, labels, v, acc, touched)
            own = labels[v]
            best = own
            best_w = acc[own]
            for i in range(nt):
                lab = touched[i]
                if lab == own:
                    continue
                if size[lab] + vw[v] > cap:
                    continue
                if acc[lab] > best_w or (acc[lab] == best_w and best != own and lab < best):
                    best = lab
                    best_w = acc[lab]
            for i in range(nt):
                acc[touched[i]] = 0.0
            if best != own:
                size[own] -= vw[v]
                size[best] += vw[v]
                labels[v] = best
                moved += 1
        if moved == 0:
            break
    return rounds
