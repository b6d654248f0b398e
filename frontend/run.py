"""Run a (possibly instrumented) module in a confined child process, under limits.

The child (`frontend._child`) JIT-compiles the module with llvmlite's MCJIT
and calls ``main`` in a sandbox (`frontend._sandbox`: namespaces, a seccomp
filter and rlimits, the strongest the kernel grants; which one ran is
reported). The program's stdout, stderr and events come back through pipes
that threads here drain; the events arrive as keyed, numbered chunks
(`frontend._runtime_ir`, received by `frontend.event_channel`), so bytes the
program writes into the channel are detected, and the events not yet sent
when the program leaves through ``_exit`` are recovered from the shared
buffer. How the program ended comes over a control pipe the program never
holds. The files the program wrote are listed, and kept on request, by
`frontend.program_files`. The parent enforces the wall-clock limit; every
process of the child dies with it. Whatever the
program does (crash, ``exit()``, ``_exit()``, endless loop, allocating
without bound, fork, sockets, writing outside its directory), the calling
process stays alive and gets a `RunResult` or one of the `ProgramError`
subclasses.
"""

import ctypes
import errno
import json
import os
import random
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import llvmlite
import numpy as np

from vcut_base.atomic import write_failure
from vcut_base.errors import (
    InputError,
    LinkError,
    OutputError,
    ProgramCrashed,
    ProgramError,
    ProgramOutOfMemory,
    ProgramTimeout,
    SandboxUnavailable,
    VcutError,
)
from vcut_base.scratch import scratch_dir

from ._runtime_ir import CHUNK_HEADER_WORDS
from ._sandbox import LEVELS
from .event_channel import (
    EventChannel,
    buffer_offset,
    channel_fds,
    collect_events,
    shared_buffer,
    shm_bytes,
)
from .program_files import written_files

__all__ = ["RunLimits", "RunResult", "run_module", "DEFAULT_LIMITS", "SANDBOX_CHOICES"]

#: What ``sandbox=`` accepts: ``auto`` (the strongest level available) or a level that
#: must be granted (the run is refused otherwise).
SANDBOX_CHOICES = ("auto", *LEVELS)

#: Bytes of the program's stdout / stderr kept in the result (each); all of it is passed
#: on to the sinks.
OUTPUT_KEPT = 1 << 20


