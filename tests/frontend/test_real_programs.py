"""Shapes of real programs (MiBench, PolyBench) that the tracer must handle as a native build does.

Each program here is written for the test after a construct those suites
use: binary output on stdout, output larger than a MiB, output flushed
before a crash, a program that copes with malloc returning NULL, atexit
handlers, complex arithmetic and 128-bit division (compiler runtime
helpers), constructors and destructors, and a --roi kernel at -O2.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from frontend import trace_program

from vcut_base import errors
from frontend.run import OUTPUT_KEPT, RunLimits
from vcut.cli import main

LIMITS = RunLimits(timeout=60)


def _write(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return str(path)


def _vcut(*argv, stdin=None):
    return subprocess.run([sys.executable, "-m", "vcut.cli", *argv], capture_output=True,
                          input=stdin, timeout=120, check=False)


BINARY = r"""
    #include <stdio.h>
    int main(void) {
      /* every byte value, then an ADPCM-like stream: not UTF-8 */
      for (int i = 0; i < 256; i++) putchar(i);
      unsigned state = 12345;
      for (int i = 0; i < 25000 - 256; i++) { state = state * 1103515245u + 12345u; putchar(state >> 24); }
      return 0;
    }
"""


def _expected_binary():
    out = bytearray(range(256))
    state = 12345
    for _ in range(25000 - 256):
        state = (state * 1103515245 + 12345) & 0xFFFFFFFF
        out.append(state >> 24)
    return bytes(out)


def test_binary_stdout_passes_through_unchanged(tmp_path):
    src = _write(tmp_path, "raw.c", BINARY)
    res = _vcut("trace", src, "-o", str(tmp_path / "t.npz"), "--no-timing")
    assert res.returncode == 0, res.stderr
    assert res.stdout == _expected_binary()
    assert b"dynamic instructions" in res.stderr  # vcut's own lines go to stderr only


def test_binary_stdout_to_a_file(tmp_path):
    src = _write(tmp_path, "raw.c", BINARY)
    out = tmp_path / "out.adpcm"
    res = _vcut("trace", src, "-o", str(tmp_path / "t.npz"), "--stdout", str(out),
                "--no-timing")
    assert res.returncode == 0, res.stderr
    assert res.stdout == b""
    assert out.read_bytes() == _expected_binary()


def test_json_marks_output_past_a_mebibyte(tmp_path):
    src = _write(tmp_path, "big.c", r"""
        #include <stdio.h>
        int main(void) { for (int i = 0; i < 150000; i++) printf("line %06d\n", i); return 0; }
    """)
    res = _vcut("trace", src, "-o", str(tmp_path / "t.npz"), "--no-timing", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    total = 150000 * len("line 000000\n")
    assert doc["stdout_bytes"] == total and doc["stdout_truncated"] is True
    assert len(doc["stdout"]) == OUTPUT_KEPT
    assert doc["stdout"].startswith("line 000000\nline 000001\n")
    assert doc["stdout_file"] is None
    assert doc["stderr_bytes"] == 0 and doc["stderr_truncated"] is False


def test_output_flushed_before_a_crash_is_shown(tmp_path):
    src = _write(tmp_path, "crash.c", r"""
        #include <stdio.h>
        int main(void) {
          printf("result so far: 42\n");
          fflush(stdout);
          fprintf(stderr, "about to fail\n");
          *(volatile int *)0 = 1;
          return 0;
        }
    """)
    res = _vcut("trace", src, "-o", str(tmp_path / "t.npz"))
    assert res.returncode == 7
    assert res.stdout == b"result so far: 42\n"
    assert b"about to fail\n" in res.stderr
    assert res.stderr.rstrip().endswith(b"run it natively under a debugger to find the fault")


def test_a_program_that_handles_malloc_failure_runs_on(tmp_path):
    src = _write(tmp_path, "nomem.c", r"""
        #include <stdio.h>
        #include <stdlib.h>
        int main(void) {
          char *p = malloc((size_t)1 << 40);
          if (!p) { printf("no memory, using the small path\n"); return 3; }
          free(p);
          return 0;
        }
    """)
    t = trace_program(src, limits=RunLimits(timeout=60, memory=1 << 30))
    assert t.exit_code == 3
    assert t.meta["stdout"] == "no memory, using the small path\n"
    assert t.meta["failed_allocations"] == 1
    assert t.meta["end_reason"] == "main returned"


def test_atexit_complex_arithmetic_and_int128_link_and_run(tmp_path):
    src = _write(tmp_path, "helpers.c", r"""
        #include <complex.h>
        #include <stdio.h>
        #include <stdlib.h>
        static void bye(void) { printf("atexit ran\n"); }
        int main(int argc, char **argv) {
          atexit(bye);
          volatile double re = 1.0, im = 2.0;
          double complex a = re + im * I, b = 3.0 - 1.0 * I;
          double complex p = a * b, q = a / b;          /* __muldc3, __divdc3 */
          float complex fa = 1.0f + 1.0f * I, fb = 2.0f * I;
          float complex fp = fa * fb;                   /* __mulsc3 */
          volatile __int128 x = (__int128)1 << 100, y = 12345;
          volatile unsigned __int128 ux = (unsigned __int128)1 << 120, uy = 1000000007;
          long long qt = (long long)(x / y % 1000000007);   /* __divti3, __modti3 */
          unsigned long long r = (unsigned long long)(ux % uy);   /* __umodti3 */
          printf("%.3f %.3f %.3f %.3f %.1f %.1f %lld %llu\n", creal(p), cimag(p), creal(q),
                 cimag(q), crealf(fp), cimagf(fp), qt, r);
          return 0;
        }
    """)
    t = trace_program(src, limits=LIMITS)
    # (1+2i)(3-i) = 5+5i; (1+2i)/(3-i) = (1+7i)/10; (1+i)(2i) = -2+2i
    x, y, ux, uy = 1 << 100, 12345, 1 << 120, 1000000007
    expected = f"5.000 5.000 0.100 0.700 -2.0 2.0 {x // y % 1000000007} {ux % uy}\natexit ran\n"
    assert t.meta["stdout"] == expected
    assert t.calls("bye") == 1  # the handler runs, traced, before the trace ends
    assert t.meta["end_reason"] == "main returned"


def test_constructors_destructors_and_atexit_run_in_c_order(tmp_path):
    src = _write(tmp_path, "order.c", r"""
        #include <stdio.h>
        #include <stdlib.h>
        static int ready;
        __attribute__((constructor)) static void init(void) { ready = 42; }
        __attribute__((destructor)) static void fini(void) { printf("destructor\n"); }
        static void handler(void) { printf("atexit handler\n"); }
        int main(void) { atexit(handler); printf("main sees %d\n", ready); return 0; }
    """)
    t = trace_program(src, limits=LIMITS)
    assert t.meta["stdout"] == "main sees 42\natexit handler\ndestructor\n"
    assert [t.calls(f) for f in ("init", "main", "handler", "fini")] == [1, 1, 1, 1]


def test_roi_function_stays_out_of_line_when_optimised(tmp_path, capsys):
    src = _write(tmp_path, "mm.c", r"""
        #include <stdio.h>
        #define N 24
        static double a[N][N], b[N][N], c[N][N];
        static void kernel_mm(int n) {
          for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
              double s = 0;
              for (int k = 0; k < n; k++) s += a[i][k] * b[k][j];
              c[i][j] = s;
            }
        }
        int main(void) {
          for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { a[i][j] = i; b[i][j] = j; }
          kernel_mm(N);
          printf("%.1f\n", c[3][5]);
          return 0;
        }
    """)
    out = tmp_path / "t.npz"
    code = main(["trace", src, "-O2", "--roi", "kernel_mm", "-o", str(out), "--json"])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    # c[3][5] = sum_k 3 * 5 over 24 values of k = 360
    assert doc["stdout"] == "360.0\n"
    from frontend import load_trace

    t = load_trace(str(out))
    assert t.calls("kernel_mm") == 1
    assert t.static.function_id("main") >= 0
    # only the region of interest is traced: main's own loops are not
    fid = t.static.function_id("kernel_mm")
    assert set(t.static.blk_func[t.bs_block].tolist()) == {fid}


def test_roi_that_does_not_exist_is_named(tmp_path, capsys):
    src = _write(tmp_path, "one.c", "int main(void) { return 0; }\n")
    code = main(["trace", src, "-O2", "--roi", "nowhere", "-o", str(tmp_path / "t.npz")])
    assert code == errors.InputError.exit_code
    assert "nowhere" in capsys.readouterr().err


@pytest.mark.parametrize("opt", ["-O1", "-O3"])
def test_roi_kernel_gives_the_same_output_at_other_levels(tmp_path, opt):
    src = _write(tmp_path, "k.c", r"""
        #include <stdio.h>
        static int kernel(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }
        int main(void) { printf("%d\n", kernel(100)); return 0; }
    """)
    t = trace_program(src, roi=["kernel"], compile_options={"opt": opt}, limits=LIMITS)
    assert t.meta["stdout"] == f"{sum(i * i for i in range(100))}\n"
    assert t.calls("kernel") == 1


def test_addresses_do_not_depend_on_environment_or_temporary_directory(tmp_path, monkeypatch):
    import tempfile

    import numpy as np

    src = _write(tmp_path, "layout.c", r"""
        #include <stdlib.h>
        #include <string.h>
        int g[32];
        int main(void) {
          int local[16];
          char *heap = malloc(256);
          memset(heap, 1, 256);
          for (int i = 0; i < 16; i++) local[i] = g[i] + heap[i];
          free(heap);
          return local[3];
        }
    """)
    runs = []
    for name, extra in (("t", ""), ("a-much-longer-temporary-directory-name" * 3, "x" * 5000)):
        base = tmp_path / name
        base.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(base))
        monkeypatch.setenv("VCUT_TEST_PADDING", extra)
        runs.append(trace_program(src, limits=LIMITS, timing=False))
    a, b = runs
    assert len(a.mem_addr) == len(b.mem_addr) > 40
    # stack, global and heap addresses are all the same (main runs on a thread with a
    # fresh malloc arena: docs/frontend.md, "Reproducible addresses")
    base = a.obj_base[a.obj_kind == 2]
    assert len(base) == 1 and np.array_equal(base, b.obj_base[b.obj_kind == 2])
    heap = (a.mem_addr >= base[0]) & (a.mem_addr < base[0] + 256)
    assert heap.sum() == 17  # the memset (one WRITEN event) and the 16 reads of heap[i]
    assert np.array_equal(a.mem_addr, b.mem_addr)
