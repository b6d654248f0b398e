"""Mutation fuzzing of every file reader and of ``vcut partition``, ``bfs``, ``mst``, ``graph``,
``schedule`` and ``compare``.

Shared by the fuzz tests (``tests/*/test_fuzz_*.py``, driven by hypothesis)
and the long campaign ``bench/fuzz.py``. A *case* is one mutated file (or
one mutated file plus command-line numbers) given to one *target*; its
outcome is ``"ok"``, ``"error N"`` (a `vcut_base.errors.VcutError` with exit
status N, or that status from the command line) or a failure: ``"traceback
..."`` (any other exception), ``"exit N"`` (an undocumented status),
``"crash SIGNAL"`` or ``"hang"`` (the last two only under `campaign`, which
runs cases in forked workers). The targets of ``vcut partition``'s quality and
edge-cut paths (``cli-quality``: ne, hep, best, --refine; ``cli-multilevel``:
multilevel and SPAC over each backend) draw flags around their boundaries
(``-p`` past the vertex and edge counts, imbalance 0 / 1 / 1e308 / NaN, tau,
seeds past int64, capacities of the wrong length, zero, huge or tiny) and also
check the output contract (`_checked_cli`): nothing left behind by a refusal,
one cluster id in range per edge or vertex, one line of strict JSON, and
nothing printed on descriptor 1 past ``sys.stdout`` (a C library's ``printf``).
``cli-schedule`` runs ``vcut schedule`` with job kinds at small sizes and at their
limits, sub-loads, rounds, policies, seeds and ``--devices`` specs of the CPU and
simulated devices with mutated model numbers (zero, negative, non-finite, huge,
malformed, missing, repeated; a ``gpu`` request must be refused where there is none)
and checks its contract (`_checked_schedule`): one error line, one line of strict
JSON, no report or temporary file left by a refusal, every sub-load run once.
``cli-compare`` runs ``vcut compare`` on the small seed trace and graphs with mutated
``-p`` lists, methods, machines and analysis flags (`_checked_compare`).

Mutations are seeded and deterministic: case ``i`` of a target under seed
``s`` draws from ``random.Random(f"{s}/{target}/{i}")``, so a campaign
restarted after a crash continues with the same cases, and any case can be
replayed with `run_case`. Text files get bit flips, byte edits,
truncation, duplicated or dropped lines and numbers replaced by huge,
negative, non-finite or malformed values (``.gz`` variants are compressed
after mutation, sometimes corrupted after); ``.npz`` files get values set
to extremes, dtypes, shapes and lengths changed, arrays dropped, the meta
JSON edited and, sometimes, raw bytes of the archive flipped or cut.
"""

import contextlib
import copy
import gzip
import io
import json
import os
import random
import select
import signal
import sys
import time
import warnings
from collections import Counter, defaultdict

import numpy as np

__all__ = ["TARGETS", "make_seeds", "run_case", "is_failure", "campaign", "DOCUMENTED_EXITS"]

#: Exit statuses vcut documents (README): 0 success, 2..10 errors.
DOCUMENTED_EXITS = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10}

#: Values numbers are replaced with: boundaries of int32/int64/uint64, float
#: extremes, non-finite, negative, malformed.
INTERESTING = ["0", "-1", "1", "2", "7", "255", "65536", "2147483647", "2147483648", "-2147483649",
               "4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
               "18446744073709551616", "99999999999999999999999999999", "1e308", "1.7e308",
               "-1e308", "1e-320", "nan", "inf", "-inf", "0.5", "-0.0", "x", "", "0x10", "1e5",
               "٣", "\xff", "\x00"]

_INT_VALUES = [0, -1, 1, 2, 3, 127, 255, 2**15, 2**31 - 1, 2**31, -2**31, 2**32, 2**40, 2**53,
               2**62, 2**63 - 1, -2**63, 2**64 - 1]
_FLOAT_VALUES = [0.0, -1.0, 0.5, 1e308, 1.7e308, -1e308, 1e-320, float("nan"), float("inf"),
                 float("-inf"), 2.0**63, 2.0**31]
