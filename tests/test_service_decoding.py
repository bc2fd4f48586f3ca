"""Bodies are UTF-8, strictly: anything else is a 400 with the usual JSON error, on every
route, before any handler sees it.

Before: ``json.loads(bytes)`` took UTF-16 and UTF-32 bodies, and surrogates written as
bytes (``ED A0 80``) became lone surrogates in the parsed text; ``/v1/capture`` then
failed writing them (a 500 with a traceback in the log) and ``/v1/recall``, echoing the
query, failed writing its answer (uvicorn's plain-text 500).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.resources import sample_vault_source
from desktop.service.app import parse_body
from desktop.service.errors import BadRequest
from desktop.service.server import EndpointHandle, start_endpoint
from inference.embedder import Embedder
from inference.runtime import Runtime
from tests.fakes import ScriptedGenerator
from tests.service_util import TOKEN, call, error_message


class StrictEmbedder(Embedder):
    """Fails as a real tokenizer does on text that is not valid Unicode."""

    dimension = 4
    name = "strict-fake"

    def embed(self, texts):  # type: ignore[no-untyped-def]
        for text in texts:
            text.encode("utf-8")
        return np.ones((len(texts), 4), dtype=np.float32) / 2


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EndpointHandle]:
    vault = tmp_path_factory.mktemp("decoding") / "vault"
    shutil.copytree(sample_vault_source(), vault)
    runtime = Runtime(
        make_generator=lambda: ScriptedGenerator(["x"] * 10), make_embedder=StrictEmbedder
    )
    runtime.start()
    runtime.wait_ready(timeout=30)
    handle = start_endpoint(
        runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False, guard=False
    )
    yield handle
    handle.stop()
    runtime.close()


#: Each route with a body it accepts, built around one text.
ROUTES = {
    "/v1/embeddings": lambda text: {"input": text},
    "/api/embed": lambda text: {"input": text},
    "/v1/capture": lambda text: {"text": text, "session_id": "s1", "role": "user"},
    "/v1/recall": lambda text: {"query": text},
}


def as_bytes(path: str, text: str) -> bytes:
    return json.dumps(ROUTES[path](text), ensure_ascii=False).encode("utf-8")


def with_raw_surrogate(path: str) -> bytes:
    return as_bytes(path, "a MARK b").replace(b"MARK", b"\xed\xa0\x80")


@pytest.mark.parametrize("path", list(ROUTES))
def test_a_surrogate_written_as_bytes_is_400(endpoint: EndpointHandle, path: str) -> None:
    status, body = call(endpoint.port, "POST", path, raw=with_raw_surrogate(path))
    assert status == 400, body
    assert error_message(body).startswith(
        "The body holds a UTF-16 surrogate encoded as bytes (ed a0 80 at byte "
    )
    if not path.startswith("/api/"):
        assert body["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("path", list(ROUTES))
@pytest.mark.parametrize(
    ("encoding", "message"),
    [
        (
            "utf-16",
            "The body is UTF-16 (it starts with a byte-order mark): send the JSON as UTF-8.",
        ),
        ("utf-16-le", "The body looks like UTF-16 or UTF-32: send the JSON as UTF-8."),
        ("utf-32-be", "The body looks like UTF-16 or UTF-32: send the JSON as UTF-8."),
        ("latin-1", "The body is not valid UTF-8 (byte 0xe9 at byte "),
    ],
)
def test_a_body_not_in_utf8_is_400(
    endpoint: EndpointHandle, path: str, encoding: str, message: str
) -> None:
    raw = json.dumps(ROUTES[path]("café au lait"), ensure_ascii=False).encode(encoding)
    status, body = call(endpoint.port, "POST", path, raw=raw)
    assert status == 400, body
    assert error_message(body).startswith(message)


@pytest.mark.parametrize("path", list(ROUTES))
def test_a_lone_surrogate_escape_is_400_on_every_route(endpoint: EndpointHandle, path: str) -> None:
    """The decision for ``"\\ud800"`` after parsing: refused (400), not replaced — what
    the client meant is unknown, and nothing is stored or embedded in its place."""
    raw = as_bytes(path, "a MARK b").replace(b"MARK", b"\\ud800")
    status, body = call(endpoint.port, "POST", path, raw=raw)
    assert status == 400
    assert error_message(body).startswith("The body holds a lone UTF-16 surrogate escape")


def test_utf8_with_a_byte_order_mark_and_real_pairs_are_fine(endpoint: EndpointHandle) -> None:
    raw = b"\xef\xbb\xbf" + as_bytes("/v1/embeddings", "smile \U0001f600 caf\u00e9")
    status, body = call(endpoint.port, "POST", "/v1/embeddings", raw=raw)
    assert status == 200 and len(body["data"]) == 1
    escaped = b'{"input": "smile \\ud83d\\ude00"}'
    assert call(endpoint.port, "POST", "/v1/embeddings", raw=escaped)[0] == 200


def test_an_answer_that_cannot_be_utf8_is_a_json_500(endpoint: EndpointHandle) -> None:
    endpoint.register_route("/v1/test-surrogate", lambda body: {"echo": "a \ud800 b"})
    status, body = call(endpoint.port, "POST", "/v1/test-surrogate", {})
    assert status == 500
    assert error_message(body).startswith("Internal error (UnicodeEncodeError)")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=32).map(lambda t: json.dumps(t).encode()))
def test_parse_body_refuses_or_returns_text_that_is_utf8(raw: bytes) -> None:
    """Whatever the bytes, a BadRequest or a value whose every string is valid Unicode."""
    try:
        value: Any = parse_body(b'{"k": ' + raw + b"}")
    except BadRequest:
        return
    json.dumps(value, ensure_ascii=False).encode("utf-8")
