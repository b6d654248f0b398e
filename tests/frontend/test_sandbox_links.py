"""Links a traced program makes, links already in ``--keep-files DIR``, and secrets under /etc.

The program's working directory is a private overlay at the namespace level;
everything vcut does afterwards over what the program wrote (listing it,
copying it out, removing it) must not follow a link the program made, and the
copy into ``--keep-files DIR`` must not write through a link there. Inside
the sandbox the program must not read /etc's secrets. Each case is checked as
the user running the tests (root on CI) and, where this machine allows it, as
an ordinary user (``nobody``, in a subprocess).
"""

import json
import os
import pwd
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from frontend import trace_program

from vcut_base import errors, scratch
from frontend._sandbox import SECRETS, etc_secrets
from frontend.run import RunLimits
from tests.helpers import write_c
from vcut.cli import main

LIMITS = RunLimits(timeout=60)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def namespaces(tmp_path_factory):
    """Skip unless the namespace level is granted here."""
    src = write_c(tmp_path_factory.mktemp("probe"), "probe.c", "int main(void) { return 0; }\n")
    try:
        trace_program(src, limits=LIMITS, sandbox="namespaces")
    except errors.SandboxUnavailable as exc:
        pytest.skip(f"the namespaces sandbox is not available on this machine: {exc}")


