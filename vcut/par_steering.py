"""par's steering: which of ``par``'s clusterings the analysis keeps, judged by the simulator.

``par`` (`vcut.parallel`) decides in a timing model of its own; at many clusters that
model and the machine disagree. The analysis (`vcut.pipeline.analyze_graph`) therefore
partitions ``par`` again at other priorities, latencies, replica prices and grains,
simulates each candidate on the compact placement and keeps the fastest (`steer`),
dissolves the replicas that cost no time (`refine`), replays the clusters' task order
as the simulator ran it (`replay`) and picks between the finalists after the mapping
(`finalist`). A partitioning decision, so it lives with the partitioners; the machines,
the mapping and the simulator it calls are `mapping`'s. ``par``'s memory model on a
machine: `par_numa`.
"""

from dataclasses import replace
from functools import partial

import numpy as np

from vcut_base.errors import InputError
from vcut_base.memory import available_bytes
from vcut_base.progress import run_parallel
from ir_graph.control import has_control_edges
from ir_graph.edge_lists import execution_order
from ir_graph.replicas import replica_table
from mapping import time_aware
from mapping.interactions import VALUE_BYTES, interactions
from mapping.machine import MEMORY_CYCLES
from mapping.memory_centric import memory_centric
from mapping.simulate import rescheduled, simulate, simulation_jobs
from mapping.time_aware import compact

from . import expansion_kernels, par_kernels
from .clustering import cluster_graph
from .metrics import partition_metrics
from .parallel import CALL_GRAIN_SHARE, CHAIN_SLACKS, GAMMAS, GRAIN_SHARE, PRICES
from .quality import refine_assignment, refine_bytes

__all__ = ["PAR_NUMA", "par_numa", "STEER", "STEERING", "check_steering", "GRAINS",
           "LATENCY_SCALES", "LATENCY_GAIN", "PRICE_TOLERANCE", "WINDOW_FREE", "REPLAYS",
           "FREE_COST", "REPLAY_SHARE", "mapping_evaluations", "pair_replays",
           "replay_pair", "first_simulations",
           "REFINE_SHARES", "REFINE_TOLERANCE", "GRAIN_RATE", "GRAIN_BOUND", "FINALIST_FIELDS",
           "steer", "refine", "finish_order", "replay", "finalist"]


#: ``par`` models the NUMA distance of its tasks' memory objects (`par_numa`): at p = 8
#: every sample then runs faster on the time-aware placement than on the random one, and
#: every one but a tie faster than on round-robin's (docs/notes/mapping-par-quality.md).
#: Where the steering runs, it goes on without.
PAR_NUMA = True


def par_numa(machine, p):
    """``par``'s memory model on ``machine`` (`vcut.partition.partition_graph`'s ``numa``):
    the NUMA node of each cluster's core in the compact placement
    (`mapping.time_aware.compact`, where the priority steering simulates the
    clusters and the time-aware mapping starts), the latency matrix and a DRAM
    access's cycles."""
    node = np.asarray(machine.numa_of_core, dtype=np.int64)[compact(int(p), machine)]
    return node, np.asarray(machine.numa_latency, dtype=np.float64), float(MEMORY_CYCLES)


#: ``par``'s other priorities (`vcut.parallel.GAMMAS`) and higher replica
#: prices are tried when the first one's simulated makespan (compact
#: placement) exceeds the lower bound by more than this factor.
STEER = 1.10
#: ``steering`` of `steer` (``vcut analyze --steering``): ``auto`` (the default) runs the
#: steering on data graphs and, on a graph with control edges (`ir_graph.control`'s
#: models other than ``oracle``), keeps ``par``'s first clustering and lets the
#: window-free replay alone steer (`replay`, without the replays after it); ``full`` runs
#: the whole steering on every graph. Every instruction of a control graph waits for a
#: branch, the windowed cores of the compact simulation stall behind those waits, and the
#: replay removes the stalls: at p = 8 under ``cd`` and ``base``, on kmeans, nn, adpcm,
#: strassen8, mips and neuron, ``full`` took 4.4-6.0x the time of ``auto`` and its
#: makespans ran 2.7 % slower to 10.6 % faster (nn under ``cd``; at most 1.6 % faster on
#: the other five). It gains most at many clusters (strassen, N = 2, p = 16, ``cd``: 19 %).
STEERING = ("auto", "full")


def check_steering(steering):
    """Refuse (`InputError`) a ``steering`` not in `STEERING`."""
    if steering not in STEERING:
        raise InputError(f"unknown steering {steering!r}; use one of {', '.join(STEERING)}")


