"""The HTTP embedder: batching, retries, errors, and the index's model id.

Transport behaviour is tested against a small scripted HTTP server on loopback
(it answers what each test tells it to, so a 503 or a reset can be produced on
demand); the vectors themselves against real servers in test_http_embedder_model.py.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop.flows.embedding import embedding_model
from desktop.vault.index import VaultIndex
from foundation.errors import ModelUnavailable
from inference.http_embedder import HttpEmbedderSettings, OpenAIHttpEmbedder

DIM = 8


def fake_vector(text: str, dim: int = DIM) -> list[float]:
    """A deterministic, unnormalised vector for ``text`` (what a server might send)."""
    digest = hashlib.sha256(text.encode()).digest()
    return [float(b) - 100.0 for b in digest[:dim]]


Reply = tuple[int, Any, dict[str, str]]


class ScriptedServer:
    """``/v1/embeddings`` on 127.0.0.1: scripted replies first, then real answers."""

    def __init__(self) -> None:
        self.script: list[Reply | str] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.model = "scripted-embedder"
        self.dim = DIM
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                step = outer.script.pop(0) if outer.script else None
                if step == "reset":
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    self.close_connection = True
                    self.connection.close()
                    return
                if step is None:
                    texts = body["input"]
                    data = [
                        {"object": "embedding", "index": i, "embedding": fake_vector(t, outer.dim)}
                        for i, t in enumerate(texts)
                    ]
                    step = (200, {"object": "list", "data": data, "model": outer.model}, {})
                assert not isinstance(step, str)
                status, payload, headers = step
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    yield s
    s.close()


def make(server: ScriptedServer, **kwargs: Any) -> tuple[OpenAIHttpEmbedder, list[float]]:
    waits: list[float] = []
    settings = HttpEmbedderSettings(server.url, **kwargs)
    return OpenAIHttpEmbedder(settings, sleep=waits.append), waits


def test_vectors_are_normalised_in_order_and_batched(server: ScriptedServer) -> None:
    embedder, _ = make(server, batch_size=3)
    texts = [f"note number {i}" for i in range(7)]
    vectors = embedder.embed(texts)
    assert vectors.shape == (7, DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    for text, vec in zip(texts, vectors, strict=True):
        expected = np.asarray(fake_vector(text), dtype=np.float32)
        assert np.allclose(vec, expected / np.linalg.norm(expected), atol=1e-6)
    # The probe, then 7 texts in batches of at most 3.
    assert [len(r["input"]) for r in server.requests] == [1, 3, 3, 1]
    assert all(r["encoding_format"] == "float" for r in server.requests)
    assert embedder.dimension == DIM
    assert embedder.name == "scripted-embedder (openai-compatible)"


def test_batches_respect_the_character_budget_and_long_texts_are_cut(
    server: ScriptedServer,
) -> None:
    embedder, _ = make(server, batch_size=100, max_batch_chars=250, max_chars=100)
    embedder.embed(["a" * 500, "b" * 100, "c" * 100, "d" * 10])
    sent = [r["input"] for r in server.requests[1:]]
    assert sent == [["a" * 100, "b" * 100], ["c" * 100, "d" * 10]]


def test_answers_out_of_order_are_put_back_in_order(server: ScriptedServer) -> None:
    embedder, _ = make(server)
    data = [
        {"index": 1, "embedding": fake_vector("second")},
        {"index": 0, "embedding": fake_vector("first")},
    ]
    server.script.append((200, {"data": data, "model": "m"}, {}))
    vectors = embedder.embed(["first", "second"])
    first = np.asarray(fake_vector("first"), dtype=np.float32)
    assert np.allclose(vectors[0], first / np.linalg.norm(first), atol=1e-6)


def test_model_and_api_key_are_sent(server: ScriptedServer) -> None:
    make(server, model="nomic-embed-text", api_key="sekret")
    assert server.requests[0]["model"] == "nomic-embed-text"
    assert server.headers[0]["Authorization"] == "Bearer sekret"


def test_empty_input_and_single_string_misuse(server: ScriptedServer) -> None:
    embedder, _ = make(server)
    assert embedder.embed([]).shape == (0, DIM)
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # type: ignore[arg-type]
    # OpenAI-style servers refuse "": a blank text is sent as one space.
    embedder.embed(["", "  "])
    assert server.requests[-1]["input"] == [" ", " "]


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_transient_statuses_are_retried_with_backoff(server: ScriptedServer, status: int) -> None:
    embedder, waits = make(server, backoff=0.5)
    server.script += [(status, {"error": {"message": "busy"}}, {})] * 2
    vectors = embedder.embed(["hello"])
    assert vectors.shape == (1, DIM)
    assert waits == [0.5, 1.0]
    assert embedder.retries == 2


def test_retry_after_is_honoured_and_a_long_one_refused(server: ScriptedServer) -> None:
    embedder, waits = make(server, backoff=0.5)
    server.script.append((429, {"error": "slow down"}, {"Retry-After": "3"}))
    embedder.embed(["hello"])
    assert waits == [3.0]
    server.script.append((503, {"error": "maintenance"}, {"Retry-After": "600"}))
    with pytest.raises(ModelUnavailable, match="asks to wait 600 s"):
        embedder.embed(["hello"])


def test_a_reset_on_a_fresh_connection_is_retried_after_a_wait(server: ScriptedServer) -> None:
    embedder, waits = make(server)
    # The kept-alive connection is dropped (reopened at once), then the new one too.
    server.script += ["reset", "reset"]
    assert embedder.embed(["after a reset"]).shape == (1, DIM)
    assert waits == [0.5] and embedder.retries == 1


def test_giving_up_names_the_server_and_the_fix(server: ScriptedServer) -> None:
    embedder, waits = make(server, attempts=3)
    server.script += [(503, {"error": {"message": "model loading"}}, {})] * 3
    with pytest.raises(ModelUnavailable) as info:
        embedder.embed(["hello"])
    message = str(info.value)
    assert message.startswith(f"Cannot reach the embedding server at {server.url} (HTTP 503")
    assert "model loading" in message and "3 tries" in message
    assert "--embedder-url" in message
    assert len(waits) == 2


def test_unreachable_server_fails_at_load_with_the_fix() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    waits: list[float] = []
    with pytest.raises(ModelUnavailable, match="Cannot reach the embedding server"):
        OpenAIHttpEmbedder(
            HttpEmbedderSettings(f"http://127.0.0.1:{port}/v1", attempts=2), sleep=waits.append
        )
    assert waits == [0.5]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ((401, {"error": "no key"}, {}), "check the embedder API key"),
        ((404, {"error": {"message": "no route"}}, {}), "start llama-server with --embeddings"),
        ((400, {"error": {"message": "input too large"}}, {}), "answered 400: input too large"),
        ((200, b"<html>proxy</html>", {}), "did not answer JSON"),
        ((200, {"data": []}, {}), "answered 0 embeddings for 1 texts"),
        ((200, {"data": [{"index": 0, "embedding": "AAAA"}]}, {}), "encoding_format 'float'"),
        ((200, {"data": [{"index": 5, "embedding": [1.0]}]}, {}), "bad or repeated index 5"),
        ((200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}, {}), "2-dimensional vectors"),
        ((200, {"data": [{"index": 0, "embedding": [0.0] * DIM}]}, {}), "all-zero vector"),
        ((200, {"data": [{"index": 0, "embedding": ["x"] * DIM}]}, {}), "non-numbers"),
    ],
)
def test_unusable_answers_are_one_clear_error_not_retried(
    server: ScriptedServer, reply: Reply, message: str
) -> None:
    embedder, waits = make(server)
    server.script.append(reply)
    with pytest.raises(ModelUnavailable, match=message.replace("(", r"\(").replace(")", r"\)")):
        embedder.embed(["hello"])
    assert waits == []


def test_not_a_url_and_bad_settings_are_refused() -> None:
    with pytest.raises(ModelUnavailable, match="is not an http\\(s\\) URL"):
        OpenAIHttpEmbedder(HttpEmbedderSettings("localhost:8080"))
    with pytest.raises(ModelUnavailable, match="batch_size must be at least 1"):
        HttpEmbedderSettings("http://127.0.0.1:1/v1", batch_size=0)


def test_a_loopback_server_does_not_leave_the_machine(server: ScriptedServer) -> None:
    embedder, _ = make(server)
    assert not embedder.leaves_machine
    assert embedder.backend_name == f"openai-compatible {server.url}"


def _vault(root: Path) -> Path:
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("# A\nReleases go out on Friday.\n", encoding="utf-8")
    (root / "Notes" / "b.md").write_text("# B\nNothing ships after Thursday.\n", encoding="utf-8")
    return root


def _index_with(root: Path, embedder: OpenAIHttpEmbedder) -> int:
    index = VaultIndex(root, embedding=embedding_model(embedder))
    try:
        return index.update().embedded
    finally:
        index.close()


def test_the_index_records_the_served_model_and_re_embeds_on_a_switch(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = _vault(tmp_path / "vault")
    first, _ = make(server)
    assert _index_with(root, first) == 2
    assert _index_with(root, first) == 0  # same model: nothing to redo
    server.model = "another-embedder"
    second, _ = make(server)
    assert _index_with(root, second) == 2


def test_token_vectors_are_mean_pooled(server: ScriptedServer) -> None:
    """llama-cpp-python's server on a model without pooling answers one vector per token."""
    tokens = [fake_vector("tok1"), fake_vector("tok2"), fake_vector("tok3")]
    server.script.append((200, {"data": [{"index": 0, "embedding": tokens}]}, {}))
    embedder, _ = make(server)  # the probe gets the token vectors
    assert embedder.token_level and embedder.dimension == DIM
    server.script.append((200, {"data": [{"index": 0, "embedding": tokens}]}, {}))
    vector = embedder.embed(["three tokens"])[0]
    mean = np.asarray(tokens, dtype=np.float32).mean(axis=0)
    assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-6)
    # Such a server mixes up a batch's token vectors: each text goes alone.
    embedder.embed(["a", "b", "c"])
    assert [len(r["input"]) for r in server.requests[-3:]] == [1, 1, 1]


def test_an_idle_connection_the_server_closed_is_reopened_without_a_wait(
    server: ScriptedServer,
) -> None:
    embedder, waits = make(server)  # the probe leaves a keep-alive connection open
    server.script.append("reset")  # the server drops it, as uvicorn does when idle
    assert embedder.embed(["next"]).shape == (1, DIM)
    assert waits == [] and embedder.retries == 0
