"""Input files and the memory budget (`vcut_base.inputs`, `vcut_base.memory`)."""

import gzip
import os

import pytest

import vcut_base.memory
from vcut_base.errors import GraphFormatError, InputError, InputTooLarge, TraceFormatError
from vcut_base.inputs import check_input_file, read_input
from vcut_base.memory import check_memory, format_bytes


def test_regular_files_pass_and_others_are_named(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("x")
    assert check_input_file(f, "graph file").st_size == 1
    os.mkfifo(tmp_path / "p")
    cases = [(tmp_path / "p", "a FIFO (named pipe)"), (tmp_path, "a directory"),
             ("/dev/null", "a character device")]
    for path, kind in cases:
        with pytest.raises(InputError) as exc:
            check_input_file(path, "graph file")
        assert str(exc.value) == f"graph file {path} is {kind}, not a regular file; give the path of a file"
    with pytest.raises(TraceFormatError, match=r"^trace file not found: .*nope$"):
        check_input_file(tmp_path / "nope", "trace file", missing=TraceFormatError)


def test_read_input_bounds_plain_and_gzip(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"x" * 2000)
    assert read_input(plain, "graph file", limit=2000) == b"x" * 2000
    # too large for memory: InputTooLarge (exit 2) whatever error class the reader uses
    with pytest.raises(InputTooLarge, match=r"^graph file .*a\.txt is larger than 1,000 bytes, more"):
        read_input(plain, "graph file", GraphFormatError, limit=1000)
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(b"y" * (3 << 20)))
    assert len(read_input(gz, "graph file", limit=3 << 20)) == 3 << 20
    with pytest.raises(InputTooLarge, match=r"is larger than 2\.0 MiB decompressed"):
        read_input(gz, "graph file", GraphFormatError, limit=2 << 20)
    gz.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage")
    with pytest.raises(GraphFormatError, match=r"^graph file .*a\.txt\.gz: cannot read: "):
        read_input(gz, "graph file", GraphFormatError)


def test_check_memory_names_need_and_budget(monkeypatch):
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 3 << 30)
    check_memory(3 << 30, "x", "y")
    with pytest.raises(InputError) as exc:
        check_memory(7 << 40, "a machine of 10 cores", "use fewer cores")
    assert str(exc.value) == ("a machine of 10 cores needs about 7.0 TiB of memory but 3.0 GiB "
                              "are available; use fewer cores")
    assert format_bytes(2**70) == "1.18e+21 bytes" and format_bytes(512) == "512 bytes"


def test_jobs_that_fit_counts_cpus_of_the_affinity_mask_and_the_memory_share(monkeypatch):
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 1000)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr("os.cpu_count", lambda: 64)  # the mask, not the machine
    assert vcut_base.memory.usable_cpus() == 3
    assert vcut_base.memory.jobs_that_fit(8, 100) == 3  # the CPUs
    assert vcut_base.memory.jobs_that_fit(2, 100) == 2  # the count
    assert vcut_base.memory.jobs_that_fit(8, 400) == 2  # 1000 // 400
    assert vcut_base.memory.jobs_that_fit(8, 400, share=0.5) == 1  # 500 // 400
    assert vcut_base.memory.jobs_that_fit(8, 10**9) == 1  # at least one


def test_pass_threads_per_edges_cpus_and_rows_and_the_spans(monkeypatch):
    memory = vcut_base.memory
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    monkeypatch.setattr(memory, "usable_cpus", lambda: 3)
    e = memory.PASS_EDGES
    assert [memory.pass_threads(m) for m in (0, e - 1, e, 2 * e, 2 * e + 1, 10 * e)] \
        == [1, 1, 1, 2, 2, 3]  # PASS_EDGES each at least, one per CPU at most
    assert memory.pass_threads(10 * e, 200) == 2  # rows of 200: half of 1000 holds 2
    assert memory.pass_threads(10 * e, 10**6) == 1  # none fits: one thread all the same
    assert memory.spans(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert memory.spans(2, 3) == [(0, 0), (0, 1), (1, 2)]  # empty spans where m < parts
    assert memory.spans(0, 1) == [(0, 0)]
