"""Cutting notes into the sentences the judge compares (Markdown-aware, en/fr/it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.flows.hunter.verify import quote_found
from desktop.flows.ingest.sentences import MIN_WORDS as INGEST_MIN_WORDS
from desktop.flows.ingest.sentences import split_sentences as ingest_sentences
from desktop.flows.memory.extract import split_sentences as memory_sentences
from desktop.flows.sentences import is_evidence, split_block, split_sentences

NOTE = """# Friday release window

Production releases go out every **Friday** between 14:00 and 16:00. Priya runs
acceptance checks on Thursdays, e.g. the smoke suite, and wants them to mean something.

- [[Projects/Staging pipeline|Staging]] keeps deploying on every merge.
- [ ] Ask Dr. Rossi about the 2.5 release notes.
> Hotfixes for incidents can go out at any time.

```python
deploy(friday=True)  # code is not a sentence
```

| day | slot |
| --- | --- |
| Fri | 14:00 |

    indented code is not a sentence either

<!-- a comment -->
#release #process
"""


def test_markdown_structure_is_understood() -> None:
    quotes = [s.quote for s in split_sentences(NOTE)]
    assert quotes == [
        "Production releases go out every **Friday** between 14:00 and 16:00.",
        "Priya runs acceptance checks on Thursdays, e.g. the smoke suite, and wants them to "
        "mean something.",
        "[[Projects/Staging pipeline|Staging]] keeps deploying on every merge.",
        "Ask Dr. Rossi about the 2.5 release notes.",
        "Hotfixes for incidents can go out at any time.",
    ]
    texts = [s.text for s in split_sentences(NOTE)]
    assert texts[0] == "Production releases go out every Friday between 14:00 and 16:00."
    assert texts[2] == "Staging keeps deploying on every merge."


def test_every_quote_is_found_in_its_note() -> None:
    for s in split_sentences(NOTE):
        assert quote_found(s.quote, NOTE), s.quote


def test_french_and_italian() -> None:
    fr = "J'ai mis les tomates en pleine terre le 6 avril. M. Durand dit : « trop tôt ! » Bon."
    assert [s.quote for s in split_sentences(fr)] == [
        "J'ai mis les tomates en pleine terre le 6 avril.",
        "M. Durand dit : « trop tôt ! » Bon.",
    ]
    it = "Il pane si fa con il lievito madre. Anche oggi l'ho fatto così, ecc. ecc. Va bene?"
    assert [s.quote for s in split_sentences(it)] == [
        "Il pane si fa con il lievito madre.",
        "Anche oggi l'ho fatto così, ecc. ecc.",
        "Va bene?",
    ]
    (first, *_) = split_sentences(it)
    assert "lievito" in first.content and "il" not in first.content


def test_short_generic_lines_are_not_evidence() -> None:
    generic, real = split_sentences("The point is contact. Most runs should be easy and slow.")
    assert not is_evidence(generic) and is_evidence(real)


def test_a_line_that_is_mostly_links_points_elsewhere_and_is_not_evidence() -> None:
    # Written for this test; the sample vault's see-also lines have this shape.
    pointers = [
        "[[Sourdough starter]], [[Bread flour]].",
        "Method notes live in [[Morning pages]] and [[Writing/On drafts]].",
        "Voir aussi [[Semis]] et [[Calendrier du potager]].",
        "[Runbook](runbook.md) and [[On-call rota|the rota]].",
        "Voir aussi [[Semis]] pour les dates des semis et le choix des variétés de tomates.",
        "See [[Release checklist]] for every step of a production release.",
        "Vedi anche [[Il forno]]: la temperatura giusta per il pane del sabato.",
    ]
    claims = [
        "[[Projects/Staging|Staging]] keeps deploying on every merge.",
        "We store everything in [[PostgreSQL]] instead of [[MongoDB]].",
        "Il pane si fa con il [[lievito madre]], mai con quello di birra.",
        "Seeds for the [[Allotment]] are ordered every February from the same supplier.",
    ]
    for line in pointers:
        (sentence,) = split_sentences(line)
        assert not is_evidence(sentence), line
    for line in claims:
        (sentence,) = split_sentences(line)
        assert is_evidence(sentence), line
    (staging,) = split_sentences(claims[0])
    assert staging.text == "Staging keeps deploying on every merge."  # what the judge reads
    assert staging.linked == {"staging"} and staging.own_words == 3


def test_empty_code_only_and_duplicate_notes() -> None:
    assert split_sentences("") == []
    assert split_sentences("```\nonly code\n```\n") == []
    assert len(split_sentences("Same line here.\n\nSame line here.\n")) == 1


def test_punctuation_alone_is_not_a_sentence() -> None:
    # hypothesis found "'" once: a one-character "sentence" no quote check can find again
    for text in ("'", "…", '"', "« »", "...\n\n---", "- '"):
        assert split_sentences(text) == [], text


@given(st.text(max_size=400))
def test_any_text_splits_without_error_and_quotes_stay_in_the_note(text: str) -> None:
    for s in split_sentences(text):
        assert s.text and s.quote
        assert quote_found(s.quote, text)


@pytest.mark.parametrize(
    ("paragraph", "sentences"),
    [
        # Found in documentation vaults: each was cut or glued wrongly by one of the rules
        # the scan, ingest and memory used to have.
        (
            "You can ship any kind of asset here: SCSS, an image, a webfont, etc. These files "
            "behave like pages.",
            ["You can ship any kind of asset here: SCSS, an image, a webfont, etc.",
             "These files behave like pages."],
        ),
        (
            "Bump actions/labeler from 5 to 6. PR 14046 by dependabot.",
            ["Bump actions/labeler from 5 to 6.", "PR 14046 by dependabot."],
        ),
        (
            "(Liquid passes the content to Rouge.) As a result, this code is highlighted.",
            ["(Liquid passes the content to Rouge.)", "As a result, this code is highlighted."],
        ),
        (
            'The experience should be that it "just works." Run it and it builds.',
            ['The experience should be that it "just works."', "Run it and it builds."],
        ),
        (
            "Validation for most (or all?) Python data types, including lists.",
            ["Validation for most (or all?) Python data types, including lists."],
        ),
        (
            "He wrote: [...] I'm using FastAPI a ton. It works.",
            ["He wrote: [...] I'm using FastAPI a ton.", "It works."],
        ),
        (
            "Switch Maruku and Kramdown in lists of Runtime vs. Development dependencies.",
            ["Switch Maruku and Kramdown in lists of Runtime vs. Development dependencies."],
        ),
        (
            "Thanks to Heng, K. Kinnula and Dr. Rossi. They helped.",
            ["Thanks to Heng, K. Kinnula and Dr. Rossi.", "They helped."],
        ),
    ],
)  # fmt: skip
def test_one_sentence_rule_for_the_scan_ingest_and_memory(
    paragraph: str, sentences: list[str]
) -> None:
    assert split_block(paragraph) == sentences
    assert [s.quote for s in split_sentences(paragraph)] == sentences
    assert [s.quote for s in ingest_sentences(paragraph)] == [
        s for s in sentences if len(s.split()) >= INGEST_MIN_WORDS
    ]
    assert memory_sentences(paragraph) == sentences


@pytest.mark.parametrize(
    ("line", "text"),
    [
        (
            "- Watering is done before work, never in the evening. — raw/2024-06-30.md L7–9",
            "Watering is done before work, never in the evening.",
        ),
        (
            "- Flies to Lisbon on 12 December. — "
            "[[Antinomy/Conversations/2026-11-30#^L12|2026-11-30#L12]]",
            "Flies to Lisbon on 12 December.",
        ),
        ("- Prefers tea. — [2026-11-30#L3](../.antinomy/raw/2026-11-30.tsv)", "Prefers tea."),
        ("We ship on Fridays — see release.md for the checklist.",
         "We ship on Fridays — see release.md for the checklist."),
    ],
)  # fmt: skip
def test_the_citation_a_fact_ends_with_is_not_what_the_judge_reads(line: str, text: str) -> None:
    """A citation tail changed the judge's reading of one sample-vault pair from 0.74 to
    0.42; the quote keeps it, so the pair is still found in its note."""
    (sentence,) = split_sentences(line)
    assert sentence.text == text
    assert quote_found(sentence.quote, line)
    assert sentence.quote.endswith(line[-8:])


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        # a sentence that opens with a wikilink, whatever the case of its target
        (
            "Fibers are also called [[./coroutines|coroutines]]. [[threads|Threads]] are the "
            "unit of scheduling.",
            [
                "Fibers are also called [[./coroutines|coroutines]].",
                "[[threads|Threads]] are the unit of scheduling.",
            ],
        ),
        # one that opens with emphasis
        (
            "It is a rule. **Never miss twice** is a popular one.",
            ["It is a rule.", "**Never miss twice** is a popular one."],
        ),
        # an abbreviation before a link still does not end a sentence
        ("I met Dr. [[Smith]] today.", ["I met Dr. [[Smith]] today."]),
        ("See e.g. [[foo]] for more.", ["See e.g. [[foo]] for more."]),
    ],
)
def test_a_sentence_may_open_with_a_link_or_emphasis(block: str, expected: list[str]) -> None:
    assert split_block(block) == expected


def test_display_math_belongs_to_its_sentence_and_a_capital_after_it_opens_the_next() -> None:
    body = (
        "Snell's law relates the two angles:\n\n"
        "When applied to a function, it is defined as\n$$\n(Df)(x) = \\frac{df}{dx}\n$$\n"
        "Higher derivatives are powers of D.\n\n"
        "The formula is $$ E = mc^2 $$ where m is the mass of the body.\n\n"
        "Inline $$x$$ math stays in its sentence. The end."
    )
    assert [s.quote for s in split_sentences(body)] == [
        "Snell's law relates the two angles:",
        "When applied to a function, it is defined as $$ (Df)(x) = \\frac{df}{dx} $$",
        "Higher derivatives are powers of D.",
        "The formula is $$ E = mc^2 $$ where m is the mass of the body.",
        "Inline $$x$$ math stays in its sentence.",
        "The end.",
    ]
