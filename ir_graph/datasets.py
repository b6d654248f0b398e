"""The real graphs of the benchmarks: a manifest, and a check of a local copy.

`ir_graph/datasets.toml` (also ``bench/datasets.toml``) lists each graph: its
file name, format, vertex and edge counts, where it comes from, and the
SHA-256 of its uncompressed contents. `verify_datasets` hashes a directory's
copies against it, so anyone can check that they reproduce the figures on
the same bytes. Nothing is downloaded: the manifest says where to get them.
"""

import gzip
import hashlib
import os
import tomllib
from dataclasses import dataclass

from vcut_base.errors import InputError

__all__ = ["MANIFEST", "load_manifest", "verify_datasets", "DatasetCheck"]

#: The manifest shipped with vcut.
MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "datasets.toml")

_FIELDS = {"file": str, "format": str, "vertices": int, "edges": int, "sha256": str,
           "source": str}


@dataclass(frozen=True)
class DatasetCheck:
    """The outcome for one manifest entry.

    Attributes
    ----------
    file : str
        The file name of the manifest (``NAME.gz``).
    status : str
        ``ok``, ``missing``, ``mismatch`` (the contents differ) or
        ``unreadable`` (a file that cannot be decompressed or read).
    path : str or None
        The copy that was checked (``NAME.gz`` or the uncompressed ``NAME``).
    sha256 : str or None
        The SHA-256 found (of the uncompressed contents).
    detail : str
        Why it is unreadable.
    """

    file: str
    status: str
    path: str = None
    sha256: str = None
    detail: str = ""


def load_manifest(path=None):
    """The entries of a datasets manifest (default: the one shipped with vcut).

    Raises
    ------
    InputError
        The file is missing, not TOML, or an entry lacks a field or has one of
        the wrong type.
    """
    path = path or MANIFEST
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read the datasets manifest {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not a TOML datasets manifest: {exc}") from None
    entries = doc.get("dataset")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path} has no [[dataset]] entries")
    for k, entry in enumerate(entries):
        for name, kind in _FIELDS.items():
            if not isinstance(entry.get(name), kind):
                raise InputError(f"{path}: dataset {k + 1} has no {kind.__name__} field {name!r}")
        if len(entry["sha256"]) != 64 or os.path.basename(entry["file"]) != entry["file"]:
            raise InputError(f"{path}: dataset {entry['file']!r} has a malformed sha256 or file")
    return entries


def verify_datasets(directory, manifest=None, progress=None):
    """Check the copies in ``directory`` against the manifest.

    Each entry is looked for as ``NAME.gz`` and as the uncompressed ``NAME``;
    the SHA-256 of the uncompressed contents must match.

    Parameters
    ----------
    directory : str
    manifest : str, optional
        A manifest file (default: vcut's own).
    progress : callable, optional
        Called with each file name before it is hashed.

    Returns
    -------
    list of DatasetCheck
        In manifest order.
    """
    if not os.path.isdir(directory):
        raise InputError(f"datasets directory not found: {directory}; give the directory that "
                         "holds the graph files")
    out = []
    for entry in load_manifest(manifest):
        name = entry["file"]
        plain = name[:-3] if name.endswith(".gz") else name
        path = next((p for p in (os.path.join(directory, name), os.path.join(directory, plain))
                     if os.path.isfile(p)), None)
        if path is None:
            out.append(DatasetCheck(name, "missing"))
            continue
        if progress is not None:
            progress(name)
        try:
            digest = _sha256(path)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            out.append(DatasetCheck(name, "unreadable", path, None, str(exc)))
            continue
        status = "ok" if digest == entry["sha256"] else "mismatch"
        out.append(DatasetCheck(name, status, path, digest))
    return out


def _sha256(path):
    h = hashlib.sha256()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
