"""A local process without the token cannot hold the endpoint: pipelining is capped,
unread answers time out, and connections that never sent the token cannot take the room
kept for those that do. Scripted embedder (no models); the flood runs in a process of
its own, as an attacker's would.

Before: 256 connections pipelining ``GET /healthz`` without reading were answered as
fast as they sent (~3,900 answers/s, the server thread at 78 % CPU), each held for
ever; a one-text embedding took 0.6–1.9 s and every hook call failed open.
"""

from __future__ import annotations

import http.client
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from desktop.service.connections import MAX_PIPELINED
from desktop.service.server import start_endpoint
from inference.embedder import Embedder
from inference.runtime import Runtime
from tests.fakes import ScriptedGenerator
from tests.service_util import TOKEN, PipeliningFlood, call


class CountingEmbedder(Embedder):
    dimension = 4
    name = "counting-fake"

    def embed(self, texts):  # type: ignore[no-untyped-def]
        out = np.zeros((len(texts), 4), dtype=np.float32)
        out[:, 0] = 1.0
        return out


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x"] * 10),
        make_embedder=CountingEmbedder,
    )
    rt.start()
    rt.wait_ready(timeout=30)
    yield rt
    rt.close()


def pipelined(port: int, count: int) -> bytes:
    return (f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n" * count).encode()


def read_all(sock: socket.socket, timeout: float) -> tuple[bytes, str]:
    """Everything until the server closes (or ``timeout``); and how it ended."""
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
        how = "closed"
    except ConnectionResetError:
        how = "reset"
    except TimeoutError:
        how = "open"
    return b"".join(chunks), how


def hook_like_embed(port: int, timeout: float = 5.0) -> float:
    """What the hook client does on one connection: ask the open proof route, then send
    the token and a body. Returns the seconds it took; raises if it failed."""
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(
            f"GET /v1/hello HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"X-Antinomy-Nonce: {'n' * 32}\r\n\r\n".encode()
        )
        buffer = b""
        while b'"scheme"' not in buffer:
            chunk = sock.recv(65536)
            assert chunk, "closed before the proof"
            buffer += chunk
        body = b'{"input": "hello"}'
        sock.sendall(
            f"POST /v1/embeddings HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        answer, _ = read_all(sock, timeout)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    return time.perf_counter() - t0


def test_pipelining_past_the_cap_is_not_answered(runtime: Runtime) -> None:
    handle = start_endpoint(
        runtime=runtime, port=0, token=TOKEN, publish=False, guard=False, read_seconds=1.0
    )
    try:
        with socket.create_connection(("127.0.0.1", handle.port), timeout=5) as sock:
            sock.sendall(pipelined(handle.port, 50))
            t0 = time.perf_counter()
            data, how = read_all(sock, 5.0)
            waited = time.perf_counter() - t0
        assert data.count(b"HTTP/1.1 200") == MAX_PIPELINED == 2
        assert how in ("closed", "reset") and waited < 3.0  # at its read deadline
        assert handle.connections.pipeline_held == 1
        # One request at a time on a keep-alive connection is never held back.
        with socket.create_connection(("127.0.0.1", handle.port), timeout=5) as sock:
            for _ in range(10):
                sock.sendall(pipelined(handle.port, 1))
                answer = b""
                while not answer.endswith(b"}"):
                    answer += sock.recv(65536)
                assert answer.startswith(b"HTTP/1.1 200")
    finally:
        handle.stop()


def test_an_answer_left_unread_ends_the_connection(runtime: Runtime) -> None:
    handle = start_endpoint(
        runtime=runtime,
        port=0,
        token=TOKEN,
        publish=False,
        guard=False,
        read_seconds=30.0,  # only the write timeout can end it
        write_seconds=1.0,
    )
    size = 8 * 1024 * 1024
    handle.register_route("/v1/test-big", lambda body: {"blob": "x" * size})
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", handle.port))
        sock.sendall(
            f"POST /v1/test-big HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\n\r\n{}".encode()
        )
        time.sleep(3.0)  # the answer sits unread for three times the write timeout
        data, how = read_all(sock, 5.0)
        sock.close()
        # Before, the connection was held for ever and the whole answer came when read.
        assert how in ("closed", "reset") and len(data) < size
        assert handle.connections.write_timed_out == 1
        assert handle.connections.open_count == 0
        assert call(handle.port, "GET", "/healthz")[0] == 200
    finally:
        handle.stop()


def test_tokenless_connections_leave_room_for_the_token(runtime: Runtime) -> None:
    """Of 20 connections, 5 are kept for clients that sent the token: idle keep-alive
    connections of token holders outlive a wave of tokenless ones (before, the oldest
    idle connections were closed for room, theirs first)."""
    handle = start_endpoint(
        runtime=runtime, port=0, token=TOKEN, publish=False, guard=False, max_connections=20
    )
    clients = [http.client.HTTPConnection("127.0.0.1", handle.port, timeout=5) for _ in range(3)]
    flood: list[socket.socket] = []
    try:
        for client in clients:
            assert embed_on(client) == 200
        for _ in range(30):
            sock = socket.create_connection(("127.0.0.1", handle.port), timeout=5)
            sock.sendall(pipelined(handle.port, 50))
            flood.append(sock)
        time.sleep(0.5)
        assert [embed_on(client) for client in clients] == [200, 200, 200]
        tokenless: Any = handle.connections.tokenless
        assert len(tokenless) <= 15 and handle.connections.evicted >= 15
        assert hook_like_embed(handle.port) < 2.0
    finally:
        for client in clients:
            client.close()
        for sock in flood:
            sock.close()
        handle.stop()


def embed_on(client: http.client.HTTPConnection) -> int:
    client.request(
        "POST",
        "/v1/embeddings",
        body=b'{"input": "x"}',
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    response = client.getresponse()
    response.read()
    return response.status


def test_an_authenticated_embed_stays_fast_during_a_flood(runtime: Runtime) -> None:
    """256 connections pipelining without reading, held past the read deadline (so the
    flood has been closed once and came back)."""
    handle = start_endpoint(
        runtime=runtime, port=0, token=TOKEN, publish=False, guard=False, read_seconds=1.0
    )
    try:
        with PipeliningFlood(handle.port, 256) as flood:
            time.sleep(2.5)
            took = sorted(hook_like_embed(handle.port) for _ in range(20))
            cpu0 = os.times()
            time.sleep(1.0)
            cpu = os.times()
        busy = (cpu.user - cpu0.user) + (cpu.system - cpu0.system)
        shown = [round(t * 1000) for t in took]
        assert took[10] < 0.05 and took[-1] < 1.0, shown  # idle: 1–3 ms each
        # The server is not kept busy answering what is never read (it was ~80 % of a core).
        assert busy < 0.4, busy
        assert flood.report["closed_by_server"] >= 256
    finally:
        handle.stop()


def test_the_token_is_read_from_the_request_itself(runtime: Runtime) -> None:
    """A wrong token does not earn a connection the room kept for the token."""
    handle = start_endpoint(
        runtime=runtime, port=0, token=TOKEN, publish=False, guard=False, max_connections=8
    )
    try:
        socks: list[socket.socket] = []
        for _ in range(12):
            sock = socket.create_connection(("127.0.0.1", handle.port), timeout=5)
            sock.sendall(
                f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n"
                "Authorization: Bearer wrong\r\n\r\n".encode()
            )
            socks.append(sock)
        time.sleep(0.3)
        tokenless: Any = handle.connections.tokenless
        assert len(tokenless) <= 8 - 2  # two of eight kept for the token
        for sock in socks:
            sock.close()
    finally:
        handle.stop()
