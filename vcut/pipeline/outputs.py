"""The pipeline's outputs: a folder checked before any work, and files written whole.

Every file goes through a temporary file and a rename (`vcut_base.atomic`), so a failed
run leaves nothing half-written; JSON is strict (`json_text`: NaN and infinities become
``null``).
"""

import json
import math
import os

import numpy as np

from vcut_base.atomic import atomic_output, check_output_path, check_outputs
from vcut_base.errors import OutputError

__all__ = ["output_dir", "prepare_output_dir", "write_files", "json_text"]


def output_dir(path, names):
    """Create OUTDIR if needed and check that its files can be written."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"output directory {path} exists and is not a directory; "
                          "give a directory for -o")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output directory {path}: {exc.strerror}") from None
    for name in names:
        check_output_path(os.path.join(path, name))


def _strict(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {(k.item() if isinstance(k, np.generic) else k): _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    if isinstance(x, (np.generic, np.ndarray)):
        return _strict(x.tolist())
    return x


def json_text(obj, indent=None):
    """Strict JSON (RFC 8259) of ``obj``: NaN and infinities become ``null``.

    Python's ``json`` writes ``NaN`` and ``Infinity``, which strict parsers
    (``jq``, JavaScript) reject; numpy scalars and arrays become plain values.
    """
    return json.dumps(_strict(obj), indent=indent, allow_nan=False)


def prepare_output_dir(path, names, inputs=()):
    """Create the folder ``path`` if needed and check that its files ``names`` can be
    written and are none of the ``inputs`` (`vcut_base.atomic.check_outputs`)."""
    output_dir(path, names)
    check_outputs([os.path.join(path, name) for name in names], inputs)


def write_files(path, contents):
    """Write ``contents`` (``(name, text or bytes)`` pairs) into the folder ``path``, each
    whole (`vcut_base.atomic.atomic_output`); returns their absolute paths in order."""
    files = []
    for name, data in contents:
        out = os.path.join(path, name)
        with atomic_output(out, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
        files.append(os.path.abspath(out))
    return files
