"""Hostile and careless programs under the sandbox: each contained, the host unchanged.

Every program here tries something a traced program must not do (start a
process, open a socket, write outside its directory, read our environment,
forge or cut the event channel, outlive vcut). The tests check the program's
own view (what its calls returned), the host's (a marker file never
appears, no process is left), and vcut's answer (exit code and message).
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from frontend import trace_program

from vcut_base import errors
from frontend.events import END_REASONS, END_RECOVERED
from frontend.run import RunLimits
from vcut.cli import main

LIMITS = RunLimits(timeout=30)


def _write(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return str(path)


def _level_available(tmp_path, level):
    src = _write(tmp_path, "probe.c", "int main(void) { return 0; }\n")
    try:
        trace_program(src, limits=LIMITS, sandbox=level)
    except errors.SandboxUnavailable:
        return False
    return True


@pytest.fixture(scope="module")
def levels(tmp_path_factory):
    """The confining levels this machine grants (namespaces and seccomp where it can)."""
    tmp = tmp_path_factory.mktemp("levels")
    return [lv for lv in ("namespaces", "seccomp") if _level_available(tmp, lv)]


def _need(levels, level):
    if level not in levels:
        pytest.skip(f"the {level} sandbox is not available on this machine")


def _child_processes(owner=None):
    """Live processes running the tracing child of the vcut process ``owner`` (default:
    this one). Its scratch directory, on the child's command line, is named after the
    owner's pid (`vcut_base.scratch.scratch_dir`), which a child keeps when it is reparented;
    pytest runs on two workers, and the other worker's tracing children are not ours."""
    mark = f"vcut-run-{os.getpid() if owner is None else owner:07d}-".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if b"frontend/_child.py" in cmd and mark in cmd and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _no_child_processes_soon(seconds=10.0):
    """True once no tracing child is left (a finished run's helpers may still be waiting for
    the kernel to tear its namespaces down; they die with it, never later)."""
    deadline = time.monotonic() + seconds
    while _child_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    return _child_processes() == []


def _output_lines(trace):
    return dict(line.split("=", 1) for line in trace.meta["stdout"].splitlines() if "=" in line)


HOSTILE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

typedef int (*forker)(void);

