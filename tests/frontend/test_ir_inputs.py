"""``.ll`` and ``.c`` inputs that were tracebacks or hangs (issue 11, section 4)."""

import os

from vcut.cli import main

UNVERIFIABLE = """define i32 @main() {
entry:
  br label %a
a:
  %x = add i32 %y, 1
  %y = add i32 %x, 1
  ret i32 %x
}
"""


def last_error(capsys):
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error: ")][-1]


def test_ll_with_invalid_utf8(tmp_path, capsys):
    ll = tmp_path / "bad.ll"
    ll.write_bytes(b"define i32 @main() {\n  ret i32 0 ; \xff\n}\n")
    assert main(["trace", str(ll), "-o", str(tmp_path / "t.npz")]) == 2
    assert last_error(capsys) == (f"error: {ll}:2: not UTF-8 text (byte 0xff); LLVM IR files are "
                                  "UTF-8 text: give the .ll file clang wrote")


def test_ll_failing_verification(tmp_path, capsys):
    ll = tmp_path / "unv.ll"
    ll.write_text(UNVERIFIABLE)
    assert main(["trace", str(ll), "-o", str(tmp_path / "t.npz")]) == 4
    assert last_error(capsys) == (
        "error: the LLVM IR of unv.ll fails LLVM's verifier: Instruction does not dominate all "
        "uses! %y = add i32 %x, 1 %x = add i32 %y, 1; fix the IR (or let clang compile the C source)")
    assert not (tmp_path / "t.npz").exists()


def test_c_source_that_is_a_fifo(tmp_path, capsys):
    fifo = tmp_path / "p.c"
    os.mkfifo(fifo)
    assert main(["trace", str(fifo), "-o", str(tmp_path / "t.npz")]) == 2
    assert last_error(capsys) == (f"error: input file {fifo} is a FIFO (named pipe), not a regular "
                                  "file; give the path of a file")
