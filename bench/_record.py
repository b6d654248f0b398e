"""What every saved benchmark result carries, so that docs/benchmarks.md can cite it.

`envelope` returns the fields bench/report.py reads from each JSON file of
bench/results/: the script and the exact command line that produced it, the date
(UTC), the machine (cores, memory, CPU, GPU, load average), the git commit, the
versions of the libraries, and what kind of figure it is (``whole command`` or
``in-process``; ``first run`` and/or ``warm``). `save` writes the file whole (a
temporary file renamed over the target).
"""

import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess

from vcut_base.atomic import atomic_output

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def machine():
    """Cores, memory, CPU model, GPU and OS of this machine."""
    mem = cpu = None
    try:
        with open("/proc/meminfo") as fh:
            mem = next(int(line.split()[1]) * 1024 for line in fh
                       if line.startswith("MemTotal"))
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh
                        if line.startswith("model name")), None)
    except OSError:
        pass
    gpu = "none"
    if shutil.which("nvidia-smi"):
        q = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                           check=False, capture_output=True, text=True)
        gpu = q.stdout.strip().replace("\n", "; ") or "none"
    return {"hostname": platform.node(), "cores": os.cpu_count(),
            "cores_usable": len(os.sched_getaffinity(0)), "memory_bytes": mem, "cpu": cpu,
            "gpu": gpu, "os": platform.platform()}


def git_commit(tree=ROOT):
    """The commit of ``tree`` and whether tracked files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               check=False, cwd=tree, capture_output=True,
                               text=True).stdout.strip()
        return {"commit": head, "dirty": bool(dirty),
                "dirty_paths": [line[3:] for line in dirty.splitlines()]}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None, "dirty_paths": []}


def versions():
    """Python's and the measured libraries' versions."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ("vcut", "numba", "llvmlite", "numpy", "scipy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def now():
    return datetime.datetime.now(datetime.UTC)


def envelope(script, argv, *, kind, runs, started, label="", tree=ROOT):
    """The fields of a saved result: ``script`` (``bench/x.py``) run with ``argv``;
    ``kind``: "whole command", "in-process" or both ("whole command and in-process");
    ``runs``: "first run and warm", "warm", ...; ``started``: a UTC datetime."""
    mach = machine()
    mach["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return {"benchmark": script, "command": shlex.join(["python", script, *argv]),
            "argv": list(argv), "date": started.isoformat(timespec="seconds"),
            "finished": now().isoformat(timespec="seconds"), "machine": mach,
            "git": git_commit(tree), "versions": versions(), "kind": kind, "runs": runs,
            "label": label}


def save(path, doc):
    """Write ``doc`` as JSON to ``path`` whole (`vcut_base.atomic.atomic_output`: a
    temporary file renamed over it)."""
    with atomic_output(path, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
