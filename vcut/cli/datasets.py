"""``vcut datasets verify``: check a local copy of the benchmark graphs against the manifest."""

import sys

from vcut_base.errors import InputError

from ._common import add_common, print_json

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    d = sub.add_parser(
        "datasets",
        help="check a local copy of the benchmark graphs against vcut's manifest",
        description="Hash every graph of the manifest (ir_graph/datasets.toml, also "
        "bench/datasets.toml: file, format, counts, origin, SHA-256 of the uncompressed "
        "contents) found in DIR, as NAME.gz or NAME, and report which match.",
    )
    d.add_argument("action", choices=["verify"], help="what to do (verify)")
    d.add_argument("directory", metavar="DIR", help="directory with the graph files")
    d.add_argument("--manifest", metavar="FILE", help="another manifest (default: vcut's)")
    d.add_argument("--require-all", action="store_true",
                   help="a missing file is an error too (default: only mismatches are)")
    add_common(d)
    d.set_defaults(func=run)


def run(args, program_args):
    from ir_graph.datasets import verify_datasets  # lazy: start-up

    say = (lambda name: print(f"hashing {name}", file=sys.stderr)) if args.verbose else None
    checks = verify_datasets(args.directory, args.manifest, progress=say)
    counts = {s: sum(c.status == s for c in checks) for s in ("ok", "missing", "mismatch",
                                                               "unreadable")}
    if args.json:
        print_json({"directory": args.directory, "counts": counts,
                    "datasets": [c.__dict__ for c in checks]})
    else:
        width = max(len(c.file) for c in checks)
        for c in checks:
            print(f"{c.file:<{width}}  {c.status}" + (f"  {c.detail}" if c.detail else ""))
        print(", ".join(f"{v} {k}" for k, v in counts.items()))
    bad = [c.file for c in checks if c.status in ("mismatch", "unreadable")]
    if bad:
        raise InputError(f"{len(bad)} file(s) in {args.directory} do not match the manifest "
                         f"({', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''}); get them "
                         "again from the origin the manifest names")
    if args.require_all and counts["missing"]:
        raise InputError(f"{counts['missing']} dataset(s) of the manifest are not in "
                         f"{args.directory} (--require-all)")
    return 0