def _lines(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _our_scratch_dirs():
    mark = f"vcut-run-{os.getpid():07d}-"
    return [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(mark)]


def _chain(top, depth, name="a"):
    """``top/a/a/.../a`` (``depth`` levels), made without long paths; returns a descriptor of
    the deepest directory (the caller closes it)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    return fd


def _host_victims(base):
    """A host directory (mode 755, one file) and a host file (mode 644) a program links to."""
    victim = base / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("host data\n")
    os.chmod(victim, 0o755)
    os.chmod(victim / "keep.txt", 0o644)
    return victim


def _assert_victims_untouched(victim):
    assert stat.S_IMODE(os.lstat(victim).st_mode) == 0o755
    assert stat.S_IMODE(os.lstat(victim / "keep.txt").st_mode) == 0o644
    assert sorted(os.listdir(victim)) == ["keep.txt"]
    assert (victim / "keep.txt").read_text() == "host data\n"


# -- item 1: removing and listing what the program wrote --------------------------------


def test_removing_a_scratch_tree_never_follows_its_links(tmp_path):
    victim = _host_victims(tmp_path)
    tree = tmp_path / "vcut-run-tree"
    tree.mkdir()
    os.symlink(victim, tree / "d")                      # a link to a host directory
    os.symlink(victim / "keep.txt", tree / "f")         # ... and to a host file
    os.symlink("/nonexistent/x", tree / "dangling")
    os.mkfifo(tree / "fifo")
    locked = tree / "locked"                            # as the overlay's work dir: mode 000
    locked.mkdir()
    os.symlink(victim, locked / "d")
    (locked / "x").write_text("x")
    os.chmod(locked, 0)
    deep = _chain(str(tree), scratch.MAX_DEPTH * 2 + 5)  # removed in passes (moved up)
    os.symlink(victim, "d", dir_fd=deep)
    os.close(deep)
    scratch._remove(str(tree))
    assert not os.path.lexists(tree)
    _assert_victims_untouched(victim)


def test_walk_files_lists_regular_files_and_enters_no_link(tmp_path):
    victim = _host_victims(tmp_path)
    top = tmp_path / "upper"
    (top / "sub").mkdir(parents=True)
    (top / "a.txt").write_text("12345")
    (top / "sub" / "b.bin").write_bytes(b"\0" * 7)
    os.symlink(victim, top / "d")
    os.symlink(victim / "keep.txt", top / "sub" / "f")
    os.mkfifo(top / "fifo")
    deep = _chain(str(top), scratch.MAX_DEPTH + 3)
    os.close(deep)
    too_deep = []
    found = sorted((rel, st.st_size) for rel, _, _, st in scratch.walk_files(str(top), too_deep))
    assert found == [("a.txt", 5), ("sub/b.bin", 7)]
    assert too_deep == ["/".join(["a"] * (scratch.MAX_DEPTH + 1))]


SYMLINKER = r"""
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
  printf("dir=%d\n", symlink("VICTIM", "d"));
  printf("file=%d\n", symlink("VICTIM/keep.txt", "f"));
  printf("locked=%d\n", mkdir("locked", 0));
  FILE *out = fopen("out.txt", "w");
  if (out) { fputs("result\n", out); fclose(out); }
  return 0;
}
"""


def test_a_link_the_program_makes_to_a_host_directory_is_never_followed(tmp_path, namespaces):
    victim = _host_victims(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    src = write_c(tmp_path, "links.c", SYMLINKER.replace("VICTIM", str(victim)))
    t = trace_program(src, cwd=str(work), limits=LIMITS, sandbox="namespaces")
    assert t.meta["sandbox"] == "namespaces" and t.exit_code == 0
    assert _lines(t.meta["stdout"]) == {"dir": "0", "file": "0", "locked": "0"}
    assert t.meta["written_files"] == [["out.txt", 7]]
    _assert_victims_untouched(victim)
    assert os.listdir(work) == []
    assert _our_scratch_dirs() == []


DEEP_WRITER = r"""
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
  FILE *top = fopen("top.txt", "w");
  fputs("top\n", top);
  fclose(top);
  for (int i = 0; i < DEPTH; i++)
    if (mkdir("a", 0755) != 0 || chdir("a") != 0) return 1;
  FILE *bottom = fopen("bottom.txt", "w");
  fputs("bottom\n", bottom);
  fclose(bottom);
  return 0;
}
"""


def test_a_deep_tree_the_program_writes_is_listed_to_a_bound_and_removed(tmp_path, namespaces):
    depth = 1100  # past Python's recursion limit: a recursive walk fails on it
    work = tmp_path / "work"
    work.mkdir()
    keep = tmp_path / "kept"
    keep.mkdir()
    src = write_c(tmp_path, "deep.c", DEEP_WRITER.replace("DEPTH", str(depth)))
    t = trace_program(src, cwd=str(work), limits=LIMITS, sandbox="namespaces",
                      keep_files=str(keep), timing=False)
    assert t.exit_code == 0
    assert t.meta["written_files"] == [["top.txt", 4]]
    cut = "/".join(["a"] * (scratch.MAX_DEPTH + 1))
    assert t.meta["not_kept"] == [
        [cut, f"more than {scratch.MAX_DEPTH} directories deep in the working directory"]]
    assert (keep / "top.txt").read_text() == "top\n"
    assert _our_scratch_dirs() == []


# -- item 2: --keep-files DIR and the links in it ---------------------------------------


KEEPER = r"""
#include <stdio.h>
#include <sys/stat.h>
static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) { printf("%s=refused\n", path); return; }
  fputs(text, f);
  fclose(f);
}
int main(void) {
  put("cfg", "new\n");
  mkdir("sub", 0755);
  put("sub/y.txt", "y\n");
  mkdir("fresh", 0755);
  put("fresh/z.txt", "zz\n");
  put("plain.txt", "plain\n");
  return 0;
}
"""


def _keep_setup(tmp_path):
    """``outside/x``, ``outside/subdir``; ``kept/cfg -> ../outside/x``, ``kept/sub ->
    ../outside/subdir`` (as a user's ``--keep-files .`` may hold), and the program."""
    outside = tmp_path / "outside"
    (outside / "subdir").mkdir(parents=True)
    (outside / "x").write_text("original\n")
    keep = tmp_path / "kept"
    keep.mkdir()
    os.symlink("../outside/x", keep / "cfg")
    os.symlink("../outside/subdir", keep / "sub")
    work = tmp_path / "work"
    work.mkdir()
    return outside, keep, work, write_c(tmp_path, "keeper.c", KEEPER)


def _assert_kept_without_writing_through(outside, keep):
    assert (outside / "x").read_text() == "original\n"
    assert os.listdir(outside / "subdir") == []
    assert not os.path.islink(keep / "cfg") and (keep / "cfg").read_text() == "new\n"
    assert os.readlink(keep / "sub") == "../outside/subdir"
    assert (keep / "fresh" / "z.txt").read_text() == "zz\n"
    assert (keep / "plain.txt").read_text() == "plain\n"
    assert sorted(os.listdir(keep)) == ["cfg", "fresh", "plain.txt", "sub"]  # no temporaries


def test_keep_files_replaces_a_link_and_never_writes_through_one(tmp_path, namespaces):
    outside, keep, work, src = _keep_setup(tmp_path)
    t = trace_program(src, cwd=str(work), limits=LIMITS, sandbox="namespaces",
                      keep_files=str(keep))
    assert t.exit_code == 0 and t.meta["stdout"] == ""
    _assert_kept_without_writing_through(outside, keep)
    assert t.meta["written_files"] == [["cfg", 4], ["fresh/z.txt", 3], ["plain.txt", 6],
                                       ["sub/y.txt", 2]]
    assert t.meta["kept_replaced"] == [["cfg", "symbolic link to ../outside/x"]]
    assert t.meta["not_kept"] == [
        ["sub/y.txt", f"{keep}/sub is a symbolic link to ../outside/subdir; "
                      "vcut does not write through links"]]


def test_keep_files_summary_names_what_was_replaced_and_refused(tmp_path, capsys, namespaces):
    outside, keep, work, src = _keep_setup(tmp_path)
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), "--cwd", str(work),
                 "--keep-files", str(keep), "--sandbox", "namespaces"])
    err = capsys.readouterr().err
    assert code == 0
    _assert_kept_without_writing_through(outside, keep)
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert notes == [
        f"note: --keep-files replaced {keep}/cfg, a symbolic link to ../outside/x, with the "
        "program's file (never written through)",
        f"note: --keep-files did not keep the program's file sub/y.txt: {keep}/sub is a "
        "symbolic link to ../outside/subdir; vcut does not write through links",
    ]
    # the same in --json (the links are back, as a user's directory would have them again)
    os.unlink(keep / "cfg")
    os.symlink("../outside/x", keep / "cfg")
    code = main(["trace", src, "-o", str(tmp_path / "t.npz"), "--cwd", str(work),
                 "--keep-files", str(keep), "--sandbox", "namespaces", "--json"])
    got = capsys.readouterr()
    out = json.loads(got.out)
    assert code == 0
    # the notes go to stderr with --json too
    assert [line for line in got.err.splitlines() if line.startswith("note: --keep")] == notes
    assert out["kept_replaced"] == [["cfg", "symbolic link to ../outside/x"]]
    assert out["not_kept"] == [
        ["sub/y.txt", f"{keep}/sub is a symbolic link to ../outside/subdir; "
                      "vcut does not write through links"]]
    assert (outside / "x").read_text() == "original\n"


