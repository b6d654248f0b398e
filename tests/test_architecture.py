"""The house's layering, checked: the import-linter contracts of pyproject.toml kept, and
bench/house.py's figures at zero (no circle between files, no private import across packages,
no library module importing the CLI, no module over 800 lines, no test module importing
another test module)."""

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT


def _house():
    """bench/house.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("house", os.path.join(ROOT, "bench", "house.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def house():
    module = _house()
    return module, module.measure(ROOT)


def _none(items, what):
    """Assert ``items`` is empty; the message lists each one."""
    assert not items, f"{len(items)} {what}:\n" + "\n".join(f"  {item}" for item in items)


def test_no_circle_between_files(house):
    _, figures = house
    _none([" <-> ".join(group) for group in figures["circles"]], "circles between files")


def test_no_private_import_across_packages(house):
    _, figures = house
    _none(figures["private_across_packages"], "private imports across packages")


def test_no_library_module_imports_the_cli(house):
    _, figures = house
    # `python -m vcut` (vcut/__main__.py) is the command line's own entry point
    into_cli = [arrow for arrow in figures["arrows_back_up"]
                if arrow.split(" -> ")[1].startswith("vcut.cli")
                and arrow.split(" -> ")[0] != "vcut.__main__"]
    _none(into_cli, "library modules importing vcut.cli")


def test_no_module_over_the_size_limit(house):
    module, figures = house
    _none([f"{path} ({lines} lines)" for path, lines in figures["modules_over_800"]],
          f"modules over {module.MAX_LINES} lines")


def test_no_test_module_imports_another(house):
    _, figures = house
    _none(figures["test_modules_importing_test_modules"],
          "test modules importing another test module (share builders through tests/helpers.py)")


def test_import_linter_contracts_are_kept():
    lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    if not os.path.exists(lint):
        pytest.skip("import-linter is not installed (pip install -e .[dev])")
    done = subprocess.run([lint, "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    out = done.stdout + done.stderr
    broken = [line.split(" BROKEN")[0] for line in out.splitlines() if " BROKEN" in line]
    details = out[out.index("Broken contracts"):] if "Broken contracts" in out else out
    # lint-imports exits 1 when a contract is broken, and on a bad configuration too
    assert done.returncode == 0, (f"lint-imports exited {done.returncode}; "
                                  f"{len(broken)} contracts broken: {broken}\n{details}")
