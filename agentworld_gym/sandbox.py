"""A kernel-enforced sandbox for third-party tool code (Agent-World release tools).

What is enforced, and by whom (none of it by the Python interpreter the tool code runs in):

* bubblewrap (`bwrap`) builds the process's view: new mount, PID, network, IPC and UTS namespaces.
  The file system holds only /usr (plus the /bin, /lib… links), the Python installation, a private
  /proc and a minimal /dev, all read-only; a private 16 MiB /tmp; and the episode's data copy,
  read-write, at /episode. Nothing else exists: not /etc, not /root, not the project, not other episodes.
  The network namespace has no interface but a down loopback: TCP, UDP and DNS all fail.
* The worker runs as a dedicated unprivileged uid/gid (root host: `setpriv` switches to a uid of its
  own per sandbox, all capabilities and the bounding set dropped, no_new_privs), or, for a normal
  user, as that user inside a user namespace with no capabilities.
* `prlimit` sets hard resource limits before the interpreter starts: address space, CPU seconds,
  processes (RLIMIT_NPROC, which the kernel counts per uid — hence the uid per sandbox), file size,
  open files, no core dumps. Hard limits cannot be raised again without CAP_SYS_RESOURCE.
* Where the host lets root create a memory cgroup (cgroup v1 `memory`, or v2 with the memory controller),
  all of the sandbox's processes together are capped at `memory_mb` (the kernel OOM-kills inside it);
  elsewhere the cap is per process, so the total is at most nproc x memory_mb. `check_isolation()` says which.
* The worker is PID 1's child in its own PID namespace; `stop()` SIGKILLs that namespace's init,
  and the kernel then kills every process in it (forked, daemonized, forkpty'd alike).

If bubblewrap is missing or the kernel refuses the namespaces, `Sandbox` raises SandboxError saying
how to fix it; `unsafe=True` runs the worker unconfined and says so loudly.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from .errors import BackendError

log = logging.getLogger(__name__)

INSIDE = "/episode"  # where the episode's data copy appears inside the sandbox
UID_BASE = 1_990_000  # root host: sandbox uids are UID_BASE + n, far from real accounts and subuid ranges
_counter = itertools.count()


class SandboxError(BackendError):
    """Isolation for tool code could not be established."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024  # RLIMIT_AS of the worker (and each child)
    cpu_s: int = 60  # RLIMIT_CPU: CPU seconds over the worker's life (wall time is bounded per call elsewhere)
    nproc: int = 32  # RLIMIT_NPROC: processes of the sandbox uid
    fsize_mb: int = 64  # RLIMIT_FSIZE: largest file the tools may write
    nofile: int = 256  # RLIMIT_NOFILE
    tmp_mb: int = 16  # size of the sandbox's private /tmp (a tmpfs: RAM that RLIMIT_AS does not count)

    def prlimit(self) -> list[str]:
        mb = 1024 * 1024
        pairs = {"--as": self.memory_mb * mb, "--cpu": self.cpu_s, "--nproc": self.nproc, "--fsize": self.fsize_mb * mb,
                 "--nofile": self.nofile, "--core": 0}
        return ["prlimit", *(f"{k}={v}:{v}" for k, v in pairs.items()), "--"]


def python_executable() -> str:
    """The base interpreter (not a venv's symlink): the sandbox mounts its installation only."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _dirs_for(path: str) -> list[str]:
    """bwrap arguments that create `path`'s parents world-traversable (bwrap would copy 0700 from /root)."""
    out, parts = [], Path(path).parts[1:-1]
    for i in range(len(parts)):
        out += ["--perms", "0755", "--dir", "/" + "/".join(parts[: i + 1])]
    return out


def _view() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/" + name)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        args += [*_dirs_for(prefix), "--ro-bind", prefix, prefix]
    return args


