"""``vcut compare``: every method at several cluster counts (Tables 6-9)."""

import os
import sys

from ._common import (
    add_analysis_options,
    add_common,
    add_trace_options,
    analysis_input,
    check_inputs,
    json_text,
    print_json,
    progress_lines,
    spill_context,
)
from ._outputs import output_directory
from ._progress import add_progress_option

__all__ = ["register", "run"]


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    co = sub.add_parser(
        "compare",
        help="compare edge cuts and vertex cuts at several cluster counts (Tables 6-9)",
        description="Partition, map and simulate INPUT with every method (CompNet-style and "
        "METIS edge cuts; PG, W-PG, WB-PG, Libra, W-Libra, WB-Libra vertex cuts) for each p, "
        "and print execution time and communication relative to the first method.",
    )
    co.add_argument("inputs", nargs="+", metavar="INPUT", help="PROGRAM.c [...], TRACE.npz or GRAPH")
    co.add_argument("-p", required=True, metavar="P1,P2,...", help="cluster counts, e.g. 8,64,1024")
    co.add_argument("--methods", metavar="M1,M2,...",
                    help="methods in column order (default: compnet,metis,pg,w-pg,wb-pg,libra,"
                    "w-libra,wb-libra)")
    add_analysis_options(co, algo=False)
    co.add_argument("-o", "--output", metavar="OUTDIR", help="directory for compare.json and compare.png")
    add_trace_options(co)
    add_progress_option(co)
    add_common(co)
    co.set_defaults(func=run)


def run(args, program_args):
    check_inputs(args, program_args)
    with spill_context(args):
        return _run(args, program_args)


def _run(args, program_args):
    from vcut_base.atomic import atomic_output
    from vcut_base.errors import InputError
    from mapping.analyze import METHODS, compare_methods
    from mapping.machine import load_machine
    from mapping.report import compare_figure, compare_tables, figure_png

    try:
        ps = [int(x) for x in args.p.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"-p takes comma-separated cluster counts, e.g. 8,64,1024; got {args.p!r}") from None
    if not ps:
        raise InputError("-p needs at least one cluster count")
    bad = [x for x in ps if not 1 <= x <= 2**31 - 1]
    if bad:
        raise InputError(f"-p cluster counts must be in 1..{2**31 - 1}, got {bad[0]}")
    methods = tuple(m.strip() for m in args.methods.split(",")) if args.methods else METHODS
    if args.output:
        output_directory(args, ["compare.json", "compare.png"])
    machine = load_machine(args.machine) if args.machine else None
    say = progress_lines(not args.json)
    graph, obj_bytes, source = analysis_input(args, program_args)
    rows = compare_methods(graph, ps, methods, machine, mapper=args.mapping,
                           threshold=args.threshold, seed=args.seed, lam=args.lam,
                           order=args.order, object_bytes=obj_bytes, progress=say)
    files = []
    if args.output:
        png = figure_png(compare_figure(rows, methods, f"{source}: {graph.n:,} nodes"))
        for name, data, mode in (("compare.json", json_text({"source": source, "rows": rows},
                                                             indent=1), "w"),
                                 ("compare.png", png, "wb")):
            path = os.path.join(args.output, name)
            with atomic_output(path, mode) as fh:
                fh.write(data)
            files.append(os.path.abspath(path))
    if args.json:
        print_json({"source": source, "methods": list(methods), "rows": rows, "files": files})
        return 0
    print("\n".join(compare_tables(rows, methods)))
    if files:
        print("written: " + ", ".join(files), file=sys.stderr)
    return 0
