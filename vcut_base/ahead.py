"""Compile a command's later kernels ahead, in a second process, on a first run.

A command that finds numba's cache cold (the first run after an install) compiles each
kernel when it first calls it, one after another: `vcut analyze` of a small program
spends about 17 of its 19 s so. On a machine of two or more cores `spawn` starts a
helper process beside it (``python -m vcut_base.ahead``) that compiles the same
kernels from a *manifest*, the list of the kernel signatures the command compiled on a
recorded first run, from the last to the first (a few large ones first where `plan`'s
simulation of the two processes says that ends sooner). The command compiles forward
from its first kernel; each kernel the helper has cached by the time the command reaches
it is loaded from numba's cache, and one the helper is compiling is waited for
(`vcut_base.jitcache`'s compile lock), so they meet about halfway.

Nothing depends on the helper: a kernel it has not compiled yet the command compiles
itself, a manifest line that no longer names a kernel or a signature is skipped, and
the helper stops when the command's process is gone. Only speed is at stake. The
command line imports this module at start-up: it imports numba only when it compiles.

A manifest is a text file: its first line names the command it was recorded with
(``# command: python -m vcut ...``), then one kernel signature per line in the order the
command compiled them: ``module<TAB>qualified name<TAB>start<TAB>seconds<TAB>argument
types`` (the seconds from the process's start to the compile's, the compile's seconds, and
the argument types as numba prints them, ``(Array(int32, 1, 'C', False, aligned=True),
int64)``, read by a parser that accepts numba type names only, `parse_types`). ``record``
(``python -m vcut_base.ahead record OUT -- python -m vcut ARGS``) writes one: it runs the
command with an empty numba cache and notes every kernel compiled from Python (not those
compiled inside another kernel's compile); ``rerecord FOLDER`` records every manifest of a folder again
with the command on its first line (after a kernel's signatures changed).

``VCUT_COMPILE_AHEAD=0`` turns the helper off.
"""

import ast
import importlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass

__all__ = ["Entry", "parse_types", "read_manifest", "finish_time", "plan",
           "compile_manifest", "spawn", "cold", "cores", "record", "rerecord", "command_of",
           "tree_env"]

#: numba type constructors a manifest may call (besides plain names of `numba.types`).
_CALLS = ("Array", "UniTuple", "Tuple", "omitted", "Omitted", "NumberClass")


