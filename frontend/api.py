"""Public entry points: trace a C program, or run it without tracing."""

import functools
import os

import llvmlite.binding as llvm
import numpy as np

from vcut_base.errors import InputError, TraceFormatError

from .compile import CompiledModule, compile_program
from .events import END_BUDGET, END_RECOVERED, EV_END, header
from .instrument import instrument_module
from .run import DEFAULT_LIMITS, run_module
from .trace import decode_trace

__all__ = ["trace_program", "run_program"]


def _output_meta(res):
    """What the trace records of the program's output: the kept head as text, and sizes."""
    meta = {}
    for name in ("stdout", "stderr"):
        data, total = getattr(res, name), getattr(res, name + "_bytes")
        meta[name] = data.decode(errors="replace")
        meta[name + "_bytes"] = int(total)
        meta[name + "_truncated"] = total > len(data)
    return meta


def _compiled(program, compile_options):
    if isinstance(program, CompiledModule):
        return program
    return compile_program(program, **(compile_options or {}))


def _codegen_opt(cm, optimized):
    """JIT code-generator level: 0 for -O0 programs (their functions are
    ``optnone`` and get the fast instruction selector anyway), 0 after our own
    IR optimisation, 2 otherwise. Plain and traced runs use the same rule."""
    return 0 if optimized or "-O0" in cm.flags else 2


def _launch(cm, ir, main_nargs, main_void, *, instrumented, optimize, **run_kwargs):
    """Run ``ir`` (from ``cm``) in the child with the codegen level both paths share."""
    return run_module(
        ir,
        instrumented=instrumented,
        main_nargs=main_nargs,
        main_void=main_void,
        program_name=os.path.basename(cm.sources[0]) if cm.sources else "program",
        optimize=optimize,
        codegen_opt=_codegen_opt(cm, optimize),
        **run_kwargs,
    )


def _main_signature(static):
    fid = static.function_id("main")
    return int(static.fn_nargs[fid]), bool(static.fn_returns_void[fid])


