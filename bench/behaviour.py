"""Record what vcut does, so that a restructuring can be checked to change nothing.

Runs a fixed list of ``vcut`` commands (trace, graph, stats, partition with eight
algorithms, analyze, compare, bfs, sssp, mst, schedule on simulated devices, batch, and a
few refused inputs) on three samples (``samples/fft.c``, ``strassen.c`` with ``N=8``,
``kmeans.c``) and three graphs of ``../shared/datasets`` (``facebook_combined``,
``delaunay_n15``, ``ca-GrQc``), and writes, per command: its argv, its exit status, the
``--json`` object (or the plain stdout), the stderr, and the SHA-256 of every file it wrote.
Each command runs in a fresh temporary directory, its working directory, and writes its
outputs there; the files are found by walking that directory. Timings, dates and the
temporary paths are normalised away (see `normalise_json`, `normalise_text` and
`hash_file`), so that two records of the same code agree.

The commands run ``python -m vcut`` with this checkout first on ``PYTHONPATH``: a record
describes the code beside this script, whatever the virtualenv's editable install points to.

Usage
-----
Before the restructuring, and again after it, on the same machine::

    python bench/behaviour.py record before.json
    python bench/behaviour.py record after.json
    python bench/behaviour.py compare before.json after.json

``compare`` prints one row per command (same / different, and for a difference the first
key or file that differs) and exits 1 if any command differs. ``--only NAME,...`` records a
subset (``--list`` prints the names); ``--datasets DIR`` (or ``$VCUT_DATASETS``) says where
the graphs are. The whole list takes 2 to 2.5 minutes on a 2-core machine with numba's cache
warm.

The figures depend on the machine (the sandbox level a trace gets, the thread count a
traversal reports), so compare records made on one machine; the environment of each is
stored and ``compare`` prints where it differs.
"""

import argparse
import csv
import gzip
import hashlib
import io
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples")
DATASETS = os.environ.get("VCUT_DATASETS") or os.path.join(ROOT, "..", "shared", "datasets")

FORMAT = "vcut-behaviour"
FORMAT_VERSION = 1
COMMAND_TIMEOUT_S = 600

FB = "{datasets}/facebook_combined.txt.gz"
DELAUNAY = "{datasets}/delaunay_n15.graph.gz"
GRQC = "{datasets}/ca-GrQc.txt.gz"
GRAPHS = {"facebook": FB, "delaunay": DELAUNAY, "grqc": GRQC}
# Deterministic vertex cuts that cover the families: hashing (random, dbh), streaming
# (hdrf), expansion (ne, hep), split-and-connect (spac), the quality mode (best) and the
# multilevel edge cut.
ALGOS = ("random", "dbh", "hdrf", "ne", "hep", "spac", "best", "multilevel")
SIM_DEVICES = "sim:cpu,sim:gpu:speed=4,sim:gpu:speed=2"

BATCH_MANIFEST = """\
p = [4, 8]
options = ["--no-baselines"]

[[job]]
name = "strassen8"
sources = ["{samples}/strassen.c"]
defines = ["N=8"]

[[job]]
name = "kmeans"
sources = ["{samples}/kmeans.c"]
"""

# Inputs some commands share, made on first need in the record's scratch folder (by this
# checkout's vcut; the commands that make the same files are in the list and recorded).
FIXTURES = {
    "strassen8.trace.npz": ("vcut", ["trace", "{samples}/strassen.c", "-D", "N=8", "--no-timing",
                                     "-o", "{target}"]),
    "strassen8.graph.npz": ("vcut", ["graph", "{samples}/strassen.c", "-D", "N=8",
                                     "-o", "{target}"]),
    "batch.toml": ("text", BATCH_MANIFEST),
    "broken.c": ("text", "int main(void) {{ return undeclared; }}\n"),  # a str.format template
}