@pytest.mark.parametrize("command", ["graph", "analyze"])
def test_every_command_that_runs_the_program_prints_the_keep_notes(tmp_path, capsys, namespaces,
                                                                   command):
    outside, keep, work, src = _keep_setup(tmp_path)
    out = ["-o", str(tmp_path / ("g.npz" if command == "graph" else "analysis"))]
    extra = ["-p", "2", "--no-baselines"] if command == "analyze" else []
    code = main([command, src, *out, *extra, "--cwd", str(work), "--keep-files", str(keep),
                 "--sandbox", "namespaces"])
    err = capsys.readouterr().err
    assert code == 0, err
    _assert_kept_without_writing_through(outside, keep)
    assert [line for line in err.splitlines() if line.startswith("note: --keep")] == [
        f"note: --keep-files replaced {keep}/cfg, a symbolic link to ../outside/x, with the "
        "program's file (never written through)",
        f"note: --keep-files did not keep the program's file sub/y.txt: {keep}/sub is a "
        "symbolic link to ../outside/subdir; vcut does not write through links",
    ]


# -- item 3: secrets under /etc --------------------------------------------------------


def test_etc_secrets_lists_the_named_secrets_and_what_others_may_not_read(tmp_path):
    etc = tmp_path / "etc"
    files = {  # path: mode
        "passwd": 0o644, "shadow": 0o640, "gshadow": 0o644,  # gshadow: by name, whatever its mode
        "sudoers": 0o440, "hosts": 0o644, "private.conf": 0o600, "group.conf": 0o640,
        "ssh/ssh_config": 0o644, "ssh/ssh_host_ed25519_key": 0o644,
        "ssh/ssh_host_ed25519_key.pub": 0o644, "ssh/ssh_host_rsa_key": 0o600,
        "app/ok.conf": 0o644, "app/deep/secret.key": 0o400,
        "sudoers.d/README": 0o444, "locked/inside.txt": 0o644, "listable/inside.txt": 0o600,
    }
    for rel, mode in files.items():
        path = etc / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        os.chmod(path, mode)
    for directory in ("ssh", "app", "app/deep"):
        os.chmod(etc / directory, 0o755)
    os.chmod(etc / "sudoers.d", 0o755)   # by name
    os.chmod(etc / "locked", 0o750)      # others may not list or enter it: hidden whole
    os.chmod(etc / "listable", 0o755)    # entered: its unreadable file is hidden
    os.symlink("shadow", etc / "shadow.link")      # a link is left (it shows the hidden file)
    os.symlink("/nonexistent", etc / "dangling")
    os.mkfifo(etc / "fifo", 0o600)                 # not a regular file: left
    hidden, complete = etc_secrets(str(etc))
    assert complete
    assert sorted(hidden) == [
        ("app/deep/secret.key", False), ("group.conf", False), ("gshadow", False),
        ("listable/inside.txt", False), ("locked", True), ("private.conf", False),
        ("shadow", False), ("ssh/ssh_host_ed25519_key", False), ("ssh/ssh_host_rsa_key", False),
        ("sudoers", False), ("sudoers.d", True),
    ]
    assert "ssh/ssh_host_*_key" in SECRETS
    # bounded: the walk stops after the given number of entries and says so
    _, complete = etc_secrets(str(etc), limit=3)
    assert not complete


