"""LLVM IR of the tracing runtime appended to every instrumented module.

Events go to one of two buffers in memory shared with the tracer
(``@__vcut_buf``, ``@__vcut_cap`` words each; the other is ``@__vcut_buf2``).
When an event does not fit, ``@__vcut_flush`` ends the buffer as a *chunk*:
it fills the `CHUNK_HEADER_WORDS` header in the four words before the buffer
(``key, sequence number, payload words, final flag``), sends a 16-byte token
``key, sequence number`` down the event pipe ``@__vcut_fd`` with the libc
``write`` whose address the runner stores in ``@__vcut_write_fn`` (function
pointers avoid clashing with a program that declares ``write`` itself), waits
for the tracer's acknowledgement of the *previous* chunk on ``@__vcut_ackfd``
(it used the other buffer), and swaps buffers. So the program fills one
buffer while the tracer copies the other to disk, and no event is copied
through a pipe.

The key is a random number the tracer chose for this run, so bytes the
program writes into the pipe cannot pass for a token; the sequence number
makes a dropped or repeated chunk visible. Every event is followed by a zero
word (each buffer has one word to spare), each new buffer starts with one,
and shared word 3 holds the number of the chunk the current buffer is
filling, so that when the program leaves without the runtime's help
(``_exit``, a direct ``exit_group`` system call) the tracer still recovers the
events not yet sent: those before the first zero header.

The event writers are ``alwaysinline``; the runner inlines them with LLVM's
always-inliner, so an event costs a few stores and one predictable branch.

``@__vcut_on`` is the region-of-interest depth: events are written only while
it is positive (1 when the whole program is traced). ``@__vcut_icount``
counts traced instructions block by block; past ``@__vcut_budget`` the
runtime writes END(budget), flushes and leaves with `EXIT_STOPPED`.
"""

from .events import (
    END_BUDGET,
    EV_END,
    EXIT_STOPPED,
    EXIT_WRITE_FAILED,
)

__all__ = ["runtime_ir", "RUNTIME_GLOBALS", "CHUNK_HEADER_WORDS"]

#: Words of a chunk header: key, sequence number, payload words, final flag.
CHUNK_HEADER_WORDS = 4

#: Globals the runner sets before running the program.
RUNTIME_GLOBALS = (
    "__vcut_buf",
    "__vcut_cap",
    "__vcut_fd",
    "__vcut_budget",
    "__vcut_on",
    "__vcut_write_fn",
    "__vcut_exit_fn",
    "__vcut_strlen_fn",
    "__vcut_key",
    "__vcut_shm",
    "__vcut_buf2",
    "__vcut_ackfd",
    "__vcut_read_fn",
    "__vcut_end_reason",
)


def _put(n):
    args = ", ".join(f"i64 %a{k}" for k in range(n))
    body = []
    for k in range(n):
        body.append(f"  %i{k} = add i64 %p0, {k}")
        body.append(f"  %s{k} = getelementptr i64, ptr %buf, i64 %i{k}")
        body.append(f"  store i64 %a{k}, ptr %s{k}, align 8")
    return f"""
define internal void @__vcut_put{n}({args}) alwaysinline nounwind {{
entry:
  %pos = load i64, ptr @__vcut_pos, align 8
  %cap = load i64, ptr @__vcut_cap, align 8
  %end = add i64 %pos, {n}
  %full = icmp ugt i64 %end, %cap
  br i1 %full, label %flush, label %write
flush:
  call void @__vcut_flush()
  br label %write
write:
  %p0 = phi i64 [ %pos, %entry ], [ 0, %flush ]
  %buf = load ptr, ptr @__vcut_buf, align 8
{chr(10).join(body)}
  %np = add i64 %p0, {n}
  %sentinel = getelementptr i64, ptr %buf, i64 %np
  store i64 0, ptr %sentinel, align 8
  store i64 %np, ptr @__vcut_pos, align 8
  ret void
}}
"""


