"""What the window derives from the files, without a window: the pairs' notes now, an
operation in words, and an incremental re-index that meets a locked index."""

from __future__ import annotations

from pathlib import Path

from desktop.flows.review import defeat_note, dismiss_pair, elevate_tension, undismiss_pair
from desktop.ui.operations.titles import entry_title, many_title, operation_title
from desktop.ui.vault_state import dismissed_on_disk, read_note_now, read_pairs_now
from desktop.ui.watcher import journal_mark, snapshot
from desktop.vault.transactions import list_history, undo_operation
from tests.ui.runs import many_pairs

TENSION = "Tensions/Base miles vs hard efforts.md"


def test_pairs_now_follow_the_files(vault: Path) -> None:
    a, b = many_pairs(vault, 2)
    now = read_pairs_now(vault, [a, b])
    assert not now.dismissed and not now.stale
    assert now.hashes[a.path_a] == a.sha_a
    # A dismissal written in one note only hides the pair (the Hunter's rule).
    note = vault / a.path_b
    text = note.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = f"---\nhunter_false_positives: [{Path(a.path_a).stem}]\n" + text[4:]
    else:
        text = f"---\nhunter_false_positives: [{Path(a.path_a).stem}]\n---\n" + text
    note.write_text(text, encoding="utf-8")
    assert read_pairs_now(vault, [a, b]).dismissed == {a.key()}
    assert dismissed_on_disk(vault, a.path_a, a.path_b)
    # A quote edited away, or a note gone: the pair is stale, and says why.
    body = (vault / b.path_a).read_text(encoding="utf-8")
    (vault / b.path_a).write_text(body.replace(b.quote_a, "something else"), encoding="utf-8")
    now = read_pairs_now(vault, [a, b])
    assert now.stale[b.key()] == f"the quote from {Path(b.path_a).stem} is no longer in the note"
    (vault / b.path_a).write_text(body, encoding="utf-8")
    (vault / b.path_b).unlink()
    gone = read_pairs_now(vault, [b])
    assert gone.stale[b.key()] == f"{Path(b.path_b).stem}: no longer in the vault"
    assert b.path_b not in gone.hashes


def test_a_decided_note_says_how(vault: Path) -> None:
    elevate_tension(vault, TENSION, title="Easy most days", if_clause="x", then_clause="y")
    note = read_note_now(vault, TENSION)
    assert note.kind_text() == "defeated, open"
    assert note.decided_text() == "✓ elevated to Easy most days"
    other = "Substrates/Run before work.md"
    defeat_note(vault, other, motive="outgrown", replaced_by="Easy most days")
    assert read_note_now(vault, other).decided_text() == "✓ defeated: outgrown → Easy most days"
    assert read_note_now(vault, "Inbox/Quick capture.md").kind_text() == ""


def test_operations_in_words(vault: Path) -> None:
    a, b = "Substrates/Run before work.md", "Substrates/Easy runs build the base.md"
    dismiss_pair(vault, a, b)
    undismissed = undismiss_pair(vault, a, b)
    elevate_tension(vault, TENSION, title="Easy most days", if_clause="x", then_clause="y")
    undo_operation(vault, undismissed.operation_id or "")
    entries = list_history(vault)
    by_id = {e.operation_id: e for e in entries}
    titles = [entry_title(e, by_id) for e in entries]
    assert titles == [
        "Undone: Undismissed: Run before work ↔ Easy runs build the base",
        "Elevated: Base miles vs hard efforts → principle Easy most days",
        "Undismissed: Run before work ↔ Easy runs build the base",
        "Dismissed: Run before work ↔ Easy runs build the base",
    ]
    # An undo taken back puts the operation in effect again.
    redo = undo_operation(vault, entries[0].operation_id)
    entries = list_history(vault)
    by_id = {e.operation_id: e for e in entries}
    assert entry_title(by_id[redo.operation_id], by_id) == (
        "Redone: Undismissed: Run before work ↔ Easy runs build the base"
    )
    # One note already listed the other: only one was written; the names come from the summary.
    one = [("replace", a)]
    summary = "Dismiss the pair Run before work ↔ Easy runs build the base (not a tension)"
    assert operation_title("dismiss", one, summary) == (
        "Dismissed: Run before work ↔ Easy runs build the base"
    )
    # Kinds without words of their own keep their summary; a record without one, its id.
    assert operation_title("ingest", [("create", "x.md")], "Ingest notes.pdf") == "Ingest notes.pdf"
    assert operation_title("memory", [], "", "memory-20261202T071141-7f1d65ac") == (
        "memory-20261202T071141-7f1d65ac"
    )
    assert many_title("dismiss", ["Dismissed: a ↔ b"] * 3) == "Dismissed 3 pairs"


def test_the_watcher_reads_the_journal_without_creating_it(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("hello\n")
    _files, _folders, journal = snapshot(tmp_path)
    assert journal == () and not (tmp_path / ".antinomy").exists()
    done = tmp_path / ".antinomy" / "journal" / "done"
    done.mkdir(parents=True)
    (done / "op-1.json").write_text("{}")
    (done / "op-2.json.tmp").write_text("{")  # a record being written is not one yet
    assert [name for name, _size, _mtime in journal_mark(tmp_path)] == ["op-1.json"]
    assert str(done) in snapshot(tmp_path)[1]
