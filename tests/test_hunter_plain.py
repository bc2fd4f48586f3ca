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
#: The only words a description may hold that its quotes and titles do not.
FRAMING = {"one", "note", "vs", "only", "in"}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> set[str]:
    """The words of ``text`` read as text (Markdown emphasis and links taken out)."""
    return {w.casefold() for w in _WORD.findall(plain(text))}


def pair(quote_a: str, quote_b: str) -> Pair:
    return Pair("A.md", "B.md", "Release window", "Quiet weekends", quote_a, quote_b, "",
                probability=0.92)  # fmt: skip


@pytest.mark.parametrize(("quote_a", "quote_b"), SAMPLE)
def test_a_description_holds_no_word_neither_quote_has(quote_a: str, quote_b: str) -> None:
    titles = ("Release window", "Quiet weekends")
    line = describe_from_quotes(quote_a, quote_b, titles)
    if line is not None:
        assert words(line) <= words(f"{quote_a} {quote_b} {' '.join(titles)}") | FRAMING, line
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
            "Release window: every Friday between 14:00 and 16:00 vs Nothing ships … after "
            "Thursday noon",
        ),
        (
            "Standup is capped at fifteen minutes and ends on time, even mid-sentence.",
            "Our standup runs about forty minutes now, and I have stopped trying to shorten it.",
            "Standup: capped at fifteen minutes vs about forty minutes now",
        ),
        (
            "All services store their data in the shared PostgreSQL cluster.",
            "The billing service keeps its ledger in a SQLite file on its own worker host.",
            "Services: All services store their data in the shared PostgreSQL cluster vs "
            "billing service keeps its ledger in a SQLite file",
        ),
        (
            "On ne met jamais les tomates en pleine terre avant les Saints de glace, à la mi-mai.",
            "J'ai mis les tomates en pleine terre le 6 avril, comme chaque année à cette date.",
            "Tomates en pleine terre: On ne met jamais les tomates … la mi-mai vs le 6 avril, "
            "comme chaque année à cette date",
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


@given(SENTENCE, SENTENCE, SENTENCE)
def test_any_two_quotes_give_a_line_of_their_words_or_none(
    quote_a: str, quote_b: str, title: str
) -> None:
    line = describe_from_quotes(quote_a, quote_b, (title, ""))
    if line is not None:
        assert words(line) <= words(f"{quote_a} {quote_b} {title}") | FRAMING, line
        assert 0 < len(line) <= DESCRIPTION_MAX


def described(quote_a: str, quote_b: str, title_a: str, title_b: str) -> str | None:
    return describe_from_quotes(quote_a, quote_b, (title_a, title_b))


def test_without_a_shared_subject_the_title_the_quotes_speak_of_names_it() -> None:
    assert (
        described(
            "We take the night train to Lyon.",
            "The flight to Lyon leaves at 7:40 from gate B.",
            "Travel to Lyon",
            "Booking confirmations",
        )
        == "Travel to Lyon: night train vs flight to Lyon leaves at 7:40 from gate"
    )


def test_a_date_or_an_identifier_in_front_of_a_title_is_not_its_subject() -> None:
    line = described(
        "Deploys need a green build on every branch.",
        "I deployed from a red branch on Friday.",
        "2024-06-10 Deploys",
        "ADR-0042 Branch builds",
    )
    assert line is not None and line.startswith("Branch builds: "), line


def test_a_title_that_restates_a_quote_is_not_taken_as_its_subject() -> None:
    line = described(
        "Mail and chat stay closed until eleven.",
        "The first hour of the workday belongs to the inbox, so nothing urgent waits on me.",
        "Mail and chat stay closed until eleven",
        "2024-09-16",
    )
    assert line is not None and not line.startswith("Mail and chat stay closed until eleven:")


def test_a_bare_value_takes_in_the_words_that_say_what_it_is_of() -> None:
    assert described(
        "I stopped eating red meat in April.",
        "Sunday lunch is roast beef with my parents.",
        "Diet goals",
        "Weekly menu",
    ) == (
        "Diet goals: stopped eating red meat in April vs Sunday lunch is roast beef with my parents"
    )


def test_a_subject_shared_in_two_spellings_names_the_pair() -> None:
    assert (
        described(
            "The weekly planning meeting is on Tuesday at 10:00.",
            "Planning moved to Thursday afternoons so the designers can join.",
            "Team rituals",
            "Retro notes March",
        )
        == "Planning: on Tuesday at 10:00 vs moved to Thursday afternoons"
    )


def test_sentences_with_no_claim_word_are_described_by_the_subject_they_share() -> None:
    assert (
        described(
            "Spanish lessons are on Wednesday evenings.",
            "Wednesday evenings are reserved for choir practice.",
            "Language course",
            "Evening schedule",
        )
        == "Wednesday evenings: Spanish lessons are on vs are reserved for choir practice"
    )


@pytest.mark.parametrize(
    "cited",
    [
        "Fridays at 11:00 the team demos its work. — raw/2024-05-07.md L9",
        "Fridays at 11:00 the team demos its work. — [[2026-12-02#^t41]]",
    ],
)
def test_the_source_a_remembered_fact_cites_is_not_part_of_its_description(cited: str) -> None:
    line = described(
        cited,
        "Production releases go out every Friday between 14:00 and 16:00.",
        "Team rituals",
        "Friday release window",
    )
    assert line is not None and "2024" not in line and "2026" not in line and "raw" not in line
    assert "Fridays at 11:00" in line, line


def test_a_value_one_quote_negates_is_what_the_other_is_described_by() -> None:
    line = described(
        "Watering is done before work, never in the evening, because wet leaves invite slugs.",
        "I water the allotment in the evening so that less of it is lost to evaporation.",
        "Allotment",
        "Watering in the evening",
    )
    assert line is not None
    _, said = line.split(": ", 1)
    side_a, side_b = said.split(" vs ")
    assert "never in the evening" in side_a and "in the evening" in side_b, line


def test_a_unit_both_quotes_use_is_not_their_subject() -> None:
    line = described(
        "Customers invoice at all hours, and the nightly invoice run happens at 02:00.",
        "The first hour of the workday belongs to the inbox, so nothing urgent waits on me.",
        "ADR-0008 Weekly on-call rotation",
        "2024-09-16",
    )
    assert line is not None and not line.startswith("Hours"), line


def test_without_claim_words_a_subject_the_quotes_name_still_gives_a_plain_line() -> None:
    line = described(
        "It is the solid angle density of irradiance.",
        "Radiometry is a field that describes light propagation and reflection.",
        "radiometry quantities",
        "radiometry",
    )
    assert line is not None and line.startswith("Radiometry quantities: "), line
    assert " vs " in line


@pytest.mark.parametrize(
    "pointer",
    [
        "; see [[Billing v2]].",
        " (see also [[Billing v2]]).",
        ", cf. [[Billing v2]]",
        "; voir [[Billing v2]].",
    ],
)
def test_a_pointer_to_another_note_is_not_a_side(pointer: str) -> None:
    line = describe_from_quotes(
        "New invoice exporter, starting with credit notes" + pointer,
        "The invoice exporter is the slowest code we own.",
    )
    assert line is not None
    assert "Billing" not in line
    assert "credit notes" in line


def test_a_quote_that_is_only_a_pointer_keeps_its_words() -> None:
    line = describe_from_quotes("See [[Ops runbook]].", "Backups run weekly.")
    assert line is not None and "Ops runbook" in line
