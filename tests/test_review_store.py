"""Dismissals kept in ``.antinomy/dismissed.json`` (the vault's option) instead of the notes.

The notes stay byte-identical; the dismissal is still one journaled transaction that
``undo_operation`` takes back; the next scan drops the pair (a re-index changes nothing);
the Dismissed list and the learning labels read the file with the notes' own lists, so
switching the option back loses nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.hunter import ScanRun, scan
from desktop.flows.hunter.dismissals import STORE_PATH, DismissalsUnreadable
from desktop.flows.hunter.labels import LabelStore
from desktop.flows.review import (
    DismissedPair,
    RenameFix,
    dismiss_pair,
    find_rename_fixes,
    fix_renames,
    list_dismissed,
    undismiss_pair,
)
from desktop.vault.errors import StateUnsafe
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import PlanInvalid, Write, list_history, undo_operation
from desktop.vault.vectors import EmbeddingModel
from tests.fakes import ScriptedGenerator, confirming_judge
from tests.test_index import BagOfWords
from tests.test_review_hunter import FORWARD, NOTES
from tests.vault_files import snapshot

REST, STREAK = "Tensions/Rest days.md", "Substrates/Streak.md"


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    idx = VaultIndex(root, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    idx.update()
    yield idx
    idx.close()


def run(index: VaultIndex) -> ScanRun:
    return scan(index, ScriptedGenerator(answers=[FORWARD]), judge=confirming_judge())


def shown(index: VaultIndex) -> list[tuple[str, str]]:
    result = run(index)
    assert result.status == "ok"
    return [(p.path_a, p.path_b) for p in result.pairs]


def stored_pairs(root: Path) -> list[tuple[str, str]]:
    return [(p["a"], p["b"]) for p in json.loads((root / STORE_PATH).read_text())["pairs"]]


def test_a_dismissal_kept_in_antinomy_leaves_the_notes_and_is_undone(index: VaultIndex) -> None:
    root = index.root
    assert shown(index) == [(REST, STREAK)]
    notes = snapshot(root)
    result = dismiss_pair(root, REST, STREAK, on_change=index.update_paths, keep_in="antinomy")
    assert snapshot(root) == notes  # both notes byte-identical
    assert result.changed == () and result.created == (STORE_PATH,)
    assert result.summary == (
        "Dismiss the pair Rest days ↔ Streak (not a tension; kept in .antinomy/, notes untouched)"
    )
    assert [h.operation_id for h in list_history(root)] == [result.operation_id]
    assert stored_pairs(root) == [(STREAK, REST)]

    later = run(index)
    assert later.pairs == () and later.dropped.get("dismissed") == 1
    assert list_dismissed(root) == [
        DismissedPair("Rest days", "Streak", REST, STREAK, (), (), True, ("antinomy",))
    ]

    index.rebuild()  # a re-index does not touch it
    assert shown(index) == []

    undo_operation(root, result.operation_id or "")
    assert not (root / STORE_PATH).exists()
    assert snapshot(root) == notes
    assert shown(index) == [(REST, STREAK)]
    assert list_dismissed(root) == []


def test_switching_the_option_back_keeps_the_pair_hidden(index: VaultIndex) -> None:
    root = index.root
    notes = snapshot(root)
    dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    again = dismiss_pair(root, STREAK, REST, keep_in="notes")  # the option switched off
    assert again.operation_id is None  # already dismissed: nothing written twice
    assert snapshot(root) == notes
    assert shown(index) == []
    # A pair dismissed in the notes is not copied into the file either.
    (root / "Substrates" / "Garden.md").write_text(
        "---\ntype: substrate\nhunter_false_positives: [Streak]\n---\nTomatoes go out in May.\n"
    )
    assert dismiss_pair(root, "Substrates/Garden.md", STREAK, keep_in="antinomy").changed == ()
    kept = {(p.a, p.b): p.kept_in for p in list_dismissed(root)}
    assert kept == {("Garden", "Streak"): ("notes",), ("Rest days", "Streak"): ("antinomy",)}
    # Undismiss takes the pair out wherever it is.
    result = undismiss_pair(root, REST, STREAK)
    assert result.changed == (STORE_PATH,) and stored_pairs(root) == []
    assert shown(index) == [(REST, STREAK)]


def test_a_pair_in_both_places_is_undismissed_from_both_in_one_operation(
    index: VaultIndex,
) -> None:
    root = index.root
    notes = snapshot(root)
    dismiss_pair(root, REST, STREAK, keep_in="notes")
    (root / STORE_PATH).write_text(
        json.dumps({"format": "antinomy-dismissed/1", "pairs": [{"a": STREAK, "b": REST}]})
    )
    assert list_dismissed(root)[0].kept_in == ("notes", "antinomy")
    result = undismiss_pair(root, "Rest days", "Streak")
    assert set(result.changed) == {REST, STREAK, STORE_PATH}
    assert snapshot(root) == notes and stored_pairs(root) == []
    assert len(list_history(root)) == 2


def test_the_learning_labels_are_rebuilt_from_the_file_too(index: VaultIndex) -> None:
    root = index.root
    dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    (root / ".antinomy" / "learned.json").unlink()
    labels = LabelStore(root).read().labels
    assert (STREAK, REST) in labels
    label = labels[(STREAK, REST)]
    assert (label.action, label.positive, label.source) == ("dismiss", False, "notes")


def test_a_stored_pair_whose_note_is_gone_is_listed_and_can_be_undismissed(
    index: VaultIndex,
) -> None:
    root = index.root
    dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    (root / STREAK).unlink()
    assert list_dismissed(root) == [
        DismissedPair(
            "Rest days", "Substrates/Streak", REST, None, ("Substrates/Streak",), (), True,
            ("antinomy",),
        )
    ]  # fmt: skip
    result = undismiss_pair(root, REST, "Substrates/Streak")
    assert (
        result.summary
        == "Undismiss the pair Rest days ↔ Substrates/Streak (the Hunter may show it again)"
    )
    assert stored_pairs(root) == [] and list_dismissed(root) == []


def test_a_damaged_file_is_named_and_nothing_is_written(index: VaultIndex) -> None:
    root = index.root
    (root / STORE_PATH).write_text("{not json")
    notes = snapshot(root)
    expected = rf"{STORE_PATH} is not JSON .*Nothing was changed — restore it"
    with pytest.raises(DismissalsUnreadable, match=expected):
        dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    with pytest.raises(DismissalsUnreadable, match=expected):
        list_dismissed(root)
    with pytest.raises(DismissalsUnreadable, match=expected):
        run(index)
    (root / STORE_PATH).write_text('{"format": "antinomy-dismissed/1", "pairs": [{"a": "x.md"}]}')
    with pytest.raises(DismissalsUnreadable, match=r"pair 1 is not two different note paths"):
        dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    assert snapshot(root) == notes and list_history(root) == ()


def test_only_the_dismissals_file_of_antinomy_is_a_write_target(tmp_path: Path) -> None:
    Write.create(STORE_PATH, "{}")
    for refused in (
        ".antinomy/learned.json",
        ".antinomy/dismissed.json/x",
        ".Antinomy/dismissed.json",
    ):
        with pytest.raises(PlanInvalid, match="which Antinomy never writes"):
            Write.create(refused, "{}")


def test_the_file_is_never_written_or_read_through_a_link(
    index: VaultIndex, tmp_path: Path
) -> None:
    root = index.root
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(
        json.dumps({"format": "antinomy-dismissed/1", "pairs": [{"a": REST, "b": STREAK}]})
    )
    os.symlink(elsewhere, root / STORE_PATH)
    before = elsewhere.read_bytes()
    with pytest.raises(StateUnsafe, match="is a symbolic link"):
        list_dismissed(root)
    with pytest.raises(StateUnsafe, match="is a symbolic link"):
        dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    assert elsewhere.read_bytes() == before


def test_a_moved_note_keeps_its_dismissal_kept_in_antinomy(index: VaultIndex) -> None:
    root = index.root
    dismiss_pair(root, REST, STREAK, keep_in="antinomy")
    (root / "Archive").mkdir()
    (root / STREAK).rename(root / "Archive" / "Streak.md")
    report = index.update()
    assert report.renamed == ((STREAK, "Archive/Streak.md"),)
    assert find_rename_fixes(root, report.renamed) == [
        RenameFix("Substrates/Streak", "Archive/Streak", "Archive/Streak.md", (STORE_PATH,))
    ]
    assert list_dismissed(root)[0].missing == ("Substrates/Streak",)
    result, _fixes = fix_renames(root, report.renamed)
    assert result.changed == (STORE_PATH,)
    assert stored_pairs(root) == [("Archive/Streak.md", REST)]
    assert list_dismissed(root) == [
        DismissedPair("Rest days", "Streak", REST, "Archive/Streak.md", (), (), True, ("antinomy",))
    ]
    undo_operation(root, result.operation_id or "")
    assert stored_pairs(root) == [(STREAK, REST)]
