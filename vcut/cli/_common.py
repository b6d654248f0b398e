"""Helpers shared by the subcommands: common options, the pipeline's options of a command
line (`options_from_args`), checks of the inputs named, printing."""

import contextlib
import os
import shlex
import sys
import time

from vcut_base.arrays import spilling
from vcut_base.errors import InputError
from vcut.pipeline.options import AnalysisOptions, TraceOptions, is_source
from vcut.pipeline.outputs import json_text

__all__ = ['GROUPS', 'help_groups', 'add_common', 'add_compile_options', 'add_trace_options',
           'add_sandbox_options', 'add_analysis_options', 'add_graph_options', 'read_graph_file',
           'merged_on_read', 'note_merged', 'spill_context', 'check_inputs', 'ACCEPTS',
           'options_from_args', 'trace_options', 'progress_lines', 'print_rows', 'parse_numbers',
           'int_option', 'float_option', 'print_json', 'MAX_SEED']

#: Largest ``--seed`` (seeds reach numba kernels as int64).
MAX_SEED = 2**63 - 1


#: Descriptions of the ``--help`` groups the commands share, by title (`help_groups`).
GROUPS = {
    "inputs and tracing": "what to read; for C sources, how they are compiled and traced",
    "sandbox": "limits, confinement and environment of the traced program",
    "partitioning": "the clusters and the method that forms them",
    "mapping and machine": "the machine and how the clusters are placed on its cores",
    "outputs": "what is written and shown",
}


def help_groups(parser, *groups):
    """``parser``'s argument groups (``--help`` sections, in this order), one per title
    of ``groups``: a title of `GROUPS` or a ``(title, description)`` pair."""
    return [parser.add_argument_group(*((g, GROUPS[g]) if isinstance(g, str) else g))
            for g in groups]


def add_common(p):
    """``--json`` and ``--verbose`` on ``p`` (a parser or one of its groups)."""
    p.add_argument("--json", action="store_true", help="print one JSON object of results on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and compiler warnings")


def add_compile_options(p):
    p.add_argument("-O", dest="opt", default="0", choices=["0", "1", "2", "3", "s", "z", "g"],
                   help="optimisation level of the C compilation (default 0)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro (repeatable)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add an include directory (repeatable)")
    p.add_argument("-l", dest="libs", action="append", default=[], metavar="LIB",
                   help="load a shared library the program needs, e.g. -l z (repeatable)")
    p.add_argument("--cflag", dest="cflags", action="append", default=[], metavar="FLAG",
                   help="pass a further flag to the C compiler (repeatable)")


def add_trace_options(t, sandbox=None):
    """The options of tracing a C program: its compilation (`add_compile_options`),
    ``--roi`` and ``--no-timing`` on ``t``; its run's limits and confinement
    (`add_sandbox_options`) on ``sandbox`` (default ``t``)."""
    add_compile_options(t)
    t.add_argument("--roi", action="append", default=[], metavar="FUNC",
                   help="trace only FUNC and what it calls (repeatable; default: everything)")
    t.add_argument("--no-timing", action="store_true",
                   help="do not time memory operations with the cycle counter")
    add_sandbox_options(t if sandbox is None else sandbox)


def add_sandbox_options(t):
    """Limits, confinement and environment of the traced program (docs/frontend.md,
    "The sandbox")."""
    t.add_argument("--timeout", type=float_option("--timeout", 0.0, 1e9, low_open=True),
                   default=120.0, metavar="S",
                   help="wall-clock limit in seconds (default 120)")
    t.add_argument("--memory-limit", type=int_option("--memory-limit", 1, 2**43 - 1),
                   default=4096, metavar="MiB",
                   help="address-space limit of the traced program in MiB (default 4096)")
    t.add_argument("--max-instructions", type=int_option("--max-instructions", 1, 2**63 - 1),
                   default=50_000_000, metavar="N",
                   help="dynamic-instruction budget; the trace is cut and flagged past it "
                   "(default 50000000)")
    t.add_argument("--file-limit", type=int_option("--file-limit", 1, 2**43 - 1), default=1024,
                   metavar="MiB",
                   help="largest file the program may write, in MiB (default 1024)")
    t.add_argument("--sandbox", default="auto",
                   choices=["auto", "namespaces", "seccomp", "rlimits", "none"],
                   help="confinement of the traced program: auto takes the strongest level the "
                   "kernel grants; a level name requires it (default auto)")
    t.add_argument("--no-sandbox", action="store_true",
                   help="run the program with your rights (same as --sandbox none)")
    t.add_argument("--cwd", metavar="DIR",
                   help="working directory of the program (for input files)")
    t.add_argument("--stdin", metavar="FILE", help="file to feed the program on stdin ('-': ours)")
    t.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="environment variable of the program (repeatable); it gets no others")
    t.add_argument("--keep-files", metavar="DIR",
                   help="copy the files the program writes in its working directory to DIR "
                   "(with the namespace sandbox they are otherwise discarded)")


