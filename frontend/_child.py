"""Child-process side of `frontend.run`: JIT-compile a module and run main, confined.

Invoked as ``python -I -S .../frontend/_child.py SPEC.json`` (a plain script:
stdlib and llvmlite only, so it starts fast; no site-packages start-up code runs,
llvmlite's directory comes in the spec). The processes:

* **S**, this script: loads libraries, parses, verifies, links and
  JIT-compiles the module, reports the setup on the control pipe, then
  starts the program and waits for it; the last thing it does is report
  how the program ended. The control pipe never reaches the program.
* at level ``namespaces``, **R** (forked by S) enters new namespaces and a
  new root (`_sandbox.enter_namespaces`) and forks **I**, PID 1 of the new
  PID namespace, which forks the program and reaps everything; when I exits
  the kernel kills whatever is left in the namespace. At the other levels S
  forks the program itself, as a child subreaper that kills every
  descendant left when the program ends.
* **P**, the program: closes every channel but its event pipe, applies the
  rlimits, a clean environment and the seccomp filter, and calls ``main``.

Every process here dies with its parent (``PR_SET_PDEATHSIG``), so killing
vcut, or S, takes the whole tree down.
"""

import ctypes
import ctypes.util
import json
import mmap
import os
import resource
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _sandbox  # noqa: E402  (a sibling module, stdlib only)

EXIT_SETUP_FAILED = 3
def _send(fd, obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _fail(spec, kind, message, **extra):
    _send(spec["ctl_fd"], {"phase": "setup", "error": kind, "message": message, **extra})
    sys.stderr.flush()
    os._exit(EXIT_SETUP_FAILED)


#: What glibc keeps in libc_nonshared.a (linked statically into every program by gcc), so
#: that no shared library exports it: provided by a small uninstrumented module.
_NONSHARED = {
    "atexit": """
define i32 @atexit(ptr %f) {
  %r = call i32 @__cxa_atexit(ptr %f, ptr null, ptr null)
  ret i32 %r
}
declare i32 @__cxa_atexit(ptr, ptr, ptr)
""",
    "at_quick_exit": """
define i32 @at_quick_exit(ptr %f) {
  %r = call i32 @__cxa_at_quick_exit(ptr %f, ptr null)
  ret i32 %r
}
declare i32 @__cxa_at_quick_exit(ptr, ptr)
""",
}


def _compile(spec, llvm):
    """Load libraries, parse, verify, link-check and JIT the module; the engine."""
    for lib in ["m", *spec.get("libs", [])]:
        path = ctypes.util.find_library(lib) or lib
        try:
            llvm.load_library_permanently(path)
        except RuntimeError:
            _fail(spec, "link", f"library {lib!r} not found", symbols=[])
    # the compiler's runtime helpers (__muldc3, __divdc3, __mulsc3, __divti3, ...), which a
    # native link takes from libgcc / compiler-rt
    for name in ("gcc_s", "libgcc_s.so.1"):
        path = ctypes.util.find_library(name) if "." not in name else name
        if path:
            try:
                llvm.load_library_permanently(path)
                break
            except RuntimeError:
                continue
    with open(spec["ir"]) as fh:
        text = fh.read()
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as exc:
        _fail(spec, "ir", " ".join(str(exc).split()))
    missing = []
    shims = []
    for f in mod.functions:
        if f.is_declaration and not f.name.startswith("llvm.") and f.name:
            if llvm.address_of_symbol(f.name) is None:
                if f.name in _NONSHARED:
                    shims.append(_NONSHARED[f.name])
                else:
                    missing.append(f.name)
    for g in mod.global_variables:
        if g.is_declaration and llvm.address_of_symbol(g.name) is None:
            missing.append(g.name)
    if missing:
        _fail(spec, "link", "undefined symbols", symbols=sorted(set(missing)))
    target = llvm.Target.from_triple(mod.triple)
    tm = target.create_target_machine(opt=int(spec["codegen_opt"]), codemodel="jitdefault")
    if spec["instrumented"]:
        if spec.get("optimize"):
            pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=1))
            pm = pb.getModulePassManager()
        else:
            pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options())
            pm = llvm.create_new_module_pass_manager()
            pm.add_always_inliner_pass()
        pm.run(mod, pb)
    ee = llvm.create_mcjit_compiler(mod, tm)
    if shims:
        shim = llvm.parse_assembly("".join(shims))
        shim.triple = mod.triple
        shim.data_layout = mod.data_layout
        ee.add_module(shim)
    ee.finalize_object()
    return ee


