"""POST /v1/capture and /v1/recall through the real endpoint (uvicorn on loopback).

The runtime holds a scripted generator and a word-hash embedder, so no model
is loaded; the HTTP stack, security checks and route registration are real.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.flows.memory import consolidate, last_report
from desktop.flows.settings import MemoryPrefs, Settings, save_settings
from desktop.service.server import EndpointHandle, start_endpoint
from inference.runtime import Runtime
from tests.fakes import WordEmbedder
from tests.memory_helpers import RoutingGenerator
from tests.service_util import TOKEN, call


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[EndpointHandle, Path]]:
    runtime = Runtime(make_generator=RoutingGenerator, make_embedder=WordEmbedder)
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
            "Token: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "session_id": "sess-1",
            "timestamp": "2026-11-30T10:00:00Z",
            "end_session": True,
        },
    )
    assert status == 200, body
    assert body["status"] == "captured" and body["line_ids"] == ["2026-11-30#L1"]
    assert body["secrets_masked"] == 1 and body["closed_batch"] == "2026-11-30"
    # The batch closed at session end: the endpoint consolidates it in the background.
    deadline = time.monotonic() + 30
    while (last_report(vault) or {}).get("status") != "ok":
        assert time.monotonic() < deadline, last_report(vault)
        time.sleep(0.05)
    assert consolidate(vault, RoutingGenerator()).status == "nothing"
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
    assert status == 400  # a bad field is the client's to fix, like any bad body
    assert body["error"]["message"] == "role must be 'user' or 'assistant', not 'robot'."
    status, body = call(handle.port, "POST", "/v1/recall", {"query": "x"}, token=None)
    assert status == 401


def test_userpromptsubmit_hook_adds_recalled_memory(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    # This test consolidates by itself: the endpoint's automatic run is switched off.
    save_settings(replace(Settings(), memory=MemoryPrefs(auto_consolidate=False)))
    runtime = Runtime(make_generator=RoutingGenerator, make_embedder=WordEmbedder)
    runtime.start()
    runtime.wait_ready(timeout=30)
    handle = start_endpoint(runtime=runtime, vault_root=tmp_path, port=0, publish=False)
    try:
        # The hook reads the token the endpoint created in ANTINOMY_HOME (inherited).
        from desktop.flows.memory import capture_turn, close_open_batch

        capture_turn(
            tmp_path, role="user", text="The Helios report is due on 19 December.", session_id="s"
        )
        close_open_batch(tmp_path)
        assert consolidate(tmp_path, RoutingGenerator()).status == "ok"
        hook_input = {
            "session_id": "s",
            "prompt": "When is the Helios report due again?",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(tmp_path),
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "desktop.service.hook",
                "userpromptsubmit",
                "--port",
                str(handle.port),
                "--budget-ms",
                "10000",
            ],
            input=json.dumps(hook_input),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        context = out["hookSpecificOutput"]["additionalContext"]
        assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert "Helios report is due on 19 December" in context
    finally:
        handle.stop()
        runtime.close()
