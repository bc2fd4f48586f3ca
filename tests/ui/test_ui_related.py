"""The Related panel: the preview's nearest notes with scores, one-click open, and
"Scan this note" scanning the note in the preview whatever the Notes list shows."""

from __future__ import annotations

from desktop.ui.panels.preview import QtPreviewPanel
from desktop.ui.panels.related import QtRelatedPanel
from desktop.ui.panels.tensions import QtTensionsPanel
from tests.ui.scans import A, B

NOTE = A  # "A run should leave me spent"


def _related(window) -> QtRelatedPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("related")
    assert isinstance(panel, QtRelatedPanel)
    return panel


def _open(qtbot, window, path: str) -> QtRelatedPanel:  # type: ignore[no-untyped-def]
    related = _related(window)
    with qtbot.waitSignal(related.sig_related_listed, timeout=10000) as listed:
        window.controller.sig_preview_requested.emit(path)
    assert listed.args[0] == path
    return related


def test_related_lists_the_nearest_notes_with_scores(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    related = _open(qtbot, window, NOTE)
    rows = [related.list.item(i) for i in range(related.list.count())]
    assert 1 <= len(rows) <= 10
    paths = [str(r.data(0x0100)) for r in rows]
    assert NOTE not in paths and len(set(paths)) == len(paths)
    scores = [float(r.text().split()[0]) for r in rows]
    assert scores == sorted(scores, reverse=True) and all(-1 <= s <= 1 for s in scores)
    assert "Nearest in meaning to <b>A run should leave me spent</b>" in related.heading.text()
    # One click opens a neighbour in the preview (and lists that note's own neighbours).
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    with qtbot.waitSignal(related.sig_related_listed, timeout=10000) as listed:
        related._open(rows[0])
    assert preview.path == paths[0] and listed.args[0] == paths[0]


def test_scan_this_note_scans_the_preview_not_the_list_selection(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    notes = window.panel("notes")
    # The list selects B, then a search clears the selection; the preview shows A.
    notes.list.setCurrentRow(0)  # type: ignore[attr-defined]
    with qtbot.waitSignal(notes.sig_notes_listed, timeout=10000):  # type: ignore[attr-defined]
        notes.search_box.setText("sourdough")  # type: ignore[attr-defined]
    related = _open(qtbot, window, NOTE)
    tensions = window.panel("tensions")
    assert isinstance(tensions, QtTensionsPanel)
    with qtbot.waitSignal(tensions.runner.sig_scan_finished, timeout=20000) as done:
        related.scan_button.click()
    run = done.args[0]
    assert run.mode == "focus" and run.focus == NOTE, run.error
    assert tensions.mode.currentData() == "focus"
    assert "focus “A run should leave me spent”" in run.summary()
    assert "neighbours judged" in run.summary()
    # Run Hunter in focus mode follows the preview too.
    window.controller.sig_preview_requested.emit(B)
    qtbot.waitUntil(lambda: window.panel("preview").path == B, timeout=5000)
    with qtbot.waitSignal(tensions.runner.sig_scan_finished, timeout=20000) as done:
        tensions.run_scan()
    assert done.args[0].focus == B


def test_related_before_the_embedder_says_why_it_is_empty(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(start=False)
    related = _related(window)
    related.show_related(NOTE)
    assert related.list.count() == 0
    assert "appear once the embedder has indexed the vault" in related.heading.text()
