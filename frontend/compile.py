"""Compile C sources to one textual LLVM IR module.

Each ``.c`` file is compiled with the toolchain from `find_toolchain` to
textual IR; ``.ll`` files are taken as they are. The modules are linked with
llvmlite into one, whose target triple is set to this process's triple so the
JIT accepts it.

Old C is accepted the way older compilers did: implicit function
declarations, implicit ``int``, K&R definitions and int/pointer conversions
are warnings, not errors (``-std=gnu17`` plus ``-Wno-error=...``).
Sanitizers and the stack protector, which some drivers add by default, are
switched off: the trace must show the program's own instructions.
"""

import os
import subprocess
from dataclasses import dataclass

import llvmlite.binding as llvm

from vcut_base.errors import CompileError, InputError, LinkError
from vcut_base.inputs import check_input_file, read_input
from vcut_base.scratch import scratch_dir

from .toolchain import find_toolchain

__all__ = ["CompiledModule", "compile_program", "BASE_FLAGS"]

#: Flags every compilation gets, before the user's own.
BASE_FLAGS = (
    "-std=gnu17",
    "-fno-sanitize=all",
    "-fno-stack-protector",
    "-fno-stack-check",
    "-fno-exceptions",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=implicit-int",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=incompatible-function-pointer-types",
    "-Wno-error=return-type",
    "-Wno-deprecated-non-prototype",
)

_OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-Og")

_NOISE = ("argument unused during compilation: '-c'",)


@dataclass(frozen=True)
class CompiledModule:
    """A C program as one linked LLVM IR module.

    Attributes
    ----------
    ir : str
        Textual IR of the linked module, target triple normalised.
    sources : tuple of str
        Absolute paths of the inputs, in link order.
    flags : tuple of str
        Every flag passed to the compiler (base flags, then the user's).
    compiler : str
        The compiler's version line.
    diagnostics : str
        Warnings the compiler printed (empty when none).

    See Also
    --------
    compile_program : makes one.
    instrument_module : instruments its ``ir``.

    Examples
    --------
    >>> from frontend import compile_program
    >>> cm = compile_program("samples/strassen.c", defines=["N=2"])
    >>> cm.sources
    ('.../samples/strassen.c',)
    >>> cm.flags[-3:], cm.diagnostics
    (('-O0', '-gline-tables-only', '-DN=2'), '')
    >>> cm.ir.count("define i32 @main(")
    1
    """

    ir: str
    sources: tuple
    flags: tuple
    compiler: str
    diagnostics: str = ""


def _check_source(path):
    if not os.path.exists(path):
        raise InputError(f"input file not found: {path}; check the path")
    if os.path.isdir(path):
        raise InputError(f"input is a directory, not a C file: {path}")
    check_input_file(path, "input file")
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".c", ".ll"):
        raise InputError(
            f"input is not a C source file: {path} (extension {ext or 'none'!r}); "
            "give .c files (or .ll LLVM IR)"
        )
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in head:
        raise InputError(
            f"input is not a C source file: {path} contains binary data; give C source text"
        )


def _clean_diagnostics(text):
    lines = [ln for ln in text.splitlines() if not any(n in ln for n in _NOISE)]
    return "\n".join(lines).strip()


#: Characters of the compiler's first error quoted in a failed compilation's message.
QUOTED_ERROR = 120


def _failure_message(src, code, diag):
    """The one line of a failed compilation of ``src``: the compiler's exit status and its
    first error (the source's own path shortened to its name), or that it printed none.
    The diagnostics themselves travel in the error's ``details``."""
    name = os.path.basename(src)
    head = f"compilation of {name} failed (compiler exit {code})"
    lines = diag.splitlines()
    first = next((ln for ln in lines if "error:" in ln), lines[0] if lines else "")
    if not first.strip():
        return f"{head} without printing a diagnostic; compile {name} by hand to see why"
    first = first.strip()
    if first.startswith(src + ":"):
        first = name + first[len(src):]
    if len(first) > QUOTED_ERROR:
        first = first[:QUOTED_ERROR - 3] + "..."
    return f"{head}: {first}; fix the errors the compiler reported"


