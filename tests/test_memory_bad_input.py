"""Bad input to consolidation: the report says what happened to each line; nothing is lost."""

from __future__ import annotations

import json
import time
from pathlib import Path

from desktop.flows.memory import (
    capture_turn,
    consolidate,
    import_transcript,
    pending_batches,
    subject_pages,
)
from desktop.flows.memory.batches import Batch, RawLine, RawStore
from desktop.flows.memory.consolidate import MemorySettings
from tests.memory_helpers import T0, RoutingGenerator, all_files, page_fact_lines, turns


def test_a_transcript_of_tool_output_only_leaves_nothing_to_consolidate(tmp_path: Path) -> None:
    records = [
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash"}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}},
        {"type": "user", "message": {"content": "<local-command-stdout>x</local-command-stdout>"}},
    ]
    file = tmp_path / "t.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = import_transcript(tmp_path, file)
    assert (report.turns_captured, report.turns_skipped) == (0, 3)
    assert consolidate(tmp_path, RoutingGenerator()).status == "nothing"


def test_tool_output_pasted_as_user_text_is_reported_per_line(tmp_path: Path) -> None:
    turns(
        tmp_path,
        ("user", 'Traceback (most recent call last):\n  File "x.py", line 3, in <module>'),
        ("user", "$ pip install -e .[test]"),
        ("user", '{"status": 500, "error": "boom"}'),
    )
    gen = RoutingGenerator()
    report = consolidate(tmp_path, gen)
    assert report.status == "empty" and gen.calls == []  # the model was never asked
    assert report.line_counts == {"tool_output": 4}
    assert pending_batches(tmp_path) == []


def test_empty_turns_are_skipped_with_a_reason(tmp_path: Path) -> None:
    for text in ("", "   ", "\n\n\t\n"):
        result = capture_turn(tmp_path, role="user", text=text, session_id="s", ts=T0)
        assert (result.status, result.reason) == ("skipped", "nothing but blank text")
    assert RawStore(tmp_path).batch_ids() == []
    assert consolidate(tmp_path, RoutingGenerator(), force=True).status == "nothing"


def test_secrets_in_every_line_reach_no_page(tmp_path: Path) -> None:
    turns(
        tmp_path,
        ("user", "My OpenAI key is sk-proj-abcdefghijklmnopqrstuvwxyz012345"),
        ("user", "The deploy token is ghp_8kT3mV6xQ1zR4wY7nB2cF5hJ9pL0sD3gA6eU"),
        ("user", "Use https://admin:hunter2hunter2@db.example.com/prod for the database"),
    )
    report = consolidate(tmp_path, RoutingGenerator())
    assert report.status == "empty" and report.line_counts == {"secret": 3}
    disk = "\n".join(p.read_text(errors="replace") for p in all_files(tmp_path))
    for secret in ("sk-proj-abcdef", "ghp_8kT3mV6", "hunter2hunter2"):
        assert secret not in disk
    assert subject_pages(tmp_path) == []


def test_a_withdrawn_earlier_line_is_consumed_unread(tmp_path: Path) -> None:
    turns(
        tmp_path,
        ("user", "My salary at Helios is 50,000 euros a year."),
        ("assistant", "Noted."),
        ("user", "Forget what I just said."),
        ("user", "The Helios offsite is in Porto on 12 March."),
    )
    gen = RoutingGenerator()
    report = consolidate(tmp_path, gen)
    assert gen.routed() == ["The Helios offsite is in Porto on 12 March."]
    outcomes = [(o.line_id[-2:], o.outcome) for o in report.lines]
    assert sorted(outcomes) == [
        ("L1", "withdrawn"),
        ("L2", "withdrawn"),
        ("L3", "withdrawn"),
        ("L4", "candidate"),
    ]
    assert report.lines_consumed == 4 and pending_batches(tmp_path) == []
    assert "salary" not in "\n".join(page_fact_lines(tmp_path))


def test_mixed_languages_are_extracted_and_reported(tmp_path: Path) -> None:
    turns(
        tmp_path,
        ("user", "Je préfère le thé vert le matin."),
        ("user", "Domani ho il dentista alle nove."),
        ("user", "Qu'est-ce que tu en penses ?"),
        ("user", "日本語のメモです。"),
    )
    report = consolidate(tmp_path, RoutingGenerator())
    assert report.line_counts == {"candidate": 2, "question": 1, "fragment": 1}
    assert {f.text for f in report.accepted} == {
        "Je préfère le thé vert le matin.",
        "Domani ho il dentista alle nove.",
    }
    fragment = next(o for o in report.lines if o.outcome == "fragment")
    assert fragment.line_id == "2026-11-30#L4"


def test_a_ten_thousand_line_session_is_consolidated_in_budgeted_runs(tmp_path: Path) -> None:
    store = RawStore(tmp_path)
    batches = 25
    with store.locked():
        for b in range(batches):
            batch_id = "2026-11-30" if b == 0 else f"2026-11-30.{b + 1}"
            lines = []
            for n in range(1, 401):
                i = b * 400 + n
                text = (
                    f"Project Orion{i} ships on {1 + i % 28} December."
                    if i % 100 == 0
                    else ("How do I fix this?" if i % 2 else "ok")
                )
                role = "user" if i % 3 else "assistant"
                if i % 100 == 0:
                    role = "user"
                lines.append(RawLine(batch_id, n, "2026-11-30T10:00:00Z", role, "s", text))  # type: ignore[arg-type]
            store.write(Batch(batch_id, True, "size limit", tuple(lines)))
            store.close(batch_id, "size limit")
    settings = MemorySettings(max_lines_per_step=400, max_candidates_per_run=40)
    started = time.perf_counter()
    reports = []
    for _ in range(5):
        report = consolidate(tmp_path, RoutingGenerator(), settings=settings)
        reports.append(report)
        if report.status == "nothing":
            break
    seconds = time.perf_counter() - started
    assert [r.status for r in reports] == ["ok", "ok", "ok", "nothing"]
    assert "budget of 40 candidate facts" in reports[0].message
    assert reports[0].lines_pending > 0
    assert sum(r.lines_consumed for r in reports) == 10_000
    assert sum(len(r.accepted) for r in reports) == 100
    assert sum(len(r.lines) for r in reports) == 10_000  # one outcome per line
    assert pending_batches(tmp_path) == []
    assert len(page_fact_lines(tmp_path)) == 100
    assert seconds < 120, seconds
