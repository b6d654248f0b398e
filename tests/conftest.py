"""Shared helpers for the test suite."""

import json
import os
import textwrap

import pytest

# GPU kernels run under numba's CUDA simulator unless VCUT_REAL_GPU=1 (on a machine with a
# GPU); this must be decided before numba.cuda is first imported.
if os.environ.get("VCUT_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def samples_manifest(name="manifest.json"):
    """The bundled samples (samples/manifest.json; extra.json: our own programs), each
    with its source path."""
    with open(os.path.join(ROOT, "samples", name)) as fh:
        samples = json.load(fh)["samples"]
    for s in samples:
        s["path"] = os.path.join(ROOT, "samples", s["source"])
    return samples


def bump_npz_version(path, delta=1):
    """Rewrite a vcut ``.npz`` in place with its ``format_version`` changed by ``delta``."""
    import numpy as np

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["meta"]))
    meta["format_version"] += delta
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(path, **arrays)


def datasets_dir():
    """The shared real-graph datasets: $VCUT_DATASETS, or ../shared/datasets beside the repo."""
    path = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")
    return os.path.abspath(path)


#: The small real graphs the tests use, shipped with the repository (provenance:
#: tests/data/README.md); the others come from `datasets_dir`.
DATA_DIR = os.path.join(ROOT, "tests", "data")


def dataset(name):
    """Path of a real-graph dataset file: tests/data, else `datasets_dir`; skips when absent."""
    for directory in (DATA_DIR, datasets_dir()):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return path
    pytest.skip(f"dataset {name} not found in {DATA_DIR} or {datasets_dir()} (set VCUT_DATASETS)")


def write_c(directory, name, code):
    """Write dedented C ``code`` to ``directory/name``; return the path."""
    path = os.path.join(directory, name)
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(code).lstrip())
    return path


def marker_line(path, marker):
    """1-based line number of the line containing ``marker``."""
    with open(path) as fh:
        for k, line in enumerate(fh, 1):
            if marker in line:
                return k
    raise AssertionError(f"marker {marker!r} not in {path}")


@pytest.fixture
def cfile(tmp_path):
    """``cfile(name, code)`` writes a C file into the test's directory."""

    def make(name, code):
        return write_c(str(tmp_path), name, code)

    return make


@pytest.fixture(scope="session")
def dask_client():
    """One LocalCluster of 2 worker processes (1 thread each) for the whole session:
    the configuration the scale-out tests are specified on."""
    from runtime.dask_cluster import dask_client as connect

    with connect(workers=2) as client:
        yield client
