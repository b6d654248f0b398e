"""Program arguments given without ``--`` (issue 61, item 9): the message says where they go,
with the corrected command; each command names the inputs it takes."""

import json

import pytest

from tests.helpers import run_cli
from vcut.cli._common import ACCEPTS

PROGRAM = "int main(int argc, char **argv) { return argc > 1; }\n"
SOURCES = "C sources (.c, or .ll LLVM IR)"
TRACE = "one trace (.npz from 'vcut trace')"
GRAPH = ("one graph file (.graph, .metis, .edgelist, .edges, .el, .txt, .mtx, .lg, optionally "
         ".gz; or .npz from 'vcut graph')")


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A folder with fib2.c, dijkstra_large.c, input.dat and prog.out, made current."""
    for name in ("fib2.c", "dijkstra_large.c"):
        (tmp_path / name).write_text(PROGRAM)
    (tmp_path / "input.dat").write_text("1 2 3\n")
    (tmp_path / "prog.out").write_bytes(b"\x7fELF\x02\x01")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("argv, message", [
    (["trace", "fib2.c", "20", "-o", "t.npz"],
     "20 is not a C source file; program arguments go after --: vcut trace fib2.c -o t.npz -- 20"),
    (["trace", "dijkstra_large.c", "input.dat", "-o", "t.npz"],
     "input.dat is not a C source file; program arguments go after --: vcut trace "
     "dijkstra_large.c -o t.npz -- input.dat"),
    (["trace", "fib2.c", "20", "a b", "-o", "t.npz", "--", "7"],
     "20 is not a C source file; program arguments go after --: vcut trace fib2.c -o t.npz -- "
     "20 'a b' 7"),
    (["trace", "fib2.c", "-o", "t.npz", "20", "--", "7"],
     "vcut trace: unrecognized arguments: 20; program arguments go after --: vcut trace fib2.c "
     "-o t.npz -- 20 7"),
    (["graph", "fib2.c", "20", "-o", "g.npz"],
     "20 is not a C source file; program arguments go after --: vcut graph fib2.c -o g.npz -- 20"),
    (["analyze", "--machine", "mesh:2x2", "fib2.c", "input.dat", "-p", "8"],
     "input.dat is not a C source file; program arguments go after --: vcut analyze --machine "
     "mesh:2x2 fib2.c -p 8 -- input.dat"),
    (["compare", "fib2.c", "20", "-p", "2,4"],
     "20 is not a C source file; program arguments go after --: vcut compare fib2.c -p 2,4 -- 20"),
])
def test_program_arguments_without_the_separator(here, capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert (code, out, err) == (2, "", f"error: {message}\n")
    assert not (here / "t.npz").exists() and not (here / "g.npz").exists()
    code, out, err = run_cli(capsys, *argv[:argv.index("--")] if "--" in argv else argv, "--json",
                             *argv[argv.index("--"):] if "--" in argv else [])
    assert code == 2 and json.loads(out)["exit_code"] == 2
    assert "program arguments go after --: vcut " in json.loads(out)["error"]


def test_each_command_names_what_it_takes(here, capsys):
    assert ACCEPTS == {"trace": SOURCES, "graph": f"{SOURCES} or {TRACE}",
                       "analyze": f"{SOURCES}, {TRACE} or {GRAPH}",
                       "compare": f"{SOURCES}, {TRACE} or {GRAPH}"}
    cases = [
        (["trace", "prog.out", "-o", "t.npz"],
         f"input is not a C source file: {here / 'prog.out'} (extension '.out'); give .c files "
         "(or .ll LLVM IR)"),
        (["graph", "prog.out", "-o", "g.npz"],
         f"prog.out is not an input vcut graph takes (extension '.out'); give {SOURCES} or "
         f"{TRACE}"),
        (["graph", "gone.out", "-o", "g.npz"],
         f"input not found: gone.out; vcut graph takes {SOURCES} or {TRACE}"),
        (["analyze", "prog.out", "-p", "2"],
         f"prog.out is not an input vcut analyze takes (extension '.out'); give {SOURCES}, "
         f"{TRACE} or {GRAPH}"),
        (["compare", "gone.graph", "-p", "2"],
         f"input not found: gone.graph; vcut compare takes {SOURCES}, {TRACE} or {GRAPH}"),
        (["analyze", "fib2.c", "g.graph", "-p", "2"],
         f"vcut analyze takes {SOURCES}, {TRACE} or {GRAPH}; not a mix of them: got fib2.c, "
         "g.graph"),
        (["graph", "fib2.c", "t.npz", "-o", "g.npz"],
         f"vcut graph takes {SOURCES} or {TRACE}; not a mix of them: got fib2.c, t.npz"),
    ]
    for argv, message in cases:
        code, out, err = run_cli(capsys, *argv)
        assert (code, out, err) == (2, "", f"error: {message}\n"), argv


def test_every_graph_suffix_named_is_read_as_a_graph():
    from ir_graph.formats import detect_format

    named = GRAPH.split("(")[1].split(", optionally")[0].split(", ")
    assert {detect_format("g" + s) for s in named} == {"metis", "edgelist", "mtx", "lg"}
    for s in named:
        assert detect_format("g" + s + ".gz") == detect_format("g" + s)


def test_analyze_takes_llvm_ir(here, capsys):
    # analyze and compare run .ll sources as trace and graph do (compile_program reads them)
    from frontend import compile_program

    (here / "prog.ll").write_text(compile_program(str(here / "fib2.c")).ir)
    code, out, err = run_cli(capsys, "analyze", "prog.ll", "-p", "2", "--machine", "mesh:1x2",
                             "--no-baselines", "--json", "--", "1")
    assert code == 0, err
    assert json.loads(out)["clusters"] == 2
