"""Control dependences and the Lam-Wilson models (ir_graph/control.py).

Static control dependences and post-dominators of small hand-written LLVM IR
programs are derived by hand below (block and instruction ids in module order).
The dynamic control dependences and the two-bit predictor are checked against an
independent pure-Python reference (`reference_static`, `reference_flow`) that
works from the instructions' IR text and the definitions: post-dominator *sets*
by fixpoint, Ferrante-Ottenstein-Warren control dependence, and a walk of the trace
keeping, per activation, the latest instance of each static branch.
"""

import dataclasses
import itertools
import math
import os
import random
import re

import numpy as np
import pytest

from frontend import RunLimits, trace_program
from ir_graph import build_graph
from ir_graph.build import _included
from ir_graph.control import (
    BRANCH_CYCLES,
    CONTROL_MODELS,
    ControlFlow,
    control_edges,
    control_flow,
    critical_path,
    model_table,
    static_control,
    with_control,
)
from ir_graph.control_kernels import MISPREDICTED, NOT_BRANCH, PREDICTED
from ir_graph.critical_path_kernels import longest_path
from ir_graph.dependency_kernels import KIND_CTRL
from tests.helpers import ROOT, marker_line, write_c
from vcut_base.errors import InputError

P, M = PREDICTED, MISPREDICTED


# -- the reference ---------------------------------------------------------------------------
_LABEL = re.compile(r'label %("[^"]*"|[-\w.$]+)')


def _label_maps(static):
    """Per function, its blocks by label: named blocks by name, unnamed ones by the
    number LLVM's slot tracker gives them (clang's arguments, unnamed blocks and unnamed
    results share one counter per function; every numbered result checks it)."""
    maps = []
    funcs = np.asarray(static.blk_func)
    for f in range(static.n_functions):
        blocks = np.flatnonzero(funcs == f).tolist()
        names = {}
        counter = int(static.fn_nargs[f])
        for b in blocks:
            label = str(static.blk_label[b])
            if label:
                names[label.strip('"')] = b
            else:
                names[str(counter)] = b
                counter += 1
            first = int(static.blk_first[b])
            for s in range(first, first + int(static.blk_ninstr[b])):
                r = str(static.ins_result[s])
                if r[1:].isdigit():
                    assert int(r[1:]) == counter, (f, b, s, r)
                    counter += 1
        maps.append(names)
    return maps


def reference_static(static):
    """``(controls, ipdom, succ, branch)``: per block its controlling branch ids
    (sorted) and its immediate post-dominator (-1: the exit); per terminator its
    successor blocks in IR text order; per instruction whether it is a branch."""
    maps = _label_maps(static)
    n_blk = static.n_blocks
    succ = {}
    branch = [False] * static.n_instructions
    block_succ = [[] for _ in range(n_blk)]
    for b in range(n_blk):
        t = int(static.blk_first[b] + static.blk_ninstr[b] - 1)
        op = str(static.ins_opcode[t])
        if op not in ("br", "switch"):
            continue
        labels = [m.strip('"') for m in _LABEL.findall(str(static.ins_text[t]))]
        names = maps[int(static.blk_func[b])]
        succ[t] = [names[x] for x in labels]
        branch[t] = len(set(succ[t])) >= 2
        block_succ[b] = sorted(set(succ[t]))
    controls = [[] for _ in range(n_blk)]
    ipdom = [-1] * n_blk
    funcs = np.asarray(static.blk_func)
    for f in range(static.n_functions):
        blocks = np.flatnonzero(funcs == f).tolist()
        if not blocks:
            continue
        exit_ = "exit"
        pdom = {b: set(blocks) | {exit_} for b in blocks}
        pdom[exit_] = {exit_}
        changed = True
        while changed:
            changed = False
            for b in blocks:
                nxt = block_succ[b] or [exit_]
                new = {b} | set.intersection(*(pdom[s] for s in nxt))
                if new != pdom[b]:
                    pdom[b], changed = new, True
        for b in blocks:
            assert exit_ in pdom[b], "the reference needs every block to reach an exit"
            strict = pdom[b] - {b}
            (c,) = [c for c in strict if pdom[c] == strict]
            ipdom[b] = -1 if c == exit_ else c
        for x in blocks:
            t = int(static.blk_first[x] + static.blk_ninstr[x] - 1)
            if not branch[t]:
                continue
            for y in blocks:
                if any(y in pdom[s] for s in block_succ[x]) and y not in pdom[x] - {x}:
                    controls[y].append(t)
    return [sorted(c) for c in controls], ipdom, succ, branch


def reference_flow(trace, ref=None):
    """``(parent, state)`` per dynamic instruction, straight from the definitions: an
    instruction depends on the latest instance, in its own activation, of a branch its
    block is control dependent on, else on the branch its activation's call depends on;
    a two-way branch is predicted by a two-bit saturating counter starting at "weakly
    the first successor", a multi-way one by the documented guess-and-confidence rule."""
    static = trace.static
    controls, _, succ, branch = ref or reference_static(static)
    sid = trace.dyn_sid.tolist()
    act = trace.dyn_act.tolist()
    call = trace.act_call.tolist()
    ins_block = static.ins_block.tolist()
    n = len(sid)
    latest = {}  # activation -> {branch sid: dynamic index of its latest instance}
    base = {}
    counter = {}  # two-way branch -> 0..3 (>= 2: predict the first successor)
    guess = {}  # multi-way branch -> [guessed block, strong]
    parent = [-1] * n
    state = [NOT_BRANCH] * n
    for i in range(n):
        a, s = act[i], sid[i]
        if a not in latest:
            latest[a] = {}
            base[a] = parent[call[a]] if call[a] >= 0 else -1
        mine = latest[a]
        seen = [mine[c] for c in controls[ins_block[s]] if c in mine]
        parent[i] = max(seen) if seen else base[a]
        if not branch[s]:
            continue
        state[i] = P
        if i + 1 < n and act[i + 1] == a:
            taken = ins_block[sid[i + 1]]
            targets = succ[s]
            if len(set(targets)) == 2:
                c = counter.get(s, 2)
                first = taken == targets[0]
                if (c >= 2) != first:
                    state[i] = M
                counter[s] = min(c + 1, 3) if first else max(c - 1, 0)
            else:
                g = guess.setdefault(s, [targets[0], False])
                if taken == g[0]:
                    g[1] = True
                else:
                    state[i] = M
                    if g[1]:
                        g[1] = False
                    else:
                        g[0] = taken
        mine[s] = i
    return parent, state


def assert_static_matches_reference(static):
    sc = static_control(static)
    controls, ipdom, succ, branch = reference_static(static)
    assert [sc.controls(b) for b in range(static.n_blocks)] == controls
    assert sc.ipdom.tolist() == ipdom
    assert sc.is_branch.tolist() == branch
    for s in range(static.n_instructions):
        got = sc.succ_block[sc.succ_ptr[s]:sc.succ_ptr[s + 1]].tolist()
        assert got == succ.get(s, []), s


