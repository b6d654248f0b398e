"""Out-of-core vertex cuts on the Dask LocalCluster (2 worker processes): the workers
read the file in pieces, and the assignment written is the one of the in-memory
distributed run (the sequential one for hash cuts) on the file as `read_graph` reads
it, repeats merged in each ``duplicates`` mode, self-loops, renumbered ids and weights
included; bad input and a lost worker."""

import gzip
import json
import os
import shutil
import signal
import threading
import time

import numpy as np
import pytest

from vcut_base.errors import GraphFormatError, InputError
from ir_graph import Graph, read_graph, write_graph
from tests.helpers import dataset
from vcut import distributed as D
from vcut.cli import main
from vcut.outofcore import partition_file
from vcut.output import write_partition
from vcut.partition import partition_graph


def _edge_list(path, seed=0, m=3000, weighted=False, loops=True):
    """An edge list with a header, comments (a block of them in the middle), ids 0, 7,
    14, ..., repeats in both directions and (with ``loops``) self-loops."""
    rng = np.random.default_rng(seed)
    lines = ["# made by a test", "u v" + (" w" if weighted else "")]
    for e in range(m):
        u = int(rng.zipf(1.7) % 150) * 7
        v = int(rng.integers(0, 150)) * 7
        if not loops and u == v:
            v = (v + 7) % 1050
        lines.append(f"{u}\t{v}" + (f" {rng.integers(1, 6)}" if weighted else ""))
        if e % 500 == 0:
            lines.append("% comment")
        if e == m // 2:  # 3.7 kB of comments: a piece without edges
            lines.extend(["# " + "x" * 60] * 60)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _written(path):
    return np.loadtxt(path, dtype=np.int64, ndmin=1)


# one hash cut, HDRF and a weighted greedy cut (the others share their paths; the
# in-memory run they are compared with is checked against the sequential one in
# test_distributed.py)
@pytest.mark.parametrize("algo, weighted", [("random", True), ("hdrf", False), ("wb-libra", True)])
def test_the_file_partition_is_the_in_memory_one(dask_client, tmp_path, algo, weighted):
    path = _edge_list(tmp_path / "g.txt", seed=len(algo), weighted=weighted)
    g = read_graph(path, duplicates="keep")  # every line an edge of its own
    out = str(tmp_path / "g.parts")
    got = partition_file(path, 6, algo, client=dask_client, output=out, piece_bytes=2500,
                         batch=400, duplicates="keep")
    want = D.partition_distributed(g, 6, algo, client=dask_client, batch=400)
    assert got.info["pieces"] > 5
    assert got.info["self_loops"] == want.info["self_loops"] > 0
    assert got.info["repeated_edges"] == want.info["repeated_edges"] > 0
    assert np.array_equal(_written(out), want.assignment)
    a, b = got.metrics, want.metrics
    assert (a.replication_factor, a.vertex_copies, a.counts, a.cut_vertices) == \
        (b.replication_factor, b.vertex_copies, b.counts, b.cut_vertices)
    assert a.loads == pytest.approx(b.loads, rel=1e-12)
    assert a.avg_cut_degree == pytest.approx(b.avg_cut_degree, rel=1e-12)
    assert (got.n, got.edges, got.simple_edges) == (g.n, g.m, want.info["simple_edges"])
    if algo in D.HASH_CUTS:  # exact: the sequential cut
        seq = partition_graph(g, 6, algo)
        assert np.array_equal(_written(out), seq.assignment)


