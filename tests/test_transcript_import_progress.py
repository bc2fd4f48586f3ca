"""The transcript import's progress and its message for files it cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.memory import import_transcript
from desktop.flows.memory.errors import TranscriptInvalid

DATA = Path(__file__).resolve().parent / "data" / "memory"


def test_import_reports_each_turn_it_captures(tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    report = import_transcript(
        tmp_path, DATA / "claude_transcript.jsonl", progress=lambda *a: seen.append(a)
    )
    assert report.turns_captured == 6
    assert [(d, t) for d, t, _ in seen] == [(i, 6) for i in range(7)]
    assert seen[0][2] == "capturing turn 1 of 6 from claude_transcript.jsonl"
    assert seen[-1][2] == "captured 6 turns from claude_transcript.jsonl"


def test_a_folder_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(TranscriptInvalid) as err:
        import_transcript(tmp_path, tmp_path)
    assert str(err.value) == (
        f"{tmp_path} is a folder — give one transcript file (.jsonl) inside it."
    )
    assert not (tmp_path / ".antinomy").exists()
