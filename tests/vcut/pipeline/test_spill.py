"""Disk-backed analysis (--spill): spill files, mapped traces, identical figures, bad input."""

import errno
import json
import os
import zipfile

import numpy as np
import pytest

from frontend import load_trace

from vcut_base import arrays
from vcut_base.arrays import is_mapped, spill, spilled_bytes, spilling
from vcut_base.errors import InputError, OutputError, TraceFormatError
from mapping import budget
from tests.helpers import run_cli
from vcut.pipeline.analysis import analyze_graph
from mapping.machine import load_machine


def test_spilled_arrays_live_in_unlinked_files(tmp_path):
    with spilling(tmp_path, min_bytes=1024):
        a = arrays.empty(1000, np.int64)  # 8000 bytes: spilled, zero-filled
        z = arrays.zeros((10, 30), np.float32)  # 1200 bytes
        small = arrays.empty(10, np.int64)  # 80 bytes: stays in memory
        x = np.arange(500, dtype=np.int32)
        s = spill(x)
        assert is_mapped(a) and is_mapped(z) and is_mapped(s) and is_mapped(s[3:])
        assert not is_mapped(small) and not is_mapped(x)
        assert a.dtype == np.int64 and a.shape == (1000,) and not a.any()
        assert z.shape == (10, 30) and not z.any()
        assert s.dtype == np.int32 and s.tolist() == list(range(500))
        assert spill(s) is s  # already on disk: not copied again
        assert spilled_bytes() == 8000 + 1200 + 2000
        a[:] = 7
        assert int(a.sum()) == 7000
        assert os.listdir(tmp_path) == []  # unlinked as soon as mapped
        assert arrays.head(a, 10).base is not None and is_mapped(arrays.head(a, 10))
    assert arrays.spill_directory() is None and spilled_bytes() == 0
    plain = arrays.empty(1000, np.int64)
    assert not is_mapped(plain) and spill(x) is x
    assert not is_mapped(arrays.head(x, 3)) and arrays.head(x, 3).tolist() == [0, 1, 2]


