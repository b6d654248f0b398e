"""Confinement of the traced program: namespaces, a seccomp filter, rlimits.

Standard library only: the tracing child (`frontend._child`, run as a plain
script) imports it before it runs the user's program. The strongest level
the kernel grants is used, and the level that ran is reported:

``namespaces``
    new user, mount, PID, network, IPC and UTS namespaces (no root needed
    where unprivileged user namespaces are enabled): the program sees a
    fresh root with ``/usr``, ``/etc``, ``/bin``, ``/lib*``, ``/opt``
    read-only (the secrets of ``/etc`` hidden: `etc_secrets`), ``/dev``
    with only null, zero, full, random and urandom, a private ``/tmp``
    (tmpfs) and its working directory as an overlay whose
    writes go to a private directory; no network interface but a downed
    loopback; every process of the namespace dies with its init. Plus the
    two levels below.
``seccomp``
    a seccomp-bpf filter refusing (EPERM) process creation (fork, vfork,
    clone, clone3), exec, sockets, ptrace and cross-process memory access,
    namespace and mount calls, bpf, perf events, keyrings, userfaultfd,
    terminal input injection (TIOCSTI), and signals to any process but the
    program itself. Plus rlimits.
``rlimits``
    limits on address space, CPU time, file size, open files and processes,
    no core dumps; the process dies with its parent.
``none``
    ``--no-sandbox``: the program runs with the user's rights.
"""

import ctypes
import fnmatch
import os
import platform
import re
import resource
import signal
import stat
import struct

__all__ = [
    "LEVELS",
    "SandboxError",
    "die_with_parent",
    "enter_namespaces",
    "etc_secrets",
    "install_seccomp",
    "apply_rlimits",
    "seccomp_supported",
]

LEVELS = ("namespaces", "seccomp", "rlimits", "none")

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
EPERM = 1

#: Read-only directories of the namespace level's root (those that exist).
SYSTEM_DIRS = ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt")
#: Paths under /etc hidden whatever their mode (shell patterns, relative to /etc).
SECRETS = ("shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d",
           "ssh/ssh_host_*_key")
#: The most entries of /etc looked at for files that are not world-readable.
ETC_SCAN_LIMIT = 100_000
#: The only device nodes the program sees.
DEVICES = ("null", "zero", "full", "random", "urandom")

# Per architecture: audit arch, syscall numbers refused, the pivot_root number,
# the numbers of kill / tkill / tgkill / ioctl, and whether x32 numbers exist.
_ARCH = {
    "x86_64": dict(
        audit=0xC000003E, pivot_root=155, seccomp=317, kill=62, tkill=200, tgkill=234, ioctl=16, x32=True,
        denied={
            "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execve": 59, "execveat": 322,
            "socket": 41, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
            "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
            "chroot": 161, "bpf": 321, "perf_event_open": 298, "keyctl": 250, "add_key": 248,
            "request_key": 249, "userfaultfd": 323, "pidfd_open": 434,
            "pidfd_send_signal": 424, "pidfd_getfd": 438, "open_tree": 428, "move_mount": 429,
            "fsopen": 430, "fsmount": 432, "kexec_load": 246, "init_module": 175,
            "finit_module": 313, "reboot": 169, "swapon": 167, "swapoff": 168,
        },
    ),
    "aarch64": dict(
        audit=0xC00000B7, pivot_root=41, seccomp=277, kill=129, tkill=130, tgkill=131, ioctl=29, x32=False,
        denied={
            "clone": 220, "clone3": 435, "execve": 221, "execveat": 281, "socket": 198,
            "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "unshare": 97,
            "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
            "bpf": 280, "perf_event_open": 241, "keyctl": 219, "add_key": 217,
            "request_key": 218, "userfaultfd": 282, "pidfd_open": 434,
            "pidfd_send_signal": 424, "pidfd_getfd": 438, "open_tree": 428, "move_mount": 429,
            "fsopen": 430, "fsmount": 432, "kexec_load": 104, "init_module": 105,
            "finit_module": 273, "reboot": 142, "swapon": 224, "swapoff": 225,
        },
    ),
}

TIOCSTI = 0x5412


class SandboxError(Exception):
    """A confinement step the kernel refused (the caller falls back a level)."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]
_libc.syscall.restype = ctypes.c_long


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(err)}")


def _arch():
    return _ARCH.get(platform.machine())


def die_with_parent(parent_pid):
    """Have the kernel SIGKILL this process when its parent dies.

    Exits at once when the parent is already gone (``parent_pid`` is the pid
    it had when this process was forked)."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
    if os.getppid() != parent_pid:
        os._exit(137)


def become_subreaper():
    """Orphaned descendants are re-parented to this process (so it can kill them)."""
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(CHILD_SUBREAPER)")


def _mount(src, dst, fstype, flags, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    _check(_libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)),
           f"mount {fstype or src or ''} on {dst}")


