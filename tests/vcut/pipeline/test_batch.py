"""``vcut batch`` / vcut.pipeline.batch on a LocalCluster of 2 worker processes: rows equal to
sequential ``vcut analyze`` runs, a crashing program confined to its row, a worker
killed mid-batch losing nothing, and every bad manifest named in one line."""

import csv
import json
import os
import signal
import threading
import time

import pytest

from vcut_base.errors import InputError
from tests.helpers import write_c
from vcut.cli import main
from vcut.cli.analyze import batch_options
from vcut.pipeline import analyze
from vcut.pipeline.batch import COLUMNS, BatchJob, load_manifest, run_batch, run_job

LOOP = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 40;
    double a[256], s = 0;
    for (int i = 0; i < n; i++) a[i] = i * 0.5;
    for (int i = 1; i < n; i++) s += a[i] * a[i - 1];
    printf("%f\\n", s);
    return 0;
}
"""
CRASH = "int main(void) { volatile int *p = 0; return *p; }\n"
FIGURES = ("nodes", "edges", "makespan", "lower_bound", "makespan_over_bound", "speedup",
           "cores_used", "utilization_used_cores", "utilization_all_cores",
           "communication_bytes", "hop_bytes", "replication_factor")


@pytest.fixture
def programs(tmp_path):
    write_c(tmp_path, "loop.c", LOOP)
    write_c(tmp_path, "crash.c", CRASH)
    return tmp_path


def _manifest(folder, text, name="batch.toml"):
    path = folder / name
    path.write_text(text)
    return str(path)


def test_manifest_expands_jobs_args_and_p(programs):
    path = _manifest(programs, """
p = [2, 4]
options = ["--no-baselines"]
[[job]]
sources = ["loop.c"]
args = [["10"], ["30"]]
defines = ["X=1"]
[[job]]
name = "crash"
source = "crash.c"
p = 3
options = ["--mapping", "round-robin"]
""")
    jobs = load_manifest(path)
    loop = str(programs / "loop.c")
    assert [(j.name, j.args, j.p) for j in jobs] == [
        ("loop", ("10",), 2), ("loop", ("10",), 4), ("loop", ("30",), 2), ("loop", ("30",), 4),
        ("crash", (), 3)]
    assert jobs[0].argv() == [loop, "-p", "2", "--no-baselines", "-D", "X=1", "--", "10"]
    assert jobs[4].argv() == [str(programs / "crash.c"), "-p", "3", "--no-baselines",
                              "--mapping", "round-robin"]
    same = load_manifest(_manifest(programs, json.dumps({
        "p": [2, 4], "options": ["--no-baselines"],
        "job": [{"sources": ["loop.c"], "args": [["10"], ["30"]], "defines": ["X=1"]},
                {"name": "crash", "source": "crash.c", "p": 3,
                 "options": ["--mapping", "round-robin"]}]}), "batch.json"))
    assert same == jobs


@pytest.mark.parametrize("text, message", [
    ("p = [2]\n", "lists no runs"),
    ("p = [2\n", "not a valid manifest"),
    ("colour = 1\n[[job]]\nsources = ['loop.c']\n", "unknown key 'colour'"),
    ("[[job]]\nsources = ['loop.c']\nspeed = 2\n", "unknown key 'speed'"),
    ("[[job]]\nname = 'x'\n", "has no sources"),
    ("[[job]]\nsources = ['nothere.c']\n", "source not found"),
    ("p = [0]\n[[job]]\nsources = ['loop.c']\n", "positive integer"),
    ("p = ['8']\n[[job]]\nsources = ['loop.c']\n", "positive integer"),
    ("[[job]]\nsources = ['loop.c']\nargs = ['10']\n", "list of argument lists"),
])
def test_bad_manifests(programs, text, message):
    with pytest.raises(InputError, match=message):
        load_manifest(_manifest(programs, text))


def test_missing_manifest_and_wrong_suffix(programs):
    with pytest.raises(InputError, match="not found"):
        load_manifest(str(programs / "none.toml"))
    with pytest.raises(InputError, match=r"\.toml or \.json"):
        load_manifest(_manifest(programs, "[[job]]\n", "batch.yaml"))


def test_batch_rows_equal_sequential_runs_and_a_crash_stays_in_its_row(dask_client, programs):
    loop, crash = str(programs / "loop.c"), str(programs / "crash.c")
    opts = ("--no-baselines",)
    jobs = [BatchJob("loop", (loop,), ("20",), 2, opts), BatchJob("crash", (crash,), (), 2, opts),
            BatchJob("loop", (loop,), ("60",), 3, opts)]
    seen = []
    rows = run_batch(jobs, dask_client, lambda done, total, row: seen.append((done, total)),
                     options_of=batch_options)
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [r["status"] for r in rows] == ["ok", "error", "ok"]
    assert "SIGSEGV" in rows[1]["error"]
    for job, row in zip([jobs[0], jobs[2]], [rows[0], rows[2]]):
        s = analyze(*batch_options(job.argv())).summary  # the same command, here and sequentially
        want = {"nodes": s["graph"]["nodes"], "edges": s["graph"]["edges"],
                "replication_factor": s["partition"]["replication_factor"],
                **{k: s[k] for k in FIGURES if k in s}}
        assert {k: row[k] for k in FIGURES} == want


def test_a_worker_killed_mid_batch_loses_nothing(dask_client, programs):
    loop = str(programs / "loop.c")
    jobs = [BatchJob("loop", (loop,), (str(n),), 2, ("--no-baselines",))
            for n in range(30, 250, 20)]
    want = [run_job(j, batch_options) for j in jobs]
    pids = list(dask_client.run(os.getpid).values())
    got = {}
    t = threading.Thread(target=lambda: got.update(
        rows=run_batch(jobs, dask_client, options_of=batch_options)))
    t.start()
    time.sleep(1.0)
    assert t.is_alive(), "the batch ended before the fault: give it more runs"
    os.kill(pids[1], signal.SIGKILL)
    t.join(600)
    assert [r["status"] for r in got["rows"]] == ["ok"] * len(jobs)
    for a, b in zip(got["rows"], want):
        assert {k: a[k] for k in FIGURES} == {k: b[k] for k in FIGURES}
    deadline = time.time() + 60
    while len(dask_client.nthreads()) < 2 and time.time() < deadline:
        time.sleep(0.2)


def test_cli_writes_table_json_and_report(programs, capsys):
    path = _manifest(programs, """
