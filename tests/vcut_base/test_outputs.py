"""Outputs never destroy inputs or special files; interrupted writes leave no partial output.

`vcut_base.atomic` (what ``-o`` accepts), the commands' refusal of an output that
is one of their inputs, the partition pair, and kill tests: vcut killed with
SIGINT, SIGTERM and SIGKILL at seeded random points leaves the old outputs or
the complete new ones, and no temporary file after the next run.
"""

import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from vcut_base import errors
from vcut_base.atomic import TEMP_PATTERN, atomic_output, check_outputs, output_kind
from ir_graph import Graph, read_graph, write_graph
from tests.helpers import last_error, own_process, run_cli, vcut_temps
from vcut.cli import main
from vcut.output import read_assignment, read_partition

#: The ``vcut`` program itself (``main()`` with no argv), run by the current interpreter.
VCUT = [sys.executable, "-c", "import sys; from vcut.cli import main; sys.exit(main())"]

SAME_FILE = "(the same file); give another output path: vcut never overwrites its inputs"


def random_graph(n, m, seed):
    rng = np.random.default_rng(seed)
    return Graph(n=n, src=rng.integers(0, n, m, dtype=np.int64),
                 dst=rng.integers(0, n, m, dtype=np.int64), weight=np.ones(m))


@pytest.fixture
def small(tmp_path):
    """A 5-edge edge list in the test's directory."""
    path = tmp_path / "g.edgelist"
    path.write_text("0 1\n1 2\n2 3\n3 0\n0 2\n")
    return path


# ---------------------------------------------------------------- what -o accepts


def test_symlink_output_writes_its_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to("target.txt")
    with atomic_output(str(link), "w") as fh:
        fh.write("new\n")
    assert link.is_symlink() and os.readlink(link) == "target.txt"
    assert target.read_text() == "new\n"
    dangling = tmp_path / "dangling"
    dangling.symlink_to("made.txt")
    with atomic_output(str(dangling), "w") as fh:
        fh.write("made\n")
    assert dangling.is_symlink() and (tmp_path / "made.txt").read_text() == "made\n"
    assert vcut_temps(tmp_path) == []


def test_symlink_loop_is_refused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to("b")
    b.symlink_to("a")
    with pytest.raises(errors.OutputError) as exc:
        check_outputs([str(a)])
    assert exc.value.message == (f"cannot write {a}: too many levels of symbolic links; "
                                 "give a plain file name")


