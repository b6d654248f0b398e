"""Every bad input of `vcut trace`: one clear line, its exit code, no output file."""

import json
import os
import subprocess
import sys

import pytest

from vcut_base import errors
from tests.helpers import last_error, run_cli

INFINITE = "int main(void) { volatile int x = 0; for (;;) x++; return 0; }\n"


@pytest.fixture
def out_path(tmp_path):
    return str(tmp_path / "out.npz")


def assert_nothing_written(path):
    directory = os.path.dirname(path)
    leftovers = [f for f in os.listdir(directory) if f.startswith(("out", ".vcut-"))]
    assert leftovers == []


def test_missing_file(capsys, tmp_path, out_path):
    code, _, err = run_cli(capsys, "trace", str(tmp_path / "nope.c"), "-o", out_path)
    assert code == errors.InputError.exit_code == 2
    assert last_error(err) == f"error: input file not found: {tmp_path / 'nope.c'}; check the path"
    assert_nothing_written(out_path)


def test_non_c_inputs(capsys, tmp_path, out_path):
    txt = tmp_path / "notes.txt"
    txt.write_text("hello\n")
    code, _, err = run_cli(capsys, "trace", str(txt), "-o", out_path)
    assert code == 2
    assert "is not a C source file" in last_error(err) and "'.txt'" in err
    binary = tmp_path / "blob.c"
    binary.write_bytes(b"\x7fELF\x00\x01\x02")
    code, _, err = run_cli(capsys, "trace", str(binary), "-o", out_path)
    assert code == 2
    assert "contains binary data" in last_error(err)
    assert_nothing_written(out_path)


