"""One list of stop words per language, read by every reader of content words."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from desktop.flows import sentences as scan
from desktop.flows.ingest import sentences as ingest
from desktop.flows.memory import support as memory
from desktop.vault import fulltext, stopwords
from desktop.vault.stopwords import EN, FR, IT, NEGATIONS, STOP_WORDS

ROOT = Path(__file__).resolve().parents[1]
#: A literal holding this many function words, nearly all of it, is a language's list.
LIST_SIZE = 50
#: Lists of function words kept on purpose, each a subset of the stop words, and why.
PURPOSE_LISTS = {
    # The words trimmed from the ends of a phrase shown to the user: fewer than the stop
    # words, so "about forty minutes now" keeps its "about" and its "now".
    ("desktop/flows/hunter/plain.py", "_SMALL"),
}


def _word_lists(path: Path) -> list[tuple[str, int, set[str]]]:
    """(assigned name, line, words) of every string or list of strings in ``path``."""
    tree = ast.parse(path.read_text("utf-8"))
    names = {
        id(value): target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(target := node.targets[0], ast.Name)
        for value in ast.walk(node.value)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = set(node.value.split())
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
        ):
            words = {str(e.value) for e in node.elts if isinstance(e, ast.Constant)}
        else:
            continue
        out.append((names.get(id(node), ""), node.lineno, words))
    return out


def test_no_reader_keeps_a_language_list_of_its_own() -> None:
    function_words = EN | FR | IT
    found = []
    for path in sorted((ROOT / "desktop").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "desktop/vault/stopwords.py":
            continue
        for name, line, words in _word_lists(path):
            shared = words & function_words
            if len(shared) >= LIST_SIZE and len(shared) >= 0.8 * len(words):
                if (rel, name) in PURPOSE_LISTS and words <= STOP_WORDS:
                    continue
                found.append(f"{rel}:{line} {name} ({len(shared)} function words)")
    assert found == []


def test_each_reader_takes_the_shared_list_and_only_adds_its_own_words() -> None:
    assert scan.STOP_WORDS is STOP_WORDS
    assert fulltext.STOP_WORDS is STOP_WORDS
    assert {"use", "used", "using"} == ingest.STOPWORDS - STOP_WORDS
    assert STOP_WORDS <= ingest.STOPWORDS
    assert memory._STOP - STOP_WORDS == memory._REPORTING_WORDS
    assert STOP_WORDS <= memory._STOP


MIXED = (
    "Il progetto della nonna est très simple, mais the deploy was written because of "
    "the release checklist and cannot wait for questo venerdì"
)


def test_every_reader_drops_the_same_words() -> None:
    def long(words: object) -> set[str]:
        return {w for w in words if len(w) >= 3}  # type: ignore[attr-defined]

    by_scan = long(scan.content_words(MIXED))
    assert by_scan == {
        "progetto",
        "nonna",
        "simple",
        "deploy",
        "written",
        "release",
        "checklist",
        "cannot",
        "wait",
        "venerdì",
    }
    assert long(ingest.content_words(MIXED)) == by_scan
    assert long(w.lower() for w in fulltext.query_words(MIXED)[1]) == by_scan
    assert set(memory.content_words(MIXED)) == {memory.fold(w) for w in by_scan}


@pytest.mark.parametrize("word", ["car", "son", "era", "dove"])
def test_an_english_noun_that_is_a_french_or_italian_function_word_is_kept(word: str) -> None:
    text = f"The {word} of the story"
    assert word in scan.content_words(text)
    assert word in ingest.content_words(text)
    assert word in memory.content_words(text)
    assert fulltext.query_words(text)[1] == [word, "story"]


def test_ai_is_a_word_for_ingest_and_words_of_other_languages_stay_in_a_query() -> None:
    assert "ai" in ingest.content_words("The AI writes a summary of the page")
    # German is not a vault language: "den" and "die" are English words in a query.
    assert fulltext.query_words("bear den die casting")[1] == ["bear", "den", "die", "casting"]


def test_counts_and_the_order_of_events_are_content_words() -> None:
    words = scan.content_words("Deploy once a week, after the review, one release at a time")
    assert {"once", "after", "one"} <= words
    assert {"after", "once"} <= set(memory.content_words("Deploys once, after the review"))


def test_negations_are_stop_words_for_every_reader() -> None:
    assert NEGATIONS <= STOP_WORDS
    assert stopwords.content_words("not on the weekend") == ["weekend"]
    assert scan.content_words("not on the weekend") == {"weekend"}
    assert ingest.content_words("not on the weekend") == ["weekend"]
    assert fulltext.query_words("not on the weekend")[1] == ["weekend"]