def assert_flow_matches_reference(trace):
    flow = control_flow(trace)
    parent, state = reference_flow(trace)
    assert flow.n == trace.dynamic_instructions
    assert flow.parent.tolist() == parent
    assert flow.state.tolist() == state
    return flow


# -- programs --------------------------------------------------------------------------------
def trace_ir(directory, name, ir, args=()):
    path = os.path.join(str(directory), name + ".ll")
    with open(path, "w") as fh:
        fh.write(ir)
    return trace_program(path, args=list(args), timing=False)


#: if/else with an if nested in the then-branch. Blocks: 0 entry, 1 then, 2 inner,
#: 3 tj, 4 else, 5 join. Instructions: 0 icmp, 1 br, 2 icmp, 3 br, 4 br, 5 br, 6 br, 7 ret.
IF_ELSE = """define i32 @main(i32 %x) {
entry:
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %then, label %else
then:
  %d = icmp sgt i32 %x, 1
  br i1 %d, label %inner, label %tj
inner:
  br label %tj
tj:
  br label %join
else:
  br label %join
join:
  ret i32 0
}
"""

#: Two nested loops (2 x 3 iterations). Blocks: 0 entry, 1 outer, 2 ipre, 3 inner,
#: 4 olatch, 5 exit. Instructions: 0 br | 1 phi, 2 icmp, 3 br | 4 br | 5 phi, 6 add,
#: 7 icmp, 8 br | 9 add, 10 br | 11 ret.
NESTED_LOOPS = """define i32 @main(i32 %x) {
entry:
  br label %outer
outer:
  %i = phi i32 [0, %entry], [%i1, %olatch]
  %ci = icmp slt i32 %i, 2
  br i1 %ci, label %ipre, label %exit
ipre:
  br label %inner
inner:
  %j = phi i32 [0, %ipre], [%j1, %inner]
  %j1 = add i32 %j, 1
  %cj = icmp slt i32 %j1, 3
  br i1 %cj, label %inner, label %olatch
olatch:
  %i1 = add i32 %i, 1
  br label %outer
exit:
  ret i32 0
}
"""

#: An early return in a function called twice. Blocks: f: 0 entry, 1 early, 2 rest,
#: 3 pos, 4 done; main: 5. Instructions: f: 0 icmp, 1 br | 2 ret | 3 icmp, 4 br | 5 br |
#: 6 ret; main: 7 call, 8 call, 9 add, 10 ret.
EARLY_RETURN = """define i32 @f(i32 %x) {
entry:
  %c = icmp sgt i32 %x, 5
  br i1 %c, label %early, label %rest
early:
  ret i32 1
rest:
  %d = icmp sgt i32 %x, 0
  br i1 %d, label %pos, label %done
pos:
  br label %done
done:
  ret i32 0
}

define i32 @main(i32 %x) {
entry:
  %a = call i32 @f(i32 %x)
  %b = call i32 @f(i32 9)
  %s = add i32 %a, %b
  ret i32 %s
}
"""

#: A switch in a loop of five iterations (cases 2 and 3 go to the same block), then a
#: switch and a br whose targets are all one block (not branches). Blocks: 0 entry,
#: 1 head, 2 def, 3 one, 4 two, 5 join, 6 same, 7 end, 8 ret. Instructions: 0 br |
#: 1 phi, 2 switch | 3 br | 4 br | 5 br | 6 add, 7 icmp, 8 br | 9 switch | 10 br | 11 ret.
SWITCH = """define i32 @main(i32 %x) {
entry:
  br label %head
head:
  %i = phi i32 [0, %entry], [%i1, %join]
  switch i32 %i, label %def [
    i32 1, label %one
    i32 2, label %two
    i32 3, label %two
  ]
def:
  br label %join
one:
  br label %join
two:
  br label %join
join:
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %i1, 5
  br i1 %c, label %head, label %same
same:
  switch i32 %x, label %end [
    i32 7, label %end
  ]
end:
  br i1 %c, label %ret, label %ret
ret:
  ret i32 0
}
"""

#: Recursion: fact(3), called under a branch of main. Blocks: fact: 0 entry, 1 rec,
#: 2 base; main: 3 entry, 4 go, 5 skip. Instructions: fact: 0 icmp, 1 br | 2 sub, 3 call,
#: 4 mul, 5 ret | 6 ret; main: 7 icmp, 8 br | 9 call, 10 br | 11 ret.
RECURSIVE = """define i32 @fact(i32 %n) {
entry:
  %c = icmp sgt i32 %n, 1
  br i1 %c, label %rec, label %base
rec:
  %m = sub i32 %n, 1
  %r = call i32 @fact(i32 %m)
  %p = mul i32 %n, %r
  ret i32 %p
base:
  ret i32 1
}

define i32 @main(i32 %x) {
entry:
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %go, label %skip
go:
  %v = call i32 @fact(i32 3)
  br label %skip
skip:
  ret i32 0
}
"""

#: A loop of up to ten iterations left by a break at i == 3. Blocks: 0 entry, 1 head,
#: 2 body, 3 latch, 4 exit. Instructions: 0 br | 1 phi, 2 icmp, 3 br | 4 icmp, 5 br |
#: 6 add, 7 br | 8 ret.
BREAK = """define i32 @main(i32 %x) {
entry:
  br label %head
head:
  %i = phi i32 [0, %entry], [%i1, %latch]
  %c = icmp slt i32 %i, 10
  br i1 %c, label %body, label %exit
body:
  %b = icmp eq i32 %i, 3
  br i1 %b, label %exit, label %latch
latch:
  %i1 = add i32 %i, 1
  br label %head
exit:
  ret i32 0
}
"""

#: A do-while of three iterations with an if on the parity. Blocks: 0 entry, 1 body,
#: 2 even, 3 cond, 4 exit. Instructions: 0 br | 1 phi, 2 add, 3 and, 4 icmp, 5 br |
#: 6 br | 7 icmp, 8 br | 9 ret.
DO_WHILE = """define i32 @main(i32 %x) {
entry:
  br label %body
body:
  %i = phi i32 [0, %entry], [%i1, %cond]
  %i1 = add i32 %i, 1
  %odd = and i32 %i, 1
  %t = icmp eq i32 %odd, 0
  br i1 %t, label %even, label %cond
even:
  br label %cond
cond:
  %c = icmp slt i32 %i1, 3
  br i1 %c, label %body, label %exit
exit:
  ret i32 %i1
}
"""

