"""The embedding server in the Settings dialog: fields, the off-machine warning, reload."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop.flows.settings import EmbedderBackendSettings, Settings, load_settings
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from inference.runtime import Runtime, State
from tests.ui.conftest import fake_runtime


def test_fields_follow_the_choice_and_reach_the_settings(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    assert not dialog.embedder_url.isEnabled()
    dialog.embedder_backend.setCurrentIndex(1)
    assert dialog.embedder_url.isEnabled() and dialog.embedder_key.isEnabled()
    dialog.embedder_url.setText(" http://127.0.0.1:11434/v1 ")
    dialog.embedder_model.setText("nomic-embed-text")
    dialog.accept()  # loopback: no question asked
    assert dialog.result_settings is not None
    assert dialog.result_settings.embedder_backend == EmbedderBackendSettings(
        kind="http", base_url="http://127.0.0.1:11434/v1", model="nomic-embed-text"
    )


def test_a_bad_url_is_named_and_nothing_saved(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.embedder_backend.setCurrentIndex(1)
    dialog.embedder_url.setText("gpu-box:8080")
    dialog.accept()
    assert "embedder_backend.base_url must be an http(s) URL" in dialog.problem.text()
    assert dialog.result_settings is None


def test_a_remote_embedding_server_asks_first(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.embedder_backend.setCurrentIndex(1)
    dialog.embedder_url.setText("http://192.168.1.20:8080/v1")
    asked: list[str] = []

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(args[2])
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "warning", refuse)
    dialog.accept()
    assert asked and "http://192.168.1.20:8080/v1" in asked[0]
    assert dialog.result_settings is None
    assert "embedding server was not changed" in dialog.problem.text()
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Yes)
    dialog.accept()
    assert dialog.result_settings is not None
    assert dialog.result_settings.embedder_backend.leaves_machine


def test_switching_the_embedder_reloads_the_models(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    made: list[Runtime] = []

    def factory(settings):  # type: ignore[no-untyped-def]
        made.append(fake_runtime())
        return made[-1]

    window = make_window()
    c = window.controller
    c._make_runtime = factory
    old = c.runtime
    server = EmbedderBackendSettings(kind="http", base_url="http://127.0.0.1:9/v1")
    c.apply_settings(replace(c.settings, embedder_backend=server))
    qtbot.waitUntil(
        lambda: old.state is State.CLOSED and made and made[0].state is State.READY, timeout=10000
    )
    assert c.runtime is made[0]
    assert load_settings().embedder_backend == server
