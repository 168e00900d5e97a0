"""Hostile release tools against the sandbox: every attack contained, the environment usable afterwards."""

from __future__ import annotations

import dataclasses
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


# ------------------------------------------------------------------ the host's side (issue 35): small limits, fast tests
SMALL = sandbox.Limits(quota_mb=8, max_files=300, reply_mb=1, state_file_mb=1, cpu_s=2)


@pytest.fixture
def small(release):
    b = ReleaseBackend(release, "hostile", timeout=2, limits=SMALL)
    b.reset()
    yield b
    b.close()


def test_half_a_line_then_sleep_is_cut_by_the_whole_reply_deadline(small):
    t0 = time.monotonic()
    r = call(small, "half_line")
    assert not r.ok and "within 2s" in r.content and time.monotonic() - t0 < 6
    usable(small)


@pytest.mark.parametrize(("kind", "size", "why"), [("deep", 100_000, "nested more than 200 deep"),
                                                   ("digits", 5_000, "more than 4000 digits"),
                                                   ("huge", 3 * 2**20, "more than the 1,048,576 bytes allowed")])
def test_hostile_reply_lines_become_error_observations(small, kind, size, why):
    r = call(small, "raw_reply", kind=kind, size=size)
    assert not r.ok and "reply was refused" in r.content and why in r.content, r.content
    usable(small)  # a fresh worker: the rest of the bad line is not read as the next reply


def test_a_result_too_deep_to_serialise_is_an_error_observation(small):
    r = call(small, "deep_result", size=100_000)
    assert not r.ok and "RecursionError" in r.content
    usable(small)


def test_hostile_data_files_are_hashed_not_parsed(small):
    initial = small.state_hash()
    for kind, size in (("deep", 100_000), ("digits", 5_000), ("big", 2 * 2**20)):
        assert call(small, "hostile_data", kind=kind, size=size).ok
        value = small.state()["state.json"]
        if kind == "big":
            assert value.startswith("refused: 2097164 bytes")  # never read
        else:
            assert isinstance(value, str) and len(value) == 64  # a digest of the bytes, not a parse
        assert small.state_hash() != initial
    usable(small)


def test_many_files_hit_the_quota_of_the_whole_folder(small):
    r = call(small, "many_files", n=5_000)
    files = sum(1 for _ in small.episode_dir.rglob("*"))
    if small._quota_mounted:  # the kernel refuses the file past the quota; the episode goes on
        assert r.ok and r.data["made"] < SMALL.max_files and "No space left" in r.data["stopped"]
        assert files <= SMALL.max_files
        usable(small)
    else:  # measured after the call: the episode is over quota, every later call says so, reset starts afresh
        assert not r.ok and "quota" in r.content
        assert "quota" in call(small, "ping").content
    t0 = time.monotonic()
    small.state_hash()
    assert time.monotonic() - t0 < 2
    small.reset()
    usable(small)


def test_large_files_together_stop_at_the_folder_quota(small):
    r = call(small, "fill_disk", files=4, mb=6)  # 24 MB in files each under the 64 MB per-file cap
    used = sum(f.stat().st_size for f in small.episode_dir.rglob("*") if f.is_file())
    if small._quota_mounted:
        assert r.ok and r.data["written_mb"] <= SMALL.quota_mb and "No space left" in r.data["stopped"]
        assert used <= SMALL.quota_mb * 2**20
        usable(small)
    else:
        assert not r.ok and "quota" in r.content
    small.reset()
    usable(small)


def test_spinning_children_are_killed_when_the_call_returns(small):
    assert call(small, "spin_children", n=3, wait=False).ok
    alive = [p for p in sandbox._descendants(small.sandbox.init_pid) if sandbox._alive(p)]
    assert alive == [small.sandbox.worker_pid]  # the killed children are at most zombies of the worker
    usable(small)


def test_set_order_is_the_same_in_every_worker(release, small):
    """String hashing is fixed in the worker (PYTHONHASHSEED=0): a tool that lists a set writes the same order every time."""
    orders = []
    for _ in range(3):
        small.reset()
        orders.append(call(small, "set_order").data["order"])
    other = ReleaseBackend(release, "hostile", timeout=2, limits=SMALL)
    try:
        other.reset()
        orders.append(call(other, "set_order").data["order"])
    finally:
        other.close()
    assert len({tuple(o) for o in orders}) == 1


def test_a_thread_left_spinning_in_the_worker_stops_with_the_call(small):
    assert call(small, "spin_thread").ok
    assert small.sandbox.proc is None  # the worker, and its thread with it, is gone
    usable(small)
    assert small.sandbox.worker_threads() == 1


def test_the_groups_cpu_time_is_capped(release):
    b = ReleaseBackend(release, "hostile", timeout=30, limits=dataclasses.replace(SMALL, cpu_s=1))
    try:
        b.reset()
        if b.sandbox.cpu_seconds() is None:
            pytest.skip("this host gives no cpuacct cgroup (RLIMIT_CPU still caps each process)")
        t0 = time.monotonic()
        r = call(b, "spin_children", n=3, wait=True)  # three children spinning: 1 core for the group, 1 CPU second in all
        assert not r.ok and "more than 1 CPU seconds" in r.content and time.monotonic() - t0 < 20, r.content  # not the 30 s deadline
        usable(b)
    finally:
        b.close()


def test_without_a_mountable_quota_the_folder_is_measured_after_each_call(release, monkeypatch):
    """A host that cannot mount a tmpfs (not root): the quota is measured after the call, the episode refuses more calls
    until reset, and hashing the over-quota state stays cheap."""
    from agentworld_gym.mcp import release as release_module

    monkeypatch.setattr(release_module, "episode_folder", lambda folder, limits: False)
    b = ReleaseBackend(release, "hostile", timeout=5, limits=SMALL)
    try:
        b.reset()
        assert not b._quota_mounted
        usable(b)
        r = call(b, "many_files", n=1_000)
        assert not r.ok and "past the episode folder's quota (8 MB, 300 files)" in r.content
        assert "cannot go on" in call(b, "ping").content
        assert b.state() == {"<episode>": "over its quota"}
        b.reset()
        usable(b)
        r = call(b, "fill_disk", files=2, mb=6)  # 12 MB in two files
        assert not r.ok and "quota" in r.content
    finally:
        b.close()


HOST_MEMORY = r'''
import resource, sys
sys.path.insert(0, sys.argv[2])
from agentworld_gym.actions import ToolCall
from agentworld_gym.mcp.release import ReleaseBackend
b = ReleaseBackend(sys.argv[1], "hostile", timeout=30)
b.reset()
b.call(ToolCall("ping", {}))
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
b.call(ToolCall("fill_disk", {"files": 3, "mb": 40}))  # 120 MB of files in the copy
b.call(ToolCall("hostile_data", {"kind": "big", "size": 15 * 2**20}))  # a 15 MB JSON data file
b.state_hash()
reply = b.call(ToolCall("raw_reply", {"kind": "huge", "size": 100 * 2**20}))  # a 100 MB reply line
assert "refused" in reply.content and b.call(ToolCall("ping", {})).ok
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start) // 1024)
b.close()
'''


def test_the_host_reads_hostile_files_and_replies_in_bounded_memory(release):
    """Issue 35 measured 52 -> 1,733 MB for 240 MB of tool-written files and 400 MB for a 200 MB reply line."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", HOST_MEMORY, str(release), str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert int(done.stdout.split()[-1]) < 120  # MB the host's peak grew by: one capped file and one capped reply at a time