def add_analysis_options(p, algo=True, *, inputs=None, mapping=None):
    """The options ``vcut analyze`` (``algo``) and ``vcut compare`` share: the partitioning's
    on ``p``; the machine's and the mapping's on ``mapping``; which part of the input and
    its weights on ``inputs`` (each default ``p``)."""
    inputs = p if inputs is None else inputs
    mapping = p if mapping is None else mapping
    if algo:
        p.add_argument("--algo", default="par", metavar="METHOD",
                       help="a vertex cut (par: parallelism-aware, wb-libra, w-libra, libra, "
                       "wb-pg, w-pg, pg, hdrf, dbh, spac, ...) or an edge cut (metis, compnet) "
                       "(default par)")
    p.add_argument("--seed", type=int_option("--seed", 0, MAX_SEED), default=0,
                   help="seed of random choices (default 0)")
    p.add_argument("--steering", default="auto", choices=["auto", "full"],
                   help="how far par's candidates are searched by simulation: auto (default: "
                   "all of them on data graphs; on graphs with control edges, --control other "
                   "than oracle, par's first clustering with its tasks reordered by a "
                   "window-free simulation) or full (all of them on every graph)")
    p.add_argument("--lambda", dest="lam", type=float, default=1.0,
                   help="balance bound of the WB variants, >= 1 (default 1)")
    p.add_argument("--order", default="given", choices=["given", "random", "bfs", "dfs"],
                   help="edge stream order of the streaming vertex cuts (default: as given, "
                   "i.e. execution order for IR graphs)")
    mapping.add_argument("--machine", metavar="SPEC",
                         help="table2:P, mesh:RxC, host, hwloc:FILE.xml or a JSON machine file "
                         "(default: table2:P, one core per cluster)")
    placement = "time-aware" if algo else "memory-centric"  # compare: the source's tables
    mapping.add_argument("--mapping", default=placement,
                         choices=["time-aware", "memory-centric", "round-robin", "random",
                                  "comm-greedy", "recursive-bisection"],
                         help=f"cluster-to-core mapping (default {placement}; time-aware: "
                         "memory-centric improved by simulating moves)")
    mapping.add_argument("--threshold", type=int_option("--threshold", 1, 2**31 - 1), default=4,
                         help="most clusters the memory-centric mapping puts on one core "
                         "(default 4)")
    inputs.add_argument("--window", metavar="START:END|roi:K[:L]",
                        help="analyse nodes START..END-1 only (a slice of the run; edges across "
                        "its ends dropped and counted), roi:K the K-th (from 0) activation of "
                        "--roi, or roi:K:L activations K..L-1")
    inputs.add_argument("--weights", choices=["measured", "model"], default="model",
                        help="edge weights of a C program or trace: the cache model "
                        "(deterministic, default) or the cycles measured in the trace")
    add_control_options(inputs, several=not algo)
    _add_duplicates(inputs)
    inputs.add_argument("--spill", metavar="DIR",
                        help="analyse a trace larger than memory: map it and keep "
                        "the large arrays (graph, partition, replicas, simulation) memory-mapped "
                        "in scratch files in DIR, deleted when freed")


def add_control_options(p, several=False, machine=True):
    """``--control`` and ``--branch-latency`` (`ir_graph.control`): the control-flow model
    of the graph; ``several``: a comparison's list of models or ``all``."""
    p.add_argument("--control", default="oracle", metavar="MODEL" + (",..." if several else ""),
                   help="control-flow model (Lam and Wilson): oracle (default: data "
                   "dependences only), sp-cd-mf, sp-cd, sp, cd-mf, cd or base"
                   + ("; several, comma-separated, or all" if several else ""))
    p.add_argument("--branch-latency", type=latency_option, metavar="CYCLES",
                   help="cycles from a branch to an instruction that waits for it (default "
                   + ("the machine's branch_cycles, 1)" if machine else "1)"))


def latency_option(text):
    """argparse ``type`` of ``--branch-latency``: a finite number >= 0 (`InputError`)."""
    from ir_graph.control import check_latency  # (light: no kernels)

    try:
        value = float(text)
    except ValueError:
        value = text
    try:
        return check_latency(value)
    except InputError as exc:
        raise InputError(f"--branch-latency: {exc}") from None


latency_option.__name__ = "number"


#: ``--format`` values: `ir_graph.formats.FORMATS`.
GRAPH_FORMATS = ["metis", "edgelist", "mtx", "lg", "npz"]


