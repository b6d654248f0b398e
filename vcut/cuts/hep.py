"""HEP (Mayer & Jacobsen, SIGMOD 2021; `vcut.quality.hep_assign`): NE++ below the degree
threshold ``tau`` times the mean degree, HDRF above it."""

from dataclasses import dataclass

from ..quality import DEFAULT_TAU, hep_assign
from .base import Assigned, RefinedOptions, new_assignment

__all__ = ["HepOptions", "run"]


@dataclass(frozen=True, eq=False)
class HepOptions(RefinedOptions):
    """Options of HEP: ``tau``, the degree threshold in mean degrees (None:
    `vcut.quality.DEFAULT_TAU`), and the refinement that may follow
    (`vcut.cuts.base.RefinedOptions`)."""

    tau: float = None


def run(algo, options, cut):
    """HEP of ``cut`` (a `vcut.cuts.base.CutInput`)."""
    out = new_assignment(cut.m)
    tau = DEFAULT_TAU if options.tau is None else options.tau
    out[:], info = hep_assign(cut.src, cut.dst, cut.weight, cut.n, cut.cap, cut.deg, tau=tau,
                              seed=cut.seed)
    return Assigned(out, info)
