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
* Where the host lets root create cgroups (v1 `memory`/`pids`/`cpu`/`cpuacct`, or v2 with those controllers),
  all of the sandbox's processes together are capped: memory at `memory_mb` (the kernel OOM-kills inside it),
  processes at `nproc` (`pids.max`), CPU at `cpu_cores` cores at a time (CFS quota); `cpu_seconds()` reads
  the whole group's CPU time, which the host holds to `cpu_s`. Elsewhere the caps are per process (memory at
  most nproc x memory_mb). `check_isolation()` says which.
* The worker is PID 1's child in its own PID namespace; `stop()` SIGKILLs that namespace's init,
  and the kernel then kills every process in it (forked, daemonized, forkpty'd alike). `reap()` kills every
  process but the worker (the host calls it after each tool call: a child a tool leaves behind does not run on).
* `episode_folder()` makes the episode's data folder a tmpfs of `quota_mb` bytes and `max_files` inodes (root
  host): the quota holds for the whole folder, enforced by the kernel (writes past it fail with ENOSPC).
  Elsewhere the host measures the folder after each call (`folder_usage`) and refuses the episode past it.

What the sandboxed code sends back (its replies, the files it writes) is read by the host only within bounds:
`read_bounded_json` refuses text past `max_bytes`, nested deeper than `json_depth` or holding an integer of more
than `int_digits` digits, before `json.loads` sees it (which would recurse, or raise ValueError past Python's
int digit limit).

If bubblewrap is missing or the kernel refuses the namespaces, `Sandbox` raises SandboxError saying
how to fix it; `unsafe=True` runs the worker unconfined and says so loudly.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import BackendError

log = logging.getLogger(__name__)

INSIDE = "/episode"  # where the episode's data copy appears inside the sandbox
UID_BASE = 1_990_000  # root host: sandbox uids are UID_BASE + n, far from real accounts and subuid ranges
_counter = itertools.count()


class SandboxError(BackendError):
    """Isolation for tool code could not be established."""


class OutOfBounds(ValueError):
    """Text from sandboxed code that the host refuses to parse (too big, too deep, too long an integer)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024  # RLIMIT_AS of the worker (and each child); the memory cgroup's cap for all together
    cpu_s: int = 60  # CPU seconds over the worker's life: RLIMIT_CPU per process, and the whole group's (cgroup)
    cpu_cores: float = 1.0  # CFS quota: how many cores the group's processes may use at once (cgroup)
    nproc: int = 32  # RLIMIT_NPROC: processes of the sandbox uid; pids.max of the group (cgroup)
    fsize_mb: int = 64  # RLIMIT_FSIZE: largest file the tools may write
    nofile: int = 256  # RLIMIT_NOFILE
    tmp_mb: int = 16  # size of the sandbox's private /tmp (a tmpfs: RAM that RLIMIT_AS does not count)
    quota_mb: int = 256  # the whole episode folder: bytes of all its files together
    max_files: int = 10_000  # the whole episode folder: files and folders
    reply_mb: int = 16  # largest reply line the host reads from the worker
    state_file_mb: int = 16  # larger data files are hashed by size and name, never read
    json_depth: int = 200  # deepest nesting the host parses (json.loads recurses; Python's limit is ~1000)
    int_digits: int = 4000  # longest integer the host parses (Python refuses > 4300 digits by default)

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


# -------------------------------------------------------------------------------- bounded parsing
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # unrolled: no backtracking state per character
_OPEN_CLOSE = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))


def read_bounded_json(raw: bytes | str, limits: Limits, max_bytes: int | None = None):
    """json.loads within the bounds of `limits`; OutOfBounds (a ValueError) past them. Linear time, no recursion
    before the depth is known to be small."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    cap = limits.reply_mb * 2**20 if max_bytes is None else max_bytes
    if len(raw) > cap:
        raise OutOfBounds(f"{len(raw):,} bytes, more than the {cap:,} allowed")
    bare = _STRING.sub(b'""', raw)  # strings hold no structure
    brackets = np.frombuffer(bare.translate(None, _NOT_BRACKET).translate(_OPEN_CLOSE), dtype=np.int8)
    if brackets.size and int(np.cumsum(brackets, dtype=np.int64).max()) > limits.json_depth:
        raise OutOfBounds(f"nested more than {limits.json_depth} deep")
    if re.search(rb"\d{%d}" % (limits.int_digits + 1), bare):
        raise OutOfBounds(f"a number of more than {limits.int_digits} digits")
    return json.loads(raw)