p = [2]
options = ["--no-baselines"]
[[job]]
sources = ["loop.c"]
args = [["25"]]
[[job]]
sources = ["crash.c"]
""")
    out = programs / "out"
    rc = main(["batch", path, "-o", str(out), "--workers", "2", "--json"])
    assert rc == 1  # one run failed
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["runs"] == 2 and doc["failed"] == 1
    err = captured.err.strip().splitlines()
    assert err[-1].startswith("error: 1 of 2 runs failed")
    with open(out / "batch.csv") as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0]) == list(COLUMNS)
    assert [r["status"] for r in table] == ["ok", "error"]
    assert float(table[0]["makespan"]) == doc["rows"][0]["makespan"]
    assert json.loads((out / "batch.json").read_text())["rows"] == doc["rows"]
    html = (out / "report.html").read_text()
    assert "<svg" in html and "1 failed" in html


#: Eight compile errors: 8 x 3 lines of clang's diagnostics and its count, past the 20 kept.
BROKEN = "".join(f"int f{k}(void) {{ return undefined_{k} + ; }}\n" for k in range(8))


def test_a_compile_error_keeps_the_compilers_diagnostics(programs, capsys):
    # issue 61, item 8: the row said "fix the errors reported above" while the diagnostics
    # were nowhere; now the message quotes the first error, the row's JSON and the report
    # keep the first 20 lines of them, and stderr shows them
    from frontend import compile_program
    from vcut_base.errors import CompileError

    write_c(programs, "broken.c", BROKEN)
    with pytest.raises(CompileError) as caught:
        compile_program(str(programs / "broken.c"))
    lines = caught.value.details.splitlines()
    assert len(lines) > 20
    first = lines[0].replace(str(programs / "broken.c"), "broken.c")
    assert first.startswith("broken.c:1:") and "error: use of undeclared identifier" in first
    message = (f"compilation of broken.c failed (compiler exit 1): {first}; fix the errors "
               "the compiler reported")
    assert caught.value.message == message
    kept = "\n".join(lines[:20] + [f"... ({len(lines) - 20} more lines)"])
    path = _manifest(programs, """
p = [2, 3]
options = ["--no-baselines"]
[[job]]
sources = ["loop.c"]
args = [["25"]]
p = [2]
[[job]]
sources = ["broken.c"]
""")
    out = programs / "out"
    rc = main(["batch", path, "-o", str(out), "--workers", "1", "--json"])
    assert rc == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert [r["status"] for r in doc["rows"]] == ["ok", "error", "error"]
    for row in doc["rows"][1:]:
        assert row["error"] == message and row["diagnostics"] == kept
    assert json.loads((out / "batch.json").read_text())["rows"] == doc["rows"]
    with open(out / "batch.csv") as fh:
        assert [r["error"] for r in csv.DictReader(fh)] == ["", message, message]
    from html import escape

    html = (out / "report.html").read_text()
    assert html.count(f"<pre>{escape(kept)}</pre>") == 2
    # on stderr once for both p of the job, above the last line
    assert captured.err.endswith(
        f"compiler diagnostics of broken (p=2, p=3):\n{kept}\n"
        f"error: 2 of 3 runs failed; their errors are in their rows of {out / 'batch.csv'} "
        "(the compiler's diagnostics above and in batch.json and report.html)\n")


def test_cli_bad_manifest_and_arguments(programs, capsys):
    rc = main(["batch", str(programs / "none.toml"), "-o", str(programs / "o")])
    assert rc != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "batch manifest not found" in err[0]
    path = _manifest(programs, "[[job]]\nsources = ['loop.c']\n")
    rc = main(["batch", path, "-o", str(programs / "o"), "--", "5"])
    assert rc != 0
    assert "args lists" in capsys.readouterr().err
    assert not (programs / "o" / "batch.csv").exists()


def test_bundled_batch_is_the_ten_samples_at_8_and_64():
    from tests.helpers import ROOT, samples_manifest

    jobs = load_manifest(os.path.join(ROOT, "samples", "batch.toml"))
    want = [(s["name"], p, tuple(o for d in s["defines"] for o in ("-D", d)))
            for s in samples_manifest() for p in (8, 64)]
    assert [(j.name, j.p, j.options[1:]) for j in jobs] == want
    assert all(j.options[0] == "--no-baselines" and j.args == () for j in jobs)


def test_clients_keep_a_short_message_log():
    # Dask keeps 1000 messages per connection, payloads included: a driver sending
    # every round's slices held hundreds of MB of them
    import dask
    import distributed  # noqa: F401 - loads its configuration

    from runtime.dask_cluster import MESSAGE_LOG, dask_client

    before = dask.config.get("distributed.admin.low-level-log-length")
    with dask_client(workers=1, processes=False) as client:
        assert dask.config.get("distributed.admin.low-level-log-length") == MESSAGE_LOG < 1000
        assert client.submit(sum, [1, 2]).result() == 3
    assert dask.config.get("distributed.admin.low-level-log-length") == before