_JSON_VALUES = [None, True, False, 0, -1, 1, 2**31, 2**63, 2**64, 10**30, 1e308, -1e308, 0.5,
                "x", "", [], {}, [1, 2], [[1]], {"a": 1}, "nan"]

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int g[16];
int main(void) {
    int *h = malloc(8 * sizeof(int));
    memset(h, 0, 8 * sizeof(int));
    for (int i = 0; i < 16; i++) { g[i] = (i * 7) % 16; h[i % 8] += g[i]; }
    qsort(g, 16, sizeof(int), cmp);
    printf("%d %d\n", fib(6), h[3]);
    free(h);
    return 0;
}
"""


# -- seeds ---------------------------------------------------------------------------
def make_seeds(workdir, trace_path=None):
    """Valid files of every kind, written under ``workdir``; returns ``{kind: path}``.

    ``trace_path``: an existing trace to use; default: trace `PROGRAM` here.
    """
    from frontend import load_trace, trace_program
    from ir_graph import Graph, build_graph, write_graph
    from mapping.machine import table2
    from vcut.output import write_partition
    from vcut.partition import partition_graph

    os.makedirs(workdir, exist_ok=True)
    if trace_path is None:
        src = os.path.join(workdir, "seed.c")
        with open(src, "w") as fh:
            fh.write(PROGRAM)
        trace_path = os.path.join(workdir, "seed_trace.npz")
        trace_program(src).save(trace_path)
    trace = load_trace(trace_path)
    ir = build_graph(trace, weights="model")
    seeds = {"trace": trace_path}
    seeds["graph_npz"] = os.path.join(workdir, "seed_graph.npz")
    write_graph(ir, seeds["graph_npz"])
    rng = np.random.default_rng(7)
    n, m = 12, 30
    src = rng.integers(0, n, m)
    dst = (src + rng.integers(1, n, m)) % n
    small = Graph(n=n, src=src.astype(np.int32), dst=dst.astype(np.int32),
                  weight=rng.integers(1, 9, m).astype(np.float64),
                  node_weight=rng.integers(1, 5, n).astype(np.float64))
    for kind, name in (("metis", "seed.graph"), ("edgelist", "seed.edgelist"),
                       ("mtx", "seed.mtx")):
        seeds[kind] = os.path.join(workdir, name)
        write_graph(small, seeds[kind])
    seeds["snap"] = os.path.join(workdir, "seed.txt")
    with open(seeds["snap"], "w") as fh:
        fh.write("# Directed graph: seed\n# FromNodeId\tToNodeId\n")
        fh.write("".join(f"{10 * a}\t{10 * b + 3}\n" for a, b in zip(src.tolist(), dst.tolist())))
    seeds["lg"] = os.path.join(workdir, "seed.lg")
    with open(seeds["lg"], "w") as fh:
        fh.write(f"{n},{m},u,seed,Int64,simplegraph\n")
        fh.write("".join(f"{a + 1},{b + 1}\n" for a, b in zip(src.tolist(), dst.tolist())))
    seeds["partition"] = os.path.join(workdir, "seed.part")
    write_partition(partition_graph(small, 4, "wb-libra"), seeds["partition"])
    seeds["partition_npz"] = seeds["partition"] + ".replicas.npz"
    seeds["machine"] = os.path.join(workdir, "seed_machine.json")
    doc = table2(8).to_dict()
    doc.pop("numa")
    doc.update({"numa": {"node_of_core": [0, 0, 0, 0, 1, 1, 1, 1],
                         "latency_cycles": [[100, 140], [140, 100]]},
                "memory": {"bytes_per_node": [2**30, 2**30], "bandwidth_gbs": 8.0}})
    with open(seeds["machine"], "w") as fh:
        json.dump(doc, fh)
    return seeds


# -- mutations -----------------------------------------------------------------------
def mutate_text(data, rng):
    """1-3 byte- or token-level mutations of ``data`` (bytes)."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(8)
        if not data:
            data = bytearray(rng.choice(INTERESTING).encode("utf-8", "surrogatepass"))
            continue
        k = rng.randrange(len(data))
        if kind == 0:  # bit flip
            data[k] ^= 1 << rng.randrange(8)
        elif kind == 1:  # byte set
            data[k] = rng.choice([0, 0xFF, 0x0A, 0x20, 0x2D, 0x25, 0x23, rng.randrange(256)])
        elif kind == 2:  # truncation
            del data[k:]
        elif kind == 3 or kind == 4:  # replace a number by an interesting value
            lines = bytes(data).split(b"\n")
            li = rng.randrange(len(lines))
            toks = lines[li].replace(b",", b" , ").split(b" ") if lines[li] else [b""]
            ti = rng.randrange(len(toks))
            toks[ti] = rng.choice(INTERESTING).encode("utf-8", "surrogatepass")
            lines[li] = b" ".join(toks).replace(b" , ", b",")
            data = bytearray(b"\n".join(lines))
        elif kind == 5:  # duplicate or drop a line
            lines = bytes(data).split(b"\n")
            li = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(li, lines[li])
            else:
                del lines[li]
            data = bytearray(b"\n".join(lines))
        elif kind == 6:  # insert a token
            data[k:k] = (b" " + rng.choice(INTERESTING).encode("utf-8", "surrogatepass") + b" ")
        else:  # the header line's numbers
            lines = bytes(data).split(b"\n")
            li = next((i for i, ln in enumerate(lines) if ln and ln[:1] not in b"%#"), 0)
            toks = lines[li].replace(b",", b" , ").split(b" ")
            ti = rng.randrange(len(toks))
            toks[ti] = rng.choice(INTERESTING[:20]).encode()
            lines[li] = b" ".join(toks).replace(b" , ", b",")
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def mutate_gzip(data, rng):
    """Mutated text, gzip-compressed; sometimes the compressed bytes are damaged too."""
    out = bytearray(gzip.compress(mutate_text(data, rng) if rng.random() < 0.8 else data,
                                  mtime=0))
    if rng.random() < 0.3:
        k = rng.randrange(len(out))
        if rng.random() < 0.5:
            out[k] ^= 1 << rng.randrange(8)
        else:
            del out[k:]
    return bytes(out)


def _extreme(a, rng):
    if a.dtype.kind == "f":
        return rng.choice(_FLOAT_VALUES)
    if a.dtype.kind in "iu":
        return rng.choice(_INT_VALUES)
    if a.dtype.kind == "b":
        return rng.random() < 0.5
    return rng.choice(["", "x" * 40, "\u00e9", "ret", "call", "phi"])