def trace_program(
    program,
    *,
    args=(),
    stdin=None,
    cwd=None,
    roi=(),
    limits=DEFAULT_LIMITS,
    timing=True,
    libs=(),
    compile_options=None,
    progress=None,
    sandbox="auto",
    env=(),
    keep_files=None,
    stdout_sink=None,
    stderr_sink=None,
):
    """Compile, instrument and run a C program; return its dynamic trace.

    The program is compiled (`compile_program`, unless ``program`` is already
    a `CompiledModule`), instrumented (`instrument_module`) and JIT-run in a
    confined child process under ``limits``; the event stream it writes is
    decoded into a `Trace`. A run the dynamic-instruction budget stops is
    not an error: the trace holds what ran before the cut and is flagged
    ``truncated``.

    Parameters
    ----------
    program : str, sequence of str, or CompiledModule
        C source file(s) (or ``.ll`` LLVM IR), linked into one program, or an
        already compiled module.
    args : sequence of str, default ()
        Program arguments (``argv[1:]``).
    stdin : bytes, path, or None, default None
        Program input (None: empty).
    cwd : str, optional
        Working directory of the program (default: the current directory).
    roi : sequence of str, default ()
        Trace only these functions and what they call (default: everything).
        They are kept out of line when compiling (``keep_out_of_line``), and
        the trace records where each of their activations begins
        (`Trace.roi_activation_starts`).
    limits : RunLimits, default DEFAULT_LIMITS
        Timeout, memory limit, dynamic-instruction budget.
    timing : bool, default True
        Time each memory operation with the cycle counter. Without timing the
        instrumented code is optimised (LLVM's O1) before it runs, which is
        faster; the trace is the same but has no measured cycles.
    libs : sequence of str, default ()
        Extra shared libraries the program needs (``-l`` names).
    compile_options : dict, optional
        Keyword arguments for `compile_program` (``opt``, ``defines``, ...).
    progress : callable, optional
        ``progress(elapsed_seconds, event_bytes)`` during long runs.
    sandbox : str, default "auto"
        Confinement of the program: ``auto`` (the strongest level the kernel
        grants), or ``namespaces``, ``seccomp``, ``rlimits`` to require one,
        or ``none`` (see `frontend.run.run_module`). The level that ran is
        ``meta["sandbox"]``.
    env : sequence of str, default ()
        ``NAME=VALUE``: the program's whole environment.
    keep_files : str, optional
        Directory to copy the files the program wrote in its working
        directory into (they are listed in ``meta["written_files"]``); links
        there are replaced, never written through (``meta["kept_replaced"]``),
        and files refused are in ``meta["not_kept"]`` (`frontend.run.run_module`).
    stdout_sink, stderr_sink : int, optional
        File descriptors to pass the program's stdout / stderr on to as it
        writes them, byte for byte (e.g. 1 and 2). The trace keeps the first
        MiB of each as text (``meta["stdout"]``), with ``stdout_bytes`` and
        ``stdout_truncated``.

    Returns
    -------
    Trace
        ``meta["truncated"]`` is True when the budget cut the run short (its
        ``exit_code`` is then None).

    Raises
    ------
    InputError
        A missing or non-C source, an ROI name that is not a function of the
        program, no ``main``, invalid ``limits``, ``sandbox``, ``env``, ``cwd``
        or ``keep_files``.
    CompileError, LinkError
        The compiler rejected a source, or linking failed.
    UnsupportedIRError
        The program uses a construct the tracer cannot follow (setjmp,
        threads, exceptions, ...).
    ProgramCrashed, ProgramTimeout, ProgramOutOfMemory
        The program was killed by a signal, ran past ``limits.timeout``, or
        past ``limits.memory``.
    OutputError
        The run's scratch files cannot be written.

    See Also
    --------
    run_program : the same run without instrumentation.
    ir_graph.build_graph : the dependency graph of a trace.

    Examples
    --------
    >>> from frontend import trace_program
    >>> t = trace_program("samples/strassen.c", compile_options={"defines": ["N=2"]})
    >>> t.exit_code, t.meta["stdout"]
    (0, 'checksum: -0.934064627 -0.456639354\\n')
    >>> t.calls("strassen"), t.calls("add"), t.max_recursion_depth("strassen")
    (8, 10, 2)
    >>> t.truncated
    False

    Only the region of interest (``main`` itself is not traced):

    >>> r = trace_program("samples/strassen.c", compile_options={"defines": ["N=2"]},
    ...                   roi=["strassen"])
    >>> r.calls("strassen"), r.calls("main"), r.roi_activation_starts().tolist()
    (8, 0, [0])
    >>> trace_program("samples/strassen.c", roi=["nope"])
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: region-of-interest function 'nope' is not defined in the
    program; defined functions: add, main, rnd, strassen
    """
    options = dict(compile_options or {})
    if roi:
        options.setdefault("keep_out_of_line", tuple(roi))
    cm = _compiled(program, options)
    im = instrument_module(cm.ir, roi=roi, timing=timing)
    nargs, void = _main_signature(im.static)
    res = _launch(
        cm, im.ir, nargs, void, instrumented=True, optimize=not timing,
        globals_=im.static.gv_name, args=args, stdin=stdin, cwd=cwd, limits=limits,
        libs=libs, progress=progress, sandbox=sandbox, env=env, keep_files=keep_files,
        stdout_sink=stdout_sink, stderr_sink=stderr_sink,
    )
    meta = {
        "program": list(cm.sources),
        "argv": list(map(str, args)),
        "exit_code": res.exit_code,
        "roi": list(roi),
        "timing": bool(timing),
        "max_instructions": int(limits.max_instructions),
        "compiler": cm.compiler,
        "flags": list(cm.flags),
        **_output_meta(res),
        "run_seconds": res.run_seconds,
        "wall_seconds": res.wall_seconds,
        "sandbox": res.status.get("sandbox", "none"),
        "sandbox_notes": list(res.status.get("sandbox_notes", [])),
        "written_files": [list(f) for f in res.written_files],
        "kept_replaced": [list(f) for f in res.kept_replaced],
        "not_kept": [list(f) for f in res.not_kept],
    }
    events = res.events if res.events is not None else np.zeros(0, np.uint64)
    decode = functools.partial(decode_trace, im.static, global_addresses=res.global_addresses,
                               argv_objects=res.argv_objects, meta=meta)
    try:
        trace = decode(events)
    except TraceFormatError as exc:
        # A program that left through a signal handler (a SIGSEGV handler calling _exit):
        # the handler's events interrupt a block. The run ends there; keep what came before.
        recovered = len(events) and int(events[-1]) == header(END_RECOVERED, EV_END)
        cut = getattr(exc, "position", None)
        if not recovered or cut is None:
            raise
        end = np.array([header(END_RECOVERED, EV_END)], dtype=np.uint64)
        trace = decode(np.concatenate([events[:cut], end]))
        trace.meta["notes"] = [f"the events after word {cut} came from a signal handler that "
                               "interrupted the program; they were dropped"]
    trace.meta["failed_allocations"] = int(res.status.get("failed_allocations", 0))
    trace.meta["truncated"] = trace.meta["end_code"] == END_BUDGET
    if trace.meta["truncated"]:
        trace.meta["exit_code"] = None
    return trace