#: Where the steering runs, ``par`` also runs on whole block runs
#: (`vcut.parallel.GRAIN_SHARE`, at the machine's latency) and on whole calls
#: (`vcut.parallel.CALL_GRAIN_SHARE`, at the latency the steering kept; graphs with
#: ``node_depth``) at every priority, and the fastest of each, refined and mapped (after
#: the fastest at the latency the steering did not keep), replaces the clusters kept so
#: far where it wins after the mapping (`finalist`, in `FINALIST_FIELDS`' order).
GRAINS = True
#: ``par``'s timing model charges half a message's latency (`vcut.parallel.LATENCY_SHARE`);
#: where the steering runs, every priority is also tried with the latency scaled by
#: these factors (a quarter of the latency charged), judged by the simulator like the
#: rest: dcsum at p = 64 runs 1.26x the bound at half, 1.10x at a quarter
#: (docs/notes/mapping-par-quality.md), neuron 1.26x and 1.35x.
LATENCY_SCALES = (0.5,)
#: A clustering made with the latency scaled is kept only when its compact simulation
#: runs this much faster than the fastest at the machine's latency: a lower latency
#: in the model buys time with messages, and a small gain in the compact simulation
#: does not outlive the mapping (strassen16, p = 64: 2.6 % faster there, 0.6 % slower
#: after the mapping, with 0.75x CompNet's bytes against 0.69x; dcsum: 10 % faster
#: there, 12 % after).
LATENCY_GAIN = 0.05
#: A higher replica price (less communication) is kept while its simulated
#: makespan stays within this fraction of the fastest seen (`steer`).
PRICE_TOLERANCE = 0.02


#: After the mapping, ``par``'s clusters run their tasks in the order the simulator starts
#: them with an unbounded issue window (`replay`; ``WINDOW_FREE``), then in the order of
#: their simulated finish times, re-simulated up to ``REPLAYS`` times; the fastest kept.
WINDOW_FREE = True
REPLAYS = 3
#: The window-free replay's cost in simulations of the clusters: the window-free
#: simulation counts twice (it runs 1.0-1.5 x a windowed one: md under
#: ``cd`` 1.5 s against 1.57 s, cnn 0.38 s against 0.26 s), the order's simulation once.
FREE_COST = 3
#: What each of the replay's simulations costs in the time-aware mapping's simulations
#: where the replay takes them from the mapping's (`mapping_evaluations`): the replay's run
#: one after another, the mapping's two at a time on two CPUs.
REPLAY_SHARE = 2


def mapping_evaluations(cl, metrics, bound):
    """How many placements the time-aware mapping simulates for ``par``'s clusters ``cl``
    (None: its own default, `mapping.time_aware.evaluations`). Where the replay alone
    steers (``metrics["steering"] == "replay"``: a graph with control edges, `steer`) and
    will run (the compact placement's simulation, ``metrics["priorities"][0][1]``, is
    above `STEER` times the lower bound ``bound``: the mapping is never slower than it, so
    below that the replay does not run), the replay's simulations come out of the
    mapping's, counted in the mapping's time: the search for the schedule is the replay's
    there, and the mapping and the replay together take about as long as the mapping
    alone would (`mapping.time_aware.evaluations`). The replay's `FREE_COST` simulations
    run one after another (each needs the last), the mapping's two at a time on two CPUs,
    so each of the replay's costs `REPLAY_SHARE` of the mapping's; counted so whatever the
    number of CPUs, so that no result depends on it. Two are always left: the
    memory-centric placement and the compact one, whose simulation `steer` ran already
    (md under ``cd``, 6.8 M tasks: 2 of 4; cnn, 1.3 M: 10 of 16, its analysis 3.34 ->
    2.85 s against the ORACLE graph's 2.0 s)."""
    if metrics.get("steering") != "replay" or not WINDOW_FREE \
            or metrics["priorities"][0][1] <= STEER * bound:
        return None
    evals = time_aware.evaluations(len(cl.src))
    if evals < FREE_COST:
        return None  # no room for the replay: the mapping keeps its own
    return max(evals - REPLAY_SHARE * FREE_COST, 2)


def pair_replays(evals, known):
    """Whether the analysis judges the time-aware mapping's two placements after their
    replays (`replay_pair`) instead of by their windowed simulations: where the mapping
    would simulate the memory-centric placement alone (``evals``, `mapping_evaluations`,
    is 2) beside the compact one whose simulation is ``known`` (the steering's), so that
    no move of its search runs."""
    return WINDOW_FREE and evals == 2 and known


