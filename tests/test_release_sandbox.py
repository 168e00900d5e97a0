"""Hostile release tools against the sandbox: every attack contained, the environment usable afterwards."""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import pytest
from mcp_helpers import children
from release_fixture import write_release

from agentworld_gym import sandbox
from agentworld_gym.actions import ToolCall
from agentworld_gym.mcp.release import ReleaseBackend
from agentworld_gym.sandbox import SandboxError

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed (.ci/run installs it)")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_release(tmp_path_factory.mktemp("release"))


@pytest.fixture
def box(release):
    b = ReleaseBackend(release, "hostile", timeout=2)
    b.reset()
    yield b
    b.close()


def call(b, name, **arguments):
    return b.call(ToolCall(name, arguments))


def usable(b):
    assert call(b, "ping").data == {"pong": True}


def procs_of(uid: int) -> list[int]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
        state = next(line for line in status.splitlines() if line.startswith("State:")).split()[1]
        if int(uids[0]) == uid and state not in ("Z", "X"):
            out.append(int(pid))
    return out


def test_files_outside_the_copy_are_invisible_and_untouchable(box, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    for path in (str(secret), "/etc/hostname", "/etc/passwd", str(Path(__file__).resolve())):
        r = call(box, "read_file", path=path)
        assert not r.ok and "No such file" in r.content, (path, r.content)
    assert not call(box, "write_file", path=str(tmp_path / "dropped.txt"), text="x").ok
    assert not (tmp_path / "dropped.txt").exists()
    assert not call(box, "delete_file", path=str(secret)).ok
    assert secret.read_text() == "host secret"
    for path in ("/usr/escaped", "/escaped"):
        assert "Read-only file system" in call(box, "write_file", path=path, text="x").content
    assert call(box, "write_file", path="inside.txt", text="mine").ok  # the episode's copy is writable
    assert (box.episode_dir / "inside.txt").read_text() == "mine"
    usable(box)


def test_no_network_tcp_or_udp(box):
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    tcp.settimeout(0.3)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.3)
    try:
        # The sandbox has its own loopback: the host's listeners are not on it.
        r = call(box, "tcp", host="127.0.0.1", port=tcp.getsockname()[1])
        assert not r.ok and "refused" in r.content, r.content
        call(box, "udp", host="127.0.0.1", port=udp.getsockname()[1])  # may be "sent" into the sandbox's own loopback
        for host in ("1.1.1.1", "10.0.0.1"):  # and no route to anywhere else
            assert "unreachable" in call(box, "tcp", host=host, port=80).content
            assert "unreachable" in call(box, "udp", host=host, port=53).content
        with pytest.raises(TimeoutError):
            tcp.accept()
        with pytest.raises(TimeoutError):
            udp.recvfrom(64)
    finally:
        tcp.close()
        udp.close()
    usable(box)


@pytest.mark.skipif(os.geteuid() != 0, reason="counting the sandbox's processes by its own uid needs a root host")
def test_fork_forkpty_daemon_do_not_outlive_the_call(box):
    """A child a tool starts (forked, forkpty'd or daemonized) is killed when the call returns: it does not spin on."""
    before = children()
    for how in ("fork", "forkpty", "daemon"):
        assert call(box, "spawn", how=how).ok
        assert procs_of(box.sandbox.uid) == [box.sandbox.worker_pid]  # only the worker is left
    marker = box.episode_dir / "alive-fork"
    seen = marker.stat().st_mtime_ns if marker.exists() else None
    time.sleep(0.3)
    assert (marker.stat().st_mtime_ns if marker.exists() else None) == seen  # nobody touches it any more
    usable(box)
    assert call(box, "spawn", how="daemon").ok
    box.reset()
    assert len(procs_of(box.sandbox.uid)) == 1  # only the new episode's worker
    box.close()
    assert procs_of(box.sandbox.uid) == []
    assert children() <= before


def test_resource_limits_hold_and_cannot_be_lifted(box, tmp_path):
    r = call(box, "fork_bomb")
    assert r.ok and r.data["forked"] < sandbox.Limits().nproc and "unavailable" in r.data["stopped"]
    r = call(box, "memory_bomb", gb=8)
    assert not r.ok and "MemoryError" in r.content
    r = call(box, "big_file", mb=100)
    assert not r.ok and "too large" in r.content.lower()
    target = tmp_path / "guard.txt"
    tried = call(box, "tamper", path=str(target)).data
    assert tried.pop("uid") != 0
    assert all(v != "succeeded" for v in tried.values()), tried
    assert not target.exists()
    usable(box)


def test_output_floods_do_not_block_the_worker(box):
    assert call(box, "noisy").data == {"printed": True}
    usable(box)


def test_memory_cgroup_caps_all_processes_together(release):
    b = ReleaseBackend(release, "hostile", timeout=10, limits=sandbox.Limits(memory_mb=256))
    try:
        b.reset()
        if b.sandbox.cgroup is None:
            pytest.skip("this host does not let root create a memory cgroup (the per-process RLIMIT_AS still holds)")
        r = call(b, "fork_memory", children=4, mb=150)  # 600 MB wanted, each child under its own RLIMIT_AS
        peak = int(next(b.sandbox.cgroup.glob("memory.max_usage_in_bytes"), b.sandbox.cgroup / "memory.peak").read_text())
        assert peak <= 256 * 2**20
        assert not r.ok or any(status != 256 for status in r.data["exits"])  # someone was OOM-killed
        usable(b)
    finally:
        b.close()


def test_infinite_loop_is_cut_and_the_env_goes_on(box):
    t0 = time.monotonic()
    r = call(box, "spin")
    assert not r.ok and "within 2s" in r.content and time.monotonic() - t0 < 6
    usable(box)


def test_missing_or_broken_isolation_is_a_clear_error(release, monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "_PROBED", None)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        ReleaseBackend(release, "hostile")
    monkeypatch.undo()
    fake = tmp_path / "bin"  # a bwrap the kernel refuses, as in a locked-down container
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    monkeypatch.setattr(sandbox, "_PROBED", None)
    with pytest.raises(SandboxError, match="No permissions to create new namespace.*unsafe=True"):
        ReleaseBackend(release, "hostile")


def test_unsafe_opt_out_is_loud_and_really_unconfined(release, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    with pytest.warns(UserWarning, match="UNSAFE"):
        b = ReleaseBackend(release, "hostile", unsafe=True)
    try:
        b.reset()
        assert call(b, "read_file", path=str(secret)).data == {"text": "host secret"}
    finally:
        b.close()
