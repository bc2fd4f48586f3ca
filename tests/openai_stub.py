"""A minimal OpenAI-compatible server for tests (stdlib): ``/v1/models`` and a streamed
``/v1/chat/completions`` that answers a fixed text word by word. Not a model: it
lets the connection test and the HTTP backend be exercised without one."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Two notes disagree about the release day of the week."


class _Handler(BaseHTTPRequestHandler):
    models: tuple[str, ...] = ("stub-large", "stub-small")
    #: The answer to a chat request (its JSON body); the fixed ANSWER by default.
    answer: Callable[[dict[str, Any]], str] = staticmethod(lambda request: ANSWER)

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _json(self, status: int, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._json(200, {"data": [{"id": m} for m in self.models]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/v1/chat/completions":
            self._json(404, {"error": "not found"})
            return
        if request.get("model") not in self.models:
            self._json(404, {"error": f"model {request.get('model')!r} not found"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        words = type(self).answer(request).split(" ")[: int(request.get("max_tokens") or 16)]
        for i, word in enumerate(words):
            chunk = {
                "choices": [{"delta": {"content": word + (" " if i < len(words) - 1 else "")}}]
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        usage = {"usage": {"prompt_tokens": 12, "completion_tokens": len(words)}, "choices": []}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())


@contextmanager
def openai_stub(answer: Callable[[dict[str, Any]], str] | None = None) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (``http://127.0.0.1:N/v1``).
    ``answer``: what to answer a chat request (its JSON body), instead of ANSWER."""
    handler = type("Handler", (_Handler,), {"answer": staticmethod(answer)} if answer else {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="openai-stub", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