@dataclass(frozen=True)
class RunLimits:
    """Limits a traced program runs under.

    Every run checks them first (`validate`, which raises `InputError` for a
    timeout that is not positive, a memory limit below 256 MiB, a budget
    outside ``1 .. 2**63 - 1``, a file-size limit below 1 byte or a buffer of
    fewer than 16 words). `DEFAULT_LIMITS` is ``RunLimits()``.

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
    file_size : int
        Largest file the program may write, in bytes (``RLIMIT_FSIZE``; its
        stdout, stderr and events go through pipes and are not counted).

    Examples
    --------
    >>> from frontend import DEFAULT_LIMITS, RunLimits, trace_program
    >>> DEFAULT_LIMITS.timeout, DEFAULT_LIMITS.memory >> 30, DEFAULT_LIMITS.max_instructions
    (120.0, 4, 50000000)
    >>> RunLimits(timeout=10).cpu_seconds
    12

    A budget cuts the trace short (the program's exit status is then unknown):

    >>> t = trace_program("samples/strassen.c", compile_options={"defines": ["N=2"]},
    ...                   limits=RunLimits(max_instructions=500))
    >>> t.truncated, t.exit_code, t.dynamic_instructions <= 500
    (True, None, True)
    >>> RunLimits(memory=1 << 20).validate()
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: memory limit 1 MiB is below the 256 MiB the JIT itself needs
    """

    timeout: float = 120.0
    memory: int = 4 << 30
    max_instructions: int = 50_000_000
    buffer_words: int = 1 << 20
    file_size: int = 1 << 30

    @property
    def cpu_seconds(self):
        """The program's CPU-time limit (``RLIMIT_CPU``): the timeout and 2 s."""
        return int(self.timeout) + 2

    def validate(self):
        if not self.timeout > 0:
            raise InputError(f"timeout must be positive, got {self.timeout}")
        if self.memory < (256 << 20):
            raise InputError(
                f"memory limit {self.memory >> 20} MiB is below the 256 MiB the JIT itself needs"
            )
        if not 1 <= self.max_instructions < 2**63:  # the runtime's counter is an int64
            raise InputError(f"max-instructions must be in 1..{2**63 - 1}, got {self.max_instructions}")
        if self.file_size < 1:
            raise InputError(f"file-size limit must be at least 1 byte, got {self.file_size}")
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
        What the program wrote: the first `OUTPUT_KEPT` bytes of each.
    stdout_bytes, stderr_bytes : int
        How many bytes it wrote to each.
    events : numpy.ndarray or None
        The raw event stream (uint64) for instrumented runs.
    global_addresses : numpy.ndarray
        Run-time address of each global of the static table (0 if unknown).
    argv_objects : list of (int, int)
        ``(base, size)`` of the argv array and of each argument string.
    run_seconds : float
        Time spent in main when it returned; when the program left through
        ``exit()`` or ``_exit()``, the time from the start to the end of its
        process.
    wall_seconds : float
        Wall time of the whole child.
    status : dict
        The child's last report: ``sandbox`` (the level that ran),
        ``sandbox_notes``, ``failed_allocations``.
    written_files : list of (str, int)
        Files the program wrote in its working directory (namespace level:
        they went to a private overlay), relative path and size.
    kept_replaced : list of (str, str)
        With ``keep_files``: the entries of that directory that were not
        regular files (a symbolic link, a FIFO) and were replaced by the
        program's file of that name, never written through: relative path
        and what the entry was (``symbolic link to TARGET``).
    not_kept : list of (str, str)
        With ``keep_files``: the program's files that were not copied there,
        relative path and why (a symbolic link or a non-directory where a
        subdirectory is needed, a directory of the file's name).

    See Also
    --------
    run_program : returns one.

    Examples
    --------
    >>> from frontend import run_program
    >>> r = run_program("samples/strassen.c", compile_options={"defines": ["N=2"]})
    >>> r.exit_code, r.stdout.decode(), r.stderr
    (0, 'checksum: -0.934064627 -0.456639354\\n', b'')
    >>> r.written_files, r.run_seconds < r.wall_seconds
    ([], True)
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
    written_files: list = field(default_factory=list)
    kept_replaced: list = field(default_factory=list)
    not_kept: list = field(default_factory=list)
    stdout_bytes: int = 0
    stderr_bytes: int = 0


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


class _Drain(threading.Thread):
    """Pass what the program writes to one of its streams on, byte for byte, as it comes.

    The bytes go to ``sink`` (a file descriptor; None: nowhere) unchanged and
    without a size cap; the first ``keep`` bytes are also kept (``head``) and
    all are counted (``bytes``). A sink that fails (a closed pipe, a full disk)
    is dropped and the stream still drained, so the program never blocks on
    it; the failure is kept in ``sink_error``.
    """

    def __init__(self, fd, sink=None, keep=OUTPUT_KEPT):
        super().__init__(daemon=True)
        self.fd, self.sink, self.keep = fd, sink, keep
        self.head = bytearray()
        self.bytes = 0
        self.sink_error = None

    def run(self):
        while True:
            data = os.read(self.fd, 1 << 16)
            if not data:
                break
            self.bytes += len(data)
            if len(self.head) < self.keep:
                self.head += data[: self.keep - len(self.head)]
            if self.sink is not None:
                self._forward(data)
        os.close(self.fd)

    def _forward(self, data):
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.sink, view):]
        except OSError as exc:
            self.sink, self.sink_error = None, exc


class _Control(_Drain):
    """The child's JSON-lines reports (kept whole: the child is vcut's own code)."""

    def __init__(self, fd):
        super().__init__(fd, keep=1 << 62)

    def messages(self):
        out = []
        for line in bytes(self.head).splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out


def _scratch_failure(exc):
    """The `OutputError` of a scratch file (the module, the events) that cannot be written."""
    base = tempfile.gettempdir()
    return OutputError(f"cannot write the run's scratch files in {base}: {exc.strerror or exc}"
                       f"{write_failure(exc, [base], 'set TMPDIR to another directory')}")


