"""End to end on the real shipped models: the window over the sample vault, a focus scan."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from desktop.flows.settings import ScanCaps
from desktop.ui.app import build_window
from desktop.ui.panels.tensions import QtTensionsPanel
from inference.runtime import Runtime, State


@pytest.mark.model
def test_real_models_scan_the_sample_vault_from_the_window(
    qtbot, qloop, vault: Path, runtime: Runtime
) -> None:  # type: ignore[no-untyped-def]
    window = build_window(loop=qloop, runtime=runtime, use_tray=False, owns_runtime=False)
    qtbot.addWidget(window)
    window.show()
    c = window.controller
    # A small focus scan keeps the prompt short on a 2-core machine.
    c.update_settings(replace(c.settings, scan=ScanCaps(neighbours=2, body_chars=300)))
    c.start(vault)
    qtbot.waitUntil(
        lambda: window.status.models.text().startswith("models: ready in"), timeout=60000
    )
    qtbot.waitUntil(
        lambda: (
            c.index is not None and c.index.embedding is not None and c.index.vectors is not None
        ),
        timeout=120000,
    )
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    notes = window.panel("notes")
    qtbot.waitUntil(lambda: notes.list.count() > 50, timeout=30000)  # type: ignore[attr-defined]
    tension = "Tensions/Shipping speed vs weekend calm.md"
    notes.view.setCurrentIndex(notes.view.findData("list"))  # type: ignore[attr-defined]
    for i in range(notes.list.count()):  # type: ignore[attr-defined]
        if notes.list.item(i).data(256) == tension:  # type: ignore[attr-defined]
            notes.list.setCurrentRow(i)  # type: ignore[attr-defined]
    assert notes.selected_path() == tension  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: window.panel("preview").path == tension, timeout=10000)  # type: ignore[attr-defined]
    t.mode.setCurrentIndex(1)
    finished: list[object] = []
    t.runner.sig_scan_finished.connect(finished.append)
    t.run_button.click()
    qtbot.waitUntil(lambda: bool(finished) or bool(window.errors.errors), timeout=300000)
    assert not window.errors.errors, window.errors.errors
    run = finished[0]
    assert run.mode == "focus" and run.status in ("ok", "format_failure")  # type: ignore[attr-defined]
    assert run.model.startswith("SmolLM2")  # type: ignore[attr-defined]
    if run.status == "ok":  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: t.run is run, timeout=5000)
        assert len(t.cards) == len(run.pairs)  # type: ignore[attr-defined]
    else:
        assert t.failure.isVisible()
    window.close()
    assert runtime.state is State.READY  # shared: the window did not close it
