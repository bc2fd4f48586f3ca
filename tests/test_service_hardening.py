"""The endpoint under hostile input, with scripted engines (no models): every case answers
400/403/413 with a clear message, bounded in time and connections.

Before these fixes: a JSON nested 100k deep, a 100,000-digit number or a lone surrogate
gave 500 with the internal exception text; an empty ``Host`` was accepted; half-open
connections were held for ever; one 2 MB string cost seconds of tokenizer CPU.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from desktop.service.server import EndpointHandle, endpoint_file, start_endpoint
from inference.embedder import Embedder
from inference.runtime import Runtime
from tests.fakes import ScriptedGenerator
from tests.service_util import TOKEN, call, error_message


class LengthEmbedder(Embedder):
    """Vectors from the text's length; records every call (and can be made slow)."""

    dimension = 4
    name = "length-fake"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.seconds_per_text = 0.0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls.append(list(texts))
        time.sleep(self.seconds_per_text * len(texts))
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = [len(t), 1, 0, 0]
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def embedder() -> LengthEmbedder:
    return LengthEmbedder()


@pytest.fixture(scope="module")
def runtime(embedder: LengthEmbedder) -> Iterator[Runtime]:
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x"] * 10), make_embedder=lambda: embedder
    )
    rt.start()
    rt.wait_ready(timeout=30)
    yield rt
    rt.close()


@pytest.fixture(scope="module")
def endpoint(runtime: Runtime) -> Iterator[EndpointHandle]:
    handle = start_endpoint(
        runtime=runtime, port=0, token=TOKEN, publish=False, guard=False, read_seconds=1.0
    )
    yield handle
    handle.stop()


def raw_request(port: int, data: bytes, timeout: float = 10) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body) if body else {}


def post(port: int, body: bytes, path: str = "/v1/embeddings") -> tuple[int, dict[str, Any]]:
    return call(port, "POST", path, raw=body)


# ---------------------------------------------------------------- bodies no handler can use


@pytest.mark.parametrize("path", ["/v1/embeddings", "/api/embed", "/v1/capture", "/v1/recall"])
def test_deep_nesting_is_400_on_every_route(endpoint: EndpointHandle, path: str) -> None:
    status, body = post(endpoint.port, b"[" * 100_000 + b"]" * 100_000, path)
    assert status == 400
    assert error_message(body).startswith("The body is nested too deeply to read")


@pytest.mark.parametrize("path", ["/v1/embeddings", "/v1/capture"])
def test_a_100000_digit_number_is_400(endpoint: EndpointHandle, path: str) -> None:
    status, body = post(endpoint.port, b'{"input": ' + b"9" * 100_000 + b"}", path)
    assert status == 400
    assert body["error"]["message"].startswith("The body holds a value that cannot be read")
    assert "Internal error" not in body["error"]["message"]


@pytest.mark.parametrize("path", ["/v1/embeddings", "/v1/capture", "/v1/recall"])
def test_a_lone_surrogate_is_400(endpoint: EndpointHandle, path: str) -> None:
    status, body = post(endpoint.port, b'{"input": "a \\ud800 b", "text": "\\udfff"}', path)
    assert status == 400
    assert body["error"]["message"].startswith("The body holds a lone UTF-16 surrogate escape")


def test_a_surrogate_pair_is_fine(endpoint: EndpointHandle) -> None:
    status, body = post(endpoint.port, b'{"input": "smile \\ud83d\\ude00"}')
    assert status == 200 and len(body["data"]) == 1