# a hash cut on 2 workers and HDRF on 1 (the sequential stream) and 2 (coordinated ingress)
@pytest.mark.parametrize("duplicates", ["first", "sum", "keep"])
@pytest.mark.parametrize("algo, workers", [("dbh", 2), ("hdrf", 1), ("hdrf", 2)])
def test_repeats_are_merged_as_read_graph_merges_them(dask_client, tmp_path, algo, workers,
                                                      duplicates):
    path = _edge_list(tmp_path / "g.txt", seed=11, weighted=True)
    g = read_graph(path, duplicates=duplicates, directed=False)  # as vcut partition reads it
    keep = read_graph(path, duplicates="keep")
    loops = keep.src == keep.dst  # repeated self-loops, in more than one piece
    assert loops.sum() > len(np.unique(keep.src[loops])) > 1
    out = str(tmp_path / "g.parts")
    kw = {} if duplicates == "first" else {"duplicates": duplicates}  # first: the default
    got = partition_file(path, 6, algo, client=dask_client, workers=workers, output=out,
                         piece_bytes=2500, batch=400, **kw)
    if algo in D.HASH_CUTS or workers == 1:
        want = partition_graph(g, 6, algo)
    else:
        want = D.partition_distributed(g, 6, algo, client=dask_client, batch=400)
    write_partition(want, str(tmp_path / "want"), details=False)
    assert (tmp_path / "g.parts").read_bytes() == (tmp_path / "want").read_bytes()
    assert got.info["pieces"] > 5
    assert got.info["merged"] == g.meta["merged"]
    merged = g.meta["merged"]
    assert (merged["repeated_edges"] > 0 and merged["reverse_pairs"] > 0) == (duplicates != "keep")
    for k in ("self_loops", "repeated_edges", "simple_edges", "edges"):
        assert got.info[k] == want.info[k], k
    assert (got.n, got.edges, got.simple_edges) == (g.n, g.m, want.info["simple_edges"])
    a, b = got.metrics, want.metrics
    assert (a.replication_factor, a.vertex_copies, a.counts) == \
        (b.replication_factor, b.vertex_copies, b.counts)
    assert a.loads == pytest.approx(b.loads, rel=1e-12)


def test_a_bad_duplicates_value(dask_client, tmp_path):
    path = _edge_list(tmp_path / "g.txt", m=50)
    with pytest.raises(InputError) as exc:
        partition_file(path, 2, "dbh", client=dask_client, duplicates="last")
    assert str(exc.value) == "duplicates must be one of first, sum, keep, got 'last'"


def test_npz_and_declared_nodes(dask_client, tmp_path):
    rng = np.random.default_rng(5)
    g = Graph(n=400, src=rng.integers(0, 300, 2000), dst=rng.integers(0, 300, 2000),
              weight=rng.integers(1, 4, 2000).astype(float)).validate()
    for name, kw in (("g.npz", {"piece_edges": 300}), ("g.edgelist", {"piece_bytes": 3000})):
        path = str(tmp_path / name)
        write_graph(g, path)  # the edge list gets vcut's header: 400 nodes, isolated ones kept
        out = str(tmp_path / (name + ".parts"))
        got = partition_file(path, 5, "hdrf", client=dask_client, output=out, batch=300, **kw)
        want = D.partition_distributed(read_graph(path), 5, "hdrf", client=dask_client, batch=300)
        assert got.n == 400 and got.info["pieces"] > 3
        assert got.info["merged"] is None  # read as written: vcut wrote it
        assert np.array_equal(_written(out), want.assignment)


def test_one_worker_one_piece_is_the_sequential_stream(dask_client, tmp_path):
    path = _edge_list(tmp_path / "g.txt", seed=9, loops=False)
    out = str(tmp_path / "g.parts")
    partition_file(path, 4, "wb-libra", client=dask_client, workers=1, output=out)
    assert np.array_equal(_written(out), partition_graph(read_graph(path), 4,
                                                         "wb-libra").assignment)


def test_a_worker_killed_mid_run_changes_nothing(dask_client, tmp_path):
    src = _edge_list(tmp_path / "g.txt", seed=4, m=16000)
    kw = dict(client=dask_client, batch=100, piece_bytes=30_000)
    partition_file(src, 8, "wb-libra", output=str(tmp_path / "want"), **kw)
    pids = list(dask_client.run(os.getpid).values())
    done, ingress = {}, threading.Event()

    def say(line):
        if line.startswith("coordinated ingress"):
            ingress.set()

    def job():
        done["r"] = partition_file(src, 8, "wb-libra", output=str(tmp_path / "got"), progress=say,
                                   **kw)

    t = threading.Thread(target=job)
    t.start()
    assert ingress.wait(60)
    assert t.is_alive(), "the run ended before the fault: give it more rounds"
    os.kill(pids[0], signal.SIGKILL)
    t.join(300)
    assert np.array_equal(_written(tmp_path / "got"), _written(tmp_path / "want"))
    deadline = time.time() + 60  # the nanny brings the worker back for the next tests
    while len(dask_client.nthreads()) < 2 and time.time() < deadline:
        time.sleep(0.2)


