"""The HTTP embedder against real servers started here: Antinomy's own endpoint
(the shipped embedder behind /v1/embeddings) and llama-cpp-python's server."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop.flows.embedding import embedding_model
from desktop.resources import sample_vault_source
from desktop.service.server import EndpointHandle, start_endpoint
from desktop.vault.index import VaultIndex
from desktop.vault.search import search
from inference.http_embedder import HttpEmbedderSettings, OpenAIHttpEmbedder
from inference.registry import resolve_model
from inference.runtime import Runtime, RuntimeSettings
from tests.service_util import TOKEN

pytestmark = pytest.mark.model

TEXTS = [
    "Production releases go out every Friday between 14:00 and 16:00.",
    "Nothing ships to production after Thursday noon.",
    "I run before work, at 6:30.",
    "",
]


@pytest.fixture(scope="module")
def endpoint(runtime: Any) -> Iterator[EndpointHandle]:
    handle = start_endpoint(runtime=runtime, port=0, token=TOKEN, publish=False, guard=False)
    yield handle
    handle.stop()


def _remote(endpoint: EndpointHandle, **kwargs: Any) -> OpenAIHttpEmbedder:
    return OpenAIHttpEmbedder(HttpEmbedderSettings(f"{endpoint.url}/v1", api_key=TOKEN, **kwargs))


def test_antinomy_endpoint_vectors_equal_the_in_process_ones(
    endpoint: EndpointHandle, runtime: Any
) -> None:
    remote = _remote(endpoint, batch_size=2)
    assert remote.dimension == runtime.embedder.dimension == 384
    assert remote.served_model == "all-minilm-l6-v2"  # the endpoint's clean model id
    far = remote.embed(TEXTS)
    near = runtime.embedder.embed([t if t.strip() else " " for t in TEXTS])
    assert np.abs(far - near).max() < 1e-5
    remote.close()


def test_a_wrong_token_is_refused_with_the_fix(endpoint: EndpointHandle) -> None:
    from foundation.errors import ModelUnavailable

    with pytest.raises(ModelUnavailable, match="check the embedder API key"):
        OpenAIHttpEmbedder(HttpEmbedderSettings(f"{endpoint.url}/v1", api_key="wrong"))


def test_the_sample_vault_indexes_and_searches_over_http(
    endpoint: EndpointHandle, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    remote = _remote(endpoint)
    index = VaultIndex(vault, embedding=embedding_model(remote))
    try:
        report = index.update()
        assert report.embedded == report.notes_indexed > 50
        hits = search(index, "when do we release to production", 5)
        assert any(h.semantic_rank is not None for h in hits)
    finally:
        index.close()
        remote.close()


def test_the_runtime_loads_the_http_embedder(endpoint: EndpointHandle) -> None:
    settings = RuntimeSettings(
        embedder_backend="http",
        embedder_http=HttpEmbedderSettings(f"{endpoint.url}/v1", api_key=TOKEN),
    )
    rt = Runtime(settings)
    try:
        rt.wait_ready(timeout=120)
        assert isinstance(rt.embedder, OpenAIHttpEmbedder)
        assert rt.reports["embedder"].description.startswith(f"openai-compatible {endpoint.url}/v1")
        assert rt.queued_embedder().embed(["one"]).shape == (1, 384)
    finally:
        rt.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server in embedding mode, on the shipped GGUF."""
    pytest.importorskip("llama_cpp.server")
    port = _free_port()
    log = (tmp_path_factory.mktemp("llama-embed") / "server.log").open("w+")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(resolve_model("llm").path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--embedding",
            "true",
            "--n_ctx",
            "512",
            "--n_threads",
            "1",
            "--model_alias",
            "smollm2-embed",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    try:
        while True:
            try:
                with urllib.request.urlopen(base + "/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(
                        f"llama_cpp.server did not start: {log.read()[-2000:]}"
                    ) from None
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def test_llama_cpp_server_embeddings(llama_server: str) -> None:
    remote = OpenAIHttpEmbedder(HttpEmbedderSettings(llama_server, model="smollm2-embed"))
    assert remote.served_model == "smollm2-embed"
    assert remote.name == "smollm2-embed (openai-compatible)"
    # SmolLM2 has no pooling layer: the server answers token vectors, pooled here.
    assert remote.token_level
    vectors = remote.embed(TEXTS[:3])
    assert vectors.shape == (3, remote.dimension) and remote.dimension == 576
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Each text's vector is its own: the same as embedding it alone.
    for i, text in enumerate(TEXTS[:3]):
        assert float(remote.embed([text])[0] @ vectors[i]) > 0.999
    remote.close()
