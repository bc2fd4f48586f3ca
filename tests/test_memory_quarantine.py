"""A statement the model cannot route is quarantined on its second failure; the rest moves on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.flows.memory import (
    consolidate,
    pending_batches,
    quarantined_fragments,
    rejected_fragments,
)
from desktop.flows.memory.quarantine import QUARANTINE_AFTER, REASON
from tests.memory_helpers import RoutingGenerator, page_fact_lines, small_batch

#: Line 4 of the small batch; every answer about it is unreadable.
STUCK = "The Helios report is due next Friday."
UNREADABLE = {"Helios report": "I am not sure where this goes, sorry."}


def test_the_second_failure_quarantines_the_statement_and_the_rest_is_consolidated(
    tmp_path: Path,
) -> None:
    small_batch(tmp_path)
    model = RoutingGenerator(routes=dict(UNREADABLE))
    first = consolidate(tmp_path, model)
    assert first.status == "json_failure" and first.lines_pending == 4
    assert "if the same statement fails again next run, it is quarantined" in first.message
    assert [b.pending_lines for b in pending_batches(tmp_path)] == [4]

    second = consolidate(tmp_path, model)
    assert second.status == "ok"
    assert second.lines_pending == 0 and pending_batches(tmp_path) == []
    assert "1 statement(s) quarantined" in second.message
    (frag,) = [f for f in second.rejected if f.reason == REASON]
    assert frag.text == STUCK and frag.line_ids == ("2026-11-30#L4",)
    # Both runs' raw answers (first attempt and stricter retry each) are kept, masked.
    assert frag.proposal["answers"] == [UNREADABLE["Helios report"]] * (2 * QUARANTINE_AFTER)
    outcome = next(o for o in second.lines if o.line_id == "2026-11-30#L4")
    assert outcome.detail.startswith(f"quarantined {frag.fragment_id}")
    facts = page_fact_lines(tmp_path)
    assert any("Lisbon" in line for line in facts) and not any("Helios" in line for line in facts)
    assert consolidate(tmp_path, model).status == "nothing"


def test_a_requeued_statement_is_routed_again_or_goes_straight_back(tmp_path: Path) -> None:
    small_batch(tmp_path)
    stuck = RoutingGenerator(routes=dict(UNREADABLE))
    consolidate(tmp_path, stuck)
    consolidate(tmp_path, stuck)
    ((frag, state),) = quarantined_fragments(tmp_path)
    assert state == "rejected"
    assert main(["memory", "requeue", frag.fragment_id, "--vault", str(tmp_path)]) == 0
    # Still unreadable: back to quarantine at once, the run is not blocked again.
    again = consolidate(tmp_path, stuck)
    assert again.status in ("ok", "empty") and [f.reason for f in again.rejected] == [REASON]
    ((first, first_state), (second, _)) = quarantined_fragments(tmp_path)
    assert (first.fragment_id, first_state) == (frag.fragment_id, "reconsidered")
    assert second.source == f"requeue {frag.fragment_id}"
    # With a model that answers, the re-queued statement reaches its page.
    assert main(["memory", "requeue", second.fragment_id, "--vault", str(tmp_path)]) == 0
    assert consolidate(tmp_path, RoutingGenerator()).status == "ok"
    assert any("Helios report is due" in line for line in page_fact_lines(tmp_path))
    states = {f.fragment_id: s for f, s in rejected_fragments(tmp_path)}
    assert states[second.fragment_id] == "reconsidered"


def test_cli_lists_quarantined_statements_with_their_raw_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small_batch(tmp_path)
    stuck = RoutingGenerator(routes=dict(UNREADABLE))
    consolidate(tmp_path, stuck)
    assert main(["memory", "quarantined", "--vault", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "no quarantined statements.\n"
    consolidate(tmp_path, stuck)
    assert main(["memory", "quarantined", "--vault", str(tmp_path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["reason"], row["state"], row["line_ids"]) == (REASON, "rejected", ["2026-11-30#L4"])
    assert main(["memory", "quarantined", "--vault", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{row['fragment_id']} [rejected] {STUCK!r} (lines 2026-11-30#L4;" in out
    assert "    answer 1: 'I am not sure where this goes, sorry.'" in out
    assert "re-queue one with: antinomy memory requeue ID" in out
    # `memory rejected` lists it too, with its reason.
    assert main(["memory", "rejected", "--vault", str(tmp_path)]) == 0
    assert f"{row['fragment_id']} [rejected] {REASON}" in capsys.readouterr().out
    assert main(["memory", "requeue", "r-nope", "--vault", str(tmp_path)]) == 1
    assert "No rejected fragment 'r-nope'" in capsys.readouterr().err


def test_a_model_that_never_answers_sets_aside_one_more_statement_per_run(tmp_path: Path) -> None:
    """A broken model does not sweep everything into quarantine in one run: each run gets
    one statement further (three statements: three json_failure runs, then the step ends)."""
    small_batch(tmp_path)
    broken = RoutingGenerator(routes={"": "no JSON here"})
    statuses = [consolidate(tmp_path, broken).status for _ in range(4)]
    assert statuses == ["json_failure", "json_failure", "json_failure", "empty"]
    assert [f.text for f, _ in quarantined_fragments(tmp_path)] == [
        "We decided to fly to Lisbon on 12 December with Ana.",
        "I prefer window seats on long flights.",
        STUCK,
    ]
    assert pending_batches(tmp_path) == []
