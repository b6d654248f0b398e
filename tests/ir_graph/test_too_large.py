"""One exit status for "too large for memory" (issue 61, item 13): an input that declares, or
would need, more memory than the machine has is refused with `InputTooLarge`, exit 2, whether
it is a machine of too many cores, a graph header's node count or a gzip that decompresses
past the reading bound (these two were exit 10)."""

import gzip

import pytest

import vcut_base.inputs
import vcut_base.memory
from vcut_base.errors import InputError, InputTooLarge
from ir_graph import read_graph
from tests.helpers import run_cli_error


@pytest.fixture
def gib(monkeypatch):
    """Pretend 1 GiB of memory is available (messages quote it)."""
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 1 << 30)


def test_the_error_is_an_input_error_of_exit_2():
    assert issubclass(InputTooLarge, InputError) and InputTooLarge.exit_code == 2


def test_a_machine_too_large(capsys, tmp_path, gib):
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 2\n2 3\n3 0\n")
    code, line = run_cli_error(capsys, "analyze", g, "-p", "2", "--machine", "table2:100000")
    # 24 bytes per core pair (mapping.machine.BYTES_PER_CORE_PAIR): 24e10 bytes = 223.5 GiB
    assert (code, line) == (2, "error: a machine of 100,000 cores needs about 223.5 GiB of memory "
                               "but 1.0 GiB are available; use fewer cores (or clusters, -p)")


@pytest.mark.parametrize("name, text, lineno", [
    ("g.graph", "{n} 1\n2\n1\n", 1),
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n{n} {n} 1\n1 2\n", 2),
    ("g.lg", "{n},1,u\n1,2\n", 1),
    ("g.txt", "# vcut graph: {n} nodes, 1 edges, undirected\n0 1\n", 1),
])
def test_a_graph_header_too_large(capsys, tmp_path, gib, name, text, lineno):
    p = tmp_path / name
    p.write_text(text.format(n=2**31))
    code, line = run_cli_error(capsys, "stats", p)
    assert (code, line) == (2, f"error: {p}:{lineno}: a graph of 2,147,483,648 nodes needs about "
                               "128.0 GiB of memory but 1.0 GiB are available; check the node "
                               "count of the file, or use a machine with more memory")
    with pytest.raises(InputTooLarge):
        read_graph(p)


def test_a_gzip_too_large(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(vcut_base.inputs, "text_limit", lambda: 1 << 20)
    p = tmp_path / "g.txt.gz"
    p.write_bytes(gzip.compress(b"0 1\n" * (1 << 19)))  # 2 MiB of text
    code, line = run_cli_error(capsys, "partition", p, "-p", "2")
    assert (code, line) == (2, f"error: graph file {p} is larger than 1.0 MiB decompressed, more "
                               "than this machine's memory allows reading; use a smaller file or "
                               "a machine with more memory")


def test_a_graph_npz_too_large(capsys, tmp_path, monkeypatch):
    import numpy as np

    import vcut_base.npzfile
    from ir_graph import Graph, write_graph

    p = tmp_path / "g.npz"
    m = 100_000  # 1.6 MB of arrays (int32 src, dst, float64 weights)
    write_graph(Graph(n=m + 1, src=np.arange(m, dtype=np.int32),
                      dst=np.arange(1, m + 1, dtype=np.int32), weight=np.ones(m)), p)
    monkeypatch.setattr(vcut_base.npzfile, "available_bytes", lambda: 2 << 20)
    code, line = run_cli_error(capsys, "stats", p)
    assert (code, line) == (2, f"error: {p} declares 1.5 MiB of arrays, more than the memory "
                               "available allows reading; it is corrupt or too large for this "
                               "machine")
