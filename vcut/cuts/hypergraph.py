"""The hypergraph model with Mt-KaHyPar (`vcut.spac.hypergraph_assign`): every vertex a
net over its edges, the edges partitioned for connectivity - 1."""

from dataclasses import dataclass

from vcut_base.errors import InputError

from ..spac import hypergraph_assign
from .base import Assigned, RefinedOptions, new_assignment

__all__ = ["HypergraphOptions", "run"]


@dataclass(frozen=True, eq=False)
class HypergraphOptions(RefinedOptions):
    """Options of the hypergraph baseline: ``imbalance``, Mt-KaHyPar's balance
    tolerance (and the refinement's), and ``refine`` (`vcut.cuts.base.RefinedOptions`)."""


def run(algo, options, cut):
    """The hypergraph cut of ``cut`` (a `vcut.cuts.base.CutInput`); `InputError` for
    capacities (equal shares only)."""
    if cut.targets is not None:
        raise InputError("the hypergraph baseline takes equal shares only; drop --capacities")
    out = new_assignment(cut.m)
    out[:] = hypergraph_assign(cut.src, cut.dst, cut.weight, cut.n, cut.p,
                               imbalance=options.imbalance, seed=cut.seed)
    return Assigned(out)
