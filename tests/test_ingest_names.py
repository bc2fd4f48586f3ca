"""Page names of an ingest are names: checked in code, offered from the source, in the grammar."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop.flows.ingest import IngestReport, plan_ingest
from desktop.flows.ingest.names import offered_names, page_name_problem, tidy_name, word_keys
from desktop.flows.ingest.prompt import NAME_PATTERN, plan_schema
from desktop.vault.index import VaultIndex
from tests.fakes import ScriptedGenerator
from tests.ingest_helpers import answer, make_vault, write_source

SOURCE_WORDS = word_keys("Locking resolves the dependencies of a project into a lockfile.")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("scope-section-2345678901234567890123456789012345678',", "holds a quote mark"),
        ("Locking, syncing", "holds a comma or a semicolon"),
        ("Release 1234567", "holds a run of 6 or more digits (an id, not a name)"),
        ("Package locking.", "starts or ends with punctuation"),
        ("x" * 81, "is longer than 80 characters"),
        ("Lock the project and sync the environment", "has more than 6 words (a sentence, "
                                                      "not a name)"),
        ("the number of pages of a", "ends with 'a' (cut out of a phrase)"),
        ("The lockfile needs work", "is a clause, not a name (it holds 'needs')"),
        ("When syncing happens", "is a clause, not a name (it holds 'when')"),
        ("Lock file s", "holds a broken word ('s')"),
        ("Description", "is a generic word, not a subject"),
        ("2. Overview", "is a generic word, not a subject"),
        ("lock-and-sync", "looks like a token or a slug: write words separated by spaces"),
        ("Key Zp3Kq8Lm2Nx7Vb5Qw9Rt4Yu", "looks like a token or a slug: write words separated by "
                                         "spaces"),
        ("The 2018", "names nothing (only small words or numbers)"),
    ],
)  # fmt: skip
def test_a_page_name_that_is_not_a_name_is_refused_with_its_reason(name: str, problem: str) -> None:
    assert page_name_problem(name) == problem


@pytest.mark.parametrize(
    "name", ["Package locking", "Built-in blog plugin", "Python 3", "C++ templates", "Rust"]
)
def test_names_are_accepted(name: str) -> None:
    assert page_name_problem(name) is None


def test_a_word_the_source_never_uses_is_refused_when_the_source_is_known() -> None:
    assert page_name_problem("Lockfile guide", source_words=SOURCE_WORDS) is None
    assert page_name_problem("Lock projects", source_words=SOURCE_WORDS) is None  # "locking"
    assert page_name_problem("Project whensyncing", source_words=SOURCE_WORDS) == (
        "holds a word the source does not use ('whensyncing')"
    )


def test_the_names_offered_are_the_sources_title_and_headings_that_are_names() -> None:
    headings = ["Description", "Automatic lock and sync", "Checking if it is up-to-date",
                "Package locking { #locking }", "automatic lock and sync", "Overview",
                "What's next?", "Locking, syncing"]  # fmt: skip
    assert offered_names("npm-package-registry", headings) == [
        "npm package registry",
        "Automatic lock and sync",
        "Package locking",
    ]
    words = word_keys("npm-package-registry", "The registry resolves packages by name.")
    assert offered_names("npm-package-registry", headings, source_words=words) == [
        "npm package registry"
    ]
    assert tidy_name("## Package locking { #locking }") == "Package locking"


def test_the_grammar_offers_the_names_or_keeps_free_names_inside_the_pattern() -> None:
    schema = plan_schema(claims=3, max_pages=2, max_contradictions=1, pages=["Rust toolchain"],
                         names=["Package locking", "Syncing"])  # fmt: skip
    props = schema["properties"]
    choices = {"enum": ["Package locking", "Syncing", "Rust toolchain"]}
    assert props["title"] == choices
    assert props["pages"]["items"]["properties"]["page"] == choices
    free = plan_schema(claims=3, max_pages=2, max_contradictions=0)["properties"]["title"]
    assert free == {"type": "string", "pattern": NAME_PATTERN}
    for good in ("Package locking", "Python 3", "Built-in blog plugin", "C++ templates"):
        assert re.fullmatch(NAME_PATTERN, good), good
    for bad in (
        "lock-and-sync",
        "Locking, syncing",
        "scope 2345678",
        "it's",
        "AUTO-1",
        "a b c d e f g",
    ):
        assert not re.fullmatch(NAME_PATTERN, bad), bad  # fmt: skip


def plan(vault: Path, source: Path, *answers: str) -> tuple[IngestReport, ScriptedGenerator]:
    engine = ScriptedGenerator(list(answers))
    index = VaultIndex(vault)
    try:
        index.update()
        return plan_ingest(vault, source, engine=engine, judge=None, index=index), engine
    finally:
        index.close()


@pytest.mark.parametrize(
    ("page", "error"),
    [
        ("lock-and-sync", "looks like a token or a slug: write words separated by spaces"),
        ("Description", "is a generic word, not a subject"),
        ("Rustup whensyncing", "holds a word the source does not use ('whensyncing')"),
    ],
)
def test_a_bad_page_name_goes_back_to_the_model_and_is_never_a_page(
    tmp_path: Path, page: str, error: str
) -> None:
    vault = make_vault(tmp_path / "vault")
    source = write_source(tmp_path / "downloads")
    bad = answer(pages=[{"page": page, "claims": [1]}])
    report, engine = plan(vault, source, bad, answer())
    message = f"pages[1]: page name {page!r} is not a page name: it {error}"
    assert report.errors_first == (message,)
    assert f"- {message}" in engine.calls[1].messages[-1].content
    assert report.status == "planned" and report.plan is not None
    assert all(page not in w.path for w in report.plan.writes)
    # twice refused: the plan is rejected, nothing is written
    again, _ = plan(make_vault(tmp_path / "again"), source, bad, bad)
    assert again.status == "rejected" and again.errors_after_repair == (message,)


def test_an_existing_page_keeps_its_name_even_when_it_is_not_one(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    (vault / "Antinomy/Subjects/Rustup, the installer.md").write_text(
        "---\ntype: subject\nsources: []\n---\n# Rustup, the installer\n\n"
        "Rustup installs the stable compiler and the standard library for every platform.\n"
    )
    source = write_source(tmp_path / "downloads")
    report, _ = plan(
        vault, source, answer(pages=[{"page": "Rustup, the installer", "claims": [2]}])
    )
    assert report.status == "planned", report.errors_first
    assert report.plan is not None
    assert "Antinomy/Subjects/Rustup, the installer.md" in [w.path for w in report.plan.writes]


def test_a_title_qualified_by_a_date_or_edition_is_offered_without_the_qualifier() -> None:
    from desktop.flows.ingest.names import title_head

    text = "The choir sings in the town hall. The choir rehearses in the church on Fridays."
    words = word_keys("Spring concert of the town choir, 14 May", text)
    assert offered_names("Spring concert of the town choir, 14 May", [], source_words=words) == [
        "Spring concert of the town choir"
    ]
    assert title_head("Field guide to mosses (2nd edition)") == "Field guide to mosses"
    assert title_head("Ferry timetable – 2031") == "Ferry timetable"
    # a comma that joins words is no qualifier: the title stays whole (and is not a name)
    assert title_head("Bread, cakes and pastries") == "Bread, cakes and pastries"
    assert offered_names("Bread, cakes and pastries", []) == []


def test_with_no_title_or_heading_that_is_a_name_the_files_name_is_offered() -> None:
    text = "The choir rehearses in the church on Fridays. Concert tickets cost five euros."
    words = word_keys("Notes, thoughts; drafts", text)
    named = offered_names(
        "Notes, thoughts; drafts", [], source_words=words, file_name="choir-concert-tickets"
    )
    assert named == ["choir concert tickets"]
    # the file's name is a last resort, and must be a name in the source's words as well
    assert offered_names("Choir rehearsals", [], source_words=words, file_name="x") == [
        "Choir rehearsals"
    ]
    assert offered_names("Notes, thoughts", [], source_words=words, file_name="scan-0042") == []


def test_the_simpler_question_allows_only_the_title_page_and_pages_shown() -> None:
    bare = plan_schema(claims=3, max_pages=2, max_contradictions=1, names=["Choir concert"],
                       new_pages=False)  # fmt: skip
    assert bare["properties"]["pages"]["maxItems"] == 0
    assert bare["properties"]["title"] == {"enum": ["Choir concert"]}
    shown = plan_schema(claims=3, max_pages=2, max_contradictions=1, names=["Choir concert"],
                        pages=["Town choir"], new_pages=False)  # fmt: skip
    assert shown["properties"]["pages"]["maxItems"] == 2
    assert shown["properties"]["pages"]["items"]["properties"]["page"] == {"enum": ["Town choir"]}
    free = plan_schema(claims=3, max_pages=2, max_contradictions=1, new_pages=False)
    assert free["properties"]["pages"]["maxItems"] == 0
    assert "pattern" in free["properties"]["title"]