def _minimal_env():
    return {"PATH": os.defpath, "LC_ALL": "C"}


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
    sandbox="auto",
    env=(),
    keep_files=None,
    stdout_sink=None,
    stderr_sink=None,
):
    """JIT-run a module's ``main`` in a confined child process.

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
        files by relative path); default: the current directory. At the
        namespace level the program may write there, but its writes go to a
        private overlay (see ``keep_files``).
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
        ``(elapsed_seconds, event_bytes_received)``.
    sandbox : str
        ``auto`` (the strongest level the kernel grants), or one of
        `frontend._sandbox.LEVELS` to require it (``none``: no confinement).
    env : sequence of str
        ``NAME=VALUE`` pairs: the program's whole environment (and main's
        ``envp``). Ignored at level ``none``, where the program inherits ours.
    keep_files : str, optional
        Directory to copy the files the program wrote in its working
        directory into (namespace level), without writing through a link
        (`frontend.program_files`; ``kept_replaced`` and ``not_kept`` of the result).
    stdout_sink, stderr_sink : int, optional
        File descriptors the program's stdout / stderr are copied to as they
        are written, byte for byte and without a size cap (e.g. 1 and 2 to
        show them as the program would); the first `OUTPUT_KEPT` bytes of
        each are also returned.

    Returns
    -------
    RunResult

    Raises
    ------
    InputError, LinkError, ProgramCrashed, ProgramTimeout, ProgramOutOfMemory,
    ProgramError, OutputError
    """
    limits.validate()
    if sandbox not in SANDBOX_CHOICES:
        raise InputError(f"unknown sandbox level {sandbox!r}; use one of {', '.join(SANDBOX_CHOICES)}")
    for item in env:
        name = str(item).partition("=")[0]
        if "=" not in str(item) or not name or "\0" in str(item):
            raise InputError(f"--env takes NAME=VALUE, got {item!r}")
    cwd = os.path.abspath(cwd if cwd is not None else os.getcwd())
    if not os.path.isdir(cwd):
        raise InputError(f"working directory not found: {cwd}; give an existing directory to --cwd")
    if keep_files is not None and not os.path.isdir(keep_files):
        raise InputError(f"--keep-files directory not found: {keep_files}; create it first")
    with scratch_dir("run") as tmp:
        shm_fd = shared_buffer(limits.buffer_words if instrumented else -1)
        try:
            return _run(ir, tmp, shm_fd, instrumented, globals_, main_nargs, main_void, args,
                        program_name, stdin, cwd, limits, libs, optimize, codegen_opt, progress,
                        sandbox, list(map(str, env)), keep_files, stdout_sink, stderr_sink)
        finally:
            os.close(shm_fd)


