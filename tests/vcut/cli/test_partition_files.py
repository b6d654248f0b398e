"""Partition files given to ``--partition`` that hung or were tracebacks (issue 11, section 4)."""

import os

import pytest

import vcut_base.inputs
from vcut_base.errors import InputError
from vcut.output import read_assignment


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "p.part"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as exc:
        read_assignment(str(fifo))
    assert str(exc.value) == (f"partition file {fifo} is a FIFO (named pipe), not a regular file; "
                              "give the path of a file")


@pytest.mark.parametrize("word", ["99999999999999999999999", "\u00b2", "1e3"])
def test_words_that_are_no_int64_cluster_id(tmp_path, word):
    f = tmp_path / "p.part"
    f.write_text(f"0\n{word}\n1\n")
    with pytest.raises(InputError) as exc:
        read_assignment(str(f))
    assert str(exc.value) == (f"partition file {f}: {word!r} is not a cluster id; expected one "
                              "integer per line (as 'vcut partition -o' writes)")


def test_a_file_beyond_the_read_bound(tmp_path, monkeypatch):
    import vcut.output

    monkeypatch.setattr(vcut.output, "text_limit", lambda: 10)
    f = tmp_path / "p.part"
    f.write_text("0\n" * 6)
    with pytest.raises(InputError, match=r"partition file .*p\.part is larger than 10 bytes"):
        read_assignment(str(f))
    monkeypatch.setattr(vcut.output, "text_limit", vcut_base.inputs.text_limit)
    assert read_assignment(str(f)).tolist() == [0] * 6