def _assign(a, k, value):
    """``a[k] = value`` with numpy's wrap-around for integers that do not fit."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a[k] = np.array(value).astype(a.dtype) if a.dtype.kind in "iub" else value
    except (OverflowError, ValueError, TypeError):
        pass


def mutate_arrays(arrays, rng):
    """1-2 array-level mutations of a ``{name: array}`` dict (in place) and its meta."""
    names = [k for k in arrays if k != "meta"]
    for _ in range(rng.randint(1, 2)):
        kind = rng.randrange(10)
        name = rng.choice(names)
        if name not in arrays:
            continue
        a = np.array(arrays[name])
        if kind <= 2 and a.size:  # extreme values at one or a few places
            flat = a.reshape(-1)
            for _ in range(rng.choice([1, 1, 2, 5])):
                _assign(flat, rng.randrange(flat.size), _extreme(a, rng))
            arrays[name] = flat.reshape(a.shape)
        elif kind == 3:  # dtype
            to = rng.choice([np.float64, np.float32, np.int8, np.int16, np.uint64, np.int64,
                             np.bool_, "U3", np.complex64])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    arrays[name] = a.astype(to)
                except (ValueError, TypeError, OverflowError):
                    arrays[name] = np.zeros(a.shape, dtype=np.float64)
        elif kind == 4:  # shape
            choice = rng.randrange(3)
            if choice == 0 and a.size % 2 == 0 and a.size:
                arrays[name] = a.reshape(2, -1)
            elif choice == 1:
                arrays[name] = np.array(a.reshape(-1)[0] if a.size else 0)
            else:
                arrays[name] = a.reshape(-1)[:0]
        elif kind == 5 and a.ndim == 1:  # length
            cut = rng.randrange(max(len(a), 1))
            arrays[name] = a[:cut] if rng.random() < 0.5 else np.concatenate([a, a[:cut + 1]])
        elif kind == 6:
            del arrays[name]
        elif kind == 7 and a.ndim == 1 and len(a) > 1:  # order
            perm = list(range(len(a)))
            rng.shuffle(perm)
            arrays[name] = a[perm]
        else:
            _mutate_meta(arrays, rng)
    return arrays


def _mutate_meta(arrays, rng):
    try:
        meta = json.loads(str(arrays["meta"]))
    except (KeyError, ValueError):
        return
    _mutate_json(meta, rng)
    arrays["meta"] = np.array(json.dumps(meta))


def _json_value(rng):
    """A fresh interesting JSON value (never shared: a shared list could become a cycle)."""
    return copy.deepcopy(rng.choice(_JSON_VALUES))


def _mutate_json(doc, rng, depth=0):
    """One edit somewhere in a JSON document (dicts and lists, in place)."""
    if isinstance(doc, dict) and doc:
        key = rng.choice(sorted(doc))
        r = rng.random()
        if r < 0.2:
            del doc[key]
        elif r < 0.35:
            doc[rng.choice(["extra", "n", "cores", "graph"])] = _json_value(rng)
        elif r < 0.6 and isinstance(doc[key], (dict, list)) and depth < 4:
            _mutate_json(doc[key], rng, depth + 1)
        else:
            doc[key] = _json_value(rng)
    elif isinstance(doc, list) and doc:
        k = rng.randrange(len(doc))
        if isinstance(doc[k], (dict, list)) and depth < 4 and rng.random() < 0.5:
            _mutate_json(doc[k], rng, depth + 1)
        elif rng.random() < 0.2:
            del doc[k]
        else:
            doc[k] = _json_value(rng)


def mutate_npz(path, rng):
    """Bytes of a mutated copy of the ``.npz`` at ``path``."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    mutate_arrays(arrays, rng)
    buf = io.BytesIO()
    try:
        np.savez(buf, **arrays)
    except ValueError:  # an array numpy cannot save without pickling
        np.savez(buf, **{k: v for k, v in arrays.items() if v.dtype != object})
    data = bytearray(buf.getvalue())
    if rng.random() < 0.1:
        k = rng.randrange(len(data))
        if rng.random() < 0.5:
            data[k] ^= 1 << rng.randrange(8)
        else:
            del data[k:]
    return bytes(data)


def mutate_json_file(path, rng):
    with open(path) as fh:
        doc = json.load(fh)
    if rng.random() < 0.25:
        return mutate_text(json.dumps(doc).encode(), rng)
    for _ in range(rng.randint(1, 3)):
        _mutate_json(doc, rng)
    return json.dumps(doc).encode()


# -- targets -------------------------------------------------------------------------
_TEXT_GRAPHS = {"metis": ".graph", "edgelist": ".edgelist", "snap": ".txt", "mtx": ".mtx",
                "lg": ".lg"}


def _text_case(seeds, kind, rng, workdir, gz=False):
    with open(seeds[kind], "rb") as fh:
        data = fh.read()
    suffix = _TEXT_GRAPHS[kind] + (".gz" if gz else "")
    path = os.path.join(workdir, "case" + suffix)
    with open(path, "wb") as fh:
        fh.write(mutate_gzip(data, rng) if gz else mutate_text(data, rng))
    return path


def _npz_case(seeds, kind, rng, workdir, name):
    path = os.path.join(workdir, name)
    with open(path, "wb") as fh:
        fh.write(mutate_npz(seeds[kind], rng))
    return path


def _any_graph_case(seeds, rng, workdir):
    kind = rng.choice(["metis", "edgelist", "snap", "mtx", "lg", "npz", "npz", "npz"])
    if kind == "npz":
        return _npz_case(seeds, "graph_npz", rng, workdir, "case.npz")
    return _text_case(seeds, kind, rng, workdir, gz=rng.random() < 0.15)


def _reader(kind, gz=False):
    def run(seeds, rng, workdir):
        from ir_graph import read_graph

        g = read_graph(_text_case(seeds, kind, rng, workdir, gz))
        g.degrees()  # the first kernel-free use: ids must be in range

    return run


def _graph_npz(seeds, rng, workdir):
    from ir_graph import read_graph

    g = read_graph(_npz_case(seeds, "graph_npz", rng, workdir, "case.npz"))
    g.undirected_csr()


def _trace_npz(seeds, rng, workdir):
    from frontend import load_trace

    t = load_trace(_npz_case(seeds, "trace", rng, workdir, "case.npz"))
    t.summary(), t.block_counts(), t.instruction_counts(), t.locate_accesses()


def _partition_file(seeds, rng, workdir):
    from ir_graph import read_graph
    from vcut.output import read_assignment
    from vcut.partition import partition_from_assignment

    if rng.random() < 0.5:
        with open(seeds["partition"], "rb") as fh:
            data = mutate_text(fh.read(), rng)
        path = os.path.join(workdir, "case.part")
        with open(path, "wb") as fh:
            fh.write(data)
    else:
        path = _npz_case(seeds, "partition_npz", rng, workdir, "case.replicas.npz")
    a = read_assignment(path)
    partition_from_assignment(read_graph(seeds["edgelist"]), a, 4)


def _machine(seeds, rng, workdir):
    from mapping.machine import load_machine

    path = os.path.join(workdir, "case.json")
    with open(path, "wb") as fh:
        fh.write(mutate_json_file(seeds["machine"], rng))
    m = load_machine(path)
    m.hop_matrix(), m.to_dict()


def _cli(argv):
    from vcut.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in argv])
    if code:
        return f"error {code}"
    return "ok"


