"""Batch analysis: many programs x inputs x cluster counts on a Dask cluster.

A manifest (TOML or JSON) lists the runs::

    p = [8, 64]                       # cluster counts of every job (default)
    options = ["--no-baselines"]      # extra 'vcut analyze' options of every job

    [[job]]
    name = "fft"
    sources = ["fft.c"]               # relative to the manifest's folder
    args = [["1024"], ["4096"]]       # one run per argument list (default: one, none)
    defines = ["N=64"]                # -D for the compiler (optional)
    options = ["--machine", "mesh:4x4"]   # on top of the shared ones (optional)
    p = [16]                          # instead of the shared p (optional)

Every (job, argument list, p) is one row: the summary ``vcut analyze SOURCES -p P
OPTIONS --json -- ARGS`` prints (`vcut.pipeline.analyze` of the options that command line
reads: the caller says how it reads them, ``options_of``; the command line's is
`vcut.cli.analyze.batch_options`), computed on a worker (the traced program runs in
its sandboxed child process there, as on this machine) and gathered in the
manifest's order. A row that fails (a compile error, a crash of the traced
program, a limit) carries its one-line error, and a compile error also the first
`DIAGNOSTIC_LINES` lines of the compiler's diagnostics (``diagnostics``, in
``batch.json`` and under the row in ``report.html``); the others complete. A worker lost
mid-row has the row re-run elsewhere by Dask: rows are pure functions of their
command lines, so nothing is lost and nothing changes.

`write_results` writes ``batch.csv``, ``batch.json`` and ``report.html`` (the
table and a plot of each row's speed-up against its lower bound).
"""

import csv
import io
import json
import os
import time
import tomllib
from dataclasses import dataclass, field
from html import escape

from vcut_base.atomic import atomic_output
from vcut_base.errors import InputError, VcutError, quoted

from .report import analyze

__all__ = ["BatchJob", "COLUMNS", "DIAGNOSTIC_LINES", "diagnostics_head", "load_manifest",
           "run_batch", "run_job", "write_results"]

#: Columns of the table, in order (figures from ``vcut analyze --json``).
COLUMNS = ("job", "args", "p", "status", "error", "nodes", "edges", "method", "machine",
           "makespan", "lower_bound", "makespan_over_bound", "speedup", "cores_used",
           "utilization_used_cores", "utilization_all_cores", "communication_bytes",
           "hop_bytes", "replication_factor", "seconds")

#: Lines of a failed row's compiler diagnostics kept in its ``diagnostics`` (JSON, HTML).
DIAGNOSTIC_LINES = 20

_JOB_KEYS = {"name", "sources", "source", "args", "defines", "options", "p"}
_TOP_KEYS = {"p", "options", "job"}


@dataclass(frozen=True)
class BatchJob:
    """One row of a batch: ``vcut analyze`` of ``sources`` with ``args`` at ``p``.

    `load_manifest` makes them; `run_job` runs one (on a worker, in `run_batch`)
    from its command line, `argv`.

    Attributes
    ----------
    name : str
        The job's name (the manifest's ``name``; default the first source's stem).
    sources : tuple of str
        The C sources (absolute paths, from a manifest).
    args : tuple of str
        The program's arguments (after ``--``).
    p : int
        The cluster count.
    options : tuple of str
        Further ``vcut analyze`` options: the manifest's shared ones, ``-D`` of its
        ``defines``, then the job's own.

    Examples
    --------
    >>> from vcut.pipeline import BatchJob
    >>> job = BatchJob("strassen2", ("samples/strassen.c",), ("64",), 4,
    ...                ("--no-baselines", "-D", "N=2"))
    >>> job.argv()
    ['samples/strassen.c', '-p', '4', '--no-baselines', '-D', 'N=2', '--', '64']
    >>> BatchJob("fft", ("samples/fft.c",), (), 8).argv()
    ['samples/fft.c', '-p', '8']
    """

    name: str
    sources: tuple
    args: tuple
    p: int
    options: tuple = field(default=())

    def argv(self):
        """The ``vcut analyze`` command line (after ``analyze``) of the row."""
        cmd = [*self.sources, "-p", str(self.p), *self.options]
        return cmd + (["--", *self.args] if self.args else [])


