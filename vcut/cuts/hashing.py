"""Hash cuts: each edge placed by a hash of its endpoints or at random.

===============  ============================================================
``random``       each edge to a random cluster (seeded; proportional to capacity)
``dbh``          degree-based hashing (Xie et al., NIPS 2014)
``graphx-1d``    Spark GraphX's EdgePartition1D (source vertex hash)
``graphx-2d``    GraphX's EdgePartition2D (grid of sqrt(p) x sqrt(p))
``graphx-crvc``  GraphX's CanonicalRandomVertexCut (unordered pair hash)
===============  ============================================================

The GraphX hashes (`vcut.hashing_kernels.graphx_assign`), baselines of the distributed runs,
take equal shares only.
"""

from dataclasses import dataclass
from functools import partial

import numpy as np

from vcut_base.memory import pass_threads, spans
from vcut_base.progress import run_parallel

from ..hashing_kernels import (
    GRAPHX_1D,
    GRAPHX_2D,
    GRAPHX_CRVC,
    dbh_assign,
    graphx_assign,
)
from .base import Assigned, RefinedOptions, new_assignment

__all__ = ["HashOptions", "GRAPHX", "random", "dbh", "graphx"]

#: Spark GraphX's hash partitionings (`vcut.hashing_kernels.graphx_assign`): baselines
#: of the distributed runs, equal shares only.
GRAPHX = {"graphx-1d": GRAPHX_1D, "graphx-2d": GRAPHX_2D, "graphx-crvc": GRAPHX_CRVC}


@dataclass(frozen=True, eq=False)
class HashOptions(RefinedOptions):
    """Options of the hash cuts: only the refinement that may follow
    (`vcut.cuts.base.RefinedOptions`)."""


def random(algo, options, cut):
    """Each edge of ``cut`` (a `vcut.cuts.base.CutInput`) to a random cluster, in
    proportion to the capacities."""
    out = new_assignment(cut.m)
    out[:] = np.random.default_rng(cut.seed).choice(cut.p, size=cut.m, p=cut.cap)
    return Assigned(out)


def dbh(algo, options, cut):
    """Degree-based hashing of ``cut``: each edge hashed by its lower-degree endpoint;
    ranges of the edges side by side (`vcut_base.memory.pass_threads`; each edge decided
    alone: the same result)."""
    out = new_assignment(cut.m)
    cum = np.cumsum(cut.cap)[:-1]
    workers = pass_threads(cut.m)
    run_parallel([partial(dbh_assign, cut.src, cut.dst, cut.deg, cum, cut.seed, out, a, b)
                  for a, b in spans(cut.m, workers)], workers)
    return Assigned(out)


def graphx(algo, options, cut):
    """The GraphX hash ``algo`` (`GRAPHX`) of ``cut``."""
    out = new_assignment(cut.m)
    graphx_assign(cut.src, cut.dst, cut.p, GRAPHX[algo], cut.seed, out)
    return Assigned(out)
