"""Ray connects the way Ray users expect (`train.ray_rollouts.connect`): RAY_ADDRESS's cluster, a cluster
started with `ray start --head`, or a local one; a clear ConfigError naming the fix otherwise."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


RAY_CLI = Path(sys.executable).with_name("ray")
LIMIT_S = 240  # every Ray step runs in a subprocess with this limit: a joining driver can block for minutes


def _start(args: list[str], env: dict) -> subprocess.Popen:
    """`ray start ... --block` in its own process group, so teardown stops it and every process it started."""
    return subprocess.Popen([str(RAY_CLI), "start", "--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
            return


def _driver(code: str, env: dict) -> str:
    """Driver code in a bounded subprocess; returns its stdout."""
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a Ray driver did not finish within {LIMIT_S} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes started the documented way (docs/serving.md): `ray start --head` and `ray start --address` on
    the loopback interface, one CPU each, with Ray 2.60's token authentication on every node and in the driver."""
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_ADDRESS": ""}
    port = free_port()
    address = f"127.0.0.1:{port}"
    temp = tempfile.mkdtemp(prefix="awray", dir="/tmp")  # Ray's socket paths must stay short
    nodes = [_start(["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}"], env)]
    try:
        deadline = time.monotonic() + LIMIT_S
        while not list(Path(temp).glob("session_latest/logs/gcs_server.out")):
            if nodes[0].poll() is not None or time.monotonic() > deadline:
                pytest.fail("ray start --head did not come up")
            time.sleep(1)
        nodes.append(_start([f"--address={address}"], env))
        _driver(f"""
import time, ray
ray.init(address={address!r}, log_to_driver=False)
deadline = time.monotonic() + {LIMIT_S}
while sum(n["Alive"] for n in ray.nodes()) < 2:
    assert time.monotonic() < deadline, "the worker node did not join"
    time.sleep(1)
""", env)
        yield address, env
    finally:
        for proc in reversed(nodes):
            _stop(proc)
        shutil.rmtree(temp, ignore_errors=True)


def test_bench_on_a_two_node_cluster_equals_the_serial_run(cluster, tmp_path):
    """`agentworld bench --ray ADDRESS`: the held-out suite's episodes on env workers spread over both nodes give
    exactly the serial run's results."""
    address, env = cluster
    nodes = _driver(f"""
import ray
from agentworld_gym.train.ray_rollouts import EnvWorkers
workers = EnvWorkers(2, address={address!r})
print(len(set(ids[0] for ids in ray.get([a.run.remote(lambda _: ray.get_runtime_context().get_node_id(), [0]) for a in workers.actors]))))
workers.close()
""", env)
    assert nodes.split()[-1] == "2"  # one actor a node: each node has one CPU
    runs = {}
    for name, extra in (("serial", []), ("ray", ["--ray", address, "--ray-workers", "2"])):
        out = tmp_path / f"{name}.json"
        argv = ["bench", "--suite", "heldout", "--policy", "oracle", "--episodes", "12", "--out", str(out), *extra]
        _driver(f"import sys; from agentworld_gym.cli import main; sys.exit(main({argv!r}))", env)
        runs[name] = json.loads(out.read_text())
    assert len(runs["ray"]["items"]) == 12
    assert runs["ray"]["items"] == runs["serial"]["items"] and runs["ray"]["overall"] == runs["serial"]["overall"]


def test_an_existing_cluster_is_joined_not_restarted(cluster):
    """The old code passed num_cpus to ray.init while joining a running cluster: Ray's ValueError. Now the 2-CPU
    cluster is joined as it is (a local Ray for this run would have max(workers, cores) CPUs), and asking for more
    actors than it has CPUs is a ConfigError naming the fix, not a hang."""
    address, env = cluster
    out = _driver("""
import ray
from agentworld_gym.errors import ConfigError
from agentworld_gym.train.ray_rollouts import connect
connect(ray, 2)
print(ray.cluster_resources()["CPU"], ray.get(ray.remote(num_cpus=1)(lambda: 41 + 1).remote(), timeout=120))
ray.shutdown()
try:
    connect(ray, 3)
except ConfigError as exc:
    print("ConfigError:", exc, ray.is_initialized())
""", {**env, "RAY_ADDRESS": address})
    assert out.splitlines()[0] == "2.0 42"
    assert "at least 3 CPUs" in out and "--ray-workers 2 or fewer" in out and out.rstrip().endswith("False")