def _partition_cli(seeds, rng, workdir):
    path = _any_graph_case(seeds, rng, workdir)
    algo = rng.choice(["w-pg", "wb-libra", "wb-pg", "libra", "pg", "hdrf", "dbh", "random"])
    p = rng.choice(["1", "2", "3", "4", "8", "64", "65"])
    argv = ["partition", path, "-p", p, "--algo", algo]
    if rng.random() < 0.2:
        argv += ["--order", rng.choice(["random", "bfs", "dfs"])]
    if rng.random() < 0.1:
        argv += ["--capacities", ",".join(rng.choice(["1", "1e-300", "0.5", "2"]) for _ in range(int(p)))]
    if rng.random() < 0.2:  # batches, applied either way (and refused where they do not apply)
        argv += ["--batch", rng.choice(["1", "3", "64", "0"])]
        if rng.random() < 0.7:
            argv += ["--apply", rng.choice(["rounds", "recheck"])]
    return _cli(argv + ["-o", os.path.join(workdir, "out.part")])


def _bfs_cli(seeds, rng, workdir):
    path = _any_graph_case(seeds, rng, workdir)
    kind = rng.choice(["bfs", "sssp"])
    strategy = rng.choice(["bs", "ep", "ep-nochunk", "wd", "ns", "hp", "auto"])
    argv = [kind, path, "--source", rng.choice(["0", "1", "5"]), "--strategy", strategy]
    if rng.random() < 0.3:
        argv.append("--directed")
    return _cli(argv)


def _mst_cli(seeds, rng, workdir):
    path = _any_graph_case(seeds, rng, workdir)
    return _cli(["mst", path, "-o", os.path.join(workdir, "forest.txt")])


def _graph_cli(seeds, rng, workdir):
    path = _npz_case(seeds, "trace", rng, workdir, "case.npz")
    out = os.path.join(workdir, rng.choice(["out.npz", "out.graph", "out.edgelist"]))
    argv = ["graph", path, "-o", out, "--weights", rng.choice(["measured", "model"])]
    if rng.random() < 0.3:
        argv += ["--war", "--waw"]
    return _cli(argv)


#: Command-line values of the quality and edge-cut targets: valid ones and the
#: boundaries around them (p past the seed graphs' 12 vertices and 25-30 edges,
#: imbalances at and below 1, non-finite numbers, seeds past int64).
_P_VALUES = ["1", "2", "2", "3", "4", "5", "8", "8", "12", "13", "16", "25", "31", "64", "65",
             "2147483647"]
_IMBALANCES = ["0", "-1", "1.0", "1", "1.03", "1.03", "1.1", "2", "1.0000001", "100", "1e30",
               "nan", "inf", "1e308"]
_TAUS = ["0", "-1", "10", "10", "0.5", "1", "2", "nan", "inf", "1e-300", "1e308"]
_SEEDS = ["0", "1", "42", "9223372036854775807", "9223372036854775808", "-1", "x"]
_CAPACITY_VALUES = ["1", "1", "2", "3", "0.5", "1e-300", "1e308", "0", "-1", "nan", "inf", "x"]


def _capacity_flags(rng, p):
    """``--capacities`` (one per cluster or one too few / many; now and then a zero,
    negative, huge or non-finite share) or ``--units`` speed:memory pairs."""
    count = max(0, min(int(p), 66) + rng.choice([0, 0, 0, 0, -1, 1]))  # p = 2**31 - 1: 66
    if rng.random() < 0.7:
        vals = [rng.choice(_CAPACITY_VALUES) if rng.random() < 0.15 else rng.choice(["1", "2", "3"])
                for _ in range(count)]
        return ["--capacities=" + ",".join(vals)]
    mems = ["0.5", "1", "0.1", "2", "1e-300", "0", "-1", "nan"]
    pairs = [f"{rng.choice(['1', '2', '0.5', '0', 'inf'])}:{rng.choice(mems)}"
             for _ in range(count)]
    return ["--units=" + ",".join(pairs)]


def _balance_flags(rng, p):
    """Random ``--imbalance``, ``--seed``, capacities and ``--json`` flags."""
    argv = []
    if rng.random() < 0.4:
        argv.append(f"--imbalance={rng.choice(_IMBALANCES)}")
    if rng.random() < 0.3:
        argv.append(f"--seed={rng.choice(_SEEDS)}")
    if rng.random() < 0.25:
        argv += _capacity_flags(rng, p)
    if rng.random() < 0.2:
        argv.append("--json")
    return argv


@contextlib.contextmanager
def _c_level_output():
    """File descriptors 1 and 2 into scratch files while the block runs; yields a dict
    that gets ``stdout``: what was written on descriptor 1 past ``sys.stdout`` (a C
    library's ``printf``, which would land in the middle of ``--json``'s object)."""
    import ctypes
    import tempfile

    libc = ctypes.CDLL(None)
    found = {"stdout": ""}
    sys.stdout.flush()
    sys.stderr.flush()
    libc.fflush(None)
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as t1, tempfile.TemporaryFile() as t2:
        os.dup2(t1.fileno(), 1)
        os.dup2(t2.fileno(), 2)
        try:
            yield found
        finally:
            libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            t1.seek(0)
            found["stdout"] = t1.read().decode(errors="replace")


def _no_constant(name):
    raise ValueError(f"--json printed {name}, which is not strict JSON")


