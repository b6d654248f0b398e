"""The documentation names only what exists: every module path (``vcut/cuts/greedy.py``,
``tests/vcut/test_partition.py``), every dotted reference to one of the six packages
(``vcut.pipeline.analyze_graph``, ``runtime.scheduler.jobs.registry``) in README.md and
docs/*.md resolves in this tree.

Fast and without running the library: a module is found with `importlib.util.find_spec`
(which imports the packages above it, whose ``__init__`` hands names on lazily, never the
module itself), and a name after the module is looked up in the module's source with `ast`.
"""

import ast
import functools
import glob
import importlib.util
import os
import re

import pytest

from tests.helpers import ROOT

PACKAGES = ("vcut_base", "frontend", "ir_graph", "runtime", "mapping", "vcut")
#: Top-level folders whose paths the docs may name (besides the packages).
FOLDERS = PACKAGES + ("tests", "bench", "samples", "docs")
#: What a dotted word ending in one of these is: a file name (``mapping.json``,
#: ``docs/vcut.md``), not a module.
FILE_SUFFIXES = {"json", "html", "md", "py", "npz", "txt", "svg", "png", "csv", "toml", "c",
                 "ll", "graph", "metis", "edgelist", "edges", "el", "mtx", "lg", "gz", "yaml",
                 "log", "pdf", "h", "so", "sh", "ptx", "cfg", "ini"}

_PATH = re.compile(r"(?<![\w./~-])((?:{})/[\w./*-]*[\w*])".format("|".join(FOLDERS)))
#: A file named alone (``simulate.py``): in docs/<package>.md a file of that package (or of
#: tests/ or bench/), in README.md a file anywhere in the tree.
_BARE = re.compile(r"(?<![\w./~<>*-])(\w+\.py)\b")
_DOTTED = re.compile(r"(?<![\w./~-])((?:{})(?:\.\w+)+)".format("|".join(PACKAGES)))


def documents():
    """README.md and docs/*.md, as paths relative to the root."""
    docs = sorted(f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs"))
                  if name.endswith(".md"))
    return ["README.md"] + docs


def references(text):
    """``(kind, reference, line)`` of every path and dotted reference in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in _PATH.finditer(line):
            found.append(("path", match.group(1).rstrip("."), number))
        for match in _BARE.finditer(line):
            found.append(("file", match.group(1), number))
        for match in _DOTTED.finditer(line):
            dotted = match.group(1)
            if dotted.rsplit(".", 1)[-1].lower() in FILE_SUFFIXES:
                continue
            found.append(("dotted", dotted, number))
    return found


@functools.cache
def _files_named(name):
    """The tree's paths whose file name is ``name``, relative to the root."""
    return tuple(os.path.relpath(path, ROOT) for folder in FOLDERS
                 for path in glob.glob(os.path.join(ROOT, folder, "**", name), recursive=True))


def file_exists(name, doc):
    """Whether the file ``name``, named alone in ``doc``, is one of its package's (docs/vcut.md:
    under vcut/), of tests/ or bench/, or for README.md anywhere in the tree."""
    package = os.path.basename(doc)[:-3]
    homes = (package, "tests", "bench") if package in PACKAGES else FOLDERS
    return any(path.split(os.sep)[0] in homes for path in _files_named(name))


def path_exists(path):
    """A file or folder of the tree, or a glob over its files (``tests/vcut/test_*.py``)."""
    if "*" in path:
        return bool(glob.glob(os.path.join(ROOT, path)))
    return os.path.exists(os.path.join(ROOT, path))


@functools.cache
def _spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


@functools.cache
def _names(origin):
    """(the names a module binds at its top level, with its ``__all__`` and its lazy
    ``_HOMES`` table; every identifier anywhere in it) of the source file ``origin``."""
    with open(origin, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), origin)
    top, anywhere = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                top.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):  # optional imports, fallbacks
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    top.update((a.asname or a.name).split(".")[0] for a in inner.names)
                elif isinstance(inner, (ast.FunctionDef, ast.ClassDef)):
                    top.add(inner.name)
                elif isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        top.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.isidentifier():
            anywhere.add(node.value)  # __all__, _HOMES, getattr names
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            anywhere.add(node.name)
        elif isinstance(node, ast.Name):
            anywhere.add(node.id)
        elif isinstance(node, ast.Attribute):
            anywhere.add(node.attr)
        elif isinstance(node, ast.arg) or isinstance(node, ast.keyword) and node.arg:
            anywhere.add(node.arg)
    homes = {n.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id in ("__all__", "_HOMES")
                     for t in node.targets)
             for n in ast.walk(node.value) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)}
    return frozenset(top | homes), frozenset(anywhere)