def parse_types(text):
    """The tuple of numba types written as ``text`` (numba's own printing of an argument
    type tuple); ValueError for anything else than numba type names, the constructors
    `_CALLS` and constants (no attribute, subscript or other call is evaluated)."""
    from numba.core import types

    def value(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(value(e) for e in node.elts)
        if isinstance(node, ast.Name):
            ty = getattr(types, node.id, None)
            if isinstance(ty, types.Type):
                return ty
            raise ValueError(f"not a numba type: {node.id}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _CALLS:
            args = [value(a) for a in node.args]
            kwargs = {k.arg: value(k.value) for k in node.keywords}
            try:
                if node.func.id in ("omitted", "Omitted"):  # printed omitted(default=...)
                    return types.Omitted(*args, *kwargs.values())
                return getattr(types, node.func.id)(*args, **kwargs)
            except (TypeError, ValueError, KeyError, NotImplementedError) as exc:
                raise ValueError(f"not a numba type: {node.func.id}(...): {exc}") from exc
        raise ValueError(f"not a numba type expression: {ast.dump(node)[:80]}")

    # numba prints a dtype passed as an argument (``np.int32``) as ``class(int32)``: a
    # Python keyword, read here as the constructor's own name
    text = re.sub(r"(?<![A-Za-z0-9_])class\(", "NumberClass(", text)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not a type tuple: {text[:80]!r}") from exc
    got = value(tree.body)
    if not isinstance(got, tuple):
        got = (got,)
    if not all(isinstance(t, types.Type) for t in got):
        raise ValueError(f"not a type tuple: {text[:80]!r}")
    return got


@dataclass(frozen=True)
class Entry:
    """One kernel signature of a manifest: where the kernel is, when the recorded run
    started compiling it (seconds from the process's start) and for how long, and its
    argument types as numba prints them (`parse_types`)."""

    module: str
    qualname: str
    start: float
    seconds: float
    types: str


def read_manifest(path):
    """The `Entry` list of a manifest file, in its order (blank lines, ``#`` comments and
    lines of another shape skipped); OSError where it cannot be read."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(parts) != 5:
                continue
            try:
                out.append(Entry(parts[0], parts[1], float(parts[2]), float(parts[3]),
                                 parts[4]))
            except ValueError:
                continue
    return out


def finish_time(entries, order, delay):
    """When the command, compiling ``entries`` in their order, is done with the last one
    if a helper starting ``delay`` seconds after the first compiles ``order`` (indices
    into ``entries``) meanwhile: a kernel the helper has finished by the time the command
    needs it is loaded (no time); one it is compiling the command waits for; any other
    the command compiles itself, and the helper then skips it. Seconds from the first
    compile, with the command's work between compiles as recorded (``start`` gaps)."""
    n = len(entries)
    done_at = [None] * n  # when the helper has it in the cache
    begun = [None] * n  # when the helper started it
    taken = [False] * n  # the command compiled it
    t_cmd = 0.0
    t_help = delay
    queue = list(order)
    for i, e in enumerate(entries):
        if i:  # the command's own work between the two compiles, as recorded
            prev = entries[i - 1]
            t_cmd += max(0.0, e.start - prev.start - prev.seconds)
        while queue and t_help <= t_cmd:  # the helper's compiles started before now
            j = queue.pop(0)
            if taken[j] or done_at[j] is not None:
                continue
            begun[j] = t_help
            t_help += entries[j].seconds
            done_at[j] = t_help
        if done_at[i] is not None and (begun[i] <= t_cmd):
            t_cmd = max(t_cmd, done_at[i])  # loaded, after waiting for its compile
        else:
            taken[i] = True
            t_cmd += e.seconds
    return t_cmd


def plan(entries, delay=0.5, rounds=4):
    """The order in which the helper compiles ``entries`` (indices): a few kernels first,
    then the rest backward from the last. The first ones are chosen greedily, up to
    ``rounds`` of them, each the one after which `finish_time` says the command ends
    soonest, while that is sooner than without it (a large kernel the command would reach
    just before the helper does is better compiled by the helper first)."""
    n = len(entries)
    backward = list(range(n - 1, -1, -1))

    def order(first):
        return first + [j for j in backward if j not in first]

    first = []
    best = finish_time(entries, order(first), delay)
    for _ in range(rounds):
        pick = None
        for k in range(n):
            if k not in first:
                t = finish_time(entries, order(first + [k]), delay)
                if t < best - 1e-9:
                    best, pick = t, k
        if pick is None:
            break
        first.append(pick)
    return order(first)


def _alive(pid):
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process took the number: not ours
        return False
    return True


def _kernel(module, qualname):
    """The cached vcut kernel ``module.qualname``, or None."""
    from numba.core.dispatcher import Dispatcher

    from .jitcache import PACKAGES

    if module.split(".")[0] not in PACKAGES:
        return None
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception:  # noqa: BLE001 - a stale line: skipped, never fatal
        return None
    return obj if isinstance(obj, Dispatcher) else None


def compile_manifest(entries, parent=None, order=None):
    """Compile (or load from numba's cache) each signature of ``entries`` (`read_manifest`)
    in ``order`` (indices; default `plan`'s); stop before the next one once process
    ``parent`` is gone. Entries that no longer name a kernel or a signature are skipped.
    Returns the number of signatures compiled or loaded."""
    done = 0
    for i in (plan(entries) if order is None else order):
        if not _alive(parent):
            break
        e = entries[i]
        kernel = _kernel(e.module, e.qualname)
        if kernel is None:
            continue
        try:
            kernel.compile(parse_types(e.types))  # a signature compiled already: returned
        except Exception:  # noqa: BLE001 - numba refuses a stale signature: skipped
            continue
        done += 1
    return done


def cores():
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


_STARTED = []  # the helper this process started, if any


def tree_env():
    """The environment of a child ``python -P -m ...`` that imports the kernels this process
    imports: the folder of these packages first on its path (``-P`` keeps out the current
    directory, which may hold another copy)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))


def spawn(manifest):
    """Start the helper that compiles ``manifest``'s kernels beside this process (module
    docstring), once per process; None where there is nothing to gain (one CPU, no such
    file, ``VCUT_COMPILE_AHEAD=0``, a `record` run, a helper already started), off POSIX
    (`_alive`'s ``os.kill(pid, 0)`` would end the command on Windows) or where it cannot
    start, else the Popen."""
    from .jitcache import RECORD_ENV

    if (_STARTED or os.name != "posix" or os.environ.get("VCUT_COMPILE_AHEAD") == "0"
            or os.environ.get(RECORD_ENV) or cores() < 2 or not os.path.isfile(manifest)):
        return None
    try:
        helper = subprocess.Popen(
            [sys.executable, "-P", "-m", "vcut_base.ahead", "run", manifest, str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=True, env=tree_env())
    except OSError:
        return None
    _STARTED.append(helper)
    return helper


def cold(manifest):
    """Whether numba's cache has never held the last kernel of ``manifest`` (its index
    file is missing): a first run, known before the first compile. False where the
    manifest cannot be read or names no kernel. Imports that kernel's module."""
    try:
        entries = read_manifest(manifest)
    except OSError:
        return False
    from .jitcache import index_path

    kernel = _kernel(entries[-1].module, entries[-1].qualname) if entries else None
    index = index_path(kernel)
    return index is not None and not os.path.exists(index)


def record(out, argv):
    """Run ``argv`` (a command line, e.g. ``[sys.executable, "-m", "vcut", "analyze", ...]``)
    with an empty numba cache and write the kernel signatures it compiled from Python to
    the manifest ``out``, in order. Returns the command's exit status."""
    from .atomic import atomic_output
    from .jitcache import RECORD_ENV

    with tempfile.TemporaryDirectory(prefix="vcut-ahead-") as tmp:
        log = os.path.join(tmp, "compiles.txt")
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "cache"),
                   **{RECORD_ENV: log},
                   VCUT_COMPILE_AHEAD="0", VCUT_COMPILE_NOTE="0")
        code = subprocess.call(argv, env=env, stdout=subprocess.DEVNULL)
        lines, seen = [], set()
        if os.path.exists(log):
            with open(log, encoding="utf-8") as f:
                for line in f:
                    parts = line.split("\t")
                    key = (parts[0], parts[1], parts[-1])
                    if key not in seen:
                        seen.add(key)
                        lines.append(line)
    with atomic_output(out, "w") as f:
        f.write(f"# command: {shlex.join(['python', *argv[1:]])}\n"
                "# the kernels it compiled from Python on a first run, in order: module, name, "
                "seconds from its start, seconds compiling, argument types\n"
                "# written by python -m vcut_base.ahead record OUT -- COMMAND; read by "
                "vcut_base.ahead\n")
        f.writelines(lines)
    return code