def _guarded(name, params, body):
    """An event writer that does nothing outside the region of interest."""
    return f"""
define internal void @{name}({params}) alwaysinline nounwind {{
entry:
  %on = load i64, ptr @__vcut_on, align 8
  %active = icmp sgt i64 %on, 0
  br i1 %active, label %go, label %skip
go:
{body}
  ret void
skip:
  ret void
}}
"""


# dt = t1 - t0 saturated at MAX_CYCLES, shifted into the header's aux field
_PACK = """  %dt = sub i64 %t1, %t0
  %dtbig = icmp ugt i64 %dt, 16777215
  %dtc = select i1 %dtbig, i64 16777215, i64 %dt
  %aux = shl i64 %dtc, 8"""


def _transfer(p, fn, fd, buf, nbytes, came_from, done):
    """IR blocks ``{p}loop``, ``{p}body``, ``{p}cont`` moving ``nbytes`` bytes of global ``buf``
    through the libc ``write`` / ``read`` at ``fn`` on the descriptor in global ``fd`` until all
    have gone (then to ``done``); a call that moves nothing goes to ``%fail``."""
    return f"""{p}loop:
  %{p}off = phi i64 [ 0, %{came_from} ], [ %{p}off2, %{p}cont ]
  %{p}more = icmp slt i64 %{p}off, {nbytes}
  br i1 %{p}more, label %{p}body, label %{done}
{p}body:
  %{p}fn = load ptr, ptr @{fn}, align 8
  %{p}fd = load i32, ptr @{fd}, align 4
  %{p}p = getelementptr i8, ptr @{buf}, i64 %{p}off
  %{p}rem = sub i64 {nbytes}, %{p}off
  %{p}n = call i64 %{p}fn(i32 %{p}fd, ptr %{p}p, i64 %{p}rem)
  %{p}bad = icmp sle i64 %{p}n, 0
  br i1 %{p}bad, label %fail, label %{p}cont
{p}cont:
  %{p}off2 = add i64 %{p}off, %{p}n
  br label %{p}loop"""