#: A recursive function whose loop body calls it and then branches in the same block:
#: the branches the callee ran must not hide the caller's own after it returns. f(1)
#: calls f(0). Blocks: f: 0 entry, 1 loop, 2 body, 3 t, 4 e, 5 latch, 6 done; main: 7.
#: Instructions: f: 0 br | 1 phi, 2 icmp, 3 br | 4 sub, 5 call, 6 icmp, 7 br | 8 br |
#: 9 br | 10 add, 11 br | 12 ret; main: 13 call, 14 ret.
CALL_THEN_BRANCH = """define void @f(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%i1, %latch]
  %c = icmp slt i32 %i, %n
  br i1 %c, label %body, label %done
body:
  %m = sub i32 %n, 1
  call void @f(i32 %m)
  %d = icmp eq i32 %i, 0
  br i1 %d, label %t, label %e
t:
  br label %latch
e:
  br label %latch
latch:
  %i1 = add i32 %i, 1
  br label %loop
done:
  ret void
}

define i32 @main(i32 %x) {
entry:
  call void @f(i32 1)
  ret i32 0
}
"""

#: name -> (IR, per block its controlling branches, per block its ipdom), by hand.
HAND = {
    "if_else": (IF_ELSE, [[], [1], [3], [1], [1], []], [5, 3, 3, 5, 5, -1]),
    "nested_loops": (NESTED_LOOPS, [[], [3], [3], [3, 8], [3], []], [1, 5, 3, 4, 1, -1]),
    "early_return": (EARLY_RETURN, [[], [1], [1], [4], [1], []], [-1, -1, 4, 4, -1, -1]),
    "switch": (SWITCH, [[], [8], [2], [2], [2], [8], [], [], []],
               [1, 5, 5, 5, 5, 6, 7, 8, -1]),
    "recursive": (RECURSIVE, [[], [1], [1], [], [8], []], [-1, -1, -1, 5, 5, -1]),
    "break": (BREAK, [[], [5], [3], [5], []], [1, 4, 4, 1, -1]),
    "do_while": (DO_WHILE, [[], [8], [5], [8], []], [1, 3, 3, 4, -1]),
    "call_then_branch": (CALL_THEN_BRANCH, [[], [3], [3], [7], [7], [3], [], []],
                         [1, 6, 5, 5, 5, 1, -1, -1]),
}

#: name -> (the executed instructions' ids, their parents, their branch states), by hand
#: for the run without arguments (x = argc = 1).
HAND_RUNS = {
    "if_else": ([0, 1, 2, 3, 5, 7], [-1, -1, 1, 1, 1, -1], [0, P, 0, M, 0, 0]),
    "nested_loops": (
        [0] + [1, 2, 3, 4] + [5, 6, 7, 8] * 3 + [9, 10] + [1, 2, 3, 4] + [5, 6, 7, 8] * 3
        + [9, 10] + [1, 2, 3, 11],
        [-1] + [-1] * 3 + [3] + [3] * 4 + [8] * 4 + [12] * 4 + [3] * 2 + [3] * 3 + [21]
        + [21] * 4 + [26] * 4 + [30] * 4 + [21] * 2 + [21] * 3 + [-1],
        [0] + [0, 0, P, 0] + [0, 0, 0, P] * 2 + [0, 0, 0, M] + [0, 0] + [0, 0, P, 0]
        + [0, 0, 0, P] * 2 + [0, 0, 0, M] + [0, 0] + [0, 0, M, 0]),
    "early_return": ([7, 0, 1, 3, 4, 5, 6, 8, 0, 1, 2, 9, 10],
                     [-1, -1, -1, 2, 2, 4, 2, -1, -1, -1, 9, -1, -1],
                     [0, 0, M, 0, P, 0, 0, 0, 0, M, 0, 0, 0]),
    "switch": (
        [0] + [1, 2, 3, 6, 7, 8] + [1, 2, 4, 6, 7, 8] + [1, 2, 5, 6, 7, 8] * 2
        + [1, 2, 3, 6, 7, 8] + [9, 10, 11],
        [-1] + [-1, -1, 2, -1, -1, -1] + [6, 6, 8, 6, 6, 6] + [12, 12, 14, 12, 12, 12]
        + [18, 18, 20, 18, 18, 18] + [24, 24, 26, 24, 24, 24] + [-1, -1, -1],
        [0] + [0, P, 0, 0, 0, P] + [0, M, 0, 0, 0, P] + [0, M, 0, 0, 0, P]
        + [0, P, 0, 0, 0, P] + [0, M, 0, 0, 0, M] + [0, 0, 0]),
    "recursive": (
        [7, 8, 9, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 6, 4, 5, 4, 5, 10, 11],
        [-1, -1, 1, 1, 1, 4, 4, 4, 4, 8, 8, 8, 8, 12, 8, 8, 4, 4, 1, -1],
        [0, P, 0, 0, P, 0, 0, 0, P, 0, 0, 0, M, 0, 0, 0, 0, 0, 0, 0]),
    "break": (
        [0] + [1, 2, 3, 4, 5, 6, 7] * 3 + [1, 2, 3, 4, 5, 8],
        [-1] + [-1, -1, -1, 3, 3, 5, 5] + [5, 5, 5, 10, 10, 12, 12]
        + [12, 12, 12, 17, 17, 19, 19] + [19, 19, 19, 24, 24, -1],
        [0] + [0, 0, P, 0, M, 0, 0] + [0, 0, P, 0, P, 0, 0] * 2 + [0, 0, P, 0, M, 0]),
    "do_while": (
        [0] + [1, 2, 3, 4, 5, 6, 7, 8] + [1, 2, 3, 4, 5, 7, 8] + [1, 2, 3, 4, 5, 6, 7, 8, 9],
        [-1] + [-1] * 5 + [5] + [-1, -1] + [8] * 5 + [8, 8] + [15] * 5 + [20] + [15, 15]
        + [-1],
        [0] + [0, 0, 0, 0, P, 0, 0, P] + [0, 0, 0, 0, M, 0, P]
        + [0, 0, 0, 0, P, 0, 0, M, 0]),
    "call_then_branch": (
        [13, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 12, 6, 7, 8, 10, 11, 1, 2, 3, 12, 14],
        [-1, -1, -1, -1, -1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 13, 4, 4, 4, 4, 4, -1, -1],
        [0, 0, 0, 0, P, 0, 0, 0, 0, 0, M, 0, 0, P, 0, 0, 0, 0, 0, M, 0, 0]),
}


@pytest.fixture(scope="module")
def hand_traces(tmp_path_factory):
    """name -> the trace of that HAND program, run without arguments."""
    d = tmp_path_factory.mktemp("hand")
    return {name: trace_ir(d, name, ir) for name, (ir, _, _) in HAND.items()}


# -- 1. static control dependence ------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(HAND))
def test_static_control_of_hand_written_ir(hand_traces, name):
    _, controls, ipdom = HAND[name]
    static = hand_traces[name].static
    sc = static_control(static)
    assert static.n_blocks == len(controls)
    assert [sc.controls(b) for b in range(static.n_blocks)] == controls
    assert sc.ipdom.tolist() == ipdom
    # every branch a block depends on is a branch; the reference derives the same
    assert all(sc.is_branch[s] for s in sc.cd_sid)
    assert_static_matches_reference(static)


