"""Consolidation with the scripted engine: citation control, json_failure, requeue, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.flows.memory import (
    consolidate,
    last_report,
    pending_batches,
    rejected_fragments,
    requeue_fragment,
    subject_pages,
)
from desktop.flows.memory.consolidate import MemorySettings
from desktop.flows.memory.errors import UnknownFragment
from inference.base import StopFlag
from tests.fakes import ScriptedGenerator
from tests.memory_helpers import answer, fact, page_fact_lines, small_batch


def test_each_rejection_reason_is_recorded(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = ScriptedGenerator(
        answers=[
            answer(
                fact(
                    "Lisbon trip",
                    "Fly to Lisbon on 12 December with Ana",
                    [1],
                    kind="event",
                    date="2026-12-12",
                ),
                fact("Lisbon trip", "Hotel in Alfama", [2]),  # assistant only
                fact("Lisbon trip", "Flight via Madrid", [9]),  # no such line
                fact("Lisbon trip", "Bought a new camera for the beach", [1]),  # unsupported
                fact("Travel", "Prefers window seats on long flights", [3], date="2026-12-24"),
                fact("", "no subject", [1]),
                fact("Travel", "nothing cited", []),
                fact("Lisbon trip", "Fly to Lisbon on 14 December with Ana", [1]),  # changed day
                fact("Helios", "Is the Helios report due next Friday?", [4]),
                fact("points,", "Prefers window seats", [3]),
            )
        ]
    )
    report = consolidate(tmp_path, gen, force=False)
    assert report.status == "ok"
    reasons = {f.reason: f for f in report.rejected if "14 December" not in f.text}
    assert [f.detail for f in report.rejected if "names" in f.detail] == [
        "names or numbers not in the cited lines: 14"
    ]
    assert "question" in reasons and reasons["question"].detail == "a question is not a fact"
    assert "Antinomy/Subjects/points.md" in report.pages
    assert set(reasons) - {"question"} == {
        "assistant_only",
        "missing_line",
        "unsupported_content",
        "malformed",
        "no_citation",
    }
    assert reasons["missing_line"].detail == "cited line(s) 9 not in the input"
    assert reasons["assistant_only"].line_ids == ("2026-11-30#L2",)
    assert (
        "content words are in the cited lines (needs 60%)" in reasons["unsupported_content"].detail
    )
    accepted = {f.text: f for f in report.accepted}
    assert accepted["Fly to Lisbon on 12 December with Ana"].date == "2026-12-12"
    seats = accepted["Prefers window seats on long flights"]
    assert seats.date is None and seats.date_stripped == "2026-12-24"
    lines = page_fact_lines(tmp_path)
    assert len(lines) == 3
    assert not any("Alfama" in line or "camera" in line or "Madrid" in line for line in lines)
    lisbon = (tmp_path / "Antinomy/Subjects/Lisbon trip.md").read_text()
    assert "type: subject" in lisbon
    assert (
        "*(event: 2026-12-12)* — [2026-11-30#L1](../../.antinomy/raw/2026-11-30.tsv#L1)" in lisbon
    )
    log = (tmp_path / "Antinomy/Memory/Consolidation log.md").read_text()
    assert "rejected 7" in log and "date 2026-12-24 stripped" in log
    assert len(rejected_fragments(tmp_path)) == 7


def test_relative_dates_are_resolved_against_the_spoken_day(tmp_path: Path) -> None:
    small_batch(tmp_path)  # spoken on Monday 2026-11-30: "next Friday"
    gen = ScriptedGenerator(
        answers=[
            answer(
                fact(
                    "Helios",
                    "Helios report is due next Friday",
                    [4],
                    kind="deadline",
                    date="2026-12-11",
                ),
            )
        ]
    )
    report = consolidate(tmp_path, gen)
    assert report.accepted[0].date == "2026-12-11"
    assert report.accepted[0].kind == "deadline"


def test_nothing_and_empty_statuses(tmp_path: Path) -> None:
    assert consolidate(tmp_path, ScriptedGenerator(answers=[])).status == "nothing"
    small_batch(tmp_path)
    report = consolidate(tmp_path, ScriptedGenerator(answers=[answer()]))
    assert report.status == "empty" and report.lines_consumed == 4
    assert pending_batches(tmp_path) == []
    assert consolidate(tmp_path, ScriptedGenerator(answers=[])).status == "nothing"
    assert last_report(tmp_path)["status"] == "nothing"  # type: ignore[index]


def test_open_batch_waits_unless_forced(tmp_path: Path) -> None:
    from desktop.flows.memory import capture_turn

    capture_turn(tmp_path, role="user", text="I like green tea.", session_id="s")
    assert consolidate(tmp_path, ScriptedGenerator(answers=[])).status == "nothing"
    gen = ScriptedGenerator(answers=[answer(fact("Tea", "Likes green tea", [1]))])
    assert consolidate(tmp_path, gen, force=True).status == "ok"


def test_json_failure_leaves_the_input_pending_and_keeps_the_raw_answer(tmp_path: Path) -> None:
    small_batch(tmp_path)
    gen = ScriptedGenerator(answers=["I think the user likes Lisbon.", "Sorry, no JSON."])
    report = consolidate(tmp_path, gen)
    assert report.status == "json_failure"
    assert report.extract == "I think the user likes Lisbon."
    assert "Sorry, no JSON." in Path(report.debug_path).read_text()
    assert len(gen.calls) == 2  # the shared policy's one stricter retry
    assert [b.pending_lines for b in pending_batches(tmp_path)] == [4]
    assert not (tmp_path / "Antinomy").exists()
    ok = ScriptedGenerator(answers=[answer(fact("Travel", "Prefers window seats", [3]))])
    assert consolidate(tmp_path, ok).status == "ok"
    assert pending_batches(tmp_path) == []


def test_requeue_reconsiders_a_rejected_fragment_once(tmp_path: Path) -> None:
    small_batch(tmp_path)
    first = ScriptedGenerator(
        answers=[answer(fact("Travel", "Window seats on flights, always booked in advance", [3]))]
    )
    report = consolidate(tmp_path, first)
    assert report.status == "empty"
    frag = report.rejected[0]
    assert frag.reason == "unsupported_content"
    assert rejected_fragments(tmp_path)[0][1] == "rejected"
    requeue_fragment(tmp_path, frag.fragment_id)
    assert rejected_fragments(tmp_path)[0][1] == "requeued"
    second = ScriptedGenerator(
        answers=[answer(fact("Travel", "Prefers window seats on long flights", [3]))]
    )
    report = consolidate(tmp_path, second)
    assert report.status == "ok"
    # The requeue presented the cited line with its neighbours (lines 1–4, renumbered 1–4).
    prompt = second.calls[0].messages[1].content
    assert "[3] user: I prefer window seats on long flights." in prompt
    assert rejected_fragments(tmp_path)[0][1] == "reconsidered"
    assert consolidate(tmp_path, ScriptedGenerator(answers=[])).status == "nothing"
    with pytest.raises(UnknownFragment, match="No rejected fragment 'r-0000' — list them"):
        requeue_fragment(tmp_path, "r-0000")


def test_facts_already_on_a_page_are_not_written_twice(tmp_path: Path) -> None:
    small_batch(tmp_path)
    a = answer(fact("Travel", "Prefers window seats on long flights", [3]))
    consolidate(tmp_path, ScriptedGenerator(answers=[a]))
    from desktop.flows.memory import capture_turn

    capture_turn(
        tmp_path, role="user", text="I prefer window seats on long flights.", session_id="s"
    )
    again = answer(fact("Travel", "Prefers window seats on long flights", [1]))
    report = consolidate(tmp_path, ScriptedGenerator(answers=[again]), force=True)
    assert report.status == "empty" and report.duplicates == 1
    assert len(page_fact_lines(tmp_path)) == 1


def test_existing_page_gets_facts_in_its_section_and_aliases(tmp_path: Path) -> None:
    page = tmp_path / "Antinomy" / "Subjects" / "Travel.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\ntype: subject\naliases: [Trips]\nsummary: How I travel\n---\n# Travel\n\n"
        "My own notes stay.\n\n## Preferences\n\n- Aisle on short hops — [2026-11-01#L3](x)\n\n"
        "## Other\n\ntext\n"
    )
    small_batch(tmp_path)
    gen = ScriptedGenerator(
        answers=[
            answer(
                fact("Trips", "Prefers window seats on long flights", [3], section="Preferences"),
                new_subjects=[{"name": "Travel", "aliases": ["Flights"]}],
            )
        ]
    )
    report = consolidate(tmp_path, gen)
    assert report.status == "ok" and report.pages == ("Antinomy/Subjects/Travel.md",)
    text = page.read_text()
    assert "aliases: [Trips, Flights]" in text
    assert "My own notes stay." in text
    body = text.split("## Preferences")[1].split("## Other")[0]
    assert body.index("Aisle") < body.index("window seats")
    # The prompt named the existing subject and its aliases.
    assert "- Travel: Trips" in gen.calls[0].messages[1].content
    assert [p.name for p in subject_pages(tmp_path)] == ["Travel"]


def test_large_batch_is_split_to_fit_the_context(tmp_path: Path) -> None:
    from desktop.flows.memory import capture_turn, close_open_batch

    for i in range(30):
        capture_turn(
            tmp_path, role="user", text=f"Note number {i}: " + "words " * 30, session_id="s"
        )
    close_open_batch(tmp_path)
    gen = ScriptedGenerator(answers=[answer()] * 10)
    gen.context_length = 1400
    report = consolidate(tmp_path, gen, settings=MemorySettings(max_output_tokens=400))
    assert report.steps == len(gen.calls) >= 3
    for call in gen.calls:
        prompt_tokens = sum(gen.count_tokens(m.content) for m in call.messages)
        assert prompt_tokens + 400 <= gen.context_length
    assert report.lines_consumed == 30 and pending_batches(tmp_path) == []


def test_withdrawn_lines_are_never_sent_to_the_model(tmp_path: Path) -> None:
    from desktop.flows.memory import capture_turn, close_open_batch

    capture_turn(tmp_path, role="user", text="I adore sailing.", session_id="s")
    capture_turn(tmp_path, role="user", text="My salary is secretly low.", session_id="s")
    capture_turn(tmp_path, role="user", text="Forget what I just said.", session_id="s")
    close_open_batch(tmp_path)
    gen = ScriptedGenerator(answers=[answer(fact("Hobbies", "Adores sailing", [1]))])
    report = consolidate(tmp_path, gen)
    prompt = gen.calls[0].messages[1].content
    assert "salary" not in prompt and "Forget" not in prompt and "withdrawn" not in prompt
    assert report.lines_consumed == 1 and pending_batches(tmp_path) == []


def test_stop_keeps_finished_steps_and_leaves_the_rest_pending(tmp_path: Path) -> None:
    from desktop.flows.memory import capture_turn, close_open_batch

    for i in range(6):
        capture_turn(tmp_path, role="user", text=f"I own {i} cats.", session_id="s")
    close_open_batch(tmp_path)
    stop = StopFlag()
    gen = ScriptedGenerator(answers=[answer(fact("Cats", "Owns 0 cats", [1])), answer()])
    report = consolidate(
        tmp_path,
        gen,
        stop=stop,
        settings=MemorySettings(max_lines_per_step=3),
        progress=lambda done, total, what: stop.set() if done == 1 else None,
    )
    assert report.status == "stopped" and report.steps == 1
    assert [b.pending_lines for b in pending_batches(tmp_path)] == [3]
    assert (
        json.loads((tmp_path / ".antinomy/memory/last-report.json").read_text())["status"]
        == "stopped"
    )