def _commands():
    """The fixed list: (name, argv after ``vcut``), in the order they run."""
    out = [
        ("trace-fft", ["trace", "{samples}/fft.c", "--no-timing", "-o", "fft.npz", "--json"]),
        ("trace-strassen8", ["trace", "{samples}/strassen.c", "-D", "N=8", "--no-timing",
                             "-o", "strassen8.npz", "--json"]),
        ("trace-kmeans-plain", ["trace", "{samples}/kmeans.c", "--no-timing", "-o", "kmeans.npz"]),
        ("graph-fft", ["graph", "{samples}/fft.c", "-o", "fft.npz", "--json"]),
        ("graph-strassen8-trace-metis", ["graph", "{fixtures}/strassen8.trace.npz",
                                         "-o", "strassen8.graph", "--json"]),
        ("graph-strassen8-trace-mtxgz", ["graph", "{fixtures}/strassen8.trace.npz",
                                         "-o", "strassen8.mtx.gz", "--json"]),
        ("graph-kmeans-edgelist-war", ["graph", "{samples}/kmeans.c", "--war", "--waw",
                                       "-o", "kmeans.edgelist", "--json"]),
    ]
    for name, path in GRAPHS.items():
        out.append((f"stats-{name}", ["stats", path, "--seed", "0", "--json"]))
    out += [
        ("stats-strassen8-ir", ["stats", "{fixtures}/strassen8.graph.npz", "--json"]),
        ("stats-delaunay-plain", ["stats", DELAUNAY, "--seed", "0"]),
    ]
    for name, path in GRAPHS.items():
        for algo in ALGOS:
            out.append((f"partition-{name}-{algo}",
                        ["partition", path, "-p", "8", "--algo", algo, "--seed", "0",
                         "-o", f"{name}-{algo}.part", "--json"]))
    out += [
        ("partition-strassen8-par", ["partition", "{fixtures}/strassen8.graph.npz", "-p", "4",
                                     "--algo", "par", "--seed", "0", "-o", "par.part", "--json"]),
        ("partition-strassen8-wb-libra", ["partition", "{fixtures}/strassen8.graph.npz",
                                          "-p", "8", "--seed", "0", "-o", "wb-libra.part",
                                          "--json"]),
        ("partition-grqc-hdrf-plain", ["partition", GRQC, "-p", "4", "--algo", "hdrf",
                                       "--seed", "0", "-o", "hdrf.part"]),
        ("analyze-strassen8", ["analyze", "{samples}/strassen.c", "-D", "N=8", "-p", "8",
                               "--seed", "0", "-o", "out", "--json"]),
        ("analyze-kmeans-hdrf-mesh", ["analyze", "{samples}/kmeans.c", "-p", "4", "--algo", "hdrf",
                                      "--machine", "mesh:2x2", "--seed", "0", "-o", "out",
                                      "--json"]),
        ("analyze-facebook-ne", ["analyze", FB, "-p", "8", "--algo", "ne", "--seed", "0",
                                 "-o", "out", "--json"]),
        ("analyze-strassen8-trace-plain", ["analyze", "{fixtures}/strassen8.trace.npz", "-p", "4",
                                           "--no-baselines", "--seed", "0", "-o", "out"]),
        ("compare-strassen8", ["compare", "{samples}/strassen.c", "-D", "N=8", "-p", "4,8",
                               "--seed", "0", "-o", "out", "--json"]),
        ("bfs-delaunay", ["bfs", DELAUNAY, "--source", "1", "-o", "dist.txt", "--json"]),
        ("bfs-facebook-do", ["bfs", FB, "--source", "0", "--strategy", "do", "-o", "dist.txt",
                             "--json"]),
        ("bfs-grqc-ep-plain", ["bfs", GRQC, "--source", "21012", "--strategy", "ep",
                               "-o", "dist.txt"]),
        ("sssp-delaunay-delta", ["sssp", DELAUNAY, "--source", "1", "--strategy", "delta",
                                 "-o", "dist.txt", "--json"]),
        ("sssp-grqc-wd", ["sssp", GRQC, "--source", "21012", "--strategy", "wd", "-o", "dist.txt",
                          "--json"]),
        ("sssp-strassen8-ir", ["sssp", "{fixtures}/strassen8.graph.npz", "--source", "0",
                               "--directed", "-o", "dist.txt", "--json"]),
        ("mst-delaunay", ["mst", DELAUNAY, "-o", "forest.txt", "--json"]),
        ("mst-facebook", ["mst", FB, "-o", "forest.txt", "--json"]),
        ("mst-strassen8-ir-plain", ["mst", "{fixtures}/strassen8.graph.npz", "-o", "forest.txt"]),
        ("schedule-matmul-all", ["schedule", "--job", "matmul", "--size", "256", "--devices",
                                 SIM_DEVICES, "--policy", "all", "--seed", "0", "--check",
                                 "--report", "schedule.html", "--json"]),
        ("schedule-string-search-qilin", ["schedule", "--job", "string-search", "--devices",
                                          "sim:cpu,sim:gpu:speed=4", "--policy", "qilin",
                                          "--seed", "0", "--json"]),
        ("schedule-bfs-batch", ["schedule", "--job", "bfs-batch", "--devices", SIM_DEVICES,
                                "--seed", "0", "--json"]),
        ("schedule-partition-batch", ["schedule", "--job", "partition-batch", "--devices",
                                      "sim:cpu,sim:cpu:speed=2", "--seed", "0", "--json"]),
        ("batch-strassen8-kmeans", ["batch", "{fixtures}/batch.toml", "-o", "out",
                                    "--workers", "2", "--json"]),
        # Refused inputs: the exit status and the one-line message are behaviour too.
        ("error-partition-p0", ["partition", FB, "-p", "0", "--json"]),
        ("error-stats-missing", ["stats", "{fixtures}/missing.graph", "--json"]),
        ("error-analyze-unknown-algo", ["analyze", "{samples}/strassen.c", "-p", "4",
                                        "--algo", "no-such-cut", "--json"]),
        ("error-trace-compile", ["trace", "{fixtures}/broken.c", "-o", "t.npz", "--json"]),
    ]
    return out