# -- 2. dynamic control dependences ----------------------------------------------------------
@pytest.mark.parametrize("name", sorted(HAND))
def test_dynamic_control_of_hand_written_ir(hand_traces, name):
    trace = hand_traces[name]
    sids, parents, states = HAND_RUNS[name]
    assert trace.dyn_sid.tolist() == sids
    flow = control_flow(trace)
    assert flow.parent.tolist() == parents
    assert flow.state.tolist() == states
    assert flow.branches == sum(s != 0 for s in states)
    assert flow.mispredicted == states.count(M)
    assert_flow_matches_reference(trace)


#: An intrinsic build_graph leaves out (llvm.assume) inside a controlled block: the graph's
#: nodes skip it and the control dependences are renumbered to nodes. Blocks: 0 entry,
#: 1 then, 2 join. Instructions: 0 alloca, 1 icmp, 2 br | 3 assume, 4 store, 5 assume,
#: 6 br | 7 ret.
EXCLUDED = """define i32 @main(i32 %x) {
entry:
  %p = alloca i32
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %then, label %join
then:
  call void @llvm.assume(i1 %c)
  store i32 1, ptr %p
  call void @llvm.assume(i1 true)
  br label %join
join:
  ret i32 0
}

declare void @llvm.assume(i1)
"""


def test_control_on_graph_nodes_skips_excluded_intrinsics(tmp_path):
    trace = trace_ir(tmp_path, "excluded", EXCLUDED)
    assert trace.dyn_sid.tolist() == list(range(8))
    keep = _included(trace.static)[trace.dyn_sid]
    assert keep.tolist() == [True, True, True, False, True, False, True, True]
    # per dynamic instruction: [-1, -1, -1, 2, 2, 2, 2, -1]; on the six nodes:
    flow = control_flow(trace, keep)
    assert flow.parent.tolist() == [-1, -1, -1, 2, 2, -1]
    assert flow.state.tolist() == [0, 0, P, 0, 0, 0]
    g = build_graph(trace, control="cd")
    assert g.n == 6
    assert g.control.parent.tolist() == flow.parent.tolist()
    assert g.control.state.tolist() == flow.state.tolist()
    # the reference on the dynamic instructions, renumbered the same way
    parent, state = reference_flow(trace)
    node_of = np.cumsum(keep) - 1
    assert flow.parent.tolist() == [int(node_of[p]) if p >= 0 else -1
                                    for p, k in zip(parent, keep) if k]
    assert flow.state.tolist() == [s for s, k in zip(state, keep) if k]


#: A loop with no exit (run under an instruction budget): blocks 0 entry, 1 loop, 2 a,
#: 3 b, 4 latch; instructions 0 br | 1 phi, 2 icmp, 3 br | 4 br | 5 br | 6 add, 7 br.
ENDLESS = """define i32 @main(i32 %x) {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%i1, %latch]
  %c = icmp eq i32 %i, 0
  br i1 %c, label %a, label %b
a:
  br label %latch
b:
  br label %latch
latch:
  %i1 = add i32 %i, 1
  br label %loop
}
"""


def test_endless_loop_and_a_run_cut_after_a_branch(tmp_path):
    """Without an exit the arms still depend on the branch choosing them and nothing
    else depends on anything (every block runs again whatever the branch does). The
    branch goes a, b, b, b, ...: predicted, then (counter 3 -> 2 -> 1) twice wrong,
    then right. A run cut right after a branch: that branch counts as predicted."""
    path = tmp_path / "endless.ll"
    path.write_text(ENDLESS)
    trace = trace_program(str(path), timing=False, limits=RunLimits(max_instructions=40))
    assert trace.truncated
    sc = static_control(trace.static)
    assert [sc.controls(b) for b in range(5)] == [[], [], [3], [3], []]
    sid = trace.dyn_sid.tolist()
    assert sid[:7] == [0, 1, 2, 3, 4, 6, 7] and len(sid) > 25
    assert sid[7:25] == [1, 2, 3, 5, 6, 7] * 3
    flow = control_flow(trace)
    branches = [i for i, s in enumerate(sid) if s == 3]
    assert flow.state[branches].tolist() == [P, M, M] + [P] * (len(branches) - 3)
    assert flow.state[[i for i, s in enumerate(sid) if s != 3]].tolist() == \
        [0] * (len(sid) - len(branches))
    # the arms (instructions 4 and 5) depend on the branch just before them
    assert flow.parent.tolist() == [i - 1 if s in (4, 5) else -1 for i, s in enumerate(sid)]
    # cut after the second branch, which was mispredicted: the next block is unknown
    cut = branches[1] + 1
    keep_blocks = trace.bs_start < cut
    short = dataclasses.replace(trace, dyn_sid=trace.dyn_sid[:cut], dyn_act=trace.dyn_act[:cut],
                                bs_block=trace.bs_block[keep_blocks],
                                bs_act=trace.bs_act[keep_blocks],
                                bs_start=trace.bs_start[keep_blocks])
    cut_flow = control_flow(short)
    assert cut_flow.state.tolist() == flow.state[:cut - 1].tolist() + [P]
    assert cut_flow.parent.tolist() == flow.parent[:cut].tolist()


# -- C programs ------------------------------------------------------------------------------
NESTED_C = """
int main(void) {
    int s = 0;
    for (int i = 0; i < 4; i++) {          /* @outer */
        for (int j = 0; j < 3; j++) {      /* @inner */
            if ((i + j) % 2)               /* @if */
                s += j;                    /* @then */
        }
    }
    return s & 1;                          /* @ret */
}
"""


def _conditional_branch_on(static, line, function="main"):
    """The one conditional br of ``function`` on source line ``line``."""
    f = static.function_id(function)
    (sid,) = [s for s in range(static.n_instructions)
              if static.ins_func[s] == f and static.ins_line[s] == line
              and str(static.ins_opcode[s]) == "br" and str(static.ins_text[s]).startswith("br i1")]
    return sid


