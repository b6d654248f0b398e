"""Tracing real C: exact dynamic counts against independently derived values."""

import math

import numpy as np
import pytest

from frontend import RunLimits, compile_program, trace_program
from frontend.static import MEM_COPY, MEM_RMW, MEM_SET
from frontend.trace import OBJ_GLOBAL, OBJ_HEAP, OBJ_STACK
from tests.helpers import marker_line


def _blocks_at_line(trace, path_line):
    st = trace.static
    sids = np.flatnonzero(st.ins_line == path_line)
    return np.unique(st.ins_block[sids])


def _assert_all_located(trace):
    loc = trace.locate_accesses()
    bad = np.flatnonzero(loc < 0)
    assert len(bad) == 0, (
        f"{len(bad)} accesses outside every recorded object, e.g. "
        f"{[trace.static.ins_text[trace.dyn_sid[trace.mem_dyn[i]]] for i in bad[:3]]}"
    )


LOOP = """
#include <stdio.h>
int main(void) {
    int n = 37, s = 0;
    for (int i = 0; i < n; i++) {
        s += i * i;   /* @body */
    }
    printf("%d\\n", s);
    return 0;
}
"""


@pytest.mark.parametrize("timing", [True, False])
def test_loop_body_runs_n_times(cfile, timing):
    path = cfile("loop.c", LOOP)
    t = trace_program(path, timing=timing)
    assert t.meta["stdout"] == f"{sum(i * i for i in range(37))}\n"
    body = _blocks_at_line(t, marker_line(path, "@body"))
    assert len(body) >= 1
    counts = t.block_counts()
    assert all(counts[b] == 37 for b in body)
    # every executed block contributes exactly its static size
    assert t.dynamic_instructions == int((counts * t.static.blk_ninstr).sum())
    assert t.exit_code == 0 and not t.truncated
    assert t.meta["end_reason"] == "main returned"
    _assert_all_located(t)


def _fib_calls(n):
    calls = 0

    def fib(k):
        nonlocal calls
        calls += 1
        return k if k < 2 else fib(k - 1) + fib(k - 2)

    return fib(n), calls


def _ack_calls(m, n):
    calls = 0
    depth = 0
    best = 0

    def ack(a, b):
        nonlocal calls, depth, best
        calls += 1
        depth += 1
        best = max(best, depth)
        if a == 0:
            r = b + 1
        elif b == 0:
            r = ack(a - 1, 1)
        else:
            r = ack(a - 1, ack(a, b - 1))
        depth -= 1
        return r

    return ack(m, n), calls, best


RECURSION = """
#include <stdio.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int ack(int m, int n) {
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}
int main(void) { printf("%d %d\\n", fib(15), ack(2, 3)); return 0; }
"""


def test_recursion_counts_and_depth(cfile):
    t = trace_program(cfile("rec.c", RECURSION))
    fib_value, fib_calls = _fib_calls(15)
    ack_value, ack_calls, ack_depth = _ack_calls(2, 3)
    assert t.meta["stdout"] == f"{fib_value} {ack_value}\n"
    assert t.calls("fib") == fib_calls == 2 * 987 - 1
    assert t.max_recursion_depth("fib") == 15
    assert t.calls("ack") == ack_calls
    assert t.max_recursion_depth("ack") == ack_depth
    assert t.calls("main") == 1
    # each fib activation's parent is main or fib, opened by a call to fib
    st = t.static
    fib_id, main_id = st.function_id("fib"), st.function_id("main")
    acts = np.flatnonzero(t.act_func == fib_id)
    parents = t.act_func[t.act_parent[acts]]
    assert set(parents.tolist()) == {fib_id, main_id}
    callers = t.dyn_sid[t.act_call[acts]]
    assert all(st.ins_callee[s] == fib_id for s in callers)
    # instructions of an activation are all in its function
    assert np.array_equal(st.ins_func[t.dyn_sid], t.act_func[t.dyn_act])
    _assert_all_located(t)


QSORT = """
#include <stdio.h>
#include <stdlib.h>
static int ncmp = 0;
static int cmp(const void *a, const void *b) {
    ncmp++;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
int main(void) {
    int v[40];
    unsigned s = 12345u;
    for (int i = 0; i < 40; i++) { s = s * 1103515245u + 12345u; v[i] = (int)(s >> 16) % 1000; }
    qsort(v, 40, sizeof v[0], cmp);
    for (int i = 1; i < 40; i++) if (v[i - 1] > v[i]) return 1;
    printf("%d\\n", ncmp);
    return 0;
}
"""


