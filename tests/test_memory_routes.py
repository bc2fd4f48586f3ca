"""POST /v1/capture and /v1/recall through the real endpoint (uvicorn on loopback).

The runtime holds a scripted generator and a word-hash embedder, so no model
is loaded; the HTTP stack, security checks and route registration are real.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.memory import consolidate
from desktop.service.server import EndpointHandle, start_endpoint
from inference.runtime import Runtime
from tests.fakes import ScriptedGenerator
from tests.memory_helpers import answer, fact
from tests.service_util import TOKEN, call
from tests.test_memory_recall import WordEmbedder


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[EndpointHandle, Path]]:
    runtime = Runtime(
        make_generator=lambda: ScriptedGenerator(answers=["x", '{"ok": true}']),
        make_embedder=WordEmbedder,
    )
    runtime.start()
    runtime.wait_ready(timeout=30)
    handle = start_endpoint(
        runtime=runtime, vault_root=tmp_path, port=0, token=TOKEN, publish=False, guard=False
    )
    yield handle, tmp_path
    handle.stop()
    runtime.close()


def test_capture_and_recall_over_http(served: tuple[EndpointHandle, Path]) -> None:
    handle, vault = served
    status, body = call(
        handle.port,
        "POST",
        "/v1/capture",
        {
            "role": "user",
            "text": "The Helios report is due on 19 December. "
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "session_id": "sess-1",
            "timestamp": "2026-11-30T10:00:00Z",
            "end_session": True,
        },
    )
    assert status == 200, body
    assert body["status"] == "captured" and body["line_ids"] == ["2026-11-30#L1"]
    assert body["secrets_masked"] == 1 and body["closed_batch"] == "2026-11-30"
    gen = ScriptedGenerator(
        answers=[answer(fact("Helios", "Helios report is due on 19 December", [1]))]
    )
    assert consolidate(vault, gen).status == "ok"
    status, body = call(
        handle.port,
        "POST",
        "/v1/recall",
        {"query": "when is the Helios report due?", "session_id": "sess-1", "cwd": "/tmp"},
    )
    assert status == 200, body
    assert body["facts"][0]["citations"] == ["2026-11-30#L1"]
    assert "Helios report is due on 19 December" in body["additionalContext"]


def test_bad_payload_and_missing_token_are_json_errors(served: tuple[EndpointHandle, Path]) -> None:
    handle, _ = served
    status, body = call(
        handle.port, "POST", "/v1/capture", {"role": "robot", "text": "x", "session_id": "s"}
    )
    assert status == 422
    assert "role must be 'user' or 'assistant', not 'robot'." in str(body)
    status, body = call(handle.port, "POST", "/v1/recall", {"query": "x"}, token=None)
    assert status == 401
