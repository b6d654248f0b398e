"""Every name the benchmark scripts import from vcut's own packages exists.

The scripts in bench/ run on a lent GPU machine or once a session, not in the suite, so a
module renamed or split under them goes unnoticed until the run fails (bench_multilevel.py
read ``runtime.multilevel._cpu`` for weeks after it was split). This reads each script's
imports, top level and inside functions alike, and resolves every one that names a project
package, without running the script."""

import ast
import glob
import importlib
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"vcut_base", "frontend", "ir_graph", "runtime", "mapping", "vcut"}
SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "bench", "*.py")))


def project_imports(path):
    """``(line, module, name or None)`` for each import of a project module in ``path``."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names
                      if a.name.split(".")[0] in PACKAGES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in PACKAGES:
            found += [(node.lineno, node.module, a.name) for a in node.names]
    return found


def unresolved(module, name):
    """Why ``from module import name`` (or ``import module``) would fail, or None."""
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        return f"{module}: {e}"
    if name is None or name == "*" or hasattr(mod, name):
        return None
    if importlib.util.find_spec(f"{module}.{name}") is not None:  # a submodule
        return None
    return f"{module} has no {name}"


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


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_every_project_import_of_a_bench_script_resolves(path):
    bad = [f"line {line}: {why}" for line, module, name in project_imports(path)
           if (why := unresolved(module, name))]
    assert not bad, f"{os.path.basename(path)}: " + "; ".join(bad)