def test_static_control_of_a_c_loop_nest(tmp_path):
    path = write_c(str(tmp_path), "nest.c", NESTED_C)
    static = trace_program(path, timing=False).static
    sc = static_control(static)
    h_out, h_in, br_if = (_conditional_branch_on(static, marker_line(path, m))
                          for m in ("@outer", "@inner", "@if"))
    blk = static.ins_block
    f = static.function_id("main")
    blocks = np.flatnonzero(np.asarray(static.blk_func) == f).tolist()
    assert sc.is_branch[[h_out, h_in, br_if]].all()
    assert {s for b in blocks for s in sc.controls(b)} == {h_out, h_in, br_if}
    # a loop header is controlled by its own branch (whether the loop goes on), the inner
    # header also by the outer one (it runs inside the outer body)
    assert sc.controls(blk[h_out]) == [h_out]
    assert sc.controls(blk[h_in]) == sorted([h_out, h_in])
    # the if's then-block by the if alone; the entry and the return by nothing
    then_line = marker_line(path, "@then")
    (then_block,) = {int(blk[s]) for s in range(static.n_instructions)
                     if static.ins_line[s] == then_line and str(static.ins_opcode[s]) == "add"}
    assert sc.controls(then_block) == [br_if]
    ret = [s for s in range(static.n_instructions) if str(static.ins_opcode[s]) == "ret"
           and static.ins_func[s] == f]
    assert [sc.controls(blk[s]) for s in ret] == [[]]
    assert sc.controls(blocks[0]) == []
    # the return post-dominates everything; the outer header's immediate post-dominator
    # is the block it leaves the loop to, the return's block
    assert sc.ipdom[blk[h_out]] == blk[ret[0]] and sc.ipdom[blk[ret[0]]] == -1
    # the inner body's first block (it ends with the if) runs whenever the inner loop
    # goes on: controlled by the inner branch alone, as is the inner increment (the
    # block with the add of the @inner line)
    assert sc.controls(blk[br_if]) == [h_in]
    (inner_inc,) = {int(blk[s]) for s in range(static.n_instructions)
                    if static.ins_line[s] == marker_line(path, "@inner")
                    and str(static.ins_opcode[s]) == "add"}
    assert sc.controls(inner_inc) == [h_in]
    assert_static_matches_reference(static)


MOD3_C = """
int main(void) {
    int s = 0;
    for (int i = 0; i < 10; i++)           /* @for */
        if (i % 3 == 0)                    /* @if */
            s++;
    return s;
}
"""


def test_two_bit_predictor_counts_of_a_loop(tmp_path):
    """``for`` taken 10 times then left: a counter starting at weakly-taken is right 10
    times, wrong once. ``if (i % 3 == 0)`` goes T F F T F F T F F T; the counter
    (2 = weakly then) goes 2 -T-> 3 -F-> 2 (wrong) -F-> 1 (wrong) -T-> 2 (wrong)
    -F-> 1 (wrong) -F-> 0 -T-> 1 (wrong) -F-> 0 -F-> 0 -T-> 1 (wrong): 6 wrong, 4 right."""
    path = write_c(str(tmp_path), "mod3.c", MOD3_C)
    trace = trace_program(path, timing=False)
    static = trace.static
    flow = control_flow(trace)
    br_for = _conditional_branch_on(static, marker_line(path, "@for"))
    br_if = _conditional_branch_on(static, marker_line(path, "@if"))
    st = flow.state
    assert st[trace.dyn_sid == br_for].tolist() == [P] * 10 + [M]
    assert st[trace.dyn_sid == br_if].tolist() == [P, M, M, M, M, P, M, P, P, M]
    assert flow.branches == 21 and flow.mispredicted == 7
    assert np.count_nonzero(st) == np.count_nonzero(static_control(static).is_branch[trace.dyn_sid])
    assert_flow_matches_reference(trace)


FIB_C = """
int fib(int n) {
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

int main(void) {
    volatile int r = fib(7);
    return 0;
}
"""

#: switch (shared cases, fall-through, a case that returns), an early return, break out
#: of a for and of a while, continue.
SWITCH_C = """
static int classify(int v) {
    if (v < 0)
        return -1;
    switch (v % 5) {
    case 0:
        return 0;
    case 1:
    case 2:
        v += 3;
        break;
    case 3:
        v *= 2;
        /* fall through */
    default:
        v -= 1;
        break;
    }
    return v;
}

int main(void) {
    int s = 0;
    for (int i = -3; i < 14; i++) {
        if (i == 11)
            break;
        if (i == 4)
            continue;
        s += classify(i);
        while (s > 20) {
            s -= 7;
            if (s == 15)
                break;
        }
    }
    return s & 1;
}
"""

#: A recursive call followed, in the same block, by a branch (the case the callee's
#: branches must not hide the caller's).
WALK_C = """
int walk(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += walk(n - 1);
        if (i == 0)
            s++;
        else
            s += 2;
    }
    return s;
}

int main(void) {
    volatile int r = walk(4);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["-O0", "-O1"])
def c_traces(request, tmp_path_factory):
    """name -> trace of that C program, and the optimisation level (\"opt\")."""
    d = str(tmp_path_factory.mktemp("c"))
    out = {"opt": request.param}
    for name, code in (("fib", FIB_C), ("switch", SWITCH_C), ("walk", WALK_C)):
        path = write_c(d, name + ".c", code)
        out[name] = trace_program(path, timing=False, compile_options={"opt": request.param})
    return out


@pytest.mark.parametrize("name", ["fib", "switch", "walk"])
def test_dynamic_control_of_c_programs(c_traces, name):
    trace = c_traces[name]
    assert_static_matches_reference(trace.static)
    flow = assert_flow_matches_reference(trace)
    # an activation's first instruction (its entry block: controlled by nothing in its
    # function) depends on the branch its call depends on
    call = trace.act_call
    assert trace.dyn_act[0] == 0 and call[0] == -1 and flow.parent[0] == -1  # the root
    starts = np.unique(trace.dyn_act, return_index=True)[1]
    for a, i in enumerate(starts.tolist()):
        assert flow.parent[i] == (flow.parent[call[a]] if call[a] >= 0 else -1)
    if c_traces["opt"] == "-O0" and name != "switch":
        # the recursion as written: fib(7) has 41 activations, walk(4) 1 + 4 * (1 + 3 *
        # (1 + 2 * (1 + 1 * 1))) = 65
        f = trace.static.function_id(name)
        assert np.count_nonzero(np.asarray(trace.act_func) == f) == {"fib": 41, "walk": 65}[name]


# -- the models: a reference of the waits, the critical path and the control edges ----------
def reference_waits(parent, state, model):
    """Per node ``(primary, serial)`` branch nodes it waits for (-1 none), from the table
    of `ir_graph.control`: the primary wait is the controlling branch (cd, cd-mf), the
    nearest mispredicted one up the chain of controlling branches (sp-cd, sp-cd-mf), the
    latest mispredicted branch before it (sp) or the latest branch before it (base); the
    serial wait is a branch's wait for the (mispredicted, sp-cd) branch before it (cd,
    sp-cd), when that is not its primary wait already."""
    n = len(parent)
    primary, serial = [-1] * n, [-1] * n
    last_br = last_mis = -1
    for v in range(n):
        p = parent[v]
        if model in ("cd", "cd-mf"):
            primary[v] = p
        elif model in ("sp-cd", "sp-cd-mf"):
            while p >= 0 and state[p] != M:
                p = parent[p]
            primary[v] = p
        elif model == "sp":
            primary[v] = last_mis
        elif model == "base":
            primary[v] = last_br
        if state[v] != NOT_BRANCH:
            if model == "cd":
                serial[v] = last_br
            elif model == "sp-cd" and state[v] == M:
                serial[v] = last_mis
            if serial[v] == primary[v]:
                serial[v] = -1
            last_br = v
            if state[v] == M:
                last_mis = v
    return primary, serial


def reference_critical_path(g, primary, serial, latency):
    """Longest path of the data edges plus the waits, one node at a time."""
    into = [[] for _ in range(g.n)]
    for u, v, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()):
        into[v].append((u, w))
    dist = [0.0] * g.n
    for v in range(g.n):
        d = 0.0
        for u, w in into[v]:
            d = max(d, dist[u] + w)
        for r in (primary[v], serial[v]):
            if r >= 0:
                d = max(d, dist[r] + latency)
        dist[v] = d
    return max(dist, default=0.0)