def _strings(value, where):
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise InputError(f"{where} must be a list of strings, got {quoted(value)}")
    return tuple(str(v) for v in value)


def _ps(value, where):
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                             for v in values):
        raise InputError(f"{where} must be a positive integer or a list of them, got {quoted(value)}")
    return values


def load_manifest(path):
    """The rows of the manifest at ``path`` (``.toml`` or ``.json``), in order.

    Every job is expanded to one `BatchJob` per argument list and cluster count (the
    job's ``p``, else the shared one, default 8), in the manifest's order: jobs outer,
    argument lists, then cluster counts. Sources are relative to the manifest's folder
    and must exist. ``vcut batch`` reads its manifest with it (the module docstring
    shows the format).

    Parameters
    ----------
    path : str or os.PathLike
        The manifest: TOML (``.toml``) or JSON (``.json``).

    Returns
    -------
    list of BatchJob
        The rows, in order.

    Raises
    ------
    InputError
        A missing or unparsable file, an unknown key, a job without sources,
        a source that does not exist, a p that is not a positive integer.

    Examples
    --------
    >>> from vcut.pipeline import load_manifest
    >>> jobs = load_manifest("samples/batch.toml")
    >>> len(jobs), [(j.name, j.p) for j in jobs[:3]]
    (20, [('dijkstra', 8), ('dijkstra', 64), ('fft', 8)])
    >>> jobs[-1].name, jobs[-1].options, jobs[-1].sources
    ('strassen16', ('--no-baselines', '-D', 'N=16'), ('/.../samples/strassen.c',))

    A JSON manifest with a job of two argument lists and its own ``p``:

    >>> import json, os, shutil, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = shutil.copy("samples/strassen.c", tmp)
    ...     with open(os.path.join(tmp, "runs.json"), "w") as fh:
    ...         json.dump({"p": [2, 4], "job": [
    ...             {"sources": ["strassen.c"], "args": [["a"], ["b"]], "p": 8}]}, fh)
    ...     jobs = load_manifest(os.path.join(tmp, "runs.json"))
    >>> [(j.name, j.args, j.p) for j in jobs]
    [('strassen', ('a',), 8), ('strassen', ('b',), 8)]

    >>> load_manifest("missing.toml")
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: batch manifest not found: missing.toml; ...
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"batch manifest not found: {path}; give a .toml or .json file "
                         "(see 'vcut batch --help')")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        if path.lower().endswith(".toml"):
            doc = tomllib.loads(raw.decode("utf-8"))
        elif path.lower().endswith(".json"):
            doc = json.loads(raw)
        else:
            raise InputError(f"{path}: a batch manifest is .toml or .json")
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a valid manifest ({exc})".replace("\n", " ")) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("job"), list) or not doc["job"]:
        raise InputError(f"{path}: the manifest lists no runs; add [[job]] tables "
                         "(TOML) or a \"job\" list (JSON)")
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise InputError(f"{path}: unknown key {quoted(sorted(unknown)[0])}; use p, options, job")
    base = os.path.dirname(os.path.abspath(path))
    shared_p = _ps(doc.get("p", [8]), f"{path}: p")
    shared_opts = _strings(doc.get("options", []), f"{path}: options")
    jobs = []
    for k, item in enumerate(doc["job"], 1):
        where = f"{path}: job {k}"
        if not isinstance(item, dict):
            raise InputError(f"{where} must be a table of name, sources, args, ...")
        bad = set(item) - _JOB_KEYS
        if bad:
            raise InputError(f"{where}: unknown key {quoted(sorted(bad)[0])}; use "
                             f"{', '.join(sorted(_JOB_KEYS))}")
        sources = item.get("sources", [item["source"]] if "source" in item else None)
        if not sources:
            raise InputError(f"{where} has no sources; give sources = [\"prog.c\"]")
        sources = tuple(os.path.join(base, s) for s in _strings(sources, f"{where}: sources"))
        for s in sources:
            if not os.path.isfile(s):
                raise InputError(f"{where}: source not found: {s}")
        name = str(item.get("name") or os.path.splitext(os.path.basename(sources[0]))[0])
        arg_lists = item.get("args", [[]])
        if not isinstance(arg_lists, list) or not all(isinstance(a, list) for a in arg_lists):
            raise InputError(f"{where}: args must be a list of argument lists, e.g. [[\"64\"]]")
        defines = _strings(item.get("defines", []), f"{where}: defines")
        opts = shared_opts + tuple(o for d in defines for o in ("-D", d)) + \
            _strings(item.get("options", []), f"{where}: options")
        for args in arg_lists:
            args = _strings(args, f"{where}: args")
            for p in _ps(item.get("p", shared_p), f"{where}: p"):
                jobs.append(BatchJob(name, sources, args, p, opts))
    return jobs


def run_job(job, options_of):
    """The table row of ``job`` (runs where it is called: on a worker in a batch).

    The row's command line is read by ``options_of`` and analysed by `analyze`. A
    row that fails carries its error instead of raising it: a `VcutError` (a bad
    option, a compile error, a crash of the traced program, a limit) or running out
    of memory gives ``status == "error"``, the one-line ``error`` and, for a compile
    error, the head of the compiler's ``diagnostics`` (`DIAGNOSTIC_LINES` lines).

    Parameters
    ----------
    job : BatchJob
        The row.
    options_of : callable
        ``options_of(argv)`` reads the row's ``vcut analyze`` command line
        (`BatchJob.argv`) into ``(inputs, AnalysisOptions)``, raising `InputError` for
        what the command refuses (the command line's reading:
        `vcut.cli.analyze.batch_options`).

    Returns
    -------
    dict
        ``job``, ``args`` (joined by spaces), ``p``, ``status`` (``"ok"`` or
        ``"error"``), ``error`` and ``seconds``; with ``"ok"`` the figures of `COLUMNS`
        from ``vcut analyze --json`` (``nodes``, ``edges``, ``makespan``,
        ``lower_bound``, ``speedup``, ...), with ``"error"`` ``diagnostics``.

    Examples
    --------
    >>> from vcut.cli.analyze import batch_options
    >>> from vcut.pipeline import BatchJob, run_job
    >>> job = BatchJob("strassen2", ("samples/strassen.c",), (), 4,
    ...                ("--no-baselines", "-D", "N=2"))
    >>> row = run_job(job, batch_options)
    >>> row["status"], row["error"], row["nodes"], row["edges"], row["method"]
    ('ok', '', 1986, 2747, 'par')
    >>> round(row["makespan"], 2), row["lower_bound"], row["seconds"] > 0
    (2867.04, 2823.5, True)

    A row that fails carries its error:

    >>> bad = run_job(BatchJob("bad", ("samples/strassen.c",), (), 4,
    ...                        ("--mapping", "fastest")), batch_options)
    >>> bad["status"], bad["error"]
    ('error', "vcut analyze: argument --mapping: invalid choice: 'fastest' ...")
    """
    row = {"job": job.name, "args": " ".join(job.args), "p": job.p}
    t0 = time.perf_counter()
    try:
        inputs, options = options_of(job.argv())
        s = analyze(inputs, options).summary
    except VcutError as exc:
        return {**row, "status": "error", "error": exc.message,
                "diagnostics": diagnostics_head(exc.details),
                "seconds": time.perf_counter() - t0}
    except MemoryError:
        return {**row, "status": "error", "error": "out of memory on the worker",
                "seconds": time.perf_counter() - t0}
    return {**row, "status": "ok", "error": "", "nodes": s["graph"]["nodes"],
            "edges": s["graph"]["edges"], "method": s["method"], "machine": s["machine"],
            "makespan": s["makespan"], "lower_bound": s["lower_bound"],
            "makespan_over_bound": s["makespan_over_bound"], "speedup": s["speedup"],
            "cores_used": s["cores_used"], "utilization_used_cores": s["utilization_used_cores"],
            "utilization_all_cores": s["utilization_all_cores"],
            "communication_bytes": s["communication_bytes"], "hop_bytes": s["hop_bytes"],
            "replication_factor": s["partition"].get("replication_factor"),
            "seconds": time.perf_counter() - t0}


def diagnostics_head(text, lines=DIAGNOSTIC_LINES):
    """The first ``lines`` lines of a tool's diagnostics (the compiler's), and a last line
    saying how many more there were; "" for none."""
    have = text.splitlines() if text else []
    if len(have) <= lines:
        return "\n".join(have)
    return "\n".join(have[:lines] + [f"... ({len(have) - lines} more lines)"])


def run_batch(jobs, client, progress=None, *, options_of):
    """Rows of ``jobs`` computed on ``client``'s workers, in the jobs' order.

    Each job is one Dask task, `run_job` on a worker; ``vcut batch`` calls it with
    the client of ``--scheduler`` or of a LocalCluster (`runtime.dask_cluster`). A
    task that fails on its worker (not a row's own error, which `run_job` keeps in
    the row) gives an error row too; the others complete.

    Parameters
    ----------
    jobs : list of BatchJob
        The rows (`load_manifest`).
    client : distributed.Client
        The cluster's client (`runtime.dask_cluster.dask_client`).
    progress : callable, optional
        ``progress(done, total, row)``, called as each row arrives.
    options_of : callable
        Reads a row's command line (`run_job`): `vcut.cli.analyze.batch_options`.

    Returns
    -------
    list of dict
        One `run_job` row per job, in the jobs' order.

    Raises
    ------
    ImportError
        Dask's ``distributed`` is not installed (it is an optional dependency).

    Examples
    --------
    An in-process LocalCluster of one worker thread:

    >>> import os
    >>> from runtime.dask_cluster import dask_client
    >>> from vcut.cli.analyze import batch_options
    >>> from vcut.pipeline import BatchJob, run_batch
    >>> jobs = [BatchJob("strassen2", (os.path.abspath("samples/strassen.c"),), (), p,
    ...                  ("--no-baselines", "-D", "N=2")) for p in (2, 4)]
    >>> with dask_client(workers=1, processes=False) as client:
    ...     rows = run_batch(jobs, client, options_of=batch_options,
    ...                      progress=lambda done, total, row: print(f"{done} of {total}"))
    1 of 2
    2 of 2
    >>> [(r["job"], r["p"], r["status"], r["nodes"]) for r in rows]
    [('strassen2', 2, 'ok', 1986), ('strassen2', 4, 'ok', 1986)]
    """
    from distributed import as_completed  # lazy: dask is optional

    futures = [client.submit(run_job, job, options_of, pure=False,
                             key=f"vcut-batch-{k}-{job.name}")
               for k, job in enumerate(jobs)]
    index = {f.key: k for k, f in enumerate(futures)}
    rows = [None] * len(jobs)
    for done, fut in enumerate(as_completed(futures), 1):
        try:
            row = fut.result()
        except Exception as exc:  # noqa: BLE001 - the worker's failure, reported in its row
            job = jobs[index[fut.key]]
            row = {"job": job.name, "args": " ".join(job.args), "p": job.p, "status": "error",
                   "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
        rows[index[fut.key]] = row
        if progress:
            progress(done, len(jobs), row)
    return rows


def _csv(rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in COLUMNS})
    return buf.getvalue()


def _plot_svg(rows):
    """Speed-up over one core and the bound's speed-up (work / LB) of every good row."""
    import matplotlib  # lazy: matplotlib is optional

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib's start-up, paid only when the plot is drawn

    good = [r for r in rows if r.get("status") == "ok"]
    if not good:
        return ""
    labels = [f"{r['job']} {r['args']} p={r['p']}".replace("  ", " ") for r in good]
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(good)), 3.6))
    x = range(len(good))
    ax.bar([i - 0.2 for i in x], [r["speedup"] for r in good], 0.4, label="speed-up (work / makespan)")
    ax.bar([i + 0.2 for i in x], [r["speedup"] * r["makespan_over_bound"] for r in good], 0.4,
           label="bound (work / lower bound)")
    ax.set_xticks(list(x), labels, rotation=60, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    return buf.getvalue()


def _html(rows, title):
    def cell(v):
        if isinstance(v, float):
            return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
        return escape(str(v)) if v is not None else ""

    def diagnostics(r):
        text = r.get("diagnostics")
        return (f"<tr class='diagnostics'><td colspan='{len(COLUMNS)}'><pre>{escape(text)}"
                "</pre></td></tr>") if text else ""

    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr class='{}'>{}</tr>".format(r.get("status"), "".join(
            f"<td>{cell(r.get(c, ''))}</td>" for c in COLUMNS)) + diagnostics(r) for r in rows)
    failed = sum(r.get("status") != "ok" for r in rows)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse;font-size:12px}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
            "tr.error{background:#fdd}tr.diagnostics td{text-align:left;background:#fff5f5}"
            "pre{margin:0;font-size:11px}</style></head><body>"
            f"<h1>{escape(title)}</h1><p>{len(rows)} runs, {failed} failed. Speed-up: work / "
            "makespan of the simulated mapping; bound: work / max(critical path, work / "
            "cores). Utilisation: the mean busy share of the cores_used cores that hold "
            "clusters (utilization_used_cores) and of every core of the machine "
            "(utilization_all_cores).</p>" + _plot_svg(rows) + f"<table><tr>{head}</tr>{body}</table></body></html>")


