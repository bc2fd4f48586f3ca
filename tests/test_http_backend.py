"""The OpenAI-compatible HTTP backend, against a real server started here."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from foundation.errors import ModelUnavailable
from inference.base import GenerationSettings, Message
from inference.http_backend import HttpSettings, OpenAIHttpGenerator, is_loopback_host
from inference.registry import resolve_model
from inference.structured import complete_structured, object_with_array
from tests.fakes import StopAfter


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("[::1]", True),
        ("::1", True),
        ("192.168.1.20", False),
        ("10.0.0.2", False),
        ("gpu-box.lan", False),
        ("api.example.com", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_remote_url_sets_the_leaves_machine_flag() -> None:
    assert OpenAIHttpGenerator(HttpSettings("http://10.1.2.3:8080/v1")).leaves_machine
    assert not OpenAIHttpGenerator(HttpSettings("http://127.0.0.1:8080/v1")).leaves_machine


def test_not_a_url_is_refused() -> None:
    with pytest.raises(ModelUnavailable, match="is not an http\\(s\\) URL"):
        OpenAIHttpGenerator(HttpSettings("localhost:8080"))


def test_unreachable_server_names_the_fix() -> None:
    port = _free_port()  # nothing listens there
    gen = OpenAIHttpGenerator(HttpSettings(f"http://127.0.0.1:{port}/v1", connect_timeout=2))
    with pytest.raises(ModelUnavailable) as info:
        gen.complete([Message("user", "hi")])
    message = str(info.value)
    assert message.startswith(f"Cannot reach the LLM server at http://127.0.0.1:{port}/v1")
    assert "start the server, or change the backend URL in Settings" in message
    with pytest.raises(ModelUnavailable):
        gen.list_models()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server")
    port = _free_port()
    # A file, not a pipe: llama.cpp logs a lot, and a full pipe would block the server.
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w+")
    gguf = resolve_model("llm").path
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--model_alias",
            "smollm2",
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
                    err = log.read()
                    raise RuntimeError(f"llama_cpp.server did not start: {err[-2000:]}") from None
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.mark.model
def test_completion_against_a_real_server(server: str) -> None:
    gen = OpenAIHttpGenerator(HttpSettings(server, model="smollm2"))
    assert "smollm2" in gen.list_models()
    completion = gen.complete(
        [Message("user", "Say hello in one short sentence.")],
        settings=GenerationSettings(max_tokens=24),
    )
    assert completion.text.strip()
    assert completion.tokens_out > 0 and completion.tokens_in > 0
    assert completion.backend == f"openai-compatible {server}"


@pytest.mark.model
def test_schema_reaches_the_server_and_output_parses(server: str) -> None:
    gen = OpenAIHttpGenerator(HttpSettings(server, model="smollm2"))
    schema = {
        "type": "object",
        "properties": {"pairs": {"type": "array", "items": {"type": "string"}}},
        "required": ["pairs"],
    }
    result = complete_structured(
        gen,
        [Message("user", "List two fruits as JSON.")],
        shape=object_with_array("pairs"),
        schema=schema,
        settings=GenerationSettings(max_tokens=64),
    )
    assert result.status == "ok"
    json.loads(result.completions[-1].text)


@pytest.mark.model
def test_stop_closes_the_stream_early(server: str) -> None:
    gen = OpenAIHttpGenerator(HttpSettings(server, model="smollm2"))
    completion = gen.complete(
        [Message("user", "Write a long story about a lighthouse keeper.")],
        settings=GenerationSettings(max_tokens=1500),
        stop=StopAfter(6),
    )
    assert completion.finish_reason == "stopped"
    assert 0 < completion.tokens_out <= 6