READER = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
static void report(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) { printf("%s=error %s\n", path, strerror(errno)); return; }
  long n = 0;
  while (fgetc(f) != EOF) n++;
  fclose(f);
  printf("%s=%ld\n", path, n);
}
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) report(argv[i]);
  return 0;
}
"""


def test_the_program_cannot_read_etc_shadow(tmp_path, namespaces):
    if not os.path.isfile("/etc/shadow"):
        pytest.skip("this machine has no /etc/shadow")
    src = write_c(tmp_path, "reader.c", READER)
    with open("/etc/passwd", "rb") as fh:
        passwd = len(fh.read())
    t = trace_program(src, args=["/etc/shadow", "/etc/passwd"], limits=LIMITS,
                      sandbox="namespaces", timing=False)
    assert t.meta["sandbox"] == "namespaces"
    # an empty file stands in for it (as root the file itself would be read)
    assert _lines(t.meta["stdout"]) == {"/etc/shadow": "0", "/etc/passwd": str(passwd)}


def _need_root_tools(*tools):
    if os.geteuid() != 0:
        pytest.skip("needs root (to build a private mount namespace)")
    missing = [t for t in ("unshare", *tools) if not shutil.which(t)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


def test_every_unreadable_file_under_etc_is_hidden(tmp_path, namespaces):
    """As root, in a private mount namespace, /etc is replaced by a copy holding planted
    secrets; the traced program reads nothing of them."""
    _need_root_tools("cp", "mount")
    etc = tmp_path / "etc"
    subprocess.run(["cp", "-a", "/etc", str(etc)], check=True, timeout=120)
    planted = {"vcut-test-secret.conf": 0o600, "vcut-test-dir/inner.conf": 0o644,
               "vcut-test-open.conf": 0o644, "ssh/ssh_host_vcuttest_key": 0o644}
    for rel, mode in planted.items():
        path = etc / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret\n")
        os.chmod(path, mode)
    os.chmod(etc / "vcut-test-dir", 0o700)
    src = write_c(tmp_path, "reader.c", READER)
    paths = ["/etc/" + rel for rel in sorted(planted)]
    script = (f"mount --bind {shlex.quote(str(etc))} /etc && exec {shlex.quote(sys.executable)} "
              f"-m vcut.cli trace {shlex.quote(src)} -o {shlex.quote(str(tmp_path / 't.npz'))} "
              f"--sandbox namespaces --no-timing -- {' '.join(paths)}")
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                         capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert _lines(res.stdout) == {
        "/etc/ssh/ssh_host_vcuttest_key": "0",
        "/etc/vcut-test-dir/inner.conf": "error No such file or directory",
        "/etc/vcut-test-open.conf": "7",
        "/etc/vcut-test-secret.conf": "0",
    }


# -- all three as an ordinary user -----------------------------------------------------


def _nobody_script(argv, hold_dir):
    """A shell script that runs ``argv`` as ``nobody`` in a private mount namespace, where
    the directories on the way to this interpreter and the project that others may not
    search (``/root`` holding pyenv) are replaced by a searchable tmpfs holding only the
    way through (held meanwhile on empty directories made in ``hold_dir``)."""
    reach = [os.path.realpath(sys.executable), sys.base_prefix, sys.prefix, ROOT]
    blocked = {}
    for path in reach:
        parts = os.path.realpath(path).strip("/").split("/")
        for k in range(1, len(parts)):
            above = "/" + "/".join(parts[:k])
            if not os.stat(above).st_mode & 0o001:
                blocked.setdefault(above, set()).add(parts[k])
    q = shlex.quote
    lines = ["set -e"]
    for n, above in enumerate(sorted(blocked, key=len)):
        for m, child in enumerate(sorted(blocked[above])):
            hold = os.path.join(hold_dir, f".hold-{n}-{m}")
            lines += [f"mkdir -p {q(hold)}", f"mount --rbind {q(above + '/' + child)} {q(hold)}"]
        lines.append(f"mount -t tmpfs -o mode=755 tmpfs {q(above)}")
        for m, child in enumerate(sorted(blocked[above])):
            hold = os.path.join(hold_dir, f".hold-{n}-{m}")
            lines += [f"mkdir -p {q(above + '/' + child)}",
                      f"mount --rbind {q(hold)} {q(above + '/' + child)}"]
    nobody = pwd.getpwnam("nobody")
    lines.append(f"exec setpriv --reuid={nobody.pw_uid} --regid={nobody.pw_gid} --clear-groups "
                 + " ".join(q(a) for a in argv))
    return "\n".join(lines)


def _as_nobody(argv, cwd, home):
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         _nobody_script(argv, cwd)],
        capture_output=True, text=True, timeout=300, check=False, cwd=cwd,
        env={"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "TMPDIR": "/tmp",
             "PYTHONPATH": ROOT, "NUMBA_ENABLE_CUDASIM": "1"},
    )


@pytest.fixture
def nobody_dir():
    """A directory in /tmp owned by ``nobody`` (root only; removed afterwards)."""
    _need_root_tools("setpriv", "mount")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody here")
    base = tempfile.mkdtemp(prefix="vcut-test-nobody-")
    os.chmod(base, 0o755)
    os.chown(base, nobody.pw_uid, nobody.pw_gid)
    yield base, nobody
    shutil.rmtree(base, ignore_errors=True)


COMBINED = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
  printf("link=%d\n", symlink("VICTIM", "d"));
  FILE *f = fopen("cfg", "w");
  if (f) { fputs("new\n", f); fclose(f); }
  FILE *s = fopen("/etc/shadow", "r");
  long n = 0;
  if (s) { while (fgetc(s) != EOF) n++; fclose(s); printf("shadow=%ld\n", n); }
  else printf("shadow=error %s\n", strerror(errno));
  return 0;
}
"""


