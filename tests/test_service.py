"""The loopback endpoint on a real ephemeral port: embeddings, routes, security, Nagle."""

from __future__ import annotations

import base64
import json
import socket
import stat
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from desktop.service.errors import BadRequest
from desktop.service.security import load_or_create_token, token_path
from desktop.service.server import EndpointHandle, start_endpoint
from tests.service_util import TOKEN, call

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def endpoint(runtime: Any) -> Iterator[EndpointHandle]:
    handle = start_endpoint(runtime=runtime, port=0, token=TOKEN, publish=False, guard=False)
    yield handle
    handle.stop()


def test_openai_client_float_and_base64_match_in_process(
    endpoint: EndpointHandle, runtime: Any
) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key=TOKEN, max_retries=0)
    texts = ["Production releases go out every Friday.", "git push --force origin main", "ok"]
    expected = runtime.embedder.embed(texts)
    # The client asks for base64 by default and decodes it itself.
    default = client.embeddings.create(model="all-MiniLM-L6-v2", input=texts)
    as_float = client.embeddings.create(
        model="sentence-transformers/all-MiniLM-L6-v2", input=texts, encoding_format="float"
    )
    for answer in (default, as_float):
        got = np.array([d.embedding for d in answer.data], dtype=np.float32)
        assert got.shape == (3, 384)
        assert np.abs(got - expected).max() < 1e-5
        assert [d.index for d in answer.data] == [0, 1, 2]
        assert answer.usage.prompt_tokens == answer.usage.total_tokens > 10
    single = client.embeddings.create(model="all-minilm", input=texts[1], encoding_format="float")
    assert np.abs(np.array(single.data[0].embedding) - expected[1]).max() < 1e-5


def test_base64_is_little_endian_float32(endpoint: EndpointHandle, runtime: Any) -> None:
    status, body = call(
        endpoint.port, "POST", "/v1/embeddings", {"input": "hello", "encoding_format": "base64"}
    )
    assert status == 200
    vec = np.frombuffer(base64.b64decode(body["data"][0]["embedding"]), dtype="<f4")
    assert np.abs(vec - runtime.embedder.embed(["hello"])[0]).max() < 1e-5
    assert body["model"] == "all-minilm-l6-v2"


def test_ollama_embed(endpoint: EndpointHandle, runtime: Any) -> None:
    status, body = call(
        endpoint.port, "POST", "/api/embed", {"model": "all-minilm", "input": ["a b", "c"]}
    )
    assert status == 200
    got = np.array(body["embeddings"], dtype=np.float32)
    assert np.abs(got - runtime.embedder.embed(["a b", "c"])).max() < 1e-5
    assert body["prompt_eval_count"] > 0


def test_models_and_healthz(endpoint: EndpointHandle, runtime: Any) -> None:
    status, body = call(endpoint.port, "GET", "/healthz", token=None)
    assert status == 200 and body["status"] == "ok" and body["models"] == "ready"
    status, body = call(endpoint.port, "GET", "/v1/models")
    assert status == 200 and body["data"][0]["id"] == "all-minilm-l6-v2"
    assert call(endpoint.port, "GET", "/v1/models", token=None)[0] == 401


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"input": "x", "dimensions": 256}, 400, "dimensions=256 is not supported"),
        ({"input": "x", "encoding_format": "int8"}, 400, "encoding_format='int8' is not supported"),
        ({"input": []}, 400, "'input' is an empty list"),
        ({"input": [[101, 102]]}, 400, "token-id arrays are not supported"),
        ({"model": "m"}, 400, "'input' is missing"),
        ({"input": ["x"] * 257}, 413, "257 texts in one request; the limit is 256"),
    ],
)
def test_embeddings_bad_input(
    endpoint: EndpointHandle, body: dict[str, Any], status: int, message: str
) -> None:
    got, answer = call(endpoint.port, "POST", "/v1/embeddings", body)
    assert got == status
    assert message in answer["error"]["message"]
    assert answer["error"]["code"] == status


def test_dimensions_equal_to_the_model_is_accepted(endpoint: EndpointHandle) -> None:
    assert (
        call(endpoint.port, "POST", "/v1/embeddings", {"input": "x", "dimensions": 384})[0] == 200
    )


# ---------------------------------------------------------------- security