def add_graph_options(p, help="graph file format (default: from the suffix)"):
    """``--format`` and ``--duplicates``: how a command reads a graph file (`read_graph_file`)."""
    p.add_argument("--format", choices=GRAPH_FORMATS, help=help)
    _add_duplicates(p)


def _add_duplicates(p):
    p.add_argument("--duplicates", choices=["first", "sum", "keep"], default="first",
                   help="an edge listed again (u v twice; v u after u v if undirected): merged "
                   "keeping the first weight (first, default) or the sum (sum), or kept (keep); "
                   "files vcut wrote are read as written")


def read_graph_file(args, path=None, directed=None):
    """`ir_graph.read_graph` of ``path`` (default ``args.graph``) with the command's
    ``--format`` and ``--duplicates``; ``directed`` as `read_graph` takes it."""
    from ir_graph import read_graph  # lazy: start-up (vcut trace reads no graph file)

    return read_graph(path or args.graph, getattr(args, "format", None),
                      duplicates=getattr(args, "duplicates", "first"), directed=directed)


def merged_on_read(g, say=True):
    """What reading merged (``g.meta["merged"]``, None for a file read as written), and
    with ``say`` a note on stderr when it merged any edge."""
    return note_merged(g.meta.get("merged"), g.meta.get("source", "the graph"), say)


def note_merged(merged, source, say=True):
    """``merged`` (a reader's ``meta["merged"]``, or None), with ``say`` noted on stderr
    for the graph file ``source`` when any edge was merged."""
    if say and merged and (merged["repeated_edges"] or merged["reverse_pairs"]):
        weight = ("the first line's weight (--duplicates sum adds them)"
                  if merged["duplicates"] == "first" else "their weights summed")
        print(f"note: {source}: {merged['reverse_pairs']:,} edges "
              f"listed both ways (u v and v u) and {merged['repeated_edges']:,} repeated lines "
              f"merged into one edge each, {weight}; --duplicates keep reads every line as an "
              "edge", file=sys.stderr)
    return merged


def spill_context(args):
    """``vcut_base.arrays.spilling(args.spill)`` for ``--spill DIR``; a no-op without it."""
    return spilling(args.spill) if getattr(args, "spill", None) else contextlib.nullcontext()


_SOURCES = "C sources (.c, or .ll LLVM IR)"
_TRACE = "one trace (.npz from 'vcut trace')"
_GRAPH = ("one graph file (.graph, .metis, .edgelist, .edges, .el, .txt, .mtx, .lg, optionally "
          ".gz; or .npz from 'vcut graph')")
#: What each command that runs programs reads, as its messages name it.
ACCEPTS = {"trace": _SOURCES, "graph": f"{_SOURCES} or {_TRACE}",
           "analyze": f"{_SOURCES}, {_TRACE} or {_GRAPH}"}
ACCEPTS["compare"] = ACCEPTS["analyze"]


def check_inputs(args, program_args):
    """Refuse, before any work, the positional inputs the command cannot take.

    After a source, an input that is neither a source nor (for graph, analyze and
    compare) a trace or graph file is a program argument given without ``--``: the
    message says so with the corrected command line. A first input that is none of
    what the command reads (`ACCEPTS`) is named with that list; ``vcut trace`` leaves
    that to the compiler's check.
    """
    command = args.command
    inputs = list(getattr(args, "sources", None) or args.inputs)
    takes = f"vcut {command} takes {ACCEPTS[command]}"
    if is_source(inputs[0]):
        for k, path in enumerate(inputs[1:], 1):
            if not (is_source(path) or _trace_or_graph(command, path)):
                raise InputError(
                    f"{shlex.quote(path)} is not a C source file; program arguments go after "
                    f"--: {_corrected(args, inputs, k, program_args)}")
        if not all(is_source(p) for p in inputs):
            raise InputError(f"{takes}; not a mix of them: got {', '.join(inputs)}")
        return
    if command == "trace":
        return  # compile_program names the file and what trace takes
    path = inputs[0]
    if not os.path.exists(path):
        raise InputError(f"input not found: {path}; {takes}")
    if not _trace_or_graph(command, path):
        ext = os.path.splitext(path)[1].lower()
        raise InputError(f"{path} is not an input vcut {command} takes (extension "
                         f"{ext or 'none'!r}); give {ACCEPTS[command]}")
    if len(inputs) > 1:
        raise InputError(f"{takes}, not several: got {', '.join(inputs)}")


def _trace_or_graph(command, path):
    """Whether ``command`` reads ``path`` as a trace or graph file (by its suffix)."""
    from ir_graph.formats import detect_format  # lazy: start-up

    if command == "trace":
        return False
    if command == "graph":
        return path.lower().endswith(".npz")
    try:
        detect_format(path)
    except InputError:
        return False
    return True


