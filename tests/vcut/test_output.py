"""The partition writer (`vcut.output`): the plain file's bytes and the pair's contents.

The plain file was ``"\\n".join(map(str, assignment.tolist())) + "\\n"``; `int_lines`
makes it with array operations and must give the same bytes, which `reference` spells
out the straightforward way.
"""

import hashlib
import json
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir_graph import Graph
from vcut.output import int_lines, read_partition, write_partition
from vcut.partition import partition_graph

INT64 = np.iinfo(np.int64)


def reference(values):
    """One decimal integer per line, as Python's ``str`` writes it."""
    return "".join(f"{int(v)}\n" for v in values).encode("ascii") if len(values) else b"\n"


def joined(values, chunk=1 << 20):
    return b"".join(int_lines(values, chunk))


def test_known_texts():
    assert joined(np.array([], dtype=np.int32)) == b"\n"
    assert joined(np.array([0], dtype=np.int32)) == b"0\n"
    assert joined(np.array([0, 0, 0], dtype=np.int32)) == b"0\n0\n0\n"
    assert joined(np.array([7, 0, 12, 3], dtype=np.int32)) == b"7\n0\n12\n3\n"
    assert joined(np.array([-1, 0, -10, 5])) == b"-1\n0\n-10\n5\n"
    assert joined(np.array([-3, -4])) == b"-3\n-4\n"
    assert joined(np.array([2**31 - 1, 0], dtype=np.int32)) == b"2147483647\n0\n"
    assert joined(np.array([INT64.min, INT64.max])) == (
        b"-9223372036854775808\n9223372036854775807\n")
    assert joined(np.array([2**64 - 1, 0], dtype=np.uint64)) == b"18446744073709551615\n0\n"


@pytest.mark.parametrize("digits", range(1, 19))
def test_every_width_boundary(digits):
    v = 10**digits
    values = np.array([v - 1, v, v + 1, 0, -(v - 1), -v, 9, -9], dtype=np.int64)
    for chunk in (1, 3, 1 << 20):
        assert joined(values, chunk) == reference(values)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint16, np.uint32, np.uint64])
def test_every_integer_dtype_over_its_whole_range(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    values = rng.integers(info.min, info.max, 5000, endpoint=True, dtype=dtype)
    values[:2] = info.min, info.max
    assert joined(values, 777) == reference(values)


@pytest.mark.parametrize("p", [1, 8, 16, 1000, 2**31 - 1])
def test_random_assignments_in_pieces(p):
    rng = np.random.default_rng(p)
    values = rng.integers(0, p, 10_000).astype(np.int32)
    whole = joined(values)
    assert whole == reference(values)
    assert joined(values, 999) == whole and joined(values, 1) == whole


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(INT64.min, INT64.max), max_size=60), st.integers(1, 70))
def test_any_int64_values_any_pieces(values, chunk):
    a = np.array(values, dtype=np.int64)
    assert joined(a, chunk) == reference(values)


def test_plain_file_alone(tmp_path):
    values = np.array([0, 3, 12, 0, 2**31 - 1, 7], dtype=np.int32)
    out = tmp_path / "a.part"
    assert write_partition(SimpleNamespace(assignment=values), str(out), details=False) == [
        str(out)]
    assert out.read_bytes() == b"0\n3\n12\n0\n2147483647\n7\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.part"]


def test_pair_of_a_partition(tmp_path):
    rng = np.random.default_rng(11)
    n, m = 300, 4000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)  # with repeats and self-loops
    part = partition_graph(Graph(n=n, src=src, dst=dst, weight=rng.random(m)), 13, "wb-libra")
    out = tmp_path / "g.part"
    assert write_partition(part, str(out)) == [str(out), str(out) + ".replicas.npz"]
    plain = reference(part.assignment)
    assert out.read_bytes() == plain
    meta, arrays = read_partition(str(out) + ".replicas.npz")
    assert meta["plain_sha256"] == hashlib.sha256(plain).hexdigest()
    assert meta["format"] == "vcut-partition" and meta["p"] == 13
    assert json.dumps(meta["metrics"]) == json.dumps(part.metrics.to_dict())
    ptr, clusters = part.replicas()
    np.testing.assert_array_equal(arrays["replica_ptr"], ptr)
    np.testing.assert_array_equal(arrays["replica_cluster"], clusters)
    np.testing.assert_array_equal(arrays["master"], part.masters())
    np.testing.assert_array_equal(arrays["assignment"], part.assignment)
    np.testing.assert_array_equal(arrays["simple_assignment"], part.simple_assignment)
    assert arrays["replica_ptr"].dtype == ptr.dtype and arrays["master"].dtype == np.int32
    assert arrays["replica_cluster"].dtype == clusters.dtype
