"""Helpers shared by the subcommands: common options, tracing a program, printing."""

import json
import math
import os
import sys
import time

import numpy as np

__all__ = ['add_common', 'add_compile_options', 'add_trace_options', 'add_sandbox_options', 'add_analysis_options', 'add_graph_options', 'read_graph_file', 'merged_on_read', 'note_merged', 'spill_context', 'analysis_input', 'check_inputs', 'is_source', 'note_truncated', 'ACCEPTS', 'SOURCE_SUFFIXES', 'parse_window', 'parse_window_size', 'npz_format', 'progress_lines', 'output_dir', 'progress_printer', 'run_trace', 'keep_notes', 'KEEP_NOTES_SHOWN', 'print_rows', 'parse_numbers', 'int_option', 'float_option', 'json_text', 'print_json', 'MAX_SEED']

#: Largest ``--seed`` (seeds reach numba kernels as int64).
MAX_SEED = 2**63 - 1


def add_common(p):
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


def add_trace_options(t):
    t.add_argument("--roi", action="append", default=[], metavar="FUNC",
                   help="trace only FUNC and what it calls (repeatable; default: everything)")
    t.add_argument("--max-instructions", type=int_option("--max-instructions", 1, 2**63 - 1),
                   default=50_000_000, metavar="N",
                   help="dynamic-instruction budget; the trace is cut and flagged past it "
                   "(default 50000000)")
    t.add_argument("--timeout", type=float_option("--timeout", 0.0, 1e9, low_open=True),
                   default=120.0, metavar="S",
                   help="wall-clock limit in seconds (default 120)")
    t.add_argument("--memory-limit", type=int_option("--memory-limit", 1, 2**43 - 1),
                   default=4096, metavar="MiB",
                   help="address-space limit of the traced program in MiB (default 4096)")
    t.add_argument("--cwd", metavar="DIR", help="working directory of the program (for input files)")
    t.add_argument("--stdin", metavar="FILE", help="file to feed the program on stdin ('-': ours)")
    t.add_argument("--no-timing", action="store_true",
                   help="do not time memory operations with the cycle counter")
    add_sandbox_options(t)
    add_compile_options(t)


def add_sandbox_options(t):
    """Options of the traced program's confinement (docs/frontend.md, "The sandbox")."""
    t.add_argument("--sandbox", default="auto",
                   choices=["auto", "namespaces", "seccomp", "rlimits", "none"],
                   help="confinement of the traced program: auto takes the strongest level the "
                   "kernel grants; a level name requires it (default auto)")
    t.add_argument("--no-sandbox", action="store_true",
                   help="run the program with your rights (same as --sandbox none)")
    t.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="environment variable of the program (repeatable); it gets no others")
    t.add_argument("--keep-files", metavar="DIR",
                   help="copy the files the program writes in its working directory to DIR "
                   "(with the namespace sandbox they are otherwise discarded)")
    t.add_argument("--file-limit", type=int_option("--file-limit", 1, 2**43 - 1), default=1024,
                   metavar="MiB",
                   help="largest file the program may write, in MiB (default 1024)")