def test_qsort_callbacks_are_traced_under_the_library_call(cfile):
    t = trace_program(cfile("qs.c", QSORT))
    assert t.exit_code == 0
    ncmp = int(t.meta["stdout"])
    assert ncmp > 40
    assert t.calls("cmp") == ncmp
    st = t.static
    acts = np.flatnonzero(t.act_func == st.function_id("cmp"))
    qsort_id = st.function_id("qsort")
    call_sids = t.dyn_sid[t.act_call[acts]]
    assert all(st.ins_callee[s] == qsort_id for s in call_sids)
    assert len(set(t.act_call[acts].tolist())) == 1  # all from the one qsort call
    _assert_all_located(t)


STRUCTS = """
#include <stdio.h>
#include <stdlib.h>
struct point { int x; double y; struct point *next; };
static int square(int v) { return v * v; }
static int twice(int v) { return 2 * v; }
int table[5] = {1, 2, 3, 4, 5};
int main(void) {
    struct point pts[4];
    for (int i = 0; i < 4; i++) { pts[i].x = i; pts[i].y = i * 0.5; pts[i].next = i < 3 ? &pts[i + 1] : 0; }
    double sy = 0; int sx = 0;
    for (struct point *p = &pts[0]; p; p = p->next) { sx += p->x; sy += p->y; }
    int **grid = malloc(3 * sizeof(int *));
    for (int r = 0; r < 3; r++) { grid[r] = malloc(3 * sizeof(int)); for (int c = 0; c < 3; c++) grid[r][c] = r * 3 + c; }
    int g = 0;
    for (int r = 0; r < 3; r++) for (int c = 0; c < 3; c++) g += grid[r][c];
    int (*ops[2])(int) = {square, twice};
    int f = 0;
    for (int i = 0; i < 5; i++) f += ops[i % 2](table[i]);
    for (int r = 0; r < 3; r++) free(grid[r]);
    free(grid);
    printf("%d %.2f %d %d\\n", sx, sy, g, f);
    return 0;
}
"""


def test_structs_pointers_function_pointers(cfile):
    t = trace_program(cfile("st.c", STRUCTS))
    table = [1, 2, 3, 4, 5]
    f = sum(table[i] ** 2 if i % 2 == 0 else 2 * table[i] for i in range(5))
    assert t.meta["stdout"] == f"6 3.00 36 {f}\n"
    assert t.calls("square") == 3 and t.calls("twice") == 2
    heap = t.obj_kind == OBJ_HEAP
    assert sorted(t.obj_size[heap].tolist()) == [12, 12, 12, 24]
    assert np.all(t.obj_free_dyn[heap] >= 0)  # every block was freed
    assert np.all(t.obj_free_dyn[heap] > t.obj_alloc_dyn[heap])
    gid = int(np.flatnonzero(t.static.gv_name == "table")[0])
    gobj = np.flatnonzero((t.obj_kind == OBJ_GLOBAL) & (t.obj_global == gid))
    assert len(gobj) == 1 and t.obj_size[gobj[0]] == 20
    _assert_all_located(t)


MEMOPS = """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int counter = 0;
int main(void) {
    int *a = malloc(10 * sizeof(int));
    int *b = malloc(10 * sizeof(int));
    memset(a, 0, 10 * sizeof(int));
    for (int i = 0; i < 10; i++) a[i] += i;
    memcpy(b, a, 10 * sizeof(int));
    for (int i = 0; i < 5; i++) __atomic_fetch_add(&counter, b[i], __ATOMIC_SEQ_CST);
    printf("%d %d\\n", b[9], counter);
    free(a); free(b);
    return 0;
}
"""