def _check_strings(name, given):
    """Refuse a string, a mapping or items that are not strings where a sequence of strings
    is expected: ``defines={"N": 4}`` would define only ``N`` (as 1), ``defines="N=4"``
    each of its characters."""
    if isinstance(given, (str, bytes, dict)) or not all(
            isinstance(item, (str, os.PathLike)) for item in given):
        example = {"defines": '["N=64"]', "include_dirs": '["include"]',
                   "extra_flags": '["-ffast-math"]'}[name]
        raise InputError(f"{name} must be a list of strings (e.g. {name}={example}), "
                         f"got {given!r}")


def compile_program(
    sources,
    *,
    opt="-O0",
    defines=(),
    include_dirs=(),
    extra_flags=(),
    debug_lines=True,
    timeout=300,
    keep_out_of_line=(),
):
    """Compile and link C sources into one LLVM IR module.

    Parameters
    ----------
    sources : str or sequence of str
        ``.c`` files (and/or ``.ll`` IR files), linked in the given order.
    opt : str
        Optimisation flag, one of ``-O0 -O1 -O2 -O3 -Os -Oz -Og``.
    defines : sequence of str
        Macro definitions, ``NAME`` or ``NAME=VALUE`` (passed as ``-D``).
    include_dirs : sequence of str
        Include directories (passed as ``-I``).
    extra_flags : sequence of str
        Any further compiler flags, passed through unchanged.
    debug_lines : bool
        Emit line tables (``-gline-tables-only``) so the trace knows each
        instruction's source line.
    timeout : float
        Seconds allowed for each compiler run.
    keep_out_of_line : sequence of str
        Functions that must not be inlined (the ``--roi`` functions: a
        region of interest is a call). With an optimisation level above
        ``-O0`` the sources are compiled with LLVM's passes disabled, these
        functions marked ``noinline``, and the linked module optimised with
        the same ``default<On>`` pipeline (``-Os``/``-Oz`` use ``O2``'s).

    Returns
    -------
    CompiledModule
        The linked module's IR (target triple set to this process's), the
        sources, the flags used and the compiler's version and warnings.

    Raises
    ------
    InputError
        No source, a source missing, unreadable, binary or not ``.c``/``.ll``,
        or an unknown ``opt``.
    ToolchainError
        No usable C compiler was found.
    CompileError
        The compiler rejected a source (or took longer than ``timeout``), or
        an IR file fails LLVM's verifier; ``details`` holds the diagnostics.
    LinkError
        Linking the modules failed (a symbol defined twice, ...).

    See Also
    --------
    trace_program : compiles, instruments and runs in one call.

    Examples
    --------
    >>> import os, re, tempfile
    >>> from frontend import compile_program
    >>> cm = compile_program("samples/strassen.c", defines=["N=2"])
    >>> sorted(re.findall(r"^define .*@(\\w+)\\(", cm.ir, flags=re.M))
    ['add', 'main', 'rnd', 'strassen']

    Optimised, with the region-of-interest function kept out of line:

    >>> o2 = compile_program("samples/strassen.c", opt="-O2", keep_out_of_line=["strassen"])
    >>> "-O2" in o2.flags, "@strassen(" in o2.ir
    (True, True)

    A program the compiler rejects:

    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     bad = os.path.join(tmp, "bad.c")
    ...     _ = open(bad, "w").write("int main(void) { return x; }\\n")
    ...     compile_program(bad)
    Traceback (most recent call last):
        ...
    vcut_base.errors.CompileError: compilation of bad.c failed (compiler exit 1):
    bad.c:1:25: error: use of undeclared identifier 'x'; fix the errors the compiler reported
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    sources = [os.path.abspath(os.fspath(s)) for s in sources]
    if not sources:
        raise InputError("no input files given; name at least one .c file")
    for src in sources:
        _check_source(src)
    if opt not in _OPT_LEVELS:
        raise InputError(f"unknown optimisation level {opt!r}; use one of {', '.join(_OPT_LEVELS)}")
    for name, given in (("defines", defines), ("include_dirs", include_dirs),
                        ("extra_flags", extra_flags)):
        _check_strings(name, given)
    tc = find_toolchain()
    flags = list(BASE_FLAGS) + [opt]
    # some drivers (zig) emit full debug info by default: always say which
    flags.append("-gline-tables-only" if debug_lines else "-g0")
    flags += [f"-D{d}" for d in defines]
    flags += [f"-I{os.path.abspath(i)}" for i in include_dirs]
    flags += list(extra_flags)
    pipeline = _OPT_PIPELINE.get(opt) if keep_out_of_line else None
    if pipeline:
        flags += ["-Xclang", "-disable-llvm-passes"]
    modules = []
    diagnostics = []
    with scratch_dir("cc") as tmp:
        for k, src in enumerate(sources):
            if src.lower().endswith(".ll"):
                modules.append((src, _read_ir(src)))
                continue
            out = os.path.join(tmp, f"m{k}.ll")
            cmd = [*tc.command, *tc.extra_flags, "-S", "-emit-llvm", *flags, src, "-o", out]
            try:
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise CompileError(
                    f"compiling {src} took longer than {timeout:g} s; simplify the file "
                    "or raise the compile timeout"
                ) from None
            diag = _clean_diagnostics(res.stderr)
            if res.returncode != 0 or not os.path.exists(out):
                raise CompileError(_failure_message(src, res.returncode, diag), details=diag)
            if diag:
                diagnostics.append(diag)
            with open(out) as fh:
                modules.append((src, fh.read()))
    ir = _link(modules)
    if pipeline:
        ir = _optimise_keeping(ir, keep_out_of_line, pipeline)
    return CompiledModule(
        ir=ir,
        sources=tuple(sources),
        flags=tuple(flags),
        compiler=tc.version,
        diagnostics="\n".join(diagnostics),
    )


#: Speed level of LLVM's default pipeline for each optimisation flag (-O0: none).
_OPT_PIPELINE = {"-O1": 1, "-O2": 2, "-O3": 3, "-Os": 2, "-Oz": 2, "-Og": 1}


def _optimise_keeping(ir, names, level):
    """Mark ``names`` noinline and run LLVM's ``default<O{level}>`` pipeline on ``ir``."""
    mod = llvm.parse_assembly(ir)
    for name in names:
        try:
            fn = mod.get_function(name)
        except NameError:
            continue  # instrument_module names what is missing
        if not fn.is_declaration:
            fn.add_function_attribute("noinline")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(mod.triple)
    tm = target.create_target_machine(opt=level)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=level))
    pb.getModulePassManager().run(mod, pb)
    _verify(mod, "the optimised module")
    return str(mod)