def add_analysis_options(p, algo=True):
    if algo:
        p.add_argument("--algo", default="par", metavar="METHOD",
                       help="partitioning: a vertex cut (par: parallelism-aware, wb-libra, w-libra, "
                       "libra, wb-pg, w-pg, pg, hdrf, dbh, spac, ...) or an edge cut (metis, compnet) "
                       "(default par)")
    p.add_argument("--machine", metavar="SPEC",
                   help="table2:P, mesh:RxC, host, hwloc:FILE.xml or a JSON machine file "
                   "(default: table2:P, one core per cluster)")
    mapping = "time-aware" if algo else "memory-centric"  # compare: the source's tables
    p.add_argument("--mapping", default=mapping,
                   choices=["time-aware", "memory-centric", "round-robin", "random", "comm-greedy",
                            "recursive-bisection"],
                   help=f"cluster-to-core mapping (default {mapping}; time-aware: memory-centric "
                   "improved by simulating moves)")
    p.add_argument("--threshold", type=int_option("--threshold", 1, 2**31 - 1), default=4,
                   help="most clusters the memory-centric mapping puts on one core (default 4)")
    p.add_argument("--lambda", dest="lam", type=float, default=1.0,
                   help="balance bound of the WB variants, >= 1 (default 1)")
    p.add_argument("--order", default="given", choices=["given", "random", "bfs", "dfs"],
                   help="edge stream order of the streaming vertex cuts (default: as given, "
                   "i.e. execution order for IR graphs)")
    p.add_argument("--seed", type=int_option("--seed", 0, MAX_SEED), default=0,
                   help="seed of random choices (default 0)")
    p.add_argument("--window", metavar="START:END|roi:K[:L]",
                   help="analyse only nodes START..END-1 of the graph: for a program or trace, "
                   "a contiguous slice of the run in execution order (edges into or out of "
                   "the slice are dropped and counted); roi:K is the K-th activation (from 0) "
                   "of the --roi function(s), roi:K:L activations K..L-1")
    p.add_argument("--weights", choices=["measured", "model"], default="model",
                   help="edge weights of a C program or trace: the cache model (deterministic, "
                   "default) or the cycles measured in the trace")
    p.add_argument("--spill", metavar="DIR",
                   help="disk-backed analysis: map a trace file instead of reading it and keep "
                   "the large arrays (graph, partition, replicas, simulation) in memory-mapped "
                   "scratch files in DIR (deleted as they are freed), so that a trace larger "
                   "than memory can be analysed; slower when the memory runs short")
    _add_duplicates(p)


#: ``--format`` values: `ir_graph.formats.FORMATS`.
GRAPH_FORMATS = ["metis", "edgelist", "mtx", "lg", "npz"]


def add_graph_options(p, help="graph file format (default: from the suffix)"):
    """``--format`` and ``--duplicates``: how a command reads a graph file (`read_graph_file`)."""
    p.add_argument("--format", choices=GRAPH_FORMATS, help=help)
    _add_duplicates(p)


def _add_duplicates(p):
    p.add_argument("--duplicates", choices=["first", "sum", "keep"], default="first",
                   help="a graph file's edge listed again (u v twice; in an undirected file also "
                   "v u after u v) is merged into the first, which keeps its weight (first, the "
                   "default) or gets their weights summed (sum); keep: every line an edge of its "
                   "own. Files vcut wrote are read as written")


def read_graph_file(args, path=None, directed=None):
    """`ir_graph.read_graph` of ``path`` (default ``args.graph``) with the command's
    ``--format`` and ``--duplicates``; ``directed`` as `read_graph` takes it."""
    from ir_graph import read_graph

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
    import contextlib

    from vcut_base.arrays import spilling

    return spilling(args.spill) if getattr(args, "spill", None) else contextlib.nullcontext()


def parse_window(text):
    """``--window``: ``START:END`` nodes or ``roi:K``, ``roi:K:L`` ROI activations.

    Returns an `ir_graph.windows.NodeWindow` (a pair ``(start, end or None)``:
    either side of ``START:END`` may be empty) or a ``RoiWindow`` (``roi:K``
    is activation K alone; in ``roi:K:L`` either side may be empty: from the
    first, to the last).
    """
    from vcut_base.errors import InputError
    from ir_graph.windows import NodeWindow, RoiWindow

    head, colon, rest = text.partition(":")
    if colon and head.strip().lower() == "roi":
        k, sep, l_ = rest.partition(":")
        try:
            first = int(k) if k.strip() or not sep else 0
            stop = (int(l_) if l_.strip() else None) if sep else first + 1
        except ValueError:
            first = stop = -1
        if first < 0 or (stop is not None and stop <= first):
            raise InputError(f"--window {text!r}: give roi:K (activation K of the --roi "
                             "function(s), from 0) or roi:K:L (activations K..L-1; either may "
                             "be left out: roi:5: or roi::5)")
        return RoiWindow(first, stop)
    lo, sep, hi = head, colon, rest
    try:
        start = int(lo) if lo.strip() else 0
        end = int(hi) if hi.strip() else None
    except ValueError:
        start = end = -1
    if not sep or start < 0 or (end is not None and end <= start):
        raise InputError(f"--window {text!r}: give START:END, node indices with "
                         "0 <= START < END (either may be left out: 1000000: or :5000000), "
                         "or roi:K for the K-th activation of the --roi function(s)")
    return NodeWindow(start, end)


