"""``vcut batch``: many analyses on a Dask cluster, one table and one report."""

import sys

from vcut_base.errors import InputError

from ._cluster import add_cluster_options, client_for
from .analyze import batch_options
from ._common import add_common, print_json, progress_lines
from ._outputs import output_directory

__all__ = ["register", "run"]

NAMES = ["batch.csv", "batch.json", "report.html"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    ba = sub.add_parser(
        "batch",
        help="analyze many programs x inputs x p on a Dask cluster: one table, one report",
        description="Run 'vcut analyze' for every (job, argument list, p) of MANIFEST (.toml or "
        ".json; see docs/runtime.md, 'Batch analysis') on the workers of a Dask cluster and "
        "write OUTDIR/batch.csv, batch.json and report.html. A run that fails is reported in "
        "its row; the others complete (exit 1 when any failed).",
    )
    ba.add_argument("manifest", metavar="MANIFEST", help="batch manifest (.toml or .json)")
    ba.add_argument("-o", "--output", metavar="OUTDIR", required=True,
                    help="folder for batch.csv, batch.json and report.html")
    add_cluster_options(ba, "a local cluster of N worker processes (default: the CPUs here)")
    add_common(ba)
    ba.set_defaults(func=run)


def run(args, program_args):
    from vcut.pipeline.batch import load_manifest, run_batch, write_results  # lazy: start-up

    if program_args:
        raise InputError("program arguments go in the manifest's args lists, not after '--'")
    jobs = load_manifest(args.manifest)
    output_directory(args, NAMES)
    say = progress_lines(not args.json)

    def progress(done, total, row):
        if say:
            say(f"[{done}/{total}] {row['job']} {row['args']} p={row['p']}: {row['status']}"
                + (f" ({row['error']})" if row["status"] != "ok" else
                   f", speed-up {row['speedup']:.2f} ({row['seconds']:.1f} s)"))

    with client_for(args) as client:
        rows = run_batch(jobs, client, progress, options_of=batch_options)
    files = write_results(rows, args.output, title=f"vcut batch: {args.manifest}")
    failed = [r for r in rows if r["status"] != "ok"]
    if args.json:
        print_json({"runs": len(rows), "failed": len(failed), "rows": rows, "files": files})
    else:
        for r in rows:
            figures = (f"speed-up {r['speedup']:.2f}, makespan / bound "
                       f"{r['makespan_over_bound']:.3f}" if r["status"] == "ok" else r["error"])
            print(f"{r['job']:<14} {r['args']:<12} p={r['p']:<4} {r['status']:<6} {figures}")
        print(f"written: {', '.join(files)}")
    shown = _print_diagnostics(failed)
    if failed:
        print(f"error: {len(failed)} of {len(rows)} runs failed; their errors are in their "
              f"rows of {files[0]}" + (" (the compiler's diagnostics above and in batch.json "
                                       "and report.html)" if shown else ""), file=sys.stderr)
        return 1
    return 0


def _print_diagnostics(failed):
    """The compiler's diagnostics of the failed rows on stderr, each text once (the rows of
    one job at several p share it); returns whether any were printed."""
    seen = {}
    for r in failed:
        if r.get("diagnostics"):
            seen.setdefault((r["job"], r["diagnostics"]), []).append(r)
    for (job, text), same in seen.items():
        runs = ", ".join(f"{(r['args'] + ' ') if r['args'] else ''}p={r['p']}" for r in same)
        print(f"compiler diagnostics of {job} ({runs}):", file=sys.stderr)
        print(text, file=sys.stderr)
    return bool(seen)
