"""Machine models: Table 2 presets, XY routes, machine files, the host reader."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from mapping.machine import MEMORY_CYCLES, host, load_machine, machine_from_dict, table2


def test_table2_mesh_shapes_and_numa_by_hand():
    m = table2(64)
    assert (m.mesh_rows, m.mesh_cols) == (8, 8) and m.cores == 64
    assert (table2(8).mesh_rows, table2(8).mesh_cols) == (2, 4)
    assert (table2(1024).mesh_rows, table2(1024).mesh_cols) == (32, 32)
    # quadrants: core 0 top-left, 7 top-right, 56 bottom-left, 63 bottom-right
    assert [int(m.numa_of_core[c]) for c in (0, 7, 56, 63, 27, 36)] == [0, 1, 2, 3, 0, 3]
    # latency: 100 cycles + 2 per hop between quadrant corners (0,0) (0,7) (7,0) (7,7)
    assert m.numa_latency[0, 0] == MEMORY_CYCLES
    assert m.numa_latency[0, 1] == MEMORY_CYCLES + 2 * 7
    assert m.numa_latency[0, 3] == MEMORY_CYCLES + 2 * 14
    assert np.array_equal(m.numa_latency, m.numa_latency.T)
    line = table2(1)
    assert line.numa_nodes == 1 and line.numa_latency.tolist() == [[MEMORY_CYCLES]]


def test_xy_routing():
    m = table2(16)  # 4 x 4
    assert m.hops(0, 15) == 6 and m.hops(5, 5) == 0
    assert m.route(0, 6) == [((0, 0), (0, 1)), ((0, 1), (0, 2)), ((0, 2), (1, 2))]  # X first, then Y
    assert m.route(6, 0) == [((1, 2), (1, 1)), ((1, 1), (1, 0)), ((1, 0), (0, 0))]


def test_specs_and_round_trip(tmp_path):
    assert load_machine("mesh:4x4").name == "mesh:4x4"
    assert load_machine("table2:32").mesh_cols == 8
    m = table2(8)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m.to_dict()))
    back = load_machine(str(path))
    assert back.to_dict() == {**m.to_dict(), "name": m.name}


@pytest.mark.parametrize("data, message", [
    ({"mesh": [2, 2]}, "field 'cores' is required"),
    ({"cores": 0}, "field 'cores' must be a positive integer, got 0"),
    ({"cores": 4, "mesh": [2, 3]}, "field 'mesh' 2 x 3 has 6 cores, but 'cores' is 4"),
    ({"cores": 4, "mesh": [2]}, "field 'mesh' must be [rows, cols], got [2]"),
    ({"cores": 4, "core_speed": [1, 1]}, "field 'core_speed' must list 4 speeds, got [1, 1]"),
    ({"cores": 4, "core_speed": [1, 1, -2, 1]}, "core_speed[2] must be a positive number, got -2"),
    ({"cores": 2, "numa": {"node_of_core": [0, 3], "latency_cycles": [[100, 150], [150, 100]]}},
     "numa node_of_core[1] = 3 is not a node 0..1"),
    ({"cores": 2, "numa": {"latency_cycles": [[100, 150]]}}, "numa 'latency_cycles' must be a square matrix"),
    ({"cores": 2, "cache": {"l3_bytes": 4}}, "unknown cache field 'l3_bytes'"),
    ({"cores": 2, "coress": 4}, "unknown field 'coress'"),
    ({"cores": 4, "clock_ghz": "fast"}, "field 'clock_ghz' must be a positive number, got 'fast'"),
])
def test_machine_file_errors_name_field_and_value(data, message):
    with pytest.raises(InputError) as exc:
        machine_from_dict(data, "machine file m.json")
    assert str(exc.value).startswith("machine file m.json: ")
    assert message in str(exc.value)


def test_bad_specs(tmp_path):
    with pytest.raises(InputError, match="give the core count"):
        load_machine("table2:many")
    with pytest.raises(InputError, match="no such file"):
        load_machine(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{ cores: 4 }")
    with pytest.raises(InputError, match="not valid JSON"):
        load_machine(str(bad))


def test_host_reader_on_a_fake_sys_tree(tmp_path):
    cpu = tmp_path / "devices" / "system" / "cpu"
    node = tmp_path / "devices" / "system" / "node"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text("0-7\n")
    for k, (cpus, dist) in enumerate([("0-3", "10 21"), ("4-7", "21 10")]):
        d = node / f"node{k}"
        d.mkdir(parents=True)
        (d / "cpulist").write_text(cpus + "\n")
        (d / "distance").write_text(dist + "\n")
    m = host(str(tmp_path))
    assert m.cores == 8 and m.numa_of_core.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert m.numa_latency.tolist() == [[100.0, 210.0], [210.0, 100.0]]
    assert m.hops(0, 7) == 7 and m.hop_cycles == 0.0
    with pytest.raises(InputError, match="host topology is not available"):
        host(str(tmp_path / "missing"))


def test_this_hosts_topology_reads():
    m = host()
    assert m.cores >= 1 and m.numa_latency.shape[0] >= 1


HWLOC2 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0">
    <object type="Package" os_index="0">
      <object type="NUMANode" os_index="0" local_memory="1000"/>
      <object type="Core" os_index="0"><object type="PU" os_index="0"/></object>
      <object type="Core" os_index="1"><object type="PU" os_index="1"/></object>
    </object>
    <object type="Package" os_index="1">
      <object type="NUMANode" os_index="1" local_memory="1000"/>
      <object type="Core" os_index="2"><object type="PU" os_index="2"/><object type="PU" os_index="3"/></object>
    </object>
  </object>
  <distances2 type="NUMANode" nbobjs="2" kind="5" name="NUMALatency" indexing="os">
    <indexes length="4">0 1 </indexes>
    <u64values length="12">10 21 21 10 </u64values>
  </distances2>
</topology>
"""


def test_hwloc_xml(tmp_path):
    from mapping.machine import hwloc_xml

    path = tmp_path / "topo.xml"
    path.write_text(HWLOC2)
    m = load_machine(f"hwloc:{path}")
    assert m.cores == 4 and m.numa_of_core.tolist() == [0, 0, 1, 1]
    assert m.numa_latency.tolist() == [[100.0, 210.0], [210.0, 100.0]]
    assert m.meta["cpus"] == [0, 1, 2, 3] and m.hop_cycles == 0.0
    # without a distance matrix: Linux's defaults (10 local, 20 remote)
    path.write_text(HWLOC2.split("  <distances2")[0] + "</topology>\n")
    assert hwloc_xml(path).numa_latency.tolist() == [[100.0, 200.0], [200.0, 100.0]]
    path.write_text("<topology><object type='Machine'></object></topology>")
    with pytest.raises(InputError, match="lists no processing units"):
        hwloc_xml(path)
    path.write_text("not xml")
    with pytest.raises(InputError, match="cannot read it as XML"):
        hwloc_xml(path)


@pytest.mark.parametrize("p,mesh", [(6, (-2, -3)), (6, (2.0, 3)), (1, (True, 1)), (4, (0, 4))])
def test_table2_refuses_a_mesh_side_that_is_not_a_positive_integer(p, mesh):
    with pytest.raises(InputError, match="a mesh's sides are positive integers"):
        table2(p, mesh)


def test_table2_refuses_a_boolean_core_count():
    with pytest.raises(InputError, match="at least one core"):
        table2(True)
