"""The registry of vertex cuts: the only place that knows every algorithm's name.

Each name (kebab-case, the same in the API, the CLI and the reports) belongs to a
family, one module each, which holds the family's options dataclass and the function
that runs it; `vcut.partition.partition_graph` dispatches through `CUTS`.

===============  ============  ========================================================
name             family        what
===============  ============  ========================================================
``random``       `hashing`     each edge to a random cluster (seeded; by capacity)
``pg``           `greedy`      PowerGraph greedy, unweighted (loads = edge counts)
``libra``        `greedy`      Libra: the same rules, case 2 cuts the higher-degree end
``w-pg``         `greedy`      weighted PowerGraph (loads = edge weights)
``wb-pg``        `greedy`      weight-balanced PowerGraph: the bound lambda * W * cap
``w-libra``      `greedy`      weighted Libra
``wb-libra``     `greedy`      weight-balanced Libra (Algorithm 1 of the spec)
``dbh``          `hashing`     degree-based hashing (Xie et al., NIPS 2014)
``hdrf``         `hdrf`        HDRF (Petroni et al., CIKM 2015), capacity-bounded
``spac``         `spac`        split-and-connect + a vertex partitioner backend
``wvp-random``   `wvp`         WVP baseline, cut edges to a random endpoint part
``wvp-greedy``   `wvp`         WVP baseline, cut edges to the less loaded endpoint part
``hypergraph``   `hypergraph`  the hypergraph model with Mt-KaHyPar, connectivity - 1
``par``          `par`         parallelism-aware: a list scheduler that cuts
``ne``           `ne`          neighbour expansion (Zhang et al., KDD 2017)
``hep``          `hep`         HEP (Mayer & Jacobsen, SIGMOD 2021)
``best``         `best`        the quality mode: expansions and replica refinement
``graphx-1d``    `hashing`     Spark GraphX's EdgePartition1D
``graphx-2d``    `hashing`     Spark GraphX's EdgePartition2D
``graphx-crvc``  `hashing`     Spark GraphX's CanonicalRandomVertexCut
===============  ============  ========================================================

``options`` of a cut is its family's dataclass or a mapping of its field names
(`make_options`); ``par`` and ``best`` have presets (``fast``, ``default``, ``strong``),
named in a mapping as ``{"preset": "fast", ...}``, the knobs given beside it set over it.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields

from vcut_base.errors import InputError

from . import best, greedy, hashing, hdrf, hep, hypergraph, ne, par, spac, wvp
from .base import DEVICES

__all__ = ["Cut", "CUTS", "ALGORITHMS", "GREEDY", "PRESETS", "lookup", "make_options",
           "option_names", "check_device"]


@dataclass(frozen=True)
class Cut:
    """One vertex cut of the registry.

    Attributes
    ----------
    family : str
        The family's name (its module under `vcut.cuts`).
    options : type
        The family's frozen options dataclass.
    run : callable
        ``run(algo, options, cut_input) -> vcut.cuts.base.Assigned``.
    check : callable, optional
        ``check(algo, options, graph, p, capacities, asked_device, device) -> options``:
        the checks that need the graph, the capacities or the device, before the graph
        is simplified; returns the options the run takes.
    device : callable, optional
        ``device(options, p, asked) -> "cpu" | "gpu" | None``: the family's device rule
        (None: the CPU rule of every other cut).
    refined : bool
        Whether ``options.refine`` runs `vcut.quality.refine_assignment` after the cut
        (``best`` refines itself).
    equal_shares : bool
        Whether the cut takes equal shares only (capacities refused).
    presets : dict, optional
        Preset name -> the knobs it sets.
    """

    family: str
    options: type
    run: object
    check: object = None
    device: object = None
    refined: bool = True
    equal_shares: bool = False
    presets: dict = None


_GREEDY = Cut("greedy", greedy.GreedyOptions, greedy.run, greedy.check, greedy.device)
_HDRF = Cut("hdrf", hdrf.HdrfOptions, hdrf.run)
_WVP = Cut("wvp", wvp.WvpOptions, wvp.run)
_GRAPHX = Cut("hashing", hashing.HashOptions, hashing.graphx, equal_shares=True)

#: Every vertex cut by name, in the order the documentation lists them.
CUTS = {
    "random": Cut("hashing", hashing.HashOptions, hashing.random),
    "pg": _GREEDY,
    "libra": _GREEDY,
    "w-pg": _GREEDY,
    "wb-pg": _GREEDY,
    "w-libra": _GREEDY,
    "wb-libra": _GREEDY,
    "dbh": Cut("hashing", hashing.HashOptions, hashing.dbh),
    "hdrf": _HDRF,
    "spac": Cut("spac", spac.SpacOptions, spac.run, spac.check, spac.device),
    "wvp-random": _WVP,
    "wvp-greedy": _WVP,
    "hypergraph": Cut("hypergraph", hypergraph.HypergraphOptions, hypergraph.run),
    "par": Cut("par", par.ParOptions, par.run, par.check, refined=False, presets=par.PRESETS),
    "ne": Cut("ne", ne.NeOptions, ne.run),
    "hep": Cut("hep", hep.HepOptions, hep.run),
    "best": Cut("best", best.BestOptions, best.run, refined=False, presets=best.PRESETS),
    "graphx-1d": _GRAPHX,
    "graphx-2d": _GRAPHX,
    "graphx-crvc": _GRAPHX,
}
ALGORITHMS = tuple(CUTS)
#: the greedy family: the algorithms that stream in batches (on the CPU or the GPU)
GREEDY = greedy.GREEDY
#: the preset names (the same for every cut that has presets)
PRESETS = tuple(par.PRESETS)

#: Options that belong to one family, given to another: the message each has always
#: had ({algo}: the algorithm it was given to).
_MISPLACED = {
    "numa": "the NUMA model is par's; {algo} does not take one",
    "tau": "tau is HEP's degree threshold; it does not apply to {algo}",
    "grains": "block runs are scheduled whole by par; {algo} does not take them",
    "batch": f"batched streaming is for the greedy family ({', '.join(GREEDY)}); "
             "drop --batch for {algo}",
    "apply": "--apply is for the greedy family's batched stream: give --batch or --device "
             "gpu, or drop --apply",
    "refine": "par's replicas are refined by vcut analyze, where the simulator judges what "
              "a move costs in time; drop --refine",
}


def lookup(algo):
    """The `Cut` named ``algo``; `InputError` for an unknown name."""
    try:
        return CUTS[algo]
    except (KeyError, TypeError):
        raise InputError(f"unknown algorithm {algo!r}; use one of {', '.join(ALGORITHMS)}") \
            from None


def option_names(algo):
    """The field names of ``algo``'s options dataclass, in order."""
    return tuple(f.name for f in fields(lookup(algo).options))


