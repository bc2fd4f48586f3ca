"""A pair the model cannot describe is described from its quotes' differing words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.flows.hunter.describe import plain_description
from desktop.flows.hunter.plain import describe_from_quotes
from desktop.flows.hunter.prompt import DESCRIPTION_MAX
from desktop.flows.hunter.records import Pair
from desktop.flows.sentences import plain

EXPECTED = json.loads(
    (Path(__file__).parent / "data" / "sample_vault_expected.json").read_text(encoding="utf-8")
)
SAMPLE = [(c["quote_a"], c["quote_b"]) for c in EXPECTED["contradictions"]]
#: The only words a description may hold that its quotes do not.
FRAMING = {"one", "note", "says", "the", "other", "vs", "only", "in"}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> set[str]:
    """The words of ``text`` read as text (Markdown emphasis and links taken out)."""
    return {w.casefold() for w in _WORD.findall(plain(text))}


def pair(quote_a: str, quote_b: str) -> Pair:
    return Pair("A.md", "B.md", "Release window", "Quiet weekends", quote_a, quote_b, "",
                probability=0.92)  # fmt: skip


@pytest.mark.parametrize(("quote_a", "quote_b"), SAMPLE)
def test_a_description_holds_no_word_neither_quote_has(quote_a: str, quote_b: str) -> None:
    line = describe_from_quotes(quote_a, quote_b)
    if line is not None:
        assert words(line) <= words(quote_a) | words(quote_b) | FRAMING, line
        assert len(line) <= DESCRIPTION_MAX


def test_most_sample_vault_contradictions_get_a_plain_description() -> None:
    described = [describe_from_quotes(a, b) for a, b in SAMPLE]
    assert sum(line is not None for line in described) >= len(SAMPLE) - 1


@pytest.mark.parametrize(
    ("quote_a", "quote_b", "line"),
    [
        (
            "Production releases go out every Friday between 14:00 and 16:00.",
            "Nothing ships to production after Thursday noon.",
            "Production: one note says “every Friday between 14:00 and 16:00”, the other "
            "“Nothing ships … after Thursday noon”",
        ),
        (
            "Standup is capped at fifteen minutes and ends on time, even mid-sentence.",
            "Our standup runs about forty minutes now, and I have stopped trying to shorten it.",
            "Standup: one note says “at fifteen minutes”, the other “about forty minutes now”",
        ),
        (
            "All services store their data in the shared PostgreSQL cluster.",
            "The billing service keeps its ledger in a SQLite file on its own worker host.",
            "One note says “All services store … PostgreSQL cluster”, the other “keeps its "
            "ledger … a SQLite file”",
        ),
        (
            "On ne met jamais les tomates en pleine terre avant les Saints de glace, à la mi-mai.",
            "J'ai mis les tomates en pleine terre le 6 avril, comme chaque année à cette date.",
            "Tomates en pleine terre: one note says “On ne met jamais les tomates … la "
            "mi-mai”, the other “le 6 avril … chaque année”",
        ),
        ("Deploys happen on Tuesday.", "Deploys happen on Thursday.",
         "Tuesday vs Thursday: Deploys happen on …"),
        ("The nightly backup runs at 02:00.", "The nightly backup runs at 14:00.",
         "02:00 vs 14:00: The nightly backup runs at …"),
        ("The build never runs on weekends.", "The build runs on weekends.",
         "“never” only in one note: The build … runs on weekends"),
        ("We store sessions in Redis.", "We store sessions in PostgreSQL.",
         "Redis vs PostgreSQL: We store sessions in …"),
        ("The API is public.", "The API is private.", "public vs private: The API is …"),
    ],
)  # fmt: skip
def test_the_differing_words_say_what_the_pair_disagrees_about(
    quote_a: str, quote_b: str, line: str
) -> None:
    assert plain_description(pair(quote_a, quote_b)) == line


def test_with_no_word_that_carries_a_claim_the_judges_reading_is_said() -> None:
    line = plain_description(pair("Good morning.", "Lovely weather today."))
    assert line == (
        "The judge reads these sentences of Release window and Quiet weekends as "
        "contradicting each other (92%)."
    )


PIECES = [
    *"abcdefghij ABCDE 0123456789 .,:;!?()[]\"'*_`-–…«»“”é\n",
    "never",
    " not ",
    " every ",
    " only ",
    "Friday",
    "Monday",
    "14:00",
    "PostgreSQL",
    " before ",
    " after ",
]
SENTENCE = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@given(SENTENCE, SENTENCE)
def test_any_two_quotes_give_a_line_of_their_words_or_none(quote_a: str, quote_b: str) -> None:
    line = describe_from_quotes(quote_a, quote_b)
    if line is not None:
        assert words(line) <= words(quote_a) | words(quote_b) | FRAMING, line
        assert 0 < len(line) <= DESCRIPTION_MAX
