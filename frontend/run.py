"""Run a (possibly instrumented) module in a child process, under limits.

The child (`frontend._child`) JIT-compiles the module with llvmlite's MCJIT
and calls ``main``. It runs in a new session with an address-space limit, no
core dumps and the caller's choice of working directory, stdin and argv; the
parent enforces the wall-clock limit and kills the whole process group when
it is passed. Whatever the program does (crash, ``exit()``, endless loop,
allocating without bound), the calling process stays alive and gets a
`RunResult` or one of the `ProgramError` subclasses.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import (
    InputError,
    LinkError,
    OutputError,
    ProgramCrashed,
    ProgramOutOfMemory,
    ProgramTimeout,
    VcutError,
)
from .events import EXIT_WRITE_FAILED

__all__ = ["RunLimits", "RunResult", "run_module", "DEFAULT_LIMITS"]


@dataclass(frozen=True)
class RunLimits:
    """Limits a traced program runs under.

    Attributes
    ----------
    timeout : float
        Wall-clock seconds for the whole child (JIT compilation included).
    memory : int
        Address-space limit of the child in bytes (``RLIMIT_AS``); the JIT
        and interpreter need about 0.3 GiB of it.
    max_instructions : int
        Dynamic-instruction budget; past it the trace is cut (and flagged).
    buffer_words : int
        Size of the in-memory event buffer (8-byte words) between writes.
    """

    timeout: float = 120.0
    memory: int = 4 << 30
    max_instructions: int = 50_000_000
    buffer_words: int = 1 << 20

    def validate(self):
        if not self.timeout > 0:
            raise InputError(f"timeout must be positive, got {self.timeout}")
        if self.memory < (256 << 20):
            raise InputError(
                f"memory limit {self.memory >> 20} MiB is below the 256 MiB the JIT itself needs"
            )
        if self.max_instructions < 1:
            raise InputError(f"max-instructions must be at least 1, got {self.max_instructions}")
        if self.buffer_words < 16:
            raise InputError(f"buffer must hold at least 16 words, got {self.buffer_words}")


DEFAULT_LIMITS = RunLimits()


@dataclass(frozen=True, eq=False)
class RunResult:
    """What a child run produced.

    Attributes
    ----------
    exit_code : int
        The program's exit status (main's return value or exit()'s argument).
    stdout, stderr : bytes
        What the program wrote.
    events : numpy.ndarray or None
        The raw event stream (uint64) for instrumented runs.
    global_addresses : numpy.ndarray
        Run-time address of each global of the static table (0 if unknown).
    argv_objects : list of (int, int)
        ``(base, size)`` of the argv array and of each argument string.
    run_seconds : float
        Time spent in main (NaN when the program left through exit()).
    wall_seconds : float
        Wall time of the whole child.
    """

    exit_code: int
    stdout: bytes
    stderr: bytes
    events: object
    global_addresses: np.ndarray
    argv_objects: list
    run_seconds: float
    wall_seconds: float
    status: dict = field(default_factory=dict)


_SIGNAMES = {
    signal.SIGSEGV: "SIGSEGV (segmentation fault: invalid memory access)",
    signal.SIGBUS: "SIGBUS (bus error: misaligned or unmapped memory)",
    signal.SIGFPE: "SIGFPE (arithmetic error, e.g. integer division by zero)",
    signal.SIGABRT: "SIGABRT (abort() called, e.g. by a failed assert)",
    signal.SIGILL: "SIGILL (illegal instruction)",
    signal.SIGKILL: "SIGKILL (killed)",
}


ADDR_NO_RANDOMIZE = 0x0040000


def _personality():
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).personality
        fn.argtypes = [ctypes.c_ulong]
        fn.restype = ctypes.c_int
        return fn
    except (OSError, AttributeError):
        return None


def _limit_child(memory):
    personality = _personality()

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # no address-space randomisation in the child: the same program gets the same
        # addresses run after run, so the cache-model weights are reproducible
        if personality is not None:
            current = personality(0xFFFFFFFF)
            if current != -1:
                personality(current | ADDR_NO_RANDOMIZE)

    return apply


def _read_status(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def run_module(
    ir,
    *,
    instrumented,
    globals_=(),
    main_nargs=2,
    main_void=False,
    args=(),
    program_name="program",
    stdin=None,
    cwd=None,
    limits=DEFAULT_LIMITS,
    libs=(),
    optimize=False,
    codegen_opt=2,
    progress=None,
):
    """JIT-run a module's ``main`` in a child process.

    Parameters
    ----------
    ir : str
        Module text (instrumented or not).
    instrumented : bool
        Whether the module carries the tracing runtime.
    globals_ : sequence of str
        Global names whose run-time addresses to report (static-table order).
    main_nargs : int
        Number of parameters ``main`` declares (0, 2 or 3).
    main_void : bool
        ``main`` returns void (old C).
    args : sequence of str
        Program arguments (``argv[1:]``).
    program_name : str
        ``argv[0]``.
    stdin : bytes, str path, or None
        Program input: bytes, a file path, or None for empty input.
    cwd : str, optional
        Working directory of the program (for programs that open input
        files by relative path); default: the current directory.
    limits : RunLimits
    libs : sequence of str
        Extra shared libraries to load (``-l`` names).
    optimize : bool
        Run LLVM's O1 pipeline on an instrumented module before JIT
        compilation (used when memory operations are not timed); otherwise
        only the tracing runtime is inlined and the program's code is
        compiled as it is.
    codegen_opt : int
        Optimisation level (0-3) of the JIT's code generator.
    progress : callable, optional
        Called about twice a second, after the first second, with
        ``(elapsed_seconds, event_bytes_written)``.

    Returns
    -------
    RunResult

    Raises
    ------
    LinkError, ProgramCrashed, ProgramTimeout, ProgramOutOfMemory, OutputError
    """
    limits.validate()
    if cwd is not None and not os.path.isdir(cwd):
        raise InputError(f"working directory not found: {cwd}; give an existing directory to --cwd")
    with tempfile.TemporaryDirectory(prefix="vcut-run-") as tmp:
        paths = {k: os.path.join(tmp, k) for k in ("ir", "events", "status", "stdout", "stderr", "stdin")}
        with open(paths["ir"], "w") as fh:
            fh.write(ir)
        if isinstance(stdin, (bytes, bytearray)):
            with open(paths["stdin"], "wb") as fh:
                fh.write(stdin)
            stdin_path = paths["stdin"]
        elif stdin is None:
            stdin_path = os.devnull
        else:
            stdin_path = os.fspath(stdin)
            if not os.path.isfile(stdin_path):
                raise InputError(f"stdin file not found: {stdin_path}")
        spec = {
            "ir": paths["ir"],
            "events": paths["events"],
            "status": paths["status"],
            "instrumented": bool(instrumented),
            "budget": int(limits.max_instructions),
            "buffer_words": int(limits.buffer_words),
            "globals": [str(g) for g in globals_],
            "argv": [program_name, *map(str, args)],
            "main_nargs": int(main_nargs),
            "main_void": bool(main_void),
            "libs": list(libs),
            "optimize": bool(optimize),
            "codegen_opt": int(codegen_opt),
        }
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w") as fh:
            json.dump(spec, fh)
        # the child is run as a plain script: it needs only llvmlite and the
        # standard library, not this package (numpy/numba would slow its start)
        child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child.py")
        t0 = time.perf_counter()
        with open(stdin_path, "rb") as fin, open(paths["stdout"], "wb") as fout, open(
            paths["stderr"], "wb"
        ) as ferr:
            proc = subprocess.Popen(
                [sys.executable, "-I", child, spec_path],
                stdin=fin,
                stdout=fout,
                stderr=ferr,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_limit_child(limits.memory),
            )
            timed_out = False
            next_report = 1.0
            while True:
                try:
                    rc = proc.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                elapsed = time.perf_counter() - t0
                if elapsed > limits.timeout:
                    timed_out = True
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    rc = proc.wait()
                    break
                if progress is not None and elapsed >= next_report:
                    size = os.path.getsize(paths["events"]) if os.path.exists(paths["events"]) else 0
                    progress(elapsed, size)
                    next_report = elapsed + 0.5
        wall = time.perf_counter() - t0
        status = _read_status(paths["status"])
        with open(paths["stdout"], "rb") as fh:
            out = fh.read()
        with open(paths["stderr"], "rb") as fh:
            err = fh.read()
        if timed_out:
            raise ProgramTimeout(
                f"the program ran past the {limits.timeout:g} s time limit (an endless loop?) "
                "and was stopped; raise --timeout, or cap the trace with --max-instructions"
            )
        if status.get("phase") == "setup":
            if status.get("error") == "link":
                syms = status.get("symbols") or []
                names = ", ".join(syms[:8]) + (" ..." if len(syms) > 8 else "")
                raise LinkError(
                    f"undefined symbol{'s' if len(syms) != 1 else ''} {names}: defined neither in "
                    "the program nor in the C libraries; add the .c file that defines "
                    "it or the library (-l)"
                    if syms
                    else status.get("message", "link failed")
                )
            raise VcutError(f"the JIT rejected the module: {status.get('message')}")
        if not status:
            last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise VcutError(
                f"the tracing child process failed before running the program (exit {rc}): "
                f"{last}"
            )
        events = None
        if instrumented and os.path.exists(paths["events"]):
            events = np.fromfile(paths["events"], dtype="<u8")
        err_text = err.decode(errors="replace")
        if rc < 0:
            sig = -rc
            name = _SIGNAMES.get(sig, signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}")
            if "MemoryError" in err_text or "out of memory" in err_text.lower():
                raise ProgramOutOfMemory(_oom_message(limits))
            raise ProgramCrashed(
                f"the program crashed with {name}; run it natively under a debugger to find the fault"
            )
        if "LLVM ERROR: out of memory" in err_text or (
            rc == 1 and "MemoryError" in err_text and status.get("phase") != "returned"
        ):
            raise ProgramOutOfMemory(_oom_message(limits))
        if rc == EXIT_WRITE_FAILED and instrumented and (events is None or not _has_end(events)):
            raise OutputError(
                "writing the event stream failed (disk full?); free space in the temporary directory"
            )
        objects = status.get("objects", {})
        return RunResult(
            exit_code=int(status.get("exit_code", rc)),
            stdout=out,
            stderr=err,
            events=events,
            global_addresses=np.array(objects.get("globals", []), dtype=np.uint64),
            argv_objects=[tuple(x) for x in objects.get("argv", [])],
            run_seconds=float(status.get("run_seconds", float("nan"))),
            wall_seconds=wall,
            status=status,
        )


def _has_end(events):
    return len(events) > 0 and (int(events[-1]) & 0xFF) == 7


def _oom_message(limits):
    return (
        f"the program ran out of memory under the {limits.memory >> 20} MiB limit; "
        "raise --memory-limit if the machine has room"
    )
