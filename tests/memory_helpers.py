"""Shared helpers of the memory tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.flows.memory import capture_turn, close_open_batch

DATA = Path(__file__).parent / "data" / "memory"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)

#: Lines 1–4 of the batch "2026-11-30" made by :func:`small_batch`.
SMALL_TURNS = [
    ("user", "We decided to fly to Lisbon on 12 December with Ana."),
    ("assistant", "Great, Lisbon on December 12 it is. I suggest a hotel in Alfama."),
    ("user", "I prefer window seats on long flights."),
    ("user", "The Helios report is due next Friday."),
]


def small_batch(vault: Path) -> None:
    for role, text in SMALL_TURNS:
        capture_turn(vault, role=role, text=text, session_id="s1", ts=T0)
    close_open_batch(vault)


def fact(subject: str, text: str, cites: list[int], **kw: Any) -> dict[str, Any]:
    return {
        "subject": subject,
        "section": kw.get("section", "Notes"),
        "text": text,
        "citations": cites,
        "kind": kw.get("kind", "fact"),
        "date": kw.get("date", ""),
    }


def answer(*facts: dict[str, Any], new_subjects: list[dict[str, Any]] | None = None) -> str:
    return json.dumps({"facts": list(facts), "new_subjects": new_subjects or []})


def all_files(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file():
            yield path


def page_fact_lines(vault: Path) -> list[str]:
    out = []
    for page in sorted((vault / "Antinomy" / "Subjects").glob("*.md")):
        out += [line for line in page.read_text().splitlines() if line.startswith("- ")]
    return out
