"""Child-process side of `frontend.run`: JIT-compile a module and run main.

Invoked as ``python -I .../frontend/_child.py SPEC.json`` (a plain script:
stdlib and llvmlite only, so it starts fast). Runs in its own process
(under the limits the parent set) so that a crashing, exiting or looping
program never takes the caller down. Reports through files named in the
spec: ``status`` (JSON, written before and after main) and, for
instrumented modules, the event stream written by the IR runtime itself.
"""

import ctypes
import ctypes.util
import json
import os
import sys
import time

EXIT_SETUP_FAILED = 3


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(obj, fh)
    os.replace(tmp, path)


def _fail(spec, kind, message, **extra):
    _write_json(spec["status"], {"phase": "setup", "error": kind, "message": message, **extra})
    sys.stderr.flush()
    os._exit(EXIT_SETUP_FAILED)


def main(spec_path):
    with open(spec_path) as fh:
        spec = json.load(fh)
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libc = ctypes.CDLL(None)
    for lib in ["m", *spec.get("libs", [])]:
        path = ctypes.util.find_library(lib) or lib
        try:
            llvm.load_library_permanently(path)
        except RuntimeError:
            _fail(spec, "link", f"library {lib!r} not found", symbols=[])
    with open(spec["ir"]) as fh:
        text = fh.read()
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as exc:
        _fail(spec, "ir", " ".join(str(exc).split()))
    missing = []
    for f in mod.functions:
        if f.is_declaration and not f.name.startswith("llvm.") and f.name:
            if llvm.address_of_symbol(f.name) is None:
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
    ee.finalize_object()

    keep = []  # keep ctypes objects alive while the program runs
    objects = {"globals": [], "argv": []}
    if spec["instrumented"]:
        words = int(spec["buffer_words"])
        buf = (ctypes.c_uint64 * words)()
        keep.append(buf)
        fd = os.open(spec["events"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

        def set_global(name, ctype, value):
            addr = ee.get_global_value_address(name)
            ctype.from_address(addr).value = value

        set_global("__vcut_buf", ctypes.c_uint64, ctypes.addressof(buf))
        set_global("__vcut_cap", ctypes.c_int64, words)
        set_global("__vcut_fd", ctypes.c_int32, fd)
        set_global("__vcut_budget", ctypes.c_int64, int(spec["budget"]))
        for name, fn in (("__vcut_write_fn", libc.write), ("__vcut_exit_fn", libc._exit),
                         ("__vcut_strlen_fn", libc.strlen)):
            set_global(name, ctypes.c_uint64, ctypes.cast(fn, ctypes.c_void_p).value)
        table = ee.get_global_value_address("__vcut_gtab")
        n_globals = len(spec["globals"])
        objects["globals"] = list((ctypes.c_uint64 * n_globals).from_address(table))
        # glibc exports __cxa_atexit (atexit itself lives in libc_nonshared.a)
        atexit_fn = ctypes.c_void_p(ee.get_function_address("__vcut_atexit"))
        libc.__cxa_atexit(atexit_fn, None, None)
        finish = ctypes.CFUNCTYPE(None, ctypes.c_int64)(ee.get_function_address("__vcut_finish"))

    argv_strings = [a.encode() for a in spec["argv"]]
    argc = len(argv_strings)
    arg_bufs = [ctypes.create_string_buffer(s) for s in argv_strings]
    argv = (ctypes.c_char_p * (argc + 1))(*[ctypes.addressof(b) for b in arg_bufs], None)
    keep += [arg_bufs, argv]
    objects["argv"].append([ctypes.addressof(argv), ctypes.sizeof(argv)])
    for b in arg_bufs:
        objects["argv"].append([ctypes.addressof(b), ctypes.sizeof(b)])

    ret = ctypes.c_int32 if not spec["main_void"] else None
    nargs = int(spec["main_nargs"])
    if nargs == 0:
        cmain = ctypes.CFUNCTYPE(ret)(ee.get_function_address("main"))
        call = cmain
    else:
        cmain = ctypes.CFUNCTYPE(ret, ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(
            ee.get_function_address("main")
        )
        envp = (ctypes.c_char_p * 1)(None)
        keep.append(envp)

        def call():
            return cmain(argc, ctypes.addressof(argv), ctypes.addressof(envp))

    _write_json(spec["status"], {"phase": "running", "objects": objects, "t_start": time.time()})
    t0 = time.perf_counter()
    code = call()
    elapsed = time.perf_counter() - t0
    if spec["instrumented"]:
        finish(0)
    libc.fflush(None)
    code = 0 if code is None else int(code)
    _write_json(
        spec["status"],
        {"phase": "returned", "objects": objects, "exit_code": code, "run_seconds": elapsed},
    )
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main(sys.argv[1])