COMMANDS = _commands()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="run the commands and write OUT.json")
    rec.add_argument("out", nargs="?", help="the record to write")
    rec.add_argument("--only", help="comma-separated command names (see --list)")
    rec.add_argument("--list", action="store_true", help="print the command names and stop")
    rec.add_argument("--datasets", default=DATASETS,
                     help="folder of the graphs (default %(default)s)")
    cmp_ = sub.add_parser("compare", help="compare two records; exit 1 if any command differs")
    cmp_.add_argument("a")
    cmp_.add_argument("b")
    args = ap.parse_args(argv)
    if args.action == "compare":
        return compare(args.a, args.b)
    if args.list:
        for name, argv_ in COMMANDS:
            print(f"{name:34} vcut {' '.join(argv_)}")
        return 0
    if not args.out:
        ap.error("record needs OUT.json (or --list)")
    commands = COMMANDS
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {n for n, _ in COMMANDS}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            ap.error(f"unknown command name(s) {', '.join(unknown)}; see --list")
        commands = [c for c in COMMANDS if c[0] in wanted]
    return record(args.out, commands, args.datasets)


# -- record ---------------------------------------------------------------------------------

def record(out, commands, datasets):
    """Run `commands` and write the record to `out`."""
    datasets = os.path.realpath(datasets)
    missing = sorted({p for _, a in commands for p in a if p.startswith("{datasets}/")
                      and not os.path.exists(p.format(datasets=datasets))})
    if missing:
        print(f"error: {missing[0].format(datasets=datasets)} not found; give --datasets DIR",
              file=sys.stderr)
        return 2
    scratch = tempfile.mkdtemp(prefix="vcut-behaviour-")
    fixtures = os.path.join(scratch, "fixtures")
    os.mkdir(fixtures)
    places = {"samples": SAMPLES, "datasets": datasets, "fixtures": fixtures}
    entries = {}
    t_all = time.perf_counter()
    try:
        for i, (name, template) in enumerate(commands, 1):
            for word in template:
                if word.startswith("{fixtures}/"):
                    _fixture(word[len("{fixtures}/"):], fixtures, places)
            workdir = os.path.join(scratch, name)
            os.mkdir(workdir)
            t0 = time.perf_counter()
            entries[name] = _run(template, workdir, places)
            print(f"[{i}/{len(commands)}] {name}: exit {entries[name]['exit_code']}, "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
            shutil.rmtree(workdir, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "environment": _environment(),
           "commands": entries}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{len(entries)} commands in {time.perf_counter() - t_all:.0f} s; wrote {out}",
          file=sys.stderr)
    return 0