def make_options(algo, options=None):
    """``algo``'s options: ``options`` when it is the family's dataclass already, its
    defaults for None, else the dataclass made from the mapping ``options`` (field
    name: value; ``"preset"``: a preset's knobs first, for ``par`` and ``best``).

    Raises
    ------
    InputError
        An unknown algorithm, options of another family, a field the family does not
        have (naming it and the family's fields), an unknown preset, a value out of range.
    """
    cut = lookup(algo)
    if options is None:
        return cut.options()
    if isinstance(options, cut.options):
        return options
    if not isinstance(options, Mapping):
        raise InputError(f"the options of {algo} are a {cut.options.__name__} or a mapping "
                         f"of its fields, got {type(options).__name__}")
    knobs = dict(options)
    preset = knobs.pop("preset", None)
    names = option_names(algo)
    for key in knobs:
        if key not in names:
            if key in _MISPLACED:
                raise InputError(_MISPLACED[key].format(algo=algo))
            raise InputError(f"unknown option {key!r} for {algo}; its options "
                             f"({cut.options.__name__}) are {', '.join(names)}")
    if preset is None:
        return cut.options(**knobs)
    if cut.presets is None:
        raise InputError(f"presets ({', '.join(PRESETS)}) are for "
                         f"{' and '.join(a for a, c in CUTS.items() if c.presets)}; {algo} has "
                         "none: drop --preset")
    return cut.options.preset(preset, **knobs)


def check_device(algo, options, p, device):
    """The device ``algo`` runs on for ``device`` ("cpu", "gpu" or "auto"): the family's
    rule (the greedy family's batched stream, SPAC over the multilevel backend), else
    the CPU; `InputError` for an unknown device or the GPU asked of a CPU cut."""
    if device not in DEVICES:
        raise InputError(f"unknown device {device!r}; use cpu, gpu or auto")
    cut = lookup(algo)
    if cut.device is not None:
        chosen = cut.device(options, p, device)
        if chosen is not None:
            return chosen
    if device in ("cpu", "auto"):
        return "cpu"
    raise InputError(f"--device gpu runs the greedy family ({', '.join(GREEDY)}, batched), "
                     f"SPAC with --backend multilevel and multilevel; {algo} runs on the "
                     "CPU: drop --device")
