"""Write an `EdgePartition`: the plain assignment and the documented richer file.

Plain file (``OUT``): one cluster id per line, one line per input edge in the
input's edge order (like METIS ``.part`` files), so that any tool can read it.

Richer file (``OUT.replicas.npz``, format "vcut-partition", version 1), arrays:

* ``assignment`` (int32, per input edge);
* ``src``, ``dst``, ``weight``, ``simple_assignment``: the simple graph that
  was partitioned (self-loops out, repeated edges merged) and its clusters;
* ``replica_ptr`` (int64, n + 1), ``replica_cluster`` (int32): the clusters of
  vertex ``v`` are ``replica_cluster[replica_ptr[v]:replica_ptr[v + 1]]``, sorted;
* ``master`` (int32, n): the cluster holding most of the vertex's edge weight
  (ties: lowest id; -1 for vertices without edges);
* ``loads`` (float64, p), ``counts`` (int64, p), ``capacities`` (float64, p);
* ``meta``: JSON with ``format``, ``format_version``, the run (``algo``, ``p``,
  ``lambda``, ``order``, ``seed``, ``seconds``, ...) and every metric.
"""

import json

import numpy as np

from frontend.atomic import atomic_output
from frontend.errors import InputError
from frontend.npzfile import read_versioned_npz

__all__ = ["write_partition", "read_partition", "read_assignment", "PARTITION_FORMAT_VERSION"]

PARTITION_FORMAT_VERSION = 1


def write_partition(part, path, details=True):
    """Write ``path`` (plain) and, with ``details``, ``path + '.replicas.npz'``."""
    with atomic_output(path, "w") as fh:
        fh.write("\n".join(map(str, part.assignment.tolist())) + "\n")
    if not details:
        return [path]
    rich = path + ".replicas.npz"
    ptr, clusters = part.replicas()
    meta = {"format": "vcut-partition", "format_version": PARTITION_FORMAT_VERSION,
            **part.info, "metrics": part.metrics.to_dict()}
    with atomic_output(rich) as fh:
        np.savez(
            fh, assignment=part.assignment, src=part.src, dst=part.dst, weight=part.weight,
            simple_assignment=part.simple_assignment, replica_ptr=ptr, replica_cluster=clusters,
            master=part.masters(), loads=np.asarray(part.metrics.loads),
            counts=np.asarray(part.metrics.counts), capacities=part.capacities,
            meta=np.array(json.dumps(meta)),
        )
    return [path, rich]


def read_partition(path):
    """Read a richer partition file: ``(meta, arrays)``."""
    return read_versioned_npz(
        path, kind="partition", version=PARTITION_FORMAT_VERSION, error=InputError,
        remake="partition the graph again with 'vcut partition'",
        required=("assignment", "replica_ptr", "replica_cluster", "master", "loads", "counts",
                  "capacities", "src", "dst", "weight", "simple_assignment"),
    )


def read_assignment(path):
    """The cluster of every input edge from a partition file (plain or ``.replicas.npz``)."""
    if str(path).endswith(".npz"):
        _, arrays = read_partition(path)
        return arrays["assignment"]
    try:
        with open(path) as fh:
            words = fh.read().split()
    except OSError as exc:
        raise InputError(f"cannot read partition file {path}: {exc.strerror}") from None
    try:
        return np.array([int(w) for w in words], dtype=np.int64)
    except ValueError:
        bad = next(w for w in words if not w.lstrip("-").isdigit())
        raise InputError(f"partition file {path}: {bad!r} is not a cluster id; expected one "
                         "integer per line (as 'vcut partition -o' writes)") from None
