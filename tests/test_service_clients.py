"""OpenAI and Ollama clients as they are: the routes they call first, the model names
they send, the key they cannot send, the endpoint still warming up. Scripted engines
(the shipped embedder's name, vectors from the text); the wire shapes are checked
directly, and with the official clients where they are installed.

Before: Ollama's client got 401 everywhere (it sends no key); ``/api/tags``,
``/api/embeddings`` and ``/api/version`` were 404; ``/v1/models`` named the model
"all-MiniLM-L6-v2 (ONNX, int8 weights) (int8)" and any model name was accepted; a
request in the first seconds was a 503 that OpenAI's client gave up on.
"""

from __future__ import annotations

import http.client
import json
import shutil
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from desktop.flows.guard import GuardSettings, save_guard_settings
from desktop.resources import sample_vault_source
from desktop.service.server import EndpointHandle, start_endpoint
from inference.embedder import Embedder
from inference.runtime import Runtime
from tests.fakes import ScriptedGenerator
from tests.service_util import TOKEN, call

SHIPPED_NAME = "all-MiniLM-L6-v2 (ONNX, int8 weights) (int8)"


class ShippedNameEmbedder(Embedder):
    """The shipped embedder's name; a vector from each text's length and first letter."""

    dimension = 4
    name = SHIPPED_NAME

    def __init__(self, loaded: threading.Event | None = None) -> None:
        if loaded is not None:
            loaded.wait(30)  # a slow load, released by the test

    def embed(self, texts):  # type: ignore[no-untyped-def]
        out = np.array([[len(t), ord(t[0]) if t else 0, 1, 0] for t in texts], dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def make_runtime(loaded: threading.Event | None = None) -> Runtime:
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x"] * 10),
        make_embedder=lambda: ShippedNameEmbedder(loaded),
    )
    rt.start()
    return rt


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    rt = make_runtime()
    rt.wait_ready(timeout=30)
    yield rt
    rt.close()


@pytest.fixture(scope="module")
def endpoint(runtime: Runtime) -> Iterator[EndpointHandle]:
    handle = start_endpoint(runtime=runtime, port=0, token=TOKEN, publish=False, guard=False)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def open_endpoint(
    runtime: Runtime, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EndpointHandle]:
    vault = tmp_path_factory.mktemp("open") / "vault"
    shutil.copytree(sample_vault_source(), vault)
    save_guard_settings(vault, GuardSettings(enabled=True))
    handle = start_endpoint(
        runtime=runtime,
        vault_root=vault,
        port=0,
        token=TOKEN,
        publish=False,
        open_embeddings=True,
    )
    yield handle
    handle.stop()


def vector(text: str) -> list[float]:
    return [float(x) for x in ShippedNameEmbedder().embed([text])[0]]


# ---------------------------------------------------------------- open embeddings


OPEN_ROUTES = [
    ("POST", "/v1/embeddings", {"model": "all-minilm", "input": "hello"}),
    ("POST", "/api/embed", {"model": "all-minilm", "input": ["hello"]}),
    ("POST", "/api/embeddings", {"model": "all-minilm", "prompt": "hello"}),
    ("GET", "/v1/models", None),
    ("GET", "/api/tags", None),
    ("GET", "/api/version", None),
]


@pytest.mark.parametrize(("method", "path", "body"), OPEN_ROUTES)
def test_open_embeddings_need_no_token(
    open_endpoint: EndpointHandle, endpoint: EndpointHandle, method: str, path: str, body: Any
) -> None:
    assert call(open_endpoint.port, method, path, body, token=None)[0] == 200
    status, answer = call(endpoint.port, method, path, body, token=None)  # not opened
    assert status == 401
    message = answer["error"] if path.startswith("/api/") else answer["error"]["message"]
    assert message.startswith("Missing bearer token")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/recall", {"query": "release window"}),
        ("/v1/capture", {"text": "hello", "session_id": "s", "role": "user"}),
        ("/v1/guard/check", {"summary": "rm -rf the billing ledger", "session_id": "s"}),
    ],
)
def test_open_embeddings_leave_memory_and_the_guard_closed(
    open_endpoint: EndpointHandle, path: str, body: dict[str, Any]
) -> None:
    status, answer = call(open_endpoint.port, "POST", path, body, token=None)
    assert status == 401 and answer["error"]["message"].startswith("Missing bearer token")