def _vcut(argv, cwd):
    """Run this checkout's vcut (``python -m vcut``) in `cwd`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "vcut", *argv], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, check=False,
                          timeout=COMMAND_TIMEOUT_S)


def _fixture(name, fixtures, places):
    target = os.path.join(fixtures, name)
    if os.path.exists(target) or name not in FIXTURES:
        return  # made already, or a path meant to be missing
    kind, spec = FIXTURES[name]
    if kind == "text":
        with open(target, "w") as f:
            f.write(spec.format(**places))
        return
    t0 = time.perf_counter()
    proc = _vcut([w.format(target=target, **places) for w in spec], fixtures)
    if proc.returncode != 0:
        raise SystemExit(f"error: making {name} failed (exit {proc.returncode}): "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    print(f"  (fixture {name}: {time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)


def _run(template, workdir, places):
    try:
        proc = _vcut([w.format(**places) for w in template], workdir)
    except subprocess.TimeoutExpired as e:  # recorded: a hang is a change of behaviour
        proc = subprocess.CompletedProcess(e.cmd, f"timeout after {e.timeout} s",
                                           e.stdout or b"", e.stderr or b"")
    subs = _substitutions(workdir, places)
    entry = {"argv": ["vcut", *template], "exit_code": proc.returncode}
    stdout = proc.stdout.decode(errors="replace")
    if "--json" in template:
        try:
            entry["json"] = normalise_json(json.loads(stdout), subs)
        except ValueError:  # not JSON after all: keep the text, the difference will show
            entry["stdout"] = normalise_text(stdout, subs)
    else:
        entry["stdout"] = normalise_text(stdout, subs)
    stderr = _DASK_LOG.sub("", proc.stderr.decode(errors="replace"))
    if template[0] == "batch":  # runs on two workers: their programs' output interleaves
        stderr = "".join(sorted(stderr.splitlines(keepends=True)))
    entry["stderr"] = normalise_text(stderr, subs)
    files = {}
    for dirpath, dirnames, filenames in os.walk(workdir):
        dirnames.sort()
        for fn in sorted(filenames):
            path = os.path.join(dirpath, fn)
            files[os.path.relpath(path, workdir).replace(os.sep, "/")] = hash_file(path, subs)
    entry["files"] = files
    return entry


def _substitutions(workdir, places):
    """(absolute path, placeholder) pairs, longest path first, real and as given."""
    pairs = {}
    for path, mark in ((workdir, "<out>"), (places["fixtures"], "<fixtures>"),
                       (os.path.dirname(workdir), "<scratch>"),
                       (places["datasets"], "<datasets>"), (ROOT, "<repo>")):
        for p in {path, os.path.realpath(path)}:
            pairs.setdefault(p, mark)
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


def _environment():
    def git(*a):
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True,
                                  check=False, timeout=30).stdout.strip()
        except OSError:
            return ""
    versions = {}
    for mod in ("numpy", "numba", "scipy", "dask", "matplotlib"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain")),
            "python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "packages": versions,
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


# -- normalisation --------------------------------------------------------------------------
#
# What is normalised, and why (everything else is kept byte for byte):
# * JSON (the --json stdout; mapping.json, compare.json, batch.json; the `meta` member of
#   every .npz): keys that hold wall-clock times are dropped, recursively: named `seconds`,
#   `time`, `elapsed`, `wall`, `timings`, `phases` (analyze's per-phase seconds), `mteps`
#   (edges per second), or ending in `_seconds`, `_time`, `_s`, `_ms`, `_elapsed`. Kept although
#   they look like times: `makespan_seconds` and `independent_time` (the simulated makespan
#   in seconds at the machine's clock and a simulated time in cycles: model figures), and
#   everything inside an object with `"clock": "virtual"` (a schedule on simulated devices
#   runs on a virtual clock, so its seconds are the simulation's, deterministic). Left out
#   of the pattern on purpose: `timing` (a trace's setting) and `times` (a count in the
#   reports' tables). Absolute paths in strings become <out> (the command's folder),
#   <fixtures>, <scratch> (their parent, for a path cut short), <datasets>, <repo>. Files
#   are re-dumped with sorted keys. No field is dropped for any other reason: with these
#   rules two records of one checkout agree on every command.
# * Plain text (stdout and stderr): the paths as above; on lines whose label is a timing
#   (`seconds`, `phases`, `MTEPS`), every number becomes `#`. Dask's log lines on stderr
#   ("distributed.worker - WARNING - Event loop was unresponsive ...": they come and go
#   with the machine's load) are dropped, and vcut batch's stderr, where the traced programs
#   of two workers print in the order they happen to run, is kept as sorted lines.
# * .npz: hashed member by member (name and bytes; the zip's own timestamps are vcut's fixed
#   1980 ones but are ignored anyway); `meta.npy` holds a JSON string with `seconds`,
#   `run_seconds`, `wall_seconds` and the source path, so it is parsed and normalised as JSON.
#   A trace's raw addresses (`mem_addr`, `obj_base`) are hashed as (object, offset) pairs and
#   the objects' order by address (`_relative_addresses`): where the traced program's objects
#   land depends on the tracing process's own allocations, which any change of the modules it
#   imports moves.
# * .gz: gzip's header holds the time of writing; the decompressed bytes are hashed (and
#   normalised by the inner suffix).
# * .csv: columns whose header is a timing key (batch.csv's `seconds`) are blanked.
# * .html / .svg: the value cells of timing rows and columns of every table are blanked
#   (analyze's `<th>phase: partition</th><td>0.59 s</td>` rows, batch's `seconds` column,
#   every value of the report's section `<details id='phases'>`);
#   matplotlib's SVG carries the time of drawing (`<dc:date>`) and clip-path and marker ids
#   salted with a random uuid (`id="p1a2b3c4d5e"`, `id="m..."`): the date is dropped and the
#   ids renumbered in order of appearance. PNG images (matplotlib writes no date into them)
#   are kept as they are.

_TIMING_KEY = re.compile(
    r"(?i)^(seconds|time|elapsed|wall|timings|phases|phases_seconds|mteps)$"
    r"|(_seconds|_time|_elapsed|_s|_ms)$")
_MODEL_KEYS = frozenset({"makespan_seconds", "independent_time"})
_TEXT_TIMING_LINE = re.compile(r"(?i)^\s*(seconds|phases|mteps|elapsed|wall|time)\b")
_DASK_LOG = re.compile(
    r"^.*\b(distributed|dask)(\.[\w.]+)? - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - .*\n?",
    re.MULTILINE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?")


def is_timing_key(key):
    """Whether a JSON key, CSV column or table header names a wall-clock time."""
    return key not in _MODEL_KEYS and bool(_TIMING_KEY.search(key))


def normalise_json(obj, subs, virtual=False):
    """`obj` without wall-clock keys and with absolute paths replaced (see above)."""
    if isinstance(obj, dict):
        virtual = virtual or obj.get("clock") == "virtual"
        return {k: normalise_json(v, subs, virtual) for k, v in obj.items()
                if virtual or not is_timing_key(k)}
    if isinstance(obj, list):
        return [normalise_json(v, subs, virtual) for v in obj]
    if isinstance(obj, str):
        return _paths(obj, subs)
    return obj


def normalise_text(text, subs):
    """`text` with absolute paths replaced and the numbers of timing lines masked."""
    lines = _paths(text, subs).split("\n")
    return "\n".join(_NUMBER.sub("#", ln) if _TEXT_TIMING_LINE.match(ln) else ln for ln in lines)


def _paths(s, subs):
    for path, mark in subs:
        s = s.replace(path, mark)
    return s


def hash_file(path, subs):
    """SHA-256 of the file at `path`, of a normalised form where it holds timings.

    Returns a hex string, or for a .npz a dict ``{"members": {name: sha}, "sha256": ...}``.
    """
    with open(path, "rb") as f:
        data = f.read()
    return _hash_bytes(os.path.basename(path), data, subs)


def _hash_bytes(name, data, subs):
    lower = name.lower()
    if lower.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return _sha(data)
        return _hash_bytes(name[:-3], data, subs)
    if lower.endswith(".npz"):
        return _hash_npz(data, subs)
    if lower.endswith(".json"):
        try:
            obj = json.loads(data)
        except ValueError:
            return _sha(data)
        return _sha(_canonical(normalise_json(obj, subs)))
    if lower.endswith(".csv"):
        return _sha(_normalise_csv(data.decode(errors="replace")).encode())
    if lower.endswith((".html", ".htm", ".svg")):
        return _sha(normalise_html(data.decode(errors="replace"), subs).encode())
    return _sha(data)


#: Trace members that hold the traced program's raw addresses (see `_relative_addresses`).
_ADDRESS_MEMBERS = ("mem_addr.npy", "obj_base.npy")


def _relative_addresses(arrays):
    """The trace's addresses as (object, offset) pairs, in place of raw addresses.

    The traced program runs inside the tracing child, so where its heap, stack and globals
    land depends on that process's own allocations: the checkout's path, the modules it
    imported. Two records of one checkout agree byte for byte, but a restructuring that
    imports other modules moves every object. What the trace means does not move: each
    access falls in the same object (numbered in the trace's own order) at the same
    offset. So `mem_addr` is hashed as (object index, offset), an access outside every
    object as (-1, its address), and `obj_base` as the objects' order by address.
    """
    base = arrays["obj_base.npy"].astype(np.uint64)
    size = arrays.get("obj_size.npy", np.zeros(len(base), np.uint64)).astype(np.uint64)
    addr = arrays["mem_addr.npy"].astype(np.uint64)
    order = np.argsort(base, kind="stable")
    pos = np.searchsorted(base[order], addr, side="right").astype(np.int64) - 1
    obj = np.full(len(addr), -1, np.int64)
    offset = addr.copy()
    hit = pos >= 0
    cand = order[np.clip(pos, 0, None)] if len(order) else np.zeros(len(addr), np.int64)
    inside = hit & (addr - base[cand] < np.maximum(size[cand], 1)) if len(order) else hit
    obj[inside] = cand[inside]
    offset[inside] = addr[inside] - base[cand[inside]]
    return {"mem_addr.npy": np.stack([obj, offset.astype(np.int64)]).tobytes(),
            "obj_base.npy": np.argsort(order, kind="stable").astype(np.int64).tobytes()}


def _hash_npz(data, subs):
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return _sha(data)
    members = {}
    with zf:
        names = {info.filename for info in zf.infolist()}
        relative = {}
        if set(_ADDRESS_MEMBERS) <= names:
            relative = _relative_addresses(
                {name: np.load(io.BytesIO(zf.read(name)), allow_pickle=False)
                 for name in (*_ADDRESS_MEMBERS, "obj_size.npy") if name in names})
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            raw = relative.get(info.filename) or zf.read(info)
            if info.filename == "meta.npy":
                try:
                    meta = json.loads(str(np.load(io.BytesIO(raw), allow_pickle=False)))
                    raw = _canonical(normalise_json(meta, subs))
                except ValueError:
                    pass
            members[info.filename] = _sha(raw)
    return {"members": members, "sha256": _sha(_canonical(members))}


def _normalise_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return text
    drop = {i for i, h in enumerate(rows[0]) if is_timing_key(h.strip())}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for k, row in enumerate(rows):
        w.writerow([c if (k == 0 or i not in drop) else "" for i, c in enumerate(row)])
    return buf.getvalue()


_TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL | re.IGNORECASE)
_ROW = re.compile(r"<tr\b.*?</tr>", re.DOTALL | re.IGNORECASE)
_CELL = re.compile(r"(<t([hd])\b[^>]*>)(.*?)(</t\2>)", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_SVG_DATE = re.compile(r"<dc:date>.*?</dc:date>", re.DOTALL)
_SVG_ID = re.compile(r'\bid="([a-z][0-9a-f]{10})"')


#: analyze's report: the section of the time of each phase (every value a wall time)
_PHASES = re.compile(r"<details id='phases'>.*?</details>", re.S)
_CELL_VALUE = re.compile(r"(<td[^>]*>)[^<]*(</td>)")


def normalise_html(html, subs):
    """`html` with timing cells blanked, SVG dates dropped and SVG ids renumbered."""
    html = _paths(html, subs)
    html = _PHASES.sub(lambda m: _CELL_VALUE.sub(r"\1#\2", m.group(0)), html)
    html = _TABLE.sub(_normalise_table, html)
    html = _SVG_DATE.sub("<dc:date/>", html)
    ids = {}
    for m in _SVG_ID.finditer(html):
        ids.setdefault(m.group(1), f"{m.group(1)[0]}{len(ids):010d}")
    if not ids:
        return html
    return re.sub(r"\b(" + "|".join(ids) + r")\b", lambda m: ids[m.group(1)], html)


def _normalise_table(match):
    timing_cols = set()

    def row(m):
        nonlocal timing_cols
        cells = _CELL.findall(m.group(0))
        texts = [_TAG.sub("", c[2]).strip() for c in cells]
        if cells and all(c[1].lower() == "h" for c in cells):  # a header row
            timing_cols = {i for i, t in enumerate(texts) if is_timing_key(t)}
            return m.group(0)
        # a row headed by a timing label (analyze's "phase: partition"), or timing columns
        label_timing = bool(cells) and cells[0][1].lower() == "h" and (
            texts[0].lower().startswith("phase") or is_timing_key(texts[0]))
        column = iter(range(len(cells)))

        def cell(c):
            j = next(column)
            if c.group(2).lower() == "d" and (label_timing or j in timing_cols):
                return c.group(1) + "#" + c.group(4)
            return c.group(0)
        return _CELL.sub(cell, m.group(0))
    return _ROW.sub(row, match.group(0))


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _sha(data):
    return hashlib.sha256(data).hexdigest()


# -- compare --------------------------------------------------------------------------------

def compare(path_a, path_b):
    """Print a table of the commands of two records; 1 if any differs, else 0."""
    a, b = _load(path_a), _load(path_b)
    env_a, env_b = a.get("environment", {}), b.get("environment", {})
    for key in ("python", "platform", "cpus", "packages"):
        if env_a.get(key) != env_b.get(key):
            print(f"note: environment differs in {key}: {env_a.get(key)} vs {env_b.get(key)}")
    ca, cb = a["commands"], b["commands"]
    names = list(ca) + [n for n in cb if n not in ca]
    width = max((len(n) for n in names), default=7)
    print(f"{'command':{width}}  {'result':9}  first difference")
    differ = 0
    for name in names:
        if name not in ca or name not in cb:
            where = path_b if name not in cb else path_a
            result, detail = "different", f"not in {where}"
        else:
            detail = _first_difference(ca[name], cb[name], "")
            result = "same" if detail is None else "different"
        differ += result != "same"
        print(f"{name:{width}}  {result:9}  {detail or ''}".rstrip())
    print(f"{len(names) - differ} same, {differ} different")
    return 1 if differ else 0


def _load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != FORMAT or doc.get("format_version") != FORMAT_VERSION:
        raise SystemExit(f"error: {path} is not a {FORMAT} record version {FORMAT_VERSION}")
    return doc


_ORDER = ("argv", "exit_code", "json", "stdout", "stderr", "files")


def _first_difference(a, b, path):
    """The path of the first place `a` and `b` differ (with both values), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in _ORDER if k in a or k in b] if not path else []
        keys += [k for k in a if k not in keys] + [k for k in b if k not in a and k not in keys]
        for k in keys:
            sub = f"{path}/{k}" if path else k
            if k not in a or k not in b:
                return f"{sub}: only in {'the first' if k in a else 'the second'}"
            found = _first_difference(a[k], b[k], sub)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        return None
    if type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a)
                                          and math.isnan(b))):
        return None
    if isinstance(a, str) and isinstance(b, str) and "\n" in a + b:
        la, lb = a.split("\n"), b.split("\n")
        n = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        return (f"{path}, line {n + 1}: {_short(la[n] if n < len(la) else None)} vs "
                f"{_short(lb[n] if n < len(lb) else None)}")
    return f"{path}: {_short(a)} vs {_short(b)}"


def _short(v, n=60):
    if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v):
        return v[:12]  # a SHA-256
    s = json.dumps(v)
    return s if len(s) <= n else s[:n - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