def _connect_runtime(spec, ee, libc, keep):
    """Point the tracing runtime at the shared buffer and the event pipe."""
    words = int(spec["buffer_words"])
    shm = spec["_shm"]
    base = ctypes.addressof(ctypes.c_char.from_buffer(shm))
    fd = int(spec["event_fd"])

    def set_global(name, ctype, value):
        ctype.from_address(ee.get_global_value_address(name)).value = value

    # the two event buffers, where vcut's layout (frontend.event_channel.buffer_offset) puts them
    set_global("__vcut_buf", ctypes.c_uint64, base + int(spec["buffers"][0]))
    set_global("__vcut_buf2", ctypes.c_uint64, base + int(spec["buffers"][1]))
    set_global("__vcut_shm", ctypes.c_uint64, base)
    set_global("__vcut_ackfd", ctypes.c_int32, int(spec["ack_fd"]))
    set_global("__vcut_cap", ctypes.c_int64, words)
    set_global("__vcut_fd", ctypes.c_int32, fd)
    set_global("__vcut_key", ctypes.c_uint64, int(spec["key"]))
    set_global("__vcut_budget", ctypes.c_int64, int(spec["budget"]))
    for name, fn in (("__vcut_write_fn", libc.write), ("__vcut_read_fn", libc.read),
                     ("__vcut_exit_fn", libc._exit), ("__vcut_strlen_fn", libc.strlen)):
        set_global(name, ctypes.c_uint64, ctypes.cast(fn, ctypes.c_void_p).value)
    table = ee.get_global_value_address("__vcut_gtab")
    n_globals = len(spec["globals"])
    globals_ = list((ctypes.c_uint64 * n_globals).from_address(table))
    # glibc exports __cxa_atexit (atexit itself lives in libc_nonshared.a)
    atexit_fn = ctypes.c_void_p(ee.get_function_address("__vcut_atexit"))
    libc.__cxa_atexit(atexit_fn, None, None)
    finish = ctypes.CFUNCTYPE(None, ctypes.c_int64)(ee.get_function_address("__vcut_finish"))
    keep.append(finish)
    return globals_, finish


def _arguments(spec, objects, keep):
    """argv and envp of main, made before the fork so that their addresses are known."""
    argv_strings = [a.encode() for a in spec["argv"]]
    argc = len(argv_strings)
    arg_bufs = [ctypes.create_string_buffer(s) for s in argv_strings]
    argv = (ctypes.c_char_p * (argc + 1))(*[ctypes.addressof(b) for b in arg_bufs], None)
    env = [e.encode() for e in spec.get("env", [])]
    envp = (ctypes.c_char_p * (len(env) + 1))(*env, None)
    keep += [arg_bufs, argv, envp]
    objects["argv"].append([ctypes.addressof(argv), ctypes.sizeof(argv)])
    for b in arg_bufs:
        objects["argv"].append([ctypes.addressof(b), ctypes.sizeof(b)])
    return argc, argv, env, envp


