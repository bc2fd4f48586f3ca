"""The Ingest panel over a scripted engine: plan → diffs → approve or discard; a rejected
plan's errors and link; a file dropped on the window; Stop; a refused source."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog

from desktop.flows.ingest import load_candidates
from desktop.ui.panels.ingest import QtIngestPanel
from desktop.vault.transactions import list_history
from tests.ingest_helpers import JUNK_NAME_ERROR, answer, junk_name_answer, make_pdf, write_source
from tests.ui.conftest import fake_runtime
from tests.ui.scans import SlowGenerator
from tests.vault_files import snapshot

PAGE = "Antinomy/Subjects/Installing Rust.md"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_source(tmp_path / "downloads")


def ingest_panel(window) -> QtIngestPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("ingest")
    assert isinstance(panel, QtIngestPanel)
    return panel


def planned(qtbot, window, source: Path) -> QtIngestPanel:  # type: ignore[no-untyped-def]
    panel = ingest_panel(window)
    with qtbot.waitSignal(panel.sig_plan_shown, timeout=15000):
        panel.ingest_file(source)
    return panel


def test_a_plan_is_shown_as_diffs_then_approved_into_one_undoable_operation(
    qtbot, make_window, vault: Path, source: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime([answer()]))
    before = snapshot(vault)
    panel = planned(qtbot, window, source)
    assert snapshot(vault) == before
    assert panel.state.text() == "Plan ready: read the diffs, then approve or discard."
    files = [panel.files.item(i).text() for i in range(panel.files.count())]  # type: ignore[union-attr]
    assert files[0].startswith("create  Antinomy/Sources/Installing Rust.md")
    assert files[1].startswith(f"create  {PAGE}")
    assert "+type: source" in panel.diff.toPlainText()
    assert "Judge: scripted judge" in panel.summary.text()
    assert panel.approve_button.isEnabled()
    with qtbot.waitSignal(panel.sig_plan_applied, timeout=10000) as applied:
        panel.approve_button.click()
    assert (vault / PAGE).exists()
    assert list_history(vault)[0].operation_type == "ingest"
    assert applied.args[0].operation_id == list_history(vault)[0].operation_id
    assert not panel.approve_button.isEnabled()


def test_discard_writes_nothing(qtbot, make_window, vault: Path, source: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime([answer()]))
    before = snapshot(vault)
    panel = planned(qtbot, window, source)
    with qtbot.waitSignal(panel.sig_plan_discarded):
        panel.discard_button.click()
    assert panel.files.count() == 0 and not panel.approve_button.isEnabled()
    assert snapshot(vault) == before
    assert panel.state.text() == "Plan discarded; nothing was written."


def test_a_rejected_plan_shows_its_errors_and_a_link_to_the_saved_file(
    qtbot, make_window, vault: Path, source: Path
) -> None:  # type: ignore[no-untyped-def]
    bad = junk_name_answer()
    window = make_window(fake_runtime([bad, bad]))
    panel = planned(qtbot, window, source)
    report = panel.report
    assert report is not None and report.status == "rejected"
    saved = Path(report.rejected_path)
    assert saved.is_file() and saved.parent == vault.resolve() / ".antinomy" / "rejected-plans"
    text = panel.rejected.text()
    assert panel.rejected.isVisibleTo(panel)
    assert f"<li>{html.escape(JUNK_NAME_ERROR)}</li>" in text
    assert f'<a href="{QUrl.fromLocalFile(str(saved)).toString()}">{saved}</a>' in text
    assert not panel.approve_button.isEnabled()


def test_a_file_dropped_on_the_window_is_planned(
    qtbot, make_window, vault: Path, source: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime([answer()]))
    panel = ingest_panel(window)
    qtbot.waitUntil(lambda: window.acceptDrops(), timeout=5000)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(source))])
    drop = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    # Offscreen Qt cannot run a real drag; hand the drop to the filter the panel installed
    # on the window, as Qt's event dispatch does before the window sees it.
    assert panel._window_watched is window
    with qtbot.waitSignal(panel.sig_plan_shown, timeout=15000):
        assert panel.eventFilter(window, drop) is True
    assert panel.report is not None and panel.report.status == "planned"
    assert drop.isAccepted()
    other = QMimeData()
    other.setUrls([QUrl.fromLocalFile("/tmp/picture.png")])
    refused = QDropEvent(QPointF(1, 1), Qt.DropAction.CopyAction, other,
                         Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)  # fmt: skip
    assert panel.eventFilter(window, refused) is False


def test_pick_file_uses_the_file_dialog(
    qtbot, make_window, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime([answer()]))
    panel = ingest_panel(window)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(source), ""))
    with qtbot.waitSignal(panel.sig_plan_shown, timeout=15000):
        panel.pick_button.click()


def test_stop_returns_to_idle_and_writes_nothing(
    qtbot, make_window, vault: Path, source: Path
) -> None:  # type: ignore[no-untyped-def]
    slow = SlowGenerator(tokens=100_000, answer=answer())
    window = make_window(fake_runtime(generator=slow))
    panel = ingest_panel(window)
    before = snapshot(vault)
    panel.ingest_file(source)
    qtbot.waitUntil(slow.started.is_set, timeout=10000)
    assert panel.stop_button.isEnabled()
    with qtbot.waitSignal(panel.runner.sig_ingest_stopped, timeout=5000):
        panel.stop_button.click()
    assert panel.state.text() == "Stopped; nothing was written."
    assert panel.pick_button.isEnabled()
    qtbot.waitUntil(lambda: slow.stopped_at is not None, timeout=5000)
    assert snapshot(vault) == before


def test_a_refused_source_says_why(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime())
    panel = ingest_panel(window)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(make_pdf([""]))
    with qtbot.waitSignal(panel.runner.sig_ingest_failed, timeout=10000):
        panel.ingest_file(scan)
    assert panel.state.text() == "Not ingested."
    assert "has no text layer (0 words on 1 pages): it looks scanned" in panel.summary.text()


def test_tension_candidates_of_an_ingest_show_in_the_tensions_panel(
    qtbot, make_window, vault: Path, source: Path
) -> None:  # type: ignore[no-untyped-def]
    from desktop.flows.ingest.tensions import TensionCandidate, save_candidates
    from desktop.vault.transactions import Plan, Write, apply_plan, inspect_plan

    plan = Plan("ingest-1", "ingest", "an applied ingest", (Write.create("New.md", "new\n"),))
    apply_plan(vault, plan, approval=inspect_plan(vault, plan).approval)
    save_candidates(
        vault,
        "ingest-1",
        [
            TensionCandidate(
                "Decisions/X.md", "old claim", "new claim", "high", 0.93, "judge", "Installing Rust"
            )
        ],
        "2026-12-01T09:00:00Z",
    )
    assert len(load_candidates(vault)) == 1
    window = make_window(fake_runtime())
    tensions = window.panel("tensions")
    qtbot.waitUntil(lambda: tensions.ingest_tensions.topLevelItemCount() == 1, timeout=10000)
    item = tensions.ingest_tensions.topLevelItem(0)
    assert [item.text(i) for i in range(5)] == [
        "Installing Rust", "Decisions/X.md", "old claim", "new claim", "high (0.93)"
    ]  # fmt: skip