def _run(ir, tmp, shm_fd, instrumented, globals_, main_nargs, main_void, args, program_name, stdin,
         cwd, limits, libs, optimize, codegen_opt, progress, sandbox, env, keep_files,
         stdout_sink, stderr_sink):
    paths = {k: os.path.join(tmp, k) for k in ("ir", "events", "stdin", "scratch")}
    try:
        with open(paths["ir"], "w") as fh:
            fh.write(ir)
        os.mkdir(paths["scratch"])
        if isinstance(stdin, (bytes, bytearray)):
            with open(paths["stdin"], "wb") as fh:
                fh.write(stdin)
    except OSError as exc:
        raise _scratch_failure(exc) from None
    if isinstance(stdin, (bytes, bytearray)):
        stdin_path = paths["stdin"]
    elif stdin is None:
        stdin_path = os.devnull
    else:
        stdin_path = os.fspath(stdin)
        try:
            mode = os.stat(stdin_path).st_mode
        except OSError:
            raise InputError(f"stdin file not found: {stdin_path}; check the path") from None
        # a file, or a stream the program reads as it would from a shell's '<'
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise InputError(f"--stdin {stdin_path} is not a file, a FIFO or a character "
                             "device; give the file to feed the program")
    key = random.SystemRandom().getrandbits(64) | 1
    words = int(limits.buffer_words)
    ctl_r, ctl_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    ev_r, ev_w = os.pipe() if instrumented else (-1, -1)
    ack_r, ack_w = os.pipe() if instrumented else (-1, -1)
    if instrumented:
        os.set_blocking(ack_w, False)  # never wait on a program that stopped reading
    targets = channel_fds({ctl_w, ev_w, ack_r, shm_fd, out_w, err_w})
    spec = {
        "ir": paths["ir"], "shm_fd": shm_fd, "scratch": paths["scratch"], "cwd": cwd,
        "shm_bytes": shm_bytes(words if instrumented else -1),
        "buffers": [buffer_offset(k, words) + CHUNK_HEADER_WORDS * 8 for k in (0, 1)],
        "ctl_fd": ctl_w, "event_fd": ev_w, "event_fd_target": targets[0],
        "ack_fd": ack_r, "ack_fd_target": targets[1],
        "parent_pid": os.getpid(), "key": key, "sys_path": [_llvmlite_dir()],
        "instrumented": bool(instrumented),
        "budget": int(limits.max_instructions),
        "buffer_words": words,
        "globals": [str(g) for g in globals_],
        "argv": [program_name, *map(str, args)],
        "main_nargs": int(main_nargs),
        "main_void": bool(main_void),
        "libs": list(libs),
        "optimize": bool(optimize),
        "codegen_opt": int(codegen_opt),
        "sandbox": sandbox,
        # an administrator's switch for kernels whose user namespaces misbehave
        "no_namespaces": os.environ.get("VCUT_NO_NAMESPACES", "") not in ("", "0"),
        "env": env,
        "cpu_seconds": limits.cpu_seconds,
        "file_bytes": int(limits.file_size),
    }
    spec_path = os.path.join(tmp, "spec.json")
    try:
        with open(spec_path, "w") as fh:
            json.dump(spec, fh)
    except OSError as exc:
        raise _scratch_failure(exc) from None
    # the child is run as a plain script: it needs only llvmlite and the
    # standard library, not this package (numpy/numba would slow its start); -S: no
    # site-packages start-up code (.pth files: numba-cuda's import redirector made the
    # program's heap addresses differ run after run), llvmlite's directory comes in the spec
    child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child.py")
    readers = [_Control(ctl_r), _Drain(out_r, stdout_sink), _Drain(err_r, stderr_sink)]
    channel = None
    if instrumented:
        channel = EventChannel(ev_r, ack_w, shm_fd, paths["events"], key, words)
        readers.append(channel)
    t0 = time.perf_counter()
    passed = tuple(fd for fd in (ctl_w, ev_w, ack_r, shm_fd) if fd >= 0)
    try:
        with open(stdin_path, "rb") as fin:
            proc = subprocess.Popen(
                _padded([sys.executable, "-I", "-S", child, spec_path]),
                stdin=fin, stdout=out_w, stderr=err_w, cwd=cwd, pass_fds=passed,
                start_new_session=True, preexec_fn=_limit_child(limits.memory),
                env=os.environ.copy() if sandbox == "none" else _minimal_env(),
            )
    finally:
        for fd in (ctl_w, out_w, err_w, ev_w, ack_r):
            if fd >= 0:
                os.close(fd)
    for r in readers:
        r.start()
    timed_out = False
    next_report = 1.0
    try:
        while True:
            # the control reader ends as the child closes its control pipe (it has reported,
            # or it died): joined, it wakes this loop at once, where `proc.wait(timeout=)`
            # polls with sleeps of up to 50 ms (0.13 s of a 0.7 s trace and graph)
            readers[0].join(timeout=0.05)
            rc = proc.poll()
            if rc is not None:
                break
            if not readers[0].is_alive():
                # the child has reported and closed its control pipe; at the namespace level
                # it still waits while the kernel tears the namespaces down: reap it later
                rc = None
                threading.Thread(target=proc.wait, daemon=True).start()
                break
            elapsed = time.perf_counter() - t0
            if elapsed > limits.timeout:
                timed_out = True
                _kill_group(proc.pid)
                rc = proc.wait()
                break
            if progress is not None and elapsed >= next_report:
                progress(elapsed, channel.words * 8 if channel else 0)
                next_report = elapsed + 0.5
    except BaseException:
        _kill_group(proc.pid)  # interrupted: the program must not outlive us
        proc.wait()
        raise
    for r in readers:
        r.join(timeout=10.0)
    wall = time.perf_counter() - t0
    if channel is not None and channel.failed is not None:
        raise _scratch_failure(channel.failed)
    for r in readers[1:3]:  # a sink that was not a closed pipe: its output is incomplete
        if r.sink_error is not None and r.sink_error.errno != errno.EPIPE:
            raise r.sink_error
    messages = readers[0].messages()
    out, err = bytes(readers[1].head), bytes(readers[2].head)
    if timed_out:
        raise ProgramTimeout(
            f"the program ran past the {limits.timeout:g} s time limit (an endless loop?) "
            "and was stopped; raise --timeout, or cap the trace with --max-instructions"
        )
    setup = next((m for m in messages if m.get("phase") == "setup"), None)
    if setup is not None:
        _raise_setup(setup)
    status = next((m for m in messages if m.get("phase") == "exited"), None)
    if status is None or status.get("status") is None:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        how = "" if rc is None else f" (exit {rc})"
        raise VcutError(f"the tracing child process failed before the program ended{how}: {last}")
    raw = int(status["status"])
    err_text = err.decode(errors="replace")
    shared = np.frombuffer(os.pread(shm_fd, 24, 0), dtype="<u8")
    status["failed_allocations"] = int(shared[2])
    if os.WIFSIGNALED(raw):
        _raise_signal(os.WTERMSIG(raw), err_text, limits, int(shared[2]))
    code = os.WEXITSTATUS(raw)
    if "LLVM ERROR: out of memory" in err_text:
        raise ProgramOutOfMemory(_oom_message(limits))
    events = None
    if instrumented:
        events = collect_events(channel, paths, shm_fd, words, code, spec["event_fd_target"])
    written, replaced, not_kept = written_files(os.path.join(paths["scratch"], "upper"),
                                                 keep_files)
    objects = status.get("objects", {})
    main_ns = int(shared[1])
    # time in main when it returned; else from start to end of the program's process
    run_seconds = main_ns / 1e9 if main_ns else status.get("run_seconds")
    return RunResult(
        exit_code=code,
        stdout=out,
        stderr=err,
        stdout_bytes=readers[1].bytes,
        stderr_bytes=readers[2].bytes,
        events=events,
        global_addresses=np.array(objects.get("globals", []), dtype=np.uint64),
        argv_objects=[tuple(x) for x in objects.get("argv", [])],
        run_seconds=float("nan") if run_seconds is None else float(run_seconds),
        wall_seconds=wall,
        status=status,
        written_files=written,
        kept_replaced=replaced,
        not_kept=not_kept,
    )


