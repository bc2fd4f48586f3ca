"""Start-up: the window shows at once, the models warm, the vault indexes, panels fill."""

from __future__ import annotations

from pathlib import Path

from desktop.flows.settings import load_settings
from desktop.ui.panels.notes import QtNotesPanel
from inference.runtime import State
from tests.ui.conftest import fake_runtime


def test_window_shows_before_models_are_ready_then_reports_ready(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(), wait_ready=False)
    assert window.isVisible()
    status = window.status.models
    qtbot.waitUntil(lambda: window.controller.runtime.state is State.READY, timeout=10000)
    qtbot.waitUntil(lambda: status.text().startswith("models: ready in "), timeout=5000)
    assert status.text().endswith(" s · bundled SmolLM2-135M")
    notes = window.panel("notes")
    assert isinstance(notes, QtNotesPanel)
    qtbot.waitUntil(lambda: notes.list.count() > 50, timeout=10000)
    qtbot.waitUntil(lambda: "notes indexed" in window.status.coverage.text(), timeout=10000)
    assert load_settings().last_vault == str(vault.resolve())
