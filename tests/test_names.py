"""The one resolver of note names the user types (CLI and GUI alike)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.flows.review.vaultfiles import VaultFiles
from desktop.vault.errors import AmbiguousNote, NoteNotFound
from desktop.vault.index import VaultIndex, stored_aliases
from desktop.vault.names import resolve_note_name, strip_wikilink

ROOT = Path("/vault")
PATHS = ["Archive/Roadmap.md", "Projects/Roadmap.md", "Run before work.md", "Sub/Deep Note.md"]


def resolve(name: str, aliases: dict[str, list[str]] | None = None) -> str:
    return resolve_note_name(
        name, root=ROOT, paths=PATHS, aliases=(lambda: aliases) if aliases is not None else None
    )


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("Run before work", "Run before work.md"),
        ("run BEFORE work", "Run before work.md"),
        ("Run before work.md", "Run before work.md"),
        ("[[Run before work]]", "Run before work.md"),
        ("[[Run before work|shown]]", "Run before work.md"),
        ("[[Run before work#Heading|shown]]", "Run before work.md"),
        ("Deep Note", "Sub/Deep Note.md"),
        ("Sub/Deep Note", "Sub/Deep Note.md"),
        ("sub/deep note.md", "Sub/Deep Note.md"),
        ("./Sub/Deep Note.md", "Sub/Deep Note.md"),
        ("Sub\\Deep Note.md", "Sub/Deep Note.md"),
        ("/vault/Sub/Deep Note.md", "Sub/Deep Note.md"),
        ("Projects/Roadmap", "Projects/Roadmap.md"),
        ("[[Projects/Roadmap]]", "Projects/Roadmap.md"),
    ],
)
def test_every_way_of_naming_a_note(name: str, path: str) -> None:
    assert resolve(name) == path


def test_a_shared_basename_is_ambiguous_with_its_candidates() -> None:
    with pytest.raises(AmbiguousNote, match=r"'\[\[roadmap\]\]' is the name of 2 notes") as info:
        resolve("[[roadmap]]")
    assert info.value.candidates == ("Archive/Roadmap.md", "Projects/Roadmap.md")


def test_aliases_are_a_fallback_never_a_shadow() -> None:
    aliases = {"Morning runs": ["Run before work.md"], "Deep Note": ["Run before work.md"]}
    assert resolve("morning runs", aliases) == "Run before work.md"
    assert resolve("[[Morning runs]]", aliases) == "Run before work.md"
    # A basename wins over another note's alias of the same text.
    assert resolve("Deep Note", aliases) == "Sub/Deep Note.md"
    with pytest.raises(AmbiguousNote, match="is an alias of 2 notes"):
        resolve("Plan", {"plan": ["Archive/Roadmap.md"], "Plan": ["Projects/Roadmap.md"]})
    # An alias left in the index by a note now gone resolves to nothing.
    with pytest.raises(NoteNotFound):
        resolve("Old", {"Old": ["Gone.md"]})


def test_names_that_are_no_note() -> None:
    with pytest.raises(NoteNotFound, match=r"No note 'Nobody' in the vault /vault — check"):
        resolve("Nobody")
    with pytest.raises(NoteNotFound, match="is outside the vault"):
        resolve("/elsewhere/Run before work.md")
    with pytest.raises(NoteNotFound, match="No note given"):
        resolve("  [[ ]] ")


@given(st.text(max_size=40))
def test_any_text_resolves_to_a_known_path_or_a_clear_error(name: str) -> None:
    try:
        assert resolve(name, {"x": ["Run before work.md"]}) in PATHS
    except (NoteNotFound, AmbiguousNote) as exc:
        assert str(exc)


def test_strip_wikilink_leaves_plain_text() -> None:
    assert strip_wikilink("  Plain  ") == "Plain"
    assert strip_wikilink("[[A#h|b]]") == "A"


def test_the_index_and_the_files_resolve_alike(tmp_path: Path) -> None:
    (tmp_path / "Sub").mkdir()
    (tmp_path / "Sub" / "Deep Note.md").write_text("---\naliases: [Abyss]\n---\nbody\n")
    (tmp_path / "Top.md").write_text("top\n")
    root = tmp_path.resolve()
    assert stored_aliases(root) == {}  # no index yet: no aliases, no error
    index = VaultIndex(root)
    try:
        index.update()
        assert index.aliases() == {"Abyss": ["Sub/Deep Note.md"]}
        files = VaultFiles(root)
        for name in ("abyss", "[[Deep Note]]", "Sub/deep note", "Top"):
            assert index.locate(name) == files.locate(name)
    finally:
        index.close()
    assert stored_aliases(root) == {"Abyss": ["Sub/Deep Note.md"]}