def replay_pair(cl, inter, machine, threshold, compact_sim, say, jobs=None):
    """``(core, clustering, SimResult, makespans, kept)``: the time-aware mapping's two
    placements, the memory-centric one and the compact one (``compact_sim``: ``(core,
    SimResult)``, the steering's windowed simulation of ``cl`` there), each replayed in
    the order of its window-free simulation (`replay`'s first step), judged after the
    replay; the fastest of the compact one's windowed simulation, the memory-centric
    one's replay and the compact one's replay kept (ties: the earlier). ``makespans``:
    the two replays' (one where both placements are the same), ``kept``: 0 for the
    compact windowed simulation, else which replay (1, 2).

    The placements' windowed simulations only choose the one to replay, and the replay
    changes the makespans most (`replay`): judging after it costs the two window-free
    simulations and the two replayed orders', ``jobs`` at a time (default
    `mapping.simulate.simulation_jobs`; the same result whatever the number), where the
    mapping then the replay took the memory-centric placement's windowed simulation, a
    window-free one and the order's, one after another where the compact placement won
    (jacobi-2d under ``cd``, 4.3 M tasks: 3.8 -> 2.3 s)."""
    vb = inter.value_bytes
    mc = np.asarray(memory_centric(inter, machine, threshold)[0], dtype=np.int64)
    compact_core, compact_res = compact_sim
    cores = [mc, compact_core] if not np.array_equal(mc, compact_core) else [compact_core]
    workers = simulation_jobs(cl, len(cores)) if jobs is None else int(jobs)
    say("  simulating " + ("both placements" if len(cores) > 1 else "the placement")
        + " without an issue window for the clusters' task order"
        + (f", {workers} at a time" if workers > 1 and len(cores) > 1 else ""))

    def replayed(core):  # independent of the other placement's: side by side
        c = rescheduled(cl, window_free_order(cl, core, machine, vb))
        return c, simulate(c, core, machine, vb)

    ran = run_parallel([partial(replayed, c) for c in cores], workers)
    best = (compact_core, cl, compact_res)
    kept = 0
    for i, (core, (c, r)) in enumerate(zip(cores, ran)):
        if r.makespan < best[2].makespan:
            best, kept = (core, c, r), i + 1
    return (*best, [r.makespan for _, r in ran], kept)


def _window_free(machine, m):
    """``machine`` with an issue window of ``m`` tasks (every unstarted task of a cluster
    of ``m`` tasks in all: no window)."""
    return replace(machine, issue_window=max(int(m), 1))


def window_free_order(cl, core, machine, value_bytes):
    """The schedule of `replay`'s first step: ``cl``'s tasks on ``core`` in the order of
    their finish times (`finish_order`) in a simulation without an issue window."""
    sim = simulate(cl, core, _window_free(machine, len(cl.src)), value_bytes)
    return finish_order(cl, sim)


def finish_order(cl, sim):
    """The positions of ``cl``'s tasks sorted by their finish times in ``sim`` (ties: the
    order they had in ``cl``'s schedule, so a topological order stays one): the schedule
    of `replay`."""
    order = np.arange(len(cl.src)) if cl.order is None else np.asarray(cl.order)
    return order[np.argsort(sim.finish[order], kind="stable")]


