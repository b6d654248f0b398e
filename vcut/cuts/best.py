"""``best``: the quality mode (`vcut.quality.best_assign`): neighbour expansions from
several seeds and, on mesh-like graphs, the edge partition of a METIS vertex partition
(`vcut.quality.metis_assign`) beside them; the fewest-replica expansion and the
METIS cut each refined, the better kept.

Presets (`BestOptions.preset`):

``fast``
    One expansion (``starts = 1``) and no METIS cut (``metis = False``): one refined
    neighbour expansion.
``default``
    `vcut.quality.BEST_STARTS` expansions, or the METIS cut beside
    `vcut.quality.MESH_STARTS` expansion where `vcut.quality.runs_vertex_partitions` says
    so (mesh-like graphs with enough edges per cluster).
``strong``
    Twice `vcut.quality.BEST_STARTS` expansions (``starts = 8``), the METIS cut on every
    graph (``metis = True``), and SPAC where `vcut.quality.runs_vertex_partitions` says so
    (``spac = None``).
"""

from dataclasses import dataclass, replace

import numpy as np

from vcut_base.errors import InputError

from ..quality import BEST_STARTS, best_assign
from .base import Assigned, check_imbalance, new_assignment, preset_knobs

__all__ = ["BestOptions", "PRESETS", "run"]

#: The knobs each preset sets (the rest keep their defaults); see the module docstring.
PRESETS = {"fast": {"starts": 1, "metis": False}, "default": {},
           "strong": {"starts": 2 * BEST_STARTS, "metis": True, "spac": None}}


@dataclass(frozen=True, eq=False)
class BestOptions:
    """Options of the quality mode.

    Attributes
    ----------
    imbalance : float
        Balance tolerance (>= 1) of SPAC and of the refinement.
    refine : bool
        Ignored: ``best`` always refines.
    starts : int, optional
        Neighbour expansions (seeds ``seed``, ``seed + 1``, ...); None:
        `vcut.quality.best_assign`'s choice.
    spac : bool, optional
        Run SPAC beside the expansions (default False); None: on mesh-like graphs with
        enough edges per cluster (`vcut.quality.runs_vertex_partitions`).
    metis : bool, optional
        Refine the edge partition of a METIS vertex partition beside the expansions
        (`vcut.quality.metis_assign`); None (default): on mesh-like graphs with enough
        edges per cluster (`vcut.quality.runs_vertex_partitions`).
    """

    imbalance: float = 1.03
    refine: bool = False
    starts: int = None
    spac: bool = False
    metis: bool = None

    def __post_init__(self):
        check_imbalance(self.imbalance)
        s = self.starts
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))
                              or s < 1):
            raise InputError(f"best's starts must be a whole number of expansions >= 1, "
                             f"got {s!r}")

    @classmethod
    def preset(cls, name, **knobs):
        """The options of preset ``name`` (`PRESETS`), with ``knobs`` set over it."""
        return replace(cls(**preset_knobs(PRESETS, name)), **knobs)


def run(algo, options, cut):
    """The quality mode on ``cut`` (a `vcut.cuts.base.CutInput`)."""
    out = new_assignment(cut.m)
    out[:], info = best_assign(cut.src, cut.dst, cut.weight, cut.n, cut.cap, cut.deg,
                               imbalance=options.imbalance, seed=cut.seed,
                               starts=options.starts, spac=options.spac,
                               metis=options.metis)
    return Assigned(out, info)
