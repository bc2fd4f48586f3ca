"""Two writers of one index: the window's watcher re-index while ``antinomy index`` runs
in a shell, and a scan reading the notes on another thread of the window.

SQLite in WAL mode lets a reader and a writer work at once, and ``BEGIN IMMEDIATE``
waits for another writer. But a write on a connection whose read is still in progress
starts from that read's snapshot; once another writer has committed, SQLite refuses it
at once ("database is locked", the busy wait does not apply). Each thread therefore
has its own connection.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from desktop.vault.index import VaultIndex


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(40):
        (root / f"Note {i}.md").write_text(f"# Note {i}\n\nThe body of note {i}.\n")
    return root


def test_a_write_after_another_writers_commit_waits_instead_of_failing(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    window = VaultIndex(root)
    window.update()
    reading, go_on = threading.Event(), threading.Event()
    read: list[str] = []

    def scan_reads_the_notes() -> None:  # the window's read worker
        notes = window.bodies()
        read.append(next(notes)[0])
        reading.set()
        go_on.wait(10)
        read.extend(path for path, *_ in notes)

    reader = threading.Thread(target=scan_reads_the_notes)
    reader.start()
    assert reading.wait(10)
    shell = VaultIndex(root)  # `antinomy index` in a shell: another connection
    (root / "Note 1.md").write_text("# Note 1\n\nEdited, then indexed from the shell.\n")
    assert shell.update().updated == ("Note 1.md",)
    shell.close()

    (root / "Note 2.md").write_text("# Note 2\n\nSaved in the editor.\n")
    outcome: list[object] = []

    def watcher_reindexes() -> None:  # the window's index worker
        t0 = time.perf_counter()
        try:
            outcome.append(window.update_paths(["Note 2.md"]))
        except sqlite3.OperationalError as exc:
            outcome.append(exc)
        outcome.append(time.perf_counter() - t0)

    watcher = threading.Thread(target=watcher_reindexes)
    watcher.start()
    watcher.join(30)
    go_on.set()
    reader.join(10)
    report, seconds = outcome
    assert not isinstance(report, sqlite3.OperationalError), f"refused: {report}"
    assert report.updated == ("Note 2.md",)  # type: ignore[attr-defined]
    assert seconds < 5.0  # type: ignore[operator]
    assert len(read) == 40  # the scan's read went on to the end, on its own snapshot
    note = window.note("Note 2.md")
    assert note is not None and "Saved in the editor" in note.body
    note = window.note("Note 1.md")
    assert note is not None and "from the shell" in note.body
    window.close()


def test_closing_the_index_closes_every_threads_connection(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    index = VaultIndex(root)
    index.update()
    counted: list[int] = []
    worker = threading.Thread(target=lambda: counted.append(len(index.notes())))
    worker.start()
    worker.join(10)
    assert counted == [40]
    index.close()
    with pytest.raises(sqlite3.ProgrammingError):
        index.notes()  # the opening thread's connection
    errors: list[BaseException] = []

    def use() -> None:  # from threads that never used the index
        try:
            index.notes()
        except sqlite3.ProgrammingError as exc:
            errors.append(exc)

    for _ in range(2):
        t = threading.Thread(target=use)
        t.start()
        t.join(10)
    assert len(errors) == 2