def test_missing_and_wrong_token_are_401(endpoint: EndpointHandle) -> None:
    status, body = call(endpoint.port, "POST", "/v1/embeddings", {"input": "x"}, token=None)
    assert status == 401 and "Missing bearer token" in body["error"]["message"]
    status, body = call(endpoint.port, "POST", "/v1/embeddings", {"input": "x"}, token="nope")
    assert status == 401 and "Wrong bearer token" in body["error"]["message"]


def test_foreign_host_is_refused(endpoint: EndpointHandle) -> None:
    status, body = call(
        endpoint.port, "POST", "/v1/embeddings", {"input": "x"}, headers={"Host": "evil.example"}
    )
    assert status == 403
    assert "Host 'evil.example' is refused" in body["error"]["message"]
    # A rebinding page also names the right port under its own name.
    status, _ = call(
        endpoint.port,
        "GET",
        "/healthz",
        headers={"Host": f"evil.example:{endpoint.port}"},
        token=None,
    )
    assert status == 403


def test_loopback_host_names_pass(endpoint: EndpointHandle) -> None:
    for name in ("localhost", "127.0.0.1", "[::1]"):
        status, _ = call(
            endpoint.port, "GET", "/healthz", headers={"Host": f"{name}:{endpoint.port}"}
        )
        assert status == 200, name


def test_foreign_origin_is_refused(endpoint: EndpointHandle) -> None:
    status, body = call(
        endpoint.port,
        "POST",
        "/v1/embeddings",
        {"input": "x"},
        headers={"Origin": "https://evil.example"},
    )
    assert status == 403 and "Origin 'https://evil.example' is refused" in body["error"]["message"]
    same = {"Origin": f"http://127.0.0.1:{endpoint.port}"}
    assert call(endpoint.port, "POST", "/v1/embeddings", {"input": "x"}, headers=same)[0] == 200


def test_ten_megabyte_body_is_413(endpoint: EndpointHandle) -> None:
    raw = json.dumps({"input": "a" * (10 * 1024 * 1024)}).encode()
    status, body = call(endpoint.port, "POST", "/v1/embeddings", raw=raw)
    assert status == 413
    assert "the limit is 2097152 bytes" in body["error"]["message"]


def test_text_plain_is_415(endpoint: EndpointHandle) -> None:
    status, body = call(
        endpoint.port,
        "POST",
        "/v1/embeddings",
        raw=b'{"input": "x"}',
        headers={"Content-Type": "text/plain"},
    )
    assert status == 415
    assert "Content-Type 'text/plain' is refused" in body["error"]["message"]


def test_malformed_json_is_400_with_a_message(endpoint: EndpointHandle) -> None:
    status, body = call(endpoint.port, "POST", "/v1/embeddings", raw=b'{"input": "x",')
    assert status == 400
    assert body["error"]["message"].startswith("The body is not valid JSON:")
    status, body = call(endpoint.port, "POST", "/v1/embeddings", raw=b'["x"]')
    assert status == 400 and "must be a JSON object, not list" in body["error"]["message"]


def test_unknown_route_and_method(endpoint: EndpointHandle) -> None:
    status, body = call(endpoint.port, "POST", "/v1/nothing", {})
    assert status == 404 and "No route /v1/nothing" in body["error"]["message"]
    assert call(endpoint.port, "GET", "/v1/embeddings")[0] == 405


def test_bad_requests_do_not_disturb_another_client(endpoint: EndpointHandle) -> None:
    """A steady client keeps getting 200s while another sends every kind of bad request."""
    results: list[int] = []
    stop = threading.Event()

    def steady() -> None:
        while not stop.is_set():
            results.append(call(endpoint.port, "POST", "/v1/embeddings", {"input": "steady"})[0])

    worker = threading.Thread(target=steady)
    worker.start()
    try:
        big = json.dumps({"input": "a" * (10 * 1024 * 1024)}).encode()
        for _ in range(2):
            assert call(endpoint.port, "POST", "/v1/embeddings", raw=big)[0] == 413
            assert call(endpoint.port, "POST", "/v1/embeddings", raw=b"{", token="bad")[0] == 401
            assert call(endpoint.port, "POST", "/v1/embeddings", raw=b"{")[0] == 400
            evil = {"Host": "evil.example"}
            assert call(endpoint.port, "GET", "/healthz", headers=evil)[0] == 403
    finally:
        stop.set()
        worker.join()
    assert results and set(results) == {200}