def _run_cli(argv, error_line):
    """Run ``vcut`` on ``argv`` in this process, capturing its output; ``(exit code, stdout,
    the --json object or None)``. Checked here, as every command's contract: nothing on
    descriptor 1 past ``sys.stdout`` (a C library's ``printf``), with ``--json`` exactly one
    line of strict JSON, and (``error_line``) a failing exit ends in one ``error:`` line
    without a traceback. A broken contract raises `AssertionError`."""
    from vcut.cli import main

    stdout = io.StringIO()
    with _c_level_output() as c_out, contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(io.StringIO()) as stderr:
        code = main([str(a) for a in argv])
    if c_out["stdout"]:
        raise AssertionError(f"C code printed on stdout: {c_out['stdout'][:80]!r}")
    err = stderr.getvalue().strip().splitlines()
    if error_line and code and (not err or not err[-1].startswith("error: ")
                                or "Traceback" in stderr.getvalue()):
        raise AssertionError(f"exit {code} without one error line: {stderr.getvalue()[-160:]!r}")
    doc = None
    if "--json" in argv:
        lines = stdout.getvalue().splitlines()
        if len(lines) != 1:
            raise AssertionError(f"--json printed {len(lines)} lines")
        doc = json.loads(lines[0], parse_constant=_no_constant)
    return code, stdout.getvalue(), doc


def _checked_cli(argv, out, graph_path, per_vertex, p):
    """`_cli` with the output contract checked: a refused run leaves neither ``out`` nor
    ``out.replicas.npz`` behind; a successful one writes one cluster id in ``0..p-1`` per
    input edge (a vertex cut) or per vertex (``per_vertex``: an edge cut), and with
    ``--json`` one line of strict JSON. A broken contract raises `AssertionError` (a
    traceback outcome)."""
    from ir_graph import read_graph

    outputs = (out, out + ".replicas.npz")
    for path in outputs:
        if os.path.exists(path):
            os.remove(path)
    code, _, _ = _run_cli(argv, error_line=False)
    if code:
        left = [path for path in outputs if os.path.exists(path)]
        if left:
            raise AssertionError(f"exit {code} left {', '.join(map(os.path.basename, left))}")
        return f"error {code}"
    with open(out, "rb") as fh:
        ids = [int(x) for x in fh.read().split()]
    g = read_graph(graph_path)
    rows = g.n if per_vertex else g.m
    if len(ids) != rows:
        raise AssertionError(f"{os.path.basename(out)} has {len(ids)} ids for {rows} "
                             f"{'vertices' if per_vertex else 'edges'}")
    if ids and (min(ids) < 0 or max(ids) >= int(p)):
        raise AssertionError(f"cluster ids {min(ids)}..{max(ids)} outside 0..{int(p) - 1}")
    return "ok"


def _flags_graph_case(seeds, rng, workdir):
    """A graph file for the flag targets: half the time a seed file as it is (so that the
    flags, not the file, decide most outcomes), else a mutated one."""
    if rng.random() < 0.5:
        return seeds[rng.choice(["metis", "edgelist", "snap", "mtx", "lg", "graph_npz",
                                 "graph_npz"])]
    return _any_graph_case(seeds, rng, workdir)


def _quality_cli(seeds, rng, workdir):
    """``vcut partition --algo ne|hep|best`` (and ``--refine`` on the other algorithms)
    with random ``-p``, ``--tau``, ``--imbalance``, ``--seed`` and capacities."""
    path = _flags_graph_case(seeds, rng, workdir)
    p = rng.choice(_P_VALUES)
    if rng.random() < 0.75:
        algo = rng.choice(["ne", "hep", "best"])
    else:  # refinement of any other result (par refuses it)
        algo = rng.choice(["wb-libra", "hdrf", "dbh", "random", "spac", "wvp-greedy", "wvp-random",
                           "hypergraph", "par"])
    argv = ["partition", path, "-p", p, "--algo", algo]
    if rng.random() < (0.6 if algo == "hep" else 0.05):
        argv.append(f"--tau={rng.choice(_TAUS)}")
    if algo != "best" and rng.random() < (0.4 if algo in ("ne", "hep") else 0.9):
        argv.append("--refine")
    argv += _balance_flags(rng, p)
    out = os.path.join(workdir, "quality.part")
    return _checked_cli(argv + ["-o", out], out, path, False, p)


def _multilevel_cli(seeds, rng, workdir):
    """``vcut partition --algo multilevel`` (an edge cut on the CPU; each refiner and
    scheme) and ``--algo spac`` with ``--backend metis|multilevel|kahip`` and either variant."""
    path = _flags_graph_case(seeds, rng, workdir)
    p = rng.choice(_P_VALUES)
    if rng.random() < 0.5:
        algo, argv = "multilevel", []
        if rng.random() < 0.4:
            argv.append(f"--refiner={rng.choice(['fm', 'jet', 'jet', 'greedy'])}")
        if rng.random() < 0.3:
            argv.append(f"--scheme={rng.choice(['kway', 'rb', 'rb'])}")
    else:
        algo = "spac"
        argv = [f"--backend={rng.choice(['metis', 'multilevel', 'multilevel', 'kahip'])}"]
        if rng.random() < 0.3:
            argv.append("--variant=split")
        if rng.random() < 0.15:
            argv.append("--refine")
    if rng.random() < 0.5:
        argv.append("--device=cpu")
    argv = ["partition", path, "-p", p, "--algo", algo] + argv + _balance_flags(rng, p)
    out = os.path.join(workdir, "cut.part")
    return _checked_cli(argv + ["-o", out], out, path, algo == "multilevel", p)


#: ``vcut schedule`` values: valid job sizes small enough for a case of well under a second,
#: then each kind's boundaries (0, its limit + 1) and malformed or non-finite numbers.
_JOB_SIZES = {
    "string-search": ["4", "5", "100", "4096", "20000", "1e4"],
    "matmul": ["1", "2", "3", "8", "17", "48"],
    "bfs-batch": ["1", "2", "3", "5", "7"],
    "partition-batch": ["1", "1", "2", "3"],
}
_BAD_SIZES = {
    "string-search": ["1", "3", "17179869185", "17179869184.5", "1e-320"],
    "matmul": ["65537", "-0.0"],
    "bfs-batch": ["27", "26.5"],
    "partition-batch": ["4097"],
}
_BAD_NUMBERS = ["0", "-1", "2.5", "nan", "inf", "-inf", "1e308", "x", "", "9223372036854775808"]
_UNITS = ["1", "2", "3", "4", "7", "16", "64"]
_BAD_UNITS = ["0", "-1", "256", "4097", "65536", "2147483648", "9223372036854775808", "x", "1.5",
              "1e3"]
