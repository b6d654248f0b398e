"""What the command line says when it is used wrongly: one line, the fix, the right exit code."""

import json
import os
import threading

from tests.helpers import run_cli
from vcut.cli import main


def test_program_arguments_without_the_separator(capsys, tmp_path):
    src = tmp_path / "p.c"
    src.write_text("int main(int c, char **v) { return c; }\n")
    out_path = str(tmp_path / "t.npz")
    code, out, err = run_cli(capsys, "trace", str(src), "-o", out_path, "hello")
    assert code == 2 and out == ""
    assert err == (f"error: vcut trace: unrecognized arguments: hello; program arguments go "
                   f"after --: vcut trace {src} -o {out_path} -- hello\n")


def test_usage_errors_are_one_line(capsys):
    code, _, err = run_cli(capsys, "stats", "g.graph", "--seed")
    assert code == 2
    assert err == ("error: vcut stats: argument --seed: expected one argument; a value that "
                   "starts with '-' is written --option=-VALUE\n")
    code, _, err = run_cli(capsys, "partition", "g.graph")
    assert code == 2
    assert err == ("error: vcut partition: the following arguments are required: -p; see "
                   "'vcut partition --help'\n")


def test_json_failures_print_one_json_object(capsys, tmp_path):
    missing = str(tmp_path / "nope.graph")
    code, out, err = run_cli(capsys, "partition", missing, "-p", "2", "--json")
    assert code == 2
    assert json.loads(out) == {"error": f"graph file not found: {missing}", "exit_code": 2}
    assert err == f"error: graph file not found: {missing}\n"
    code, out, _ = run_cli(capsys, "stats", missing, "--bogus", "--json")
    assert code == 2 and json.loads(out)["exit_code"] == 2


def test_a_missing_analyze_input_is_named_for_what_it_is(capsys, tmp_path):
    missing = str(tmp_path / "run.npz")
    code, _, err = run_cli(capsys, "analyze", missing, "-p", "2")
    assert code == 2
    assert err == (f"error: input not found: {missing}; vcut analyze takes C sources (.c, or "
                   ".ll LLVM IR), one trace (.npz from 'vcut trace') or one graph file (.graph, "
                   ".metis, .edgelist, .edges, .el, .txt, .mtx, .lg, optionally .gz; or .npz "
                   "from 'vcut graph')\n")


def test_stdin_from_a_fifo_and_a_device(capfd, tmp_path):
    capsys = capfd  # the program's bytes go to file descriptor 1 itself
    src = tmp_path / "sum.c"
    src.write_text('#include <stdio.h>\nint main(void) { int a, s = 0; '
                   'while (scanf("%d", &a) == 1) s += a; printf("%d\\n", s); return 0; }\n')
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as fh:
            fh.write("1 2 3 4\n")

    writer = threading.Thread(target=feed)
    writer.start()
    code, out, _ = run_cli(capsys, "trace", str(src), "-o", str(tmp_path / "t.npz"),
                           "--stdin", str(fifo), "--no-timing")
    writer.join(10)
    assert code == 0 and out == "10\n"
    code, out, _ = run_cli(capsys, "trace", str(src), "-o", str(tmp_path / "t.npz"),
                           "--stdin", "/dev/null", "--no-timing")
    assert code == 0 and out == "0\n"
    code, _, err = run_cli(capsys, "trace", str(src), "-o", str(tmp_path / "t.npz"),
                           "--stdin", str(tmp_path))
    assert code == 2
    assert err.endswith(f"error: --stdin {tmp_path} is not a file, a FIFO or a character "
                        "device; give the file to feed the program\n")


def test_analyze_shows_the_programs_output_and_warns_when_it_failed(capfd, tmp_path):
    src = tmp_path / "reader.c"
    src.write_text('#include <stdio.h>\nint main(int argc, char **argv) {\n'
                   '  FILE *f = fopen(argc > 1 ? argv[1] : "missing.txt", "r");\n'
                   '  if (!f) { fprintf(stderr, "cannot open input\\n"); return 4; }\n'
                   '  fclose(f); return 0;\n}\n')
    code = main(["analyze", str(src), "-p", "2", "--no-baselines", "--", "no-such-file.txt"])
    out, err = capfd.readouterr()
    assert code == 0
    assert "cannot open input\n" in err  # the program's own stderr, shown
    assert ("warning: the program exited with status 4 (its output is above); check its "
            "arguments and input files\n") in err
    assert "warning: the trace has only " in err and "did the program find its input?" in err
    assert out.startswith("graph ")  # the analysis itself is on stdout


def _failing_stats(monkeypatch, exc):
    import vcut.cli.stats

    def run(args, program_args):
        raise exc

    monkeypatch.setattr(vcut.cli.stats, "run", run)


def _raised_from(exc, cause):
    try:
        raise exc from cause
    except type(exc) as raised:
        return raised


def test_a_signal_inside_an_extension_import_is_still_one_line(capsys, monkeypatch, tmp_path):
    from vcut.cli import Terminated

    # SIGTERM / SIGINT during an extension module's initialisation (scipy's, say)
    # comes out as an ImportError caused by the signal's exception
    for cause, code, line in ((Terminated(), 143, "error: terminated\n"),
                              (KeyboardInterrupt(), 130, "error: interrupted\n")):
        _failing_stats(monkeypatch, _raised_from(ImportError("initialization failed"), cause))
        assert main(["stats", str(tmp_path / "g.txt")]) == code
        out, err = capsys.readouterr()
        assert (out, err) == ("", line)


def test_an_import_error_without_a_signal_is_not_taken_for_one(monkeypatch, tmp_path):
    import pytest

    _failing_stats(monkeypatch, ImportError("no module"))
    with pytest.raises(ImportError, match="no module"):
        main(["stats", str(tmp_path / "g.txt")])


_CALLBACK_RUN = """
import ctypes, signal, sys, time
import vcut.cli, vcut.cli.stats

def run(args, program_args):
    # the signal arrives inside a C callback (llvmlite's object cache calls
    # Python this way): its exception cannot propagate from there
    ctypes.CFUNCTYPE(None)(lambda: signal.raise_signal(signal.{sig}))()
    time.sleep(20)
    print("not interrupted")
    return 0

vcut.cli.stats.run = run
sys.argv = ["vcut", "stats", "g.txt"]
code = vcut.cli.main()
signal.raise_signal(signal.{sig})  # after the command: ignored
print("exit", code)
sys.exit(code)
"""


def test_a_signal_inside_a_c_callback_still_ends_the_command(tmp_path):
    import subprocess
    import sys

    for sig, code, line in (("SIGTERM", 143, "error: terminated\n"),
                            ("SIGINT", 130, "error: interrupted\n")):
        done = subprocess.run([sys.executable, "-c", _CALLBACK_RUN.format(sig=sig)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stdout, done.stderr) == (code, f"exit {code}\n", line)


def test_a_closed_stdout_ends_the_command_quietly(tmp_path):
    # `vcut partition G -p 2 | head -0`: the reader is gone before the summary is
    # printed; no traceback, no error line, exit 141 (as a process ended by SIGPIPE)
    import subprocess
    import sys

    path = tmp_path / "g.edgelist"
    path.write_text("".join(f"{i} {i + 1}\n" for i in range(50)))
    proc = subprocess.Popen([sys.executable, "-m", "vcut", "partition", str(path), "-p", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    proc.stdout.close()  # long before the interpreter has started
    err = proc.stderr.read()
    assert (proc.wait(timeout=60), err) == (141, b"")