def test_a_crash_answers_500_without_the_exception_text(endpoint: EndpointHandle) -> None:
    def broken(body: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("/home/someone/secret/path")

    endpoint.register_route("/v1/test-broken", broken)
    status, body = call(endpoint.port, "POST", "/v1/test-broken", {})
    assert status == 500
    assert body["error"]["message"].startswith("Internal error (KeyError) — see the server log")
    assert "secret" not in body["error"]["message"]


# ---------------------------------------------------------------- Host


@pytest.mark.parametrize("host", [b"Host: \r\n", b"Host:\r\n", b""])
def test_an_empty_or_missing_host_is_refused(endpoint: EndpointHandle, host: bytes) -> None:
    status, body = raw_request(
        endpoint.port,
        b"GET /v1/models HTTP/1.0\r\n" + host + f"Authorization: Bearer {TOKEN}\r\n\r\n".encode(),
    )
    assert status in (400, 403)
    if status == 403:
        assert body["error"]["message"].startswith("Host '(none)' is refused")


# ---------------------------------------------------------------- the proof


def test_the_endpoint_proves_it_holds_the_token(endpoint: EndpointHandle) -> None:
    nonce = "n" * 32
    status, body = call(
        endpoint.port, "GET", "/v1/hello", token=None, headers={"X-Antinomy-Nonce": nonce}
    )
    message = f"antinomy-endpoint-proof/1 port={endpoint.port} nonce={nonce}".encode()
    expected = hmac.new(TOKEN.encode(), message, hashlib.sha256).hexdigest()
    assert status == 200 and body == {"proof": expected, "scheme": "hmac-sha256/1"}
    status, body = call(endpoint.port, "GET", "/v1/hello", token=None)
    assert status == 400 and "X-Antinomy-Nonce".lower() in body["error"]["message"]


# ---------------------------------------------------------------- cost per input


def test_a_two_megabyte_string_is_cut_before_tokenising(
    endpoint: EndpointHandle, embedder: LengthEmbedder
) -> None:
    embedder.calls.clear()
    status, body = call(endpoint.port, "POST", "/v1/embeddings", {"input": ["x" * 2_000_000, "y"]})
    assert status == 200 and body["truncated_inputs"] == [0]
    assert [len(t) for call_texts in embedder.calls for t in call_texts] == [8192, 1]
    status, body = call(endpoint.port, "POST", "/api/embed", {"input": "z" * 10_000})
    assert status == 200 and body["truncated_inputs"] == [0]


def test_a_small_request_jumps_ahead_of_bulk_work(
    endpoint: EndpointHandle, embedder: LengthEmbedder
) -> None:
    embedder.seconds_per_text = 0.01
    try:
        bulk: list[tuple[int, dict[str, Any]]] = []
        thread = threading.Thread(
            target=lambda: bulk.append(
                call(endpoint.port, "POST", "/v1/embeddings", {"input": ["b" * 50] * 256})
            )
        )
        thread.start()
        time.sleep(0.3)  # the bulk request is being embedded, chunk by chunk
        t0 = time.perf_counter()
        status, _ = call(endpoint.port, "POST", "/v1/embeddings", {"input": "guard summary"})
        small = time.perf_counter() - t0
        thread.join(30)
    finally:
        embedder.seconds_per_text = 0.0
    assert status == 200 and bulk[0][0] == 200 and len(bulk[0][1]["data"]) == 256
    # 256 texts take 2.56 s on this engine; the small one waits for one 16-text chunk at most.
    assert small < 1.0, f"{small:.2f} s"
    assert endpoint.batcher.stats.jumped >= 1


# ---------------------------------------------------------------- connections


def test_half_open_connections_are_closed_after_the_read_timeout(
    endpoint: EndpointHandle,
) -> None:
    socks = []
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", endpoint.port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1")  # never finished
        socks.append(s)
    try:
        time.sleep(2.0)  # read_seconds=1 on this endpoint
        closed = 0
        for s in socks:
            s.settimeout(2)
            try:
                closed += s.recv(1) == b""
            except (ConnectionResetError, TimeoutError):
                closed += 0
        assert closed == 50
        assert call(endpoint.port, "GET", "/healthz")[0] == 200
    finally:
        for s in socks:
            s.close()


def test_the_connection_cap_closes_the_oldest_idle_connections(runtime: Runtime) -> None:
    handle = start_endpoint(
        runtime=runtime, port=0, token=TOKEN, publish=False, guard=False, max_connections=20
    )
    socks = []
    try:
        for _ in range(60):
            socks.append(socket.create_connection(("127.0.0.1", handle.port), timeout=5))
        # A real client still gets in: the idle ones made room.
        assert call(handle.port, "GET", "/healthz")[0] == 200
        time.sleep(0.2)
        assert handle.connections.open_count <= 20
    finally:
        for s in socks:
            s.close()
        handle.stop()


# ---------------------------------------------------------------- endpoint.json


def test_a_second_endpoint_that_stops_puts_the_first_ones_entry_back(runtime: Runtime) -> None:
    first = start_endpoint(runtime=runtime, port=0, token=TOKEN, guard=False)
    try:
        assert json.loads(endpoint_file().read_text())["port"] == first.port
        second = start_endpoint(runtime=runtime, port=0, token=TOKEN, guard=False)
        assert json.loads(endpoint_file().read_text())["port"] == second.port
        second.stop()
        info = json.loads(endpoint_file().read_text())
        assert info["port"] == first.port and info["pid"] == os.getpid()
    finally:
        first.stop()
    assert not endpoint_file().exists()


def test_an_endpoint_never_removes_a_file_another_one_wrote(runtime: Runtime) -> None:
    handle = start_endpoint(runtime=runtime, port=0, token=TOKEN, guard=False)
    other = {"port": 1, "pid": 1, "instance": "someone-else"}
    endpoint_file().write_text(json.dumps(other))
    handle.stop()
    assert json.loads(endpoint_file().read_text()) == other


def test_healthz_says_when_it_is_ready(endpoint: EndpointHandle) -> None:
    status, body = call(endpoint.port, "GET", "/healthz", token=None)
    assert status == 200
    assert (body["models"], body["guard"], body["ready"]) == ("ready", "none", True)


def test_with_an_urgent_lane_a_small_request_never_waits_for_a_bulk_chunk() -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from desktop.service.batching import EmbedBatcher

    slow = LengthEmbedder()
    slow.seconds_per_text = 0.2
    fast = LengthEmbedder()
    bulk_pool, urgent_pool = ThreadPoolExecutor(1), ThreadPoolExecutor(1)

    async def run() -> tuple[float, int]:
        batcher = EmbedBatcher(
            lambda texts: bulk_pool.submit(slow.embed, texts),
            submit_urgent=lambda texts: urgent_pool.submit(fast.embed, texts),
        )
        big = asyncio.ensure_future(batcher.embed(["x" * 1000] * 10))  # ten 0.2 s chunks
        await asyncio.sleep(0.1)
        t0 = time.perf_counter()
        vectors = await batcher.embed(["guard summary"])
        waited = time.perf_counter() - t0
        assert vectors.shape == (1, 4)
        assert (await big).shape == (10, 4)
        return waited, len(slow.calls)

    waited, bulk_calls = asyncio.run(run())
    bulk_pool.shutdown()
    urgent_pool.shutdown()
    assert waited < 0.15, f"{waited:.3f} s"  # not behind the 0.2 s chunk in progress
    assert bulk_calls == 10 and fast.calls == [["guard summary"]]
