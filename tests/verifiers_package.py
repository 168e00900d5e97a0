"""Run in the verifiers venv by test_integration_verifiers.py: the installed `agentworld-env` package, loaded by
verifiers' own loader (`vf.load_environment` by id), evaluated with verifiers' own rollout loop
(`evaluate_sync`) against an OpenAI-compatible server on 127.0.0.1 that plays each task's oracle calls as
native tool calls (a deterministic policy). Prints the rewards and what the server saw."""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import verifiers as vf  # noqa: E402
from integration_parity import oracle_calls  # noqa: E402

from agentworld_gym.integrations._common import draw_tasks  # noqa: E402

GYM_ID, N = "AgentWorld/finance-v0", 3


def oracle_server(rows: list[dict]) -> tuple[ThreadingHTTPServer, list[dict]]:
    """Chat completions that answer a task's k-th model turn with its k-th oracle call (the task is found by
    its instruction, the last user message of its prompt)."""
    calls = {row["prompt"][-1]["content"]: oracle_calls(row) for row in rows}
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's hook name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            messages = body["messages"]
            instruction = next(m["content"] for m in messages if m["role"] == "user")
            k = sum(m["role"] == "assistant" for m in messages)
            call = calls[instruction][k]
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"oracle_{k}", "type": "function", "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
            reply = json.dumps({"id": "oracle", "object": "chat.completion", "model": body.get("model"), "created": 0,
                                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
                                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):  # keep the output to the results
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler), seen


def main() -> int:
    env = vf.load_environment("agentworld-env", gym_id=GYM_ID, n_tasks=N, max_turns=6)
    server, seen = oracle_server(draw_tasks(GYM_ID, N, 0))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ.setdefault("OPENAI_API_KEY", "none")
    client = vf.ClientConfig(api_base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key_var="OPENAI_API_KEY", max_retries=0)
    results = env.evaluate_sync(client=client, model="oracle", num_examples=N, rollouts_per_example=1, sampling_args={"temperature": 0.0})
    server.shutdown()
    outputs = results["outputs"]
    print("env", type(env).__module__, [c.__name__ for c in type(env).__mro__[1:3]], "verifiers", vf.__version__)
    print("episodes", len(outputs), "errors", sum(o.get("error") is not None for o in outputs), "rewards", [o["reward"] for o in outputs])
    print("tools sent", sorted(t["function"]["name"] for t in seen[0].get("tools", [])))
    print("tool_call_ids", sorted({m["tool_call_id"] for body in seen for m in body["messages"] if m["role"] == "tool"}))
    print("requests", len(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