def resolves(dotted):
    """Whether ``dotted`` is a module of the tree, or a module and names it defines: the
    first name bound at the module's top level (or handed on by its package), the ones
    after it named somewhere in the module's source."""
    parts = dotted.split(".")
    spec, k = None, 0
    for i in range(1, len(parts) + 1):
        if spec is not None and spec.submodule_search_locations is None:
            break  # a module, not a package: the rest are its names
        found = _spec(".".join(parts[:i]))
        if found is None:
            break
        spec, k = found, i
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return False
    if not os.path.abspath(spec.origin).startswith(os.path.abspath(ROOT) + os.sep):
        return False  # another installation's copy
    rest = parts[k:]
    if not rest:
        return True
    top, anywhere = _names(spec.origin)
    return rest[0] in top and all(name in anywhere for name in rest[1:])


@functools.cache
def _all_references():
    out = []
    for doc in documents():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
            for kind, ref, line in references(fh.read()):
                out.append((doc, line, kind, ref))
    return out


def test_the_extractor_sees_each_kind():
    text = ("see `vcut/cuts/greedy.py` and tests/vcut/test_x.py; `mapping.placement.place`,\n"
            "mapping.json, docs/vcut.md, vcut.pipeline. (`simulate.py`)")
    assert references(text) == [
        ("path", "vcut/cuts/greedy.py", 1), ("path", "tests/vcut/test_x.py", 1),
        ("dotted", "mapping.placement.place", 1), ("path", "docs/vcut.md", 2),
        ("file", "simulate.py", 2), ("dotted", "vcut.pipeline", 2)]
    assert resolves("vcut.pipeline.analyze_graph") and resolves("runtime.multilevel")
    assert resolves("mapping.placement.Placement.clusters_of")
    assert not resolves("mapping.analyze") and not resolves("vcut._kernels")
    assert not resolves("runtime.multilevel.partition_graph")
    assert file_exists("simulate.py", "docs/mapping.md")
    assert not file_exists("analyze.py", "docs/mapping.md")  # vcut/cli/analyze.py is vcut's


def test_the_docs_name_references():
    kinds = {kind for _, _, kind, _ in _all_references()}
    assert kinds == set(_CHECKS)


_CHECKS = {"path": lambda ref, doc: path_exists(ref), "file": file_exists,
           "dotted": lambda ref, doc: resolves(ref)}


@pytest.mark.parametrize("kind", list(_CHECKS))
def test_every_reference_resolves(kind):
    stale = [f"{doc}:{line}: {ref}" for doc, line, k, ref in _all_references()
             if k == kind and not _CHECKS[kind](ref, doc)]
    assert not stale, f"{len(stale)} {kind} references name nothing in this tree:\n" + \
        "\n".join(stale)


def slug(heading):
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces
    as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.cache
def anchors(doc):
    """The anchors of the headings of ``doc`` (a repeated one numbered ``-1``, ``-2`` ...)."""
    found, seen, fenced = set(), {}, False
    with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("```"):
                fenced = not fenced
            heading = None if fenced else re.match(r"#+\s+(.*)", line)
            if heading:
                anchor = slug(heading.group(1))
                seen[anchor] = seen.get(anchor, -1) + 1
                found.add(f"{anchor}-{seen[anchor]}" if seen[anchor] else anchor)
    return found


def test_every_link_to_a_section_finds_its_heading():
    """A link ``docs/runtime.md#a-heading`` still names a heading: headings name modules."""
    broken = []
    for doc in documents():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                for target, anchor in re.findall(r"\]\(([^)\s#]*)#([^)\s]+)\)", line):
                    path = os.path.normpath(os.path.join(os.path.dirname(doc), target)) \
                        if target else doc
                    if not path.endswith(".md") or not os.path.exists(os.path.join(ROOT, path)):
                        continue
                    if anchor not in anchors(path):
                        broken.append(f"{doc}:{number}: {path}#{anchor}")
    assert not broken, f"{len(broken)} links name no heading:\n" + "\n".join(broken)