def test_open_embeddings_still_refuse_web_pages(open_endpoint: EndpointHandle) -> None:
    body = {"input": "x"}
    status, _ = call(
        open_endpoint.port,
        "POST",
        "/v1/embeddings",
        body,
        token=None,
        headers={"Origin": "https://evil.example"},
    )
    assert status == 403
    status, _ = call(
        open_endpoint.port,
        "POST",
        "/v1/embeddings",
        body,
        token=None,
        headers={"Host": f"rebound.example:{open_endpoint.port}"},
    )
    assert status == 403


# ---------------------------------------------------------------- Ollama's routes


def test_ollama_tags_version_and_older_embeddings(endpoint: EndpointHandle) -> None:
    status, tags = call(endpoint.port, "GET", "/api/tags")
    assert status == 200
    names = [m["name"] for m in tags["models"]]
    assert names == ["all-minilm-l6-v2:latest", "all-minilm:latest", "all-minilm:l6-v2"]
    for entry in tags["models"]:
        assert entry["model"] == entry["name"]
        assert set(entry) == {"name", "model", "modified_at", "size", "digest", "details"}
        assert set(entry["details"]) == {
            "parent_model",
            "format",
            "family",
            "families",
            "parameter_size",
            "quantization_level",
        }
        assert entry["details"]["family"] == "bert"
        assert entry["details"]["quantization_level"] == "int8"
        assert len(entry["digest"]) == 64
    assert call(endpoint.port, "GET", "/api/version") == (200, {"version": "0.3.0"})
    status, older = call(
        endpoint.port, "POST", "/api/embeddings", {"model": "all-minilm", "prompt": "hello"}
    )
    assert status == 200 and set(older) == {"embedding"}
    assert np.allclose(older["embedding"], vector("hello"), atol=1e-6)
    status, newer = call(
        endpoint.port, "POST", "/api/embed", {"model": "all-minilm", "input": "hello"}
    )
    assert status == 200 and np.allclose(newer["embeddings"][0], older["embedding"])
    assert newer["model"] == "all-minilm-l6-v2"


def test_ollama_loads_with_an_empty_input(endpoint: EndpointHandle) -> None:
    """Ollama answers an empty input with nothing embedded: tools send it to load a model."""
    assert call(endpoint.port, "POST", "/api/embeddings", {"model": "all-minilm"}) == (
        200,
        {"embedding": []},
    )
    status, answer = call(endpoint.port, "POST", "/api/embed", {"model": "all-minilm"})
    assert status == 200 and answer["embeddings"] == []


def test_ollama_errors_are_in_ollamas_shape(endpoint: EndpointHandle) -> None:
    status, answer = call(endpoint.port, "POST", "/api/embeddings", {"prompt": 7})
    assert (status, answer) == (400, {"error": "'prompt' must be a string, not int."})
    status, answer = call(endpoint.port, "GET", "/api/ps")
    assert status == 404 and isinstance(answer["error"], str)


# ---------------------------------------------------------------- model names


@pytest.mark.parametrize(
    "name",
    [
        "all-minilm-l6-v2",
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
        "all-minilm",
        "all-minilm:latest",
        "all-minilm:l6-v2",
        "ALL-MINILM-L6-V2:latest",
        "",
        None,
    ],
)
@pytest.mark.parametrize("path", ["/v1/embeddings", "/api/embed"])
def test_the_served_model_answers_to_its_names(
    endpoint: EndpointHandle, path: str, name: str | None
) -> None:
    body: dict[str, Any] = {"input": "hello"}
    if name is not None:
        body["model"] = name
    status, answer = call(endpoint.port, "POST", path, body)
    assert status == 200 and answer["model"] == "all-minilm-l6-v2"


def test_v1_models_names_a_clean_id(endpoint: EndpointHandle) -> None:
    status, answer = call(endpoint.port, "GET", "/v1/models")
    assert status == 200
    assert answer == {
        "object": "list",
        "data": [
            {"id": "all-minilm-l6-v2", "object": "model", "created": 0, "owned_by": "antinomy"}
        ],
    }


