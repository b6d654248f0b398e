"""vcut.__main__: the program ends without the interpreter's teardown, losing nothing."""

import json
import subprocess
import sys


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_leave_flushes_runs_atexit_handlers_and_keeps_the_code():
    out = _python("import atexit, vcut.__main__ as m\n"
                  "atexit.register(lambda: print('handler ran', flush=False))\n"
                  "print('buffered', end=' ')\n"
                  "m._leave(3)\n"
                  "print('never')")
    assert out.returncode == 3
    assert out.stdout == "buffered handler ran\n"


def test_leave_waits_for_a_running_non_daemon_thread():
    out = _python("import threading, time, vcut.__main__ as m\n"
                  "def work():\n"
                  "    time.sleep(0.3)\n"
                  "    print('thread done')\n"
                  "threading.Thread(target=work).start()\n"
                  "m._leave(5)")
    assert out.returncode == 5
    assert out.stdout == "thread done\n"


def test_the_program_prints_its_whole_json_and_exits_0(tmp_path):
    path = tmp_path / "square.txt"
    path.write_text("0 1\n1 2\n2 3\n3 0\n")
    out = subprocess.run([sys.executable, "-m", "vcut", "stats", str(path), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert (doc["nodes"], doc["edges"]) == (4, 4)


def test_the_program_keeps_an_error_exit_code(tmp_path):
    out = subprocess.run([sys.executable, "-m", "vcut", "stats", str(tmp_path / "none.txt")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("error: ")
    assert out.stdout == ""
