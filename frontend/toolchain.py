"""Find a C compiler whose LLVM IR parses with llvmlite's LLVM.

Preference order: ``$VCUT_CC`` (a command line, split like a shell would),
then ``clang`` on PATH if a probe program's IR parses with llvmlite, then the
clang bundled in the ``ziglang`` wheel (``python -m ziglang cc``), which
needs nothing outside pip.
"""

import functools
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

import llvmlite.binding as llvm

from vcut_base.errors import ToolchainError
from vcut_base.scratch import scratch_dir

__all__ = ["Toolchain", "find_toolchain"]

_PROBE_C = "int vcut_probe(int x) { return x + 1; }\n"


@dataclass(frozen=True)
class Toolchain:
    """A C compiler command able to emit LLVM IR that llvmlite parses.

    Attributes
    ----------
    command : tuple of str
        The argv prefix that runs the compiler (``clang`` or
        ``python -m ziglang cc``).
    kind : str
        ``"env"``, ``"clang"`` or ``"zig"``.
    version : str
        First line of ``--version``.
    """

    command: tuple
    kind: str
    version: str

    @property
    def extra_flags(self):
        """Flags this driver needs beyond the common ones."""
        if self.kind == "zig":
            # zig defaults to its native target with a libc version suffix;
            # ask for the generic GNU/Linux triple of this machine's arch.
            arch = llvm.get_process_triple().split("-")[0]
            return ("-target", f"{arch}-linux-gnu")
        return ()


def _version(cmd):
    try:
        out = subprocess.run(
            [*cmd, "--version"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return (out.stdout.strip().splitlines() or ["unknown"])[0]


def _probe(cmd, extra):
    """True when ``cmd`` compiles a tiny C file to IR that llvmlite parses."""
    with scratch_dir("probe") as tmp:
        src = os.path.join(tmp, "probe.c")
        out = os.path.join(tmp, "probe.ll")
        with open(src, "w") as fh:
            fh.write(_PROBE_C)
        try:
            res = subprocess.run(
                [*cmd, *extra, "-S", "-emit-llvm", "-O0", src, "-o", out],
                capture_output=True,
                text=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        if res.returncode != 0 or not os.path.exists(out):
            return False
        try:
            with open(out) as fh:
                llvm.parse_assembly(fh.read())
        except RuntimeError:
            return False
    return True


@functools.lru_cache(maxsize=None)
def find_toolchain():
    """Return the compiler vcut uses (cached for the process).

    Returns
    -------
    Toolchain

    Raises
    ------
    ToolchainError
        When neither ``$VCUT_CC``, ``clang`` nor the ``ziglang`` package gives
        a compiler whose IR llvmlite can read.
    """
    env = os.environ.get("VCUT_CC")
    if env:
        cmd = tuple(shlex.split(env))
        version = _version(cmd)
        if version is None or not _probe(cmd, ()):
            raise ToolchainError(
                f"VCUT_CC={env!r} does not run or its LLVM IR does not parse with "
                f"llvmlite's LLVM {'.'.join(map(str, llvm.llvm_version_info))}; "
                "unset VCUT_CC to use the bundled ziglang clang"
            )
        return Toolchain(cmd, "env", version)
    clang = shutil.which("clang")
    if clang:
        version = _version((clang,))
        if version and _probe((clang,), ()):
            return Toolchain((clang,), "clang", version)
    zig = (sys.executable, "-m", "ziglang", "cc")
    version = _version(zig)
    if version is None:
        raise ToolchainError(
            "no C compiler found: clang is not on PATH and the 'ziglang' package "
            "is not importable; run: pip install ziglang"
        )
    tc = Toolchain(zig, "zig", version)
    if not _probe(zig, tc.extra_flags):
        raise ToolchainError(
            f"the ziglang clang ({version}) emits IR that llvmlite's LLVM "
            f"{'.'.join(map(str, llvm.llvm_version_info))} cannot parse; "
            "install the versions pinned in pyproject.toml"
        )
    return tc