def test_an_unknown_model_is_404_in_openais_shape(endpoint: EndpointHandle) -> None:
    status, answer = call(
        endpoint.port, "POST", "/v1/embeddings", {"model": "text-embedding-3-small", "input": "x"}
    )
    assert status == 404
    assert answer == {
        "error": {
            "message": "The model `text-embedding-3-small` does not exist or you do not have "
            "access to it. This endpoint serves all-minilm-l6-v2 (also called all-MiniLM-L6-v2, "
            "sentence-transformers/all-MiniLM-L6-v2, all-minilm, all-minilm:l6-v2).",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/embed", {"model": "nomic-embed-text", "input": "x"}),
        ("/api/embeddings", {"model": "nomic-embed-text", "prompt": "x"}),
    ],
)
def test_an_unknown_model_is_404_in_ollamas_shape(
    endpoint: EndpointHandle, path: str, body: dict[str, Any]
) -> None:
    assert call(endpoint.port, "POST", path, body) == (
        404,
        {"error": 'model "nomic-embed-text" not found, try pulling it first'},
    )


# ---------------------------------------------------------------- warming up


def answer_with_headers(
    port: int, path: str, body: dict[str, Any]
) -> tuple[int, dict[str, str], dict[str, Any], float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.perf_counter()
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        payload = json.loads(response.read())
        headers = {k.lower(): v for k, v in response.getheaders()}
        return response.status, headers, payload, time.perf_counter() - t0
    finally:
        conn.close()


def test_a_request_waits_for_the_embedder_to_warm_up() -> None:
    loaded = threading.Event()
    rt = make_runtime(loaded)
    handle = start_endpoint(runtime=rt, port=0, token=TOKEN, publish=False, guard=False)
    try:
        threading.Timer(0.8, loaded.set).start()
        status, _, answer, took = answer_with_headers(
            handle.port, "/v1/embeddings", {"model": "all-MiniLM-L6-v2", "input": "hello"}
        )
        assert status == 200, answer
        assert answer["data"][0]["embedding"] == pytest.approx(vector("hello"))
        assert took >= 0.7
    finally:
        loaded.set()
        handle.stop()
        rt.close()


def test_past_the_wait_it_is_503_with_retry_after() -> None:
    loaded = threading.Event()
    rt = make_runtime(loaded)
    handle = start_endpoint(
        runtime=rt, port=0, token=TOKEN, publish=False, guard=False, warm_wait_seconds=0.5
    )
    try:
        status, headers, answer, took = answer_with_headers(
            handle.port, "/v1/embeddings", {"input": "hello"}
        )
        assert status == 503 and headers["retry-after"] == "5"
        assert answer["error"]["message"] == (
            "The embedder is still loading (waited 0.5 s) — try again in a few seconds."
        )
        assert 0.45 <= took < 5
    finally:
        loaded.set()
        handle.stop()
        rt.close()


# ---------------------------------------------------------------- the official clients


def test_the_openai_client_as_is(endpoint: EndpointHandle) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key=TOKEN, max_retries=0)
    assert [m.id for m in client.models.list().data] == ["all-minilm-l6-v2"]
    answer = client.embeddings.create(model="sentence-transformers/all-MiniLM-L6-v2", input="hi")
    assert answer.model == "all-minilm-l6-v2" and len(answer.data[0].embedding) == 4
    with pytest.raises(openai.NotFoundError) as refused:
        client.embeddings.create(model="text-embedding-3-small", input="hi")
    assert refused.value.code == "model_not_found"


def test_the_ollama_client_as_is(open_endpoint: EndpointHandle) -> None:
    ollama = pytest.importorskip("ollama")
    client = ollama.Client(host=open_endpoint.url)  # no key, as Ollama's tools run it
    assert [m.model for m in client.list().models] == [
        "all-minilm-l6-v2:latest",
        "all-minilm:latest",
        "all-minilm:l6-v2",
    ]
    assert len(client.embed(model="all-minilm", input=["a", "b"]).embeddings) == 2
    assert client.embeddings(model="all-minilm", prompt="a").embedding == pytest.approx(vector("a"))
    with pytest.raises(ollama.ResponseError) as refused:
        client.embed(model="nomic-embed-text", input="a")
    assert refused.value.status_code == 404
    assert refused.value.error == 'model "nomic-embed-text" not found, try pulling it first'