def parse_window_size(text):
    """``--window-size``: ``S`` nodes or ``roi:M`` ROI activations -> ``(unit, count)``."""
    from vcut_base.errors import InputError

    unit, value = ("roi", text.partition(":")[2]) if text.strip().lower().startswith("roi:") \
        else ("nodes", text)
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise InputError(f"--window-size {text!r}: give a positive number of nodes, or roi:M "
                         "for M activations of the --roi function(s) per window")
    return unit, size


#: Suffixes of a program's sources (`frontend.compile_program`: C, or LLVM IR).
SOURCE_SUFFIXES = (".c", ".ll")

_SOURCES = "C sources (.c, or .ll LLVM IR)"
_TRACE = "one trace (.npz from 'vcut trace')"
_GRAPH = ("one graph file (.graph, .metis, .edgelist, .edges, .el, .txt, .mtx, .lg, optionally "
          ".gz; or .npz from 'vcut graph')")
#: What each command that runs programs reads, as its messages name it.
ACCEPTS = {"trace": _SOURCES, "graph": f"{_SOURCES} or {_TRACE}",
           "analyze": f"{_SOURCES}, {_TRACE} or {_GRAPH}"}
ACCEPTS["compare"] = ACCEPTS["analyze"]


def is_source(path):
    """Whether ``path`` names a program source (`SOURCE_SUFFIXES`)."""
    return path.lower().endswith(SOURCE_SUFFIXES)


def check_inputs(args, program_args):
    """Refuse, before any work, the positional inputs the command cannot take.

    After a source, an input that is neither a source nor (for graph, analyze and
    compare) a trace or graph file is a program argument given without ``--``: the
    message says so with the corrected command line. A first input that is none of
    what the command reads (`ACCEPTS`) is named with that list; ``vcut trace`` leaves
    that to the compiler's check.
    """
    from vcut_base.errors import InputError

    command = args.command
    inputs = list(getattr(args, "sources", None) or args.inputs)
    takes = f"vcut {command} takes {ACCEPTS[command]}"
    if is_source(inputs[0]):
        for k, path in enumerate(inputs[1:], 1):
            if not (is_source(path) or _trace_or_graph(command, path)):
                import shlex

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
    from vcut_base.errors import InputError
    from ir_graph.formats import detect_format

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
    import shlex

    typed = getattr(args, "command_line", None) or []
    n = len(inputs)
    words = next((typed[:i + k] + typed[i + n:] for i in range(1, len(typed) - n + 1)
                  if typed[i:i + n] == inputs), [args.command, *inputs[:k]])
    return "vcut " + shlex.join([*words, "--", *inputs[k:], *program_args])


def analysis_input(args, program_args, budget=None, say=None):
    """(graph, object sizes or None, description) of the command's input.

    ``budget``: ``(p, baselines)`` of the analysis that follows: refuse a
    trace whose estimate exceeds the memory before building its graph
    (`mapping.budget`). ``args.window`` (``--window``) cuts the graph to a
    slice of the run (an ROI window of a trace is checked against its
    activations before the graph is built); ``args.windows`` and
    ``args.window_size`` (``--windows N``, ``--window-size``) are the
    sampling that follows, for the budget.
    """
    from frontend import load_trace
    from ir_graph import build_graph
    from ir_graph.windows import RoiWindow

    window = parse_window(args.window) if getattr(args, "window", None) else None
    count = getattr(args, "windows", None)
    unit, size = parse_window_size(args.window_size) if getattr(args, "window_size", None) \
        else ("nodes", None)

    def from_trace(trace, source):
        note_truncated(trace.meta, "the analysis")
        n = trace.dynamic_instructions
        roi = None
        if isinstance(window, RoiWindow) or unit == "roi":
            roi = trace.roi_activation_starts()
        span = window.bounds(n, roi) if window is not None else (0, n)
        if budget is not None:
            from mapping.budget import check_budget

            slice_size = span[1] - span[0] if window is not None else None
            if count:
                slice_size = _sample_size(span, count, unit, size, roi)
            check_budget(n, budget[0], budget[1], window=slice_size, windows=count or 1,
                         say=say, spill=getattr(args, "spill", None))
        g = build_graph(trace, weights=args.weights)
        return _cut(g), trace.obj_size, source

    def _cut(g):
        return g if window is None else window.cut(g)

    inputs = args.inputs
    if all(is_source(p) for p in inputs):
        if (isinstance(window, RoiWindow) or unit == "roi") and not getattr(args, "roi", None):
            from ir_graph.windows import roi_bounds

            roi_bounds(None, 0, 0, None)  # its message, before the program runs
        trace = run_trace(args, program_args).spilled()
        warn_about_run(trace)
        return from_trace(trace, " ".join(inputs))
    check_inputs(args, program_args)  # a mix of sources, traces and graphs
    path = inputs[0]
    if path.lower().endswith(".npz") and npz_format(path) == "vcut-trace":
        from vcut_base.arrays import spill_directory

        return from_trace(load_trace(path, mmap=spill_directory() is not None), path)
    g = read_graph_file(args, path)
    note_truncated(g.meta, "the analysis")
    return _cut(g), None, path


