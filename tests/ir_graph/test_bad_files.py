"""Regressions of issue 11 (section 4): graph files that crashed or hung vcut.

Each case is a reproducer of a signal or traceback; the expectation is the
documented exit code (2 bad argument, 10 malformed graph file) and the one
line the command prints.
"""

import gzip
import json
import os

import numpy as np
import pytest

import vcut_base.inputs
import vcut_base.memory
from vcut_base.errors import GraphFormatError, InputError
from ir_graph import Graph, read_graph, write_graph
from tests.helpers import run_cli_error


@pytest.fixture
def gib(monkeypatch):
    """Pretend 1 GiB of memory is available (messages quote it)."""
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 1 << 30)


def own_npz(tmp_path, **change):
    """A valid graph ``.npz`` of 3 nodes and 3 edges with ``change`` applied to its entries."""
    path = tmp_path / "g.npz"
    write_graph(Graph(n=3, src=np.array([0, 1, 2], np.int32), dst=np.array([1, 2, 0], np.int32),
                      weight=np.array([1.0, 2.0, 3.0])), path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["meta"]))
    for key, value in change.items():
        if key.startswith("meta_"):
            meta[key[5:]] = value
        elif value is None:
            del arrays[key]
        else:
            arrays[key] = value
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("algo", ["w-pg", "wb-libra"])
def test_weights_whose_sum_overflows_are_refused_not_a_segfault(capsys, tmp_path, algo):
    p = tmp_path / "e.txt"
    p.write_text("0 1 1.7e308\n1 2 1.7e308\n2 3 1\n")
    code, line = run_cli_error(capsys, "partition", p, "-p", "2", "--algo", algo)
    assert code == 10
    assert line == (f"error: {p}: the edge weights sum to more than 1.798e+308 "
                    "(the largest is 1.7e+308); scale the weights down")


def test_largest_finite_weights_partition(capsys, tmp_path):
    # the sum fits, but load / capacity overflows for a tiny capacity: still a partition
    p = tmp_path / "e.txt"
    p.write_text("0 1 1e308\n1 2 1e307\n2 3 1\n0 3 5\n")
    code, _ = run_cli_error(capsys, "partition", p, "-p", "2", "--algo", "wb-libra",
                            "--capacities", "1e-300,1", "-o", tmp_path / "e.part")
    assert code == 0
    clusters = [int(x) for x in (tmp_path / "e.part").read_text().split()]
    assert len(clusters) == 4 and set(clusters) <= {0, 1}


def test_nan_source_ids_in_npz_are_refused_before_bfs(capsys, tmp_path):
    path = own_npz(tmp_path, src=np.array([0.0, np.nan, 2.0]))
    code, line = run_cli_error(capsys, "bfs", path, "--source", "0")
    assert code == 10
    assert line == (f"error: {path}: edge sources must be a one-dimensional array of "
                    "integers, got float64 of shape (3,)")


@pytest.mark.parametrize("change, message", [
    ({"weight": None}, "is not a complete vcut graph: array 'weight' is missing; rebuild it "
                       "with 'vcut graph'"),
    ({"meta_graph": None}, ": meta 'graph' must be {\"n\": node count, \"directed\": "
                           "true|false}, got None; rebuild the file with 'vcut graph'"),
    ({"meta_graph": {"n": "abc", "directed": False}},
     ": meta 'graph' must be {\"n\": node count, \"directed\": true|false}, got {'n': 'abc', "
     "'directed': False}; rebuild the file with 'vcut graph'"),
    ({"meta_graph": [3]}, ", got [3]; rebuild the file with 'vcut graph'"),
    ({"meta_graph": {"n": 2**63, "directed": False}},
     ": node count 9223372036854775808 is beyond the 4611686018427387904 vcut supports; "
     "the count in the file is wrong"),
    ({"weight": np.array(["a", "b", "c"])},
     ": edge weights must be a one-dimensional array of real numbers, got <U1 of shape (3,)"),
    ({"dst": np.array([[1, 2, 0]])},
     ": edge targets must be a one-dimensional array of integers, got int64 of shape (1, 3)"),
    ({"node_object": np.array([0, -5, 1])}, ": node_object -5 is not an object id (>= 0) or -1"),
    ({"meta": np.array([1, 2])}, " is not a vcut graph ('meta' is not a JSON string)"),
])
def test_npz_with_missing_or_mistyped_entries(capsys, tmp_path, change, message):
    path = own_npz(tmp_path, **change)
    if "meta" in change:  # own_npz rewrites meta; put the broken one back
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["meta"] = change["meta"]
        np.savez(path, **arrays)
    code, line = run_cli_error(capsys, "stats", path)
    assert code == 10
    assert line.startswith(f"error: {path}") and line.endswith(message), line


def test_node_id_beyond_int64(capsys, tmp_path):
    p = tmp_path / "e.txt"
    p.write_text(f"0 {2**63}\n1 2\n")
    code, line = run_cli_error(capsys, "stats", p)
    assert code == 10
    assert line == (f"error: {p}:1: node id in '0 {2**63}' is larger than {2**63 - 1}, "
                    "the largest id vcut reads")


