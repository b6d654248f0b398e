"""Neighbour expansion (Zhang et al., KDD 2017; `vcut.quality.ne_assign`): each cluster
grows from a seed vertex by the boundary vertex with the fewest edges leading out."""

from dataclasses import dataclass

from ..quality import ne_assign
from .base import Assigned, RefinedOptions, new_assignment

__all__ = ["NeOptions", "run"]


@dataclass(frozen=True, eq=False)
class NeOptions(RefinedOptions):
    """Options of NE: only the refinement that may follow
    (`vcut.cuts.base.RefinedOptions`)."""


def run(algo, options, cut):
    """Neighbour expansion of ``cut`` (a `vcut.cuts.base.CutInput`)."""
    out = new_assignment(cut.m)
    out[:] = ne_assign(cut.src, cut.dst, cut.weight, cut.n, cut.cap, seed=cut.seed)
    return Assigned(out)
