"""``vcut partition --algo multilevel``: an edge cut (one part per vertex) by the runtime's
multilevel partitioner, written as a METIS ``.part`` file."""

from vcut_base.atomic import atomic_output
from vcut_base.errors import InputError

from ._common import print_json, print_rows
from ._outputs import summary_stream

__all__ = ["run_multilevel"]


def run_multilevel(args, graph, targets):
    """Partition ``graph``'s vertices into ``args.p`` parts; print the summary; exit status."""
    from runtime.multilevel import multilevel_partition  # lazy: start-up

    if not args.imbalance > 1.0:
        raise InputError(f"--imbalance must be > 1 (1.03 = 3 %), got {args.imbalance:g}")
    if not 2 <= args.p <= graph.n:  # the API's words are k; the command line's are -p
        raise InputError(f"-p must be in [2, {graph.n:,}] (the number of vertices) for the "
                         f"multilevel edge cut, got {args.p}")
    if targets is not None:  # refused in the words of the vertex cuts' --capacities
        from vcut.partition import capacity_fractions  # lazy: start-up

        capacity_fractions(args.p, "multilevel", targets)
    res = multilevel_partition(graph, args.p, device=args.device, imbalance=args.imbalance - 1.0,
                               seed=args.seed, targets=targets, refiner=args.refiner,
                               scheme=args.scheme or "kway")
    files = []
    if args.output:
        with atomic_output(args.output, "w") as fh:
            fh.write("\n".join(map(str, res.part.tolist())) + "\n")
        files.append(args.output)
    result = {
        "algo": "multilevel", "p": res.k, "device": res.device, "scheme": res.scheme,
        "refiner": res.refiner,
        "edge_cut": res.cut,
        "balance": res.balance, "imbalance": round(res.imbalance, 12), "seed": res.seed,
        "levels": [list(s) for s in res.level_sizes],
        "seconds": {k: round(v, 4) for k, v in res.seconds.items()},
        "moves": res.moves, "files": files,
        "merged_on_read": graph.meta.get("merged"),  # what reading the file merged
    }
    if res.gpu:
        result["gpu"] = res.gpu  # matching rounds, refinement passes, host repairs, bytes
    if args.json:
        if res.k <= 64:
            result["loads"] = res.loads.tolist()
        print_json(result)
        return 0
    sizes = res.level_sizes
    sec = res.seconds
    rows = [
        ("algorithm", f"multilevel edge cut (p = {res.k}, device = {res.device}, scheme = "
                      f"{res.scheme}, refiner = {res.refiner}, seed = {res.seed})"),
        ("vertices / edges", f"{sizes[0][0]:,} / {sizes[0][1]:,}"),
        ("edge cut (weight)", f"{res.cut:,}"),
        ("balance", f"{res.balance:.5f} (bound {1 + res.imbalance:g})"),
        ("levels", f"{len(sizes)}: {sizes[0][0]:,} -> {sizes[-1][0]:,} vertices"),
        ("seconds", f"{sec['total']:.3f} (coarsening {sec['coarsening']:.3f}, initial "
                    f"{sec['initial']:.3f}, refinement {sec['refinement']:.3f})"),
    ]
    if res.gpu:
        g = res.gpu
        rows.append(("on the GPU", f"{g['match_rounds']} matching rounds, {g['jet_rounds']} Jet "
                                   f"rounds and {g['jet_rebalances']} rebalancing rounds "
                                   f"({g['jet_moves']:,} moves), {g['passes']} refinement "
                                   f"passes ({g['moves'] + g['subset_moves']:,} moves), "
                                   f"{g['host_repairs']} host repairs, "
                                   f"{g['device_bytes'] / 2**20:,.1f} MiB of device memory"))
    if files:
        rows.append(("written", ", ".join(files) + " (METIS .part: one part per vertex)"))
    print_rows(rows, summary_stream(args.output))
    return 0
