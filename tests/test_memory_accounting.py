"""Memory loses nothing silently: every line ends on a page, as a listed and re-queueable
fragment, or as "nothing to keep" with its reason — and facts stay in the user's voice."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from desktop.flows.memory import (
    capture_turn,
    close_open_batch,
    consolidate,
    rejected_fragments,
    requeue_fragment,
)
from desktop.flows.memory.extract import classify_sentence
from desktop.flows.memory.names import name_problem
from desktop.flows.memory.pages import read_pages
from tests.memory_helpers import T0, RoutingGenerator, route

#: Thirty lines a person might type, with what should become of each.
TURNS: list[tuple[str, str]] = [
    ("user", "I am allergic to penicillin."),
    ("assistant", "Noted. Anything else I should know about your health?"),
    ("user", "My blood type is O negative."),
    ("user", "What does idempotent mean?"),
    ("assistant", "An operation you can repeat with the same result."),
    ("user", "Thanks, that helps."),
    ("user", "Show me the release checklist."),
    ("user", "Maybe we should move the offsite to May."),
    ("user", "Lisbon."),
    ("user", "The Helios report is due next Friday."),
    ("user", "ok"),
    ("user", "git rebase -i HEAD~3"),
    ("user", "We decided to ship the billing API on 3 March."),
    ("assistant", "Which team owns the billing API?"),
    ("user", "Team Atlas."),
    ("user", "I think the cache is the problem, not sure."),
    ("user", "Ana leads the platform team since January."),
    ("user", "Can you summarise the meeting?"),
    ("user", "Je préfère le thé vert le matin."),
    ("user", "Domani ho il dentista alle nove."),
    ("user", "Sounds good to me"),
    ("assistant", "Shall I book the dentist reminder?"),
    ("user", "Yes please."),
    ("user", "My sister Giulia arrives in Lisbon on 12 December."),
    ("user", "src/billing/api.py"),
    ("user", "The staging database moves to Frankfurt next month."),
    ("user", "I prefer window seats on long flights."),
    ("user", "Hmm."),
    ("user", "Our rent goes up by 40 euros in April."),
    ("user", "Good night!"),
]


def _capture(vault: Path) -> None:
    for i, (role, text) in enumerate(TURNS):
        capture_turn(vault, role=role, text=text, session_id="s", ts=T0 + timedelta(seconds=i))
    close_open_batch(vault)


def test_every_one_of_thirty_lines_ends_in_exactly_one_place(tmp_path: Path) -> None:
    _capture(tmp_path)
    report = consolidate(tmp_path, RoutingGenerator())
    assert report.status == "ok"
    ids = [f"2026-11-30#L{n}" for n in range(1, len(TURNS) + 1)]
    assert sorted(o.line_id for o in report.lines) == sorted(ids)
    assert all(o.detail for o in report.lines), [o for o in report.lines if not o.detail]
    listed = {lid for frag, _ in rejected_fragments(tmp_path) for lid in frag.line_ids}
    written = {c for f in report.accepted for c in f.citations}
    for outcome in report.lines:
        if outcome.outcome == "candidate":  # a fact on a page, already known, or rejected
            assert (
                outcome.line_id in written
                or "already on" in outcome.detail
                or ("rejected" in outcome.detail)
            ), outcome
        elif outcome.outcome in ("fragment", "hedge"):  # listed, re-queueable
            assert outcome.line_id in listed and "set aside" in outcome.detail, outcome
    # "I am allergic to penicillin." is a fact: two content words, said of oneself.
    assert "2026-11-30#L1" in written
    kinds = {o.line_id: o.outcome for o in report.lines}
    assert kinds["2026-11-30#L4"] == "question" and kinds["2026-11-30#L12"] == "tool_output"


def test_a_line_set_aside_can_be_requeued_and_is_then_read_as_a_statement(
    tmp_path: Path,
) -> None:
    capture_turn(
        tmp_path, role="user", text="Maybe the offsite moves to May.", session_id="s", ts=T0
    )
    close_open_batch(tmp_path)
    first = consolidate(tmp_path, RoutingGenerator())
    ((frag, _state),) = rejected_fragments(tmp_path)
    assert frag.reason == "hedge" and frag.detail.startswith("hedged or uncertain")
    assert not first.accepted
    requeue_fragment(tmp_path, frag.fragment_id)
    second = consolidate(tmp_path, RoutingGenerator(routes={"offsite": route("Offsite")}))
    assert [f.text for f in second.accepted] == ["Maybe the offsite moves to May."]


def test_facts_stay_in_the_users_voice(tmp_path: Path) -> None:
    capture_turn(
        tmp_path,
        role="user",
        text="I prefer Postgres over MySQL for every new service I build.",
        session_id="s",
        ts=T0,
    )
    close_open_batch(tmp_path)
    mixed = "The user prefers Postgres over MySQL for every new service I build."
    report = consolidate(tmp_path, RoutingGenerator(routes={"Postgres": route("Postgres", mixed)}))
    (fact,) = report.accepted
    assert fact.wording == "verbatim" and fact.text.startswith("I prefer Postgres")
    assert fact.fallback_reason == "the rephrasing speaks of the user in the third person"
    page_text = "\n".join(p.text for p in read_pages(tmp_path, "Antinomy/Subjects"))
    assert "The user" not in page_text


def test_a_one_word_generic_subject_is_not_a_page_name() -> None:
    for name in ("Team", "work", "Stuff", "Projet"):
        assert name_problem(name) == "generic", name
    assert name_problem("Team Atlas", said="Team Atlas.") is None
    assert name_problem("Team", known=["Team"]) is None  # the user's own page stays usable


def test_first_person_statements_need_two_content_words_others_three() -> None:
    assert classify_sentence("I am allergic to penicillin.") == "candidate"
    assert classify_sentence("Sono allergico alla penicillina.") == "candidate"
    assert classify_sentence("Sounds good to me") == "fragment"
    assert classify_sentence("Lisbon in December.") == "fragment"