def reference_control_edges(g, primary, serial):
    """The (src, dst) control edges: every serial wait, and every primary wait that no
    data predecessor waiting for the same branch implies."""
    implied = set()
    for u, v in zip(g.src.tolist(), g.dst.tolist()):
        if primary[v] >= 0 and primary[u] == primary[v]:
            implied.add(v)
    edges = [(primary[v], v) for v in range(g.n) if primary[v] >= 0 and v not in implied]
    return sorted(edges + [(serial[v], v) for v in range(g.n) if serial[v] >= 0])


def _edges(g, mask=None):
    """The edges of ``g`` (those of ``mask``) as an (m, 4) array of src, dst, weight,
    kind rows, sorted."""
    kind = g.edge_kind if g.edge_kind is not None else np.zeros(g.m, np.uint8)
    sel = slice(None) if mask is None else mask
    rows = np.stack([np.asarray(a[sel], np.float64) for a in (g.src, g.dst, g.weight, kind)],
                    axis=1)
    return rows[np.lexsort(rows.T[::-1])]


CHAINS = (("oracle", "sp-cd-mf", "sp-cd", "sp", "base"), ("sp-cd-mf", "cd-mf", "cd", "base"))


def check_models(g, flow, reference=True, latencies=(BRANCH_CYCLES, 3.5)):
    """Every model on graph ``g`` with control dependences ``flow``: the Lam-Wilson order,
    the merged graphs (`with_control`) against the critical path, the control edges; with
    ``reference``, the waits, critical paths and edges against the pure-Python ones.
    Returns {latency: {model: critical path}}."""
    assert flow.n == g.n
    oracle = longest_path(g.n, g.src, g.dst, np.asarray(g.weight, np.float64))[0]
    parent, state = flow.parent.tolist(), flow.state.tolist()
    data = _edges(g)
    out = {}
    for latency in latencies:
        cp = {m: critical_path(g, flow, m, latency) for m in CONTROL_MODELS}
        out[latency] = cp
        assert cp["oracle"] == oracle
        for chain in CHAINS:
            for a, b in itertools.pairwise(chain):
                assert cp[a] <= cp[b], (a, b, cp)
        for m in CONTROL_MODELS:
            h = with_control(g, flow, m, latency)
            ctrl = h.edge_kind == KIND_CTRL
            src, dst = control_edges(g, flow, m)
            assert h.meta["control"] == {
                "model": m, "branch_latency": latency, "branches": flow.branches,
                "mispredicted": flow.mispredicted, "control_edges": len(src)}
            assert h.n == g.n and h.m == g.m + len(src) == g.m + int(ctrl.sum())
            assert bool(np.all(np.diff(h.dst.astype(np.int64)) >= 0))
            assert bool(np.all(h.src[ctrl] < h.dst[ctrl]))
            assert bool(np.all(h.weight[ctrl] == latency))
            assert np.array_equal(h.src[ctrl], src) and np.array_equal(h.dst[ctrl], dst)
            assert np.array_equal(_edges(h, ~ctrl), data)  # the data edges, unchanged
            assert longest_path(h.n, h.src, h.dst, h.weight)[0] == cp[m]
            if m == "oracle":
                assert len(src) == 0 and h.m == g.m
                continue
            if m == "base":
                assert cp[m] <= float(np.sum(h.weight))  # a path weighs at most all edges
            if not reference:
                continue
            primary, serial = reference_waits(parent, state, m)
            req, ser = flow.requirements(m)
            assert req.tolist() == primary and ser.tolist() == serial, m
            assert sorted(zip(src.tolist(), dst.tolist())) == \
                reference_control_edges(g, primary, serial)
            assert cp[m] == reference_critical_path(g, primary, serial, latency), m
    return out


def test_critical_paths_of_an_if_else_by_hand(hand_traces):
    """IF_ELSE with x = 1: nodes icmp0, br1 (predicted), icmp2, br3 (mispredicted), br4,
    ret5; data edges 0 -> 1 and 2 -> 3 of one cycle; br1 controls 2, 3, 4. With latency L:
    base: 2 waits for 1, 3 for 1, 4 and 5 for 3: 1 + L + 1 + L = 2 + 2L. cd (and cd-mf):
    2, 3, 4 wait for 1: 2 + L. sp: 4, 5 wait for br3, which has 1 cycle: 1 + L. sp-cd-mf
    and sp-cd: the only mispredicted branch controls nothing: 1, as oracle."""
    assert KIND_CTRL == 128
    trace = hand_traces["if_else"]
    g = build_graph(trace)
    assert _edges(g).tolist() == [[0, 1, 1.0, 1], [2, 3, 1.0, 1]]
    flow = control_flow(trace)
    for latency in (1.0, 2.5, 0.0):
        cp = check_models(g, flow, latencies=(latency,))[latency]
        assert cp == {"oracle": 1.0, "sp-cd-mf": 1.0, "sp-cd": 1.0, "sp": 1.0 + latency,
                      "cd-mf": 2.0 + latency, "cd": 2.0 + latency, "base": 2.0 + 2 * latency}
    # cd: the waits of 2 and 4 are edges, 3's is implied by its data edge from 2
    assert sorted(zip(*(a.tolist() for a in control_edges(g, flow, "cd")))) == [(1, 2), (1, 4)]
    rows = model_table(g, flow, latency=2.5)
    assert [r["model"] for r in rows] == list(CONTROL_MODELS)
    assert [r["critical_path"] for r in rows] == [1.0, 1.0, 1.0, 3.5, 4.5, 4.5, 7.0]
    assert all(r["work"] == 2.0 for r in rows)
    assert [r["parallelism"] for r in rows] == [2.0 / r["critical_path"] for r in rows]
    # base: 1 -> 2, 3 -> 4, 3 -> 5 (1 -> 3 is implied by 2 -> 3); cd-mf as cd; sp: 3 -> 4, 5
    assert [r["control_edges"] for r in rows] == [0, 0, 0, 2, 2, 2, 3]


@pytest.mark.parametrize("name", sorted(HAND))
def test_models_of_hand_written_ir(hand_traces, name):
    trace = hand_traces[name]
    check_models(build_graph(trace), control_flow(trace))


def test_models_of_c_programs(c_traces):
    for name in ("fib", "switch", "walk"):
        trace = c_traces[name]
        g = build_graph(trace)
        flow = control_flow(trace, _included(trace.static)[trace.dyn_sid])
        check_models(g, flow)