def replay(cl, core, machine, res, value_bytes, bound, say, replays=None):
    """``(clustering, SimResult, makespans, kept)``: ``cl`` on ``core`` with its clusters'
    tasks in orders fitter for the machine's windowed cores; the fastest kept (ties: the
    earlier), ``res`` (the mapping's order) included.

    First (`WINDOW_FREE`) the order of a simulation without an issue window: each
    cluster's tasks sorted by their finish times there (ties: the order they had, so the
    order stays topological; `finish_order`). A windowed core that runs that order starts
    the same task at the same time as the window-free one did (the oldest task it has not
    started is the next one the window-free core started, and ready then), so the machine
    runs nearly as if it had no window (not always exactly: empty tasks, whose finish
    times tie, and cores shared by clusters can start otherwise, so the order is
    simulated on the machine again): neuron at p = 64 1.362 -> 1.260x the bound and fft
    1.345 -> 1.241, the replays below included (docs/notes/mapping-par-quality.md), sort
    1.449 -> 1.151.
    Then, from the mapping's order, up to `REPLAYS` times, each from the last, the tasks
    re-sorted by their finish times in the last simulation (``par``'s schedule follows
    its timing model, not the simulator's out-of-order cores), until an order is the one
    its own simulation gives. Only where ``res`` is above `STEER` times the lower bound
    ``bound``, and within the simulation budget (`mapping.time_aware.EVAL_TASKS`; the
    window-free simulation counts twice): the window-free order first, then as many
    replays as fit. ``makespans``: those of the
    orders simulated (the window-free one's first), ``kept``: which made the order kept
    (0: the mapping's; 1: the first simulated, ...). ``replays``: at most that many replays
    (default `REPLAYS`; the analysis gives 0 where the steering did not run on a graph
    with control edges, `STEERING`: there the window-free order won each time and the
    replays after it never did, in the 12 analyses of that measurement; where the mapping
    has two placements to judge, `replay_pair` replays both instead)."""
    m = len(cl.src)
    room = int(time_aware.EVAL_TASKS // max(m, 1))  # simulations of cl that the budget allows
    free = FREE_COST if WINDOW_FREE and room >= FREE_COST else 0
    replays = min(max(REPLAYS if replays is None else int(replays), 0), room - free)
    if free + replays == 0 or res.makespan <= STEER * bound:
        return cl, res, [], 0
    best_cl, best, spans, kept = cl, res, [], 0

    def run(order):
        nonlocal best_cl, best, kept
        c = rescheduled(cl, order)
        r = simulate(c, core, machine, value_bytes)
        spans.append(r.makespan)
        if r.makespan < best.makespan:
            best_cl, best, kept = c, r, len(spans)
        return c, r

    if free:
        say("  simulating without an issue window for the clusters' task order")
        run(window_free_order(cl, core, machine, value_bytes))
    cur, r = cl, res
    for i in range(replays):
        order = finish_order(cur, r)
        if cur.order is not None and np.array_equal(order, cur.order):
            break  # the order its own simulation gives: replaying changes nothing
        say(f"  replaying the simulated order ({i + 1} of {replays})")
        cur, r = run(order)
    return best_cl, best, spans, kept


def first_simulations(cl, machine, threshold, object_bytes=None, jobs=None):
    """``(first, early)``: what `steer` and the time-aware mapping simulate first, side by
    side where a second CPU and the memory allow (``jobs``: at most that many at once;
    default `simulation_jobs`). ``first``: ``(core, SimResult)`` of ``cl`` on the compact
    placement, `steer`'s first judgement (its ``compact_sim``). ``early``: the mapping's first
    start, ``(interactions, (core, SimResult))`` of ``cl``'s memory-centric placement
    (``threshold``; the messages of `interactions` of ``object_bytes``), or None where it
    did not run (one at a time, messages of another size, or a placement the mapping
    refuses, which it then reports itself).

    The steering judges ``cl`` alone before anything else and most often keeps it; the
    mapping then finds that start simulated (`mapping.time_aware.time_aware`'s
    ``simulations``) and runs one round of simulations fewer: the README's job (fft at
    p = 8) its 15 simulations in 8 rounds of two, then 14 in 7; a trace large enough that
    the mapping simulates only that start (`mapping.time_aware.evaluations` 1; a 90 x 90
    matrix product, 28 M tasks) none after the steering's, 97.6 -> 84.6 s in all at the
    same peak memory. The same results as one after another."""
    core = compact(int(cl.p), machine)

    def judge():
        return simulate(cl, core, machine, VALUE_BYTES)

    workers = simulation_jobs(cl, 2) if jobs is None else min(int(jobs), 2)
    if workers < 2:  # one at a time: the mapping simulates its start itself
        return (core, judge()), None

    def early():
        try:
            inter = interactions(cl, object_bytes)
            if inter.value_bytes != VALUE_BYTES:
                return None
            mc = np.asarray(memory_centric(inter, machine, threshold)[0], dtype=np.int64)
        except InputError:
            return None
        return inter, (mc, simulate(cl, mc, machine, VALUE_BYTES))

    if not cl.per_edge_messages:
        _ = cl.table  # the replica table both read: made once, before they start (cached)
    res, spec = run_parallel([judge, early], 2)
    return (core, res), spec


def steer(graph, p, cl, metrics, machine, latency, bound, say, jobs=None, numa=None,
          steering="auto", compact_sim=None):
    """``(clustering, metrics, simulations)``: the fastest of ``par``'s priorities
    (`vcut.parallel.GAMMAS`) on ``machine``, judged by the simulator, then
    the highest replica price that simulates about as fast. The other
    priorities run ``jobs`` at a time (default `simulation_jobs`), the same
    result whatever the number.

    ``cl`` is ``par``'s result at the first priority; when its simulated
    makespan on the compact placement (`mapping.time_aware.compact`) is more
    than `STEER` times the lower bound (``bound``, cycles), ``par`` runs again at each other
    priority with the replica price it kept, and the clustering simulated
    fastest is kept (ties: the earlier priority). Then, at that priority, the
    prices of `vcut.parallel.PRICES` above the kept one are tried in
    increasing order, as ``par`` tries them in its timing model but judged by
    the simulator: each is kept while its makespan stays within
    `PRICE_TOLERANCE` of the fastest seen, and after the first that does
    not, the geometric mean of it and the last kept one is tried. The model
    keeps lower prices than it should at many clusters (strassen8, p = 64:
    it kept 12, whose clusters simulate at 1.17x the bound and send 0.78x
    CompNet's bytes; 24 simulates at 1.16x and sends 0.70x). Like the
    time-aware mapping's search, it stays within `mapping.time_aware.EVAL_TASKS`
    simulated tasks: a program with more than a quarter of that many tasks
    keeps the first priority and price untried against the others. The timing model inside
    ``par`` cannot judge this: it agrees with the simulator at a few clusters
    but not at many (dijkstra, p = 64: the model puts priority 0 ahead of
    0.25 by 1 %, the simulator puts it 11 % behind). ``metrics`` gains
    ``priorities`` and ``steered_prices``: ``[gamma or price, simulated
    makespan]`` of each priority and price tried (the price kept by the
    priorities first). ``simulations``: ``{"compact": (core, SimResult)}``, the kept
    clustering's simulation, from which the time-aware mapping starts, and where the
    steering ran (`GRAINS`, within the budget), ``"grains"``: ``[(unit, clustering,
    metrics, (core, SimResult))]``, the fastest on whole block runs (``"runs"``) and on
    whole calls (``"calls"``) in the compact simulation, the finalists of `finalist`
    (``metrics["grain_runs"]``, ``["grain_calls"]``: ``[γ, makespan, messages]`` of
    every priority tried; a run that kept nothing whole is no finalist).

    ``numa``: ``cl`` was built with ``par``'s memory model (`par_numa`). Where the
    steering runs, ``par`` runs again without it at the same priority and the steering
    goes on from that clustering (``metrics["memory_models"]``: ``[1, makespan]`` of the
    model's, ``[0, makespan]`` of the other's compact simulation): clusters fit for the
    compact placement lost to the free mapping of the others there (docs/mapping.md,
    "How `vcut analyze` steers `par`").
    The extra run counts against the budget.

    ``steering``: one of `STEERING`; with ``auto`` nothing runs on a graph with control
    edges (``metrics["steering"]``: ``"replay"``, and `refine` and the analysis's replays
    follow it).

    ``compact_sim``: ``(core, SimResult)`` of ``cl`` on the compact placement (messages of
    `mapping.interactions.VALUE_BYTES`) where the caller simulated it already
    (`first_simulations`).
    """
    check_steering(steering)
    core = compact(int(p), machine)

    def judge(c):  # messages of VALUE_BYTES, as `interactions` sizes them below
        return simulate(c, core, machine, VALUE_BYTES)

    # the kept clustering's simulation, handed to the mapping at the end
    res = compact_sim[1] if compact_sim is not None and np.array_equal(compact_sim[0], core) \
        else judge(cl)
    best = first = res.makespan
    tried = [[float(metrics["priority_gamma"]), best]]
    extra = int(numa is not None)  # the run without the memory model
    if steering == "auto" and has_control_edges(graph):
        say("  control edges: par's first clustering kept, the replay alone steers "
            f"(it simulates at {first / bound:.2f}x the lower bound)")
        return cl, {**metrics, "priorities": tried, "steering": "replay"}, \
            {"compact": (core, res)}
    if best <= STEER * bound or len(cl.src) * (len(GAMMAS) + extra) > time_aware.EVAL_TASKS:
        return cl, {**metrics, "priorities": tried}, {"compact": (core, res)}
    if numa is not None:  # the steering runs without the memory model (docs/mapping.md)
        say(f"  par without the memory model (with it, the first simulates at "
            f"{first / bound:.2f}x the lower bound)")
        models = [[1.0, first]]
        cl, metrics = cluster_graph(graph, p, "par", latency=latency,
                                    gamma=metrics["priority_gamma"])
        res = judge(cl)
        best = first = res.makespan
        models.append([0.0, first])
        tried = [[float(metrics["priority_gamma"]), best]]
        numa = None
    gammas = [g for g in GAMMAS if g != metrics["priority_gamma"]]
    metrics = {**metrics, "latency_scale": 1.0}
    # then the chains (priority 0) and every priority at the latencies of LATENCY_SCALES,
    # as many as the budget has simulations left
    room = int(time_aware.EVAL_TASKS // max(len(cl.src), 1)) - len(GAMMAS) - extra
    more = [(GAMMAS[0], float(s), 1.0) for s in CHAIN_SLACKS] \
        + [(g, 0.0, float(x)) for x in LATENCY_SCALES for g in GAMMAS]
    runs = [(g, 0.0, 1.0) for g in gammas] + more[:max(room, 0)]
    slacks = [s for _, s, _ in runs if s]
    scales = sorted({x for _, _, x in runs if x != 1.0}, reverse=True)
    workers = simulation_jobs(cl, len(runs)) if jobs is None else int(jobs)
    say(f"  par at priorities gamma {', '.join(f'{g:g}' for g in gammas)}"
        + (f", with the chains within {', '.join(f'{s:g}' for s in slacks)} of the longest "
           "protected" if slacks else "")
        + (f", at {', '.join(f'{x:g}' for x in scales)} times the latency" if scales else "")
        + f" (the first simulates at {first / bound:.2f}x the lower bound)"
        + (f", {workers} at a time" if workers > 1 else ""))

    # par's latency at ``scale`` times the machine's (None: par's default, the same)
    base = machine.mean_message_cycles(VALUE_BYTES) if latency is None else latency

    def scaled(scale):
        return latency if scale == 1.0 else scale * base

    def candidate(gamma, slack, scale, grains=0.0, unit="runs"):  # independent: side by side
        c, m = cluster_graph(graph, p, "par", latency=scaled(scale),
                             beta=metrics["replica_price"], gamma=gamma, chain_slack=slack,
                             numa=numa, grains=grains, grain_unit=unit)
        return c, {**m, "latency_scale": scale}, judge(c)

    chains, latencies = [], []
    unscaled = best  # the fastest at the machine's latency (these runs come first)
    # the fastest at the machine's latency and at a scaled one: (clustering, metrics,
    # simulation) each
    fastest = {True: (cl, metrics, res), False: None}
    for (gamma, slack, scale), (c, m, r) in zip(runs, run_parallel(
            [partial(candidate, *run) for run in runs], workers)):
        family = fastest[scale == 1.0]
        if family is None or r.makespan < family[2].makespan:
            fastest[scale == 1.0] = (c, m, r)
        if scale != 1.0:
            latencies.append([scale, float(gamma), r.makespan])
            if r.makespan >= (1.0 - LATENCY_GAIN) * unscaled:
                continue
        else:
            (chains if slack else tried).append([float(slack or gamma), r.makespan])
            unscaled = min(unscaled, r.makespan)
        if r.makespan < best:  # ties: the earlier
            best, cl, metrics, res = r.makespan, c, m, r
    # the other latency's fastest: a finalist (the compact simulation misjudges the
    # latency: neuron's fastest at half of it simulates 1.71x the bound there against
    # 1.56x at the whole, and runs 1.24x after the mapping against 1.26x)
    other = fastest[metrics["latency_scale"] != 1.0]
    del fastest
    kept = float(metrics["replica_price"])
    prices = [[kept, best]]

    def attempt(price):  # (clustering, metrics, simulation), or None past the budget
        if len(cl.src) * (extra + len(runs) + 1 + len(prices)) > time_aware.EVAL_TASKS:
            return None
        say(f"  par at replica price {price:g}")
        scale = metrics["latency_scale"]
        c, m = cluster_graph(graph, p, "par", latency=scaled(scale), beta=price,
                             gamma=metrics["priority_gamma"], chain_slack=metrics["chain_slack"],
                             numa=numa)
        r = judge(c)
        prices.append([float(price), r.makespan])
        return c, {**m, "latency_scale": scale}, r

    for price in [float(x) for x in PRICES if x > kept]:
        run = attempt(price)
        if run is not None and run[2].makespan > (1.0 + PRICE_TOLERANCE) * best:
            run = attempt(float(np.sqrt(kept * price)))
            if run is not None and run[2].makespan <= (1.0 + PRICE_TOLERANCE) * best:
                cl, metrics, res = run
                best = min(best, res.makespan)
            break
        if run is None:
            break
        cl, metrics, res = run
        best, kept = min(best, res.makespan), price
    out = {**metrics, "priorities": tried, "chains": chains, "latencies": latencies,
           "steered_prices": prices}
    if extra:
        out["memory_models"] = models  # [1, the model's first simulation], [0, without]
    sims = {"compact": (core, res)}
    used = extra + len(runs) + len(prices)  # simulations of these tasks so far
    finalists = []
    if GRAINS and other is not None and len(cl.src) * (used + len(GAMMAS)) <= time_aware.EVAL_TASKS:
        finalists.append(("latency", other[0], other[1], (core, other[2])))
    units = [("runs", graph.node_sid is not None and graph.node_opclass is not None,
              1.0, GRAIN_SHARE, "whole block runs"),
             ("calls", graph.node_depth is not None, metrics["latency_scale"],
              CALL_GRAIN_SHARE, "whole calls")]
    for unit, ok, scale, share, what in units:
        if not GRAINS or not ok or len(cl.src) * (used + len(GAMMAS)) > time_aware.EVAL_TASKS:
            continue
        used += len(GAMMAS)
        say(f"  par on {what} at priorities gamma {', '.join(f'{g:g}' for g in GAMMAS)}")
        # (numa is None here: the steering went on without the memory model)
        runs = run_parallel([partial(candidate, g, 0.0, scale, share, unit) for g in GAMMAS],
                            simulation_jobs(cl, len(GAMMAS)) if jobs is None else int(jobs))
        key = f"grain_{unit}"
        out[key] = [[float(g), r.makespan, r.messages] for g, (_, _, r) in zip(GAMMAS, runs)]
        runs = [run for run in runs if run[1].get("grains")]  # else par's plain clusters
        if runs:
            c, m, r = min(runs, key=lambda run: run[2].makespan)  # ties: the earlier
            finalists.append((unit, c, m, (core, r)))
    # a finalist's own figures over the steering's record
    sims["grains"] = [(unit, c, {**out, **m}, sim) for unit, c, m, sim in finalists]
    return cl, out, sims


#: The shares of the vertices (those with the most slack first) whose replicas
#: `refine` may dissolve, tried in this order until one simulates no slower.
REFINE_SHARES = (1.0, 0.5, 0.25, 0.125)
#: `refine` keeps a refinement whose simulated makespan is within this
#: fraction of the unrefined clustering's.
REFINE_TOLERANCE = 0.0025


def refine(cl, metrics, machine, bound, sims, say):
    """``(clustering, metrics, simulations)``: ``par``'s clusters with fewer
    messages where that costs no time.

    ``par`` prices replicas in its timing model, which cannot see what a
    replica costs on the machine, so at many clusters it keeps more than the
    schedule needs (strassen16, p = 64: 0.76x CompNet's bytes). The replica
    dissolving passes of the quality mode (`vcut.quality.refine_assignment`,
    no cluster above the heaviest one's work) remove the replicas of the
    vertices whose moves lower the replica count; each task keeps its place
    in ``par``'s schedule, and a vertex keeps its home while it has an edge
    there (else its master becomes its home). Moves on the longest chains
    are the ones that cost time, so the vertices are ranked by their slack
    (the longest path through them, a task costing its work and a message's
    latency for each of its ends homed on another cluster: the chains as the
    simulator runs them) and the shares of `REFINE_SHARES` of them, the most
    slack first, are tried in turn: the first whose clusters simulate
    (compact placement) within `REFINE_TOLERANCE` of the unrefined ones, with
    fewer messages, is kept, none when none is (nn, p = 64: all of them
    1.09x the unrefined clusters' makespan; an eighth 1.001x, with 0.68x
    CompNet's bytes after mapping instead of 0.73x). A tolerance of 0.5 %
    lost time after the mapping's search (cnn 1.244 -> 1.257x the bound),
    so the compact simulation is trusted to within 0.25 % only. Within
    `mapping.time_aware.EVAL_TASKS` simulated tasks, like the steering.
    Nothing is tried when the clusters' first simulation ran within `STEER`
    times the lower bound, where the steering tries nothing either: there the
    messages cost no time and moves only reshape the loads (every sample but
    the pointer chase at p = 8: refined, they ran 0.1-0.4 % slower after the
    mapping, with 2-17 % fewer messages). ``metrics`` gains ``refined``:
    ``[share, simulated makespan, messages]`` of each share tried (the first:
    0, the unrefined clusters) and ``refined_share``, the share kept (0: none).
    """
    core, res = sims["compact"]
    m, p = len(cl.src), int(cl.p)
    tried = [[0.0, res.makespan, res.messages]]
    out = {**metrics, "refined": tried, "refined_share": 0.0}
    if m == 0 or p < 2 or res.messages == 0 or refine_bytes(cl.n, m) > available_bytes() \
            or 2 * m > time_aware.EVAL_TASKS:  # no share's simulation fits the budget: rank nothing
        return cl, out, sims
    if metrics["priorities"][0][1] <= STEER * bound or metrics.get("steering") == "replay":
        return cl, out, sims  # near the bound, or control edges: as with the steering
    order = execution_order(cl.src, cl.dst)
    # a task waits a message's latency for a value homed elsewhere and for sending its
    # partial result home: the chains as the simulator runs them
    latency = machine.mean_message_cycles(VALUE_BYTES)
    waits = (cl.home[cl.src] != cl.cluster).astype(np.float64)
    waits += cl.home[cl.dst] != cl.cluster
    top, bottom = par_kernels.levels(cl.src, cl.dst, cl.weight + latency * waits,
                                np.empty(0, np.int64) if order is None else order, cl.n)
    used = np.flatnonzero(cl.home >= 0)  # the vertices with tasks, the most slack first
    rank = used[np.argsort((top + bottom)[used], kind="stable")]
    del top, bottom, used, waits
    load = np.bincount(cl.cluster, weights=cl.weight, minlength=p)
    heaviest = float(load.max() / load.mean()) if load.sum() > 0 else 1.0
    cap = np.full(p, 1.0 / p)
    incidence = expansion_kernels.incidence(cl.src, cl.dst, cl.n,  # shared
                                            np.ones(m, dtype=np.bool_))
    for share in REFINE_SHARES:
        if m * (len(tried) + 1) > time_aware.EVAL_TASKS:
            break
        movable = np.zeros(cl.n, dtype=np.bool_)
        movable[rank[:int(share * len(rank))]] = True
        cluster, info = refine_assignment(cl.src, cl.dst, cl.weight, cl.n, cl.cluster, cap,
                                          imbalance=heaviest, fm=False, vertices=movable,
                                          incidence=incidence)
        if info["refine_moves"] == 0:
            continue
        table = replica_table(cl.src, cl.dst, cluster, cl.weight, cl.n, p)
        rv = table.vertex()
        kept = np.zeros(cl.n, dtype=np.bool_)
        kept[rv[cl.home[rv] == table.cluster]] = True
        home = np.where(kept, cl.home, table.masters()).astype(np.int32)
        del kept, rv
        c = replace(cl, cluster=cluster, home=home, replicas=table)
        say(f"  dissolving replicas of {share:.0%} of the vertices: {info['refine_moves']:,} moves")
        r = simulate(c, core, machine, VALUE_BYTES)
        tried.append([float(share), r.makespan, r.messages])
        if r.makespan <= (1.0 + REFINE_TOLERANCE) * res.makespan and r.messages < res.messages:
            pm = partition_metrics(c.src, c.dst, c.weight, cluster, c.n, p)
            out.update(refined_share=float(share), replication_factor=pm.replication_factor,
                       vertex_copies=pm.vertex_copies, work_imbalance=pm.edge_weight_imbalance)
            return c, out, {"compact": (core, r)}
    return cl, out, sims


#: ``par``'s clusters on whole block runs (`vcut.parallel.GRAIN_SHARE`) replace the
#: others after the mapping when they run faster, or when the share of the makespan they
#: lose is at most this many times the share of the messages they save: 1 % of the time
#: for 5 % of the messages (the sort at p = 64: 5.1 % slower, 1.151x -> 1.210x the bound,
#: for 34 % fewer messages, 1.02x -> 0.67x CompNet's bytes;
#: docs/notes/mapping-par-quality.md).
GRAIN_RATE = 0.2
#: ... and only while their makespan stays within this factor of the lower bound: a
#: result near the bound is worth keeping fast (kmeans at p = 64: 10 % slower, 1.167x ->
#: 1.284x the bound, for 53 % fewer messages, is not taken).
GRAIN_BOUND = 1.25


#: The fields `finalist` adds for each kind of finalist: its figures against the
#: clusters kept so far, and whether it was kept.
FINALIST_FIELDS = {"latency": ("latency_finalist", "latency_kept"),
                   "runs": ("grain_finalist", "grains_kept"),
                   "calls": ("call_finalist", "calls_kept")}


def finalist(plain, grains, bound, unit="runs"):
    """The analysis kept of two mapped ``par`` clusterings, ``(cl, metrics, sims,
    interactions, placement, result, fresh)`` each: ``grains`` (a finalist of kind
    ``unit``: the other latency, whole block runs or whole calls) when it saves messages
    and its makespan is lower, or higher by at most `GRAIN_RATE` times the share of the
    messages it saves and within `GRAIN_BOUND` times the lower bound ``bound``; when it
    sends as many or more, when its makespan is lower by more than `GRAIN_RATE` times
    the share of messages it adds (the sort at p = 64: whole calls 1.0 % faster than
    whole block runs at 1.21x the bound, for 27 % more messages, 0.67x -> 0.86x
    CompNet's bytes, are not taken), or lower at all where ``plain`` runs past
    `GRAIN_BOUND` times the bound (neuron: 1.26x -> 1.24x for 29 % more messages, 0.31x
    -> 0.40x CompNet's bytes); else ``plain``. The metrics kept gain the unit's
    `FINALIST_FIELDS`: ``[makespan, messages]`` of both (``plain``'s first) and whether
    ``grains`` was kept, besides the fields of the finalists before it (``plain``'s)."""
    a, b = plain[5], grains[5]
    saved = 1.0 - b.messages / a.messages if a.messages else 0.0
    limit = a.makespan * (1.0 + GRAIN_RATE * saved)  # below a's when it adds messages
    near = GRAIN_BOUND * bound  # within it, messages count; past it, time first
    take = b.makespan <= limit and (b.makespan < a.makespan or b.makespan <= near) \
        if saved > 0 else b.makespan < limit or a.makespan > near > 0 and b.makespan < a.makespan
    kept = grains if take else plain
    figures = [[a.makespan, a.messages], [b.makespan, b.messages]]
    found, took = FINALIST_FIELDS[unit]
    before = {k: plain[1][k] for pair in FINALIST_FIELDS.values() for k in pair
              if k in plain[1]}
    return kept[0], {**kept[1], **before, found: figures, took: bool(take)}, *kept[2:]

