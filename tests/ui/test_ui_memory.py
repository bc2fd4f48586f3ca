"""The Memory panel over a scripted engine: pending batches, Consolidate, report, requeue,
subject pages in the preview, recall, Stop."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.flows.memory import capture_turn, pending_batches, rejected_fragments
from desktop.flows.settings import MemoryPrefs, Settings, save_settings
from desktop.ui.panels.memory import QtMemoryPanel
from desktop.ui.panels.preview import QtPreviewPanel
from tests.fakes import ScriptedJudge
from tests.memory_helpers import SMALL_TURNS, RoutingGenerator, route, turns
from tests.ui.conftest import fake_runtime
from tests.ui.scans import SlowGenerator

#: Memory's gate asks the judge whether the cited lines entail a rephrased fact: this one
#: always agrees, so the scripted routing answers decide what is written.
AGREEING = ScriptedJudge(verdict=lambda a, b: (0.02, 0.96, 0.02))

LISBON = "We decided to fly to Lisbon on 12 December with Ana."
ROUTES = {
    "Lisbon": route("new", new_subject="Lisbon trip"),
    "window": route("Flights", "Prefers window seats on long flights."),
    "sold": route("new", new_subject="it"),  # no name in the words: rejected
}
PAGE = "Antinomy/Subjects/Lisbon trip.md"


def routing(**routes: object) -> RoutingGenerator:
    return RoutingGenerator(routes={**ROUTES, **routes})  # type: ignore[dict-item]


@pytest.fixture
def memory_vault(vault: Path) -> Path:
    # These tests press Consolidate themselves: the app's automatic run is off.
    save_settings(replace(Settings(), memory=MemoryPrefs(auto_consolidate=False)))
    turns(vault, *SMALL_TURNS, ("user", "we sold four for cash"))  # 5 lines, closed
    return vault


def memory_panel(window) -> QtMemoryPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("memory")
    assert isinstance(panel, QtMemoryPanel)
    return panel


def listed(qtbot, panel: QtMemoryPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: panel.listing is not None, timeout=10000)


def consolidated(qtbot, window) -> QtMemoryPanel:  # type: ignore[no-untyped-def]
    panel = memory_panel(window)
    listed(qtbot, panel)
    with qtbot.waitSignal(panel.sig_report_shown, timeout=15000):
        panel.consolidate_button.click()
    qtbot.waitUntil(lambda: panel.pending.topLevelItemCount() == 0, timeout=10000)
    return panel


def test_panel_lists_pending_batches_with_line_counts(
    qtbot, make_window, memory_vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    listed(qtbot, panel)
    assert panel.pending.topLevelItemCount() == 1
    item = panel.pending.topLevelItem(0)
    assert item is not None
    assert [item.text(i) for i in range(5)] == ["2026-11-30", "5", "5", "0", "closed (on demand)"]
    assert item.toolTip(0) == ".antinomy/raw/2026-11-30.tsv"
    assert panel.report_text.text() == "No consolidation yet."
    assert panel.rejected_count.text() == "No rejected fragment."


def test_consolidate_shows_accepted_facts_and_rejected_fragments(
    qtbot, make_window, memory_vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(judge=AGREEING, generator=routing()))
    panel = consolidated(qtbot, window)
    assert panel.report is not None and panel.report["status"] == "ok"
    assert "<b>ok</b>" in panel.report_text.text()
    assert "3 facts accepted, 1 rejected" in panel.report_text.text()
    assert "lines: 1 assistant, 4 candidate" in panel.report_text.text()
    assert panel.state.text() == "Done: facts written."
    rows = [
        [panel.accepted.topLevelItem(i).text(c) for c in range(5)]  # type: ignore[union-attr]
        for i in range(panel.accepted.topLevelItemCount())
    ]
    assert rows[0][:3] == ["Lisbon trip", "Decisions", LISBON]
    assert rows[0][3] == "2026-11-30#L1" and rows[0][4] == "2026-12-12"
    assert rows[1][2] == "Prefers window seats on long flights."
    assert "rephrased" in panel.accepted.topLevelItem(1).toolTip(2)  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: panel.rejected.topLevelItemCount() == 1, timeout=5000)
    item = panel.rejected.topLevelItem(0)
    assert item is not None and item.text(0) == "no_subject" and item.text(4) == "rejected"
    assert item.text(2) == "we sold four for cash"
    # The pages are written (one transaction), listed, and History shows it.
    assert (memory_vault / PAGE).exists()
    names = [panel.pages.item(i).text() for i in range(panel.pages.count())]
    assert "Lisbon trip  (1 fact)" in names and "Flights  (1 fact)" in names
    history = window.panel("history")
    qtbot.waitUntil(lambda: len(history.entries) >= 1, timeout=5000)  # type: ignore[attr-defined]
    assert not pending_batches(memory_vault)


def test_requeue_puts_a_rejected_fragment_back(qtbot, make_window, memory_vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(judge=AGREEING, generator=routing()))
    panel = consolidated(qtbot, window)
    qtbot.waitUntil(lambda: panel.rejected.topLevelItemCount() == 1, timeout=5000)
    assert not panel.requeue_button.isEnabled()  # nothing selected
    (frag,) = rejected_fragments(memory_vault)
    panel.select_fragment(frag[0].fragment_id)
    assert panel.requeue_button.isEnabled()
    with qtbot.waitSignal(panel.sig_fragment_requeued, timeout=5000) as requeued:
        panel.requeue_button.click()
    assert requeued.args == [frag[0].fragment_id]
    assert [state for _f, state in rejected_fragments(memory_vault)] == ["requeued"]
    qtbot.waitUntil(
        lambda: panel.rejected.topLevelItem(0).text(4) == "requeued",  # type: ignore[union-attr]
        timeout=5000,
    )
    panel.select_fragment(frag[0].fragment_id)
    assert not panel.requeue_button.isEnabled()  # already in the queue
    assert panel.state.text().startswith("Re-queued")


def test_subject_page_opens_in_the_preview(qtbot, make_window, memory_vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(judge=AGREEING, generator=routing()))
    panel = consolidated(qtbot, window)
    qtbot.waitUntil(lambda: panel.pages.count() == 3, timeout=5000)
    preview = window.panel("preview")
    assert isinstance(preview, QtPreviewPanel)
    item = next(panel.pages.item(i) for i in range(3) if "Lisbon" in panel.pages.item(i).text())
    with qtbot.waitSignal(preview.sig_preview_shown, timeout=5000):
        panel._open_page(item)
    assert preview.path == PAGE
    assert LISBON in preview.browser.toPlainText()


def test_recall_shows_facts_with_citations(qtbot, make_window, memory_vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(judge=AGREEING, generator=routing()))
    panel = consolidated(qtbot, window)
    panel.query.setText("When do we fly to Lisbon with Ana?")
    with qtbot.waitSignal(panel.sig_recall_shown, timeout=10000) as shown:
        panel.recall_button.click()
    result = shown.args[0]
    assert result.facts and result.facts[0].text == LISBON
    rows = [
        [panel.results.topLevelItem(i).text(c) for c in range(5)]  # type: ignore[union-attr]
        for i in range(panel.results.topLevelItemCount())
    ]
    fact_rows = [r for r in rows if r[0] == "fact"]
    assert fact_rows[0][1] == "Lisbon trip"
    assert fact_rows[0][2] == f"{LISBON} (2026-12-12)"
    assert fact_rows[0][3] == "2026-11-30#L1"
    assert float(fact_rows[0][4]) >= result.floor
    assert "relevance floor" in panel.results.topLevelItem(0).toolTip(4)  # type: ignore[union-attr]
    panel.query.setText("quantum sourdough volcano")  # no word hashes near any fact
    with qtbot.waitSignal(panel.sig_recall_shown, timeout=10000):
        panel.recall_button.click()
    empty = panel.results.topLevelItem(0)
    assert empty is not None and empty.text(2).startswith("Nothing relevant: every item scored")


def test_recall_on_an_empty_memory_says_so(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = memory_panel(window)
    panel.query.setText("anything at all")
    with qtbot.waitSignal(panel.sig_recall_shown, timeout=10000):
        panel.recall()
    item = panel.results.topLevelItem(0)
    assert item is not None and item.text(2) == "Nothing in memory yet."


def test_json_failure_is_reported_and_the_input_stays_pending(
    qtbot, make_window, memory_vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(
        fake_runtime(judge=AGREEING, generator=routing(Lisbon=["not json", "still not json"]))
    )
    panel = memory_panel(window)
    listed(qtbot, panel)
    with qtbot.waitSignal(panel.sig_report_shown, timeout=15000) as shown:
        panel.consolidate_button.click()
    assert shown.args[0]["status"] == "json_failure"
    assert "<b>json_failure</b>" in panel.report_text.text()
    assert "stays pending" in panel.report_text.text()
    assert "Raw answers:" in panel.report_text.toolTip()
    qtbot.waitUntil(lambda: panel.pending.topLevelItemCount() == 1, timeout=5000)
    assert pending_batches(memory_vault)[0].pending_lines == 5


def test_stop_returns_to_idle_at_once_and_keeps_the_input_pending(
    qtbot, make_window, memory_vault: Path
) -> None:  # type: ignore[no-untyped-def]
    slow = SlowGenerator(tokens=100_000, answer="{}")
    window = make_window(fake_runtime(judge=AGREEING, generator=slow))
    panel = memory_panel(window)
    listed(qtbot, panel)
    panel.consolidate_button.click()
    qtbot.waitUntil(slow.started.is_set, timeout=10000)
    assert panel.stop_button.isEnabled() and not panel.consolidate_button.isEnabled()
    qtbot.waitUntil(lambda: panel.state.text().startswith("Step 1 of 1: "), timeout=5000)
    assert "2026-11-30" in panel.state.text() and not panel.progress.isHidden()
    assert (panel.progress.value(), panel.progress.maximum()) == (0, 1)
    pressed = time.perf_counter()
    with qtbot.waitSignal(panel.sig_report_shown, timeout=10000) as shown:
        panel.stop_button.click()
        # Idle at once, synchronously: no wait for the worker.
        assert panel.consolidate_button.isEnabled() and not panel.stop_button.isEnabled()
        assert panel.state.text().startswith("Stopped")
    assert slow.stopped_at is not None and slow.stopped_at - pressed < 0.5
    assert shown.args[0]["status"] == "stopped"
    assert pending_batches(memory_vault)[0].pending_lines == 5
    assert panel.state.text().startswith("Stopped")
    saved = json.loads((memory_vault / ".antinomy/memory/last-report.json").read_text())
    assert saved["status"] == "stopped"


def test_a_crash_mid_run_is_shown_and_finished_steps_are_listed(
    qtbot, make_window, memory_vault: Path
) -> None:  # type: ignore[no-untyped-def]
    capture_turn(
        memory_vault, role="user", text="I renew the passport before March.", session_id="s2"
    )
    window = make_window(
        fake_runtime(judge=AGREEING, generator=routing(passport=RuntimeError("crashed")))
    )
    panel = memory_panel(window)
    listed(qtbot, panel)
    assert panel.pending.topLevelItemCount() == 2
    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=15000) as shown:
        panel.consolidate_button.click()
    assert shown.args == ["Consolidating memory", "RuntimeError: crashed"]
    assert panel.state.text().startswith("Consolidation failed")
    assert panel.consolidate_button.isEnabled() and not panel.stop_button.isEnabled()
    # The first batch's step was written before the crash: the lists show it.
    qtbot.waitUntil(lambda: panel.pages.count() == 3, timeout=5000)
    assert panel.pending.topLevelItemCount() == 1
    assert panel.pending.topLevelItem(0).text(0) != "2026-11-30"  # type: ignore[union-attr]


@pytest.mark.model
def test_real_models_consolidate_and_recall_from_the_panel(
    qtbot, qloop, memory_vault: Path, runtime
) -> None:  # type: ignore[no-untyped-def]
    from desktop.ui.app import build_window

    window = build_window(loop=qloop, runtime=runtime, use_tray=False, owns_runtime=False)
    qtbot.addWidget(window)
    window.show()
    window.controller.start(memory_vault)
    panel = memory_panel(window)
    qtbot.waitUntil(lambda: window.controller.semantic_ready(), timeout=120000)
    listed(qtbot, panel)
    t0 = time.perf_counter()
    with qtbot.waitSignal(panel.sig_report_shown, timeout=600000) as shown:
        panel.consolidate_button.click()
    seconds = time.perf_counter() - t0
    report = shown.args[0]
    print(
        f"\nreal consolidation from the panel: {report['status']}, {seconds:.1f} s, "
        f"{len(report['accepted'])} accepted, {len(report['rejected'])} rejected"
    )
    assert report["status"] in ("ok", "empty", "json_failure")
    assert panel.accepted.topLevelItemCount() == len(report["accepted"])
    if report["status"] == "json_failure":
        return  # the input stays pending: shown, nothing lost
    qtbot.waitUntil(lambda: panel.pending.topLevelItemCount() == 0, timeout=10000)
    if report["accepted"]:
        qtbot.waitUntil(lambda: panel.pages.count() >= 1, timeout=10000)
        panel.query.setText(report["accepted"][0]["text"])
        with qtbot.waitSignal(panel.sig_recall_shown, timeout=60000) as recalled:
            panel.recall_button.click()
        assert recalled.args[0].facts
        assert recalled.args[0].facts[0].text == report["accepted"][0]["text"]
    window.close()


def test_a_turn_captured_through_the_app_endpoint_is_listed_live(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    from desktop.service.security import load_or_create_token
    from tests.service_util import call
    from tests.ui.test_ui_guard import free_port, use_port

    port = free_port()
    use_port(port)
    window = make_window()
    panel = memory_panel(window)
    listed(qtbot, panel)
    assert panel.pending.topLevelItemCount() == 0
    qtbot.waitUntil(lambda: window.endpoint.state == "up", timeout=15000)
    turn = {"role": "user", "text": "Remember that Ana's flight lands at 9.", "session_id": "h1"}
    status, body = call(port, "POST", "/v1/capture", turn, token=load_or_create_token())
    assert status == 200 and body["status"] == "captured", body
    qtbot.waitUntil(lambda: panel.pending.topLevelItemCount() == 1, timeout=5000)
    item = panel.pending.topLevelItem(0)
    assert item is not None and item.text(2) == "1" and item.text(4) == "open"


def test_the_app_consolidates_a_closed_batch_by_itself_and_shows_the_report(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    from tests.ui.test_ui_guard import free_port, use_port

    use_port(free_port())  # the endpoint (which runs the automatic consolidation) must be up
    turns(vault, *SMALL_TURNS)  # closed; the automatic setting is on by default
    window = make_window(fake_runtime(judge=AGREEING, generator=routing()))
    panel = memory_panel(window)
    from desktop.flows.memory import last_report

    qtbot.waitUntil(lambda: window.endpoint.state == "up", timeout=15000)
    qtbot.waitUntil(lambda: last_report(vault) is not None, timeout=30000)
    qtbot.waitUntil(
        lambda: panel.report is not None and panel.report["status"] == "ok", timeout=30000
    )
    assert not pending_batches(vault)
    qtbot.waitUntil(lambda: panel.pages.count() == 3, timeout=5000)
    assert "3 facts accepted" in panel.report_text.text()


def test_the_settings_dialog_turns_automatic_consolidation_off(qtbot) -> None:  # type: ignore[no-untyped-def]
    from desktop.ui.dialogs.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    assert dialog.auto_consolidate.isChecked()
    dialog.auto_consolidate.setChecked(False)
    assert dialog.collect().memory == MemoryPrefs(auto_consolidate=False)
