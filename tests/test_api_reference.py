"""The public API's docstrings: numpydoc sections, and the Examples run as doctests.

The public API is each package's ``__all__`` (`PACKAGES`); the same list is what the
Sphinx reference in docs/api documents (tests/test_docs_build.py builds it). Every
public function and class has a summary line, a ``Parameters`` section when it takes
arguments, a ``Returns`` (or ``Yields``) section when it is a function that returns
something, and an ``Examples`` section whose examples run here, from the repository
root (they read ``samples/`` and ``tests/data/``), and pass.
"""

import doctest
import importlib
import inspect
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The packages whose ``__all__`` is the documented public API, bottom layer first.
PACKAGES = ("frontend", "ir_graph", "runtime", "mapping", "vcut", "vcut.pipeline")

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def public_objects():
    """``(dotted name, object)`` of every public function and class."""
    found = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found.append((f"{package}.{name}", obj))
    return found


OBJECTS = public_objects()


def sections(doc):
    """The numpydoc section titles of ``doc`` (a title line underlined with dashes)."""
    lines = inspect.cleandoc(doc).splitlines()
    return {lines[i].strip() for i in range(len(lines) - 1)
            if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
            and len(lines[i + 1].strip()) == len(lines[i].strip())}


def takes_arguments(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False
    return any(name not in ("self", "cls") for name in params)


def returns_something(func):
    annotation = inspect.signature(func).return_annotation
    return annotation is not None and annotation is not type(None)


def test_the_public_api_is_not_empty():
    names = {name.split(".")[0] for name, _ in OBJECTS}
    assert names == {"frontend", "ir_graph", "runtime", "mapping", "vcut"}
    assert len(OBJECTS) >= 50


@pytest.mark.parametrize("name,obj", OBJECTS, ids=[name for name, _ in OBJECTS])
def test_numpydoc_sections(name, obj):
    doc = inspect.getdoc(obj)
    assert doc and doc.splitlines()[0].strip(), f"{name}: no docstring"
    found = sections(obj.__doc__)
    assert "Examples" in found, f"{name}: no Examples section"
    if takes_arguments(obj):
        assert found & {"Parameters", "Attributes"}, f"{name}: no Parameters section"
    if inspect.isfunction(obj) and returns_something(obj):
        assert found & {"Returns", "Yields"}, f"{name}: no Returns section"


@pytest.mark.parametrize("name,obj", OBJECTS, ids=[name for name, _ in OBJECTS])
def test_examples_run(name, obj, monkeypatch):
    monkeypatch.chdir(ROOT)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={})
    examples = sum(len(test.examples) for test in tests)
    assert examples, f"{name}: no examples to run"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
