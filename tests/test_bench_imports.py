"""Every name the benchmark scripts import from vcut's own packages exists.

The scripts in bench/ run on a lent GPU machine or once a session, not in the suite, so a
module renamed or split under them goes unnoticed until the run fails (bench_multilevel.py
read ``runtime.multilevel._cpu`` for weeks after it was split). This reads each script's
imports, top level and inside functions alike, and resolves every one that names a project
package, and every attribute read through a name bound to a project module (``K.edge_cut``),
without running the script."""

import ast
import glob
import importlib
import importlib.util
import os
import types

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"vcut_base", "frontend", "ir_graph", "runtime", "mapping", "vcut"}
SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "bench", "*.py")))


def _imports(path):
    """The parsed ``path`` and ``(line, module, name or None, alias or None)`` for each
    import of a project module in it."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None, a.asname) for a in node.names
                      if a.name.split(".")[0] in PACKAGES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in PACKAGES:
            found += [(node.lineno, node.module, a.name, a.asname or a.name)
                      for a in node.names]
    return tree, found


def project_imports(path):
    """``(line, module, name or None)`` for each import of a project module in ``path``."""
    return [(line, module, name) for line, module, name, _ in _imports(path)[1]]


def _lookup(module, name):
    """What ``from module import name`` binds (a submodule where ``module`` has no such
    attribute); ImportError or AttributeError where it would fail."""
    mod = importlib.import_module(module)
    if hasattr(mod, name):
        return getattr(mod, name)
    if importlib.util.find_spec(f"{module}.{name}") is not None:
        return importlib.import_module(f"{module}.{name}")
    raise AttributeError(f"{module} has no {name}")


def module_attributes(path):
    """``(line, module, attribute)`` for each ``alias.attribute`` in ``path`` whose alias
    names a project module (``import runtime.gpu as G``, ``from runtime import gpu``)."""
    tree, found = _imports(path)
    alias = {}
    for _, module, name, bound in found:
        if name is None:
            if bound:
                alias[bound] = module
            continue
        try:
            obj = _lookup(module, name)
        except (ImportError, AttributeError):
            continue  # the import's own test reports it
        if isinstance(obj, types.ModuleType):
            alias[bound] = obj.__name__
    return sorted((node.lineno, alias[node.value.id], node.attr) for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id in alias)


def unresolved(module, name):
    """Why ``from module import name`` (or ``import module``) would fail, or None."""
    try:
        if name is None:
            importlib.import_module(module)
        elif name != "*":
            _lookup(module, name)
    except ImportError as e:
        return f"{module}: {e}"
    except AttributeError as e:
        return str(e)
    return None


def test_the_scripts_are_found():
    names = {os.path.basename(p) for p in SCRIPTS}
    assert {"bench_multilevel.py", "bench_cli.py", "bench_quality.py"} <= names


def test_the_reader_finds_nested_and_dotted_imports(tmp_path):
    p = tmp_path / "s.py"
    p.write_text("import os\nimport runtime.gpu\nfrom numpy import zeros\n"
                 "def f():\n    from runtime.multilevel import _cpu as K, refinement\n")
    assert project_imports(str(p)) == [(2, "runtime.gpu", None),
                                       (5, "runtime.multilevel", "_cpu"),
                                       (5, "runtime.multilevel", "refinement")]
    # the import the check exists for fails, its replacement and a submodule resolve
    assert unresolved("runtime.multilevel", "_cpu") == "runtime.multilevel has no _cpu"
    assert unresolved("runtime.multilevel", "refinement_kernels") is None
    assert unresolved("runtime.multilevel", "multilevel_partition") is None
    assert unresolved("runtime.no_such_module", None).startswith("runtime.no_such_module:")
    p.write_text("from runtime.multilevel import refinement_kernels as K, gpu\n"
                 "K.edge_cut(1)\nK.no_such_kernel\ngpu.PROFILE = {}\n")
    assert module_attributes(str(p)) == [(2, "runtime.multilevel.refinement_kernels",
                                          "edge_cut"),
                                         (3, "runtime.multilevel.refinement_kernels",
                                          "no_such_kernel"),
                                         (4, "runtime.multilevel.gpu", "PROFILE")]


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_every_project_import_of_a_bench_script_resolves(path):
    bad = [f"line {line}: {why}" for line, module, name in project_imports(path)
           if (why := unresolved(module, name))]
    assert not bad, f"{os.path.basename(path)}: " + "; ".join(bad)


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_every_attribute_a_bench_script_reads_from_a_project_module_exists(path):
    bad = [f"line {line}: {module} has no {attr}"
           for line, module, attr in module_attributes(path)
           if not hasattr(importlib.import_module(module), attr)]
    assert not bad, f"{os.path.basename(path)}: " + "; ".join(bad)
