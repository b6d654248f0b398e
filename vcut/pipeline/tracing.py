"""The pipeline's first step: C sources compiled, run and traced (`trace_sources`).

::

    from vcut.pipeline import TraceOptions, trace_sources
    trace = trace_sources(["samples/strassen.c"], TraceOptions(defines=("N=8",)))

Notes on the run (a trace cut at its budget, a program that failed or did almost
nothing, files ``--keep-files`` did not keep, a run without a sandbox) go to stderr, as
lines of their own, whatever else the caller prints.

This module imports no more than the tracer needs: the traced program runs in a child
that starts from this process's heap, so what the parent imported shapes the program's
addresses (``vcut trace``'s ``obj_base``).
"""

import os
import sys

from frontend import RunLimits, compile_program, trace_program

__all__ = ["trace_sources", "note_truncated", "warn_about_run", "keep_notes",
           "KEEP_NOTES_SHOWN", "TINY_TRACE"]


def progress_printer(label):
    if not sys.stderr.isatty():
        return None

    def report(elapsed, nbytes):
        sys.stderr.write(f"\r{label}: {elapsed:6.1f} s, {nbytes / 1e6:8.1f} MB of events")
        sys.stderr.flush()

    return report


def trace_sources(sources, options, stdout_sink=2, stderr_sink=2):
    """Compile and trace the C ``sources``: the first step of every pipeline command.

    The limits of ``options`` are checked first, then the sources are compiled
    (`frontend.compile_program`) and run in the sandbox under the tracer
    (`frontend.trace_program`). ``vcut trace``, ``graph``, ``analyze``, ``compare`` and
    a batch row trace their C inputs with it. With ``options.sandbox == "none"`` a
    warning goes to stderr; with ``keep_files``, notes on the files kept.

    Parameters
    ----------
    sources : list of str
        C sources (or LLVM IR), linked together.
    options : TraceOptions
        The compilation, the limits, the sandbox and the program's arguments.
    stdout_sink, stderr_sink : int, str or None
        Where the program's stdout and stderr go as it writes them: file
        descriptors (default: both to our stderr, so that a command's own stdout
        carries only its results), or None (kept in the trace only). The trace's
        ``meta["stdout"]`` and ``meta["stderr"]`` hold them either way.

    Returns
    -------
    frontend.Trace
        The decoded trace: ``dynamic_instructions``, ``exit_code``, ``truncated`` (cut
        at ``options.max_instructions``), ``obj_size`` (the memory objects' sizes),
        ``meta`` (the run's record).

    Raises
    ------
    InputError
        A limit out of range (``timeout <= 0``, ``memory_limit`` below 256 MiB, ...), a
        missing or unreadable source.
    CompileError, LinkError, ToolchainError
        What the compiler reports (``details`` holds its diagnostics), or no usable
        compiler.
    ProgramError
        The run failed: `ProgramCrashed`, `ProgramTimeout`, `ProgramOutOfMemory`; or
        `SandboxUnavailable` for a sandbox level the kernel does not grant.

    See Also
    --------
    program_graph : the graph file of a traced program.
    analysis_input : the trace's graph, as an analysis reads it.

    Examples
    --------
    >>> from vcut.pipeline import TraceOptions, trace_sources
    >>> trace = trace_sources(["samples/strassen.c"], TraceOptions(defines=("N=2",)),
    ...                       stdout_sink=None)
    >>> trace.exit_code, trace.dynamic_instructions, trace.truncated
    (0, 1986, False)
    >>> trace.meta["stdout"]
    'checksum: -0.934064627 -0.456639354\\n'

    A run cut at its instruction budget is flagged:

    >>> cut = trace_sources(["samples/strassen.c"],
    ...                     TraceOptions(defines=("N=2",), max_instructions=1000),
    ...                     stdout_sink=None)
    >>> cut.truncated, cut.dynamic_instructions <= 1000
    (True, True)

    Limits are checked before anything is compiled:

    >>> trace_sources(["samples/strassen.c"], TraceOptions(timeout=0))
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: timeout must be positive, got 0
    """
    limits = RunLimits(
        timeout=options.timeout,
        memory=options.memory_limit << 20,
        max_instructions=options.max_instructions,
        file_size=options.file_limit << 20,
    )
    limits.validate()
    sandbox = options.sandbox
    if sandbox == "none":
        print("warning: no sandbox: the traced program runs with your rights (it can read and "
              "write your files, start processes and use the network)", file=sys.stderr)
    cm = compile_program(
        [os.fspath(s) for s in sources],
        opt=f"-O{options.opt}",
        defines=list(options.defines),
        include_dirs=list(options.include_dirs),
        extra_flags=list(options.cflags),
        keep_out_of_line=list(options.roi),
    )
    if cm.diagnostics and options.verbose:
        print(cm.diagnostics, file=sys.stderr)
    stdin = None
    if options.stdin == "-":
        stdin = sys.stdin.buffer.read()
    elif options.stdin:
        stdin = options.stdin
    progress = progress_printer("tracing")
    trace = trace_program(
        cm,
        args=list(options.args),
        stdin=stdin,
        cwd=options.cwd,
        roi=list(options.roi),
        limits=limits,
        timing=options.timing,
        libs=list(options.libs),
        progress=progress,
        sandbox=sandbox,
        env=list(options.env),
        keep_files=options.keep_files,
        stdout_sink=stdout_sink,
        stderr_sink=stderr_sink,
    )
    if progress:
        sys.stderr.write("\n")
    if options.keep_files:
        keep_notes(trace.meta, options.keep_files)
    return trace


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
