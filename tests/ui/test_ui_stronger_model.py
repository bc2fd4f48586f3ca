"""A path to a stronger model inside the app: the Models panel says the bundled model is
small and offers a GGUF of one's own (verified, loaded, timed) or a server (Test connection
lists its models and times one completion; off-machine is confirmed first). The choice is
saved for the install and shown in the status bar."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop.flows.model_choice import ServerCheck
from desktop.flows.settings import load_settings
from desktop.ui.dialogs import stronger_model
from desktop.ui.dialogs.stronger_model import SERVER_TAB, QtStrongerModelDialog
from desktop.ui.panels.models import QtModelsPanel
from inference.diagnostics import GenerationSpeed
from inference.registry import resolve_model
from inference.runtime import State
from tests.openai_stub import openai_stub
from tests.ui.conftest import fake_runtime

SPEED_ANSWER = "a short answer of a few words"


def _models(window) -> QtModelsPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("models")
    assert isinstance(panel, QtModelsPanel)
    return panel


def _choose(monkeypatch: pytest.MonkeyPatch, act) -> list[QtStrongerModelDialog]:  # type: ignore[no-untyped-def]
    """Run the dialog as the user would: ``act(dialog)`` instead of exec's event loop."""
    seen: list[QtStrongerModelDialog] = []

    def fake_exec(self: QtStrongerModelDialog) -> int:
        seen.append(self)
        return act(self)

    monkeypatch.setattr(QtStrongerModelDialog, "exec", fake_exec)
    return seen


def test_the_bundled_model_is_said_small_and_a_gguf_of_ones_own_is_used(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = _models(window)
    assert "bundled language model is small (SmolLM2-135M" in panel.note.text()
    assert window.status.models.text().endswith("· bundled SmolLM2-135M")
    own = tmp_path / "bigger.gguf"
    shutil.copyfile(resolve_model("llm").path, own)
    reloaded = fake_runtime([SPEED_ANSWER])
    c = window.controller
    monkeypatch.setattr(c, "_make_runtime", lambda settings: reloaded)

    def act(dialog: QtStrongerModelDialog) -> int:
        dialog.gguf.setText(str(own))
        with qtbot.waitSignal(dialog.sig_file_checked, timeout=20000):
            dialog.check_file()
        assert "GGUF" in dialog.file_result.text() and "known model ✓" in dialog.file_result.text()
        dialog.accept()
        return int(dialog.result())

    seen = _choose(monkeypatch, act)
    with qtbot.waitSignal(panel.sig_speeds_measured, timeout=20000) as measured:
        panel.choose_stronger()
    assert seen and c.runtime is reloaded and reloaded.state is State.READY
    assert load_settings().models.llm_path == str(own)  # remembered for the install
    assert measured.args[0].generation.generated_tokens > 0
    assert "tokens/s" in panel.view.toPlainText()
    assert window.status.models.text().endswith("· own GGUF bigger.gguf")
    assert "own GGUF bigger.gguf" in panel.note.text()


def test_a_bad_file_is_refused_with_the_reason(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model")
    before = load_settings()

    def act(dialog: QtStrongerModelDialog) -> int:
        dialog.accept()  # nothing checked yet
        assert dialog.problem.text() == "Check the file first (Check file)."
        dialog.gguf.setText(str(bad))
        with qtbot.waitSignal(dialog.sig_check_failed, timeout=10000) as failed:
            dialog.check_file()
        assert "is not a GGUF file" in failed.args[0]
        dialog.accept()
        assert dialog.result_settings is None
        dialog.reject()
        return 0

    _choose(monkeypatch, act)
    _models(window).choose_stronger()
    assert load_settings() == before


def test_a_server_is_tested_then_used_and_shown(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    c = window.controller
    reloaded = fake_runtime([SPEED_ANSWER])
    monkeypatch.setattr(c, "_make_runtime", lambda settings: reloaded)
    with openai_stub() as url:

        def act(dialog: QtStrongerModelDialog) -> int:
            dialog.tabs.setCurrentIndex(SERVER_TAB)
            dialog.base_url.setText(url)
            dialog.accept()
            assert "Test the connection first" in dialog.problem.text()
            with qtbot.waitSignal(dialog.sig_server_checked, timeout=20000) as checked:
                dialog.test_button.click()
            check = checked.args[0]
            assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == [
                "stub-large",
                "stub-small",
            ]
            assert dialog.server_result.text().startswith("✓ 2 models listed; stub-large")
            assert "⚠" not in dialog.server_result.text() and not check.leaves_machine
            dialog.accept()
            return int(dialog.result())

        _choose(monkeypatch, act)
        _models(window).choose_stronger()
    saved = load_settings().backend
    assert saved.kind == "http" and saved.base_url == url and saved.model == "stub-large"
    host = url.split("//")[1].split("/")[0]
    qtbot.waitUntil(lambda: window.status.models.text().endswith(f"· stub-large at {host}"))


def test_a_server_off_this_machine_is_confirmed_first(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    asked: list[str] = []

    def refuse(*args: object) -> QMessageBox.StandardButton:
        asked.append(str(args[2]))
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "warning", refuse)
    dialog = QtStrongerModelDialog(window.controller.settings, loop=window.controller.loop)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(SERVER_TAB)
    remote = "http://10.1.2.3:8080/v1"
    speed = GenerationSpeed(12, 100.0, 8, 20.0, 0.5)
    dialog._server_ok(ServerCheck(remote, ("big",), "big", speed, leaves_machine=True))
    assert "⚠ This backend is not on this machine" in dialog.server_result.text()
    dialog.accept()
    assert asked and remote in asked[0]
    assert dialog.result_settings is None and "Not changed" in dialog.problem.text()
    assert stronger_model.LEAVES_MACHINE_WARNING.split(":")[0] in asked[0]
