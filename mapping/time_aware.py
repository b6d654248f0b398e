"""The ``time-aware`` mapping: Algorithm 2's placement, improved by simulating it.

The memory-centric mapping (`mapping.memory_centric`) minimises what its
rules see: shared data and communication volume. Once the clusters really
run in parallel (``par``), what decides the makespan is when values arrive:
the latency of the messages on the critical chains and the NUMA distance of
the memory tasks. ``time-aware`` starts from the memory-centric placement and
improves it by local search with the simulator as the judge:

* the search starts from the fastest (simulated) of the memory-centric
  placement, the *compact* one (clusters in id order on the cores taken NUMA
  node by NUMA node, nearest the mesh's corner first, so that clusters that
  all share the program's data use as few memory nodes as possible), and the
  comm-greedy, round-robin, random and recursive-bisection baselines (`STARTS`,
  as many as the budget allows, in that order): the result is never slower
  than any of them, so the comparison `vcut analyze` prints never shows a
  baseline mapping ahead of it (with the three first starts alone, the random
  mapping of the same clusters ran faster on md at p = 64 and on nn and neuron
  at p = 8); a caller that simulates the baselines too (`vcut.pipeline.analyze_graph`)
  reuses these simulations;
* a move either swaps the cores of two clusters or moves a cluster to a free
  core (when there are more cores than clusters);
* half of the proposals are guided: the pair of clusters with the largest
  ``messages x hops`` not yet tried is brought together (the second cluster
  goes next to the first, swapping with whatever is there); the others are
  drawn at random (seeded);
* a move is kept when the simulated makespan drops.

The number of simulations is deterministic: `MAX_EVALS`, fewer on large
programs (at most `EVAL_TASKS` simulated tasks in all), and at least one, the
memory-centric start's, so that the mapping never costs more than a few
simulations. (Its caller simulates the placement it gets in any case: that
simulation is this one, `vcut analyze` takes it from ``simulations``.) A start
whose simulation the caller holds already (``simulations``: `par`'s steering
simulates the compact placement) is judged whatever the budget: it costs
nothing, and on a trace too large for more than one simulation it may be the
faster (the 74 M-node dijkstra trace at p = 8: the compact placement 23,579,458
cycles, the memory-centric one 23,790,629).
"""

import functools

import numpy as np

from vcut_base.progress import run_parallel

from . import baselines
from .memory_centric import memory_centric
from .simulate import simulate, simulation_jobs

__all__ = ["time_aware", "compact", "STARTS", "MAX_EVALS", "EVAL_TASKS"]

#: The placements the search may start from, after the memory-centric one.
STARTS = ("compact", "comm-greedy", "round-robin", "random", "recursive-bisection")
#: Most simulations of candidate placements (the starts included): 6 starts and up to 10
#: moves. Against 12 and 24 on the ten samples: with 12 the search beat the random mapping
#: of the same clusters on one program fewer at p = 8; 24 took a third more time for one
#: more win, at p = 64.
MAX_EVALS = 16
#: The candidates' simulations cover at most this many tasks in all.
EVAL_TASKS = 3e7


