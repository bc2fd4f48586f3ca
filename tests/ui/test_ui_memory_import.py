"""Importing a conversation transcript from the window: the Memory panel's button, File ▸
Import conversation transcript…, a file dropped on the window or the panel; the CLI's
report; bad files refused with the flow's message and nothing lost; the empty panel says
how to start."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.flows.memory import import_transcript, pending_batches
from desktop.ui.panels.memory import QtMemoryPanel

DATA = Path(__file__).resolve().parents[1] / "data" / "memory"
TRANSCRIPT = DATA / "claude_transcript.jsonl"


def memory_panel(window) -> QtMemoryPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("memory")
    assert isinstance(panel, QtMemoryPanel)
    return panel


def cli_report(tmp_path: Path, file: Path) -> str:
    """What ``antinomy capture import`` prints for ``file`` (into a vault of its own)."""
    other = tmp_path / "other-vault"
    other.mkdir()
    return import_transcript(other, file).summary()


def drop(target: QWidget, *files: Path, with_text: bool = False) -> None:
    """Drag ``files`` onto ``target`` and drop them, as a file manager would: through the
    event filters (Ingest watches the window's drops too). ``with_text``: the drag also
    carries the paths as plain text, as most file managers' drags do."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(f)) for f in files])
    if with_text:
        mime.setText("\n".join(QUrl.fromLocalFile(str(f)).toString() for f in files))
    args = (
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    enter = QDragEnterEvent(QPoint(10, 10), *args)
    QCoreApplication.sendEvent(target, enter)
    assert enter.isAccepted(), "the drag was refused"
    QCoreApplication.sendEvent(target, QDropEvent(QPointF(10, 10), *args))


def test_empty_panel_says_how_to_start_and_the_button_imports_with_the_cli_report(
    qtbot, make_window, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    window.show_panel("memory")
    qtbot.waitUntil(lambda: panel.listing is not None, timeout=10000)
    assert panel.empty_hint.isVisible()
    assert "import a conversation transcript" in panel.empty_hint.text()
    assert "Install hooks" in panel.empty_hint.text()
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(TRANSCRIPT)], ""))
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000) as shown:
        panel.transcripts.button.click()
    [outcome] = shown.args[0]
    assert outcome.report is not None and outcome.report.secrets_masked == 1
    expected = cli_report(tmp_path, TRANSCRIPT)
    assert panel.transcripts.report.text() == f"{expected} (1 unreadable line ignored)"
    assert panel.transcripts.state.text().startswith("Imported 1 transcript —")
    # The captured lines are pending, masked, and listed; the hint is gone.
    assert [b.lines for b in pending_batches(vault)] == [6]
    raw = (vault / ".antinomy/raw/2026-11-28.tsv").read_text()
    assert "HEROKU_API_KEY=[secret:password]" in raw
    qtbot.waitUntil(lambda: panel.pending.topLevelItemCount() == 1, timeout=10000)
    assert not panel.empty_hint.isVisible()


def test_file_menu_imports_into_the_memory_panel(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    file_menu = window.menuBar().actions()[0].menu()
    assert window.import_action in file_menu.actions()
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(TRANSCRIPT)], ""))
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000):
        window.import_action.trigger()
    assert window.tabs.currentWidget() is panel
    assert [b.lines for b in pending_batches(vault)] == [6]


def test_a_transcript_dropped_on_the_window_is_imported(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    window.tabs.setCurrentIndex(0)  # another tab is in front
    assert window.acceptDrops() and panel.acceptDrops()
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000):
        drop(window, TRANSCRIPT)
    assert window.tabs.currentWidget() is panel
    assert [b.lines for b in pending_batches(vault)] == [6]
    # A note dropped on the window is the Ingest panel's, not memory's.
    ingest = window.panel("ingest")
    drop(window, vault / "Decisions" / "ADR-0011 Friday release window.md")
    assert window.tabs.currentWidget() is ingest
    assert ingest.runner.running  # planning it (nothing is written before Approve)
    assert not panel.transcripts.importer.running  # an import would have started at once
    ingest.runner.stop()


def test_a_bad_file_is_refused_with_the_flows_message_and_nothing_is_lost(
    qtbot, make_window, vault: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000):
        drop(panel, TRANSCRIPT)
    raw = vault / ".antinomy/raw/2026-11-28.tsv"
    before = raw.read_bytes()
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"a": 1}\nhello\n')
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000) as shown:
        drop(panel, picture, notes, tmp_path)
    outcomes = shown.args[0]
    assert [o.report for o in outcomes] == [None, None, None]
    lines = panel.transcripts.report.text().splitlines()
    assert lines == [
        f"photo.png: not imported — {picture} is not UTF-8 text — is it a Claude Code transcript?",
        f"notes.jsonl: not imported — {notes} has no user or assistant messages (1 unreadable "
        "line) — give a Claude Code transcript (.jsonl, one JSON record per line).",
        f"{tmp_path.name}: not imported — {tmp_path} is a folder — give one transcript file "
        "(.jsonl) inside it.",
    ]
    assert panel.transcripts.state.text() == (
        "Imported 0 transcripts; 3 refused, nothing of them kept."
    )
    assert raw.read_bytes() == before  # what was captured stays as it was
    assert [e.what for e in window.errors.errors][-3:] == [
        "Importing photo.png",
        "Importing notes.jsonl",
        f"Importing {tmp_path.name}",
    ]


def test_import_shows_progress_and_the_button_waits(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    window.show_panel("memory")
    started: list[int] = []
    panel.transcripts.importer.sig_import_started.connect(started.append)
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000):
        assert panel.import_files([TRANSCRIPT])
        assert panel.transcripts.progress.isVisible()
        assert not panel.transcripts.button.isEnabled()
    assert started == [1]
    assert panel.transcripts.button.isEnabled()
    assert not panel.transcripts.progress.isVisible()


def test_a_file_dropped_on_a_text_field_goes_where_a_drop_on_the_window_goes(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    search = window.panel("notes").search_box
    window.tabs.setCurrentIndex(0)
    # A transcript dropped on the search box is imported, not typed into the box.
    with qtbot.waitSignal(panel.sig_import_shown, timeout=15000):
        drop(search, TRANSCRIPT, with_text=True)
    assert search.text() == ""
    assert window.tabs.currentWidget() is panel
    assert [b.lines for b in pending_batches(vault)] == [6]
    # A source dropped there is planned by Ingest.
    ingest = window.panel("ingest")
    drop(search, vault / "Decisions" / "ADR-0011 Friday release window.md", with_text=True)
    assert search.text() == ""
    assert window.tabs.currentWidget() is ingest
    assert ingest.runner.running
    ingest.runner.stop()