def _program(spec, ee, libc, arguments, finish, level, parent):
    """Body of P: confine this process, call main on a thread of its own, leave with its status.

    main runs on a new thread because glibc gives a new thread a malloc arena of its
    own: the program's heap then starts empty, at an address that does not depend on
    what this Python process allocated while it set the run up (which varies with the
    environment, the paths, the messages), so heap addresses, and with them the
    cache-model weights, repeat exactly run after run. The thread is created before
    the limits (``RLIMIT_NPROC``) and the seccomp filter (which refuses ``clone``); the
    filter is then installed on both threads at once (``TSYNC``).
    """
    _sandbox.die_with_parent(parent)
    for fd in (spec["ctl_fd"], spec["status_fd"]):
        try:
            os.close(fd)
        except OSError:  # R has closed the control pipe already at the namespace level
            pass
    os.setpgid(0, 0)  # signals to "my process group" reach only the program
    # a C program starts with default dispositions (Python ignores SIGPIPE and SIGXFSZ)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    argc, argv, env, envp = arguments
    main_ns = ctypes.c_uint64.from_buffer(spec["_shm"], 8)
    ret = ctypes.c_int32 if not spec["main_void"] else None
    go = threading.Lock()
    go.acquire()
    result = []

    def body():
        go.acquire()  # released once the process is confined
        ee.run_static_constructors()  # __attribute__((constructor)), confined
        # destructors run at exit, after the atexit handlers registered later (as in C)
        destructors = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
            lambda _: ee.run_static_destructors())
        spec["_keep_destructors"] = destructors
        libc.__cxa_atexit(destructors, None, None)
        address = ee.get_function_address("main")
        if int(spec["main_nargs"]) == 0:
            cmain = ctypes.CFUNCTYPE(ret)(address)
            t0 = time.perf_counter_ns()
            result.append(cmain())
        else:
            cmain = ctypes.CFUNCTYPE(ret, ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(
                address)
            t0 = time.perf_counter_ns()
            result.append(cmain(argc, ctypes.addressof(argv), ctypes.addressof(envp)))
        main_ns.value = max(1, time.perf_counter_ns() - t0)

    threading.stack_size(_main_stack_bytes())
    runner = threading.Thread(target=body, name="main", daemon=True)
    runner.start()
    if level != "none":
        _sandbox.apply_rlimits(cpu_seconds=spec["cpu_seconds"], file_bytes=spec["file_bytes"])
        libc.clearenv()
        for item in env:
            name, _, value = item.partition(b"=")
            libc.setenv(name, value, 1)
    # a process the program manages to create (no filter at the lower levels) gets no
    # event buffer: it dies at its first event instead of writing into ours
    spec["_shm"].madvise(mmap.MADV_DONTFORK)
    if level in ("namespaces", "seccomp"):
        _sandbox.install_seccomp(os.getpid(), all_threads=True)
    go.release()
    runner.join()
    if not result:  # the thread ended without main returning (e.g. pthread_exit)
        libc.exit(0)
    code = result[0]
    if finish is not None:
        ctypes.c_int64.from_address(ee.get_global_value_address("__vcut_end_reason")).value = 0
    # as C does after main returns: exit(), which runs the program's atexit handlers, then
    # the destructors, then the tracer's own handler (registered first, so run last), and
    # flushes stdio
    libc.exit((0 if code is None else int(code)) & 0xFF)


#: The stack of main's thread when the stack limit is unlimited (glibc's default too).
DEFAULT_STACK_BYTES = 8 << 20
#: The most reserved for main's thread, whatever the stack limit says.
MAX_STACK_BYTES = 1 << 30


def _main_stack_bytes():
    """The size of main's stack: the soft stack limit, as a native main thread would get."""
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return DEFAULT_STACK_BYTES
    return int(min(max(soft, 1 << 20), MAX_STACK_BYTES))


def _kill_descendants():
    """SIGKILL every child of this (subreaper) process until none is left."""
    me = os.getpid()
    for _ in range(100):
        children = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        stat = fh.read()
                except OSError:
                    continue
                fields = stat[stat.rfind(b")") + 2:].split()
                if int(fields[1]) == me:
                    children.append(int(entry))
        if not children:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def main(spec_path):
    with open(spec_path) as fh:
        spec = json.load(fh)
    _sandbox.die_with_parent(int(spec["parent_pid"]))
    for name in ("event_fd", "ack_fd"):  # out of the way, at random high numbers
        if spec.get(name, -1) >= 0 and spec[name] != spec[name + "_target"]:
            os.dup2(spec[name], spec[name + "_target"], inheritable=True)
            os.close(spec[name])
            spec[name] = spec[name + "_target"]
    sys.path[:0] = spec.get("sys_path", [])  # run with -S: llvmlite's directory only
    import llvmlite.binding as llvm  # lazy: from the directory the spec names (sys.path above)

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libc = ctypes.CDLL(None)
    libc.setenv.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    ee = _compile(spec, llvm)
    # shared with vcut (layout: frontend.event_channel.buffer_offset)
    spec["_shm"] = mmap.mmap(int(spec["shm_fd"]), int(spec["shm_bytes"]))
    os.close(int(spec["shm_fd"]))
    keep = [spec["_shm"]]  # keep ctypes objects alive while the program runs
    objects = {"globals": [], "argv": []}
    finish = None
    if spec["instrumented"]:
        objects["globals"], finish = _connect_runtime(spec, ee, libc, keep)
    arguments = _arguments(spec, objects, keep)

    requested = spec["sandbox"]
    status_r, status_w = os.pipe()
    spec["status_fd"] = status_w
    me = os.getpid()
    level, notes = requested, []
    t0 = time.monotonic()
    if requested in ("auto", "namespaces"):
        r = os.fork()
        if r == 0:  # R
            _sandbox.die_with_parent(me)
            os.close(status_r)
            os.close(spec["ctl_fd"])  # R and I report through the status pipe, to S
            try:
                if spec.get("no_namespaces"):
                    raise _sandbox.SandboxError("disabled by VCUT_NO_NAMESPACES")
                notes = _sandbox.enter_namespaces(spec["scratch"], spec["cwd"])
            except (_sandbox.SandboxError, OSError) as exc:
                _send(status_w, {"sandbox_error": str(exc)})
                os._exit(1)
            _send(status_w, {"ready": True, "notes": notes})
            i = os.fork()
            if i == 0:  # I: PID 1 of the namespace
                _sandbox.die_with_parent(0)  # R is outside the namespace: seen as pid 0
                i_pid = os.getpid()
                start = time.monotonic()
                p = os.fork()
                if p == 0:
                    _program(spec, ee, libc, arguments, finish, "namespaces", i_pid)
                _close_events(spec)
                _release_streams()
                status = None
                while True:
                    try:
                        pid, st = os.wait()
                    except ChildProcessError:
                        break
                    if pid == p:
                        status = st
                        break
                _send(status_w, {"status": status, "run_seconds": time.monotonic() - start})
                os._exit(0)
            _close_events(spec)
            _release_streams()
            os.close(status_w)
            _, st = os.waitpid(i, 0)
            os._exit(0)
        os.close(status_w)
        ready = _read_line(status_r)
        if ready.get("ready"):
            # the program runs: from here on only the namespace's processes hold its
            # streams and the event channel, so vcut sees them end with the program
            _close_events(spec)
            _release_streams()
            final = _read_line(status_r)  # I's report: the program has ended
            _report(spec, objects, "namespaces", ready.get("notes", []),
                    final if "status" in final else {"status": None}, t0, wait_for=r)
        os.waitpid(r, 0)
        if requested == "namespaces":
            _fail(spec, "sandbox", f"namespaces refused: {ready.get('sandbox_error', 'unknown')}")
        notes = [f"namespaces refused: {ready.get('sandbox_error', 'unknown')}"]
        level = "seccomp"
        status_r, status_w = os.pipe()
        spec["status_fd"] = status_w
    if level == "seccomp" and not _sandbox.seccomp_supported():
        if requested == "seccomp":
            _fail(spec, "sandbox", "no seccomp filter for this architecture")
        notes.append("no seccomp filter for this architecture")
        level = "rlimits"
    _sandbox.become_subreaper()
    start = time.monotonic()
    p = os.fork()
    if p == 0:
        _program(spec, ee, libc, arguments, finish, level, me)
    _close_events(spec)
    _, st = os.waitpid(p, 0)
    run_seconds = time.monotonic() - start
    _kill_descendants()
    _report(spec, objects, level, notes, {"status": st, "run_seconds": run_seconds}, t0)


def _close_events(spec):
    for name in ("event_fd", "ack_fd"):
        if spec.get(name, -1) >= 0:
            os.close(spec[name])


def _release_streams():
    """Point this helper's stdin/stdout/stderr at /dev/null (the program keeps the real ones)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _read_line(fd):
    """The next JSON line on ``fd`` (one byte at a time: nothing after it is consumed); {}
    at the end of the pipe."""
    data = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b or b == b"\n":
            break
        data += b
    try:
        return json.loads(data) if data else {}
    except ValueError:
        return {}


def _report(spec, objects, level, notes, final, t0, wait_for=None):
    """Tell vcut how the program ended, then (``wait_for``) wait for the namespace's
    helper while the kernel tears the namespaces down, and leave."""
    _send(spec["ctl_fd"], {"phase": "exited", "objects": objects, "sandbox": level,
                           "sandbox_notes": notes, "status": final.get("status"),
                           "run_seconds": final.get("run_seconds"),
                           "child_seconds": time.monotonic() - t0})
    os.close(spec["ctl_fd"])
    if wait_for is not None:
        os.waitpid(wait_for, 0)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