def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert output_kind(str(fifo)) == "stream"
    with atomic_output(str(fifo), "w") as fh:
        fh.write("through\n")
    reader.join(10)
    assert got == [b"through\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert vcut_temps(tmp_path) == []


def test_character_device_is_written_through(capsys, small):
    code, _, _ = run_cli(capsys, "bfs", small, "--source", "0", "-o", "/dev/null")
    assert code == 0 and stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    code, out, _ = run_cli(capsys, "partition", small, "-p", "2", "-o", "/dev/null")
    assert code == 0 and "written                      /dev/null\n" in out  # no replicas file
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_dash_is_standard_output_unless_it_carries_the_summary(capsys, small):
    code, out, _ = run_cli(capsys, "bfs", small, "--source", "0", "-o", "-")
    assert code == 0 and out == "0 0\n1 1\n2 1\n3 1\n"  # id distance
    code, out, _ = run_cli(capsys, "partition", small, "-p", "1", "-o", "-")
    assert code == 0 and out == "0\n0\n0\n0\n0\n"
    code, out, err = run_cli(capsys, "bfs", small, "--source", "0", "-o", "-", "--json")
    assert code == errors.OutputError.exit_code == 9
    assert json.loads(out) == {"error": "cannot write -: standard output carries the JSON "
                                        "summary; give a file name", "exit_code": 9}
    assert last_error(err) == ("error: cannot write -: standard output carries the JSON "
                               "summary; give a file name")
    code, _, err = run_cli(capsys, "trace", small.parent / "h.c", "-o", "-")
    assert code == 9 and last_error(err) == (
        "error: cannot write -: standard output carries the program's output; give a file name")


def test_socket_and_block_device_are_refused(capsys, tmp_path, small):
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        code, _, err = run_cli(capsys, "bfs", small, "--source", "0", "-o", sock_path)
    finally:
        sock.close()
    assert code == 9 and last_error(err) == (
        f"error: cannot write {sock_path}: it is a socket; give a regular file, a FIFO, "
        "a character device or - (standard output)")
    assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    blocks = [e.path for e in os.scandir("/dev") if stat.S_ISBLK(os.lstat(e.path).st_mode)]
    if blocks:
        code, _, err = run_cli(capsys, "bfs", small, "--source", "0", "-o", blocks[0])
        assert code == 9 and f"cannot write {blocks[0]}: it is a block device;" in err
        assert stat.S_ISBLK(os.lstat(blocks[0]).st_mode)


def test_stale_temps_of_dead_processes_are_removed_and_nothing_else(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(done.stdout)
    names = {
        f".vcut-{dead}-0123456789ab.tmp": False,  # a killed vcut's: removed
        f".vcut-{os.getpid()}-0123456789ab.tmp": True,  # a running one's: kept
        ".vcut-abc123.tmp": True,  # not vcut's pattern (older vcut, mkstemp)
        f".vcut-{dead}-0123456789ab.tmp.keep": True,
        f"x.vcut-{dead}-0123456789ab.tmp": True,
    }
    for name in names:
        (tmp_path / name).write_text("partial")
    with atomic_output(str(tmp_path / "out.txt"), "w") as fh:
        fh.write("x\n")
    assert sorted(os.listdir(tmp_path)) == sorted(["out.txt"] + [n for n, kept in names.items()
                                                                 if kept])


def test_temp_names_follow_the_pattern(tmp_path):
    seen = []
    with atomic_output(str(tmp_path / "o.txt"), "w") as fh:
        seen = vcut_temps(tmp_path)
        fh.write("x")
    assert len(seen) == 1 and TEMP_PATTERN.fullmatch(seen[0])
    assert int(TEMP_PATTERN.fullmatch(seen[0]).group(1)) == os.getpid()


# ---------------------------------------------------------------- outputs that are inputs


def test_trace_refuses_to_overwrite_its_source(capsys, tmp_path):
    src = tmp_path / "h.c"
    src.write_text("int main(void) { return 0; }\n")
    code, _, err = run_cli(capsys, "trace", src, "-o", src)
    assert code == errors.OutputError.exit_code == 9
    assert last_error(err) == f"error: output {src} is the input {src} {SAME_FILE}"
    assert src.read_text() == "int main(void) { return 0; }\n"
    stdin = tmp_path / "in.txt"
    stdin.write_text("data\n")
    code, _, err = run_cli(capsys, "trace", src, "--stdin", stdin, "-o", stdin)
    assert code == 9 and last_error(err) == f"error: output {stdin} is the input {stdin} {SAME_FILE}"
    assert stdin.read_text() == "data\n"
    assert sorted(os.listdir(tmp_path)) == ["h.c", "in.txt"]


def test_links_to_an_input_are_refused(capsys, small, tmp_path):
    link = tmp_path / "link.part"
    link.symlink_to(small.name)
    hard = tmp_path / "hard.part"
    os.link(small, hard)
    for out in (small, link, hard):
        code, _, err = run_cli(capsys, "partition", small, "-p", "2", "-o", out)
        assert code == 9 and last_error(err) == f"error: output {out} is the input {small} {SAME_FILE}"
    assert small.read_text() == "0 1\n1 2\n2 3\n3 0\n0 2\n" and link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["g.edgelist", "hard.part", "link.part"]


def test_partition_refuses_a_replicas_file_that_is_the_input(capsys, tmp_path):
    g = tmp_path / "x.replicas.npz"
    write_graph(random_graph(10, 20, 0), str(g))
    before = g.read_bytes()
    code, _, err = run_cli(capsys, "partition", g, "-p", "2", "-o", tmp_path / "x")
    assert code == 9 and last_error(err) == f"error: output {g} is the input {g} {SAME_FILE}"
    assert g.read_bytes() == before and not (tmp_path / "x").exists()


def test_graph_stats_bfs_refuse_their_input(capsys, small, cfile, tmp_path):
    before = small.read_bytes()
    cases = [
        (["stats", small, "--plot", small], small, small),
        (["bfs", small, "--source", "0", "-o", small], small, small),
        (["sssp", small, "--source", "0", "-o", small], small, small),
    ]
    src = cfile("h.c", "int main(void) { return 0; }\n")
    cases += [(["graph", src, "-o", src], src, src),
              (["graph", src, "-o", tmp_path / "g.npz", "--save-trace", src], src, src)]
    for argv, out, inp in cases:
        code, _, err = run_cli(capsys, *argv)
        assert code == 9 and last_error(err) == f"error: output {out} is the input {inp} {SAME_FILE}"
    assert small.read_bytes() == before and not (tmp_path / "g.npz").exists()
    code, _, err = run_cli(capsys, "graph", src, "-o", tmp_path / "t.npz", "--save-trace",
                           tmp_path / "t.npz")
    assert code == 9 and last_error(err) == (
        f"error: outputs {tmp_path / 't.npz'} and {tmp_path / 't.npz'} are the same file; "
        "give different paths")


def test_analyze_and_compare_refuse_inputs_in_their_output_directory(capsys, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    # an edge list that has the report's name: no output of analyze has a graph suffix, so
    # such a file is refused as an input before any output is considered
    graph = out / "mapping.json"
    write_graph(random_graph(8, 16, 1), str(graph), "edgelist")
    before = graph.read_bytes()
    code, _, err = run_cli(capsys, "analyze", graph, "-p", "2", "-o", out)
    assert code == 2 and last_error(err) == (
        f"error: {graph} is not an input vcut analyze takes (extension '.json'); give "
        "C sources (.c, or .ll LLVM IR), one trace (.npz from 'vcut trace') or one graph file "
        "(.graph, .metis, .edgelist, .edges, .el, .txt, .mtx, .lg, optionally .gz; or .npz "
        "from 'vcut graph')")
    g2 = tmp_path / "g.edgelist"
    write_graph(random_graph(8, 16, 1), str(g2))
    part = out / "report.html"
    part.write_text("0\n" * 16)
    code, _, err = run_cli(capsys, "analyze", g2, "-p", "2", "--partition", part, "-o", out)
    assert code == 9 and last_error(err) == f"error: output {part} is the input {part} {SAME_FILE}"
    machine = out / "compare.json"
    machine.write_text("{}")
    code, _, err = run_cli(capsys, "compare", g2, "-p", "2", "--machine", machine, "-o", out)
    assert code == 9 and last_error(err) == (
        f"error: output {machine} is the input {machine} {SAME_FILE}")
    assert graph.read_bytes() == before and part.read_text() == "0\n" * 16
    assert machine.read_text() == "{}"


# ---------------------------------------------------------------- the partition pair


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    """A 2,000-node, 20,000-edge random graph file."""
    path = tmp_path_factory.mktemp("medium") / "m.npz"
    write_graph(random_graph(2000, 20000, 7), str(path))
    return path


def test_pair_written_together_and_mismatch_detected(capsys, medium, tmp_path):
    out = tmp_path / "m.part"
    rich = tmp_path / "m.part.replicas.npz"
    assert run_cli(capsys, "partition", medium, "-p", "4", "-o", out)[0] == 0
    old_plain = out.read_bytes()
    meta, arrays = read_partition(str(rich))
    assert meta["format_version"] == 2 and len(meta["plain_sha256"]) == 64
    assert read_assignment(str(out)).tolist() == arrays["assignment"].tolist()
    assert run_cli(capsys, "partition", medium, "-p", "8", "-o", out)[0] == 0
    out.write_bytes(old_plain)  # as a kill between the two renames leaves it
    message = (f"partition files {out} and {rich} are from different runs (an interrupted "
               f"'vcut partition', or one file replaced); run 'vcut partition ... -o {out}' again")
    for read in (read_assignment, read_partition):
        with pytest.raises(errors.InputError) as exc:
            read(str(out) if read is read_assignment else str(rich))
        assert exc.value.message == message
    code, _, err = run_cli(capsys, "analyze", medium, "-p", "4", "--partition", out)
    assert code == errors.InputError.exit_code == 2 and last_error(err) == f"error: {message}"


def test_file_size_limit_on_the_second_file_keeps_the_old_pair(medium, tmp_path):
    import resource

    out = tmp_path / "m.part"
    assert main(["partition", str(medium), "-p", "4", "-o", str(out)]) == 0
    old = out.read_bytes(), (tmp_path / "m.part.replicas.npz").read_bytes()
    assert len(old[0]) < 100_000 < len(old[1])  # the limit below stops the second file

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    done = subprocess.run(VCUT + ["partition", str(medium), "-p", "8", "-o", str(out)],
                          preexec_fn=limit, capture_output=True, text=True, check=False)
    assert done.returncode == 9 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"error: cannot write {out}.replicas.npz, {out}: File too large; nothing was replaced; "
        "raise the file size limit (ulimit -f) or give another output path")
    assert (out.read_bytes(), (tmp_path / "m.part.replicas.npz").read_bytes()) == old
    assert vcut_temps(tmp_path) == []


@own_process
def test_signals_between_the_renames_are_held_back(tmp_path, monkeypatch):
    from vcut_base.atomic import atomic_outputs

    replace, renamed = os.replace, []

    def interrupted_replace(src, dst):
        if not renamed:
            signal.raise_signal(signal.SIGINT)  # as if Ctrl-C came between the two renames
        renamed.append(os.path.basename(dst))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted_replace)
    pair = atomic_outputs([(tmp_path / "a.npz", "w"), (tmp_path / "a", "w")])
    with pytest.raises(KeyboardInterrupt), pair as (fa, fb):
        fa.write("rich\n")
        fb.write("plain\n")
    assert renamed == ["a.npz", "a"]  # both renamed, then the interrupt
    assert (tmp_path / "a.npz").read_text() == "rich\n" and (tmp_path / "a").read_text() == "plain\n"
    assert sorted(os.listdir(tmp_path)) == ["a", "a.npz"]


# ---------------------------------------------------------------- kill tests

linux = pytest.mark.skipif(not os.path.exists("/proc/self/status"),
                           reason="the kill tests watch the process through /proc")
EXIT = {signal.SIGINT: (130, "error: interrupted"), signal.SIGTERM: (143, "error: terminated")}


def _ready(pid):
    """main() is running: it has installed its SIGTERM handler."""
    with open(f"/proc/{pid}/status") as fh:
        mask = next(int(ln.split()[1], 16) for ln in fh if ln.startswith("SigCgt:"))
    return bool(mask & (1 << (signal.SIGTERM - 1)))


def _wait_for(proc, condition, limit=60.0):
    end = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < end:
        try:
            if condition():
                return True
        except OSError:
            pass
        time.sleep(0.0005)
    return False


def kill_run(argv, cwd, sig, when, delay):
    """Run vcut in ``cwd``; send ``sig`` ``delay`` s after it is ready (``when`` =
    "ready") or after its first temporary file appears ("temp"). Returns (rc, stderr)."""
    proc = subprocess.Popen(VCUT + argv, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert _wait_for(proc, lambda: _ready(proc.pid)) or proc.poll() is not None
        if when == "temp":
            _wait_for(proc, lambda: vcut_temps(cwd), limit=30)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def assert_clean_exit(rc, err, sig):
    if sig == signal.SIGKILL:
        assert rc in (0, -signal.SIGKILL), err
        return
    assert "Traceback" not in err
    if rc != 0:
        assert (rc, err.splitlines()[-1]) == EXIT[sig], err


def kill_points(seed):
    """Seeded (signal, when, delay): SIGINT and SIGTERM once while computing, every signal
    once from the first temporary file on (writing, renaming, or just done)."""
    rng = random.Random(seed)
    points = [(sig, "ready", rng.uniform(0, 0.6)) for sig in (signal.SIGINT, signal.SIGTERM)]
    return points + [(sig, "temp", rng.uniform(0, 0.08))
                     for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)]


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A 100,000-edge graph and the plain partition files of p = 8 (new) and p = 4 (old)."""
    d = tmp_path_factory.mktemp("large")
    path = d / "big.npz"
    write_graph(random_graph(20000, 100_000, 3), str(path))
    plain = {}
    for p in (4, 8):
        assert main(["partition", str(path), "-p", str(p), "-o", str(d / f"p{p}.part")]) == 0
        plain[p] = (d / f"p{p}.part").read_bytes()
    return path, plain


def _point_id(value):
    return f"{value:.3f}s" if isinstance(value, float) else getattr(value, "name", str(value))


@linux
@pytest.mark.parametrize("sig, when, delay", kill_points(2024), ids=_point_id)
def test_killed_partition_leaves_old_or_new_pair(large, tmp_path, capsys, sig, when, delay):
    graph, plain = large
    out, rich = tmp_path / "o.part", tmp_path / "o.part.replicas.npz"
    assert main(["partition", str(graph), "-p", "4", "-o", str(out)]) == 0
    old = out.read_bytes(), rich.read_bytes()
    capsys.readouterr()
    rc, err = kill_run(["partition", str(graph), "-p", "8", "-o", str(out)], tmp_path, sig,
                       when, delay)
    assert_clean_exit(rc, err, sig)
    if sig != signal.SIGKILL:
        assert vcut_temps(tmp_path) == []  # removed on the way out
    now = out.read_bytes(), rich.read_bytes()
    if now != old:
        if now[0] == plain[8]:  # OUT is renamed last: a new OUT means a new pair
            meta, _ = read_partition(str(rich))
            assert meta["p"] == 8
        else:  # only SIGKILL can fall between the two renames, and readers see it
            assert sig == signal.SIGKILL and now[0] == old[0]
            with pytest.raises(errors.InputError, match="are from different runs"):
                read_assignment(str(out))
    assert main(["partition", str(graph), "-p", "8", "-o", str(out)]) == 0  # the next run
    assert out.read_bytes() == plain[8] and read_partition(str(rich))[0]["p"] == 8
    assert sorted(os.listdir(tmp_path)) == ["o.part", "o.part.replicas.npz"]


LOOP = """
int a[1024];
int main(void) {
    long s = 0;
    for (int r = 0; r < 3; r++)
        for (int i = 1; i < 1024; i++) { a[i] = a[i - 1] + i * r; s += a[i]; }
    return (int)(s & 1);
}
"""


@pytest.fixture(scope="module")
def trace_npz(tmp_path_factory):
    """The trace of a small loop (~70 k instructions) and its graph's size."""
    from frontend import trace_program
    from tests.helpers import write_c

    d = str(tmp_path_factory.mktemp("trace"))
    trace = trace_program(write_c(d, "loop.c", LOOP), timing=False)
    path = os.path.join(d, "loop.npz")
    trace.save(path)
    assert main(["graph", path, "--weights", "model", "-o", os.path.join(d, "ref.npz")]) == 0
    g = read_graph(os.path.join(d, "ref.npz"))
    return path, (g.n, g.m)


@linux
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=_point_id)
def test_killed_graph_leaves_no_partial_output(trace_npz, tmp_path, capsys, sig):
    trace, size = trace_npz
    out = tmp_path / "g.npz"
    delay = random.Random(int(sig)).uniform(0, 0.01)
    argv = ["graph", trace, "--weights", "model", "-o", str(out)]
    rc, err = kill_run(argv, tmp_path, sig, "temp", delay)
    assert_clean_exit(rc, err, sig)
    if out.exists():  # complete or absent
        g = read_graph(str(out))
        assert (g.n, g.m) == size
    assert main(argv) == 0  # the next run
    assert os.listdir(tmp_path) == ["g.npz"]


