"""The one line of a failed compilation (`frontend.compile._failure_message`): the first
error quoted, shortened, or the absence of any diagnostic named."""

from frontend.compile import QUOTED_ERROR, _failure_message


def test_the_first_error_is_quoted_with_the_sources_name():
    diag = ("/src/a.c:3:1: warning: unused\n/src/a.c:4:9: error: expected ';'\n"
            "    4 | x = 1\n/src/a.c:7:2: error: later\n2 errors generated.")
    assert _failure_message("/src/a.c", 1, diag) == (
        "compilation of a.c failed (compiler exit 1): a.c:4:9: error: expected ';'; fix the "
        "errors the compiler reported")


def test_a_long_first_error_is_cut():
    long = "/src/a.c:1:1: error: " + "x" * 500
    got = _failure_message("/src/a.c", 1, long)
    quoted = got.split(": ", 1)[1].rsplit("; ", 1)[0]
    assert len(quoted) == QUOTED_ERROR and quoted.endswith("...")
    assert quoted.startswith("a.c:1:1: error: xxx")


def test_no_diagnostics():
    assert _failure_message("/src/a.c", -9, "") == (
        "compilation of a.c failed (compiler exit -9) without printing a diagnostic; compile "
        "a.c by hand to see why")