def runtime_ir(declare_cycle_counter=True):
    """Text of the runtime: globals, buffer management and event writers.

    Parameters
    ----------
    declare_cycle_counter : bool
        Whether to declare ``llvm.readcyclecounter`` (False when the program
        already declares it).
    """
    parts = [
        """
; ---- vcut tracing runtime ----
@__vcut_buf = global ptr null, align 8
@__vcut_pos = global i64 0, align 8
@__vcut_cap = global i64 0, align 8
@__vcut_fd = global i32 -1, align 4
@__vcut_icount = global i64 0, align 8
@__vcut_budget = global i64 9223372036854775807, align 8
@__vcut_on = global i64 1, align 8
@__vcut_done = global i32 0, align 4
@__vcut_total = global i64 0, align 8
@__vcut_write_fn = global ptr null, align 8
@__vcut_exit_fn = global ptr null, align 8
@__vcut_strlen_fn = global ptr null, align 8
@__vcut_key = global i64 0, align 8
@__vcut_seq = global i64 0, align 8
@__vcut_final = global i64 0, align 8
@__vcut_shm = global ptr null, align 8
@__vcut_buf2 = global ptr null, align 8
@__vcut_ackfd = global i32 -1, align 4
@__vcut_read_fn = global ptr null, align 8
@__vcut_token = global [2 x i64] zeroinitializer, align 8
@__vcut_ack = global i64 0, align 8
@__vcut_end_reason = global i64 1, align 8
""",
        f"""
define void @__vcut_flush() noinline nounwind {{
entry:
  %pos = load i64, ptr @__vcut_pos, align 8
  %buf = load ptr, ptr @__vcut_buf, align 8
  %hdr = getelementptr i64, ptr %buf, i64 -4
  %key = load i64, ptr @__vcut_key, align 8
  %seq = load i64, ptr @__vcut_seq, align 8
  %fin = load i64, ptr @__vcut_final, align 8
  store i64 %key, ptr %hdr, align 8
  %h1 = getelementptr i64, ptr %buf, i64 -3
  store i64 %seq, ptr %h1, align 8
  %h2 = getelementptr i64, ptr %buf, i64 -2
  store i64 %pos, ptr %h2, align 8
  %h3 = getelementptr i64, ptr %buf, i64 -1
  store i64 %fin, ptr %h3, align 8
  store i64 %key, ptr @__vcut_token, align 8
  %tok1 = getelementptr i64, ptr @__vcut_token, i64 1
  store i64 %seq, ptr %tok1, align 8
  br label %wloop
{_transfer("w", "__vcut_write_fn", "__vcut_fd", "__vcut_token", 16, "entry", "sent")}
sent:
  ; the other buffer held the chunk before this one: wait until the tracer has copied it
  %has_prev = icmp ugt i64 %seq, 0
  br i1 %has_prev, label %rloop, label %swap
{_transfer("r", "__vcut_read_fn", "__vcut_ackfd", "__vcut_ack", 8, "sent", "swap")}
fail:
  %efn = load ptr, ptr @__vcut_exit_fn, align 8
  call void %efn(i32 {EXIT_WRITE_FAILED})
  unreachable
swap:
  %other = load ptr, ptr @__vcut_buf2, align 8
  store i64 0, ptr %other, align 8
  store ptr %buf, ptr @__vcut_buf2, align 8
  store ptr %other, ptr @__vcut_buf, align 8
  %seq2 = add i64 %seq, 1
  store i64 %seq2, ptr @__vcut_seq, align 8
  %shm = load ptr, ptr @__vcut_shm, align 8
  %cur = getelementptr i64, ptr %shm, i64 3
  store volatile i64 %seq2, ptr %cur, align 8
  store i64 0, ptr @__vcut_pos, align 8
  %t = load i64, ptr @__vcut_total, align 8
  %t2 = add i64 %t, %pos
  store i64 %t2, ptr @__vcut_total, align 8
  ret void
}}

define void @__vcut_finish(i64 %reason) noinline nounwind {{
entry:
  %d = load i32, ptr @__vcut_done, align 4
  %already = icmp ne i32 %d, 0
  br i1 %already, label %out, label %go
go:
  store i32 1, ptr @__vcut_done, align 4
  %sh = shl i64 %reason, 32
  %hdr = or i64 %sh, {EV_END}
  call void @__vcut_put1(i64 %hdr)
  store i64 1, ptr @__vcut_final, align 8
  call void @__vcut_flush()
  br label %out
out:
  ret void
}}

define void @__vcut_atexit() noinline nounwind {{
entry:
  %reason = load i64, ptr @__vcut_end_reason, align 8
  call void @__vcut_finish(i64 %reason)
  ret void
}}

define internal void @__vcut_stop(i64 %reason) noinline nounwind {{
entry:
  call void @__vcut_finish(i64 %reason)
  %efn = load ptr, ptr @__vcut_exit_fn, align 8
  call void %efn(i32 {EXIT_STOPPED})
  unreachable
}}

define internal void @__vcut_blk(i64 %hdr, i64 %n) alwaysinline nounwind {{
entry:
  %on = load i64, ptr @__vcut_on, align 8
  %active = icmp sgt i64 %on, 0
  br i1 %active, label %go, label %skip
go:
  %ic = load i64, ptr @__vcut_icount, align 8
  %ic2 = add i64 %ic, %n
  store i64 %ic2, ptr @__vcut_icount, align 8
  %b = load i64, ptr @__vcut_budget, align 8
  %over = icmp sgt i64 %ic2, %b
  br i1 %over, label %stop, label %put
stop:
  call void @__vcut_stop(i64 {END_BUDGET})
  unreachable
put:
  call void @__vcut_put1(i64 %hdr)
  ret void
skip:
  ret void
}}

define internal void @__vcut_heap(i64 %hdr, i64 %addr, i64 %size) alwaysinline nounwind {{
entry:
  %on = load i64, ptr @__vcut_on, align 8
  %active = icmp sgt i64 %on, 0
  br i1 %active, label %go, label %skip
go:
  %null = icmp eq i64 %addr, 0
  %some = icmp ugt i64 %size, 0
  %failed = and i1 %null, %some
  br i1 %failed, label %fail, label %put
fail:
  ; the program sees NULL and may cope with it: count the failure (shared word 2, for the
  ; tracer's messages) and record an empty object, as for malloc(0)
  %shm = load ptr, ptr @__vcut_shm, align 8
  %cnt = getelementptr i64, ptr %shm, i64 2
  %c0 = load volatile i64, ptr %cnt, align 8
  %c1 = add i64 %c0, 1
  store volatile i64 %c1, ptr %cnt, align 8
  call void @__vcut_put3(i64 %hdr, i64 0, i64 0)
  ret void
put:
  call void @__vcut_put3(i64 %hdr, i64 %addr, i64 %size)
  ret void
skip:
  ret void
}}

define internal void @__vcut_strdup(i64 %hdr, ptr %s) alwaysinline nounwind {{
entry:
  %null = icmp eq ptr %s, null
  br i1 %null, label %out, label %go
go:
  %fn = load ptr, ptr @__vcut_strlen_fn, align 8
  %len = call i64 %fn(ptr %s)
  %size = add i64 %len, 1
  %addr = ptrtoint ptr %s to i64
  call void @__vcut_heap(i64 %hdr, i64 %addr, i64 %size)
  br label %out
out:
  ret void
}}

define internal void @__vcut_roi_enter() alwaysinline nounwind {{
entry:
  %on = load i64, ptr @__vcut_on, align 8
  %on2 = add i64 %on, 1
  store i64 %on2, ptr @__vcut_on, align 8
  ret void
}}

define internal void @__vcut_roi_exit() alwaysinline nounwind {{
entry:
  %on = load i64, ptr @__vcut_on, align 8
  %on2 = sub i64 %on, 1
  store i64 %on2, ptr @__vcut_on, align 8
  ret void
}}
""",
        _put(1),
        _put(2),
        _put(3),
        _guarded("__vcut_ev1", "i64 %hdr", "  call void @__vcut_put1(i64 %hdr)"),
        _guarded("__vcut_ev2", "i64 %hdr, i64 %a", "  call void @__vcut_put2(i64 %hdr, i64 %a)"),
        _guarded(
            "__vcut_ev3",
            "i64 %hdr, i64 %a, i64 %b",
            "  call void @__vcut_put3(i64 %hdr, i64 %a, i64 %b)",
        ),
        _guarded(
            "__vcut_mem",
            "i64 %hdr, i64 %addr, i64 %t0, i64 %t1",
            _PACK + "\n  %h = or i64 %hdr, %aux"
            + "\n  call void @__vcut_put2(i64 %h, i64 %addr)",
        ),
        _guarded(
            "__vcut_mem2",
            "i64 %hr, i64 %hw, i64 %addr, i64 %t0, i64 %t1",
            _PACK + "\n  %h1 = or i64 %hr, %aux\n  %h2 = or i64 %hw, %aux"
            + "\n  call void @__vcut_put2(i64 %h1, i64 %addr)"
            + "\n  call void @__vcut_put2(i64 %h2, i64 %addr)",
        ),
        _guarded(
            "__vcut_memn",
            "i64 %hdr, i64 %addr, i64 %size, i64 %t0, i64 %t1",
            _PACK + "\n  %h = or i64 %hdr, %aux"
            + "\n  call void @__vcut_put3(i64 %h, i64 %addr, i64 %size)",
        ),
        _guarded(
            "__vcut_copy",
            "i64 %hr, i64 %src, i64 %hw, i64 %dst, i64 %size, i64 %t0, i64 %t1",
            _PACK + "\n  %h1 = or i64 %hr, %aux\n  %h2 = or i64 %hw, %aux"
            + "\n  call void @__vcut_put3(i64 %h1, i64 %src, i64 %size)"
            + "\n  call void @__vcut_put3(i64 %h2, i64 %dst, i64 %size)",
        ),
    ]
    if declare_cycle_counter:
        parts.append("\ndeclare i64 @llvm.readcyclecounter()\n")
    return "".join(parts)
