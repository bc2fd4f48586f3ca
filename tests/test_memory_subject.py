"""The sentence's own subject, read in code, decides the page a fact goes to.

The lines here are written for these tests (not taken from any benchmark set).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.memory import capture_turn, close_open_batch, consolidate, subject_pages
from desktop.flows.memory.extract import Candidate
from desktop.flows.memory.pages import SubjectPage
from desktop.flows.memory.route import make_offer, read_route, route_schema
from desktop.flows.memory.subject import conversation_names, sentence_subject
from tests.memory_helpers import T0, RoutingGenerator, route

INTRO = "My aunt Ines and my neighbour Bruno both help at the allotment."


@pytest.mark.parametrize(
    ("sentence", "subject"),
    [
        # A name followed by a verb of the list, "-ed", or an auxiliary.
        ("Bruno leads the allotment committee.", "Bruno"),
        ("Ines moved her beehives to the Kelso farm.", "Ines"),
        ("Bruno cannot lift heavy bags before March.", "Bruno"),
        # The third person of the present right after a name the conversation uses.
        ("Ines bakes bread for the Harbour market on Fridays.", "Ines"),
        ("Bruno only waters the tomatoes when it is dry.", "Bruno"),
        # After an article, a possessive and a role noun, or a noun and a preposition.
        ("My aunt Ines is learning Portuguese at the Corvo institute.", "Ines"),
        ("The Heron app was rewritten over the summer.", "Heron"),
        ("The treasurer of Elm Club is a retired pilot.", "Elm Club"),
        # A description that "is" names one: the name it is.
        ("My favourite bakery is Crumbs on the corner.", "Crumbs"),
        ("The best dentist in town is Dr Okafor.", "Dr Okafor"),
    ],
)
def test_the_one_name_of_the_subject_phrase_is_the_subject(sentence: str, subject: str) -> None:
    assert sentence_subject(sentence, known=conversation_names([INTRO])) == subject


@pytest.mark.parametrize(
    "sentence",
    [
        "I booked the ferry to Kelso with Ines.",  # the user is the subject
        "She waters the plants at the Harbour market.",  # a pronoun
        "Ines and Bruno share the shed.",  # two names
        "Short notes about the Heron app and the Wren app.",  # two names, no verb
        "Gardening takes most of my Sundays.",  # an opener, not a name anyone used
        "On Monday the Heron app goes live.",  # a weekday is never a name
        "My plan is to walk to Kelso.",  # "is" names no one: the rest is the model's
    ],
)
def test_no_single_name_leaves_the_choice_to_the_model(sentence: str) -> None:
    assert sentence_subject(sentence, known=conversation_names([INTRO])) is None


def test_a_first_word_followed_by_a_verb_and_its_object_is_a_name() -> None:
    lines = [
        "Some notes on the two goats, for the neighbour.",
        "Pebble eats the roses if the gate is open.",
        "Fig only drinks the rain water from the barrel.",
        "Fig hides behind the shed at night.",
        "Quick notes about the shed and the gate.",
    ]
    names = conversation_names(lines)
    assert names == {"pebble", "fig"}
    # "Fig hides behind …" alone is ambiguous ("Quick notes about …" has that shape);
    # the conversation's other line makes Fig a name.
    assert sentence_subject(lines[3]) is None
    assert [sentence_subject(line, known=names) for line in lines] == [
        None, "Pebble", "Fig", "Fig", None
    ]  # fmt: skip


def test_conversation_names_are_capitalised_inside_a_sentence() -> None:
    names = conversation_names(
        [INTRO, "Sadly the gate is broken in May. Then I asked Bruno.", "Thanks, I will."]
    )
    # "Sadly", "Then" and "Thanks" open sentences; "May" is a month; "I" is the speaker.
    assert names == {"ines", "bruno"}


def test_a_subject_read_in_code_is_the_only_one_offered_and_used() -> None:
    candidate = Candidate("Ines bakes bread for the Harbour market on Fridays.", ("d#L2",))
    offer = make_offer(candidate, [], names=conversation_names([INTRO]))
    assert offer.subjects == ("Ines",) and offer.fixed
    assert route_schema(offer)["properties"]["subject"]["enum"] == ["Ines"]
    # Whatever the model answers, the page is the sentence's subject.
    answer = route("new", new_subject="Harbour market")
    assert read_route(answer, candidate, offer, []).subject == "Ines"


def test_an_existing_page_that_starts_with_the_name_takes_the_fact() -> None:
    page = SubjectPage("Antinomy/Subjects/Heron app.md", "Heron app", (), "", (), "", "")
    candidate = Candidate("The Heron app was rewritten over the summer.", ("d#L1",))
    assert make_offer(candidate, [page]).subjects == ("Heron app",)


def test_a_third_persons_fact_is_filed_under_them_not_under_a_place(tmp_path: Path) -> None:
    turns = [
        ("user", INTRO),
        ("assistant", "Noted. What do they do?"),
        ("user", "Ines bakes bread for the Harbour market on Fridays."),
        ("user", "Bruno only waters the tomatoes when the Kelso forecast is dry."),
    ]
    for role, text in turns:
        capture_turn(tmp_path, role=role, text=text, session_id="s1", ts=T0)
    close_open_batch(tmp_path)
    # The model files each line under the place it mentions, as the small model did.
    gen = RoutingGenerator(
        routes={
            "bakes": route("new", new_subject="Harbour market"),
            "waters": route("new", new_subject="Kelso forecast"),
        }
    )
    report = consolidate(tmp_path, gen)
    where = {f.text: f.subject for f in report.accepted}
    assert where["Ines bakes bread for the Harbour market on Fridays."] == "Ines"
    assert where["Bruno only waters the tomatoes when the Kelso forecast is dry."] == "Bruno"
    assert "Harbour market" not in {p.name for p in subject_pages(tmp_path)}
