"""The memory subcommands, in-process, on paths that need no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.cli.memory_cmd import CONSOLIDATE_EXITS
from desktop.flows.memory import consolidate
from desktop.flows.memory.consolidate import consolidation_lock
from tests.memory_helpers import DATA, RoutingGenerator, route, turns


def test_exit_codes_are_distinct() -> None:
    assert CONSOLIDATE_EXITS == {
        "ok": 0,
        "nothing": 3,
        "empty": 4,
        "json_failure": 65,
        "already_running": 75,
        "stopped": 130,
    }


def test_capture_import_then_pending(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["capture", "import", str(DATA / "claude_transcript.jsonl"), "--vault", str(tmp_path)]
    )
    assert code == 0
    assert "imported 6 turns" in capsys.readouterr().out
    assert main(["memory", "pending", "--vault", str(tmp_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["batch_id"] == "2026-11-28" and rows[0]["pending_lines"] == 6


def test_capture_import_of_a_bad_file_is_a_data_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("nope\n")
    assert main(["capture", "import", str(bad), "--vault", str(tmp_path)]) == 65
    assert "has no user or assistant messages" in capsys.readouterr().err


def test_consolidate_nothing_and_already_running_need_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["consolidate", "--vault", str(tmp_path)]) == 3
    assert "status: nothing" in capsys.readouterr().out
    with consolidation_lock(tmp_path):
        assert main(["consolidate", "--vault", str(tmp_path), "--json"]) == 75
    assert json.loads(capsys.readouterr().out)["status"] == "already_running"


def test_rejected_list_and_requeue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turns(tmp_path, ("user", "we sold four for cash"))  # no name to file it under
    consolidate(tmp_path, RoutingGenerator(routes={"sold": route("new", new_subject="it")}))
    assert main(["memory", "rejected", "--vault", str(tmp_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["reason"], r["state"]) for r in rows] == [("no_subject", "rejected")]
    assert (
        main(["memory", "rejected", "--vault", str(tmp_path), "--requeue", rows[0]["fragment_id"]])
        == 0
    )
    assert "re-queued" in capsys.readouterr().out
    assert main(["memory", "rejected", "--vault", str(tmp_path)]) == 0
    assert "[requeued] no_subject" in capsys.readouterr().out
    assert main(["memory", "rejected", "--vault", str(tmp_path), "--requeue", "r-nope"]) == 1
    assert "No rejected fragment 'r-nope'" in capsys.readouterr().err
