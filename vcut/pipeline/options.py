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

    Attributes
    ----------
    args : tuple of str
        The program's arguments (after ``--`` on the command line).
    opt : str
        Optimisation level of the C compilation (``"0"`` .. ``"3"``, ``"s"``, ``"z"``, ``"g"``).
    defines, include_dirs, libs, cflags : tuple of str
        ``-D``, ``-I``, ``-l`` and ``--cflag`` of the compilation.
    roi : tuple of str
        Trace only these functions and what they call (empty: everything).
    max_instructions : int
        Dynamic-instruction budget; the trace is cut and flagged past it.
    timeout : float
        Wall-clock limit of the run, seconds.
    memory_limit, file_limit : int
        Address-space limit of the program and largest file it may write, MiB.
    cwd : str, optional
        Working directory of the program.
    stdin : str, optional
        File fed to the program on stdin (``"-"``: this process's stdin).
    timing : bool
        Time the memory operations with the cycle counter.
    sandbox : str
        ``auto``, ``namespaces``, ``seccomp``, ``rlimits`` or ``none``.
    env : tuple of str
        ``NAME=VALUE`` environment of the program (it gets no others).
    keep_files : str, optional
        Copy the files the program writes to this folder.
    verbose : bool
        Print the compiler's warnings on stderr.
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

    Attributes
    ----------
    p : int
        Number of clusters of an analysis (``-p``).
    ps : tuple of int
        Cluster counts of a comparison (``vcut compare -p P1,P2,...``).
    algo : str
        Partitioning method (``--algo``; default ``par``).
    machine : str, optional
        Machine spec (`mapping.machine.load_machine`); default the Table 2 machine of p cores.
    mapping : str
        Cluster-to-core mapping (`mapping.placement.MAPPERS`); ``vcut compare`` gives
        ``memory-centric``, its own default.
    threshold : int
        Most clusters the memory-centric mapping puts on one core.
    lam : float
        Balance bound of the WB variants.
    order : str
        Edge stream order of the streaming vertex cuts.
    seed : int
        Seed of the random choices.
    window : str, optional
        ``START:END`` or ``roi:K[:L]``: analyse only that slice of the run.
    weights : str
        Edge weights of a program or trace: ``model`` or ``measured``.
    spill : str, optional
        Folder of disk-backed scratch arrays (`vcut_base.arrays.spilling`).
    duplicates : str
        How a graph file's repeated edges are read (``first``, ``sum``, ``keep``).
    partition : str, optional
        A partition file to use instead of partitioning.
    baselines : bool
        Also simulate the baseline mappings.
    compare_methods : bool
        Also analyse ``methods`` at the same p, for the report (needs ``output``).
    methods : tuple of str, optional
        The methods compared (None: `ANALYZE_METHODS` for an analysis,
        `vcut.pipeline.comparison.METHODS` for a comparison).
    windows : int, optional
        Analyse this many evenly spaced windows of the run instead
        (`vcut.pipeline.sample_windows`).
    window_size : str, optional
        ``S`` nodes or ``roi:M`` activations per window.
    device : str
        ``cpu``, ``gpu`` or ``auto``: where the greedy vertex cuts decide.
    output : str, optional
        Folder of the files written (mapping.json, report.html, ...).
    trace : TraceOptions
        How a C program is traced.
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
