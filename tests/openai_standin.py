"""A tiny OpenAI-compatible chat-completions server for tests (real HTTP on 127.0.0.1, no model).

It answers every request deterministically so a test can predict the scores: on a BFCL prompt it
calls the first listed function without arguments, otherwise it submits "done". Every request body
is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandInServer:
    def __init__(self):
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's hook name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                reply = json.dumps({"id": "standin", "object": "chat.completion", "model": body.get("model"),
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": outer.answer(body["messages"])}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply.encode())

            def log_message(self, *args):  # keep test output quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def answer(messages: list[dict]) -> str:
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        if system.startswith("You can call these functions:\n"):
            docs = json.loads(system.split("\n")[1])
            return json.dumps({"name": docs[0]["name"], "arguments": {}})
        return json.dumps({"name": "submit", "arguments": {"answer": "done"}})

    def __enter__(self) -> StandInServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
