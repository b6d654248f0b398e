"""bench/bench_analyze_rate.py's ``--extra`` arguments (issue 63: traces of 10 M+ nodes made
from the bench programs with their defines)."""

import os

import pytest

from tests.helpers import ROOT, bench_module

MATMUL = os.path.join(ROOT, "bench", "programs", "matmul.c")


def test_an_extra_file_alone_is_named_by_its_stem():
    rate = bench_module("bench_analyze_rate")
    assert rate.extra_program(MATMUL) == ("matmul", MATMUL, [])


def test_an_extra_file_takes_its_defines_after_a_colon():
    rate = bench_module("bench_analyze_rate")
    assert rate.extra_program(f"{MATMUL}:N=60,FAST") == ("matmul N=60 FAST", MATMUL,
                                                         ["N=60", "FAST"])


def test_a_relative_extra_file_is_made_absolute(monkeypatch):
    rate = bench_module("bench_analyze_rate")
    monkeypatch.chdir(ROOT)
    assert rate.extra_program("bench/programs/matmul.c:N=4")[1] == MATMUL


@pytest.mark.parametrize("spec, message", [
    (f"{MATMUL}:N=60,", "write the defines as FILE.c:NAME=VALUE,NAME2,..."),
    (f"{MATMUL}:=3", "write the defines as FILE.c:NAME=VALUE,NAME2,..."),
    ("no/such/file.c:N=3", "no file "),
])
def test_a_bad_extra_argument_says_what_to_write(spec, message):
    rate = bench_module("bench_analyze_rate")
    with pytest.raises(SystemExit, match=message.replace(".", r"\.")) as err:
        rate.extra_program(spec)
    assert str(err.value).startswith(f"--extra {spec}: ")
