"""A full disk while writing outputs or scratch files (issue 13, "Bad input").

Every case ends with one line ``error: ...`` that names what could not be written and
what to do, exit 9 (`OutputError`), no traceback, no temporary file, and the previous
output unchanged.

Two ways of filling the disk:

* `Disk`, a double for a file system with a few bytes of room: the files vcut writes
  (its output temporaries, the run's scratch files) get a raw layer whose writes stop
  there with ``ENOSPC`` as the kernel's do (a short write, then the error);
* the kernel itself: ``/dev/full`` (``ENOSPC`` on every write) for streams, and
  ``RLIMIT_FSIZE`` in a child process (``EFBIG``; Python ignores ``SIGXFSZ``).
"""

import errno
import io
import os
import resource
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import numpy as np
import pytest

import vcut_base.atomic
import frontend.event_channel
import frontend.program_files
import frontend.run
from frontend import trace_program
from vcut_base import errors
from ir_graph import Graph, write_graph
from tests.helpers import run_cli, vcut_temps, write_c

#: A helper thread's exception (printed as a traceback by the CLI) fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

VCUT = [sys.executable, "-c", "import sys; from vcut.cli import main; sys.exit(main())"]

FULL = "No space left on device"

LOOP = """
int a[512];
int main(void) {
    long s = 0;
    for (int i = 1; i < 512; i++) { a[i] = a[i - 1] + i; s += a[i]; }
    return (int)(s & 1);
}
"""

HELLO = """
#include <stdio.h>
int main(void) { for (int i = 0; i < 200; i++) printf("line %d\\n", i); return 0; }
"""


class Disk:
    """A file system with ``room`` bytes left for the files given to `limit`."""

    def __init__(self, room):
        self.room = room

    def limit(self, fh):
        """``fh`` (text, buffered or raw, open for writing) on a raw layer with this room."""
        text = isinstance(fh, io.TextIOWrapper)
        buffered = fh.detach() if text else fh
        raw = buffered.detach() if isinstance(buffered, io.BufferedWriter) else buffered
        out = _Room(raw, self)
        if isinstance(buffered, io.BufferedWriter):
            out = io.BufferedWriter(out)
        return io.TextIOWrapper(out, encoding="utf-8") if text else out


class _Room(io.RawIOBase):
    """Writes through to ``raw`` while the disk has room; then ``ENOSPC``."""

    def __init__(self, raw, disk):
        super().__init__()
        self.raw, self.disk = raw, disk

    def writable(self):
        return True

    def seekable(self):
        return self.raw.seekable()

    def seek(self, offset, whence=0):
        return self.raw.seek(offset, whence)

    def tell(self):
        return self.raw.tell()

    def fileno(self):
        return self.raw.fileno()

    def write(self, data):
        data = memoryview(data).cast("B")
        if len(data) and self.disk.room == 0:
            raise OSError(errno.ENOSPC, FULL)
        n = self.raw.write(data[: self.disk.room])
        self.disk.room -= n
        return n

    def close(self):
        if not self.closed:
            self.raw.close()
        super().close()


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(room)``: vcut's output temporaries get ``room`` bytes in all."""

    def install(room):
        disk = Disk(room)
        create = vcut_base.atomic._create_temp
        monkeypatch.setattr(vcut_base.atomic, "_create_temp",
                            lambda directory, mode, temps: disk.limit(
                                create(directory, mode, temps)))
        return disk

    return install


def our_scratch():
    """Scratch directories of this process (`vcut_base.scratch`) still in the temp dir."""
    mine = f"vcut-run-{os.getpid():07d}-"
    return [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(mine)]


def outcome(code, err):
    """(exit code, the last line) of a run that must end with one error line."""
    assert "Traceback" not in err and "Exception in thread" not in err, err
    return code, err.splitlines()[-1]


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    """A small loop's trace (~5 k instructions)."""
    d = str(tmp_path_factory.mktemp("trace"))
    path = os.path.join(d, "loop.npz")
    trace_program(write_c(d, "loop.c", LOOP), timing=False).save(path)
    return path


# ---------------------------------------------------------------- outputs (-o)