def _sample_size(span, count, unit, size, roi):
    """Instructions in the largest of ``count`` sampled windows of the slice ``span`` of a
    trace whose ROI activations begin at ``roi`` (for the budget)."""
    lo, hi = span
    if unit == "nodes":
        return min(size, hi - lo) if size else max((hi - lo) // count, 1)
    if roi is None or len(roi) == 0:
        return hi - lo  # the sampler names the problem once the graph is there
    bounds = np.append(roi[(roi >= lo) & (roi < hi)], hi)
    m = min(size, len(bounds) - 1)
    return int((bounds[m:] - bounds[:-m]).max()) if m >= 1 else hi - lo


def note_truncated(meta, covers):
    """Say on stderr, whatever the output (``--json`` too), that the trace behind a result
    was cut at its instruction budget (``meta``: the trace's, or a graph's built from one),
    so that ``covers`` ("the graph", "the analysis") only the start of the run."""
    if not meta.get("truncated"):
        return
    budget = meta.get("max_instructions")
    at = f"the budget of {budget:,} instructions" if budget else "its instruction budget"
    print(f"note: the trace was cut at {at} (--max-instructions); {covers} covers only the "
          "start of the run", file=sys.stderr)


#: A trace with fewer dynamic instructions than this is worth a warning before analysis.
TINY_TRACE = 1000


def warn_about_run(trace):
    """Warn (stderr) when a traced program failed or did almost nothing: a mistyped input
    file name otherwise gives a tiny analysis that looks like a result."""
    code = trace.exit_code
    if code not in (0, None):
        print(f"warning: the program exited with status {code} (its output is above); check "
              "its arguments and input files", file=sys.stderr)
    if trace.dynamic_instructions < TINY_TRACE:
        print(f"warning: the trace has only {trace.dynamic_instructions:,} instructions; did the "
              "program find its input?", file=sys.stderr)


def npz_format(path):
    """``meta["format"]`` of a vcut ``.npz``; None when it is not one (or not a regular file)."""
    if not os.path.isfile(path):
        return None  # a FIFO would block np.load; read_graph refuses it with a message
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"])).get("format") if "meta" in z.files else None
    except Exception:
        return None  # read_graph reports what is wrong with it


def progress_lines(enabled):
    if not enabled or not sys.stderr.isatty():
        return None
    t0 = time.perf_counter()

    def say(line):
        sys.stderr.write(f"[{time.perf_counter() - t0:7.1f} s] {line}\n")
        sys.stderr.flush()

    return say


def output_dir(path, names):
    """Create OUTDIR if needed and check that its files can be written."""
    from vcut_base.atomic import check_output_path
    from vcut_base.errors import OutputError

    if os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"output directory {path} exists and is not a directory; "
                          "give a directory for -o")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output directory {path}: {exc.strerror}") from None
    for name in names:
        check_output_path(os.path.join(path, name))


def progress_printer(label):
    if not sys.stderr.isatty():
        return None

    def report(elapsed, nbytes):
        sys.stderr.write(f"\r{label}: {elapsed:6.1f} s, {nbytes / 1e6:8.1f} MB of events")
        sys.stderr.flush()

    return report