def test_plots_and_reports_go_only_to_files_named_for_their_format(capsys, small, tmp_path):
    # an image or a page written over a data file named by mistake would replace it: the
    # fuzz campaign of seed 26 had vcut schedule --report=trace.npz turn a trace into a page
    data = tmp_path / "trace.npz"
    np.savez(data, a=np.arange(3))
    before = data.read_bytes()
    code, _, err = run_cli(capsys, "stats", small, "--plot", data)
    assert code == 9 and last_error(err) == (
        f"error: --plot {data}: the plot is a PNG image; give a path ending in .png "
        "(nothing was written)")
    code, _, err = run_cli(capsys, "schedule", "--job=matmul", "--size=8", "--rounds=1",
                           "--devices=sim:cpu", f"--report={data}")
    assert code == 9 and last_error(err) == (
        f"error: --report {data}: the report is an HTML page, or a PNG image; give a path "
        "ending in .html, .htm, .png (nothing was written)")
    assert data.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["g.edgelist", "trace.npz"]  # no temporary left
    # any case of the suffix is a name for the format
    assert run_cli(capsys, "stats", small, "--plot", tmp_path / "d.PNG")[0] == 0
    assert (tmp_path / "d.PNG").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run_cli(capsys, "schedule", "--job=matmul", "--size=8", "--rounds=1",
                "--devices=sim:cpu", f"--report={tmp_path / 's.Html'}")[0] == 0
    assert (tmp_path / "s.Html").read_text().startswith("<!doctype html>")