def test_libc_memory_operations_and_atomics(cfile):
    t = trace_program(cfile("mem.c", MEMOPS))
    assert t.meta["stdout"] == "9 10\n"
    st = t.static
    heap = np.flatnonzero(t.obj_kind == OBJ_HEAP)
    assert len(heap) == 2 and t.obj_size[heap].tolist() == [40, 40]
    a_base, b_base = (int(x) for x in t.obj_base[heap])
    kind = st.ins_mem[t.dyn_sid[t.mem_dyn]]
    sets = np.flatnonzero(kind == MEM_SET)
    assert len(sets) == 1
    assert int(t.mem_addr[sets[0]]) == a_base and t.mem_size[sets[0]] == 40 and t.mem_write[sets[0]]
    copies = np.flatnonzero(kind == MEM_COPY)
    assert len(copies) == 2
    (rd,) = [i for i in copies if not t.mem_write[i]]
    (wr,) = [i for i in copies if t.mem_write[i]]
    assert (int(t.mem_addr[rd]), int(t.mem_size[rd])) == (a_base, 40)
    assert (int(t.mem_addr[wr]), int(t.mem_size[wr])) == (b_base, 40)
    rmw = np.flatnonzero(kind == MEM_RMW)
    assert len(rmw) == 10  # five atomics, a read and a write each
    gid = int(np.flatnonzero(st.gv_name == "counter")[0])
    g = np.flatnonzero((t.obj_kind == OBJ_GLOBAL) & (t.obj_global == gid))[0]
    assert set(t.mem_addr[rmw].tolist()) == {int(t.obj_base[g])}
    assert np.all(t.mem_size[rmw] == 4)
    assert t.mem_write[rmw].tolist() == [False, True] * 5
    _assert_all_located(t)


MATH = """
#include <stdio.h>
#include <math.h>
int main(void) {
    double acc = 0.0;
    float f = 1.5f;
    for (int i = 1; i <= 8; i++) acc += sqrt((double)i) * sin(i * 0.25) + pow(1.1, i) - exp(-i);
    f = f * 2.25f;
    printf("%.9f %.3f\\n", acc, f);
    return 0;
}
"""


def test_floating_point_and_libm(cfile):
    t = trace_program(cfile("m.c", MATH))
    acc = sum(math.sqrt(i) * math.sin(i * 0.25) + math.pow(1.1, i) - math.exp(-i) for i in range(1, 9))
    assert t.meta["stdout"] == f"{acc:.9f} {1.5 * 2.25:.3f}\n"
    # libm calls are single opaque call instructions
    st = t.static
    for name in ("sqrt", "sin", "pow", "exp"):
        fid = st.function_id(name)
        assert not st.fn_defined[fid]
        n_calls = np.count_nonzero(st.ins_callee[t.dyn_sid] == fid)
        assert n_calls == 8
        assert t.calls(name) == 0  # never entered: not traced code
    _assert_all_located(t)


EXIT = """
#include <stdio.h>
#include <stdlib.h>
void leave(int depth) {
    if (depth == 0) { printf("bye\\n"); exit(3); }
    leave(depth - 1);
}
int main(void) { leave(4); return 0; }
"""


def test_exit_inside_nested_calls(cfile):
    t = trace_program(cfile("ex.c", EXIT))
    assert t.exit_code == 3
    assert t.meta["stdout"] == "bye\n"
    assert t.meta["end_reason"] == "exit() called"
    assert not t.truncated
    assert t.calls("leave") == 5 and t.max_recursion_depth("leave") == 5
    st = t.static
    last = int(t.dyn_sid[-1])
    assert st.ins_callee[last] == st.function_id("exit")