def _corrected(args, inputs, k, program_args):
    """The command line with ``inputs[k:]`` moved after ``--`` (before the program
    arguments already there): the typed one (``args.command_line``) when known."""
    typed = getattr(args, "command_line", None) or []
    n = len(inputs)
    words = next((typed[:i + k] + typed[i + n:] for i in range(1, len(typed) - n + 1)
                  if typed[i:i + n] == inputs), [args.command, *inputs[:k]])
    return "vcut " + shlex.join([*words, "--", *inputs[k:], *program_args])


def trace_options(args, program_args):
    """The `TraceOptions` of a command line that runs a program (``vcut trace``, ``graph``,
    ``analyze``, ``compare``): its compilation, limits, sandbox and ``program_args``."""
    return TraceOptions(
        args=tuple(program_args), opt=args.opt, defines=tuple(args.defines),
        include_dirs=tuple(args.include_dirs), libs=tuple(args.libs),
        cflags=tuple(args.cflags), roi=tuple(args.roi),
        max_instructions=args.max_instructions, timeout=args.timeout,
        memory_limit=args.memory_limit, file_limit=args.file_limit, cwd=args.cwd,
        stdin=args.stdin, timing=not args.no_timing,
        sandbox="none" if args.no_sandbox else args.sandbox, env=tuple(args.env),
        keep_files=args.keep_files, verbose=args.verbose)


def options_from_args(args, program_args, **given):
    """The `AnalysisOptions` of a ``vcut analyze`` or ``vcut compare`` command line;
    ``given`` sets what the command reads in its own way (``ps``, ``methods``)."""
    read = {name: getattr(args, name) for name in (
        "machine", "mapping", "threshold", "lam", "order", "seed", "window", "weights",
        "spill", "duplicates", "control", "branch_latency", "steering") if name in vars(args)}
    if "algo" in vars(args):  # vcut analyze
        read.update(p=args.p, algo=args.algo, partition=args.partition,
                    baselines=not args.no_baselines, compare_methods=args.compare_methods,
                    methods=tuple(m.strip() for m in args.methods.split(",") if m.strip()),
                    windows=args.windows, window_size=args.window_size, device=args.device,
                    control_models=args.control_models)
    read["output"] = args.output
    read.update(given)
    return AnalysisOptions(**read, trace=trace_options(args, program_args))


def progress_lines(enabled):
    if not enabled or not sys.stderr.isatty():
        return None
    t0 = time.perf_counter()

    def say(line):
        sys.stderr.write(f"[{time.perf_counter() - t0:7.1f} s] {line}\n")
        sys.stderr.flush()

    return say


def print_rows(rows, stream=None):
    """A command's results as aligned ``name  value`` lines, on stdout unless told otherwise."""
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}", file=stream or sys.stdout)


def int_option(name, lo, hi):
    """argparse ``type`` of option ``name``: an integer in ``lo..hi``.

    Anything else raises `InputError` (``error: ...``, exit 2): a negative
    seed or a budget past 2^63 would otherwise reach numpy or a kernel.
    """

    span = f"a positive integer (at most {hi})" if lo == 1 else f"an integer in {lo}..{hi}"

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise InputError(f"{name} must be {span}, got {text!r}") from None
        if not lo <= value <= hi:
            raise InputError(f"{name} must be {span}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def int_list_option(name, lo, hi):
    """argparse ``type`` of option ``name``: comma-separated integers in ``lo..hi``
    (``8,32,128``), as a list in the order given, repeats dropped."""
    one = int_option(name, lo, hi)

    def parse(text):
        values = [one(t.strip()) for t in text.split(",") if t.strip()]
        if not values:
            raise InputError(f"{name} must be one or more integers separated by commas, "
                             f"got {text!r}")
        return list(dict.fromkeys(values))

    parse.__name__ = "integers"
    return parse


def float_option(name, lo, hi, low_open=False):
    """argparse ``type`` of option ``name``: a finite number in ``[lo, hi]`` (``(lo, hi]``)."""

    def parse(text):
        span = f"{'(' if low_open else '['}{lo:g}, {hi:g}]"
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"{name} takes a number in {span}, got {text!r}") from None
        if not (lo < value <= hi if low_open else lo <= value <= hi):
            raise InputError(f"{name} must be a number in {span}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def print_json(obj):
    """Print ``obj`` as one line of strict JSON on stdout (`json_text`)."""
    print(json_text(obj))


def parse_numbers(text, what):
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{what} must be comma-separated numbers, got {text!r}") from None
