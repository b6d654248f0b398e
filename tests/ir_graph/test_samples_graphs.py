"""Every sample builds a graph; checksums and graph invariants hold."""

import numpy as np
import pytest

from frontend import compile_program, trace_program
from tests.helpers import samples_manifest
from ir_graph import build_graph
from ir_graph.build import _included

MANIFEST = samples_manifest()


@pytest.mark.parametrize("sample", MANIFEST, ids=[s["name"] for s in MANIFEST])
def test_sample_graph_invariants(sample):
    src = sample["path"]
    t = trace_program(compile_program(src, defines=sample["defines"]))
    assert t.meta["stdout"] == sample["stdout"]
    graphs = {}
    for weights in ("measured", "model"):
        g = graphs[weights] = build_graph(t, weights=weights)
        g.validate()
        assert g.n == int(_included(t.static)[t.dyn_sid].sum())
        assert g.m > g.n  # every sample has more dependencies than instructions
        assert np.all(g.src < g.dst)  # forward in execution order, hence acyclic
        keys = g.src.astype(np.int64) * g.n + g.dst
        assert len(np.unique(keys)) == g.m  # one edge per pair
        assert np.all(g.weight >= 1) and np.all(np.isfinite(g.weight))
        assert np.all(g.edge_kind != 0)
        assert np.array_equal(g.node_sid, t.dyn_sid[_included(t.static)[t.dyn_sid]])
    # the two weightings share the edges
    gm, g = graphs["model"], graphs["measured"]
    assert np.array_equal(gm.src, g.src) and np.array_equal(gm.dst, g.dst)