def evaluations(tasks):
    """How many candidate placements `time_aware` simulates for ``tasks`` tasks: at most
    `MAX_EVALS` and `EVAL_TASKS` tasks in all, at least one (the memory-centric start)."""
    return int(max(min(MAX_EVALS, EVAL_TASKS // max(int(tasks), 1)), 1))


def time_aware(cl, inter, machine, threshold, seed=0, evals=None, simulations=None, jobs=None):
    """``(core, info)``: the placement of `Clustering` ``cl`` (see the module docstring).

    ``info``: ``makespan_start`` and ``makespan`` (simulated, cycles) and
    ``evaluations``, ``accepted`` (moves simulated and kept). ``evals`` (default
    `evaluations`): the budget; 0 simulates nothing and keeps the memory-centric
    placement (``makespan`` None). ``simulations``
    (a dict), when given, receives ``name: (core, SimResult)`` for every start
    simulated (``memory-centric`` and `STARTS`) and for the result
    (``time-aware``), so that a caller comparing mappings need not simulate
    them again; a start it holds already (``name: (core, SimResult)`` of the same
    placement of ``cl`` with messages of ``inter.value_bytes``, as par's
    priority steering (`vcut.par_steering.steer`) leaves the compact one) is not simulated
    again, and is judged even where the budget leaves no room for it. The starts are
    simulated ``jobs`` at a time (threads; default `mapping.simulate.simulation_jobs`),
    the same result whatever the number.
    """
    core, _ = memory_centric(inter, machine, threshold)
    core = np.asarray(core, dtype=np.int64)
    evals = evaluations(len(cl.src)) if evals is None else int(evals)
    if evals <= 0:
        return core, {"makespan_start": None, "makespan": None, "evaluations": 0, "accepted": 0}
    vb = inter.value_bytes

    def judge(c, name=None, res=None):
        """Simulate placement ``c`` (recorded as ``name``; ``res``: its simulation, when
        run already); True when it is the fastest yet."""
        nonlocal best, best_res, core
        if res is None:
            res = simulate(cl, c, machine, vb)
        if name is not None and simulations is not None:
            simulations[name] = (c, res)
        if res.makespan < best:
            best, best_res, core = res.makespan, res, c
            return True
        return False

    best, best_res = np.inf, None

    def start(name):
        return compact(inter.p, machine) if name == "compact" else \
            baselines.baseline(name, inter, machine, seed)

    starts = 1 + min(len(STARTS), evals - 1)  # the starts within the budget
    held = simulations or {}
    firsts = [("memory-centric", core)] + [
        (name, np.asarray(start(name), dtype=np.int64)) for name in STARTS[:starts - 1]]
    # beyond the budget, the starts the caller simulated already: free to judge
    beyond = [(name, np.asarray(start(name), dtype=np.int64))
              for name in STARTS[starts - 1:] if name in held]
    known = {}  # starts the caller simulated already (same placement)
    for name, c in firsts + beyond:
        have = held.get(name)
        if have is not None and np.array_equal(have[0], c):
            known[name] = have[1]
    firsts += [(name, c) for name, c in beyond if name in known]
    todo = [(name, c) for name, c in firsts if name not in known]
    workers = simulation_jobs(cl, len(todo)) if jobs is None else int(jobs)
    ran = run_parallel([functools.partial(simulate, cl, c, machine, vb) for _, c in todo],
                       workers)
    known.update((name, res) for (name, _), res in zip(todo, ran))
    for name, c in firsts:  # judged in order, as if one after another
        judge(c, name, known[name])
        if name == "memory-centric":
            start = best
    rng = np.random.default_rng(seed)
    propose = functools.partial(_propose, inter.p, machine.cores, machine.hop_matrix(),
                                (inter.comm + inter.comm.T) / max(vb, 1), rng)
    tried = set()
    accepted = 0
    moves = evals - starts  # the starts are simulated
    pair = (simulation_jobs(cl, 2) if jobs is None else int(jobs)) >= 2
    i = 0
    while i < moves:
        cand = propose(i, core, tried)
        if not pair or i + 1 == moves:
            accepted += cand is not None and judge(cand)
            i += 1
            continue
        # Speculation: move i + 1 is proposed as if move i is rejected (the usual case) and
        # both are simulated at once; when move i is kept, move i + 1 is proposed again
        # from the new placement, with the random state and tried pairs it had then, so
        # the result is the one-after-another search's, move for move.
        state, tried_then = rng.bit_generator.state, set(tried)
        spec = propose(i + 1, core, tried)
        cands = [c for c in (cand, spec) if c is not None]
        ran = iter(run_parallel([functools.partial(simulate, cl, c, machine, vb) for c in cands],
                                len(cands)))
        res = next(ran) if cand is not None else None
        res_spec = next(ran) if spec is not None else None
        if cand is not None and judge(cand, res=res):
            accepted += 1
            rng.bit_generator.state, tried = state, tried_then
            i += 1
            continue
        accepted += spec is not None and judge(spec, res=res_spec)
        i += 2
    if simulations is not None:
        simulations["time-aware"] = (core, best_res)
    return core, {"makespan_start": start, "makespan": best, "evaluations": evals,
                  "accepted": accepted}


def _propose(p, k, hops, msgs, rng, i, core, tried):
    """Move ``i`` of the local search from placement ``core`` (a new array), or None when
    there is nothing to try: even moves bring the heaviest far-apart pair not yet in
    ``tried`` (updated) together, odd ones move a random cluster (``rng``) to a random core."""
    cand = core.copy()
    if i % 2 == 0:  # guided: bring the heaviest far-apart pair together
        h = hops[np.ix_(core, core)]
        score = np.triu(msgs * h, 1)
        for a, b in tried:
            score[a, b] = 0.0
        a, b = np.unravel_index(int(np.argmax(score)), score.shape)
        if score[a, b] <= 0.0:
            return None
        tried.add((int(a), int(b)))
        near = [c for c in np.argsort(hops[core[a]], kind="stable").tolist()
                if c != core[a] and c != core[b]]
        if not near or hops[core[a], near[0]] >= hops[core[a], core[b]]:
            return None  # nothing nearer to a than b already is
        _move(cand, int(b), near[0])
    else:  # random: swap two clusters or move one to a free core
        a = int(rng.integers(p))
        target = int(rng.integers(k))
        if target == cand[a]:
            return None
        _move(cand, a, target)
    return cand


def compact(p, machine):
    """Clusters ``0..p-1`` on the cores ordered by NUMA node, then by mesh
    position (row, column); beyond the cores, around again."""
    r, c = np.divmod(np.arange(machine.cores), machine.mesh_cols)
    cores = np.lexsort((c, r, np.asarray(machine.numa_of_core)))
    return cores[np.arange(p) % machine.cores].astype(np.int64)


def _move(core, a, target):
    """Put cluster ``a`` on core ``target``; the clusters there take its old core."""
    here = np.flatnonzero(core == target)
    core[here] = core[a]
    core[a] = target
