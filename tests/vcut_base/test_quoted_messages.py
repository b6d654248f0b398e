"""Messages quote at most ~120 characters of what a file holds (issue 61, item 11):
`vcut_base.errors.excerpt` and `quoted`, and the readers of machine files and batch
manifests that quote values read from the file."""

import json

import pytest

from vcut_base.errors import InputError, excerpt, quoted
from mapping.machine import load_machine
from vcut.pipeline.batch import load_manifest


def test_excerpt_keeps_short_text_and_cuts_long_text_around_the_offending_part():
    assert excerpt("2 x") == "'2 x'"
    line = "1 " * 5000 + "x " + "3 " * 100  # 10,202 characters, 'x' at index 10,000
    assert excerpt(line, 10_000, 10_001) == (f"...{line[9941:10061]!r}... "
                                             "(columns 9,942-10,061 of 10,202)")
    assert excerpt("a" * 500) == f"{'a' * 120!r}... (columns 1-120 of 500)"
    assert excerpt("a" * 500, 450) == f"...{'a' * 120!r} (columns 381-500 of 500)"


def test_quoted_values():
    assert quoted([1, 2]) == "[1, 2]" and quoted("ab") == "'ab'"
    big = list(range(1000))
    text = repr(big)
    assert quoted(big) == f"{text[:120]!r}... (columns 1-120 of {len(text):,})"


def test_a_machine_file_with_a_long_value(tmp_path):
    p = tmp_path / "m.json"
    mesh = [1] * 5000
    p.write_text(json.dumps({"cores": 4, "mesh": mesh}))
    with pytest.raises(InputError) as exc:
        load_machine(str(p))
    text = repr(mesh)
    assert str(exc.value) == (f"machine file {p}: field 'mesh' must be [rows, cols], got "
                              f"{text[:120]!r}... (columns 1-120 of {len(text):,})")


def test_a_machine_file_with_a_long_field_name(tmp_path):
    p = tmp_path / "m.json"
    key = "k" * 3000
    p.write_text(json.dumps({"cores": 4, key: 1}))
    with pytest.raises(InputError) as exc:
        load_machine(str(p))
    assert str(exc.value).startswith(f"machine file {p}: unknown field {key[:120]!r}... "
                                     "(columns 1-120 of 3,000); known fields: ")


def test_a_batch_manifest_with_a_long_key(tmp_path):
    p = tmp_path / "runs.json"
    key = "z" * 3000
    p.write_text(json.dumps({"job": [{"sources": ["a.c"]}], key: 1}))
    with pytest.raises(InputError) as exc:
        load_manifest(str(p))
    assert str(exc.value) == (f"{p}: unknown key {key[:120]!r}... (columns 1-120 of 3,000); use "
                              "p, options, job")