@pytest.mark.parametrize("room", [0, 1000, 60_000])  # in the plain file / in the npz
def test_partition_on_a_full_disk_keeps_the_old_pair(capsys, full_disk, tmp_path, room):
    rng = np.random.default_rng(1)
    graph = tmp_path / "g.npz"
    write_graph(Graph(n=500, src=rng.integers(0, 500, 8000), dst=rng.integers(0, 500, 8000),
                      weight=np.ones(8000)), str(graph))
    out = tmp_path / "g.part"
    assert run_cli(capsys, "partition", graph, "-p", "2", "-o", out)[0] == 0
    old = out.read_bytes(), (tmp_path / "g.part.replicas.npz").read_bytes()
    assert len(old[0]) == 16000 and len(old[1]) > 60_000  # 8000 lines "0\n" or "1\n"
    full_disk(room)
    code, _, err = run_cli(capsys, "partition", graph, "-p", "4", "-o", out)
    assert outcome(code, err) == (9, (
        f"error: cannot write {out}.replicas.npz, {out}: {FULL}; nothing was replaced; "
        f"free space in {tmp_path} or give another output path"))
    assert (out.read_bytes(), (tmp_path / "g.part.replicas.npz").read_bytes()) == old
    assert vcut_temps(tmp_path) == []


def test_partition_to_a_full_stream(capsys, tmp_path):
    graph = tmp_path / "g.edgelist"
    graph.write_text("0 1\n1 2\n2 0\n")
    code, _, err = run_cli(capsys, "partition", graph, "-p", "2", "-o", "/dev/full")
    assert outcome(code, err) == (9, (
        f"error: cannot write /dev/full: {FULL}; nothing was replaced; free space or give "
        "another output path"))


@pytest.mark.parametrize("name", ["g.edgelist", "g.npz", "g.mtx.gz", "g.graph"])
def test_graph_on_a_full_disk_keeps_the_old_file(capsys, full_disk, trace_file, tmp_path, name):
    out = tmp_path / name
    out.write_bytes(b"old graph\n")
    full_disk(1000)
    code, _, err = run_cli(capsys, "graph", trace_file, "-o", out)
    assert outcome(code, err) == (9, (
        f"error: cannot write {out}: {FULL}; nothing was replaced; free space in {tmp_path} "
        "or give another output path"))
    assert out.read_bytes() == b"old graph\n"
    assert os.listdir(tmp_path) == [name]


def test_trace_on_a_full_disk_keeps_the_old_trace(capsys, full_disk, tmp_path):
    src = write_c(str(tmp_path), "loop.c", LOOP)
    out = tmp_path / "t.npz"
    out.write_bytes(b"old trace")
    full_disk(1000)
    code, _, err = run_cli(capsys, "trace", src, "-o", out, "--no-timing")
    assert outcome(code, err) == (9, (
        f"error: cannot write {out}: {FULL}; nothing was replaced; free space in {tmp_path} "
        "or give another output path"))
    assert out.read_bytes() == b"old trace"
    assert sorted(os.listdir(tmp_path)) == ["loop.c", "t.npz"]
    assert our_scratch() == []


def test_the_programs_output_to_a_full_disk(tmp_path):
    """What the program prints goes to our stdout or --stdout FILE: both on /dev/full."""
    src = write_c(str(tmp_path), "hello.c", HELLO)
    out = tmp_path / "t.npz"
    with open("/dev/full", "wb") as full:
        done = subprocess.run(VCUT + ["trace", src, "-o", str(out), "--no-timing"],
                              stdout=full, stderr=subprocess.PIPE, text=True, check=False)
    assert outcome(done.returncode, done.stderr) == (9, (
        f"error: cannot write -: {FULL}; nothing was replaced; free space or give another "
        "output path"))
    done = subprocess.run(VCUT + ["trace", src, "-o", str(out), "--no-timing", "--stdout",
                                  "/dev/full"], capture_output=True, text=True, check=False)
    assert outcome(done.returncode, done.stderr) == (9, (
        f"error: cannot write /dev/full: {FULL}; nothing was replaced; free space or give "
        "another output path"))
    assert sorted(os.listdir(tmp_path)) == ["hello.c"]  # no trace of a run that failed


# ---------------------------------------------------------------- scratch files of a run