# -------------------------------------------------------------------------------- cgroups
_V1 = Path("/sys/fs/cgroup")


def _cgroups(name: str, limits: Limits) -> dict[str, Path]:
    """Fresh cgroups capping the sandbox's processes together: {controller: group}, only those the host allows."""
    period = 100_000
    knobs = {"memory": {"memory.limit_in_bytes": limits.memory_mb * 2**20}, "pids": {"pids.max": limits.nproc},
             "cpu": {"cpu.cfs_period_us": period, "cpu.cfs_quota_us": int(limits.cpu_cores * period)}, "cpuacct": {}}
    out = {}
    if (_V1 / "cgroup.controllers").exists():  # v2: one group, the controllers its parent delegates
        enabled = set((_V1 / "cgroup.subtree_control").read_text().split()) if (_V1 / "cgroup.subtree_control").exists() else set()
        v2 = {"memory": {"memory.max": limits.memory_mb * 2**20}, "pids": {"pids.max": limits.nproc},
              "cpu": {"cpu.max": f"{int(limits.cpu_cores * period)} {period}"}}
        group = _V1 / name
        try:
            group.mkdir(exist_ok=True)
            for controller, settings in v2.items():
                if controller in enabled:
                    for knob, value in settings.items():
                        (group / knob).write_text(str(value))
                    out[controller] = group
            if "cpu" in enabled:
                out["cpuacct"] = group
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            return {}
        return out
    for controller, settings in knobs.items():
        if not (_V1 / controller / "cgroup.procs").exists():
            continue
        group = _V1 / controller / name
        try:
            group.mkdir(exist_ok=True)
            for knob, value in settings.items():
                (group / knob).write_text(str(value))
            out[controller] = group
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
    return out


def _cpu_seconds(group: Path) -> float:
    with contextlib.suppress(OSError, ValueError):
        if (group / "cpuacct.usage").exists():
            return int((group / "cpuacct.usage").read_text()) / 1e9
        for line in (group / "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec"):
                return int(line.split()[1]) / 1e6
    return 0.0


# -------------------------------------------------------------------------------- the episode folder
_libc = ctypes.CDLL(None, use_errno=True)
MNT_DETACH = 2


def episode_folder(folder: Path, limits: Limits) -> bool:
    """Make the empty folder `folder` a tmpfs of `quota_mb` and `max_files` (True), or leave it as it is where
    the host cannot mount (False: `folder_usage` is then checked after each call)."""
    if os.geteuid() != 0:
        return False
    opts = f"size={limits.quota_mb * 2**20},nr_inodes={limits.max_files},mode=0700".encode()
    return _libc.mount(b"tmpfs", str(folder).encode(), b"tmpfs", 0, opts) == 0


def release_folder(folder: Path) -> None:
    """Unmount an `episode_folder` (detached: nothing of the sandbox holds it once stopped)."""
    _libc.umount2(str(folder).encode(), MNT_DETACH)


def folder_usage(folder: Path, limits: Limits) -> tuple[int, int] | None:
    """(bytes, entries) of the folder, or None as soon as either passes the quota (so the walk stays bounded)."""
    size = count = 0
    stack = [str(folder)]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as it:
            for entry in it:
                count += 1
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        size += entry.stat(follow_symlinks=False).st_size
                if count > limits.max_files or size > limits.quota_mb * 2**20:
                    return None
    return size, count


