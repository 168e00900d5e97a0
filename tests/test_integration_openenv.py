"""OpenEnv: the server and client run one evaluation (the example), keep one world per session, and match env.step."""

from __future__ import annotations

import json
import socket
import time

import pytest

pytest.importorskip("openenv.core", reason="OpenEnv integration: the `openenv` extra is not installed (pip install 'agentworld-gym[openenv]')")

from integration_parity import direct_episode, example_lines, oracle_calls, parity_rows, run_example  # noqa: E402

from agentworld_gym.integrations.openenv import AgentWorldAction, AgentWorldClient, serve_in_background  # noqa: E402


def test_example_evaluates_one_episode_with_a_tiny_model(tiny, tmp_path):
    out = run_example("openenv_episode.py", tiny, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "reward 0.0" in out.stdout
    assert example_lines("openenv_episode.py") <= 15


@pytest.fixture(scope="module")
def base_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = serve_in_background("AgentWorld/finance-v0", port=port, max_sessions=4)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True


def test_cli_binds_loopback_by_default():
    from agentworld_gym.cli import build_parser

    args = build_parser().parse_args(["serve-openenv", "finance"])
    assert args.host == "127.0.0.1" and args.func.__name__ == "cmd_serve_openenv"


def test_one_world_per_session(base_url):
    with AgentWorldClient(base_url=base_url).sync() as a, AgentWorldClient(base_url=base_url).sync() as b:
        first_a, first_b = a.reset(seed=0), b.reset(seed=0)
        assert first_a.observation.task_id == first_b.observation.task_id  # same seed, same task
        a.step(AgentWorldAction(text='{"name": "get_account", "arguments": {"account_id": "AC-1001"}}'))
        assert a.state().step_count == 1 and b.state().step_count == 0
        assert len(b.step(AgentWorldAction(text="I don't know")).observation.messages) == 3  # b's episode saw none of a's


def test_parity_oracle_through_openenv(base_url):
    with AgentWorldClient(base_url=base_url).sync() as client:
        for row in parity_rows():
            if row["theme"] != "finance":
                continue  # this server serves finance; the theme ids are covered by the in-process check below
            want_reward, want_messages = direct_episode(row)
            result = client.reset(task=json.loads(row["task"]))
            for call in oracle_calls(row):
                result = client.step(AgentWorldAction(text=json.dumps(call, ensure_ascii=False, default=str)))
            assert result.done and result.reward == want_reward == 1.0
            assert result.observation.messages == want_messages


def test_the_client_rebuilds_delta_steps_into_the_whole_observation(base_url):
    calls = ['{"name": "get_account", "arguments": {"account_id": "AC-1001"}}', '{"name": "get_account", "arguments": {', '{"name": "submit", "arguments": {"answer": 1}}']
    with AgentWorldClient(base_url=base_url).sync() as lean, AgentWorldClient(base_url=base_url, delta=False).sync() as whole:
        for _ in range(2):  # the second episode starts from a fresh reset on the same session
            a, b = lean.reset(seed=3), whole.reset(seed=3)
            assert a.observation == b.observation
            for call in calls:
                a, b = lean.step(AgentWorldAction(text=call)), whole.step(AgentWorldAction(text=call))
                assert a.observation == b.observation and a.observation.tools and a.reward == b.reward and a.done == b.done
        assert a.done and a.observation.verification is not None


def test_parity_oracle_through_the_openenv_environment_on_20_tasks():
    from agentworld_gym.integrations.openenv import AgentWorldOpenEnv

    for row in parity_rows():
        want_reward, want_messages = direct_episode(row)
        env = AgentWorldOpenEnv(f"AgentWorld/{row['theme']}-v0")
        obs = env.reset(task=json.loads(row["task"]))
        for call in oracle_calls(row):
            obs = env.step(AgentWorldAction(text=json.dumps(call, ensure_ascii=False, default=str)))
        assert obs.done and obs.reward == want_reward == 1.0
        assert obs.messages == want_messages
        env.close()


DEPLOY = __import__("pathlib").Path(__file__).resolve().parents[1] / "deploy" / "openenv"


def test_manifest_and_container_recipe_name_the_server_entrypoint():
    import tomllib
    import yaml
    from openenv.cli._validation import validate_multi_mode_deployment

    manifest = yaml.safe_load((DEPLOY / "openenv.yaml").read_text())
    assert {k: manifest[k] for k in ("spec_version", "runtime", "app", "port")} == {
        "spec_version": 1, "runtime": "fastapi", "app": "server.app:app", "port": 8000}
    assert set(manifest["variables"]) == {"AGENTWORLD_ENV_ID", "AGENTWORLD_MAX_SESSIONS", "AGENTWORLD_DIFFICULTY", "AGENTWORLD_MAX_TURNS"}
    scripts = tomllib.loads((DEPLOY / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"server": "server.app:main"}
    # OpenEnv's own validator: everything but the uv.lock (made by `uv lock`, which needs the registry)
    _, issues = validate_multi_mode_deployment(DEPLOY)
    assert [i for i in issues if "uv.lock" not in i] == []
    docker = (DEPLOY / "server" / "Dockerfile").read_text()
    assert 'CMD ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]' in docker
    assert "COPY deploy/openenv /app/env" in docker and "WORKDIR /app/env" in docker


@pytest.fixture(scope="module")
def manifest_server():
    """The manifest's entrypoint, started the way the container starts it (uvicorn server.app:app from the
    env folder), with a session cap of 2 set through its variable."""
    import os
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(DEPLOY.parents[1]), "AGENTWORLD_MAX_SESSIONS": "2", "AGENTWORLD_MAX_TURNS": "5"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "server.app:app", "--port", str(port)], cwd=DEPLOY, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"the manifest's server did not start: {proc.stderr.read()[-2000:]}") from None
            time.sleep(0.5)
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_http_step_answers_409_naming_the_websocket_path(manifest_server):
    import urllib.error
    import urllib.request

    body = json.dumps({"action": {"text": '{"name": "get_account", "arguments": {"account_id": "AC-1001"}}'}}).encode()
    request = urllib.request.Request(manifest_server + "/step", body, {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=30)
    assert err.value.code == 409
    assert "/ws" in json.loads(err.value.read())["detail"]


def test_the_session_cap_comes_from_the_manifest_variable(manifest_server):
    from websockets.exceptions import ConnectionClosed

    with AgentWorldClient(base_url=manifest_server).sync() as a:
        with AgentWorldClient(base_url=manifest_server).sync() as b:
            a.reset(seed=0)
            assert b.reset(seed=1).observation.turn == 0
            # AGENTWORLD_MAX_SESSIONS=2: a third session is refused. The server sends a CAPACITY_REACHED error
            # and closes its WebSocket; which of the two the client sees first depends on timing.
            with pytest.raises((ConnectionClosed, RuntimeError)) as refused, AgentWorldClient(base_url=manifest_server).sync() as c:
                c.reset(seed=2)
            assert isinstance(refused.value, ConnectionClosed) or "CAPACITY" in str(refused.value)
        for _ in range(50):  # b closed: room for one again, once the server has seen it go (it may lag the close)
            try:
                with AgentWorldClient(base_url=manifest_server).sync() as c:
                    assert c.reset(seed=2).observation.turn == 0
                break
            except RuntimeError as exc:
                if "CAPACITY" not in str(exc):
                    raise
                time.sleep(0.1)
        else:
            pytest.fail("the session b gave back never became free")
        for _ in range(5):  # AGENTWORLD_MAX_TURNS=5 reached the env: the 5th call truncates the episode
            result = a.step(AgentWorldAction(text='{"name": "get_account", "arguments": {"account_id": "AC-1001"}}'))
        assert result.done


@pytest.mark.timeout(180)
def test_two_workers_share_one_port_and_both_serve_sessions(tmp_path):
    """40 sessions against 2 workers of 32 sessions each: one worker alone would refuse 8 of them (the kernel's
    spread leaves a worker over 32 of 40 with odds about 1 in 100,000). Each session keeps its own world on its
    process (its step count is its own), and stopping the server stops both workers."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import anyio
    import websockets

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "server.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "agentworld_gym.cli", "serve-openenv", "finance", "--port", str(port), "--workers", "2",
                             "--max-sessions", "32"], stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
    try:
        assert "2 worker processes" in proc.stdout.readline()
        assert proc.stdout.readline().strip() == "2 workers ready", (tmp_path / "server.log").read_text()[-2000:]
        children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]

        async def session(i: int, out: list) -> None:
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
                await ws.send(json.dumps({"type": "reset", "data": {"seed": i}}))
                reply = json.loads(await ws.recv())
                assert reply["type"] == "observation", reply
                for _ in range(1 + i % 3):
                    await ws.send(json.dumps({"type": "step", "data": {"text": '{"name": "get_account", "arguments": {"account_id": "AC-1001"}}'}}))
                    assert json.loads(await ws.recv())["type"] == "observation"
                await ws.send(json.dumps({"type": "state"}))
                out.append((i, json.loads(await ws.recv())["data"]["step_count"]))
                await anyio.sleep(1.0)  # everyone holds a session at once

        async def main() -> list:
            out: list = []
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(session, i, out)
            return out

        results = anyio.run(main)
        assert sorted(results) == [(i, 1 + i % 3) for i in range(40)]
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(30)
        log.close()
    def alive() -> list[int]:
        return [c for c in children if Path(f"/proc/{c}").exists() and Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]

    deadline = time.monotonic() + 15  # multiprocessing's resource tracker leaves a moment after its parent
    while alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(children) >= 2 and alive() == []


def test_workers_on_a_taken_port_is_one_typed_line_before_any_worker_starts():
    from agentworld_gym.errors import ConfigError
    from agentworld_gym.integrations.openenv import serve_workers

    with socket.socket() as taken:  # no SO_REUSEPORT: nobody may share it
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ConfigError, match="is the port taken"):
            serve_workers("AgentWorld/finance-v0", 2, "127.0.0.1", taken.getsockname()[1])
