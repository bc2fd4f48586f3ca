"""``POST /v1/guard/check`` over HTTP: verdicts, the cheap gate, bad input, not ready yet."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.guard import GuardSettings, save_guard_settings, set_project
from desktop.resources import sample_vault_source
from desktop.service.server import EndpointHandle, start_endpoint
from inference.runtime import Runtime
from tests.service_util import TOKEN, call

CHECK = "/v1/guard/check"
LEDGER = "Delete the SQLite ledger file now that billing writes to Postgres"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("guard-endpoint") / "vault"
    shutil.copytree(sample_vault_source(), root)
    return root


@pytest.fixture(scope="module")
def endpoint(runtime: Any, vault: Path) -> Iterator[EndpointHandle]:
    handle = start_endpoint(runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False)
    assert handle.guard is not None and handle.guard.ready.wait(60)
    yield handle
    handle.stop()


@pytest.fixture
def guard_on(vault: Path) -> Iterator[None]:
    # The endpoint's plumbing is tested here, not the judge's calibration
    # (tests/perf/calibrate_guard.py): a judge threshold clear of the shipped default's edge.
    save_guard_settings(vault, GuardSettings(enabled=True, judge_threshold=0.5))
    yield
    save_guard_settings(vault, GuardSettings(enabled=False, judge_threshold=0.5))


@pytest.mark.model
def test_off_by_default_embeds_nothing(endpoint: EndpointHandle) -> None:
    before = endpoint.batcher.stats.requests
    status, body = call(endpoint.port, "POST", CHECK, {"summary": LEDGER, "session_id": "a"})
    assert status == 200
    assert body["verdict"] == "off" and body["output"] is None and body["decision"] is None
    assert endpoint.batcher.stats.requests == before
    assert endpoint.guard_log.records()[-1].verdict == "off"


@pytest.mark.model
def test_on_for_the_vault_warns(endpoint: EndpointHandle, guard_on: None) -> None:
    status, body = call(
        endpoint.port, "POST", CHECK, {"summary": LEDGER, "session_id": "b", "tool_name": "Bash"}
    )
    assert status == 200 and body["verdict"] == "warn"
    assert body["decision"] == {
        "id": "ADR-0012",
        "title": "Billing ledger in SQLite",
        "path": "Decisions/ADR-0012 Billing ledger in SQLite.md",
    }
    assert body["score"] >= 0.5 and body["latency_ms"] > 0
    assert "ADR-0012" in body["output"]["hookSpecificOutput"]["additionalContext"]
    record = endpoint.guard_log.records()[-1]
    assert (record.verdict, record.tool, record.decision_id) == ("warn", "Bash", "ADR-0012")


@pytest.mark.model
def test_on_for_a_project_only(endpoint: EndpointHandle, vault: Path, tmp_path: Path) -> None:
    save_guard_settings(vault, GuardSettings(enabled=False, judge_threshold=0.5))
    set_project(tmp_path, enabled=True, mode="ask")
    body = {"summary": LEDGER, "session_id": "c", "cwd": str(tmp_path / "src")}
    status, answer = call(endpoint.port, "POST", CHECK, body)
    assert status == 200 and answer["verdict"] == "ask"
    assert answer["output"]["hookSpecificOutput"]["permissionDecision"] == "ask"
    elsewhere = {"summary": LEDGER, "session_id": "c2", "cwd": "/somewhere/else"}
    assert call(endpoint.port, "POST", CHECK, elsewhere)[1]["verdict"] == "off"


@pytest.mark.model
def test_short_summary_is_skipped(endpoint: EndpointHandle, guard_on: None) -> None:
    assert call(endpoint.port, "POST", CHECK, {"summary": "ls -la"})[1]["verdict"] == "skip"


@pytest.mark.model
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "'summary' is missing: send the text of the pending change."),
        ({"summary": LEDGER, "mode": "block"}, "mode='block' is unknown: use 'warn' or 'ask'."),
        ({"summary": LEDGER, "cwd": 3}, "'cwd' must be a string, not int."),
    ],
)
def test_bad_checks_are_400(endpoint: EndpointHandle, body: dict[str, Any], message: str) -> None:
    status, answer = call(endpoint.port, "POST", CHECK, body)
    assert status == 400 and answer["error"]["message"] == message


def test_not_ready_yet_is_503_and_logged(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), vault)
    save_guard_settings(vault, GuardSettings(enabled=True))
    runtime = Runtime()  # never started: the models are "still loading"
    handle = start_endpoint(runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False)
    try:
        status, body = call(handle.port, "POST", CHECK, {"summary": LEDGER})
        assert status == 503
        assert body["error"]["message"].startswith("The guard is still reading the vault's")
        assert handle.guard_log.records()[-1].verdict == "error"
        status, body = call(handle.port, "POST", "/v1/embeddings", {"input": "x"})
        assert status == 503 and body["error"]["message"] == "The embedder is still loading."
    finally:
        handle.stop()
