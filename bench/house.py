"""The house's structure in figures: the before/after table of issue 62.

    python bench/house.py                 # this tree, a table
    python bench/house.py --json          # the same as JSON
    python bench/house.py --detail        # also list each offending import
    python bench/house.py --root DIR      # another checkout (e.g. a worktree of an old commit)

Reads the source with `ast` (nothing is imported or run) and counts:

- circles: strongly connected groups of files tied by imports (any import, at the top or inside a
  function, ``from pkg import sub`` resolved to the submodule);
- arrows back up: imports from a package to one above it in the layer order
  vcut_base < frontend < ir_graph < runtime < mapping < vcut (inside vcut: the partitioners
  < vcut.pipeline < vcut.cli), and library modules importing ``vcut.cli``;
- private imports across packages: a module of one top-level package importing a ``_private``
  module of another, or a ``_private`` name from another package's module;
- imports inside functions, of all imports in the library packages;
- the largest module and the modules over 800 lines;
- test modules importing another test module (``tests.conftest`` and the shared helper module
  ``tests.helpers`` are the allowed ones).
"""

import argparse
import ast
import json
import pathlib
import sys

PACKAGES = ("vcut_base", "frontend", "ir_graph", "runtime", "mapping", "vcut")
#: Test modules every test may import: the shared builders and fixtures.
SHARED_TEST_MODULES = ("tests", "tests.conftest", "tests.helpers", "tests.fuzzing")
MAX_LINES = 800


def module_name(root, path):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(current, is_package, node):
    """Absolute names an import statement names (``from a import b`` gives a.b, which resolves
    to the module a.b, to the submodule package a hands b on from, or else to a)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = current if is_package else current.rpartition(".")[0]
    for _ in range(max(node.level - 1, 0)):
        base = base.rpartition(".")[0]
    if node.level:
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    return [f"{base}.{alias.name}" for alias in node.names]


def read(root, directories):
    modules = {}
    for directory in directories:
        for path in sorted((root / directory).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            name = module_name(root, path)
            text = path.read_text()
            tree = ast.parse(text, str(path))
            nested = set()
            for fn in ast.walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    nested.update(id(n) for n in ast.walk(fn)
                                  if isinstance(n, (ast.Import, ast.ImportFrom)))
            imports = []
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    imports.append((resolve(name, path.name == "__init__.py", node),
                                    id(node) in nested, node.lineno))
            modules[name] = {"path": str(path.relative_to(root)), "lines": len(text.splitlines()),
                             "imports": imports}
    return modules


def reexports(modules, root):
    """(package, name) -> the submodule a package's __init__ hands the name on from: its
    ``from .sub import name`` lines and its lazy ``_HOMES = {"sub": ("name", ...)}`` table."""
    found = {}
    for package, info in modules.items():
        if not info["path"].endswith("__init__.py"):
            continue
        tree = ast.parse((root / info["path"]).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                for alias in node.names:
                    found[(package, alias.asname or alias.name)] = f"{package}.{node.module}"
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                    and any(isinstance(t, ast.Name) and t.id == "_HOMES" for t in node.targets)):
                for key, value in zip(node.value.keys, node.value.values):
                    for item in getattr(value, "elts", []):
                        found[(package, item.value)] = f"{package}.{key.value}"
    return found


def edges(modules, handed_on):
    """module -> set of imported modules of this tree. A name resolves to its longest known
    prefix; ``from package import name`` to the submodule the package hands the name on from."""
    out = {}
    for name, info in modules.items():
        targets = set()
        for names, _, _ in info["imports"]:
            for target in names:
                package, _, last = target.rpartition(".")
                target = handed_on.get((package, last), target)
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        out[name] = targets
    return out


def circles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def layer(module):
    top = module.split(".")[0]
    rank = PACKAGES.index(top) * 10
    if top == "vcut":
        if module.startswith("vcut.cli") or module == "vcut.__main__":  # python -m vcut: the CLI
            rank += 2
        elif module.startswith("vcut.pipeline"):
            rank += 1
    return rank


def import_graph(root):
    """``(library, graph)``: the library modules of the tree at ``root`` (`read`) and which
    of them each imports (`edges`)."""
    root = pathlib.Path(root).resolve()
    library = read(root, [p for p in PACKAGES if (root / p).is_dir()])
    return library, edges(library, reexports(library, root))


def measure(root):
    root = pathlib.Path(root).resolve()
    library, graph = import_graph(root)
    back_up, private, inside, total = [], [], 0, 0
    for name, targets in graph.items():
        for target in targets:
            if layer(target) > layer(name):
                back_up.append(f"{name} -> {target}")
            if target.split(".")[0] != name.split(".")[0] and any(
                    part.startswith("_") and not part.startswith("__") for part in target.split(".")):
                private.append(f"{name} -> {target}")
    for name, info in library.items():  # a _private name taken from another package's module
        for names, _, _ in info["imports"]:
            for target in names:
                module, _, last = target.rpartition(".")
                if (module in library and last.startswith("_") and not last.startswith("__")
                        and module.split(".")[0] != name.split(".")[0]):
                    private.append(f"{name} -> {target}")
    for info in library.values():
        for _, nested, _ in info["imports"]:
            total += 1
            inside += nested
    largest = max(library.values(), key=lambda info: info["lines"])
    over = sorted((info["path"], info["lines"]) for info in library.values()
                  if info["lines"] > MAX_LINES)
    tests = read(root, ["tests"]) if (root / "tests").is_dir() else {}
    test_imports = []
    for name, info in tests.items():
        for names, _, _ in info["imports"]:
            for target in names:
                while target and target not in tests:
                    target = target.rpartition(".")[0]
                if (target.startswith("tests.")
                        and target not in SHARED_TEST_MODULES and target != name):
                    test_imports.append(f"{name} -> {target}")
    return {
        "modules": len(library),
        "lines": sum(info["lines"] for info in library.values()),
        "circles": circles(graph),
        "arrows_back_up": sorted(back_up),
        "private_across_packages": sorted(private),
        "imports_inside_functions": inside,
        "imports": total,
        "largest_module": [largest["path"], largest["lines"]],
        "modules_over_800": over,
        "test_modules_importing_test_modules": sorted(set(test_imports)),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--detail", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.root)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    rows = [
        ("library modules / lines", f"{figures['modules']} / {figures['lines']:,}"),
        ("circles between files", len(figures["circles"])),
        ("arrows back up", len(figures["arrows_back_up"])),
        ("private imports across packages", len(figures["private_across_packages"])),
        ("imports inside functions", f"{figures['imports_inside_functions']} of {figures['imports']}"),
        ("largest module", "{} ({} lines)".format(*figures["largest_module"])),
        ("modules over 800 lines", len(figures["modules_over_800"])),
        ("test modules importing test modules", len(figures["test_modules_importing_test_modules"])),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if args.detail:
        for key in ("circles", "arrows_back_up", "private_across_packages", "modules_over_800",
                    "test_modules_importing_test_modules"):
            for item in figures[key]:
                print(f"{key}: {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