def command_of(manifest):
    """The command line a manifest was recorded with (its first line, ``# command: ...``),
    as a list starting with ``python``; ValueError where the first line is not that."""
    with open(manifest, encoding="utf-8") as f:
        first = f.readline().rstrip("\n")
    if not first.startswith("# command: python "):
        raise ValueError(f"{manifest}: the first line names no command (# command: python ...)")
    return shlex.split(first[len("# command: "):])


def rerecord(folder, say=print):
    """`record` each manifest of ``folder`` (``*.txt``) again with the command on its first
    line, run from the current directory. Returns the number of commands that failed."""
    failed = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".txt"):
            continue
        path = os.path.join(folder, name)
        argv = command_of(path)
        say(f"{name}: {shlex.join(argv)}")
        if record(path, [sys.executable, *argv[1:]]) != 0:
            say(f"{name}: the command failed")
            failed += 1
    return failed


def _main(argv):
    if len(argv) == 3 and argv[0] == "run":
        try:
            entries = read_manifest(argv[1])
        except OSError:
            return 1
        try:
            os.nice(10)  # the command's own threads first, where they want both cores
        except OSError:
            pass
        compile_manifest(entries, int(argv[2]))
        return 0
    if len(argv) >= 3 and argv[0] == "record" and argv[2] == "--":
        return record(argv[1], argv[3:])
    if len(argv) == 2 and argv[0] == "rerecord":
        return 1 if rerecord(argv[1]) else 0
    print("usage: python -m vcut_base.ahead run MANIFEST PID | record OUT -- COMMAND... | "
          "rerecord FOLDER", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
