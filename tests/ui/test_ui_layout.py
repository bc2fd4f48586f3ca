"""The main window's side docks open at a share of its width: at 1920×1080 the note names
have room, at 1280×720 the tabs keep most of the window; a saved layout is kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, Qt

from desktop.ui.app import build_window
from desktop.ui.window import MainWindow
from tests.ui.conftest import fake_runtime


@pytest.fixture
def opened(qtbot, qloop) -> Iterator:  # type: ignore[no-untyped-def]
    windows: list[MainWindow] = []

    def open_at(width: int, height: int) -> MainWindow:
        window = build_window(loop=qloop, runtime=fake_runtime(), use_tray=False)
        qtbot.addWidget(window)
        windows.append(window)
        window.resize(width, height)
        window.show()
        qtbot.waitExposed(window)
        QCoreApplication.processEvents()
        return window

    yield open_at
    for window in windows:
        window.close()
        window.deleteLater()


def test_docks_take_a_share_of_a_wide_window(opened) -> None:  # type: ignore[no-untyped-def]
    window = opened(1920, 1080)
    notes, preview = window.docks["notes"], window.docks["preview"]
    assert abs(notes.width() - 0.19 * 1920) <= 12
    assert abs(preview.width() - 0.24 * 1920) <= 12


def test_tabs_keep_most_of_a_small_window(opened) -> None:  # type: ignore[no-untyped-def]
    window = opened(1280, 720)
    assert window.docks["notes"].width() <= 280
    assert window.centralWidget().width() >= 620


def test_a_saved_layout_is_kept(opened) -> None:  # type: ignore[no-untyped-def]
    first = opened(1920, 1080)
    first.resizeDocks([first.docks["notes"]], [500], Qt.Orientation.Horizontal)
    QCoreApplication.processEvents()
    first.save_geometry()
    kept = first.docks["notes"].width()
    second = opened(1920, 1080)
    assert abs(second.docks["notes"].width() - kept) <= 12


def test_lists_fit_their_width_at_1280_by_720(opened) -> None:  # type: ignore[no-untyped-def]
    """No sideways scrolling in the memory lists or the ingest claims: their text columns
    take the width left and elide (the tooltips hold the whole text)."""
    window = opened(1280, 720)
    memory = window.panel("memory")
    window.show_panel("memory")
    QCoreApplication.processEvents()
    for tree in (memory.accepted, memory.rejected, memory.results, memory.pending):
        assert tree.header().length() <= tree.viewport().width() + 1, tree.headerItem().text(0)
    ingest = window.panel("ingest")
    window.show_panel("ingest")
    QCoreApplication.processEvents()
    claims = ingest.tensions
    assert claims.header().length() <= claims.viewport().width() + 1
