"""Write an `EdgePartition`: the plain assignment and the documented richer file.

Plain file (``OUT``): one cluster id per line, one line per input edge in the
input's edge order (like METIS ``.part`` files), so that any tool can read it.

Richer file (``OUT.replicas.npz``, format "vcut-partition", version 2), arrays:

* ``assignment`` (int32, per input edge);
* ``src``, ``dst``, ``weight``, ``simple_assignment``: the simple graph that
  was partitioned (self-loops out, repeated edges merged) and its clusters;
* ``replica_ptr`` (int64, n + 1), ``replica_cluster`` (int32): the clusters of
  vertex ``v`` are ``replica_cluster[replica_ptr[v]:replica_ptr[v + 1]]``, sorted;
* ``master`` (int32, n): the cluster holding most of the vertex's edge weight
  (ties: lowest id; -1 for vertices without edges);
* ``loads`` (float64, p), ``counts`` (int64, p), ``capacities`` (float64, p);
* ``meta``: JSON with ``format``, ``format_version``, ``plain_sha256`` (the
  SHA-256 of the bytes of the plain file written with it), the run (``algo``,
  ``p``, ``lambda``, ``order``, ``seed``, ``seconds``, ...) and every metric.

The pair is written together: both files are written completely to
temporary files, then ``OUT.replicas.npz`` is renamed into place and ``OUT``
last. A plain file and a richer file beside it whose ``plain_sha256`` does not
match (a run killed between the two renames, or one file replaced by hand) are
refused by `read_assignment` and `read_partition`.
"""

import hashlib
import json
import os

import numpy as np

from frontend.atomic import atomic_output, atomic_outputs
from frontend.errors import InputError
from frontend.inputs import check_input_file, text_limit
from frontend.npzfile import read_versioned_npz

__all__ = ["write_partition", "read_partition", "read_assignment", "PARTITION_FORMAT_VERSION"]

PARTITION_FORMAT_VERSION = 2
REPLICAS_SUFFIX = ".replicas.npz"


def write_partition(part, path, details=True):
    """Write ``path`` (plain) and, with ``details``, ``path + '.replicas.npz'``.

    With ``details`` the two files are replaced together (see the module
    docstring): a failure or SIGINT/SIGTERM leaves both as they were.
    """
    plain = ("\n".join(map(str, part.assignment.tolist())) + "\n").encode("ascii")
    if not details:
        with atomic_output(path, "wb") as fh:
            fh.write(plain)
        return [path]
    rich = path + REPLICAS_SUFFIX
    ptr, clusters = part.replicas()
    meta = {"format": "vcut-partition", "format_version": PARTITION_FORMAT_VERSION,
            "plain_sha256": hashlib.sha256(plain).hexdigest(),
            **part.info, "metrics": part.metrics.to_dict()}
    with atomic_outputs([(rich, "wb"), (path, "wb")]) as (fz, fh):
        np.savez(
            fz, assignment=part.assignment, src=part.src, dst=part.dst, weight=part.weight,
            simple_assignment=part.simple_assignment, replica_ptr=ptr, replica_cluster=clusters,
            master=part.masters(), loads=np.asarray(part.metrics.loads),
            counts=np.asarray(part.metrics.counts), capacities=part.capacities,
            meta=np.array(json.dumps(meta)),
        )
        fh.write(plain)
    return [path, rich]


def read_partition(path):
    """Read a richer partition file: ``(meta, arrays)``.

    When the plain file it was written with is beside it, the two must match.
    """
    meta, arrays = read_versioned_npz(
        path, kind="partition", version=PARTITION_FORMAT_VERSION, error=InputError,
        remake="partition the graph again with 'vcut partition'",
        required=("assignment", "replica_ptr", "replica_cluster", "master", "loads", "counts",
                  "capacities", "src", "dst", "weight", "simple_assignment"),
    )
    path = os.fspath(path)
    if path.endswith(REPLICAS_SUFFIX) and os.path.isfile(path[: -len(REPLICAS_SUFFIX)]):
        plain = path[: -len(REPLICAS_SUFFIX)]
        _check_pair(plain, _read_bytes(plain), path, meta)
    return meta, arrays


def read_assignment(path):
    """The cluster of every input edge from a partition file (plain or ``.replicas.npz``).

    A plain file with a richer file beside it must match it.
    """
    if str(path).endswith(".npz"):
        _, arrays = read_partition(path)
        return arrays["assignment"]
    data = _read_bytes(path)
    rich = os.fspath(path) + REPLICAS_SUFFIX
    if os.path.isfile(rich):
        _check_pair(path, data, rich, _npz_meta(rich))
    words = data.decode("utf-8", "replace").split()
    try:
        return np.array([int(w) for w in words], dtype=np.int64)
    except (ValueError, OverflowError):
        bad = next(w for w in words if not _is_cluster_id(w))
        raise InputError(f"partition file {path}: {bad[:40]!r} is not a cluster id; expected one "
                         "integer per line (as 'vcut partition -o' writes)") from None


def _is_cluster_id(word):
    try:
        return -2**63 <= int(word) < 2**63
    except ValueError:
        return False


def _read_bytes(path):
    if os.path.lexists(path):
        check_input_file(path, "partition file")  # a FIFO or /dev/zero would never end
    limit = text_limit()
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise InputError(f"partition file {path} is larger than {limit:,} bytes, more than "
                             "this machine's memory allows reading")
        return data
    except OSError as exc:
        raise InputError(f"cannot read partition file {path}: {exc.strerror}") from None


def _npz_meta(path):
    """The ``meta`` of a richer file, or None when it is not one this vcut wrote."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"]))
    except Exception:
        return None  # not a pair this check can judge; the file itself is read elsewhere


def _check_pair(plain, data, rich, meta):
    digest = meta.get("plain_sha256") if isinstance(meta, dict) else None
    if digest is not None and digest != hashlib.sha256(data).hexdigest():
        raise InputError(f"partition files {plain} and {rich} are from different runs (an "
                         "interrupted 'vcut partition', or one file replaced); run 'vcut "
                         f"partition ... -o {plain}' again")
