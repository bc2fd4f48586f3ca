"""Extraction in code: which sentences are candidate facts, and subject names refused in code."""

from __future__ import annotations

import pytest

from desktop.flows.memory.batches import RawLine
from desktop.flows.memory.extract import classify_sentence, extract_candidates, split_sentences
from desktop.flows.memory.names import find_aliases, name_problem, suggest_subjects


@pytest.mark.parametrize(
    ("sentence", "outcome"),
    [
        ("We decided to move the Atlas API to Fly.io; the cutover is on 15 December.", "candidate"),
        ("My favourite editor setup is Neovim with the gruvbox theme.", "candidate"),
        ("What does idempotent mean?", "question"),
        ("Can you explain what a context manager does", "question"),
        ("Show me a quick example of a dataclass.", "request"),
        ("Give me a regex for an email address.", "request"),
        ("Please remind me of the plan.", "request"),
        ("Thanks, that helps.", "greeting"),
        ("ok", "greeting"),
        ("Hmm, interesting.", "greeting"),
        ("Maybe we should move to Postgres.", "hedge"),
        ("I think the release slips to March.", "hedge"),
        ("The staging token is GITHUB_TOKEN=[secret:github-token]", "secret"),
        ("Traceback (most recent call last):", "tool_output"),
        ("$ ls -la /var/log", "tool_output"),
        ('{"status": 200, "items": [1, 2, 3]}', "tool_output"),
        ("src/desktop/flows/memory/extract.py", "tool_output"),
        ("Sounds good to me", "fragment"),
        ("Je préfère le thé vert le matin.", "candidate"),
        ("Domani ho il dentista alle nove.", "candidate"),
        ("Qu'est-ce que tu en penses ?", "question"),
        ("May 3 is the deadline for the grant report.", "candidate"),
    ],
)
def test_sentences_are_classified(sentence: str, outcome: str) -> None:
    assert classify_sentence(sentence) == outcome


def test_sentences_split_without_breaking_names() -> None:
    text = "We moved the API to Fly.io last week. The cutover went fine! Next: docs."
    assert split_sentences(text) == [
        "We moved the API to Fly.io last week.",
        "The cutover went fine!",
        "Next: docs.",
    ]


def _line(n: int, role: str, text: str, **kw: bool) -> RawLine:
    return RawLine("2026-11-30", n, "2026-11-30T10:00:00Z", role, "s", text, **kw)  # type: ignore[arg-type]


def test_each_line_gets_one_outcome_and_candidates_carry_their_line_ids() -> None:
    lines = [
        _line(1, "user", "What is a good name? We chose Rust for the ingestion service."),
        _line(2, "assistant", "Rust is a fine choice."),
        _line(3, "user", "[withdrawn by the user]", withdrawn=True),
        _line(4, "user", "ok"),
    ]
    got = extract_candidates(lines)
    assert [c.text for c in got.candidates] == ["We chose Rust for the ingestion service."]
    assert got.candidates[0].line_ids == ("2026-11-30#L1",)
    assert [(o.line_id[-2:], o.outcome) for o in got.lines] == [
        ("L1", "candidate"),
        ("L2", "assistant"),
        ("L3", "withdrawn"),
        ("L4", "greeting"),
    ]


def test_a_short_answer_is_completed_by_the_question_and_cites_both_lines() -> None:
    lines = [
        _line(1, "assistant", "Sure. Which day works for the release?"),
        _line(2, "user", "Tuesday."),
        _line(3, "assistant", "Noted."),
        _line(4, "user", "Wednesday."),  # no question before: a fragment
    ]
    got = extract_candidates(lines)
    (answer,) = got.candidates
    assert answer.line_ids == ("2026-11-30#L1", "2026-11-30#L2")
    assert answer.context == "Which day works for the release?"
    assert answer.verbatim == "Tuesday (answering “Which day works for the release?”)"
    assert got.lines[3].outcome == "fragment"


def test_a_reply_that_puts_off_a_yes_or_no_question_is_set_aside_not_completed() -> None:
    lines = [
        _line(1, "assistant", "Should I write the migration script now?"),
        _line(2, "user", "Tomorrow."),  # a date word: an answer
        _line(3, "assistant", "Do you want me to open a ticket for it?"),
        _line(4, "user", "Afterwards."),  # puts the question off: nothing to keep
        _line(5, "assistant", "Do you take the train or the bus?"),
        _line(6, "user", "Bus."),  # the question offers a choice: an answer
    ]
    got = extract_candidates(lines)
    assert [c.text for c in got.candidates] == ["Tomorrow.", "Bus."]
    assert [c.context for c in got.candidates] == [
        "Should I write the migration script now?",
        "Do you take the train or the bus?",
    ]
    assert got.lines[3].outcome == "fragment"  # listed and re-queueable with its reason


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("We decided to move the Atlas API to Fly.io", "sentence"),
        ("the tutorial is not real", "sentence"),
        ("we", "pronoun"),
        ("The user", "pronoun"),
        ("I'm", "pronoun"),
        ("We’re", "pronoun"),
        ("thetosmallworld", "fragment"),
        ("the_tutorial_isnt_real", "fragment"),
        ("to small world", "fragment"),
        ("Atlas API…", "fragment"),
        ("Atlas API", None),
        ("Fly.io", None),
        ("Lisbon trip", None),
    ],
)
def test_subject_names_that_are_not_names_are_refused(name: str, problem: str | None) -> None:
    said = "We decided to move the Atlas API to Fly.io; the trip to Lisbon and the small world."
    assert name_problem(name, said=said) == problem


def test_subjects_suggested_from_the_users_words() -> None:
    named, fresh = suggest_subjects("Marco is the new tech lead of the payments team.", [])
    assert named == [] and fresh[:2] == ["Marco", "Tech lead"]
    _, fresh = suggest_subjects("I switched my running plan to three runs a week.", [])
    assert fresh[0] == "Running plan"


def test_aliases_need_an_alias_marker_next_to_the_name() -> None:
    assert find_aliases("The Atlas API (aka Atlas) moves next month.", "Atlas API") == ["Atlas"]
    assert find_aliases("Project Helios, also known as Sunburst, ships.", "Helios") == ["Sunburst"]
    assert find_aliases("We moved the Atlas API to Fly.io.", "Atlas API") == []
    assert find_aliases("The Atlas API (aka we) moves.", "Atlas API") == []


def test_a_contraction_is_not_a_name_the_user_gave() -> None:
    text = "My real project is called Small World, a board game I'm designing with Tom."
    _, fresh = suggest_subjects(text, [])
    assert fresh[:2] == ["Small World", "Tom"] and "I'm" not in fresh


def test_a_summary_that_cuts_the_fact_short_is_replaced_by_the_first_facts() -> None:
    from desktop.flows.memory.summary import write_summary
    from tests.memory_helpers import RoutingGenerator

    facts = ["My real project is called Small World, a board game I'm designing with Tom."]
    cut = write_summary(RoutingGenerator(summary="I'm designing a board game called"), "X", facts)
    assert (cut.source, cut.text) == ("first_facts", facts[0])
    good = RoutingGenerator(summary="Small World is a board game designed with Tom.")
    assert write_summary(good, "Small World", facts).source == "model"