# ---------------------------------------------------------------- transport


def test_accepted_sockets_have_nagle_off(endpoint: EndpointHandle) -> None:
    conn = socket.create_connection(("127.0.0.1", endpoint.port))
    try:
        request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n\r\n"
        conn.sendall(request.encode())
        assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        server = endpoint._server
        flags = [
            c.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            for c in server.server_state.connections
        ]
        assert flags and all(flags)
    finally:
        conn.close()


def test_keep_alive_requests_do_not_stall(endpoint: EndpointHandle) -> None:
    """With Nagle on, headers + body in two writes stall ~40 ms per request."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", endpoint.port)
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        times.append(time.perf_counter() - t0)
    conn.close()
    assert sorted(times)[len(times) // 2] < 0.02


def test_concurrent_requests_are_micro_batched(endpoint: EndpointHandle) -> None:
    before = endpoint.batcher.stats.calls, endpoint.batcher.stats.requests
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def one(i: int) -> None:
        barrier.wait()
        text = f"concurrent request number {i} " * 20
        statuses.append(call(endpoint.port, "POST", "/v1/embeddings", {"input": text})[0])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    calls = endpoint.batcher.stats.calls - before[0]
    requests = endpoint.batcher.stats.requests - before[1]
    assert statuses == [200] * 8 and requests == 8
    assert calls < 8


# ---------------------------------------------------------------- routes


def test_registered_routes_get_the_same_front_door(endpoint: EndpointHandle) -> None:
    def echo(body: dict[str, Any]) -> dict[str, Any]:
        if "text" not in body:
            raise BadRequest("'text' is missing: send the text to echo.")
        return {"echo": body["text"], "thread": threading.current_thread().name}

    async def shout(body: dict[str, Any]) -> dict[str, Any]:
        return {"echo": str(body.get("text", "")).upper()}

    endpoint.register_route("/v1/test-echo", echo)
    endpoint.register_route("/v1/test-shout", shout)
    status, body = call(endpoint.port, "POST", "/v1/test-echo", {"text": "hi"})
    assert status == 200 and body["echo"] == "hi"
    assert body["thread"].startswith("antinomy-endpoint")  # blocking handlers run off the loop
    assert call(endpoint.port, "POST", "/v1/test-shout", {"text": "hi"}) == (200, {"echo": "HI"})
    status, body = call(endpoint.port, "POST", "/v1/test-echo", {})
    assert status == 400 and body["error"]["message"] == "'text' is missing: send the text to echo."
    assert call(endpoint.port, "POST", "/v1/test-echo", {"text": "x"}, token=None)[0] == 401


def test_a_crashing_handler_is_a_500_with_a_message(endpoint: EndpointHandle) -> None:
    def broken(body: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("oops")

    endpoint.register_route("/v1/test-broken", broken)
    status, body = call(endpoint.port, "POST", "/v1/test-broken", {})
    assert status == 500 and "Internal error (KeyError" in body["error"]["message"]
    assert call(endpoint.port, "GET", "/healthz")[0] == 200


# ---------------------------------------------------------------- token and lifecycle


def test_token_is_created_owner_only_and_reused() -> None:
    token = load_or_create_token()
    path = token_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert len(token) >= 40 and load_or_create_token() == token


def test_a_token_file_readable_by_others_is_tightened() -> None:
    token = load_or_create_token()
    token_path().chmod(0o644)
    assert load_or_create_token() == token
    assert stat.S_IMODE(token_path().stat().st_mode) == 0o600


def test_port_in_use_is_a_clear_error(endpoint: EndpointHandle, runtime: Any) -> None:
    from desktop.service.errors import EndpointError

    with pytest.raises(EndpointError, match=f"Port {endpoint.port} on 127.0.0.1 is in use"):
        start_endpoint(runtime=runtime, port=endpoint.port, token=TOKEN, publish=False)


def test_publish_and_stop(runtime: Any) -> None:
    from desktop.service.server import endpoint_file

    handle = start_endpoint(runtime=runtime, port=0, guard=False)
    info = json.loads(endpoint_file().read_text())
    assert info["port"] == handle.port and info["url"] == handle.url
    assert call(handle.port, "GET", "/healthz", token=None)[0] == 200
    handle.stop()
    assert not endpoint_file().exists()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", handle.port), timeout=1).close()
