"""``vcut compare``: every method at several cluster counts (Tables 6-9)."""

import sys

from vcut_base.errors import InputError

from ._common import (
    add_analysis_options,
    add_common,
    add_trace_options,
    check_inputs,
    help_groups,
    options_from_args,
    print_json,
    progress_lines,
)
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
    inputs, sandbox, cut, mapping, outputs = help_groups(
        co, "inputs and tracing", "sandbox", "partitioning", "mapping and machine", "outputs")
    inputs.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="PROGRAM.c [...], TRACE.npz or GRAPH")
    add_trace_options(inputs, sandbox)
    cut.add_argument("-p", required=True, metavar="P1,P2,...",
                     help="cluster counts, e.g. 8,64,1024")
    cut.add_argument("--methods", metavar="M1,M2,...",
                     help="methods in column order (default: compnet,metis,pg,w-pg,wb-pg,libra,"
                     "w-libra,wb-libra)")
    add_analysis_options(cut, algo=False, inputs=inputs, mapping=mapping)
    outputs.add_argument("-o", "--output", metavar="OUTDIR",
                         help="directory for compare.json and compare.png")
    add_common(outputs)
    add_progress_option(outputs)
    co.set_defaults(func=run)


def run(args, program_args):
    check_inputs(args, program_args)
    from mapping.report import compare_tables, control_compare_lines  # lazy: start-up
    from vcut.pipeline.comparison import compare  # lazy: start-up (mapping, numba)

    try:
        ps = [int(x) for x in args.p.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"-p takes comma-separated cluster counts, e.g. 8,64,1024; got {args.p!r}") from None
    if not ps:
        raise InputError("-p needs at least one cluster count")
    bad = [x for x in ps if not 1 <= x <= 2**31 - 1]
    if bad:
        raise InputError(f"-p cluster counts must be in 1..{2**31 - 1}, got {bad[0]}")
    methods = tuple(m.strip() for m in args.methods.split(",")) if args.methods else None
    options = options_from_args(args, program_args, ps=tuple(ps), methods=methods)
    done = compare(args.inputs, options, say=progress_lines(not args.json))
    if args.json:
        print_json(done.summary())
        return 0
    if done.models:
        print("\n".join(control_compare_lines(done.models, done.rows, done.methods)))
    else:
        print("\n".join(compare_tables(done.rows, done.methods)))
    if done.files:
        print("written: " + ", ".join(done.files), file=sys.stderr)
    return 0