class Sandbox:
    """Start commands confined as described in the module doc, one sandbox per `start()`."""

    def __init__(self, limits: Limits | None = None, unsafe: bool = False):
        self.limits, self.unsafe = limits or Limits(), unsafe
        self.root = os.geteuid() == 0
        self.uid = UID_BASE + (os.getpid() % 4096) * 64 + next(_counter) % 64 if self.root else os.getuid()
        self.proc: subprocess.Popen | None = None
        self.init_pid: int | None = None  # the sandbox's PID-namespace init, as the host sees it
        self.cgroups: dict[str, Path] = {}  # controller -> this sandbox's group (root host, where allowed)
        self.worker_pid: int | None = None
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
                                         env={**env, "MCP_DB_DIR": str(folder)}, start_new_session=True)
            return self.proc
        self.cgroups = _cgroups(f"agentworld-sandbox-{self.uid}", self.limits) if self.root else {}
        procs = [str(g / "cgroup.procs") for g in dict.fromkeys(self.cgroups.values())]

        def join_cgroups():  # in the child before exec: bwrap and everything it starts are charged to the cgroups
            for path in procs:
                with open(path, "w") as f:
                    f.write(str(os.getpid()))

        info_r, info_w = os.pipe()
        # stderr: bubblewrap's own errors, then tool noise (capped by RLIMIT_FSIZE); a file, since nobody drains a pipe
        errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (open as long as the worker; closed in stop())
        try:
            self.proc = subprocess.Popen(self.command(argv, folder, info_w), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                         env={**env, "MCP_DB_DIR": INSIDE, "PATH": "/usr/bin:/bin", "TZ": "UTC"},
                                         start_new_session=True, pass_fds=(info_w,), preexec_fn=join_cgroups if procs else None)
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

    @property
    def cgroup(self) -> Path | None:
        """The memory cgroup (None where the host gives none)."""
        return self.cgroups.get("memory")

    def cpu_seconds(self) -> float | None:
        """CPU time of all the sandbox's processes together since start (None without a cpuacct cgroup)."""
        group = self.cgroups.get("cpuacct")
        return _cpu_seconds(group) if group is not None else None

    def reap(self) -> int:
        """Kill every process of the sandbox but the worker; how many were killed. No-op unsandboxed."""
        if self.init_pid is None:
            return 0
        killed: list[int] = []
        for _ in range(10):  # a forking child can add processes while we look: look again until none is left
            strays = [p for p in _descendants(self.init_pid) if p != self._worker() and _alive(p)]
            for pid in strays:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            killed += strays
            if not strays:
                break
        deadline = time.monotonic() + 1
        while any(map(_alive, killed)) and time.monotonic() < deadline:  # SIGKILL lands asynchronously
            time.sleep(0.001)
        return len(killed)

    def worker_threads(self) -> int:
        """Threads of the worker (1 when idle; more when a tool left a thread running)."""
        pid = self._worker()
        try:
            return len(os.listdir(f"/proc/{pid}/task")) if pid is not None else 0
        except OSError:
            return 0

    def _worker(self) -> int | None:
        """The worker: the init's child that is PID 2 in the sandbox's namespace (what bwrap runs)."""
        if self.worker_pid is None and self.init_pid is not None:
            for pid in _children(self.init_pid):
                with contextlib.suppress(OSError, StopIteration):
                    nspid = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("NSpid:"))
                    if nspid.split()[-1] == "2":
                        self.worker_pid = pid
        return self.worker_pid

    def stop(self) -> None:
        """Kill the sandbox and everything in it; returns when no process of it is left."""
        proc, self.proc = self.proc, None
        init, self.init_pid, self.worker_pid = self.init_pid, None, None
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
        groups, self.cgroups = list(self.cgroups.values()), {}
        for group in dict.fromkeys(groups):  # each empty once the last process is gone
            while time.monotonic() < deadline:
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)


def _children(pid: int) -> list[int]:
    out = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                out += map(int, f.read().split())
    return out


def _descendants(pid: int) -> list[int]:
    out, stack = [], _children(pid)
    while stack:
        p = stack.pop()
        out.append(p)
        stack += _children(p)
    return out


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
            quota = episode_folder(folder, box.limits)
            try:
                box.prepare(folder)
                t0 = time.perf_counter()
                proc = box.start([python_executable(), "-I", "-S", "-c", PROBE], folder, {})
                cgroups = sorted(box.cgroups)
                out = proc.communicate(timeout=30)[0].decode("utf-8", "replace")
            finally:
                box.stop()
                if quota:
                    release_folder(folder)
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
                   "cgroups": cgroups, "episode_quota": "tmpfs (kernel)" if quota else "measured after each call"}
    return _PROBED
