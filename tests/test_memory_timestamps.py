"""Capture times out of range are refused by name; an earlier day's turn never strands a batch."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.flows.memory import (
    capture_turn,
    consolidate,
    import_transcript,
    pending_batches,
)
from desktop.flows.memory.batches import RawStore
from desktop.flows.memory.capture import CLOCK_SLACK, check_time
from desktop.flows.memory.errors import CaptureInvalid, TranscriptInvalid
from desktop.flows.settings import MemoryPrefs, Settings, save_settings
from desktop.service.server import EndpointHandle, start_endpoint
from inference.runtime import Runtime
from tests.fakes import WordEmbedder
from tests.memory_helpers import RoutingGenerator
from tests.service_util import TOKEN, call

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RANGE = re.escape("is out of range: give a time from 1970-01-01 to now (")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[EndpointHandle, Path]]:
    save_settings(replace(Settings(), memory=MemoryPrefs(auto_consolidate=False)))
    runtime = Runtime(make_generator=RoutingGenerator, make_embedder=WordEmbedder)
    runtime.start()
    runtime.wait_ready(timeout=30)
    handle = start_endpoint(
        runtime=runtime, vault_root=tmp_path, port=0, token=TOKEN, publish=False, guard=False
    )
    yield handle, tmp_path
    handle.stop()
    runtime.close()


def test_check_time_refuses_out_of_range_and_clamps_small_drift() -> None:
    assert check_time(NOW - timedelta(days=400), now=NOW) == NOW - timedelta(days=400)
    assert check_time(NOW + CLOCK_SLACK, now=NOW) == NOW  # a clock a little ahead: now
    naive, paris = datetime(2026, 11, 30, 11, 0), datetime.fromisoformat("2026-11-30T13:30+02:00")
    assert check_time(naive, now=NOW) == datetime(2026, 11, 30, 11, 0, tzinfo=UTC)
    assert check_time(paris, now=NOW) == datetime(2026, 11, 30, 11, 30, tzinfo=UTC)
    with pytest.raises(CaptureInvalid) as err:
        check_time(NOW + CLOCK_SLACK + timedelta(seconds=1), now=NOW)
    assert str(err.value) == (
        "timestamp 2026-11-30T12:05:01+00:00 is out of range: give a time from 1970-01-01 to "
        "now (2026-11-30T12:00:00Z; at most 5 minutes ahead), or leave timestamp out to use "
        "the time of capture."
    )
    for odd in (
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime.fromisoformat("0001-01-01T00:00-14:00"),
        datetime.fromisoformat("0001-01-01T00:00+14:00"),  # before year 1 in UTC
        datetime(1969, 12, 31, 23, 59, tzinfo=UTC),
    ):
        with pytest.raises(CaptureInvalid, match="^timestamp .* " + RANGE):
            check_time(odd, now=NOW)


def test_a_turn_dated_9999_is_refused_and_todays_batch_consolidates(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    with pytest.raises(CaptureInvalid, match=r"^timestamp 9999-12-31T23:59:59"):
        capture_turn(
            tmp_path,
            role="user",
            text="Helios uses Postgres.",
            session_id="s",
            ts=datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        )
    assert RawStore(tmp_path).batch_ids() == []
    capture_turn(
        tmp_path, role="user", text="Ana prefers tea.", session_id="s", ts=now - timedelta(days=1)
    )
    capture_turn(tmp_path, role="user", text="Bo likes jazz.", session_id="s", ts=now)
    assert consolidate(tmp_path, RoutingGenerator()).status == "ok"  # yesterday's batch
    assert [(b.batch_id, b.closed) for b in pending_batches(tmp_path)] == [
        (now.date().isoformat(), False)
    ]


def test_a_turn_of_year_one_is_refused_not_hidden(tmp_path: Path) -> None:
    with pytest.raises(CaptureInvalid, match="^timestamp 0001-01-01T00:00:00-14:00 " + RANGE):
        capture_turn(
            tmp_path,
            role="user",
            text="Ana prefers tea.",
            session_id="s",
            ts=datetime.fromisoformat("0001-01-01T00:00-14:00"),
        )
    assert not list((tmp_path / ".antinomy").rglob("*.tsv"))


@pytest.mark.parametrize(
    "timestamp", ["9999-12-31T23:59:59Z", "0001-01-01T00:00-14:00", 253402300799, -1]
)
def test_capture_route_answers_400_naming_the_field(
    served: tuple[EndpointHandle, Path], timestamp: str | int
) -> None:
    handle, vault = served
    body = {"role": "user", "text": "Ana prefers tea.", "session_id": "s", "timestamp": timestamp}
    status, answer = call(handle.port, "POST", "/v1/capture", body)
    assert status == 400, answer
    assert answer["error"]["type"] == "invalid_request_error"
    assert re.match("^timestamp .* " + RANGE, answer["error"]["message"]), answer
    assert not list(vault.rglob("*.tsv"))


def _transcript(path: Path, stamps: list[str]) -> Path:
    rows = [
        {
            "type": "user",
            "sessionId": "s",
            "timestamp": stamp,
            "message": {"role": "user", "content": f"Fact number {i} is about Ana."},
        }
        for i, stamp in enumerate(stamps)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_transcript_with_an_odd_time_is_refused_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    file = _transcript(
        tmp_path / "t.jsonl", ["2026-11-28T10:00:00Z", "9999-01-01T00:00:00Z", "2026-11-28T10:01Z"]
    )
    with pytest.raises(TranscriptInvalid, match=re.escape(f"{file} line 2: timestamp 9999-01-01")):
        import_transcript(vault, file)
    assert RawStore(vault).batch_ids() == []
    assert main(["capture", "import", str(file), "--vault", str(vault)]) == 65
    err = capsys.readouterr().err
    assert "line 2: timestamp 9999-01-01T00:00:00+00:00 is out of range" in err
    assert err.rstrip().endswith("Nothing was imported.")


def test_an_older_transcript_imported_after_todays_turns_is_consolidated(tmp_path: Path) -> None:
    """Its batch (an earlier day, sorting before today's) used to stay open for good."""
    now = datetime.now(UTC)
    capture_turn(tmp_path, role="user", text="Bo likes jazz.", session_id="s", ts=now)
    days_ago = (now - timedelta(days=3)).strftime("%Y-%m-%dT10:00:00Z")
    import_transcript(tmp_path, _transcript(tmp_path.parent / "old.jsonl", [days_ago]))
    capture_turn(tmp_path, role="user", text="Cy hates rain.", session_id="s", ts=now)
    store = RawStore(tmp_path)
    assert [b for b in store.batch_ids() if not store.is_closed(b)] == [
        f"{now.date().isoformat()}.2"
    ]
    assert consolidate(tmp_path, RoutingGenerator(), force=True).status == "ok"
    assert pending_batches(tmp_path) == []