def test_argv_stdin_and_cwd(cfile, tmp_path):
    path = cfile(
        "io.c",
        """
        #include <stdio.h>
        int main(int argc, char **argv) {
            int x, s = 0;
            while (scanf("%d", &x) == 1) s += x;
            FILE *f = fopen("data.txt", "r");
            int y = 0, t = 0;
            if (!f) return 2;
            while (fscanf(f, "%d", &y) == 1) t += y;
            fclose(f);
            printf("%d %s %d %d\\n", argc, argv[argc - 1], s, t);
            return 0;
        }
        """,
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.txt").write_text("5 6 7\n")
    t = trace_program(path, args=["alpha", "omega"], stdin=b"1 2 3 4\n", cwd=str(work))
    assert t.meta["stdout"] == "3 omega 10 18\n"
    assert t.exit_code == 0
    _assert_all_located(t)


def test_budget_gives_a_prefix_of_the_full_trace(cfile):
    path = cfile("loop.c", LOOP)
    cm = compile_program(path)
    full = trace_program(cm)
    cut = trace_program(cm, limits=RunLimits(max_instructions=200))
    assert cut.truncated and cut.exit_code is None
    assert cut.meta["end_reason"] == "dynamic-instruction budget exceeded"
    assert 0 < cut.dynamic_instructions <= 200
    n = cut.dynamic_instructions
    assert np.array_equal(cut.dyn_sid, full.dyn_sid[:n])
    assert np.array_equal(cut.dyn_act, full.dyn_act[:n])
    k = len(cut.mem_dyn)
    assert np.array_equal(cut.mem_dyn, full.mem_dyn[:k])
    assert np.array_equal(cut.mem_size, full.mem_size[:k])


ROI = """
#include <stdio.h>
int helper(int v) { return v + 1; }
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i); return s; }
int other(int n) { return n * 3; }
int main(void) {
    int a = work(4), b = other(2), c = work(6);
    printf("%d %d %d\\n", a, b, c);
    return 0;
}
"""


def test_region_of_interest_traces_only_chosen_functions(cfile):
    cm = compile_program(cfile("roi.c", ROI))
    full = trace_program(cm)
    roi = trace_program(cm, roi=["work"])
    st = roi.static
    assert roi.meta["stdout"] == full.meta["stdout"] == "10 6 21\n"
    roots = np.flatnonzero(roi.act_parent == -1)
    assert [st.fn_name[roi.act_func[r]] for r in roots] == ["work", "work"]
    assert roi.calls("helper") == 10 and roi.calls("main") == 0 and roi.calls("other") == 0
    # the ROI trace is exactly the work() subtrees of the full trace
    work_id = st.function_id("work")
    in_work = np.zeros(len(full.act_func), dtype=bool)
    for a in range(len(full.act_func)):
        p = full.act_parent[a]
        in_work[a] = full.act_func[a] == work_id or (p >= 0 and in_work[p])
    expected = full.dyn_sid[in_work[full.dyn_act]]
    assert np.array_equal(roi.dyn_sid, expected)


def test_phi_incoming_block_is_the_previous_block_of_the_activation(cfile):
    path = cfile(
        "phi.c",
        """
        #include <stdio.h>
        int main(int argc, char **argv) {
            int s = 0;
            for (int i = 0; i < 50 + argc; i++) s += (i % 3 == 0) ? i : -1;
            printf("%d\\n", s);
            return 0;
        }
        """,
    )
    cm = compile_program(path, opt="-O1", extra_flags=["-fno-vectorize", "-fno-unroll-loops"])
    t = trace_program(cm)
    st = t.static
    assert t.meta["stdout"] == f"{sum(i if i % 3 == 0 else -1 for i in range(51))}\n"
    phis = np.flatnonzero(st.ins_opcode == "phi")
    assert len(phis) > 0
    checked = 0
    prev_in_act = {}
    for k in range(t.blocks_executed):
        b, a = int(t.bs_block[k]), int(t.bs_act[k])
        first, n = int(st.blk_first[b]), int(st.blk_ninstr[b])
        for s in range(first, first + n):
            if st.ins_opcode[s] != "phi":
                break
            incoming = st.op_block[st.op_ptr[s] : st.op_ptr[s + 1]]
            assert prev_in_act[a] in incoming.tolist()
            checked += 1
        prev_in_act[a] = b
    # every executed phi was checked, and the loop header's phis ran each iteration
    assert checked == np.count_nonzero(st.ins_opcode[t.dyn_sid] == "phi")
    assert checked >= 51


def test_old_c_compiles_and_runs(cfile):
    path = cfile(
        "old.c",
        """
        #include <stdio.h>
        int add(a, b) int a; int b; { return a + b; }
        twice(x) { return 2 * x; }
        main() {
            int *p;
            long v = 40;
            p = v;            /* int to pointer, accepted with a warning */
            printf("%d %d\\n", add(1, 2), twice((int)(long)p));
            return 0;
        }
        """,
    )
    cm = compile_program(path)
    assert "warning" in cm.diagnostics
    t = trace_program(cm)
    assert t.meta["stdout"] == "3 80\n"


def test_defines_include_dirs_and_multiple_files(cfile, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "conf.h").write_text("#define BASE 100\nint helper(int);\n")
    main = cfile(
        "main.c",
        """
        #include <stdio.h>
        #include "conf.h"
        int main(void) { printf("%d\\n", helper(BASE + EXTRA)); return 0; }
        """,
    )
    other = cfile("helper.c", "int helper(int v) { return v * 2; }\n")
    t = trace_program(
        [main, other], compile_options={"defines": ["EXTRA=7"], "include_dirs": [str(inc)]}
    )
    assert t.meta["stdout"] == "214\n"
    assert t.calls("helper") == 1


def test_stack_objects_live_within_their_activation(cfile):
    t = trace_program(cfile("rec.c", RECURSION))
    stack = np.flatnonzero(t.obj_kind == OBJ_STACK)
    assert len(stack) > 0
    acts = t.dyn_act[t.obj_alloc_dyn[stack]]
    ends = t.obj_free_dyn[stack]
    assert np.all(t.dyn_act[ends] == acts)


def test_regression_switch_spans_several_lines(cfile):
    """`switch` prints its cases on following lines; the scanner must keep them."""
    path = cfile(
        "sw.c",
        """
        #include <stdio.h>
        int classify(int v) {
            switch (v % 5) {
            case 0: return 10;
            case 1: return 20;
            case 3: return 30;
            default: return 1;
            }
        }
        int main(void) { int s = 0; for (int i = 0; i < 23; i++) s += classify(i); printf("%d\\n", s); return 0; }
        """,
    )
    t = trace_program(path)
    assert t.meta["stdout"] == f"{sum({0: 10, 1: 20, 3: 30}.get(i % 5, 1) for i in range(23))}\n"
    assert t.calls("classify") == 23
    st = t.static
    (sw,) = np.flatnonzero(st.ins_opcode == "switch")
    assert t.instruction_counts()[sw] == 23


def test_huge_program_output_is_kept_cut(cfile):
    from frontend.run import OUTPUT_KEPT

    path = cfile("out.c", '#include <stdio.h>\nint main(void) { for (int i = 0; i < 300000; i++) '
                 'fputs("0123456789", stdout); return 0; }\n')
    t = trace_program(path, timing=False)
    assert t.meta["stdout"] == "0123456789" * (OUTPUT_KEPT // 10) + "0123456789"[: OUTPUT_KEPT % 10]
    assert t.meta["stdout_bytes"] == 3_000_000 and t.meta["stdout_truncated"] is True
    assert t.meta["stderr_bytes"] == 0 and t.meta["stderr_truncated"] is False


def test_addresses_are_the_same_run_after_run(cfile):
    # the child runs without address-space randomisation, so stack, heap and global
    # addresses (and with them the cache-model weights) repeat exactly
    path = cfile("addr.c", """
        #include <stdlib.h>
        int g[64];
        int main(void) {
            int local[16];
            int *h = malloc(100 * sizeof(int));
            for (int i = 0; i < 16; i++) { local[i] = i; h[i] = g[i] + local[i]; }
            int s = h[3];
            free(h);
            return s - 3;
        }
    """)
    a = trace_program(path, timing=False)
    b = trace_program(path, timing=False)
    assert np.array_equal(a.mem_addr, b.mem_addr) and np.array_equal(a.obj_base, b.obj_base)
    # nor do they depend on what the tracing process allocated before main: a large
    # environment (copied by the tracer) once moved every heap address
    for env in (["A=" + "x" * 1000], ["A=" + "x" * 300_000]):
        c = trace_program(path, timing=False, env=env)
        heap = c.obj_kind == 2
        assert heap.sum() == 1 and c.obj_size[heap][0] == 400
        assert np.array_equal(a.mem_addr, c.mem_addr)
        assert np.array_equal(a.obj_base[a.obj_kind != 3], c.obj_base[c.obj_kind != 3])


def test_a_text_file_is_not_a_trace_and_no_pickle_is_mentioned(tmp_path):
    from frontend import load_trace
    from vcut_base.errors import TraceFormatError

    path = tmp_path / "notes.npz"
    path.write_text("just some text\n")
    with pytest.raises(TraceFormatError) as caught:
        load_trace(path)
    assert str(caught.value) == f"{path} is not a readable vcut trace: not an .npz (zip) archive"
