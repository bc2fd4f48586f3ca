"""What the user asks the scan to ignore: sentences, notes, folders — kept per vault, honoured
by every scan mode, said in the run's report, and refused clearly when it cannot be used."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.flows.hunter import load_last_run
from desktop.flows.hunter.ignored import IgnoreListUnreadable, IgnoreStore
from desktop.flows.review import (
    BadInput,
    ignore_folder,
    ignore_note,
    ignore_sentence,
    list_ignored,
    remove_ignored,
)
from desktop.vault.errors import NoteNotFound, StateUnsafe
from desktop.vault.index import VaultIndex
from tests import learning_vault as lv


@pytest.fixture
def index(tmp_path: Path) -> Iterator[VaultIndex]:
    root = tmp_path / "vault"
    root.mkdir()
    idx = lv.make_index(root)
    yield idx
    idx.close()


def test_ignored_sentence_note_and_folder_are_left_out_and_said(index: VaultIndex) -> None:
    root = index.root
    first = lv.run_scan(index)
    assert len(first.pairs) == 15 and first.ignored.message == ""
    omega = next(p for p in first.pairs if lv.is_omega(p))

    item, added = ignore_sentence(root, omega.quote_b, note=omega.path_b)
    assert added and item.note == omega.path_b
    ignore_note(root, "Alpha limits")  # a basename works, like every review command
    ignore_folder(root, "Gateways/")
    second = lv.run_scan(index)

    # The folder holds every gateway note: only the omega couple is compared, and the judge
    # finds its other sentence pair now that the ignored one is out of the note.
    assert [p.note_a for p in second.pairs] == ["Omega budget"]
    shown = second.pairs[0]
    assert omega.quote_b not in (shown.quote_a, shown.quote_b)
    assert {shown.quote_a, shown.quote_b} == {lv.KEEPS, lv.DROPS}
    r = second.ignored
    # The note ignored on its own counts as a note; the folder's other 27 as the folder's.
    assert (r.sentences, r.occurrences, r.notes, r.folders, r.notes_in_folders) == (1, 1, 1, 1, 27)
    assert r.message == (
        "left out 1 sentence, 1 note and 1 folder (27 notes in it) you asked to ignore"
    )
    # An ignored note is the user's wish, not a problem: not listed as excluded.
    assert not [e for e in second.excluded if e.path.startswith("Gateways/")]
    kept = load_last_run(root)
    assert kept is not None and kept.ignored == r


def test_an_ignored_note_is_left_out_of_classic_and_focus_scans(index: VaultIndex) -> None:
    root = index.root
    ignore_note(root, "Gateways/Alpha limits.md")
    run = lv.run_scan(index, mode="whole-vault")
    assert all("Alpha limits" not in (p.note_a, p.note_b) for p in run.pairs)
    assert len(run.pairs) == 14 and run.ignored.notes == 1
    assert run.ignored.message == "left out 1 note you asked to ignore"
    # Focus on the ignored note itself: the user asked for that note, it is compared.
    focus = lv.run_scan(index, mode="focus", focus="Gateways/Alpha limits.md")
    assert focus.ignored.notes == 0
    assert any("Alpha limits" in (p.note_a, p.note_b) for p in focus.pairs)


def test_the_list_is_kept_per_vault_and_items_come_off(index: VaultIndex) -> None:
    root = index.root
    ignore_folder(root, "Gateways")
    _, again = ignore_folder(root, str(root / "Gateways"))  # an absolute path inside works
    assert not again
    ignore_sentence(root, "The omega queue keeps   every message for thirty days.")
    ignore_note(root, "Omega budget")
    assert [(i.kind, i.value) for i in list_ignored(root)] == [
        ("folder", "Gateways"),
        ("sentence", "The omega queue keeps every message for thirty days."),
        ("note", "Substrates/Omega budget.md"),
    ]
    data = json.loads((root / ".antinomy" / "ignored.json").read_text())
    assert data["format"] == "antinomy-ignored/1"
    assert remove_ignored(root, 2).kind == "sentence"
    assert remove_ignored(root, "note:Substrates/Omega budget.md").kind == "note"
    assert [i.value for i in list_ignored(root)] == ["Gateways"]
    run = lv.run_scan(index)
    assert [p.note_a for p in run.pairs] == ["Omega budget"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: ignore_sentence(r, "  too  short "), "is too short to ignore as a sentence"),
        (lambda r: ignore_folder(r, "../elsewhere"), "is outside the vault"),
        (lambda r: ignore_folder(r, "No such folder"), "There is no folder No such folder"),
        (lambda r: ignore_folder(r, ".antinomy"), "is never scanned anyway"),
        (lambda r: ignore_folder(r, "/"), "is outside the vault"),
        (lambda r: remove_ignored(r, 3), "There is no ignored item number 3: nothing is ignored"),
        (lambda r: remove_ignored(r, "page:x"), "names no ignored item"),
        (lambda r: remove_ignored(r, "note:Nope.md"), "No note 'Nope.md' is ignored"),
    ],
)
def test_bad_input_is_refused_with_the_reason(index: VaultIndex, call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match=message):
        call(index.root)
    assert list_ignored(index.root) == []


def test_an_unknown_note_is_refused(index: VaultIndex) -> None:
    with pytest.raises(NoteNotFound):
        ignore_note(index.root, "No such note")


def test_a_damaged_list_is_never_overwritten_and_the_scan_says_so(index: VaultIndex) -> None:
    root = index.root
    target = root / ".antinomy" / "ignored.json"
    target.write_text("{not json", encoding="utf-8")
    with pytest.raises(IgnoreListUnreadable, match=r"ignored.json cannot be read .*nothing was"):
        ignore_note(root, "Omega budget")
    assert target.read_text(encoding="utf-8") == "{not json"
    run = lv.run_scan(index)
    assert len(run.pairs) == 15
    assert run.ignored.error.startswith("the list of what you asked to ignore could not be read")


def test_the_list_is_never_written_through_a_link(index: VaultIndex, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}", encoding="utf-8")
    os.symlink(elsewhere, index.root / ".antinomy" / "ignored.json")
    with pytest.raises(StateUnsafe):
        IgnoreStore(index.root).read()
    with pytest.raises(StateUnsafe):
        ignore_note(index.root, "Omega budget")
    assert elsewhere.read_text(encoding="utf-8") == "{}"
