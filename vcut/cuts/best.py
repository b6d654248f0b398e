"""``best``: the quality mode (`vcut.quality.best_assign`): neighbour expansions from
several seeds and, on mesh-like graphs, the edge partition of a METIS vertex partition
(`vcut.quality.metis_assign`) beside them; the fewest-replica expansion and the
METIS cut each refined, the better kept.

Presets (`BestOptions.preset`):

``fast``
    One expansion (``starts = 1``), no METIS or HEP cut (``metis = hep = False``), refined
    by FM alone (``dissolve = False``) with a third of its default budget
    (``fm_budget = 0.1``). Over the 78 cells of ``bench/bench_quality.py --presets``: RF
    1.012 x the default's in 0.53 x its time (one refined expansion with the full
    refinement: 1.006 x in 0.69 x; the refinement is most of the preset's time).
``default``
    `vcut.quality.BEST_STARTS` expansions, or the METIS cut beside
    `vcut.quality.MESH_STARTS` expansion where `vcut.quality.runs_vertex_partitions` says
    so (mesh-like graphs with enough edges per cluster); HEP's cut beside them where HEP
    has a high-degree vertex (`vcut.quality.runs_hep`).
``strong``
    Twice `vcut.quality.BEST_STARTS` expansions (``starts = 8``), the METIS cut on every
    graph (``metis = True``), SPAC where `vcut.quality.runs_vertex_partitions` says so
    (``spac = None``), a deeper FM (`STRONG_FM`: 3 moves tried per edge, 32 passes,
    searches that go on 64 moves past their best prefix), then up to `STRONG_VCYCLES`
    multilevel cycles (``vcycles``: `vcut.quality.vcycle_refine`) and up to `STRONG_PERTURB`
    rounds of iterated local search (``perturb``: `vcut.quality.perturb_refine`, which
    stop after `vcut.quality.PERTURB_PATIENCE` rounds in a row without a gain).
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from vcut_base.errors import InputError

from ..quality import BEST_STARTS, FM_BUDGET, FM_LIMIT, FM_PASSES, best_assign, check_count
from .base import Assigned, check_imbalance, new_assignment, preset_knobs

__all__ = ["BestOptions", "PRESETS", "run"]

#: FM's budget in the ``fast`` preset (moves tried per edge)
FAST_FM_BUDGET = 0.1
#: FM's budget, passes and search limit in the ``strong`` preset
STRONG_FM = {"fm_budget": 3.0, "fm_passes": 32, "fm_limit": 64}
#: rounds of iterated local search (at most) after the refinement in the ``strong`` preset
STRONG_PERTURB = 16
#: multilevel cycles (at most) before the iterated search in the ``strong`` preset
STRONG_VCYCLES = 8
#: The knobs each preset sets (the rest keep their defaults); see the module docstring.
PRESETS = {"fast": {"starts": 1, "metis": False, "hep": False, "dissolve": False,
                    "fm_budget": FAST_FM_BUDGET},
           "default": {},
           "strong": {"starts": 2 * BEST_STARTS, "metis": True, "spac": None, **STRONG_FM,
                      "perturb": STRONG_PERTURB, "vcycles": STRONG_VCYCLES,
                      "multilevel": True}}


@dataclass(frozen=True, eq=False)
class BestOptions:
    """Options of the quality mode.

    Attributes
    ----------
    imbalance : float
        Balance tolerance (>= 1) of the METIS and SPAC cuts and of the refinement.
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
    hep : bool, optional
        Refine HEP's cut (``tau`` = `vcut.quality.HEP_TAU`) beside the expansions; None
        (default): where HEP has a high-degree vertex at that threshold
        (`vcut.quality.runs_hep`).
    dissolve : bool
        Run the replica-dissolving passes before FM (default True).
    fm_budget : float
        FM's work: moves tried per edge at most (default `vcut.quality.FM_BUDGET`).
    fm_passes : int
        FM's passes at most (default `vcut.quality.FM_PASSES`).
    fm_limit : int
        An FM search stops this many moves after its best prefix (default
        `vcut.quality.FM_LIMIT`).
    perturb : int
        Rounds of iterated local search after the refinement, at most (default 0): each
        gathers a random share of the vertices onto their heaviest cluster and refines
        again, kept when it has fewer replicas; they stop after
        `vcut.quality.PERTURB_PATIENCE` rounds in a row without a gain
        (`vcut.quality.perturb_refine`).
    vcycles : int
        Multilevel cycles after the refinement and before the iterated search, at most
        (default 0): each coarsens the hypergraph of the edges within the clusters, moves
        the coarse nodes (groups of edges) by label propagation, coarsest level first, and
        refines again, kept when it has fewer replicas; they stop after
        `vcut.quality.PERTURB_PATIENCE` cycles in a row without a gain
        (`vcut.quality.vcycle_refine`).
    multilevel : bool
        Refine a multilevel cut of the hypergraph of the edges beside the expansions
        (default False; `vcut.quality.multilevel_assign`): coarsened from scratch, cut by
        METIS at its coarsest level, refined level by level on the way back.
    """

    imbalance: float = 1.03
    refine: bool = False
    starts: int = None
    spac: bool = False
    metis: bool = None
    dissolve: bool = True
    fm_budget: float = FM_BUDGET
    hep: bool = None
    fm_passes: int = FM_PASSES
    fm_limit: int = FM_LIMIT
    perturb: int = 0
    vcycles: int = 0
    multilevel: bool = False

    def __post_init__(self):
        check_imbalance(self.imbalance)
        s = self.starts
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))
                              or s < 1):
            raise InputError(f"best's starts must be a whole number of expansions >= 1, "
                             f"got {s!r}")
        b = self.fm_budget
        if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) \
                or not 0 <= b < math.inf:
            raise InputError(f"best's fm_budget must be a number of FM moves per edge >= 0, "
                             f"got {b!r}")
        check_count("best's fm_passes", self.fm_passes)
        check_count("best's fm_limit", self.fm_limit)
        check_count("best's perturb", self.perturb, low=0)
        check_count("best's vcycles", self.vcycles, low=0)
        if not isinstance(self.multilevel, (bool, np.bool_)):
            raise InputError(f"best's multilevel must be True or False, got "
                             f"{self.multilevel!r}")

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
                               metis=options.metis, dissolve=options.dissolve,
                               fm_budget=float(options.fm_budget), hep=options.hep,
                               fm_passes=int(options.fm_passes), fm_limit=int(options.fm_limit),
                               perturb=int(options.perturb),
                               vcycles=int(options.vcycles),
                               multilevel=bool(options.multilevel))
    return Assigned(out, info)
