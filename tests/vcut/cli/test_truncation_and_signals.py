"""Issue 61, item 10: a trace cut at its instruction budget is noted on stderr by every
command that uses it, ``--json`` or not; SIGINT / SIGTERM under ``--json`` print the error
object every other failure prints."""

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.helpers import ROOT, run_cli
from vcut.cli import main

BUDGET = 5000


def _note(covers, budget=f"the budget of {BUDGET:,} instructions"):
    return (f"note: the trace was cut at {budget} (--max-instructions); {covers} covers only "
            "the start of the run\n")


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """samples/fft.c traced with a budget of 5,000 instructions: the trace and its folder."""
    folder = tmp_path_factory.mktemp("cut")
    code = main(["trace", os.path.join(ROOT, "samples", "fft.c"), "-o", str(folder / "t.npz"),
                 "--max-instructions", str(BUDGET), "--no-timing", "--json"])
    assert code == 0
    return folder


def test_a_cut_trace_is_noted_on_stderr_with_json_too(cut, capsys, tmp_path):
    fft = os.path.join(ROOT, "samples", "fft.c")
    code, out, err = run_cli(capsys, "trace", fft, "-o", tmp_path / "t.npz", "--max-instructions",
                             BUDGET, "--no-timing", "--json")
    assert code == 0 and json.loads(out)["truncated"] is True
    assert err.endswith(_note("it"))
    trace = cut / "t.npz"
    for argv, covers in (
            (["graph", trace, "-o", tmp_path / "g.npz", "--json"], "the graph"),
            (["graph", trace, "-o", tmp_path / "g.npz"], "the graph"),
            (["analyze", trace, "-p", 2, "--no-baselines", "--json"], "the analysis"),
            (["analyze", trace, "-p", 2, "--no-baselines"], "the analysis"),
            (["compare", trace, "-p", 2, "--methods", "pg", "--json"], "the analysis"),
            (["analyze", fft, "-p", 2, "--no-baselines", "--max-instructions", BUDGET,
              "--no-timing", "--json"], "the analysis")):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0, err
        assert err.count("note: the trace was cut") == 1 and _note(covers) in err, argv
    # a graph built from a cut trace keeps the flag (not the budget) for the analysis
    code, out, err = run_cli(capsys, "analyze", tmp_path / "g.npz", "-p", 2, "--no-baselines",
                             "--json")
    assert code == 0 and _note("the analysis", "its instruction budget") in err
    # a whole run says nothing
    code, out, err = run_cli(capsys, "trace", fft, "-o", tmp_path / "whole.npz", "--no-timing",
                             "--json")
    assert code == 0 and json.loads(out)["truncated"] is False and "was cut" not in err


#: A program that says it has started, then never ends.
SPIN = r"""
#include <stdio.h>
int main(void) {
    fprintf(stderr, "spinning\n");
    fflush(stderr);
    volatile unsigned long x = 0;
    for (;;) x++;
}
"""


@pytest.mark.parametrize("sig, message, code", [(signal.SIGINT, "interrupted", 130),
                                                 (signal.SIGTERM, "terminated", 143)])
def test_a_signal_under_json_prints_the_error_object(tmp_path, sig, message, code):
    (tmp_path / "spin.c").write_text(SPIN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vcut", "trace", "spin.c", "-o", "t.npz", "--json",
         "--max-instructions", str(2**62), "--timeout", "300", "--no-timing"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        before = []
        for line in proc.stderr:  # the traced program's stderr passes through as written
            before.append(line)
            if line == "spinning\n":
                break
        assert before[-1:] == ["spinning\n"], "".join(before)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code
    assert json.loads(out) == {"error": message, "exit_code": code}
    assert out.count("\n") == 1  # one object, nothing else
    assert err == f"error: {message}\n"
    assert not (tmp_path / "t.npz").exists()