def run_trace(args, program_args, stdout_sink=2, stderr_sink=2):
    """Compile and trace the C sources named on the command line.

    The program's stdout and stderr are passed on to the file descriptors
    ``stdout_sink`` / ``stderr_sink`` as it writes them (default: both to our
    stderr, so that a command's own stdout carries only its results).
    """
    from frontend import RunLimits, compile_program, trace_program

    limits = RunLimits(
        timeout=args.timeout,
        memory=args.memory_limit << 20,
        max_instructions=args.max_instructions,
        file_size=args.file_limit << 20,
    )
    limits.validate()
    sandbox = "none" if args.no_sandbox else args.sandbox
    if sandbox == "none":
        print("warning: no sandbox: the traced program runs with your rights (it can read and "
              "write your files, start processes and use the network)", file=sys.stderr)
    sources = getattr(args, "sources", None) or args.inputs
    cm = compile_program(
        sources,
        opt=f"-O{args.opt}",
        defines=args.defines,
        include_dirs=args.include_dirs,
        extra_flags=args.cflags,
        keep_out_of_line=args.roi,
    )
    if cm.diagnostics and args.verbose:
        print(cm.diagnostics, file=sys.stderr)
    stdin = None
    if args.stdin == "-":
        stdin = sys.stdin.buffer.read()
    elif args.stdin:
        stdin = args.stdin
    progress = progress_printer("tracing")
    trace = trace_program(
        cm,
        args=program_args,
        stdin=stdin,
        cwd=args.cwd,
        roi=args.roi,
        limits=limits,
        timing=not args.no_timing,
        libs=args.libs,
        progress=progress,
        sandbox=sandbox,
        env=args.env,
        keep_files=args.keep_files,
        stdout_sink=stdout_sink,
        stderr_sink=stderr_sink,
    )
    if progress:
        sys.stderr.write("\n")
    if args.keep_files:
        keep_notes(trace.meta, args.keep_files)
    return trace


#: Lines of each kind of --keep-files note printed; the rest are counted.
KEEP_NOTES_SHOWN = 10


def keep_notes(meta, keep_dir):
    """The entries of ``--keep-files DIR`` replaced by the program's files, and its files not
    kept, one note line each on stderr (the first `KEEP_NOTES_SHOWN`), whatever the
    command and with ``--json`` too."""
    replaced = [f"note: --keep-files replaced {os.path.join(keep_dir, rel)}, a {what}, with the "
                "program's file (never written through)"
                for rel, what in meta.get("kept_replaced", [])]
    refused = [f"note: --keep-files did not keep the program's file {rel}: {why}"
               for rel, why in meta.get("not_kept", [])]
    for lines in (replaced, refused):
        for line in lines[:KEEP_NOTES_SHOWN]:
            print(line, file=sys.stderr)
        if len(lines) > KEEP_NOTES_SHOWN:
            print(f"note: ... and {len(lines) - KEEP_NOTES_SHOWN} more like it (vcut trace --json "
                  "lists them all)", file=sys.stderr)


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
        from vcut_base.errors import InputError

        try:
            value = int(text)
        except ValueError:
            raise InputError(f"{name} must be {span}, got {text!r}") from None
        if not lo <= value <= hi:
            raise InputError(f"{name} must be {span}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def float_option(name, lo, hi, low_open=False):
    """argparse ``type`` of option ``name``: a finite number in ``[lo, hi]`` (``(lo, hi]``)."""

    def parse(text):
        from vcut_base.errors import InputError

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


def _strict(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {(k.item() if isinstance(k, np.generic) else k): _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    if isinstance(x, (np.generic, np.ndarray)):
        return _strict(x.tolist())
    return x


def json_text(obj, indent=None):
    """Strict JSON (RFC 8259) of ``obj``: NaN and infinities become ``null``.

    Python's ``json`` writes ``NaN`` and ``Infinity``, which strict parsers
    (``jq``, JavaScript) reject; numpy scalars and arrays become plain values.
    """
    return json.dumps(_strict(obj), indent=indent, allow_nan=False)


def print_json(obj):
    """Print ``obj`` as one line of strict JSON on stdout (`json_text`)."""
    print(json_text(obj))


def parse_numbers(text, what):
    from vcut_base.errors import InputError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{what} must be comma-separated numbers, got {text!r}") from None
