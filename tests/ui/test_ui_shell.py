"""The window shell: notes, search, preview, watcher, settings, tray, geometry, errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop.flows.settings import BackendSettings, load_settings
from desktop.ui.app import build_window
from desktop.ui.dialogs import settings_dialog
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from desktop.ui.panels import panels
from desktop.ui.panels.models import QtModelsPanel
from desktop.ui.panels.notes import QtNotesPanel
from desktop.ui.panels.preview import QtPreviewPanel
from foundation.errors import ModelUnavailable
from inference.runtime import Runtime, State
from tests.fakes import ScriptedGenerator
from tests.ui.conftest import fake_runtime, ui_embedder


def _notes(window) -> QtNotesPanel:  # type: ignore[no-untyped-def]
    notes = window.panel("notes")
    assert isinstance(notes, QtNotesPanel)
    return notes


def test_every_registered_panel_is_built_once(make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(start=False)
    keys = [s.key for s in panels()]
    assert keys == [
        "notes",
        "preview",
        "related",
        "tensions",
        "dismissed",
        "memory",
        "ingest",
        "guard",
        "history",
        "debug",
        "models",
    ]
    assert set(window.ctx.panels) == set(keys)
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "Tensions",
        "Dismissed pairs",
        "Memory",
        "Ingest",
        "Guard",
        "History",
        "Debug",
        "Models",
    ]


def test_filters_and_search_then_preview(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    notes = _notes(window)
    qtbot.waitUntil(lambda: notes.type_filter.findText("decision") >= 0, timeout=10000)
    with qtbot.waitSignal(notes.sig_notes_listed, timeout=5000) as listed:
        notes.type_filter.setCurrentText("decision")
    assert listed.args[0] == 8  # the sample vault's ADRs
    with qtbot.waitSignal(notes.sig_notes_listed, timeout=5000):
        notes.search_box.setText("friday release window")
    assert notes.list.count() >= 1
    assert "Friday release window" in notes.list.item(0).text()
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        notes.list.setCurrentRow(0)
    assert preview.path == "Decisions/ADR-0011 Friday release window.md"
    assert "Friday" in preview.browser.toPlainText()


def test_folder_tree_flat_list_and_tag_filter(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    (vault / "Journal" / "Tagged.md").write_text(
        "---\ntags: [garden]\n---\n# Tagged\n\nBeans go in after the frost, #garden too.\n"
    )
    window = make_window()
    notes = _notes(window)
    qtbot.waitUntil(lambda: notes.list.count() > 50, timeout=10000)
    # Folders by default: top-level folder rows with their counts, notes inside them.
    assert notes.stack.currentWidget() is notes.tree
    tops = [notes.tree.topLevelItem(i) for i in range(notes.tree.topLevelItemCount())]
    decisions = next(t for t in tops if t is not None and t.text(0).startswith("Decisions/"))
    assert decisions.text(0) == "Decisions/  (8)" and decisions.isExpanded()
    adr = decisions.child(0)
    assert adr is not None and str(adr.data(0, 256)).startswith("Decisions/ADR-")
    preview = window.panel("preview")
    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        notes.tree.setCurrentItem(adr)
    assert notes.selected_path() == adr.data(0, 256)
    notes.tree.setCurrentItem(decisions)  # a folder row opens nothing and selects no note
    assert notes.selected_path() is None and preview.path == adr.data(0, 256)
    # The flat list as an option.
    notes.view.setCurrentIndex(notes.view.findData("list"))
    assert notes.stack.currentWidget() is notes.list
    # Tags are a filter, beside type and status.
    qtbot.waitUntil(lambda: notes.tag_filter.findText("garden") >= 0, timeout=10000)
    with qtbot.waitSignal(notes.sig_notes_listed, timeout=5000) as listed:
        notes.tag_filter.setCurrentText("garden")
    assert listed.args[0] >= 1
    paths = [str(notes.list.item(i).data(256)) for i in range(notes.list.count())]
    assert "Journal/Tagged.md" in paths and notes.count.text().endswith(("note", "notes"))


def test_search_results_show_score_and_snippet_without_stop_words(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    notes = _notes(window)
    qtbot.waitUntil(lambda: notes.list.count() > 50, timeout=10000)
    with qtbot.waitSignal(notes.sig_notes_listed, timeout=5000):
        notes.search_box.setText("the friday release window")
    assert notes.stack.currentWidget() is notes.list  # results are a ranked list
    first = notes.list.item(0).text()
    title, snippet = first.split("\n")
    assert "Friday release window" in title and "words match" in title
    assert "meaning 0." in title or "meaning 1." in title
    assert "«Friday»" in snippet or "«friday»" in snippet.casefold()
    assert "«the»" not in snippet.casefold()
    assert notes.count.text().endswith(("match", "matches"))


def test_wikilinks_in_the_preview_open_their_note(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        window.controller.sig_preview_requested.emit("Tensions/Base miles vs hard efforts.md")
    html = preview.browser.toHtml()
    assert "note:Easy%20runs%20build%20the%20base" in html
    from PySide6.QtCore import QUrl

    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        preview._follow(QUrl("note:Easy%20runs%20build%20the%20base"))
    assert preview.path == "Substrates/Easy runs build the base.md"
    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=5000) as shown:
        preview._follow(QUrl("note:No%20such%20note"))
    assert shown.args[1] == "No note named “No such note” in this vault."


def test_an_edit_on_disk_is_reindexed_and_the_preview_follows(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    path = "Substrates/Hire slowly.md"
    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        window.controller.sig_preview_requested.emit(path)
    qtbot.wait(300)  # let the watcher take its baseline
    (vault / path).write_text((vault / path).read_text() + "\nEdited in another editor: zebra.\n")
    window.watcher.check_now()
    qtbot.waitUntil(lambda: "zebra" in preview.browser.toPlainText(), timeout=10000)
    index = window.controller.index
    assert index is not None
    qtbot.waitUntil(lambda: "zebra" in index.note(path).body, timeout=5000)  # type: ignore[union-attr]


def test_settings_dialog_names_a_bad_value_and_warns_before_a_remote_backend(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from desktop.flows.settings import Settings

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.types.setText("")
    dialog.accept()
    assert "scan.types must name at least one note type" in dialog.problem.text()
    assert dialog.result_settings is None
    dialog.types.setText("tension")
    dialog.backend.setCurrentIndex(1)
    dialog.base_url.setText("http://192.168.1.20:8080/v1")
    asked: list[str] = []

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(args[1])
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "warning", refuse)
    dialog.accept()
    assert asked == ["This sends note text off this machine"]
    assert dialog.result_settings is None
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Yes)
    dialog.accept()
    assert dialog.result_settings is not None
    assert dialog.result_settings.backend.leaves_machine
    assert dialog.result_settings.scan.types == ("tension",)


def test_loopback_backend_needs_no_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("no warning for loopback")

    monkeypatch.setattr(QMessageBox, "warning", fail)
    assert settings_dialog.confirm_backend(
        None, BackendSettings(kind="http", base_url="http://127.0.0.1:8080/v1")
    )


def test_switching_backend_reloads_the_models(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    made: list[Runtime] = []

    def factory(settings):  # type: ignore[no-untyped-def]
        rt = fake_runtime()
        made.append(rt)
        return rt

    window = make_window()
    c = window.controller
    c._make_runtime = factory
    old = c.runtime
    new = replace(
        c.settings, backend=BackendSettings(kind="http", base_url="http://127.0.0.1:9/v1")
    )
    c.apply_settings(new)
    qtbot.waitUntil(
        lambda: old.state is State.CLOSED and made and made[0].state is State.READY, timeout=10000
    )
    assert c.runtime is made[0]
    assert load_settings().backend.kind == "http"
    models = window.panel("models")
    assert isinstance(models, QtModelsPanel)
    qtbot.waitUntil(lambda: "127.0.0.1:9" in models.view.toPlainText(), timeout=5000)


def test_model_load_failure_reaches_the_presenter_and_status_bar(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    def broken():  # type: ignore[no-untyped-def]
        raise ModelUnavailable("Model file not found at /x.gguf — run `antinomy doctor`.")

    rt = Runtime(make_generator=broken, make_embedder=ui_embedder)
    window = make_window(rt, wait_ready=False)
    qtbot.waitUntil(lambda: len(window.errors.errors) == 1, timeout=10000)
    qtbot.wait(200)  # a second notice of the same failure would arrive now
    assert len(window.errors.errors) == 1
    shown = window.errors.errors[0]
    assert [shown.what, shown.message] == [
        "Loading the models",
        "Model file not found at /x.gguf — run `antinomy doctor`.",
    ]
    qtbot.waitUntil(
        lambda: window.status.models.text().startswith("models: failed — see Models"), timeout=5000
    )
    # A scan asked for now says why it cannot run, instead of doing nothing.
    tensions = window.panel("tensions")
    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=5000) as again:
        tensions.run_button.click()  # type: ignore[attr-defined]
    assert "Model file not found" in again.args[1]


def test_geometry_is_remembered(qtbot, qloop, vault: Path) -> None:  # type: ignore[no-untyped-def]
    first = build_window(loop=qloop, runtime=fake_runtime(), use_tray=False)
    qtbot.addWidget(first)
    first.show()
    screen = QApplication.primaryScreen().availableGeometry()
    size = (min(900, screen.width() - 40), min(650, screen.height() - 40))
    first.resize(*size)
    first.close()
    assert load_settings().window_geometry
    second = build_window(loop=qloop, runtime=fake_runtime(), use_tray=False)
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == size
    second.close()


def test_tray_keeps_the_app_resident_and_quit_closes_the_engines(
    qtbot, qloop, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    rt = fake_runtime()
    window = build_window(loop=qloop, runtime=rt, use_tray=True)
    qtbot.addWidget(window)
    window.show()
    window.controller.runtime.start()
    qtbot.waitUntil(lambda: rt.state is State.READY, timeout=10000)
    assert window.tray is not None
    window.tray.show()
    if not window.tray.isVisible():
        pytest.skip("this platform plugin shows no tray icon")
    window.close()
    assert not window.isVisible() and rt.state is State.READY  # resident, still warm
    quits: list[bool] = []
    monkeypatch.setattr(QApplication, "quit", lambda *_a: quits.append(True))
    window.quit_app()
    assert rt.state is State.CLOSED and quits == [True]


def test_background_failures_are_kept_in_the_presenter(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(start=False)

    async def boom() -> None:
        raise ValueError("disk on fire")

    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=5000):
        window.controller.spawn(boom(), what="Testing")
    assert window.errors.errors[-1].what == "Testing"
    assert window.errors.errors[-1].message == "ValueError: disk on fire"
    assert window.errors.isVisible() and not window.errors.isModal()
    window.errors.close()


def test_scripted_generator_is_not_consumed_by_the_shell(make_window) -> None:  # type: ignore[no-untyped-def]
    gen = ScriptedGenerator(["x", "{}"])
    window = make_window(fake_runtime(generator=gen))
    assert len(gen.calls) == 2  # only the warm-up: opening the app asks the model nothing
    window.close()


def test_keyboard_shortcuts_are_live_window_wide(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QAction, QKeySequence

    window = make_window()
    by_key = {
        a.shortcut().toString(): a
        for a in window.findChildren(QAction)
        if not a.shortcut().isEmpty()
    }
    for key in ("Ctrl+R", "Esc", "Del", QKeySequence(QKeySequence.StandardKey.Find).toString()):
        assert key in by_key, f"no action for {key}"
    tensions = window.panel("tensions")
    with qtbot.waitSignal(tensions.runner.sig_scan_started, timeout=5000):  # type: ignore[attr-defined]
        by_key["Ctrl+R"].trigger()
    by_key["Esc"].trigger()
    assert not tensions.runner.running  # type: ignore[attr-defined]
