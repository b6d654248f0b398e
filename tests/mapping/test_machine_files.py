"""Machine specs and files that crashed or exhausted memory (issue 11, section 4)."""

import os

import numpy as np
import pytest

import vcut_base.memory
from vcut_base.errors import InputError
from ir_graph import Graph, write_graph
from vcut.pipeline.analysis import analyze_graph
from mapping.machine import hwloc_xml, load_machine, machine_from_dict
from vcut.cli import main


@pytest.fixture
def gib(monkeypatch):
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 1 << 30)


def refused(spec):
    with pytest.raises(InputError) as exc:
        load_machine(spec)
    return str(exc.value)


def test_a_directory_fifo_or_non_utf8_file_is_refused(tmp_path):
    d = tmp_path / "m.json"
    d.mkdir()
    assert refused(str(d)) == f"machine file {d} is a directory, not a regular file; give the path of a file"
    os.mkfifo(tmp_path / "p.json")
    assert refused(str(tmp_path / "p.json")).endswith("is a FIFO (named pipe), not a regular file; "
                                                      "give the path of a file")
    f = tmp_path / "latin1.json"
    f.write_bytes(b'{"cores": 4, "name": "caf\xe9"}')
    assert refused(str(f)) == f"machine file {f}: not UTF-8 text (byte 25); write it as UTF-8 JSON"


def test_meshes_that_cannot_fit_are_refused_before_allocating(gib):
    assert refused("mesh:1000x1000") == ("a machine of 1,000,000 cores needs about 21.8 TiB of "
                                         "memory but 1.0 GiB are available; use fewer cores "
                                         "(or clusters, -p)")
    assert refused("table2:1000000000").startswith("a machine of 1,000,000,000 cores needs about "
                                                   "2.4e+19 bytes of memory")


@pytest.mark.parametrize("data, message", [
    ({"cores": 10**12}, "field 'cores' must be at most 2147483647, got 1000000000000"),
    ({"cores": 4, "issue_window": 2**63}, f"field 'issue_window' must be at most 2147483647, got {2**63}"),
    ({"cores": 4, "clock_ghz": 1e301}, "field 'clock_ghz' must be at most 1e+300, got 1e+301"),
    ({"cores": 2, "numa": {"latency_cycles": [[1, 2], [3]]}},
     "numa 'latency_cycles' must be a square matrix of positive numbers, got [[1, 2], [3]]"),
    ({"cores": 2, "numa": {"latency_cycles": [[1]], "node_of_core": [True, 0]}},
     "numa node_of_core[0] = True is not a node 0..0"),
])
def test_machine_file_numbers_out_of_range(data, message):
    with pytest.raises(InputError) as exc:
        machine_from_dict(data, "machine file m.json")
    assert str(exc.value) == f"machine file m.json: {message}"


def test_hwloc_file_with_a_bad_attribute(tmp_path):
    x = tmp_path / "t.xml"
    x.write_text('<topology><object type="Machine"><object type="PU" os_index="zero"/></object></topology>')
    with pytest.raises(InputError, match=r"hwloc file .*t\.xml: an attribute is not a number "
                                         r"\(invalid literal for int\(\) with base 10: 'zero'\); "
                                         r"write it with 'lstopo --of xml'$"):
        hwloc_xml(str(x))


def test_many_clusters_refused_before_the_pair_matrices(gib):
    m = 20000
    g = Graph(n=m + 1, src=np.arange(m), dst=np.arange(1, m + 1), weight=np.ones(m))
    with pytest.raises(InputError) as exc:
        analyze_graph(g, m, "random", load_machine("table2:4"))
    assert str(exc.value) == ("mapping 20,000 clusters needs about 8.9 GiB of memory but 1.0 GiB "
                              "are available; use fewer clusters (-p)")


def test_cli_p_beyond_the_edges(tmp_path, capsys):
    path = tmp_path / "g.npz"
    write_graph(Graph(n=3, src=np.array([0, 1]), dst=np.array([1, 2]), weight=np.ones(2)), path)
    assert main(["analyze", str(path), "-p", "1000000000"]) == 2
    assert capsys.readouterr().err.strip() == ("error: 1000000000 clusters but the graph has only "
                                               "2 edges; use p <= 2")
    assert main(["analyze", str(path), "-p", "2", "--machine", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: machine file {tmp_path} is a directory, "
                                               "not a regular file; give the path of a file")