def run_program(program, *, args=(), stdin=None, cwd=None, limits=DEFAULT_LIMITS, libs=(),
                compile_options=None, sandbox="auto", env=(), keep_files=None, stdout_sink=None,
                stderr_sink=None):
    """Run a C program through the same JIT path without instrumentation.

    The baseline for tracing overhead: the program is compiled, JIT-compiled
    and run in the same confined child process as `trace_program`'s, with the
    same code-generator level, but nothing is traced.

    Parameters
    ----------
    program : str, sequence of str, or CompiledModule
        C source file(s) (or ``.ll`` LLVM IR), linked into one program, or an
        already compiled module.
    args : sequence of str, default ()
        Program arguments (``argv[1:]``).
    stdin : bytes, path, or None, default None
        Program input (None: empty).
    cwd : str, optional
        Working directory of the program (default: the current directory).
    limits : RunLimits, default DEFAULT_LIMITS
        Timeout and memory limit (the instruction budget applies to traced
        runs only).
    libs : sequence of str, default ()
        Extra shared libraries the program needs (``-l`` names).
    compile_options : dict, optional
        Keyword arguments for `compile_program` (``opt``, ``defines``, ...).
    sandbox : str, default "auto"
        Confinement of the program, as for `trace_program`.
    env : sequence of str, default ()
        ``NAME=VALUE``: the program's whole environment.
    keep_files : str, optional
        Directory to copy the files the program wrote in its working
        directory into, as for `trace_program`.
    stdout_sink, stderr_sink : int, optional
        File descriptors to pass the program's stdout / stderr on to as it
        writes them.

    Returns
    -------
    RunResult
        Exit code, output (the first MiB of each stream), ``run_seconds``
        spent in main; ``events`` is None.

    Raises
    ------
    InputError
        A missing or non-C source, no ``main``, invalid ``limits``,
        ``sandbox``, ``env``, ``cwd`` or ``keep_files``.
    CompileError, LinkError
        The compiler rejected a source, or linking failed.
    ProgramCrashed, ProgramTimeout, ProgramOutOfMemory
        The program was killed by a signal, ran past ``limits.timeout``, or
        past ``limits.memory``.
    OutputError
        The run's scratch files cannot be written.

    See Also
    --------
    trace_program : the same run, traced.

    Examples
    --------
    >>> from frontend import run_program
    >>> r = run_program("samples/strassen.c", compile_options={"defines": ["N=2"]})
    >>> r.exit_code, r.stdout, r.stdout_bytes, r.events
    (0, b'checksum: -0.934064627 -0.456639354\\n', 36, None)
    >>> run_program("tests/data/README.md")
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: input is not a C source file: .../tests/data/README.md
    (extension '.md'); give .c files (or .ll LLVM IR)
    """
    cm = _compiled(program, compile_options)
    mod = llvm.parse_assembly(cm.ir)
    try:
        main = mod.get_function("main")
    except NameError:
        raise InputError("the program defines no main function; give a complete C program") from None
    nargs = len(list(main.arguments))
    void = str(main.global_value_type).startswith("void")
    return _launch(
        cm, str(mod), nargs, void, instrumented=False, optimize=False, args=args, stdin=stdin,
        cwd=cwd, limits=limits, libs=libs, sandbox=sandbox, env=env, keep_files=keep_files,
        stdout_sink=stdout_sink, stderr_sink=stderr_sink,
    )