def _read_ir(path):
    """The text of a ``.ll`` file; it must be UTF-8 (LLVM's textual IR is)."""
    data = read_input(path, "LLVM IR file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); LLVM IR "
                         "files are UTF-8 text: give the .ll file clang wrote") from None


def _verify(mod, what):
    """Run LLVM's verifier; a module that fails it is refused, naming the first problem."""
    try:
        mod.verify()
    except RuntimeError as exc:
        msg = " ".join(str(exc).split())
        raise CompileError(f"{what} fails LLVM's verifier: {msg[:300]}; fix the IR "
                           "(or let clang compile the C source)") from None


def _link(modules):
    triple = llvm.get_process_triple()
    linked = None
    for src, text in modules:
        try:
            mod = llvm.parse_assembly(text)
        except RuntimeError as exc:
            raise CompileError(
                f"the LLVM IR of {os.path.basename(src)} does not parse with llvmlite's LLVM "
                f"{'.'.join(map(str, llvm.llvm_version_info))}: {str(exc).strip().splitlines()[0]}"
            ) from None
        _verify(mod, f"the LLVM IR of {os.path.basename(src)}")
        mod.triple = triple
        if linked is None:
            linked = mod
            continue
        try:
            linked.link_in(mod)
        except RuntimeError as exc:
            msg = " ".join(str(exc).split())
            raise LinkError(
                f"linking {os.path.basename(src)} failed: {msg}; make each symbol "
                "defined in exactly one file"
            ) from None
    _verify(linked, "the linked module")
    return str(linked)