def test_spilling_nests_and_restores(tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    with spilling(tmp_path):
        with spilling(inner, min_bytes=1):
            assert arrays.spill_directory() == str(inner)
            assert is_mapped(arrays.empty(4, np.uint8))
        assert arrays.spill_directory() == str(tmp_path)
        assert not is_mapped(arrays.empty(4, np.uint8))  # below the default 16 MiB


def test_bad_spill_directories(tmp_path):
    with pytest.raises(InputError, match="does not exist or is not a directory"):
        with spilling(tmp_path / "missing"):
            pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        with spilling(tmp_path / "file"):
            pass


def test_a_full_disk_is_an_output_error_at_allocation(tmp_path, monkeypatch):
    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with spilling(tmp_path, min_bytes=1):
        with pytest.raises(OutputError) as info:
            arrays.empty(100, np.int64)
    msg = str(info.value)
    assert "cannot reserve" in msg and f"free space in {tmp_path}" in msg
    assert "another --spill directory" in msg and info.value.exit_code == 9
    assert os.listdir(tmp_path) == []


def test_a_mapped_trace_equals_the_read_one(tmp_path, strassen8):
    path = str(tmp_path / "t.npz")
    strassen8[0].save(path)
    read, mapped = load_trace(path), load_trace(path, mmap=True)
    for name in ("dyn_sid", "dyn_act", "bs_start", "mem_dyn", "mem_addr", "mem_size",
                 "mem_write", "obj_size"):
        a, b = getattr(read, name), getattr(mapped, name)
        assert b.dtype == a.dtype and np.array_equal(a, b), name
        assert is_mapped(b) and not is_mapped(a), name
    assert list(mapped.static.fn_name) == list(read.static.fn_name)
    mapped.dyn_sid[0] += 1  # copy-on-write: the file is not changed
    assert np.array_equal(load_trace(path, mmap=True).dyn_sid, read.dyn_sid)


def test_a_member_shorter_than_its_header_is_refused(tmp_path, strassen8):
    path = tmp_path / "t.npz"
    strassen8[0].save(str(path))
    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(bad, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "dyn_sid.npy":
                data = data[:-4]  # one int32 short of what the header declares
            zout.writestr(info.filename, data)
    with pytest.raises(TraceFormatError, match="is not a readable vcut trace"):
        load_trace(str(bad), mmap=True)


def test_spilled_analysis_has_identical_figures(tmp_path, strassen8):
    trace, g = strassen8
    machine = load_machine("mesh:2x2")
    plain = analyze_graph(g, 4, "wb-libra", machine, object_bytes=trace.obj_size)
    spilled = tmp_path / "spill"
    spilled.mkdir()
    with spilling(spilled, min_bytes=1):
        from ir_graph import build_graph

        path = str(tmp_path / "t.npz")
        trace.save(path)
        g2 = build_graph(load_trace(path, mmap=True))
        assert is_mapped(g2.src) and is_mapped(g2.weight) and is_mapped(g2.node_object)
        disk = analyze_graph(g2, 4, "wb-libra", machine, object_bytes=trace.obj_size)
        assert spilled_bytes() > 0
    assert np.array_equal(g2.src, g.src) and np.array_equal(g2.weight, g.weight)
    assert is_mapped(disk.clustering.cluster) and is_mapped(disk.result.finish)
    assert np.array_equal(disk.clustering.cluster, plain.clustering.cluster)
    assert disk.result.makespan == plain.result.makespan
    assert disk.result.hop_bytes == plain.result.hop_bytes
    assert disk.mappers == plain.mappers
    assert os.listdir(spilled) == []


def test_cli_spill(tmp_path, strassen8, capsys):
    path = str(tmp_path / "t.npz")
    strassen8[0].save(path)
    code, plain, _ = run_cli(capsys, "analyze", path, "-p", "4", "--json", "--no-baselines")
    assert code == 0
    code, disk, _ = run_cli(capsys, "analyze", path, "-p", "4", "--json", "--no-baselines",
                            "--spill", str(tmp_path))
    assert code == 0
    a, b = json.loads(plain), json.loads(disk)
    for key in ("makespan", "hop_bytes", "communication_bytes", "partition", "core_of_cluster"):
        assert a[key] == b[key], key
    code, out, err = run_cli(capsys, "analyze", path, "-p", "4", "--spill", str(tmp_path / "no"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: spill directory {tmp_path / 'no'} does not exist")


def test_budget_with_spill():
    need, _ = budget.estimate(1_000_000, 8, baselines=False, spill=True)
    assert need == budget.BASE_BYTES + 1_000_000 * budget.SPILL_BYTES_PER_NODE
    with pytest.raises(InputError, match=r"keep the large arrays on disk \(--spill DIR\)"):
        budget.check_budget(10_000_000, 8, available=10_000_000)
    # enough memory for the spilled analysis, not enough disk
    with pytest.raises(InputError, match=r"needs about .* in /scratch but .* is free there"):
        budget.check_budget(10_000_000, 8, available=2**40, spill="/scratch", disk=10**6)
    with pytest.raises(InputError, match=r"with --spill but") as info:
        budget.check_budget(10_000_000, 8, available=10_000_000, spill="/scratch", disk=2**50)
    assert "--spill DIR" not in str(info.value)
    budget.check_budget(10_000_000, 8, available=2**40, spill="/scratch", disk=2**50)


@pytest.mark.parametrize("name", ["email-Enron.txt.gz", "cit-HepPh.lg.gz", "finan512.graph.gz"])
def test_text_graphs_read_straight_into_spill_files(tmp_path, name):
    from ir_graph import read_graph
    from tests.helpers import dataset

    path = dataset(name)
    plain = read_graph(path)
    with spilling(tmp_path, min_bytes=1):
        disk = read_graph(path)
        assert is_mapped(disk.src) and is_mapped(disk.dst)
        assert spilled_bytes() > 0
    assert disk.n == plain.n
    for key in ("src", "dst", "weight"):
        a, b = getattr(plain, key), getattr(disk, key)
        assert a.dtype == b.dtype and np.array_equal(a, b), key
    assert os.listdir(tmp_path) == []


def test_cli_partition_spill_writes_the_same_files(tmp_path, capsys):
    from ir_graph import read_graph, write_graph
    from tests.helpers import dataset

    g = read_graph(dataset("email-Enron.txt.gz"))
    npz = str(tmp_path / "g.npz")
    write_graph(g, npz)
    outs = {}
    for label, extra in (("plain", []), ("disk", ["--spill", str(tmp_path)])):
        out = str(tmp_path / f"{label}.part")
        code, doc, _ = run_cli(capsys, "partition", npz, "-p", "16", "--algo", "hdrf", "-o", out,
                               "--json", *extra)
        assert code == 0
        outs[label] = (json.loads(doc), out)
    (a, pa), (b, pb) = outs["plain"], outs["disk"]
    assert a["replication_factor"] == b["replication_factor"] and a["loads"] == b["loads"]
    assert open(pa, "rb").read() == open(pb, "rb").read()
    za, zb = np.load(pa + ".replicas.npz"), np.load(pb + ".replicas.npz")
    assert all(np.array_equal(za[k], zb[k]) for k in za.files if k != "meta")


def test_cli_partition_spill_on_a_full_disk_is_exit_9(tmp_path, capsys, monkeypatch):
    from tests.helpers import dataset

    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    out = tmp_path / "a.part"
    code, _, err = run_cli(capsys, "partition", dataset("email-Enron.txt.gz"), "-p", "4",
                           "-o", str(out), "--spill", str(tmp_path))
    assert code == 9 and err.count("\n") == 1
    assert err.startswith("error: cannot reserve") and f"free space in {tmp_path}" in err
    assert not out.exists() and os.listdir(tmp_path) == []
