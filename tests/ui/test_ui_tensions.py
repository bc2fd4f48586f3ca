"""The Tensions panel over a scripted engine: scan, dismiss, undo, stop, format failure."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop.flows.hunter import DISCLAIMER
from desktop.flows.review import list_dismissed
from desktop.ui.dialogs.review_dialogs import DefeatForm, ElevateForm
from desktop.ui.panels import pair_list as pair_list_module
from desktop.ui.panels.debug import QtDebugPanel
from desktop.ui.panels.dismissed import QtDismissedPanel
from desktop.ui.panels.history import QtHistoryPanel
from desktop.ui.panels.preview import QtPreviewPanel
from desktop.ui.panels.tensions import QtTensionsPanel
from tests.fakes import ScriptedGenerator, confirming_judge
from tests.ui.conftest import fake_runtime
from tests.ui.scans import GOOD, A, B, SlowGenerator, big_context, scan_everything, scripted


def _panels(window):  # type: ignore[no-untyped-def]
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    return t


def _scan(qtbot, window) -> QtTensionsPanel:  # type: ignore[no-untyped-def]
    scan_everything(window)
    t = _panels(window)
    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.run_button.click()
    return t


def test_a_scan_fills_the_tensions_panel(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(generator=scripted(GOOD)))
    t = _scan(qtbot, window)
    assert len(t.cards) == 1
    card = t.cards[0]
    assert card.pair.path_a == A and card.pair.path_b == B
    assert "high" in card.findChildren(type(t.meta))[0].text()
    assert "classic" in t.meta.text() and "notes" in t.meta.text()
    assert t.disclaimer.isVisibleTo(t) and DISCLAIMER.split(":")[0] in t.disclaimer.text()
    assert t.state.text() == "Done: 1 pair shown." and t.run_button.isEnabled()
    # Clicking a note name previews it.
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        card._link("b")
    assert preview.path == B and "Easy runs build the base" in preview.browser.toPlainText()


def test_dismiss_writes_both_notes_then_undo_restores_them(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(generator=scripted(GOOD)))
    before = {p: (vault / p).read_bytes() for p in (A, B)}
    already = len(list_dismissed(vault))  # the sample vault ships with one dismissal
    t = _scan(qtbot, window)
    history = window.panel("history")
    assert isinstance(history, QtHistoryPanel)
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        t.cards[0].dismiss_button.click()
    assert not t.cards and t.state.text() == "Done: 0 pairs shown (1 dismissed since)."
    assert b"hunter_false_positives" in (vault / A).read_bytes()
    assert b"hunter_false_positives" in (vault / B).read_bytes()
    assert (A, B) in [(d.path_a, d.path_b) for d in list_dismissed(vault)]
    dismissed = window.panel("dismissed")
    assert isinstance(dismissed, QtDismissedPanel)
    qtbot.waitUntil(lambda: dismissed.list.count() == already + 1, timeout=5000)
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=5000)
    entry = history.entries[0]
    assert set(entry.paths) == {A, B} and entry.operation_type == "dismiss"
    # The time is shown whole (local, to the second), never cut off by the column.
    top = history.tree.topLevelItem(0)
    assert top is not None and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", top.text(0))
    history.tree.expandAll()
    assert history.tree.columnWidth(0) >= history.tree.sizeHintForColumn(0) > 0
    history.select_operation(entry.operation_id)
    assert history.undo_button.isEnabled()
    history.undo_button.click()
    qtbot.waitUntil(lambda: len(history.entries) == 2, timeout=10000)
    assert (vault / A).read_bytes() == before[A] and (vault / B).read_bytes() == before[B]
    qtbot.waitUntil(lambda: dismissed.list.count() == already, timeout=5000)
    # The pair is back, and the header counts it again.
    qtbot.waitUntil(lambda: len(t.cards) == 1, timeout=5000)
    assert t.state.text() == "Done: 1 pair shown."


def test_dismiss_is_refused_when_a_note_changed_on_disk(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(generator=scripted(GOOD)))
    t = _scan(qtbot, window)
    (vault / A).write_text((vault / A).read_text() + "\nedited elsewhere\n")
    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=10000) as shown:
        t.dismiss_selected()
    what, message = shown.args
    assert what.startswith("Dismissing") and "changed" in message
    assert len(t.cards) == 1 and b"hunter_false_positives" not in (vault / B).read_bytes()


def test_stop_returns_to_idle_at_once_and_keeps_previous_results(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    slow = SlowGenerator(tokens=100_000, answer=GOOD)
    window = make_window(fake_runtime(generator=slow))
    scan_everything(window)
    t = _panels(window)
    t.show_run(_fake_run(GOOD, window))
    qtbot.waitUntil(lambda: len(t.cards) == 1 or bool(window.errors.errors), timeout=5000)
    assert not window.errors.errors, window.errors.errors
    t.run_button.click()
    qtbot.waitUntil(slow.started.is_set, timeout=10000)
    assert t.stop_button.isEnabled() and not t.run_button.isEnabled()
    # While the new run goes, the results on screen are marked as the previous run's
    # (greyed, with their time) and the state says what the model is doing.
    assert t.meta.text().startswith("<b>Previous run:</b> " + t.run.started_at[:10])
    assert t.cards[0].previous and t.cards[0].graphicsEffect() is not None
    qtbot.waitUntil(lambda: "tokens generated (of at most" in t.state.text(), timeout=5000)
    assert t.state.text().startswith("Asking the model about ")
    pressed = time.perf_counter()
    t.stop_button.click()
    # Idle at once, synchronously: no wait for the worker.
    assert t.run_button.isEnabled() and not t.stop_button.isEnabled()
    assert t.state.text().startswith("Stopped.") and t.meta.text().startswith("<b>Previous run:")
    assert len(t.cards) == 1
    qtbot.waitUntil(lambda: slow.stopped_at is not None, timeout=5000)
    assert slow.stopped_at is not None
    # The generation ended at its next token check (one 10 ms token, plus thread wake-up).
    assert slow.stopped_at - pressed < 0.5


def _fake_run(answer: str, window):  # type: ignore[no-untyped-def]
    from desktop.flows.hunter import scan

    c = window.controller
    run = scan(
        c.index,
        big_context(ScriptedGenerator([answer])),
        judge=confirming_judge(),
        settings=c.settings.scan_settings(),
    )
    assert len(run.pairs) == 1
    return run


def test_format_failure_offers_open_raw_response(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(generator=scripted("no json here", "still prose")))
    scan_everything(window)
    t = _panels(window)
    t.run_button.click()
    qtbot.waitUntil(lambda: t.failure.isVisible(), timeout=10000)
    assert "could not be read" in t.failure_text.text()
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    with qtbot.waitSignal(t.sig_debug_note_opened, timeout=10000) as opened:
        t.open_raw.click()
    path = opened.args[0]
    assert path.startswith("Antinomy/Debug/HUNTER-RAW ")
    text = (vault / path).read_text()
    assert "no json here" in text and "still prose" in text
    qtbot.waitUntil(
        lambda: preview.path == path and "still prose" in preview.browser.toPlainText(),
        timeout=5000,
    )
    debug = window.panel("debug")
    assert isinstance(debug, QtDebugPanel)
    qtbot.waitUntil(lambda: debug.notes.count() == 1, timeout=5000)


def test_window_stays_responsive_during_a_long_scan(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    slow = SlowGenerator(tokens=80, answer=GOOD, token_seconds=0.01)
    window = make_window(fake_runtime(generator=slow))
    scan_everything(window)
    t = _panels(window)
    lateness: list[float] = []
    last = [time.perf_counter()]
    timer = QTimer()
    timer.setInterval(10)

    def tick() -> None:
        now = time.perf_counter()
        lateness.append(now - last[0] - 0.010)
        last[0] = now

    timer.timeout.connect(tick)
    timer.start()
    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.run_button.click()
    timer.stop()
    assert len(lateness) > 20, "the timer hardly fired while the scan ran"
    assert max(lateness) < 0.25, f"event loop stalled {max(lateness) * 1000:.0f} ms"


def test_last_run_is_restored_after_a_restart(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    first = make_window(fake_runtime(generator=scripted(GOOD)))
    _scan(qtbot, first)
    first.close()
    second = make_window(fake_runtime(), wait_ready=False)
    t = _panels(second)
    qtbot.waitUntil(lambda: len(t.cards) == 1, timeout=10000)
    assert "restored" in t.meta.text()


def test_elevate_resolve_and_defeat_through_their_forms(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    tension = "Tensions/Base miles vs hard efforts.md"
    # A note the tension does not link to: against the notes it links to, a tension note is
    # not shown (it records that tension already).
    other = "Substrates/Run before work.md"
    answer = (
        GOOD.replace("A run should leave me spent", "Base miles vs hard efforts")
        .replace(
            "Every run should leave me out of breath at the end, or it was wasted.",
            "on paper I agree with them",
        )
        .replace("Easy runs build the base", "Run before work")
        .replace(
            "Most of my weekly mileage should be easy enough to hold a conversation.",
            "Weekday runs happen at six, before anyone else in the house is awake.",
        )
    )
    window = make_window(fake_runtime(generator=scripted(answer)))
    t = _scan(qtbot, window)
    card = t.cards[0]
    assert ("elevate", tension) in card.action_buttons and (
        "elevate",
        other,
    ) not in card.action_buttons
    monkeypatch.setattr(
        pair_list_module,
        "ask_elevate",
        lambda name, parent: ElevateForm(
            "Easy most days", "IF a run is a base run", "THEN keep it easy", ""
        ),
    )
    card.action_buttons[("elevate", tension)].click()
    qtbot.waitUntil(
        lambda: card.note_state[tension].text() == "✓ elevated to Easy most days", timeout=10000
    )
    assert (vault / "Antinomy/Principles/Easy most days.md").is_file()
    assert "motive: elevated" in (vault / tension).read_text()
    monkeypatch.setattr(
        pair_list_module, "ask_defeat", lambda name, parent: DefeatForm("outgrown", None)
    )
    card.action_buttons[("defeat", other)].click()
    qtbot.waitUntil(lambda: card.note_state[other].text() == "✓ defeated: outgrown", timeout=10000)
    assert "motive: outgrown" in (vault / other).read_text()
    # A defeated note offers no further action.
    assert ("defeat", other) not in card.action_buttons


def test_a_long_progress_line_wraps_instead_of_widening_the_panel(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(start=False)
    t = _panels(window)
    t._started("classic")
    t._progress(
        0, 1, "asking the model about 20 notes: reading the prompt, 512 of 4096 tokens " * 3
    )
    QApplication.processEvents()
    # A non-wrapping label asks for its whole text's width, which squeezed the docks.
    assert t.state.minimumSizeHint().width() < 400
    assert t.state.text().startswith("Asking the model about 20 notes")
    t._busy(False)