def _memory_cgroup(name: str, limit: int) -> Path | None:
    """A fresh memory cgroup capped at `limit` bytes, or None where the host does not allow one."""
    for parent, knob in ((Path("/sys/fs/cgroup/memory"), "memory.limit_in_bytes"), (Path("/sys/fs/cgroup"), "memory.max")):
        if not (parent / knob).exists() and not (parent / "cgroup.controllers").exists():
            continue
        group = parent / name
        try:
            group.mkdir(exist_ok=True)
            (group / knob).write_text(str(limit))
            return group
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
    return None


class Sandbox:
    """Start commands confined as described in the module doc, one sandbox per `start()`."""

    def __init__(self, limits: Limits | None = None, unsafe: bool = False):
        self.limits, self.unsafe = limits or Limits(), unsafe
        self.root = os.geteuid() == 0
        self.uid = UID_BASE + (os.getpid() % 4096) * 64 + next(_counter) % 64 if self.root else os.getuid()
        self.proc: subprocess.Popen | None = None
        self.init_pid: int | None = None  # the sandbox's PID-namespace init, as the host sees it
        self.cgroup: Path | None = None
        if unsafe:
            msg = ("UNSAFE: release tool code runs WITHOUT a sandbox (unsafe=True / --unsafe): it can read and write your "
                   "files, use the network and start processes. Use this only for releases you trust.")
            warnings.warn(msg, stacklevel=3)
            log.warning(msg)
        elif missing := [tool for tool in ("bwrap", "prlimit", *(["setpriv"] if self.root else [])) if shutil.which(tool) is None]:
            raise SandboxError("Expected bubblewrap (`bwrap`) and util-linux `prlimit`/`setpriv` on PATH to confine release tool code, "
                               f"got no {', '.join(missing)}. Install them "
                               "(Debian/Ubuntu: `apt-get install bubblewrap util-linux`), or pass unsafe=True (CLI: --unsafe) to run "
                               "tool code unconfined, only for releases you trust.")

    def prepare(self, folder: Path) -> None:
        """Hand the episode copy to the sandbox uid (root host) so only that sandbox can write it."""
        if self.root and not self.unsafe:
            for p in [folder, *folder.rglob("*")]:
                os.lchown(p, self.uid, self.uid)
            os.chmod(folder, 0o700)

    def command(self, argv: list[str], folder: Path, info_fd: int) -> list[str]:
        if self.unsafe:
            return argv
        user = (["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                 "--no-new-privs", "--"] if self.root else [])
        namespaces = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not self.root:
            namespaces += ["--unshare-user", "--cap-drop", "ALL"]
        return [shutil.which("bwrap") or "bwrap", *_view(), "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(self.limits.tmp_mb * 2**20),
                "--tmpfs", "/tmp", "--bind", str(folder), INSIDE, "--remount-ro", "/", "--chdir", INSIDE, *namespaces, "--hostname", "sandbox", "--die-with-parent", "--new-session", "--info-fd", str(info_fd),
                "--", *user, *self.limits.prlimit(), *argv]

    def start(self, argv: list[str], folder: Path, env: dict[str, str]) -> subprocess.Popen:
        """Run `argv` with the episode copy `folder` (seen inside as INSIDE); pipes on stdin/stdout."""
        self.stop()
        if self.unsafe:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=folder,
                                         env={**env, "MCP_DB_DIR": str(folder)}, text=True, start_new_session=True)
            return self.proc
        self.cgroup = _memory_cgroup(f"agentworld-sandbox-{self.uid}", self.limits.memory_mb * 2**20) if self.root else None
        procs = str(self.cgroup / "cgroup.procs") if self.cgroup else None

        def join_cgroup():  # in the child before exec: bwrap and everything it starts are charged to the cgroup
            if procs:
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))

        info_r, info_w = os.pipe()
        # stderr: bubblewrap's own errors, then tool noise (capped by RLIMIT_FSIZE); a file, since nobody drains a pipe
        errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (open as long as the worker; closed in stop())
        try:
            self.proc = subprocess.Popen(self.command(argv, folder, info_w), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                         env={**env, "MCP_DB_DIR": INSIDE, "PATH": "/usr/bin:/bin", "TZ": "UTC"}, text=True,
                                         start_new_session=True, pass_fds=(info_w,), preexec_fn=join_cgroup if procs else None)
        finally:
            os.close(info_w)
            self._errors = errors
        with os.fdopen(info_r) as f:
            raw = f.read()
        try:
            self.init_pid = json.loads(raw)["child-pid"]
        except (json.JSONDecodeError, KeyError, TypeError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            errors.seek(0)
            err = errors.read(2000)
            self.stop()
            raise SandboxError(f"Expected bubblewrap to start the tool sandbox, got: {err.strip()[:400] or 'no answer'}. The kernel may forbid "
                               "namespaces here (containers: allow unshare/user namespaces, e.g. sysctl kernel.unprivileged_userns_clone=1 "
                               "or run the container with --privileged / a seccomp profile that permits them), or pass unsafe=True "
                               "(CLI: --unsafe) to run tool code unconfined, only for releases you trust.") from None
        return self.proc

    def stop(self) -> None:
        """Kill the sandbox and everything in it; returns when no process of it is left."""
        proc, self.proc = self.proc, None
        init, self.init_pid = self.init_pid, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if init is not None and _parent(init) == proc.pid:  # still bwrap's child: not a recycled pid
                os.kill(init, signal.SIGKILL)  # the kernel then kills everything in its PID namespace
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        for stream in (proc.stdin, proc.stdout, getattr(self, "_errors", None)):
            with contextlib.suppress(OSError, AttributeError):
                stream.close()
        deadline = time.monotonic() + 5  # the kernel tears the PID namespace down after its init dies
        while init is not None and _alive(init) and time.monotonic() < deadline:
            time.sleep(0.005)
        group, self.cgroup = self.cgroup, None
        while group is not None and time.monotonic() < deadline:  # empty once the last process is gone
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.005)


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


