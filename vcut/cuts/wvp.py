"""The WVP baselines (`vcut.spac.wvp_assign`): a weighted vertex partition, then each
cut edge to a random endpoint's part (``wvp-random``) or to the less loaded one
(``wvp-greedy``)."""

from dataclasses import dataclass

from ..spac import wvp_assign
from .base import Assigned, RefinedOptions, new_assignment

__all__ = ["WvpOptions", "run"]


@dataclass(frozen=True, eq=False)
class WvpOptions(RefinedOptions):
    """Options of the WVP baselines: ``imbalance``, the vertex partition's balance
    tolerance (and the refinement's), and ``refine`` (`vcut.cuts.base.RefinedOptions`)."""


def run(algo, options, cut):
    """The WVP baseline ``algo`` of ``cut`` (a `vcut.cuts.base.CutInput`)."""
    out = new_assignment(cut.m)
    out[:] = wvp_assign(cut.src, cut.dst, cut.weight, cut.n, cut.p, greedy=algo == "wvp-greedy",
                        imbalance=options.imbalance, targets=cut.targets, seed=cut.seed)
    return Assigned(out)
