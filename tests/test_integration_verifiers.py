"""verifiers: vf-eval-style evaluation of a tiny model (served by `transformers serve`) through the example, and
parity, both run in the verifiers venv (.venv/verifiers, made by `make test`) or in this one if it has verifiers."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def verifiers_python() -> str:
    if os.environ.get("AGENTWORLD_VERIFIERS_PYTHON"):  # another verifiers venv, e.g. to try a release
        return os.environ["AGENTWORLD_VERIFIERS_PYTHON"]
    if importlib.util.find_spec("verifiers") is not None:
        return sys.executable
    venv = Path(sys.prefix) / "verifiers" / "bin" / "python"  # .venv/verifiers beside the project venv
    for candidate in (venv, ROOT / ".venv" / "verifiers" / "bin" / "python"):
        if candidate.exists():
            return str(candidate)
    pytest.skip("verifiers integration: the `verifiers` extra is not installed here nor in .venv/verifiers "
                "(make test creates it; or pip install 'agentworld-gym[verifiers]')")


def run_in_verifiers_venv(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}", "VF_LOG_LEVEL": "WARNING"}
    return subprocess.run([verifiers_python(), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_parity_oracle_through_verifiers_env():
    out = run_in_verifiers_venv(str(ROOT / "tests" / "verifiers_parity.py"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "parity 20/20" in out.stdout


def test_package_loads_by_id_and_rolls_out_the_oracle_through_toolenv():
    """The `agentworld-env` package (deploy/verifiers), loaded by verifiers' own loader, evaluated with
    `evaluate_sync` against a local server playing each task's oracle calls as native tool calls: every
    rollout reaches reward 1.0 through ToolEnv's call loop, the theme's tools were sent, and the tool results
    carry the model's call ids."""
    out = run_in_verifiers_venv(str(ROOT / "tests" / "verifiers_package.py"))
    assert "No module named 'agentworld_env'" not in out.stderr, \
        "the verifiers venv lacks the agentworld-env package: rerun `make install-all` (it installs deploy/verifiers)"
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "['StatefulToolEnv', 'ToolEnv']" in out.stdout
    assert "episodes 3 errors 0 rewards [1.0, 1.0, 1.0]" in out.stdout
    tools = next(line for line in out.stdout.splitlines() if line.startswith("tools sent"))
    assert "'get_account'" in tools and "'submit'" in tools
    assert "tool_call_ids ['oracle_0']" in out.stdout and "requests 6" in out.stdout  # 3 tasks x (lookup, submit)


@pytest.fixture
def served_tiny_model(tiny):
    """The tiny model behind transformers' own OpenAI-compatible server (`transformers serve`)."""
    serve = pytest.importorskip("transformers.utils.import_utils")
    if not serve.is_serve_available():
        pytest.skip("`transformers serve` needs fastapi, uvicorn and openai")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", tiny, "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        deadline = time.time() + 240
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    pytest.fail("transformers serve did not start")
                time.sleep(0.5)
        yield tiny, f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(30)


def test_example_evaluates_a_tiny_model(served_tiny_model):
    model, url = served_tiny_model
    verifiers_python()  # skip early when the extra is absent
    out = run_in_verifiers_venv(str(ROOT / "examples" / "verifiers_eval.py"), model, url)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "episodes 2 errors 0 rewards [0.0, 0.0]" in out.stdout  # every rollout reached the model
    assert sum(1 for line in (ROOT / "examples" / "verifiers_eval.py").read_text().splitlines() if line.strip()) <= 15