PROBE = r'''
import os, socket, resource
checks = {"uid": os.getuid(), "root_writable": True, "network": True, "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[1]}
try:
    open("/probe", "w")
except OSError:
    checks["root_writable"] = False
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
except OSError:
    checks["network"] = False
print(__import__("json").dumps(checks))
'''

_PROBED: dict | None = None


def check_isolation(limits: Limits | None = None) -> dict:
    """Start one sandbox and check from inside that it is confined; raise SandboxError when not. Cached per process."""
    global _PROBED
    if _PROBED is None:
        box = Sandbox(limits)
        with tempfile.TemporaryDirectory(prefix="agentworld-probe-") as tmp:
            folder = Path(tmp) / "db"
            folder.mkdir()
            box.prepare(folder)
            t0 = time.perf_counter()
            proc = box.start([python_executable(), "-I", "-S", "-c", PROBE], folder, {})
            cgroup = box.cgroup
            try:
                out, _ = proc.communicate(timeout=30)
            finally:
                box.stop()
            seconds = time.perf_counter() - t0
        try:
            checks = json.loads(out.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            raise SandboxError(f"Expected the isolation probe to report from inside the sandbox, got {out[-300:]!r}.") from None
        bad = [k for k in ("root_writable", "network") if checks[k]] + (["uid 0"] if checks["uid"] == 0 else [])
        if checks["nproc"] != box.limits.nproc:
            bad.append("process limit")
        if bad:
            raise SandboxError(f"Expected a confined sandbox, got one without: {', '.join(bad)}. Pass unsafe=True (CLI: --unsafe) to run "
                               "tool code unconfined, only for releases you trust.")
        _PROBED = {**checks, "mechanism": "bwrap+setpriv" if box.root else "bwrap+userns", "start_s": seconds,
                   "memory_cgroup": str(cgroup.parent) if cgroup else None}
    return _PROBED
