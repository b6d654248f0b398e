"""The options of the pipeline: how a program is traced, and how it is analysed.

One frozen dataclass, `AnalysisOptions`, holds what the options of ``vcut analyze``,
``vcut compare`` and a ``vcut batch`` row mean; its ``trace`` field, a `TraceOptions`,
holds how a C program is compiled, confined and traced (``vcut trace``'s options and
the program's arguments). The command line builds them from its arguments
(`vcut.cli._common.options_from_args`); the Python API builds them directly::

    from vcut.pipeline import AnalysisOptions, TraceOptions, analyze
    run = analyze(["samples/strassen.c"],
                  AnalysisOptions(p=8, baselines=False, trace=TraceOptions(defines=("N=8",))))

The defaults are the command line's.
"""

import os
from dataclasses import dataclass, field

__all__ = ["TraceOptions", "AnalysisOptions", "ANALYZE_METHODS", "SOURCE_SUFFIXES", "is_source"]

#: Suffixes of a program's sources (`frontend.compile_program`: C, or LLVM IR).
SOURCE_SUFFIXES = (".c", ".ll")

#: The methods ``vcut analyze --compare-methods`` compares by default: the eight of the
#: source's Tables 6-9 (`vcut.pipeline.comparison.METHODS`) and ``par``.
ANALYZE_METHODS = ("compnet", "metis", "pg", "w-pg", "wb-pg", "libra", "w-libra", "wb-libra",
                   "par")


@dataclass(frozen=True)
class TraceOptions:
    """How C sources are compiled, run and traced (`vcut.pipeline.trace_sources`).

    The compilation, limits, confinement and arguments of one traced run: what
    ``vcut trace``, ``graph``, ``analyze`` and ``compare`` read from their compile and
    sandbox options and the words after ``--`` (`vcut.cli._common.trace_options`). The
    defaults are the command line's. Nothing is checked here: `trace_sources` checks
    the limits (and the compiler the rest) when the program is traced.

    Attributes
    ----------
    args : tuple of str
        The program's arguments (after ``--`` on the command line); default none.
    opt : str
        Optimisation level of the C compilation (``-O``: ``"0"`` .. ``"3"``, ``"s"``,
        ``"z"``, ``"g"``); default ``"0"``.
    defines, include_dirs, libs, cflags : tuple of str
        ``-D NAME[=VALUE]``, ``-I DIR``, ``-l LIB`` (a shared library the program
        loads) and ``--cflag FLAG`` (a further compiler flag) of the compilation;
        default none.
    roi : tuple of str
        ``--roi FUNC``: trace only these functions and what they call (empty: everything).
    max_instructions : int
        ``--max-instructions``: dynamic-instruction budget; the trace is cut and flagged
        (``truncated``) past it. Default 50,000,000.
    timeout : float
        ``--timeout``: wall-clock limit of the run, seconds (> 0); default 120.
    memory_limit, file_limit : int
        ``--memory-limit`` and ``--file-limit``: address-space limit of the program
        (at least 256, what the JIT needs; default 4096) and largest file it may write
        (default 1024), MiB.
    cwd : str, optional
        ``--cwd``: working directory of the program (for its input files).
    stdin : str, optional
        ``--stdin``: file fed to the program on stdin (``"-"``: this process's stdin).
    timing : bool
        Time the memory operations with the cycle counter (``--no-timing``: False);
        default True. Only ``weights="measured"`` uses the times.
    sandbox : str
        ``--sandbox``: ``auto`` (the strongest level the kernel grants, the default),
        ``namespaces``, ``seccomp``, ``rlimits`` or ``none`` (``--no-sandbox``: the
        program runs with your rights).
    env : tuple of str
        ``--env NAME=VALUE``: environment of the program (it gets no others).
    keep_files : str, optional
        ``--keep-files DIR``: copy the files the program writes to this folder.
    verbose : bool
        ``--verbose``: print the compiler's warnings on stderr.

    See Also
    --------
    AnalysisOptions : what is done with the trace; its ``trace`` field is one of these.

    Examples
    --------
    >>> import dataclasses
    >>> from vcut.pipeline import TraceOptions
    >>> opts = TraceOptions(defines=("N=2",))
    >>> opts.defines, opts.opt, opts.timeout, opts.max_instructions, opts.sandbox
    (('N=2',), '0', 120.0, 50000000, 'auto')

    The options are frozen; `dataclasses.replace` makes a changed copy:

    >>> opts.opt = "2"
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'opt'
    >>> dataclasses.replace(opts, opt="2", args=("64",))
    TraceOptions(args=('64',), opt='2', defines=('N=2',), ...)
    """

    args: tuple = ()
    opt: str = "0"
    defines: tuple = ()
    include_dirs: tuple = ()
    libs: tuple = ()
    cflags: tuple = ()
    roi: tuple = ()
    max_instructions: int = 50_000_000
    timeout: float = 120.0
    memory_limit: int = 4096
    file_limit: int = 1024
    cwd: str = None
    stdin: str = None
    timing: bool = True
    sandbox: str = "auto"
    env: tuple = ()
    keep_files: str = None
    verbose: bool = False


