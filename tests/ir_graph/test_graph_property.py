"""Random small C programs: their graphs are DAGs whose edges go forward in execution order."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frontend import compile_program, trace_program
from ir_graph import build_graph
from ir_graph.build import _included

idx = st.integers(0, 7)
small = st.integers(-5, 5)
statement = st.one_of(
    st.builds(lambda i, j, k: f"a[{i}] = a[{j}] + {k};", idx, idx, small),
    st.builds(lambda i, k: f"x = x * 3 + a[{i}] - {k};", idx, small),
    st.builds(lambda i: f"a[{i}] = rec(x & 7, a[{i}]);", idx),
    st.builds(lambda i, j: f"if (a[{i}] > a[{j}]) x += a[{i}]; else x -= a[{j}];", idx, idx),
    st.builds(lambda i, j: f"memcpy(&b[{i}], &a[{j}], sizeof(int) * 2);", st.integers(0, 6), st.integers(0, 6)),
    st.builds(lambda i: f"for (int k = 0; k < 3; k++) b[(k + {i}) & 7] += x;", idx),
)

TEMPLATE = """
#include <stdio.h>
#include <string.h>
static int rec(int n, int v) {{ return n <= 0 ? v : rec(n - 1, v + n); }}
int main(void) {{
    int a[8] = {{1, 2, 3, 4, 5, 6, 7, 8}}, b[8] = {{0}};
    int x = 1;
    {body}
    printf("%d %d\\n", x, a[3] + b[5]);
    return 0;
}}
"""


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(statement, min_size=1, max_size=8), st.sampled_from(["-O0", "-O1"]), st.booleans())
def test_random_programs_give_forward_dags(tmp_path, body, opt, extra):
    path = tmp_path / "p.c"
    path.write_text(TEMPLATE.format(body="\n    ".join(body)))
    t = trace_program(compile_program(str(path), opt=opt))
    g = build_graph(t, weights="model", war=extra, waw=extra)
    assert g.n == int(_included(t.static)[t.dyn_sid].sum())
    assert np.all(g.src < g.dst)  # forward in execution order: a topological order, so acyclic
    keys = g.src.astype(np.int64) * g.n + g.dst
    assert len(np.unique(keys)) == g.m
    # each register edge connects instructions of the same function activation or a call boundary
    dyn = np.flatnonzero(_included(t.static)[t.dyn_sid])
    reg = (g.edge_kind & 1) != 0
    same = t.dyn_act[dyn[g.src[reg]]] == t.dyn_act[dyn[g.dst[reg]]]
    assert same.all()
