"""Fixtures of the mapping tests: one small traced sample shared by the module."""

import os

import pytest

from tests.helpers import ROOT


@pytest.fixture(scope="session")
def strassen8():
    """Trace and model-weighted graph of samples/strassen.c with N = 8 (~118 k instructions)."""
    from frontend import compile_program, trace_program
    from ir_graph import build_graph

    cm = compile_program([os.path.join(ROOT, "samples", "strassen.c")], defines=["N=8"])
    trace = trace_program(cm, timing=False)
    return trace, build_graph(trace, weights="model")