@dataclass(frozen=True)
class AnalysisOptions:
    """What ``vcut analyze``, ``vcut compare`` and a ``vcut batch`` row are asked to do.

    `vcut.pipeline.analyze`, `compare` and `sample_windows` read one of these; the
    command line builds it from its options (`vcut.cli._common.options_from_args`),
    and the defaults are ``vcut analyze``'s. Nothing is checked here: a misspelt
    method, machine or window is refused by the run that uses it (`InputError`).

    Attributes
    ----------
    p : int
        ``-p``: number of clusters of an analysis; default 8.
    ps : tuple of int
        Cluster counts of a comparison (``vcut compare -p P1,P2,...``); default none.
    algo : str
        ``--algo``: partitioning method of an analysis, a vertex cut of
        `vcut.partition.ALGORITHMS` or an edge cut (``metis``, ``compnet``); default
        ``par``, the parallelism-aware vertex cut.
    machine : str, optional
        ``--machine``: ``table2:P``, ``mesh:RxC``, ``host``, ``hwloc:FILE.xml`` or a JSON
        machine file (`mapping.machine.load_machine`); default the Table 2 machine of p
        cores, one core per cluster.
    mapping : str
        ``--mapping``: cluster-to-core mapping (`mapping.placement.MAPPERS`); default
        ``time-aware`` (memory-centric improved by simulating moves). ``vcut compare``
        gives ``memory-centric``, its own default.
    threshold : int
        ``--threshold``: most clusters the memory-centric mapping puts on one core;
        default 4.
    lam : float
        ``--lambda``: balance bound of the WB variants, >= 1; default 1.
    order : str
        ``--order``: edge stream order of the streaming vertex cuts (``given``,
        ``random``, ``bfs``, ``dfs``); default ``given``, the execution order of an IR
        graph.
    seed : int
        ``--seed``: seed of the random choices; default 0.
    window : str, optional
        ``--window``: ``START:END`` (nodes START..END-1) or ``roi:K[:L]`` (activations of
        the ``--roi`` functions): analyse only that slice of the run.
    weights : str
        ``--weights``: edge weights of a program or trace: ``model`` (the cache model,
        deterministic; the default) or ``measured`` (the cycles measured in the trace).
    spill : str, optional
        ``--spill``: folder of disk-backed scratch arrays for a trace larger than memory
        (`vcut_base.arrays.spilling`).
    duplicates : str
        ``--duplicates``: how a graph file's repeated edges are read (``first``, the
        default: merged with the first one's weight; ``sum``; ``keep``).
    partition : str, optional
        ``--partition``: a partition file (from ``vcut partition -o``) to use instead of
        partitioning.
    baselines : bool
        Also simulate the baseline mappings (``--no-baselines``: False); default True.
    compare_methods : bool
        ``--compare-methods``: also analyse ``methods`` at the same p, for the report
        (needs ``output``); default False.
    methods : tuple of str, optional
        ``--methods``: the methods compared (None: `ANALYZE_METHODS` for an analysis,
        `vcut.pipeline.comparison.METHODS` for a comparison).
    windows : int, optional
        ``--windows``: analyse this many evenly spaced windows of the run instead
        (`vcut.pipeline.sample_windows`).
    window_size : str, optional
        ``--window-size``: ``S`` nodes or ``roi:M`` activations per window (default: the
        run split into ``windows`` equal parts).
    device : str
        ``--device``: ``cpu`` (the default), ``gpu`` or ``auto``: where the greedy vertex
        cuts decide their batches.
    control : str
        ``--control``: the control-flow model of the graph (`ir_graph.control`): one of
        ``oracle`` (the default: data dependences only), ``sp-cd-mf``, ``sp-cd``,
        ``sp``, ``cd-mf``, ``cd``, ``base``; for a comparison also a comma-separated
        list or ``all``.
    branch_latency : float, optional
        ``--branch-latency``: cycles of a control edge (None: the machine's
        ``branch_cycles``, 1).
    steering : str
        ``--steering``: ``auto`` (the default) or ``full``: how far ``par``'s candidates
        are searched on graphs with control edges (`vcut.par_steering.STEERING`).
    control_models : bool
        ``--control-models``: also analyse every other control model at the same p
        for the report's models table (one analysis each); default False.
    output : str, optional
        ``-o``: folder of the files written (mapping.json and report.html; compare.json
        and compare.png; windows.json); None writes nothing.
    trace : TraceOptions
        How a C program is traced; default ``TraceOptions()``.

    See Also
    --------
    TraceOptions, analyze, compare, sample_windows

    Examples
    --------
    >>> from vcut.pipeline import AnalysisOptions, TraceOptions
    >>> opts = AnalysisOptions(p=4, baselines=False, trace=TraceOptions(defines=("N=2",)))
    >>> opts.p, opts.algo, opts.mapping, opts.threshold, opts.seed, opts.weights
    (4, 'par', 'time-aware', 4, 0, 'model')
    >>> opts.trace.defines
    ('N=2',)

    `input_paths` lists every file an analysis would read (the outputs must not be
    one of them):

    >>> AnalysisOptions(partition="parts.txt", machine="hwloc:topo.xml").input_paths(
    ...     ["samples/strassen.c"])
    ['samples/strassen.c', 'parts.txt', 'topo.xml']
    """

    p: int = 8
    ps: tuple = ()
    algo: str = "par"
    machine: str = None
    mapping: str = "time-aware"
    threshold: int = 4
    lam: float = 1.0
    order: str = "given"
    seed: int = 0
    window: str = None
    weights: str = "model"
    spill: str = None
    duplicates: str = "first"
    partition: str = None
    baselines: bool = True
    compare_methods: bool = False
    methods: tuple = None
    windows: int = None
    window_size: str = None
    device: str = "cpu"
    control: str = "oracle"
    branch_latency: float = None
    steering: str = "auto"
    control_models: bool = False
    output: str = None
    trace: TraceOptions = field(default_factory=TraceOptions)

    def input_paths(self, inputs):
        """Every file an analysis of ``inputs`` reads: the inputs, the program's stdin, the
        partition file and a machine file (``-`` is not a file)."""
        machine = self.machine
        paths = [*inputs, self.trace.stdin, self.partition]
        if machine:
            paths.append(machine.split(":", 1)[1] if machine.startswith("hwloc:") else machine)
        return [os.fspath(p) for p in paths if p and p != "-"]


def is_source(path):
    """Whether ``path`` names a program source (`SOURCE_SUFFIXES`)."""
    return path.lower().endswith(SOURCE_SUFFIXES)