_ROUNDS = ["1", "1", "2", "3", "4"]
_BAD_ROUNDS = ["0", "-1", "10", "64", "257", "2147483648", "9223372036854775808", "x", "1.5"]
_SIM_KEYS = ["speed", "overhead", "latency", "bandwidth", "launch", "saturation", "memory",
             "fail"]
_SIM_GOOD = {"speed": ["0.5", "1", "2", "4", "1e3"], "overhead": ["0", "1e-5", "1e-3"],
             "latency": ["0", "1e-5", "1e-2"], "bandwidth": ["1e6", "12e9", "inf"],
             "launch": ["0", "5e-5", "1e-3"], "saturation": ["0", "1e3", "2e6", "1e9"],
             "memory": ["1e3", "1e6", "16e9", "inf", "65536"], "fail": ["1", "2", "3", "5", "0"]}
_SIM_VALUES = ["0", "-1", "-0.0", "nan", "inf", "-inf", "1e308", "1.7e308", "1e-320", "1e-300",
               "9223372036854775808", "2147483647", "x", "", "0x10", "1_000", "\u0663", " 2",
               "1.5", "1e400", "1e-9"]
#: Values that make a modelled call last seconds to minutes: valid, but with a real device in
#: the run (the wall clock) the case would wait them out, so only all-simulated runs get them.
_SLOW_SIM_VALUES = {"1_000", " 2", "1.5", "1e-9", "\u0663"}  # (float("\u0663") == 3.0)


def _sim_device(rng, wall=False):
    """A ``sim:KIND[:key=value...]`` spec; now and then a mutated kind, key, number or form
    (``wall``: a real device is in the run: no `_SLOW_SIM_VALUES`)."""
    bad = [v for v in _SIM_VALUES if not (wall and v in _SLOW_SIM_VALUES)]
    kind = rng.choice(["cpu", "gpu", "gpu"]) if rng.random() < 0.95 else \
        rng.choice(["tpu", "", "GPU", " gpu"])
    parts = ["sim", kind]
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2, 3])):
        key = rng.choice(_SIM_KEYS)
        value = rng.choice(_SIM_GOOD[key]) if rng.random() < 0.8 else rng.choice(bad)
        form = rng.random()
        if form < 0.01:
            parts.append(key)                      # no '='
        elif form < 0.02:
            parts.append(f"={value}")              # no key
        elif form < 0.03:
            parts.append(f"{key}={value}={value}")
        elif form < 0.04:
            parts.append(f"{rng.choice(['bogus', 'SPEED', ''])}={value}")
        else:
            parts.append(f"{key}={value}")
    if rng.random() < 0.01:
        parts = parts[:rng.choice([1, 2])]          # 'sim', 'sim:gpu'
    if rng.random() < 0.01:
        parts.append("")                            # a trailing ':'
    return ":".join(parts)


def _devices_spec(rng):
    """``--devices``: 1-4 items (the CPU, simulated devices; now and then GPU requests there
    is no GPU for, auto, malformed names), sometimes repeated. Never ``dask``: that starts a
    local cluster."""
    kinds = [rng.random() for _ in range(rng.choice([1, 1, 2, 2, 2, 3, 4]))]
    wall = any(r >= 0.6 for r in kinds)  # a real CPU (or a name that may be one)
    items = []
    for r in kinds:
        if r < 0.6:
            items.append(_sim_device(rng, wall))
        elif r < 0.9:
            items.append("cpu" if "cpu" not in items or rng.random() < 0.1 else "sim:cpu")
        else:
            items.append(rng.choice(["gpu", "gpu:0", "gpu:1", "gpu:x", "gpu:-1", "gpu:",
                                     "gpu:99999999999999999999", "auto", "", "sim", "tpu",
                                     " cpu ", "CPU", "cpu:0", "sim:cpu:speed=2,"]))
    if rng.random() < 0.05:
        items.append(rng.choice(items))             # a duplicate
    return ",".join(items)


def _pick(rng, good, bad, p_bad=0.1):
    return rng.choice(bad) if rng.random() < p_bad else rng.choice(good)


def _schedule_cli(seeds, rng, workdir):
    """``vcut schedule`` with random job kinds, sizes, sub-loads, rounds, policies, seeds and
    ``--devices`` specs of the CPU and simulated devices (a ``gpu`` request must be refused:
    there is none), ``--check``, ``--json`` and ``--report``; checks the output contract."""
    job = rng.choice(sorted(_JOB_SIZES))
    argv = ["schedule", f"--job={job}"]
    size = _pick(rng, _JOB_SIZES[job], _BAD_SIZES[job] + _BAD_NUMBERS)
    if rng.random() < 0.97 or job in ("partition-batch", "matmul"):
        argv.append(f"--size={size}")               # (the default sizes take seconds)
    if rng.random() < 0.4:
        units = _pick(rng, _UNITS, [u for u in _BAD_UNITS if job != "bfs-batch" or
                                    u not in ("256", "4097", "65536")], 0.2)  # valid, but slow
        if job == "partition-batch" and rng.random() < 0.7:
            units = size                            # a partition batch's one valid count
        argv.append(f"--units={units}")
    argv.append(f"--rounds={_pick(rng, _ROUNDS, _BAD_ROUNDS)}")  # the default 10: too many
    if rng.random() < 0.7:
        argv.append("--policy=" + _pick(rng, ["hass", "hass", "min-min", "greedy", "qilin", "all"],
                                        ["HASS", "", "min_min"], 0.03))
    if rng.random() < 0.95:
        devices = _devices_spec(rng)
        argv.append(f"--devices={devices}")
        if devices != "auto" and rng.random() < 0.02:  # refused: no dask in --devices (auto
            # would become dask: a cluster to start or reach, not a case of a second)
            argv.append(rng.choice(["--workers=1", "--workers=0", "--scheduler=tcp://127.0.0.1:9"]))
    if rng.random() < 0.2:
        argv.append("--training=" + _pick(rng, ["0.3", "0.5", "0.9", "0.1"],
                                          ["0", "1", "-0.1", "1.5", "nan", "inf", "1e-300", "x"],
                                          0.3))
    if rng.random() < 0.2:
        argv.append("--profile-units=" + _pick(rng, ["1", "2", "5", "1000"],
                                               ["0", "-1", "9223372036854775808", "x"], 0.3))
    if rng.random() < 0.2:
        argv.append(f"--seed={rng.choice(_SEEDS + ['18446744073709551616', '2147483648'])}")
    if rng.random() < 0.3:
        argv.append("--check")
    report = None
    if rng.random() < 0.04:
        report = os.path.join(workdir, rng.choice(["sched.html", "sched.png", "sched.HTML"]))
        argv.append(f"--report={report}")
    elif rng.random() < 0.01:
        argv.append("--report=" + rng.choice([workdir, os.path.join(workdir, "no", "such.html"),
                                              seeds["trace"], ""]))
    if rng.random() < 0.35:
        argv.append("--json")
    return _checked_schedule(argv, report, workdir)