int main(void) {
  printf("system=%d\n", system("touch MARKER.system"));
  long child = syscall(SYS_fork);
  if (child == 0) { FILE *f = fopen("MARKER.forked", "w"); if (f) fclose(f); _exit(0); }
  printf("sysfork=%ld\n", child);
  forker fp = fork;
  pid_t c2 = fp();
  if (c2 == 0) _exit(0);
  printf("ptrfork=%d\n", (int)c2);
  printf("setsid=%d\n", (int)setsid());
  int tcp = socket(AF_INET, SOCK_STREAM, 0);
  printf("tcp=%d\n", tcp);
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  printf("udp=%d\n", udp);
  FILE *out = fopen("MARKER.outside", "w");
  printf("outside=%s\n", out ? "opened" : "refused");
  if (out) { fputs("x", out); fclose(out); }
  FILE *here = fopen("written.txt", "w");
  if (here) { fputs("result", here); fclose(here); }
  const char *secret = getenv("VCUT_TEST_SECRET");
  printf("secret=%s\n", secret ? secret : "(none)");
  const char *given = getenv("GIVEN");
  printf("given=%s\n", given ? given : "(none)");
  printf("killall=%d\n", kill(-1, 0));
  printf("killinit=%d\n", kill(1, 0));
  return 0;
}
"""


def _hostile(tmp_path, marker_dir):
    return _write(tmp_path, "hostile.c", HOSTILE.replace("MARKER", str(marker_dir / "marker")))


@pytest.mark.parametrize("level", ["namespaces", "seccomp"])
def test_processes_sockets_signals_and_environment_are_refused(tmp_path, levels, level,
                                                               monkeypatch):
    _need(levels, level)
    monkeypatch.setenv("VCUT_TEST_SECRET", "hunter2")
    markers = tmp_path / "host"
    markers.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    src = _hostile(tmp_path, markers)
    t = trace_program(src, cwd=str(work), limits=LIMITS, sandbox=level, env=["GIVEN=yes"])
    seen = _output_lines(t)
    assert t.meta["sandbox"] == level
    assert seen["system"] != "0"  # the shell never started
    assert seen["sysfork"] == "-1" and seen["ptrfork"] == "-1"
    assert seen["tcp"] == "-1" and seen["udp"] == "-1"
    assert seen["secret"] == "(none)" and seen["given"] == "yes"
    assert seen["killall"] == "-1" and seen["killinit"] == "-1"
    assert not (markers / "marker.system").exists()
    assert not (markers / "marker.forked").exists()
    assert t.exit_code == 0 and t.meta["end_reason"] == "main returned"
    assert _no_child_processes_soon()
    if level == "namespaces":
        # the rest of the file system is read-only or invisible, the working directory private
        assert not (markers / "marker.outside").exists()
        assert not (work / "written.txt").exists()
        assert t.meta["written_files"] == [["written.txt", 6]]
    else:
        # seccomp alone cannot confine the file system: documented, and visible here
        assert seen["outside"] == "opened"


def test_namespace_level_hides_home_and_keeps_files_on_request(tmp_path, levels):
    _need(levels, "namespaces")
    work = tmp_path / "work"
    work.mkdir()
    (work / "input.txt").write_text("42\n")
    keep = tmp_path / "kept"
    keep.mkdir()
    src = _write(tmp_path, "io.c", r"""
        #include <stdio.h>
        int main(void) {
          int x = 0;
          FILE *in = fopen("input.txt", "r");
          if (!in || fscanf(in, "%d", &x) != 1) return 1;
          fclose(in);
          printf("removed=%d\n", remove("input.txt"));  /* deletes only in the overlay */
          FILE *out = fopen("out/result.txt", "w");
          if (!out) { FILE *o2 = fopen("result.txt", "w"); fprintf(o2, "%d\n", 2 * x); fclose(o2); }
          printf("home=%s\n", fopen("/root/.profile", "r") || fopen("/home", "r") ? "seen" : "hidden");
          printf("tmp=%s\n", fopen("/tmp/scratch", "w") ? "private" : "refused");
          return 0;
        }
    """)
    t = trace_program(src, cwd=str(work), limits=LIMITS, sandbox="namespaces",
                      keep_files=str(keep))
    assert t.exit_code == 0
    seen = _output_lines(t)
    assert seen["home"] == "hidden" and seen["tmp"] == "private"
    assert seen["removed"] == "0"
    assert (work / "input.txt").read_text() == "42\n"
    assert (keep / "result.txt").read_text() == "84\n"
    assert not (work / "result.txt").exists()
    assert sorted(os.listdir(work)) == ["input.txt"]


def test_forged_event_chunks_are_detected(tmp_path, capsys):
    src = _write(tmp_path, "forge.c", r"""
        #include <stdint.h>
        #include <unistd.h>
        int main(void) {
          uint64_t end_event[4] = {7, 0, 0, 1};
          for (int fd = 3; fd < 1024; fd++) write(fd, end_event, sizeof end_event);
          return 0;
        }
    """)
    out = tmp_path / "t.npz"
    code = main(["trace", src, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == errors.ProgramError.exit_code == 7
    assert "the program wrote into vcut's event channel (file descriptor" in err
    assert "the trace cannot be trusted" in err
    assert not out.exists()


def test_closing_the_event_channel_is_named(tmp_path, capsys):
    src = _write(tmp_path, "closer.c", r"""
        #include <unistd.h>
        #include <stdio.h>
        int main(void) {
          for (int fd = 3; fd < 1024; fd++) close(fd);
          volatile long s = 0;
          for (long i = 0; i < 400000; i++) s += i;   /* fills the buffer: a flush must fail */
          printf("%ld\n", (long)s);
          return 0;
        }
    """)
    out = tmp_path / "t.npz"
    code = main(["trace", src, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 7
    assert "the program closed or replaced vcut's event channel (file descriptor" in err
    assert not out.exists()


@pytest.mark.parametrize("how", ["_exit", "segv-handler", "exit_group"])
def test_leaving_without_exit_handlers_keeps_the_events(tmp_path, how):
    body = {
        "_exit": "_exit(5);",
        "segv-handler": "signal(SIGSEGV, on_segv); *(volatile int *)0 = 1;",
        "exit_group": "syscall(SYS_exit_group, 5);",
    }[how]
    src = _write(tmp_path, "leave.c", r"""
        #include <signal.h>
        #include <stdio.h>
        #include <unistd.h>
        #include <sys/syscall.h>
        static void on_segv(int s) { _exit(5); }
        int main(void) {
          volatile long s = 0;
          for (int i = 0; i < 1000; i++) s += i;
          BODY
          return 0;
        }
    """.replace("BODY", body))
    reference = _write(tmp_path, "ret.c", r"""
        int main(void) {
          volatile long s = 0;
          for (int i = 0; i < 1000; i++) s += i;
          return 5;
        }
    """)
    t = trace_program(src, limits=LIMITS)
    r = trace_program(reference, limits=LIMITS)
    assert t.exit_code == 5
    assert t.meta["end_reason"] == END_REASONS[END_RECOVERED]
    # the loop (and everything before the exit call) is in the trace: every block of the
    # reference's loop ran here too
    loop_blocks = r.blocks_executed - 2
    assert t.blocks_executed >= loop_blocks
    assert t.dynamic_instructions > 5000


CONSTRUCTS = {
    "thread-local": ("_Thread_local int counter = 3;\nint main(void) { return counter; }\n",
                     "thread-local variable 'counter' (_Thread_local / __thread)"),
    "alarm": ("#include <unistd.h>\nint main(void) { alarm(1); return 0; }\n",
              "asynchronous timer signals (alarm)"),
    "setitimer": ("#include <sys/time.h>\nint main(void) { struct itimerval t = {{0, 1}, {0, 1}};"
                  " setitimer(ITIMER_REAL, &t, 0); return 0; }\n",
                  "asynchronous timer signals (setitimer)"),
    "builtin-setjmp": ("void *b[5];\nint main(void) { if (__builtin_setjmp(b)) return 1;"
                       " return 0; }\n", "setjmp/longjmp (__builtin_setjmp)"),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_constructs_the_tracer_cannot_follow_are_named(tmp_path, capsys, name):
    code_text, what = CONSTRUCTS[name]
    src = _write(tmp_path, "c.c", code_text)
    code = main(["trace", src, "-o", str(tmp_path / "t.npz")])
    err = capsys.readouterr().err
    assert code == errors.UnsupportedIRError.exit_code == 6
    assert f"unsupported construct: {what}" in err


def test_constructors_run_before_main_in_the_trace(tmp_path):
    src = _write(tmp_path, "ctor.c", r"""
        #include <stdio.h>
        static int ready;
        __attribute__((constructor)) static void init(void) { ready = 42; }
        int main(void) { printf("ready=%d\n", ready); return 0; }
    """)
    t = trace_program(src, limits=LIMITS)
    assert t.meta["stdout"] == "ready=42\n"
    assert t.calls("init") == 1 and t.calls("main") == 1


def test_wall_clock_limit_is_enforced(tmp_path, capsys):
    src = _write(tmp_path, "spin.c", "int main(void) { volatile int x = 0; for (;;) x++; }\n")
    t0 = time.monotonic()
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), "--timeout", "2",
                 "--max-instructions", "4000000000000"])
    elapsed = time.monotonic() - t0
    assert code == 7
    assert "ran past the 2 s time limit" in capsys.readouterr().err
    assert elapsed < 15
    assert _no_child_processes_soon()


def test_file_size_limit(tmp_path, capsys, levels):
    if not levels:
        pytest.skip("no confining sandbox level here")
    src = _write(tmp_path, "big.c", r"""
        #include <stdio.h>
        #include <string.h>
        int main(void) {
          static char block[1 << 16];
          memset(block, 'x', sizeof block);
          FILE *f = fopen("big.bin", "w");
          for (int i = 0; i < 64; i++) fwrite(block, 1, sizeof block, f);
          fclose(f);
          return 0;
        }
    """)
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), "--file-limit", "1",
                 "--cwd", str(tmp_path), "--no-timing"])
    assert code == 7
    assert "past the 1 MiB file-size limit" in capsys.readouterr().err


def test_a_required_level_that_is_missing_is_refused_and_auto_falls_back(tmp_path, capsys,
                                                                         monkeypatch, levels):
    _need(levels, "seccomp")
    src = _write(tmp_path, "ok.c", "int main(void) { return 0; }\n")
    monkeypatch.setenv("VCUT_NO_NAMESPACES", "1")
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), "--sandbox", "namespaces"])
    err = capsys.readouterr().err
    assert code == errors.SandboxUnavailable.exit_code == 2
    assert "the sandbox level asked for is not available here (namespaces refused: " in err
    assert "use --sandbox auto" in err
    t = trace_program(src, limits=LIMITS)
    assert t.meta["sandbox"] == "seccomp"
    assert t.meta["sandbox_notes"] == ["namespaces refused: disabled by VCUT_NO_NAMESPACES"]


def test_no_sandbox_warns(tmp_path, capsys):
    src = _write(tmp_path, "ok.c", "int main(void) { return 0; }\n")
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), "--no-sandbox"])
    captured = capsys.readouterr()
    assert code == 0
    assert "warning: no sandbox: the traced program runs with your rights" in captured.err
    assert "sandbox               none" in captured.err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_killing_vcut_leaves_no_process_and_no_partial_output(tmp_path, sig):
    src = _write(tmp_path, "spin.c", "int main(void) { volatile int x = 0; for (;;) x++; }\n")
    out = tmp_path / "t.npz"
    rng = random.Random(int(sig))
    for running in (False, True):
        proc = subprocess.Popen(
            [sys.executable, "-m", "vcut.cli", "trace", src, "-o", str(out), "--timeout", "60",
             "--max-instructions", "4000000000000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        if running:  # while the program runs: wait for the tracing child, then a bit
            deadline = time.monotonic() + 30
            while not _child_processes(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert _child_processes(proc.pid), "the tracing child never started"
            time.sleep(rng.uniform(0.0, 1.0))
        else:  # at a random point of start-up, compilation or the run
            time.sleep(rng.uniform(0.1, 1.5))
        assert proc.poll() is None, proc.stderr.read().decode()
        proc.send_signal(sig)
        proc.wait(timeout=30)
        err = proc.stderr.read().decode()
        deadline = time.monotonic() + 5
        while _child_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _child_processes(proc.pid) == []
        assert not out.exists()
        if sig == signal.SIGINT:
            assert proc.returncode == 130 and err.endswith("error: interrupted\n"), err
        elif sig == signal.SIGTERM:
            assert proc.returncode == 143 and err.endswith("error: terminated\n"), err
        else:
            assert proc.returncode == -signal.SIGKILL
    # the next run removes what the killed ones could not
    ok = _write(tmp_path, "ok.c", "int main(void) { return 0; }\n")
    trace_program(ok, limits=LIMITS)
    import tempfile

    dead = [n for n in os.listdir(tempfile.gettempdir())
            if n.startswith(f"vcut-run-{proc.pid:07d}-")]
    assert dead == []


@pytest.mark.parametrize("value", ["0", "-5", str(2**43)])
def test_file_limit_out_of_range(tmp_path, capsys, value):
    src = _write(tmp_path, "ok.c", "int main(void) { return 0; }\n")
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), f"--file-limit={value}"])
    assert code == 2
    assert (f"error: --file-limit must be a positive integer (at most {2**43 - 1}), got {value}"
            in capsys.readouterr().err)


def test_mounts_below_the_system_directories_are_read_only_too(tmp_path, levels):
    """A container's bind-mounted /etc/hosts is a mount below /etc: it must not stay writable.
    Made here in a private mount namespace: a tmpfs on /opt with another tmpfs below it."""
    _need(levels, "namespaces")
    if os.geteuid() != 0 or not shutil.which("unshare") or not os.path.isdir("/opt"):
        pytest.skip("needs root, unshare(1) and /opt to build a nested mount")
    src = _write(tmp_path, "w.c", r"""
        #include <stdio.h>
        int main(void) {
          FILE *top = fopen("/opt/top.txt", "w"), *sub = fopen("/opt/sub/x.txt", "w");
          printf("top=%s sub=%s\n", top ? "written" : "refused", sub ? "written" : "refused");
          return 0;
        }
    """)
    script = ("mount -t tmpfs tmpfs /opt && mkdir /opt/sub && mount -t tmpfs tmpfs /opt/sub && "
              f"{sys.executable} -m vcut.cli trace {src} -o {tmp_path / 't.npz'} "
              "--sandbox namespaces")
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "top=refused sub=refused\n"
