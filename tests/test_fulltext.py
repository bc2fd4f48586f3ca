"""The full-text query plan: stop words, phrases, prefixes, and a ranking cost that stays
bounded on a big vault (words in most notes only match titles)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.vault import fulltext
from desktop.vault.fulltext import plan_query, query_words
from desktop.vault.index import VaultIndex
from desktop.vault.search import fts_query, full_text, search


def test_stop_words_and_short_words_are_dropped_unless_nothing_is_left() -> None:
    assert query_words("when do we deploy on Friday") == ([], ["deploy", "Friday"])
    assert query_words("où est le jardin") == ([], ["jardin"])
    assert query_words("the and") == ([], ["the", "and"])  # nothing else: keep them
    assert query_words("on a") == ([], ["on", "a"])
    assert query_words("Deploy deploy DEPLOY") == ([], ["Deploy"])


def test_phrases_stay_phrases_and_the_last_word_is_a_prefix() -> None:
    assert query_words('"release window" tomato') == (["release window"], ["tomato"])
    assert query_words('"friday"') == ([], ["friday"])  # a one-word phrase is a word
    assert fts_query('"release window" tomato') == '"tomato"* OR "release window"'
    assert fts_query('deploy on "friday"') == '"deploy" OR "friday"*'
    assert fts_query("   ") is None


def test_fts_syntax_in_the_query_is_inert() -> None:
    match = fts_query('NOT "OR" (* title: NEAR(a b)')
    assert match is not None
    assert all(part.startswith('"') for part in match.split(" OR "))


@pytest.fixture
def big_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[VaultIndex]:
    """Twelve notes standing for a big vault: the bound is lowered to 4 matches."""
    monkeypatch.setattr(fulltext, "RANKED_MATCHES", 4)
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(10):
        (root / f"Meeting {i}.md").write_text(
            f"# Meeting {i}\n\nThe team met about the project and the meeting plan.\n",
            encoding="utf-8",
        )
    (root / "Tomatoes.md").write_text(
        "# Tomatoes\n\nThe team plants tomatoes after the last frost.\n", encoding="utf-8"
    )
    (root / "Release window.md").write_text(
        "# Release window\n\nThe team ships on Fridays, in the release window.\n",
        encoding="utf-8",
    )
    index = VaultIndex(root)
    index.update()
    yield index
    index.close()


def test_a_word_in_most_notes_only_matches_titles(big_vault: VaultIndex) -> None:
    plan = plan_query(big_vault.db, "team meeting", notes=12)
    # "team" is in every note and no title: dropped. "meeting" is in 10 of 12 notes
    # (IDF ~0) and in 10 titles: past the bound even there, so dropped too.
    assert plan.ranked == () and plan.match is None
    assert full_text(big_vault, "team meeting", 10) == []
    plan = plan_query(big_vault.db, "team tomatoes", notes=12)
    assert plan.ranked == ("tomatoes",) and plan.match == '"tomatoes"*'
    assert full_text(big_vault, "team tomatoes", 10) == ["Tomatoes.md"]


def test_the_rarest_words_are_ranked_within_the_bound(big_vault: VaultIndex) -> None:
    plan = plan_query(big_vault.db, "project release tomatoes", notes=12)
    # project: 10 notes (most: titles only, and in none); release, tomatoes: 1 each.
    assert plan.ranked == ("release", "tomatoes")
    assert set(full_text(big_vault, "project release tomatoes", 10)) == {
        "Release window.md",
        "Tomatoes.md",
    }


def test_a_small_vault_ranks_every_word(
    big_vault: VaultIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fulltext, "RANKED_MATCHES", 1500)
    plan = plan_query(big_vault.db, "team tomatoes", notes=12)
    assert plan.ranked == ("team", "tomatoes") and plan.titles_only == ()
    assert len(full_text(big_vault, "team tomatoes", 20)) == 12


def test_search_still_finds_a_title_word_in_a_big_vault(big_vault: VaultIndex) -> None:
    hits = search(big_vault, "window")
    assert [h.note.path for h in hits] == ["Release window.md"]
    assert "«window»" in (hits[0].snippet or "")