def test_links_keep_files_and_secrets_as_an_ordinary_user(nobody_dir):
    base, nobody = nobody_dir
    probe = _as_nobody([sys.executable, "-c", "import frontend, llvmlite, numpy"], base, base)
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot run this interpreter here: {probe.stderr.strip()[-200:]}")
    paths = {name: os.path.join(base, name) for name in ("victim", "work", "kept", "outside")}
    for path in paths.values():
        os.mkdir(path, 0o755)
    with open(os.path.join(paths["victim"], "keep.txt"), "w") as fh:
        fh.write("host data\n")
    with open(os.path.join(paths["outside"], "x"), "w") as fh:
        fh.write("original\n")
    os.symlink("../outside/x", os.path.join(paths["kept"], "cfg"))
    src = write_c(base, "combined.c", COMBINED.replace("VICTIM", paths["victim"]))
    for root, dirs, files in os.walk(base):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.lchown(name, nobody.pw_uid, nobody.pw_gid)
    os.chmod(paths["victim"], 0o755)
    res = _as_nobody([sys.executable, "-m", "vcut.cli", "trace", src, "-o",
                      os.path.join(base, "t.npz"), "--cwd", paths["work"], "--keep-files",
                      paths["kept"], "--sandbox", "auto", "--no-timing", "--json"], base, base)
    if "namespaces refused" in res.stdout + res.stderr:
        pytest.skip("user namespaces are not granted to an ordinary user here")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["sandbox"] == "namespaces"
    assert _lines(out["stdout"]) == {"link": "0", "shadow": "0"}
    assert stat.S_IMODE(os.lstat(paths["victim"]).st_mode) == 0o755    # item 1
    with open(os.path.join(paths["outside"], "x")) as fh:                # item 2
        assert fh.read() == "original\n"
    assert out["kept_replaced"] == [["cfg", "symbolic link to ../outside/x"]]
    with open(os.path.join(paths["kept"], "cfg")) as fh:
        assert fh.read() == "new\n"