@pytest.mark.parametrize("name, text, lineno", [
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n{n} {n} 1\n1 2\n", 2),
    ("g.lg", "{n},1,u\n1,2\n", 1),
    ("g.txt", "# vcut graph: {n} nodes, 1 edges, undirected\n0 1\n", 1),
])
def test_headers_declaring_2_31_nodes_are_checked_against_memory(capsys, tmp_path, gib, name,
                                                                  text, lineno):
    p = tmp_path / name
    p.write_text(text.format(n=2**31))
    code, line = run_cli_error(capsys, "stats", p)
    assert code == 2  # too large for memory: exit 2 whatever declares it
    assert line == (f"error: {p}:{lineno}: a graph of 2,147,483,648 nodes needs about 128.0 GiB "
                    "of memory but 1.0 GiB are available; check the node count of the file, or "
                    "use a machine with more memory")


@pytest.mark.parametrize("name, text, lineno", [
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n{n} {n} 1\n1 2\n", 2),
    ("g.lg", "{n},1,u\n1,2\n", 1),
    ("g.txt", "# vcut graph: {n} nodes, 1 edges, undirected\n0 1\n", 1),
])
def test_headers_declaring_2_63_nodes(tmp_path, name, text, lineno):
    p = tmp_path / name
    p.write_text(text.format(n=2**63))
    with pytest.raises(GraphFormatError) as exc:
        read_graph(p)
    assert str(exc.value) == (f"{p}:{lineno}: node count {2**63} is beyond the {2**62} vcut "
                              "supports; the count in the file is wrong")


def test_metis_header_with_zero_constraints(tmp_path):
    p = tmp_path / "g.graph"
    p.write_text("2 1 0 0\n2\n1\n")
    with pytest.raises(GraphFormatError, match=r"g\.graph:1: invalid METIS header '2 1 0 0'$"):
        read_graph(p)


def test_dev_zero_is_refused_not_read_forever(capsys):
    code, line = run_cli_error(capsys, "stats", "/dev/zero", "--format", "edgelist")
    assert code == 2
    assert line == ("error: graph file /dev/zero is a character device, not a regular file; "
                    "give the path of a file")


@pytest.mark.parametrize("name", ["pipe.txt", "pipe.npz"])
def test_a_fifo_is_refused_not_waited_on(capsys, tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    code, line = run_cli_error(capsys, "bfs", fifo, "--source", "0")
    assert code == 2
    assert line == f"error: graph file {fifo} is a FIFO (named pipe), not a regular file; give the path of a file"


def test_a_directory_is_refused(tmp_path):
    (tmp_path / "d.txt").mkdir()
    with pytest.raises(InputError, match=r"d\.txt is a directory, not a regular file"):
        read_graph(tmp_path / "d.txt")


def test_gzip_bomb_is_cut_at_the_bound(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(vcut_base.inputs, "text_limit", lambda: 1 << 20)
    p = tmp_path / "bomb.txt.gz"
    p.write_bytes(gzip.compress(b"0 1\n" * (1 << 19)))  # 2 MiB of text
    code, line = run_cli_error(capsys, "stats", p)
    assert code == 2  # too large for memory: exit 2 whatever declares it
    assert line == (f"error: graph file {p} is larger than 1.0 MiB decompressed, more than this "
                    "machine's memory allows reading; use a smaller file or a machine with more "
                    "memory")


def test_corrupt_gzip_stream(tmp_path):
    p = tmp_path / "g.txt.gz"
    data = bytearray(gzip.compress(b"0 1\n1 2\n" * 1000))
    data[20] ^= 0xFF  # inside the deflate stream: zlib.error, not OSError
    p.write_bytes(bytes(data))
    with pytest.raises(GraphFormatError, match=rf"graph file {p}: cannot read: "):
        read_graph(p)


def test_graph_object_checks_dtypes_and_weight_sum():
    with pytest.raises(GraphFormatError, match=r"^graph: edge sources must be a one-dimensional "
                                               r"array of integers, got float64 of shape \(1,\)$"):
        Graph(n=2, src=np.array([0.0]), dst=np.array([1]), weight=np.ones(1)).validate()
    with pytest.raises(GraphFormatError, match=r"^graph: the node count must be an integer, got 2.5$"):
        Graph(n=2.5, src=np.array([0]), dst=np.array([1]), weight=np.ones(1)).validate()
    with pytest.raises(GraphFormatError, match=r"the vertex weights sum to more than 1\.798e\+308"):
        Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.ones(1),
              node_weight=np.array([1e308, 1e308])).validate()


def test_dependency_graph_checked_against_memory_before_allocating(cfile, monkeypatch):
    from frontend import trace_program
    from ir_graph import build_graph

    trace = trace_program(cfile("p.c", "int main(void) { int s = 0; for (int i = 0; i < 9; i++) "
                                       "s += i; return s & 1; }\n"))
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 1000)
    with pytest.raises(InputError) as exc:
        build_graph(trace)
    n = trace.dynamic_instructions
    assert str(exc.value).startswith(f"the dependency graph of {n:,} instructions (up to ")
    assert str(exc.value).endswith("of memory but 1,000 bytes are available; trace a smaller "
                                   "region (--roi) or fewer instructions (--max-instructions)")


@pytest.mark.parametrize("command", [["analyze", "-p", "2"], ["compare", "-p", "2"]])
def test_a_fifo_npz_given_to_analyze_is_not_opened(capsys, tmp_path, command):
    fifo = tmp_path / "g.npz"
    os.mkfifo(fifo)
    code, line = run_cli_error(capsys, command[0], fifo, *command[1:])
    assert code == 2
    assert line == f"error: graph file {fifo} is a FIFO (named pipe), not a regular file; give the path of a file"
