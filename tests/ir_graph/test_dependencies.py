"""Hand-checked dependency edges of small C programs.

Nodes are found by source line (marker comments), opcode and access size;
the expected in-edges are written out per case.
"""

import numpy as np
import pytest

from ir_graph.dependency_kernels import KIND_ARG, KIND_MEM, KIND_PHI, KIND_REG, KIND_RET
from tests.helpers import Built


def test_store_then_load_same_address(cfile):
    b = Built(cfile("a.c", """
        int main(void) {
            volatile int a[4];
            a[1] = 7;            /* @st */
            int v = a[1];        /* @ld */
            return v;
        }
        """))
    ld = b.node("@ld", "load", 4)
    st = b.node("@st", "store", 4)
    assert b.sources(ld, KIND_MEM) == {st}
    gep = b.node("@ld", "getelementptr")
    assert b.sources(ld, KIND_REG) == {gep}


def test_partial_and_combined_reads_of_wider_and_narrower_stores(cfile):
    b = Built(cfile("w.c", """
        int main(void) {
            long long w = 0x1122334455667788LL;   /* @wide */
            int *p = (int *)&w;
            int lo = p[0];                        /* @lo */
            int hi = p[1];                        /* @hi */
            int parts[2];
            parts[0] = 1;                         /* @p0 */
            parts[1] = 2;                         /* @p1 */
            long long both = *(long long *)parts; /* @both */
            return lo + hi + (int)both;
        }
        """))
    wide = b.node("@wide", "store", 8)
    assert b.sources(b.node("@lo", "load", 4), KIND_MEM) == {wide}
    assert b.sources(b.node("@hi", "load", 4), KIND_MEM) == {wide}
    assert b.sources(b.node("@both", "load", 8), KIND_MEM) == {b.node("@p0", "store", 4), b.node("@p1", "store", 4)}


def test_memcpy_then_load(cfile):
    b = Built(cfile("m.c", """
        #include <string.h>
        int main(void) {
            int a[4] = {0};           /* @init */
            int c[4];
            a[2] = 42;                /* @a2 */
            memcpy(c, a, sizeof a);   /* @cpy */
            int x = c[2];             /* @ld */
            return x;
        }
        """))
    st = b.trace.static
    init = [v for v in b.nodes("@init", "call") if "memset" in st.ins_text[b.g.node_sid[v]]]
    cpy = [v for v in b.nodes("@cpy", "call") if "memcpy" in st.ins_text[b.g.node_sid[v]]]
    assert len(init) == 1 and len(cpy) == 1
    # the copy reads bytes 0-7 and 12-15 written by the memset, 8-11 by the store
    assert b.sources(cpy[0], KIND_MEM) == {init[0], b.node("@a2", "store", 4)}
    assert b.sources(b.node("@ld", "load", 4), KIND_MEM) == {cpy[0]}


def test_recursion_keeps_each_activations_own_values(cfile):
    b = Built(cfile("r.c", """
        __attribute__((noinline)) int f(int n) {
            if (n <= 0) return 1;
            int m = n * 3;         /* @mul */
            return m - f(n - 1);   /* @sub */
        }
        int main(int argc, char **argv) { return f(argc + 3) & 0xff; }
        """), opt="-O1")
    assert b.trace.max_recursion_depth("f") == 5
    subs = b.nodes("@sub", "sub")
    muls = set(b.nodes("@mul", "mul").tolist())
    assert len(subs) == 4 and len(muls) == 4
    for v in subs:
        reg = b.sources(int(v), KIND_REG) & muls
        assert len(reg) == 1
        (u,) = reg
        assert b.act(u) == b.act(int(v))  # the caller's own m, not the callee's
        # the other operand is the callee's returned value
        (r,) = b.sources(int(v), KIND_RET)
        ret_act = b.act(r)
        assert b.trace.act_parent[ret_act] == b.act(int(v))
        assert b.trace.static.ins_opcode[b.g.node_sid[r]] == "ret"


PHI = """
__attribute__((noinline)) int g(int x) { return x * 7; }
int main(int argc, char **argv) {
    int r;
    if (argc > 1) r = g(argc);      /* @then */
    else r = argc * 5;              /* @else */
    return r;                       /* @ret */
}
"""


@pytest.mark.parametrize("args", [[], ["extra"]])
def test_phi_after_a_branch_takes_the_branch_that_ran(cfile, args):
    b = Built(cfile("p.c", PHI), opt="-O1", args=args)
    st = b.trace.static
    phis = np.flatnonzero(st.ins_opcode[b.g.node_sid] == "phi")
    assert len(phis) == 1
    (phi,) = phis
    src = b.sources(int(phi), KIND_PHI)
    assert len(src) == 1
    (u,) = src
    if args:
        assert st.ins_opcode[b.g.node_sid[u]] == "ret"  # g's return value
        assert st.fn_name[st.ins_func[b.g.node_sid[u]]] == "g"
        assert b.g.edge_kind[(b.g.src == u) & (b.g.dst == phi)][0] == KIND_PHI | KIND_RET
    else:
        assert u == b.node("@else", "mul")


def test_argument_edges_cross_calls(cfile):
    b = Built(cfile("c.c", """
        __attribute__((noinline)) int h(int a, int k) { return a * k; }  /* @h */
        int main(int argc, char **argv) {
            int x = argc + 1;      /* @add */
            return h(x, argc) & 1;
        }
        """), opt="-O1")
    mul = b.node("@h", "mul")
    add = b.node("@add", "add")
    # a comes from main's add; k is argc, a parameter of main, which has no producer
    assert b.sources(mul, KIND_ARG) == {add}
    assert b.g.edge_kind[(b.g.src == add) & (b.g.dst == mul)][0] == KIND_ARG


def test_war_and_waw_only_on_request(cfile):
    path = cfile("o.c", """
        int main(void) {
            volatile int v;
            v = 1;          /* @w1 */
            int r = v;      /* @r */
            v = 2;          /* @w2 */
            return r;
        }
        """)
    plain = Built(path)
    w2 = plain.node("@w2", "store", 4)
    assert plain.sources(w2, KIND_MEM | 32 | 64) == set()
    full = Built(path, war=True, waw=True)
    w1, r, w2 = full.node("@w1", "store", 4), full.node("@r", "load", 4), full.node("@w2", "store", 4)
    assert full.sources(w2, 32) == {r}   # write after read
    assert full.sources(w2, 64) == {w1}  # write after write
