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

from vcut_base.atomic import atomic_output, atomic_outputs
from vcut_base.errors import InputError
from vcut_base.inputs import check_input_file, text_limit
from vcut_base.npzfile import read_versioned_npz, save_npz

__all__ = ["write_partition", "read_partition", "read_assignment", "int_lines",
           "PARTITION_FORMAT_VERSION"]

PARTITION_FORMAT_VERSION = 2
REPLICAS_SUFFIX = ".replicas.npz"


def write_partition(part, path, details=True):
    """Write ``path`` (plain) and, with ``details``, ``path + '.replicas.npz'``.

    With ``details`` the two files are replaced together (see the module
    docstring): a failure or SIGINT/SIGTERM leaves both as they were.

    Raises
    ------
    OutputError
        A file cannot be written (a full disk, ``ulimit -f``): nothing is
        replaced and no temporary file is left.
    """
    if not details:
        with atomic_output(path, "wb") as fh:
            for chunk in int_lines(part.assignment):
                fh.write(chunk)
        return [path]
    rich = path + REPLICAS_SUFFIX
    table = part.replica_table()  # replicas and masters in one pass
    with atomic_outputs([(rich, "wb"), (path, "wb")]) as (fz, fh):
        digest = hashlib.sha256()
        for chunk in int_lines(part.assignment):
            digest.update(chunk)
            fh.write(chunk)
        meta = {"format": "vcut-partition", "format_version": PARTITION_FORMAT_VERSION,
                "plain_sha256": digest.hexdigest(),
                **part.info, "metrics": part.metrics.to_dict()}
        save_npz(fz, dict(
            assignment=part.assignment, src=part.src, dst=part.dst, weight=part.weight,
            simple_assignment=part.simple_assignment, replica_ptr=table.ptr,
            replica_cluster=table.cluster, master=table.master,
            loads=np.asarray(part.metrics.loads), counts=np.asarray(part.metrics.counts),
            capacities=part.capacities, meta=np.array(json.dumps(meta)),
        ))
    return [path, rich]


def int_lines(values, chunk=1 << 20):
    """The text of ``values``, one decimal integer per line, in pieces.

    The bytes are those of ``"\\n".join(map(str, values.tolist())) + "\\n"``
    (a lone ``"\\n"`` for no values), made with array operations on
    ``chunk`` values at a time.

    Parameters
    ----------
    values : array_like of int
        Any integer dtype, signed or unsigned.
    chunk : int
        Values per piece (bounds the scratch memory: about 8 bytes per value
        and digit of a piece).

    Yields
    ------
    bytes
        Consecutive pieces of the text; their concatenation is the whole.

    Examples
    --------
    >>> b"".join(int_lines(np.array([0, 7, -12, 300])))
    b'0\\n7\\n-12\\n300\\n'

    Notes
    -----
    A piece is a ``(values, width)`` byte matrix, right-aligned (one
    ``numpy`` pass per decimal digit of the largest magnitude), from which
    the leading zeros are dropped with one `numpy.compress`; when every
    value has the same width nothing is dropped. Time O(values x digits).
    """
    a = np.asarray(values).reshape(-1)
    if len(a) == 0:
        yield b"\n"
        return
    for lo in range(0, len(a), chunk):
        yield _int_lines(a[lo:lo + chunk])


def _int_lines(a):
    """The lines of the (non-empty, 1-D, integer) array ``a`` as bytes."""
    m = len(a)
    neg = a < 0
    signed = bool(neg.any())
    mag = a.astype(np.uint64)  # two's complement: -x of a negative is exact in uint64
    if signed:
        np.negative(mag, out=mag, where=neg)
    top = int(mag.max())
    digits = len(str(top))
    if top < 2**32:
        mag = mag.astype(np.uint32)  # faster division
    cols = digits + signed + 1  # the widest line: sign, digits, newline
    out = np.empty((m, cols), dtype=np.uint8)
    out[:, -1] = ord("\n")
    q = mag
    for col in range(cols - 2, cols - 2 - digits, -1):
        np.add(q % 10, ord("0"), out=out[:, col], casting="unsafe")
        q = q // 10
    if digits == 1 and not signed:
        return out.tobytes()
    width = np.ones(m, dtype=np.int8)  # sign and digits of each value
    for k in range(1, digits):
        width += mag >= 10**k
    width += neg
    if signed:
        rows = np.flatnonzero(neg)
        out[rows, (cols - 1) - width[rows]] = ord("-")
    if int(width.min()) == cols - 1:
        return out.tobytes()
    # keep[w]: the bytes of a line of width w (right-aligned) and its newline
    keep = np.arange(cols)[None, :] >= (cols - 1) - np.arange(cols)[:, None]
    return np.compress(np.take(keep, width, axis=0).reshape(-1), out.reshape(-1)).tobytes()


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