def test_cli_out_of_core(tmp_path, capsys):
    path = _edge_list(tmp_path / "g.txt", seed=3)
    out = tmp_path / "g.parts"
    rc = main(["partition", path, "-p", "4", "--algo", "dbh", "--workers", "2", "--out-of-core",
               "--duplicates", "keep", "-o", str(out), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pieces"] == 1 and doc["files"] == [str(out)]
    assert not os.path.exists(str(out) + ".replicas.npz")
    seq = partition_graph(read_graph(path, duplicates="keep"), 4, "dbh")
    assert np.array_equal(_written(out), seq.assignment)
    assert doc["replication_factor"] == seq.metrics.replication_factor


def test_cli_out_of_core_merges_as_without_it(tmp_path, capsys):
    path = _edge_list(tmp_path / "g.txt", seed=12, weighted=True)
    docs, notes = [], []
    for name, extra in (("ooc.parts", ["--out-of-core"]), ("mem.parts", [])):
        rc = main(["partition", path, "-p", "4", "--algo", "hdrf", "--workers", "1", "--batch",
                   "300", "-o", str(tmp_path / name), "--json"] + extra)
        assert rc == 0
        got = capsys.readouterr()
        docs.append(json.loads(got.out))
        notes.append([ln for ln in got.err.splitlines() if "listed both ways" in ln])
    assert (tmp_path / "ooc.parts").read_bytes() == (tmp_path / "mem.parts").read_bytes()
    ooc, mem = docs
    assert ooc["merged_on_read"] == mem["merged_on_read"]
    assert ooc["merged_on_read"]["duplicates"] == "first"
    assert ooc["merged_on_read"]["reverse_pairs"] > 0
    for k in ("self_loops", "repeated_edges", "replication_factor", "vertex_copies"):
        assert ooc[k] == mem[k], k
    assert len(notes[0]) == 1 and notes[0] == notes[1]


@pytest.mark.parametrize("argv, message", [
    (["--out-of-core"], "give --workers N"),
    (["--out-of-core", "--workers", "2", "--algo", "ne"], "does not run distributed"),
    (["--out-of-core", "--workers", "2", "--algo", "multilevel"], "drop --out-of-core"),
])
def test_cli_bad_out_of_core_options(tmp_path, capsys, argv, message):
    path = _edge_list(tmp_path / "g.txt", m=50)
    rc = main(["partition", path, "-p", "4"] + argv)
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_bad_files(dask_client, tmp_path):
    lines = ["0 1", "1 2"] * 125 + ["2 3 5"] * 200  # the columns change where piece 2 starts
    bad = tmp_path / "cols.txt"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(GraphFormatError, match="from about line 251 on have 3 columns where the first edge line has 2"):
        partition_file(str(bad), 2, "dbh", client=dask_client, piece_bytes=1000)
    word = tmp_path / "word.txt"
    word.write_text("0 1\n" * 300 + "0 one\n" + "1 2\n" * 300)
    with pytest.raises(GraphFormatError) as exc:
        partition_file(str(word), 2, "dbh", client=dask_client, piece_bytes=500)
    with pytest.raises(GraphFormatError) as direct:
        read_graph(str(word))
    assert str(exc.value) == str(direct.value) and ":301:" in str(exc.value)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(GraphFormatError, match="no edges"):
        partition_file(str(empty), 2, "dbh", client=dask_client)
    loops = tmp_path / "loops.txt"
    loops.write_text("3 3\n4 4\n")
    with pytest.raises(InputError, match="no edges"):
        partition_file(str(loops), 2, "dbh", client=dask_client)
    few = _edge_list(tmp_path / "few.txt", m=20, loops=False)
    with pytest.raises(InputError, match="clusters but the graph has only"):
        partition_file(few, 1000, "dbh", client=dask_client)
    for kw, message in (({"batch": 0}, "batch"), ({"workers": 0}, "workers"),
                        ({"capacities": [1, 2]}, "capacities given"),
                        ({"seed": -1}, "seed")):
        with pytest.raises(InputError, match=message):
            partition_file(few, 3, "hdrf", client=dask_client, **kw)
    with pytest.raises(InputError, match="gunzip"):
        gz = tmp_path / "g.txt.gz"
        gz.write_bytes(gzip.compress(b"0 1\n"))
        partition_file(str(gz), 2, "dbh", client=dask_client)


def _metis(tmp_path, name="g.graph"):
    """A weighted METIS file with comments and isolated vertices (blank lines)."""
    rng = np.random.default_rng(8)
    g = Graph(n=400, src=rng.integers(0, 300, 2500), dst=rng.integers(0, 300, 2500),
              weight=rng.integers(1, 5, 2500).astype(float)).validate()
    path = tmp_path / name
    write_graph(g, str(path))
    lines = path.read_text().splitlines()
    lines.insert(0, "% made by a test")
    lines.insert(120, "% a comment between vertex lines")
    return path, lines


@pytest.mark.parametrize("algo", ["graphx-crvc", "w-libra"])
def test_metis_in_pieces_is_the_in_memory_metis(dask_client, tmp_path, algo):
    path, lines = _metis(tmp_path)
    path.write_text("\n".join(lines) + "\n")
    out = str(tmp_path / "g.parts")
    got = partition_file(str(path), 6, algo, client=dask_client, output=out, piece_bytes=1500,
                         batch=300)
    g = read_graph(str(path))
    want = D.partition_distributed(g, 6, algo, client=dask_client, batch=300)
    assert got.info["pieces"] > 10 and got.n == 400 == g.n
    assert np.array_equal(_written(out), want.assignment)


def _metis_repeats(tmp_path):
    """`_metis` with two neighbours listed twice at both ends (other weights the second
    time): the header counts them."""
    path, lines = _metis(tmp_path)
    n, m, fmt = lines[1].split()
    for k in (2, 300):  # vertex lines in the first and in a later piece
        u = k - 1 if k < 120 else k - 2  # the comment at 120
        tok = lines[k].split()
        v = int(tok[0])  # u's first neighbour (1-based)
        lines[k] += f" {v} 7"
        kv = v + 1 if v + 1 < 120 else v + 2  # v's line
        lines[kv] += f" {u} 7"
    lines[1] = f"{n} {int(m) + 2} {fmt}"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("duplicates", ["first", "sum", "keep"])
def test_metis_neighbours_listed_twice_merge_as_read_graph_merges_them(dask_client, tmp_path,
                                                                      duplicates):
    path = _metis_repeats(tmp_path)
    g = read_graph(path, duplicates=duplicates)
    assert g.meta["merged"]["repeated_edges"] == (2 if duplicates != "keep" else 0)
    out = str(tmp_path / "g.parts")
    kw = {} if duplicates == "first" else {"duplicates": duplicates}
    got = partition_file(path, 6, "dbh", client=dask_client, output=out, piece_bytes=1500, **kw)
    want = partition_graph(g, 6, "dbh")
    write_partition(want, str(tmp_path / "want"), details=False)
    assert (tmp_path / "g.parts").read_bytes() == (tmp_path / "want").read_bytes()
    assert got.info["merged"] == g.meta["merged"] and got.edges == g.m
    assert got.metrics.loads == pytest.approx(want.metrics.loads, rel=1e-12)


@pytest.mark.parametrize("change", ["few", "extra", "count", "asymmetric", "token"])
def test_bad_metis_in_pieces_words_it_as_read_graph(dask_client, tmp_path, change):
    path, lines = _metis(tmp_path, f"{change}.graph")
    n, m = 400, int(lines[1].split()[1])
    body = 2  # lines[2] is vertex 0's line
    if change == "few":
        lines = lines[:-3]
    elif change == "extra":
        lines.append("1")
    elif change == "count":
        lines[1] = f"{n} {m + 1} 001"
    elif change == "asymmetric":  # vertex 350 (no edges: ids < 300) gets one neighbour, m kept
        k = body + 350 + 1  # the comment inserted at 120 shifts the later vertex lines
        assert lines[k] == ""
        lines[k] = "1 1"
        u = lines[body + 1 + 150].split()  # another line loses one neighbour: 2m entries kept
        lines[body + 1 + 150] = " ".join(u[2:])
    else:
        lines[body + 250] = lines[body + 250] + " x"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GraphFormatError) as direct:
        read_graph(str(path))
    with pytest.raises(GraphFormatError) as pieces:
        partition_file(str(path), 4, "dbh", client=dask_client, piece_bytes=1500)
    assert str(pieces.value) == str(direct.value)