def _leftovers(workdir):
    return sorted(f for f in os.listdir(workdir) if f.startswith(".vcut-") and f.endswith(".tmp"))


def _checked_schedule(argv, report, workdir):
    """`_cli` with ``vcut schedule``'s output contract checked: one line of strict JSON with
    ``--json`` (success or not), nothing on descriptor 1 past ``sys.stdout``, no report or
    temporary file left by a refusal, a complete report and every sub-load run exactly once
    (the ``units`` of each result sum to the job's) when it succeeds."""
    if report and os.path.exists(report):
        os.remove(report)
    before = _leftovers(workdir)
    code, stdout, doc = _run_cli(argv, error_line=True)
    if _leftovers(workdir) != before:
        raise AssertionError(f"exit {code} left {', '.join(_leftovers(workdir))}")
    if code:
        if report and os.path.exists(report):
            raise AssertionError(f"exit {code} left {os.path.basename(report)}")
        return f"error {code}"
    if report and not os.path.getsize(report):
        raise AssertionError(f"{os.path.basename(report)} is empty")
    if doc is not None:
        want = doc["job"]["units"]
        for res in doc["results"]:
            got = sum(res["units"].values())
            if got != want:
                raise AssertionError(f"{res['policy']} ran {got} sub-loads of {want}")
            if res["makespan"] is None or res["makespan"] < 0:
                raise AssertionError(f"{res['policy']}: makespan {res['makespan']}")
    elif not stdout.strip():
        raise AssertionError("success without output")
    return "ok"


_COMPARE_P = ["1", "2", "2", "4", "4", "8", "12", "13", "64", "0", "-1", "x", "", " 4", "1e3",
              "2147483648", "2147483647"]
_COMPARE_METHODS = ["compnet", "metis", "pg", "w-pg", "wb-pg", "libra", "w-libra", "wb-libra"]


def _compare_cli(seeds, rng, workdir):
    """``vcut compare`` on the small seed trace or graphs (half the time mutated) with random
    ``-p`` lists, ``--methods``, ``--machine``, mapping, threshold, lambda, order, seed,
    window and weights flags, ``-o`` and ``--json``; checks the output contract."""
    if rng.random() < 0.3:
        path = seeds["trace"] if rng.random() < 0.7 else \
            _npz_case(seeds, "trace", rng, workdir, "case.npz")
    else:
        path = _flags_graph_case(seeds, rng, workdir)
    ps = [rng.choice(_COMPARE_P[:9]) if rng.random() < 0.9 else rng.choice(_COMPARE_P)
          for _ in range(rng.choice([1, 1, 2, 3]))]
    argv = ["compare", path, f"-p={','.join(ps)}"]
    if rng.random() < 0.5:
        ms = rng.sample(_COMPARE_METHODS, rng.randint(1, 4))
        if rng.random() < 0.1:
            ms.append(rng.choice(["", "bogus", "PG", ms[0], " pg", "hdrf", "ne"]))
        argv.append("--methods=" + ",".join(ms))
    if rng.random() < 0.2:
        argv.append("--machine=" + rng.choice(["table2:4", "table2:8", "mesh:2x2", "table2:0",
                                               "mesh:0x3", "table2:-1", "table2:x", "mesh:2x",
                                               "host", seeds["machine"]]))
    if rng.random() < 0.2:
        argv.append("--mapping=" + rng.choice(["time-aware", "memory-centric", "round-robin",
                                               "random", "comm-greedy", "recursive-bisection"]))
    if rng.random() < 0.15:
        argv.append("--threshold=" + rng.choice(["1", "4", "0", "-1", "nan", "inf", "1e308", "x",
                                                 "2.5"]))
    if rng.random() < 0.15:
        argv.append("--lambda=" + rng.choice(["1", "1.1", "2", "0.5", "0", "nan", "inf", "1e308",
                                              "x"]))
    if rng.random() < 0.15:
        argv.append("--order=" + rng.choice(["given", "random", "bfs", "dfs"]))
    if rng.random() < 0.15:
        argv.append(f"--seed={rng.choice(_SEEDS)}")
    if rng.random() < 0.1:
        argv.append("--window=" + rng.choice(["0:5", "5:0", "0:0", "-1:3", "x", "0:99999999999",
                                              "3:9", "roi:0", "0:", ":5"]))
    if rng.random() < 0.1:
        argv.append("--weights=" + rng.choice(["measured", "model"]))
    outdir = None
    if rng.random() < 0.2:
        outdir = os.path.join(workdir, "cmp")
        argv.append(f"-o={outdir}")
    if rng.random() < 0.35:
        argv.append("--json")
    return _checked_compare(argv, outdir, workdir)


