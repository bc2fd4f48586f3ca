"""Citations Obsidian can open: each fact cites a block of the conversation's own note."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from desktop.flows.memory import capture_turn, close_open_batch, consolidate
from desktop.flows.memory.pages import read_pages
from tests.memory_helpers import T0, RoutingGenerator, small_batch

NOTE = "Antinomy/Conversations/2026-11-30.md"


def test_facts_cite_blocks_of_the_conversation_note(tmp_path: Path) -> None:
    small_batch(tmp_path)
    report = consolidate(tmp_path, RoutingGenerator())
    assert report.status == "ok" and report.accepted
    note = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert note.startswith("---\ntype: conversation\nbatch: 2026-11-30\n")
    assert "**You** (10:00): We decided to fly to Lisbon on 12 December with Ana. ^L1" in note
    assert "**Assistant** (10:00): Great, Lisbon on December 12 it is." in note
    blocks = set(re.findall(r" \^(L\d+)$", note, flags=re.M))
    assert blocks == {"L1", "L2", "L3", "L4"}
    pages = read_pages(tmp_path, "Antinomy/Subjects")
    text = "\n".join(p.text for p in pages)
    links = re.findall(r"\[\[([^\]|]+)\|([^\]]+)\]\]", text)
    assert links, text
    for target, label in links:
        path, _, block = target.partition("#^")
        assert (tmp_path / f"{path}.md").is_file() and block in blocks
        assert label == f"2026-11-30#{block}"
    # The page reads back the same citations.
    cited = {c for p in pages for f in p.facts for c in f.citations}
    assert cited == {"2026-11-30#L1", "2026-11-30#L3", "2026-11-30#L4"}
    assert ".antinomy/raw" not in text


def test_a_withdrawn_line_leaves_the_note_it_is_shown_in(tmp_path: Path) -> None:
    capture_turn(tmp_path, role="user", text="My locker code is 4417.", session_id="s", ts=T0)
    close_open_batch(tmp_path)
    consolidate(tmp_path, RoutingGenerator())
    assert "My locker code is 4417. ^L1" in (tmp_path / NOTE).read_text(encoding="utf-8")
    later = T0 + timedelta(minutes=1)
    result = capture_turn(
        tmp_path, role="user", text="Forget what I just said.", session_id="s", ts=later
    )
    assert result.status == "withdrawn" and result.withdrawn == ("2026-11-30#L1",)
    note = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert "4417" not in note and "^L1" not in note
    journal = list((tmp_path / ".antinomy" / "journal").rglob("*.json"))
    assert any("Withdraw 1 line" in p.read_text(encoding="utf-8") for p in journal)


def test_pages_written_with_raw_links_still_read_their_citations(tmp_path: Path) -> None:
    page = tmp_path / "Antinomy" / "Subjects" / "Lisbon trip.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\ntype: subject\n---\n# Lisbon trip\n\n## Plans\n\n"
        "- Flies on 12 December. — [2026-11-30#L12](../../.antinomy/raw/2026-11-30.tsv#L12)\n",
        encoding="utf-8",
    )
    (fact,) = read_pages(tmp_path, "Antinomy/Subjects")[0].facts
    assert fact.citations == ("2026-11-30#L12",) and fact.text == "Flies on 12 December."


def test_secrets_stay_masked_in_the_note(tmp_path: Path) -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    capture_turn(
        tmp_path, role="user", text="We fly to Lisbon on 12 December.", session_id="s", ts=T0
    )
    capture_turn(
        tmp_path, role="user", text=f"I use the token {key} for CI.", session_id="s", ts=T0
    )
    close_open_batch(tmp_path)
    consolidate(tmp_path, RoutingGenerator())
    note = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert key not in note and "I use the token" in note