def _bind_readonly(src, dst, recursive=False):
    """Bind ``src`` on ``dst`` read-only; with ``recursive``, every mount below it too (a
    container's bind-mounted ``/etc/hosts`` is one: the top's flag does not reach it)."""
    _mount(src, dst, None, MS_BIND | (MS_REC if recursive else 0))
    for point in _mounts_under(dst) if recursive else [dst]:
        locked = os.statvfs(point).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
        _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | locked)


def _mounts_under(top):
    """Mount points at or below ``top`` (from /proc/self/mountinfo), outermost first."""
    points = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = _unescape(line.split()[4])
            if point == top or point.startswith(top.rstrip("/") + "/"):
                points.append(point)
    return sorted(set(points), key=len)


def _unescape(field):
    """A mountinfo path: spaces, tabs, newlines and backslashes come as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def etc_secrets(top="/etc", limit=ETC_SCAN_LIMIT):
    """What the namespace level hides under ``top``: its `SECRETS` and what others may not read.

    ``top`` is walked without following links, at most ``limit`` entries. A
    regular file is hidden when it matches `SECRETS` or is not world-readable
    (``mode & 0o004 == 0``); a directory when it matches `SECRETS` or is not
    world-readable and searchable (``mode & 0o005 != 0o005``), and then
    whole (it is not entered). Links, devices, FIFOs and sockets are left
    as they are (a link to a hidden file shows the empty file).

    Returns
    -------
    hidden : list of (str, bool)
        Paths relative to ``top`` and whether each is a directory, in walk order.
    complete : bool
        False when the walk stopped at ``limit`` entries.
    """
    hidden, seen = [], 0
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(os.path.join(top, rel)) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return hidden, False
            path = os.path.join(rel, entry.name)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            secret = any(fnmatch.fnmatchcase(path, pattern) for pattern in SECRETS)
            if stat.S_ISDIR(st.st_mode):
                if secret or st.st_mode & 0o005 != 0o005:
                    hidden.append((path, True))
                else:
                    pending.append(path)
            elif stat.S_ISREG(st.st_mode) and (secret or not st.st_mode & 0o004):
                hidden.append((path, False))
    return hidden, True


def _hide_secrets(scratch, root):
    """Mount an empty read-only file or directory over each of `etc_secrets` in the new root.

    Returns notes on what could not be hidden (a mount the kernel refused)."""
    real = os.path.realpath("/etc")
    inner = root + real
    if not os.path.isdir(inner):
        return []
    empty_file, empty_dir = os.path.join(scratch, "empty-file"), os.path.join(scratch, "empty-dir")
    os.close(os.open(empty_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444))
    os.chmod(empty_file, 0o444)
    os.mkdir(empty_dir)
    os.chmod(empty_dir, 0o555)
    hidden, complete = etc_secrets(real)
    notes = [] if complete else [
        f"only the first {ETC_SCAN_LIMIT:,} entries of {real} were checked for secrets"]
    for rel, is_dir in hidden:
        try:
            _bind_readonly(empty_dir if is_dir else empty_file, os.path.join(inner, rel))
        except (SandboxError, OSError) as exc:
            notes.append(f"could not hide {os.path.join(real, rel)}: {exc}")
    return notes


def enter_namespaces(scratch, cwd, tmp_mib=256):
    """Move this (single-threaded) process into new namespaces and a new root.

    The caller's next child becomes PID 1 of the new PID namespace.

    Parameters
    ----------
    scratch : str
        An empty directory on the host for the new root, the overlay's upper
        and work directories; what the program writes to its working
        directory ends up in ``scratch/upper``.
    cwd : str
        The program's working directory (absolute); it appears at the same
        path inside, writable through an overlay (read-only where overlayfs
        is not available in a user namespace).
    tmp_mib : int
        Size of the private ``/tmp``.

    Returns
    -------
    list of str
        Notes on what could not be set up as intended.

    Raises
    ------
    SandboxError
        The kernel refused the namespaces (the caller falls back).
    """
    uid, gid = os.geteuid(), os.getegid()
    flags = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
             | CLONE_NEWUTS)
    _check(_libc.unshare(flags), "unshare")
    try:
        with open("/proc/self/setgroups", "w") as fh:
            fh.write("deny")
        with open("/proc/self/uid_map", "w") as fh:
            fh.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as fh:
            fh.write(f"{gid} {gid} 1")
    except OSError as exc:
        raise SandboxError(f"user namespace id maps: {exc.strerror}") from None
    notes = []
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = os.path.join(scratch, "root")
    os.mkdir(root)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    for name in SYSTEM_DIRS:
        src = "/" + name
        dst = os.path.join(root, name)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isdir(src):
            os.mkdir(dst)
            _bind_readonly(src, dst, recursive=True)
    notes += _hide_secrets(scratch, root)
    dev = os.path.join(root, "dev")
    os.mkdir(dev)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=16k,mode=755")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            node = os.path.join(dev, name)
            open(node, "w").close()
            _mount("/dev/" + name, node, None, MS_BIND)
    os.symlink("/proc/self/fd", os.path.join(dev, "fd"))
    _mount(None, dev, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    tmp = os.path.join(root, "tmp")
    os.mkdir(tmp)
    _mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(tmp_mib)}m,mode=1777")
    if cwd == "/":
        notes.append("working directory /: the sandbox's own root, read-only")
    else:
        inner = root + cwd
        if not os.path.isdir(inner):
            os.makedirs(inner)
        upper, work = os.path.join(scratch, "upper"), os.path.join(scratch, "work")
        os.mkdir(upper)
        os.mkdir(work)
        try:
            _mount("overlay", inner, "overlay", MS_NOSUID | MS_NODEV,
                   f"lowerdir={_escape(cwd)},upperdir={_escape(upper)},"
                   f"workdir={_escape(work)},userxattr")
        except SandboxError:
            _bind_readonly(cwd, inner)
            notes.append("working directory read-only (no overlayfs in a user namespace)")
    old = os.path.join(root, ".old-root")
    os.mkdir(old)
    arch = _arch()
    if arch is None:
        raise SandboxError(f"pivot_root: unknown architecture {platform.machine()}")
    _check(_libc.syscall(arch["pivot_root"], root.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old-root", MNT_DETACH), "umount old root")
    os.rmdir("/.old-root")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(cwd)
    return notes


def _escape(path):
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def seccomp_supported():
    """Whether this architecture has a filter (x86_64 and aarch64 do)."""
    return _arch() is not None


def _filter(self_pid):
    """The BPF program of `install_seccomp`: a list of ``(code, jt, jf, k)``."""
    arch = _arch()
    LD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    deny = SECCOMP_RET_ERRNO | EPERM
    # (code, true label, false label, k); labels name later instructions, None = next
    code = [(LD, None, None, 4), (JEQ, None, "kill", arch["audit"]), (LD, None, None, 0)]
    if arch["x32"]:
        code.append((JGE, "deny", None, 0x40000000))
    for nr in sorted(set(arch["denied"].values())):
        code.append((JEQ, "deny", None, nr))
    for nr in (arch["kill"], arch["tkill"], arch["tgkill"]):
        code.append((JEQ, "signal", None, nr))
    code.append((JEQ, "ioctl", None, arch["ioctl"]))
    labels = {}

    def label(name):
        labels[name] = len(code)

    code.append((RET, None, None, SECCOMP_RET_ALLOW))
    label("signal")  # the target (pid / tgid, an int) must be this process or 0: its group
    code += [(LD, None, None, 16), (JEQ, "allow", None, self_pid & 0xFFFFFFFF),
             (JEQ, "allow", "deny", 0)]
    label("ioctl")  # no terminal input injection
    code += [(LD, None, None, 24), (JEQ, "deny", "allow", TIOCSTI)]
    label("allow")
    code.append((RET, None, None, SECCOMP_RET_ALLOW))
    label("deny")
    code.append((RET, None, None, deny))
    label("kill")
    code.append((RET, None, None, SECCOMP_RET_KILL_PROCESS))

    def offset(target, at):
        if target is None:
            return 0
        off = labels[target] - at - 1
        assert 0 <= off < 256
        return off

    return [(op, offset(jt, i), offset(jf, i), k) for i, (op, jt, jf, k) in enumerate(code)]


def install_seccomp(self_pid, all_threads=False):
    """Install the filter on this process (and whatever it would create).

    Parameters
    ----------
    self_pid : int
        This process's pid as it sees it: the only target signals may have.
    all_threads : bool
        Install it on every thread of the process at once (``seccomp(2)`` with
        ``SECCOMP_FILTER_FLAG_TSYNC``), not only on the calling one.

    Raises
    ------
    SandboxError
    """
    if not seccomp_supported():
        raise SandboxError(f"no seccomp filter for architecture {platform.machine()}")
    prog = _filter(self_pid)
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog), ctypes.addressof(buf))
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    if all_threads:
        ret = _libc.syscall(_arch()["seccomp"], SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_TSYNC, ctypes.c_void_p(ctypes.addressof(fprog)))
        if ret != 0:  # -1: an error; a thread id: the thread that could not be synchronised
            raise SandboxError("seccomp(TSYNC): " + (os.strerror(ctypes.get_errno()) if ret < 0
                                                      else f"thread {ret} not synchronised"))
    else:
        _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0),
               "prctl(SECCOMP)")


def apply_rlimits(*, cpu_seconds, file_bytes, open_files=256):
    """CPU time, file size, open files and processes of the program.

    The address-space limit and the core-dump ban are set earlier, for the
    whole tracing child. ``RLIMIT_NPROC`` 0 refuses new processes where the
    kernel enforces it (not for root outside a user namespace; the seccomp
    filter covers that case).
    """
    cpu = max(1, int(cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(file_bytes), int(file_bytes)))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    n = min(open_files, hard) if hard != resource.RLIM_INFINITY else open_files
    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (ValueError, OSError):
        pass