def _checked_compare(argv, outdir, workdir):
    """`_cli` with ``vcut compare``'s contract: one error line, one line of strict JSON with
    ``--json``, no temporary file left, and a refusal leaves neither ``compare.json`` nor
    ``compare.png`` in ``outdir``; a success writes both."""
    import shutil

    if outdir and os.path.exists(outdir):
        shutil.rmtree(outdir)
    before = _leftovers(workdir)
    code, _, _ = _run_cli(argv, error_line=True)
    if _leftovers(workdir) != before or (outdir and os.path.isdir(outdir) and _leftovers(outdir)):
        raise AssertionError(f"exit {code} left temporary files")
    written = [f for f in ("compare.json", "compare.png")
               if outdir and os.path.exists(os.path.join(outdir, f))]
    if code:
        if written:
            raise AssertionError(f"exit {code} left {', '.join(written)}")
        return f"error {code}"
    if outdir and len(written) != 2:
        raise AssertionError(f"-o wrote {written}")
    return "ok"


#: name: function(seeds, rng, workdir) -> None or an outcome string.
TARGETS = {
    "metis": _reader("metis"),
    "edgelist": _reader("edgelist"),
    "snap-txt": _reader("snap"),
    "mtx": _reader("mtx"),
    "lg": _reader("lg"),
    "gzip-text": lambda s, r, w: _reader(r.choice(list(_TEXT_GRAPHS)), gz=True)(s, r, w),
    "graph-npz": _graph_npz,
    "trace-npz": _trace_npz,
    "partition-file": _partition_file,
    "machine-json": _machine,
    "cli-partition": _partition_cli,
    "cli-bfs": _bfs_cli,
    "cli-mst": _mst_cli,
    "cli-graph": _graph_cli,
    "cli-quality": _quality_cli,
    "cli-multilevel": _multilevel_cli,
    "cli-schedule": _schedule_cli,
    "cli-compare": _compare_cli,
}


def case_rng(seed, target, i):
    return random.Random(f"{seed}/{target}/{i}")


def run_case(target, seeds, rng, workdir):
    """Run one case in this process; returns its outcome string (see the module docstring)."""
    from vcut_base.errors import VcutError

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = TARGETS[target](seeds, rng, workdir)
    except VcutError as exc:
        return f"error {exc.exit_code}"
    except Exception as exc:  # noqa: BLE001 - every other exception is what we look for
        return f"traceback {type(exc).__name__}: {str(exc)[:160]}"
    if out is not None and out.startswith("error "):
        code = int(out.split()[1])
        return out if code in DOCUMENTED_EXITS else f"exit {code}"
    return "ok"


def is_failure(outcome):
    return not (outcome == "ok" or outcome.startswith("error "))


# -- campaign with crash isolation ----------------------------------------------------
def campaign(targets, cases, seed, seeds, workdir, *, timeout=60.0, progress=None):
    """Run ``cases`` cases of each target in forked workers; returns the results.

    A worker runs cases in order and reports each outcome through a pipe; a
    worker killed by a signal records ``crash SIGNAME`` for the case it was
    running, one silent for ``timeout`` seconds is killed and records
    ``hang``; a new worker continues with the next case.

    Returns
    -------
    dict
        ``{target: {"outcomes": Counter, "failures": [(case, outcome), ...],
        "seconds": float}}``
    """
    results = {}
    for target in targets:
        outcomes, failures = Counter(), []
        t0 = time.perf_counter()
        i = 0
        while i < cases:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # worker
                os.close(r)
                code = 0
                try:
                    for j in range(i, cases):
                        out = run_case(target, seeds, case_rng(seed, target, j), workdir)
                        os.write(w, f"{j}\t{out}".replace("\n", " ").encode()[:400] + b"\n")
                except BaseException:  # noqa: BLE001 - report through the exit status
                    code = 3
                os._exit(code)
            os.close(w)
            buf = b""
            done = False
            while not done:
                ready, _, _ = select.select([r], [], [], timeout)
                if not ready:  # silent too long: a hang
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    outcomes["hang"] += 1
                    failures.append((i, "hang"))
                    i += 1
                    break
                chunk = os.read(r, 65536)
                if not chunk:
                    _, status = os.waitpid(pid, 0)
                    if os.WIFSIGNALED(status) or (os.WIFEXITED(status) and os.WEXITSTATUS(status)):
                        what = (f"crash {signal.Signals(os.WTERMSIG(status)).name}"
                                if os.WIFSIGNALED(status) else f"worker exit {os.WEXITSTATUS(status)}")
                        outcomes[what] += 1
                        failures.append((i, what))
                        i += 1
                    else:
                        i = cases
                    done = True
                    continue
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    j, out = line.decode(errors="replace").split("\t", 1)
                    outcomes[out if not out.startswith("traceback") else "traceback"] += 1
                    if is_failure(out):
                        failures.append((int(j), out))
                    i = int(j) + 1
                    if progress and i % 1000 == 0:
                        progress(target, i)
            os.close(r)
        results[target] = {"outcomes": outcomes, "failures": failures,
                           "seconds": time.perf_counter() - t0}
    return results


def summary_rows(results):
    """Table rows: target, cases, ok, errors by exit code, failures."""
    codes = sorted({int(k.split()[1]) for res in results.values() for k in res["outcomes"]
                    if k.startswith("error ")})
    rows = []
    totals = defaultdict(int)
    for target, res in results.items():
        o = res["outcomes"]
        n = sum(o.values())
        fail = sum(v for k, v in o.items() if is_failure(k))
        row = [target, n, o.get("ok", 0)] + [o.get(f"error {c}", 0) for c in codes] + \
              [fail, round(res["seconds"], 1)]
        for k, v in zip(["cases", "ok"] + [f"exit {c}" for c in codes] + ["failures", "seconds"],
                        row[1:]):
            totals[k] += v
        rows.append(row)
    header = ["target", "cases", "ok"] + [f"exit {c}" for c in codes] + ["crashes/tracebacks", "seconds"]
    rows.append(["total"] + [round(totals[k], 1) if k == "seconds" else totals[k]
                             for k in ["cases", "ok"] + [f"exit {c}" for c in codes] +
                             ["failures", "seconds"]])
    return header, rows