@pytest.mark.parametrize("scratch", ["ir", "events"])
def test_trace_scratch_on_a_full_disk(capsys, monkeypatch, tmp_path, scratch):
    """The module given to the child (``ir``) or the events it sends (``events``)."""
    disk = Disk(100)

    def open_on_disk(file, mode="r", *args, **kwargs):
        fh = open(file, mode, *args, **kwargs)
        return disk.limit(fh) if os.path.basename(str(file)) == scratch else fh

    for module in (frontend.run, frontend.event_channel):  # the module file; the events file
        monkeypatch.setattr(module, "open", open_on_disk, raising=False)
    src = write_c(str(tmp_path), "loop.c", LOOP)
    out = tmp_path / "t.npz"
    out.write_bytes(b"old trace")
    code, _, err = run_cli(capsys, "trace", src, "-o", out, "--no-timing")
    base = tempfile.gettempdir()
    assert outcome(code, err) == (9, (
        f"error: cannot write the run's scratch files in {base}: {FULL}; free space in {base} "
        "or set TMPDIR to another directory"))
    assert out.read_bytes() == b"old trace" and sorted(os.listdir(tmp_path)) == ["loop.c",
                                                                                  "t.npz"]
    assert our_scratch() == []


# ---------------------------------------------------------------- the kernel's file size limit


def test_graph_past_the_file_size_limit_keeps_the_old_file(trace_file, tmp_path):
    out = tmp_path / "g.edgelist"
    out.write_bytes(b"old graph\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    done = subprocess.run(VCUT + ["graph", trace_file, "-o", str(out)], preexec_fn=limit,
                          capture_output=True, text=True, check=False)
    assert outcome(done.returncode, done.stderr) == (9, (
        f"error: cannot write {out}: File too large; nothing was replaced; raise the file "
        "size limit (ulimit -f) or give another output path"))
    assert out.read_bytes() == b"old graph\n" and os.listdir(tmp_path) == ["g.edgelist"]


def test_trace_under_a_file_size_limit_below_the_event_buffer(tmp_path):
    src = write_c(str(tmp_path), "loop.c", LOOP)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    done = subprocess.run(VCUT + ["trace", src, "-o", str(tmp_path / "t.npz")],
                          preexec_fn=limit, capture_output=True, text=True, check=False)
    size = frontend.event_channel.shm_bytes(frontend.run.DEFAULT_LIMITS.buffer_words)
    assert size == (8 + 2 * ((1 << 20) + 4 + 1)) * 8  # SHM_PREFIX_WORDS, two buffers
    assert outcome(done.returncode, done.stderr) == (9, (
        f"error: cannot make the {size:,}-byte event buffer shared with the program: File "
        "too large; raise the file size limit (ulimit -f)"))
    assert os.listdir(tmp_path) == ["loop.c"]


WRITER = r"""
#include <stdio.h>
int main(void) {
    FILE *f = fopen("result.txt", "w");
    for (int i = 0; i < 500; i++) fprintf(f, "%d\n", i);
    return fclose(f) != 0;
}
"""


def test_kept_files_on_a_full_disk(capsys, monkeypatch, tmp_path):
    """--keep-files DIR: the copy that does not fit is removed."""
    disk = Disk(100)

    def copy_on_disk(fin, fout, length=0):
        data, out = memoryview(fin.read()), _Room(fout, disk)
        while data:
            data = data[out.write(data):]

    monkeypatch.setattr(frontend.program_files, "shutil", SimpleNamespace(copyfileobj=copy_on_disk))
    src = write_c(str(tmp_path), "writer.c", WRITER)
    keep = tmp_path / "kept"
    keep.mkdir()
    code, _, err = run_cli(capsys, "trace", src, "-o", tmp_path / "t.npz", "--no-timing",
                           "--sandbox", "namespaces", "--keep-files", keep, "--cwd", keep)
    if code == errors.SandboxUnavailable.exit_code:
        pytest.skip("the namespaces sandbox is not available on this machine")
    assert outcome(code, err) == (9, (
        f"error: cannot copy the program's file to {keep / 'result.txt'}: {FULL}; free space "
        f"in {keep} or give --keep-files another directory"))
    assert os.listdir(keep) == [] and sorted(os.listdir(tmp_path)) == ["kept", "writer.c"]
