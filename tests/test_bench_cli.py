"""bench/bench_cli.py (issue 63): the table and verdicts on a made-up measurement, and one
cheap row (`vcut --help`, one warm run, no first run) measured for real, with its JSON."""

import importlib.util
import json
import os

from tests.helpers import ROOT


def bench_cli():
    """bench/bench_cli.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "bench_cli", os.path.join(ROOT, "bench", "bench_cli.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(wall, rss=100 * 2**20, rc=0):
    return {"wall_s": wall, "user_s": wall, "sys_s": 0.0, "peak_rss_bytes": rss, "rc": rc,
            "timed_out": False}


def test_table_and_verdicts_of_a_made_up_measurement():
    b = bench_cli()
    warm = [_run(0.5), _run(0.4), _run(0.7)]
    passing = {"name": "partition-hdrf", "command": "vcut partition $DATA/g -p 32",
               "targets": {"first_s": 10.0, "warm_median_s": 0.6, "peak_rss_bytes": None},
               "first": dict(_run(8.0, 300 * 2**20), cache_signatures=12), "warm": warm,
               "warm_summary": b.summarize([r["wall_s"] for r in warm]),
               "warm_compiled_signatures": 0,
               "inprocess": {"rc": 0, "walls_s": [0.05, 0.04], "median_s": 0.045}}
    assert passing["warm_summary"] == {"median_s": 0.5, "min_s": 0.4, "max_s": 0.7}
    assert b.verdict(passing) == ("pass", [])
    slow = dict(passing, first=dict(passing["first"], wall_s=22.8),
                warm_summary={"median_s": 1.4, "min_s": 1.3, "max_s": 1.5},
                warm_compiled_signatures=3)
    assert b.verdict(slow) == ("FAIL (first, warm)", ["first", "warm"])
    heavy = dict(passing, first=None, targets=dict(passing["targets"], first_s=None,
                                                   peak_rss_bytes=50 * 2**20))
    assert b.verdict(heavy) == ("FAIL (RSS)", ["RSS"])
    skipped = dict(passing, error="skipped: set $CHSTONE")
    assert b.verdict(skipped)[0] == "skipped"
    lines = b.table([passing, slow]).splitlines()
    assert len(lines) == 4 and lines[0].startswith("| row | command | first run")
    row = [c.strip() for c in lines[2].strip("|").split("|")]
    assert row[0] == "partition-hdrf" and row[1] == "`vcut partition $DATA/g -p 32`"
    assert row[2] == "8.00 s, 12 sigs (≤ 10)"
    assert row[3] == "0.50 s [0.40–0.70] ×3 (≤ 0.6)"
    assert row[4] == "0.04 s"  # the median 0.045, to two places (round half to even)
    assert row[5] == "300 MB / 100 MB" and row[6] == "pass"
    assert "+3 sigs" in lines[3] and lines[3].endswith("FAIL (first, warm) |")


def test_rows_name_their_commands_and_targets():
    b = bench_cli()
    rows = {r.name: r for r in b.all_rows()}
    assert {"help", "stats", "partition-hdrf", "partition-best", "readme-job",
            "analyze-small"} <= {n for n, r in rows.items() if r.group == "default"}
    assert rows["help"].warm_target == 0.25 and rows["partition-hdrf"].first_target == 10.0
    assert rows["readme-job"].args[0] == "analyze" and rows["readme-job"].first_target == 30.0
    assert all(r.group != "default" for r in rows.values() if r.repeat_cap or r.needs)
    assert b.display(["partition", "{data}/g.txt", "-o", "{out}/x"]) == \
        "vcut partition $DATA/g.txt -o $OUT/x"


def test_one_cheap_row_for_real(tmp_path, capsys):
    b = bench_cli()
    out = tmp_path / "m.json"
    assert b.main(["--rows", "help", "--repeat", "1", "--warmup", "0", "--no-first",
                   "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| help | `vcut --help` |" in printed
    doc = json.loads(out.read_text())
    assert doc["machine"]["cores"] == os.cpu_count() and doc["git"]["commit"]
    (rec,) = doc["rows"]
    assert rec["name"] == "help" and rec["first"] is None and rec["error"] is None
    (run,) = rec["warm"]
    assert run["rc"] == 0 and 0 < run["wall_s"] < 10 and run["peak_rss_bytes"] > 2**20
    assert rec["warm_summary"]["median_s"] == run["wall_s"]
    inner = rec["inprocess"]  # the same command called once more in a warm process
    assert inner["rc"] == 0 and len(inner["walls_s"]) == 1
    assert inner["median_s"] == inner["walls_s"][0] < run["wall_s"]
    assert rec["result"] in ("pass", "FAIL (warm)")
