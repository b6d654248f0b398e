"""Compiler discovery and C -> IR compilation."""

import os
import stat
import sys

import llvmlite.binding as llvm
import pytest

from frontend import compile_program
from vcut_base.errors import CompileError, InputError, ToolchainError
from frontend.toolchain import find_toolchain


@pytest.fixture
def fresh_toolchain(monkeypatch):
    find_toolchain.cache_clear()
    yield monkeypatch
    find_toolchain.cache_clear()


def _script(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_default_toolchain_emits_parsable_ir(fresh_toolchain):
    fresh_toolchain.delenv("VCUT_CC", raising=False)
    tc = find_toolchain()
    assert tc.kind in ("clang", "zig")
    assert "clang version" in tc.version


def test_clang_on_path_is_used_when_its_ir_parses(fresh_toolchain, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir / "clang", f'exec "{sys.executable}" -m ziglang cc -target x86_64-linux-gnu "$@"\n')
    fresh_toolchain.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    fresh_toolchain.delenv("VCUT_CC", raising=False)
    tc = find_toolchain()
    assert tc.kind == "clang" and tc.command == (str(bindir / "clang"),)


def test_clang_with_unreadable_ir_falls_back_to_zig(fresh_toolchain, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # answers --version, but writes IR llvmlite cannot parse
    _script(bindir / "clang", 'case "$1" in --version) echo "clang version 99";; *) '
            'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then echo "garbage" > "$2"; fi; shift; done;; esac\n')
    fresh_toolchain.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    fresh_toolchain.delenv("VCUT_CC", raising=False)
    assert find_toolchain().kind == "zig"


def test_bad_vcut_cc_is_a_clear_error(fresh_toolchain):
    fresh_toolchain.setenv("VCUT_CC", "/nonexistent/cc")
    with pytest.raises(ToolchainError) as exc:
        find_toolchain()
    assert str(exc.value).startswith("VCUT_CC='/nonexistent/cc' does not run")
    assert str(exc.value).endswith("unset VCUT_CC to use the bundled ziglang clang")


def test_triple_is_normalised_and_flags_pass_through(cfile):
    src = cfile("f.c", "int value(void) { return VALUE; }\nint main(void) { return value(); }\n")
    cm = compile_program(src, defines=["VALUE=42"], opt="-O1")
    mod = llvm.parse_assembly(cm.ir)
    assert mod.triple == llvm.get_process_triple()
    assert "-O1" in cm.flags and "-DVALUE=42" in cm.flags
    assert "-fno-sanitize=all" in cm.flags and "-fno-stack-protector" in cm.flags
    assert "ret i32 42" in cm.ir  # -O1 folded the macro value through
    assert "sanitizer" not in cm.ir and "__stack_chk" not in cm.ir


def test_compile_error_carries_diagnostics(cfile):
    src = cfile("e.c", "int main(void) { return ; }\nint f(void) { return nope; }\n")
    with pytest.raises(CompileError) as exc:
        compile_program(src)
    assert "e.c:2:" in exc.value.details and "use of undeclared identifier 'nope'" in exc.value.details
    assert "argument unused" not in exc.value.details


def test_bad_options(cfile):
    src = cfile("ok.c", "int main(void) { return 0; }\n")
    with pytest.raises(InputError, match="unknown optimisation level '-O9'"):
        compile_program(src, opt="-O9")
    with pytest.raises(InputError, match="no input files given"):
        compile_program([])


@pytest.mark.parametrize("field,given", [("defines", {"N": 4}), ("defines", "N=4"),
                                         ("defines", [4]), ("include_dirs", "include"),
                                         ("extra_flags", b"-O2")])
def test_option_lists_must_be_lists_of_strings(field, given):
    with pytest.raises(InputError, match=f"^{field} must be a list of strings"):
        compile_program("samples/strassen.c", **{field: given})