def write_results(rows, outdir, title="vcut batch"):
    """Write ``batch.csv``, ``batch.json`` and ``report.html`` into ``outdir``.

    Each is written through a temporary file and a rename. ``batch.csv`` has the
    `COLUMNS`; ``batch.json`` (format ``vcut-batch``, version 1) every row whole;
    ``report.html`` the table, each failed row's diagnostics and a plot of each good
    row's speed-up against its lower bound's (matplotlib).

    Parameters
    ----------
    rows : list of dict
        `run_job`'s rows (`run_batch`).
    outdir : str
        The folder; made when missing.
    title : str
        Title of ``report.html``.

    Returns
    -------
    list of str
        The absolute paths of ``batch.csv``, ``batch.json`` and ``report.html``.

    Raises
    ------
    OutputError
        A file that cannot be written.
    OSError
        An ``outdir`` that cannot be made (`os.makedirs`'s own error; ``vcut batch``
        checks its folder first).

    Examples
    --------
    >>> import csv, json, os, tempfile
    >>> from vcut.cli.analyze import batch_options
    >>> from vcut.pipeline import BatchJob, run_job, write_results
    >>> rows = [run_job(BatchJob("strassen2", ("samples/strassen.c",), (), 4,
    ...                          ("--no-baselines", "-D", "N=2")), batch_options),
    ...         run_job(BatchJob("bad", ("samples/strassen.c",), (), 4,
    ...                          ("--mapping", "fastest")), batch_options)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = write_results(rows, os.path.join(tmp, "out"), title="two rows")
    ...     with open(files[0], newline="") as fh:
    ...         table = list(csv.DictReader(fh))
    ...     with open(files[1]) as fh:
    ...         doc = json.load(fh)
    >>> [os.path.basename(f) for f in files]
    ['batch.csv', 'batch.json', 'report.html']
    >>> [(r["job"], r["status"], r["nodes"]) for r in table]
    [('strassen2', 'ok', '1986'), ('bad', 'error', '')]
    >>> doc["format"], doc["format_version"], len(doc["rows"]), doc["columns"][:4]
    ('vcut-batch', 1, 2, ['job', 'args', 'p', 'status'])
    """
    os.makedirs(outdir, exist_ok=True)
    files = []
    for name, text in (("batch.csv", _csv(rows)),
                       ("batch.json", json.dumps({"format": "vcut-batch", "format_version": 1,
                                                  "columns": list(COLUMNS), "rows": rows},
                                                 indent=1, default=float)),
                       ("report.html", _html(rows, title))):
        path = os.path.join(outdir, name)
        with atomic_output(path, "w") as fh:
            fh.write(text)
        files.append(os.path.abspath(path))
    return files
