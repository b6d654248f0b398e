"""``par``: the parallelism-aware vertex cut, a list scheduler that cuts
(`vcut.parallel.par_assign`); it keeps its schedule and the home of every vertex.

Presets (`ParOptions.preset`):

``fast``
    ``beta = 1.5`` (`vcut.parallel.BETA`): one schedule at the lowest replica price
    instead of the walk over `vcut.parallel.PRICES` (up to seven schedules).
``default``
    Today's defaults: the price walk, priority ``gamma = 0``, the longest chain
    protected, no grains.
``strong``
    ``gammas = (0, 0.25, 0.5, 1)`` (`vcut.parallel.GAMMAS`): the price walk at each of
    the four priorities, the clusters of the lowest model makespan kept (ties: the
    earlier), about four times the default's time. A lower bound on the time is not
    a lower one for every program at one priority (fft at p = 64 runs 1.53x the
    model's bound at 0, 1.33x at 1), hence a search, not another default. An
    explicit ``gamma`` replaces the search.

`vcut analyze` steers ``par`` further (priorities, chain slacks, grains, judged by the
simulator on the machine): that search belongs to the pipeline, not to a preset.
"""

from dataclasses import dataclass, replace

import numpy as np

from vcut_base.errors import InputError

from ..parallel import BETA, GAMMAS, block_runs, par_assign, scratch_bytes
from .base import Assigned, check_imbalance, check_replica_memory, preset_knobs

__all__ = ["ParOptions", "GRAIN_UNITS", "PRESETS", "check", "run"]

#: What ``par`` schedules whole with ``grains`` (`ParOptions.grain_unit`).
GRAIN_UNITS = ("runs", "calls")
#: The knobs each preset sets (the rest keep their defaults); see the module docstring.
PRESETS = {"fast": {"beta": BETA}, "default": {}, "strong": {"gammas": GAMMAS}}


@dataclass(frozen=True, eq=False)
class ParOptions:
    """Options of ``par`` (see `vcut.parallel.par_assign`).

    Attributes
    ----------
    imbalance : float
        Most work a cluster takes, relative to its share (while another has room).
    latency : float, optional
        Cycles a value takes between two clusters (default: the mean over the core
        pairs of the Table 2 machine with p cores).
    beta : float, optional
        Price of a new replica in message latencies (default: chosen per graph).
    gamma : float
        Priority of a ready vertex: its bottom level minus ``gamma`` times its top level.
    chain_slack : float
        Protect every dependency chain within this share of the longest path.
    grains : float
        Share (0: off, up to 1) within which block runs (``grain_unit`` "runs") or calls
        ("calls") of an IR graph are scheduled whole.
    grain_unit : {"runs", "calls"}
    numa : tuple, optional
        ``(node, latency_matrix, memory_cycles)``: the NUMA node of each cluster, the
        machine's memory latencies and a DRAM access's cycles (the task objects come from
        the graph's ``node_object``).
    gammas : tuple of float, optional
        Instead of ``gamma``: run at each of these priorities and keep the clusters of
        the lowest model makespan (ties: the earlier); ``info["gammas"]`` lists
        ``[gamma, model makespan]`` of each. None: ``gamma`` alone.
    """

    imbalance: float = 1.03
    latency: float = None
    beta: float = None
    gamma: float = 0.0
    chain_slack: float = 0.0
    grains: float = 0.0
    grain_unit: str = "runs"
    numa: tuple = None
    gammas: tuple = None

    def __post_init__(self):
        check_imbalance(self.imbalance)
        if self.gammas is not None and (isinstance(self.gammas, str) or len(self.gammas) == 0):
            raise InputError(f"par's gammas must be a non-empty list of priority weights, got "
                             f"{self.gammas!r}")
        if not np.isfinite(self.grains) or not 0 <= self.grains <= 1:
            raise InputError(f"the grain share must be between 0 (off) and 1, got {self.grains}")
        if self.grain_unit not in GRAIN_UNITS:
            raise InputError(f"unknown grain unit {self.grain_unit!r}; use one of "
                             f"{', '.join(GRAIN_UNITS)}")

    @classmethod
    def preset(cls, name, **knobs):
        """The options of preset ``name`` (`PRESETS`), with ``knobs`` set over it (a
        ``gamma`` given replaces the preset's ``gammas``)."""
        if "gamma" in knobs:
            knobs.setdefault("gammas", None)
        return replace(cls(**preset_knobs(PRESETS, name)), **knobs)


def check(algo, options, graph, p, capacities, asked, device):
    """`InputError` for grains that the graph cannot give (no instructions, no call
    depths)."""
    if options.grains and options.grain_unit == "runs" and (graph.node_sid is None
                                                            or graph.node_opclass is None):
        raise InputError("block runs need an IR graph with its instructions (a trace's graph "
                         "or a graph file written by vcut); drop --grains")
    if options.grains and options.grain_unit == "calls" and graph.node_depth is None:
        raise InputError("calls as grains need an IR graph with its call depths (a trace's "
                         "graph or a graph file written by this vcut); drop --grains or use "
                         "--grain-unit runs")
    return options


def run(algo, options, cut):
    """``par`` on ``cut`` (a `vcut.cuts.base.CutInput`)."""
    src, dst, n, m, p, graph = cut.src, cut.dst, cut.n, cut.m, cut.p, cut.graph
    grains, unit = options.grains, options.grain_unit
    check_replica_memory(algo, n, p, scratch_bytes(n, m, bool(grains),
                                                   bool(grains) and unit == "calls"))
    numa = options.numa
    if numa is not None:
        # lazy: `vcut partition` without a NUMA model imports no mapping (test_cli_imports)
        from mapping.interactions import task_objects

        numa = (task_objects(src, dst, graph.node_object), *numa)
    runs = {} if not grains else dict(calls=graph.node_depth, grain_share=grains) \
        if unit == "calls" else \
        dict(grains=block_runs(graph.node_sid, graph.node_opclass), grain_share=grains)
    kept, spans = None, []
    for gamma in (options.gamma,) if options.gammas is None else options.gammas:
        res = par_assign(src, dst, cut.weight, n, p, cut.cap, imbalance=options.imbalance,
                         latency=options.latency, beta=options.beta, gamma=gamma, numa=numa,
                         chain_slack=options.chain_slack, **runs)
        spans.append([float(gamma), res[3]["model_makespan"]])
        if kept is None or res[3]["model_makespan"] < kept[3]["model_makespan"]:
            kept = res
    out, homes, schedule, info = kept
    if options.gammas is not None:
        info = {**info, "gammas": spans}
    return Assigned(out, info, homes, schedule)
