"""A subject is a name or a noun the user used, never a sentence's opener, verb or adjective."""

from __future__ import annotations

import pytest

from desktop.flows.memory.names import name_problem, suggest_subjects
from desktop.flows.memory.wordclass import (
    ADJECTIVE,
    MODIFIER,
    NAME,
    NOUN,
    OPENER,
    VERB,
    word_roles,
)

#: What a user said, and a one-word subject a model might propose from it that is no subject.
BAD = [
    ("Let me know when Marco is back.", "Let"),
    ("Let's plan the offsite.", "Let"),
    ("Quick note: the Atlas API moved to PostgreSQL.", "Quick"),
    ("Quick question, can we use uv for the builds?", "Quick"),
    ("Honestly, Redis was slow.", "Honestly"),
    ("Honestly, Redis was slow.", "Slow"),
    ("Maybe we should try Fly.io.", "Maybe"),
    ("We deploy the billing service on Fridays.", "Deploy"),
    ("We need to rotate the keys every month.", "Rotate"),
    ("The staging cluster is very unstable.", "Unstable"),
    ("Apparently the Helios report is late.", "Apparently"),
    ("Remember that Ana leads the platform team.", "Remember"),
]

#: What a user said, and a subject in it (people, places, projects, tools).
GOOD = [
    ("Let me know when Marco is back.", "Marco"),
    ("Marco is the new tech lead of the payments team.", "Marco"),
    ("Quick note: the Atlas API moved to PostgreSQL.", "PostgreSQL"),
    ("Quick note: the Atlas API moved to PostgreSQL.", "Atlas API"),
    ("Quick question, can we use uv for the builds?", "uv"),
    ("Honestly, Redis was slow.", "Redis"),
    ("Maybe we should try Fly.io.", "Fly.io"),
    ("Porto.", "Porto"),
    ("Giulia arrives in Lisbon on 12 December.", "Giulia"),
    ("Giulia arrives in Lisbon on 12 December.", "Lisbon"),
    ("My real project is called Small World, a board game I'm designing with Tom.", "Tom"),
    ("Kubernetes runs the staging cluster.", "Kubernetes"),
    ("We keep the backups on S3.", "S3"),
    ("I am allergic to penicillin.", "Penicillin"),
    ("Domani ho il dentista alle nove.", "Dentista"),
]


@pytest.mark.parametrize(("said", "name"), BAD)
def test_an_opener_verb_or_adjective_is_refused_as_a_subject(said: str, name: str) -> None:
    assert name_problem(name, said=said) == "common"


@pytest.mark.parametrize(("said", "name"), GOOD)
def test_a_name_or_noun_the_user_used_is_a_subject(said: str, name: str) -> None:
    assert name_problem(name, said=said) is None


def test_an_existing_page_named_like_a_common_word_stays_usable() -> None:
    assert name_problem("Quick", said="Quick note: it moved.", known=["Quick"]) is None


@pytest.mark.parametrize(
    ("said", "offered", "not_offered"),
    [
        ("Let me know when Marco is back.", ["Marco"], ["Let"]),
        ("Let's move the deploys to Tuesday.", [], ["Let", "Let's"]),
        ("Quick note: the Atlas API moved to PostgreSQL.", ["Atlas API", "PostgreSQL"], ["Quick"]),
        ("Honestly, Redis was slow.", ["Redis"], ["Honestly", "Honestly Redis"]),
        ("Maybe we should try Fly.io.", ["Fly.io"], ["Maybe"]),
        ("Marco's moving to Lisbon.", ["Marco", "Lisbon"], ["Marco's"]),
        ("Atlas API moved to Fly.io last week.", ["Atlas API", "Fly.io"], []),
    ],
)
def test_code_offers_the_names_and_not_the_openers(
    said: str, offered: list[str], not_offered: list[str]
) -> None:
    _, fresh = suggest_subjects(said, [])
    assert fresh[: len(offered)] == offered
    assert not set(not_offered) & set(fresh)


def test_each_word_gets_the_role_of_its_place() -> None:
    roles = {t: r for t, r in word_roles("Maybe we deploy uv on a quick box; Redis was slow.")}
    assert roles == {
        "Maybe": OPENER, "we": NOUN, "deploy": VERB, "uv": NOUN, "on": NOUN, "a": NOUN,
        "quick": MODIFIER, "box": NOUN, ";": "mark", "Redis": NAME, "was": NOUN,
        "slow": ADJECTIVE, ".": "mark", "\n": "mark",
    }  # fmt: skip