def test_compile_error_shows_compiler_diagnostics(capsys, cfile, out_path):
    src = cfile("bad.c", "int main(void) { return undefined_var + ; }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path)
    assert code == errors.CompileError.exit_code == 4
    assert "bad.c:1:" in err and "error: use of undeclared identifier 'undefined_var'" in err
    assert last_error(err) == (
        "error: compilation of bad.c failed (compiler exit 1): bad.c:1:25: error: use of "
        "undeclared identifier 'undefined_var'; fix the errors the compiler reported"
    )
    assert "Traceback" not in err
    assert_nothing_written(out_path)


def test_link_error_names_the_symbol(capsys, cfile, out_path):
    src = cfile("link.c", "int nowhere_defined(int);\nint main(void) { return nowhere_defined(1); }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path)
    assert code == errors.LinkError.exit_code == 5
    assert last_error(err).startswith("error: undefined symbol nowhere_defined: defined neither")
    assert_nothing_written(out_path)


def test_duplicate_definition_across_files(capsys, cfile, out_path):
    a = cfile("a.c", "int f(void) { return 1; }\nint main(void) { return f(); }\n")
    b = cfile("b.c", "int f(void) { return 2; }\n")
    code, _, err = run_cli(capsys, "trace", a, b, "-o", out_path)
    assert code == 5
    line = last_error(err)
    assert line.startswith("error: linking b.c failed:") and "'f'" in line
    assert line.endswith("make each symbol defined in exactly one file")


@pytest.mark.parametrize(
    "name, code_text, construct, line",
    [
        ("asm.c", "int main(void) {\n  int x = 1;\n  __asm__ volatile(\"nop\");\n  return x;\n}\n",
         "inline assembly", 3),
        ("sj.c", "#include <setjmp.h>\njmp_buf b;\nint main(void) {\n  if (setjmp(b)) return 1;\n"
         "  longjmp(b, 1);\n}\n", "setjmp/longjmp", 4),
        ("th.c", "#include <pthread.h>\nvoid *w(void *a) { return a; }\nint main(void) {\n"
         "  pthread_t t;\n  pthread_create(&t, 0, w, 0);\n  return 0;\n}\n",
         "threads (pthread_create)", 5),
    ],
)
def test_unsupported_constructs_name_what_and_where(capsys, cfile, out_path, name, code_text,
                                                    construct, line):
    src = cfile(name, code_text)
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path)
    assert code == errors.UnsupportedIRError.exit_code == 6
    assert last_error(err) == (
        f"error: unsupported construct: {construct} in function main ({src}:{line}); "
        "vcut traces single-threaded, sequential C only: rewrite that code without it"
    )
    assert_nothing_written(out_path)


EXCEPTION_IR = """
declare i32 @__gxx_personality_v0(...)
declare void @thrower()
define i32 @main() personality ptr @__gxx_personality_v0 {
entry:
  invoke void @thrower() to label %ok unwind label %lp
ok:
  ret i32 0
lp:
  %x = landingpad { ptr, i32 } cleanup
  ret i32 1
}
"""


def test_exceptions_in_ir_are_refused(capsys, tmp_path, out_path):
    path = tmp_path / "exc.ll"
    path.write_text(EXCEPTION_IR)
    code, _, err = run_cli(capsys, "trace", str(path), "-o", out_path)
    assert code == 6
    assert last_error(err).startswith("error: unsupported construct: exceptions (invoke) in function main")


def test_crash(capsys, cfile, out_path):
    src = cfile("crash.c", "int main(void) { int *volatile p = 0; return *p; }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path)
    assert code == errors.ProgramCrashed.exit_code == 7
    assert last_error(err) == (
        "error: the program crashed with SIGSEGV (segmentation fault: invalid memory access); "
        "run it natively under a debugger to find the fault"
    )
    assert_nothing_written(out_path)


def test_abort_is_a_crash(capsys, cfile, out_path):
    src = cfile("ab.c", "#include <assert.h>\nint main(void) { assert(1 == 2); return 0; }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path)
    assert code == 7
    assert "SIGABRT" in last_error(err)


def test_timeout(capsys, cfile, out_path):
    src = cfile("inf.c", INFINITE)
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path, "--timeout", "3",
                           "--max-instructions", str(10**15))
    assert code == errors.ProgramTimeout.exit_code == 7
    assert last_error(err) == (
        "error: the program ran past the 3 s time limit (an endless loop?) and was stopped; "
        "raise --timeout, or cap the trace with --max-instructions"
    )
    assert_nothing_written(out_path)


def test_budget_exceeded_gives_a_flagged_truncated_trace(capsys, cfile, out_path):
    src = cfile("inf.c", INFINITE)
    code, out, _ = run_cli(capsys, "trace", src, "-o", out_path, "--max-instructions", "1000",
                           "--json")
    assert code == 0
    res = json.loads(out)
    assert res["truncated"] is True and res["exit_code"] is None
    assert res["end_reason"] == "dynamic-instruction budget exceeded"
    assert 0 < res["dynamic_instructions"] <= 1000
    assert os.path.exists(out_path)


def test_memory_limit(capsys, cfile, out_path):
    src = cfile(
        "oom.c",
        "#include <stdlib.h>\n#include <string.h>\n"
        "int main(void) { for (;;) { char *p = malloc(1 << 26); memset(p, 1, 1 << 26); } }\n",
    )
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path, "--memory-limit", "768")
    assert code == errors.ProgramOutOfMemory.exit_code == 7
    # the program does not check malloc's result: it gets NULL, memset faults, and the
    # message says why
    assert last_error(err) == (
        "error: the program crashed with SIGSEGV (segmentation fault: invalid memory access) "
        "after 1 heap allocation(s) returned NULL under the 768 MiB memory limit; "
        "raise --memory-limit if the machine has room"
    )
    assert_nothing_written(out_path)


def test_output_directory_missing(capsys, cfile, tmp_path):
    src = cfile("ok.c", "int main(void) { return 0; }\n")
    missing_dir = tmp_path / "no" / "such"
    code, _, err = run_cli(capsys, "trace", src, "-o", str(missing_dir / "t.npz"))
    assert code == errors.OutputError.exit_code == 9
    assert last_error(err) == (
        f"error: cannot write {missing_dir / 't.npz'}: directory {missing_dir} does not exist"
    )


def test_output_path_is_a_directory(capsys, cfile, tmp_path):
    src = cfile("ok.c", "int main(void) { return 0; }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", str(tmp_path))
    assert code == 9 and last_error(err) == (
        f"error: output path {tmp_path} is a directory; give a file name"
    )


def test_output_directory_read_only(capsys, cfile, tmp_path):
    src = cfile("ok.c", "int main(void) { return 0; }\n")
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("this user can write read-only directories (root)")
        code, _, err = run_cli(capsys, "trace", src, "-o", str(ro / "t.npz"))
        assert code == 9 and last_error(err) == (
            f"error: cannot write {ro / 't.npz'}: directory {ro} is not writable"
        )
        assert list(ro.iterdir()) == []
    finally:
        os.chmod(ro, 0o700)


def test_missing_roi_function(capsys, cfile, out_path):
    src = cfile("r.c", "int work(void) { return 1; }\nint main(void) { return work(); }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", out_path, "--roi", "nothere")
    assert code == 2
    assert last_error(err) == (
        "error: region-of-interest function 'nothere' is not defined in the program; "
        "defined functions: main, work"
    )


def test_console_script_exit_code_and_json(cfile, tmp_path):
    """The installed entry point: a real process, one JSON object on stdout."""
    src = cfile("p.c", '#include <stdio.h>\nint main(int c, char **v) { printf("%s\\n", v[1]); return 4; }\n')
    out = tmp_path / "t.npz"
    res = subprocess.run(
        [sys.executable, "-m", "vcut", "trace", src, "-o", str(out), "--json", "--", "hello"],
        capture_output=True, text=True,
    )
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    for key in ("dynamic_instructions", "blocks_executed", "memory_operations", "objects",
                "truncated", "exit_code"):
        assert key in obj
    assert obj["exit_code"] == 4 and obj["stdout"] == "hello\n" and obj["truncated"] is False
    assert out.exists()
    res = subprocess.run([sys.executable, "-m", "vcut", "trace", str(tmp_path / "x.c"), "-o", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.strip().splitlines()[-1].startswith("error: input file not found")
