"""The HTTP-free handlers of POST /v1/capture and /v1/recall."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from desktop.flows.memory import consolidate
from desktop.flows.memory.batches import RawStore
from desktop.flows.memory.errors import MemoryError_
from desktop.service.memory_route import MemoryEndpoint
from tests.fakes import WordEmbedder
from tests.memory_helpers import RoutingGenerator


def _endpoint(vault: Path | None) -> MemoryEndpoint:
    embedder = WordEmbedder()
    return MemoryEndpoint(vault, lambda: embedder)


def test_capture_then_recall_through_the_handlers(tmp_path: Path) -> None:
    ep = _endpoint(tmp_path)
    out = ep.capture(
        {
            "role": "user",
            "text": "The Helios report is due on 19 December. "
            "Key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "session_id": "abc",
            "timestamp": "2026-11-30T10:00:00Z",
        }
    )
    assert out["status"] == "captured" and out["line_ids"] == ["2026-11-30#L1"]
    assert out["secrets_masked"] == 1 and out["closed_batch"] is None
    out = ep.capture(
        {
            "role": "assistant",
            "text": "Noted.",
            "session_id": "abc",
            "timestamp": 1796032860,
            "end_session": True,
        }
    )
    assert out["closed_batch"] == "2026-11-30"
    assert consolidate(tmp_path, RoutingGenerator()).status == "ok"
    got = ep.recall({"query": "Helios report due", "session_id": "abc", "cwd": "/tmp"})
    assert got["facts"][0]["citations"] == ["2026-11-30#L1"]
    assert (
        "[Helios] The Helios report is due on 19 December. (2026-12-19) [2026-11-30#L1]"
        in (got["additionalContext"])
    )
    unrelated = ep.recall({"query": "zebra xylophone", "max_chars": 200})
    assert unrelated["additionalContext"] == ""


def test_subagent_turn_is_not_kept(tmp_path: Path) -> None:
    out = _endpoint(tmp_path).capture(
        {"role": "user", "text": "hello there", "session_id": "s", "context": "subagent"}
    )
    assert out["status"] == "skipped"
    assert RawStore(tmp_path).batch_ids() == []


@pytest.mark.parametrize(
    ("route", "body", "message"),
    [
        (
            "capture",
            {"role": "user", "text": "x", "session_id": "s", "who": 1},
            "Unknown field(s) who — accepted: context, end_session, role, session_id, text,"
            " timestamp.",
        ),
        (
            "capture",
            {"role": "bot", "text": "x", "session_id": "s"},
            "role must be 'user' or 'assistant', not 'bot'.",
        ),
        (
            "capture",
            {"role": "user", "text": "x", "session_id": "s", "timestamp": "yesterday"},
            "timestamp 'yesterday' is not ISO 8601 (like 2026-11-30T10:32:05Z).",
        ),
        (
            "capture",
            {"role": "user", "text": "x", "session_id": "s", "end_session": "yes"},
            "end_session must be true or false.",
        ),
        (
            "capture",
            {"role": "user", "session_id": "s"},
            "text must be a string (the turn's words).",
        ),
        ("recall", {"query": 3}, "query must be a string (what to recall)."),
        (
            "recall",
            {"query": "x", "max_chars": 0},
            "max_chars must be a whole number from 1 to 8000, not 0.",
        ),
        ("recall", {"query": "x", "k": "5"}, "k must be a whole number from 1 to 50, not '5'."),
    ],
)
def test_bad_payloads_name_the_field(
    tmp_path: Path, route: str, body: dict[str, Any], message: str
) -> None:
    with pytest.raises(MemoryError_) as err:
        getattr(_endpoint(tmp_path), route)(body)
    assert str(err.value) == message


def test_no_vault_is_a_clear_error() -> None:
    with pytest.raises(
        MemoryError_, match="serves no vault — start it with `antinomy serve --vault DIR`"
    ):
        _endpoint(None).capture({"role": "user", "text": "x", "session_id": "s"})