#: Bytes the child's argv strings are padded to: the kernel copies them to the top of the
#: stack, so their length would move every stack address of the traced program.
ARGV_BYTES = 4096


def _llvmlite_dir():
    """The directory holding the llvmlite package (the child imports it from there)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(llvmlite.__file__)))


def _padded(argv):
    """``argv`` plus a filler argument that brings its strings to `ARGV_BYTES` (when shorter)."""
    used = sum(len(os.fsencode(a)) + 1 for a in argv) + 1
    return [*argv, "-" * max(0, ARGV_BYTES - used - 1)]


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _raise_setup(setup):
    if setup.get("error") == "link":
        syms = setup.get("symbols") or []
        names = ", ".join(syms[:8]) + (" ..." if len(syms) > 8 else "")
        raise LinkError(
            f"undefined symbol{'s' if len(syms) != 1 else ''} {names}: defined neither in "
            "the program nor in the C libraries; add the .c file that defines "
            "it or the library (-l)"
            if syms
            else setup.get("message", "link failed")
        )
    if setup.get("error") == "sandbox":
        raise SandboxUnavailable(
            f"the sandbox level asked for is not available here ({setup.get('message')}); "
            "use --sandbox auto to take the strongest level this machine grants"
        )
    raise VcutError(f"the JIT rejected the module: {setup.get('message')}")


def _raise_signal(sig, err_text, limits, failed_allocations=0):
    if sig == signal.SIGXCPU:
        raise ProgramTimeout(
            f"the program used more than {limits.cpu_seconds} s of CPU time (the CPU "
            "limit follows --timeout) and was stopped; raise --timeout"
        )
    if sig == signal.SIGXFSZ:
        raise ProgramError(
            f"the program wrote a file past the {limits.file_size >> 20} MiB file-size limit "
            "and was stopped; raise --file-limit"
        )
    if sig == signal.SIGSYS:
        raise ProgramError(
            "the program made a system call the sandbox does not allow and was stopped"
        )
    if "MemoryError" in err_text or "out of memory" in err_text.lower():
        raise ProgramOutOfMemory(_oom_message(limits))
    name = _SIGNAMES.get(sig, signal.Signals(sig).name if sig in signal.Signals._value2member_map_
                         else f"signal {sig}")
    if failed_allocations:
        raise ProgramOutOfMemory(
            f"the program crashed with {name} after {failed_allocations} heap allocation(s) "
            f"returned NULL under the {limits.memory >> 20} MiB memory limit; raise "
            "--memory-limit if the machine has room"
        )
    raise ProgramCrashed(
        f"the program crashed with {name}; run it natively under a debugger to find the fault"
    )


def _oom_message(limits):
    return (
        f"the program ran out of memory under the {limits.memory >> 20} MiB limit; "
        "raise --memory-limit if the machine has room"
    )