# -- samples and random programs -------------------------------------------------------------
#: Samples with their compile options: strassen small (recursion on quadrants), the
#: recursive merge sort, open-addressing hash probes (loops left by break), at -O0 and
#: one at -O1.
SAMPLES = {
    "strassen-N2": ("strassen.c", {"defines": ["N=2"]}),
    "sort": ("sort.c", None),
    "hashtable": ("hashtable.c", None),
    "dijkstra-O1": ("dijkstra.c", {"opt": "-O1"}),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_against_the_reference(name):
    source, options = SAMPLES[name]
    trace = trace_program(os.path.join(ROOT, "samples", source), compile_options=options,
                          timing=False)
    assert not trace.truncated
    assert_static_matches_reference(trace.static)
    assert_flow_matches_reference(trace)
    g = build_graph(trace, control="sp-cd-mf")
    flow = g.control
    assert flow is not None and flow.n == g.n
    # the graph carries sp-cd-mf's control edges; the data graph alone is the oracle's
    data = build_graph(trace)
    assert g.m == data.m + len(control_edges(data, flow, "sp-cd-mf")[0])
    assert g.meta["control"]["model"] == "sp-cd-mf"
    cp = check_models(data, flow, reference=g.n < 5000, latencies=(BRANCH_CYCLES,))
    assert longest_path(g.n, g.src, g.dst, g.weight)[0] == cp[BRANCH_CYCLES]["sp-cd-mf"]
    # mispredictions are a part of the branches, and branches a part of the run
    assert 0 < flow.mispredicted < flow.branches < g.n


def random_program(seed):
    """A small random C program over unsigned ints (so no undefined behaviour): nested
    if/else, for and do-while loops with break and continue, switch with shared cases
    and fall-through, early returns, calls of earlier functions and a bounded recursion
    (every loop has a constant bound, the recursion a decreasing depth)."""
    rng = random.Random(seed)
    counter = [0]

    def fresh():
        counter[0] += 1
        return f"i{counter[0]}"

    def expr(vs, depth=0):
        r = rng.random()
        if depth > 1 or r < 0.35:
            return rng.choice(vs + [f"{rng.randint(0, 9)}u"])
        if r < 0.5:
            return f"g[({expr(vs, depth + 1)}) & 7u]"
        op = rng.choice(["+", "-", "*", "^", "&", "|"])
        return f"({expr(vs, depth + 1)} {op} {expr(vs, depth + 1)})"

    def cond(vs):
        if rng.random() < 0.4:
            return f"({expr(vs)}) % {rng.randint(2, 4)}u == {rng.randint(0, 1)}u"
        return f"{expr(vs)} {rng.choice(['<', '>', '==', '!=', '<=', '>='])} {expr(vs)}"

    def stmts(ctx, vs, depth, in_loop, ind):
        return [s for _ in range(rng.randint(1, 2)) for s in stmt(ctx, vs, depth, in_loop, ind)]

    def stmt(ctx, vs, depth, in_loop, ind):
        p = "    " * ind
        kinds = ["assign", "assign", "store"]
        if depth < 2:
            kinds += ["if", "ifelse", "for", "switch", "do"]
        if ctx["calls"] > 0:
            kinds += ["call", "call"]
        if in_loop:
            kinds += ["break", "continue"]
        if ind > 1:
            kinds += ["return"]
        k = rng.choice(kinds)
        target = rng.choice(["x", "y"])
        if k == "assign":
            return [f"{p}{target} {rng.choice(['=', '+=', '^='])} {expr(vs)};"]
        if k == "store":
            return [f"{p}g[({expr(vs)}) & 7u] = {expr(vs)};"]
        if k == "call":
            ctx["calls"] -= 1
            f = rng.choice(ctx["callees"])
            first = "n - 1u" if ctx["name"] == "rec" else \
                f"{rng.randint(1, 2)}u" if f == "rec" else expr(vs)
            return [f"{p}{target} += {f}({first}, {expr(vs)});"]
        if k in ("break", "continue"):
            return [f"{p}if ({cond(vs)}) {k};"]
        if k == "return":
            return [f"{p}if ({cond(vs)}) return {expr(vs)};"]
        if k in ("if", "ifelse"):
            out = [f"{p}if ({cond(vs)}) {{"] + stmts(ctx, vs, depth + 1, in_loop, ind + 1)
            if k == "ifelse":
                out += [f"{p}}} else {{"] + stmts(ctx, vs, depth + 1, in_loop, ind + 1)
            return out + [f"{p}}}"]
        if k == "for":
            i = fresh()
            return [f"{p}for (unsigned {i} = 0; {i} < {rng.randint(1, 4)}u; {i}++) {{"] \
                + stmts(ctx, vs + [i], depth + 1, True, ind + 1) + [f"{p}}}"]
        if k == "do":
            i = fresh()
            return [f"{p}{{", f"{p}    unsigned {i} = 0;", f"{p}    do {{"] \
                + stmts(ctx, vs + [i], depth + 1, True, ind + 2) \
                + [f"{p}    }} while (++{i} < {rng.randint(1, 3)}u);", f"{p}}}"]
        out = [f"{p}switch (({expr(vs)}) % 5u) {{"]
        for case in ("case 0:", "case 1: case 2:", "case 3:", "default:"):
            out.append(f"{p}{case} ;")
            if rng.random() < 0.8:
                out += [f"{p}{{"] + stmts(ctx, vs, depth + 1, in_loop, ind + 1) + [f"{p}}}"]
            if rng.random() < 0.7:
                out.append(f"{p}    break;")
        return out + [f"{p}}}"]

    def function(name, params, callees, prologue=()):
        ctx = {"name": name, "callees": callees, "calls": 2}
        vs = list(params) + ["x", "y"]
        body = [f"unsigned {name}({', '.join('unsigned ' + v for v in params)}) {{",
                f"    unsigned x = {rng.randint(0, 9)}u, y = {params[-1]};"]
        body += list(prologue) + stmts(ctx, vs, 0, False, 1) + stmts(ctx, vs, 0, False, 1)
        return body + ["    return x ^ y;", "}", ""]

    out = ["unsigned g[8];", ""]
    out += function("rec", ["n", "a"], ["rec"], ["    if (n == 0u) return a;"])
    callees = ["rec"]
    n_funcs = rng.randint(1, 3)
    for k in range(n_funcs):
        out += function(f"f{k}", ["a", "b"], list(callees))
        callees.append(f"f{k}")
    out += ["int main(void) {", "    unsigned x = 1u, y = 2u;"]
    out += [f"    x += f{k}({rng.randint(0, 9)}u, y);" for k in range(n_funcs)]
    out += [f"    y += rec({rng.randint(1, 3)}u, x);", "    return (int)((x ^ y) & 1u);", "}", ""]
    return "\n".join(out)


@pytest.mark.parametrize("seed", range(12))
def test_random_programs(seed, tmp_path):
    """Static and dynamic control dependences against the reference, and every model's
    invariants, on a random program (even seeds at -O0, odd ones at -O1)."""
    path = tmp_path / f"r{seed}.c"
    path.write_text(random_program(seed))
    trace = trace_program(str(path), timing=False,
                          compile_options={"opt": "-O1" if seed % 2 else "-O0"},
                          limits=RunLimits(max_instructions=60_000))
    assert_static_matches_reference(trace.static)
    assert_flow_matches_reference(trace)
    g = build_graph(trace)
    check_models(g, control_flow(trace, _included(trace.static)[trace.dyn_sid]),
                 reference=g.n <= 20_000)


# -- windows ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def strassen2():
    """Trace of samples/strassen.c with N = 2 (about 2,000 instructions)."""
    return trace_program(os.path.join(ROOT, "samples", "strassen.c"),
                         compile_options={"defines": ["N=2"]}, timing=False)


def test_windows_keep_control_consistent(strassen2):
    trace = strassen2
    data = build_graph(trace)
    flow = control_flow(trace)
    parent, state = flow.parent.tolist(), flow.state.tolist()
    n = data.n
    merged = {m: build_graph(trace, control=m) for m in CONTROL_MODELS}
    for start, end in ((0, n), (0, 1), (37, 700), (n // 2, n), (n - 1, n)):
        w = flow.window(start, end)
        assert w.n == end - start
        # a parent before the window is resolved before it: no wait
        assert w.parent.tolist() == [p - start if p >= start else -1
                                     for p in parent[start:end]]
        assert w.state.tolist() == state[start:end]
        dw = data.window(start, end)
        for m, g in merged.items():
            gw = g.window(start, end)
            assert gw.control.parent.tolist() == w.parent.tolist()
            assert gw.control.state.tolist() == w.state.tolist()
            # the window of the merged graph is the window's own merged graph: every wait
            # inside it is kept, every one on a branch before it is gone
            hw = with_control(dw, w, m)
            assert np.array_equal(_edges(gw), _edges(hw)), (m, start, end)
            assert critical_path(dw, w, m) == longest_path(gw.n, gw.src, gw.dst, gw.weight)[0]
        if end - start > 1:
            check_models(dw, w, latencies=(BRANCH_CYCLES,))
    assert flow.window(0, n).parent.tolist() == parent


# -- bad inputs ------------------------------------------------------------------------------
def test_unknown_control_model_is_an_input_error(strassen2):
    with pytest.raises(InputError) as err:
        build_graph(strassen2, control="bogus")
    msg = str(err.value)
    assert "'bogus'" in msg and all(m in msg for m in CONTROL_MODELS)
    g = build_graph(strassen2)
    flow = control_flow(strassen2)
    for call in (lambda: with_control(g, flow, "sp-mf"), lambda: critical_path(g, flow, "CD"),
                 lambda: flow.requirements("none"), lambda: control_edges(g, flow, "")):
        with pytest.raises(InputError, match="unknown control model"):
            call()


@pytest.mark.parametrize("latency", [-1, -0.5, math.nan, math.inf, -math.inf, "fast", [1.0],
                                     object()])
def test_bad_branch_latency_is_an_input_error(strassen2, latency):
    with pytest.raises(InputError, match="branch latency"):
        build_graph(strassen2, control="cd", branch_latency=latency)
    g = build_graph(strassen2)
    flow = control_flow(strassen2)
    with pytest.raises(InputError, match="branch latency"):
        critical_path(g, flow, "cd", latency)
    with pytest.raises(InputError, match="branch latency"):
        with_control(g, flow, "base", latency)


def test_branch_latency_default_and_zero(strassen2):
    g = build_graph(strassen2, control="cd")
    assert g.meta["control"]["branch_latency"] == BRANCH_CYCLES == 1.0
    h = build_graph(strassen2, control="cd", branch_latency=0)
    ctrl = h.edge_kind == KIND_CTRL
    assert h.meta["control"]["branch_latency"] == 0.0 and ctrl.any()
    assert bool(np.all(h.weight[ctrl] == 0.0))
    # a wait still starts a node no earlier than its branch (latency 0 is not the oracle);
    # every model's critical path grows with the latency
    data = build_graph(strassen2)
    flow = control_flow(strassen2)
    cp = check_models(data, flow, latencies=(0.0, 1.0, 3.5))
    for m in CONTROL_MODELS:
        assert cp[0.0][m] <= cp[1.0][m] <= cp[3.5][m]
    assert cp[0.0]["base"] > cp[0.0]["oracle"]


def test_model_table_checks_once_and_asks_each_model_once(strassen2, monkeypatch):
    # the table's rows are each model's critical_path and control_edges, its flow
    # validated once and each model's waits made once (md, 3.8 M nodes: 0.61 -> 0.31 s)
    g = build_graph(strassen2)
    flow = control_flow(strassen2)
    calls = {"validate": 0, "requirements": []}
    validate, requirements = ControlFlow.validate, ControlFlow._requirements

    def counted_validate(self):
        calls["validate"] += 1
        return validate(self)

    def counted_requirements(self, model):
        calls["requirements"].append(model)
        return requirements(self, model)

    monkeypatch.setattr(ControlFlow, "validate", counted_validate)
    monkeypatch.setattr(ControlFlow, "_requirements", counted_requirements)
    rows = model_table(g, flow, latency=2.0)
    assert calls == {"validate": 1, "requirements": list(CONTROL_MODELS)}
    monkeypatch.undo()
    for row in rows:
        m = row["model"]
        assert row["critical_path"] == critical_path(g, flow, m, 2.0)
        assert row["control_edges"] == len(control_edges(g, flow, m)[0])
    # the oracle alone reads no waits: nothing to validate (as critical_path)
    bad = ControlFlow(parent=np.full(g.n, 5, np.int64), state=np.zeros(g.n, np.uint8))
    assert model_table(g, bad, models=["oracle"])[0]["critical_path"] == \
        critical_path(g, bad, "oracle")
    with pytest.raises(InputError, match="a parent is not -1 or an earlier node"):
        model_table(g, bad, models=["oracle", "cd"])
    with pytest.raises(InputError, match="unknown control model"):
        model_table(g, flow, models=["cd", "CD"])
    with pytest.raises(InputError, match="branch latency"):
        model_table(g, flow, latency=-1.0)


def test_control_of_another_graph_is_an_input_error(strassen2):
    g = build_graph(strassen2)
    flow = control_flow(strassen2)
    short = flow.window(0, g.n - 1)
    for m in ("cd", "base"):
        with pytest.raises(InputError, match=f"{g.n - 1:,} nodes, the graph has {g.n:,}"):
            control_edges(g, short, m)
        with pytest.raises(InputError, match="the graph has"):
            with_control(g, short, m)
    longer = ControlFlow(parent=np.full(g.n + 1, -1, np.int32), state=np.zeros(g.n + 1, np.uint8))
    with pytest.raises(InputError, match="the graph has"):
        control_edges(g, longer, "sp")
