"""The window shows what is on disk: after an undo, an elevate, a dismissal by another
process, and an edit elsewhere, every view re-reads the vault."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop.flows.review import dismiss_pair, list_dismissed
from desktop.ui.dialogs.review_dialogs import ElevateForm
from desktop.ui.panels import pair_list as pair_list_module
from desktop.ui.panels.dismissed import QtDismissedPanel
from desktop.ui.panels.history import QtHistoryPanel
from desktop.ui.panels.tensions import QtTensionsPanel
from desktop.ui.watcher import journal_mark
from tests.ui.conftest import fake_runtime
from tests.ui.runs import save_run
from tests.ui.scans import GOOD, scan_everything, scripted

RESTORED = r"\(restored from \d\d:\d\d"


def _tensions(window) -> QtTensionsPanel:  # type: ignore[no-untyped-def]
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    return t


def _restored(qtbot, make_window, vault: Path, n: int):  # type: ignore[no-untyped-def]
    run = save_run(vault, n)
    window = make_window()
    t = _tensions(window)
    qtbot.waitUntil(lambda: len(t.cards) == n, timeout=10000)
    return window, t, run


def test_undoing_a_dismissal_brings_the_pair_back_and_the_header_counts_it(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window, t, _run = _restored(qtbot, make_window, vault, 3)
    assert re.fullmatch(rf"3 pairs shown {RESTORED}\)\.", t.state.text()), t.state.text()
    pair = t.cards[0].pair
    before = {p: (vault / p).read_bytes() for p in (pair.path_a, pair.path_b)}
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        t.cards[0].dismiss_button.click()
    assert len(t.cards) == 2 and pair not in [c.pair for c in t.cards]
    assert re.fullmatch(rf"2 pairs shown {RESTORED}; 1 dismissed since\)\.", t.state.text())
    history = window.panel("history")
    assert isinstance(history, QtHistoryPanel)
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=5000)
    history.select_operation(history.entries[0].operation_id)
    history.undo_button.click()
    qtbot.waitUntil(lambda: len(t.cards) == 3, timeout=10000)
    assert {p: (vault / p).read_bytes() for p in before} == before
    assert pair in [c.pair for c in t.cards]
    assert re.fullmatch(rf"3 pairs shown {RESTORED}\)\.", t.state.text()), t.state.text()
    # The notes are back as the scan read them: dismissing the pair again is allowed.
    card = next(c for c in t.cards if c.pair == pair)
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        card.dismiss_button.click()
    assert not window.errors.errors, window.errors.errors
    assert (pair.path_a, pair.path_b) in {(d.path_a, d.path_b) for d in list_dismissed(vault)} | {
        (d.path_b, d.path_a) for d in list_dismissed(vault)
    }


def test_elevate_shows_the_tension_as_its_file_says_and_undo_brings_it_back(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    tension = "Tensions/Base miles vs hard efforts.md"
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
    scan_everything(window)
    t = _tensions(window)
    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.run_button.click()
    card = t.cards[0]
    row = card.rows[tension]
    assert row.label.text() == "Base miles vs hard efforts (tension, open)"
    monkeypatch.setattr(
        pair_list_module,
        "ask_elevate",
        lambda name, parent: ElevateForm("Easy most days", "IF a base run", "THEN easy", ""),
    )
    card.action_buttons[("elevate", tension)].click()
    qtbot.waitUntil(lambda: row.state.text() == "✓ elevated to Easy most days", timeout=10000)
    # The file now says defeated (its status left as it was): the card says what the file
    # says, and offers neither Elevate nor Resolved.
    assert row.label.text() == "Base miles vs hard efforts (defeated, open)"
    assert ("elevate", tension) not in card.action_buttons
    assert ("resolve", tension) not in card.action_buttons
    assert "tension, open" not in card.quotes.text()
    bar = window.undo_bar
    assert bar.isVisible() and bar.undo_button.isVisible()
    assert bar.text.text() == "Elevated: Base miles vs hard efforts → principle Easy most days"
    bar.undo_button.click()
    qtbot.waitUntil(lambda: row.label.text().endswith("(tension, open)"), timeout=10000)
    assert row.state.text() == "" and ("elevate", tension) in card.action_buttons
    assert not (vault / "Antinomy/Principles/Easy most days.md").exists()
    # The watcher may show the files as they are before the undo itself reports back.
    undone = "Undone: Elevated: Base miles vs hard efforts → principle Easy most days"
    qtbot.waitUntil(lambda: bar.text.text() == undone, timeout=10000)


def test_a_dismissal_by_another_process_reaches_every_view(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window, t, run = _restored(qtbot, make_window, vault, 3)
    dismissed = window.panel("dismissed")
    history = window.panel("history")
    assert isinstance(dismissed, QtDismissedPanel) and isinstance(history, QtHistoryPanel)
    already = len(list_dismissed(vault))
    qtbot.waitUntil(lambda: dismissed.list.count() == already, timeout=5000)
    assert history.entries == []
    pair = run.pairs[1]
    # The command line's review flow, in this process but outside the window's objects.
    result = dismiss_pair(vault, pair.path_a, pair.path_b)
    assert result.operation_id is not None
    qtbot.waitUntil(lambda: len(t.cards) == 2, timeout=10000)  # the watcher saw it
    assert pair not in [c.pair for c in t.cards]
    qtbot.waitUntil(lambda: dismissed.list.count() == already + 1, timeout=10000)
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=10000)
    assert history.tree.topLevelItem(0).text(1) == (  # type: ignore[union-attr]
        f"Dismissed: {Path(pair.path_a).stem} ↔ {Path(pair.path_b).stem}"
    )
    assert re.fullmatch(rf"2 pairs shown {RESTORED}; 1 dismissed since\)\.", t.state.text())
    assert not window.errors.errors


def test_x_on_a_pair_dismissed_elsewhere_is_not_a_problem(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window, t, _run = _restored(qtbot, make_window, vault, 2)
    window.watcher.stop()  # the click comes before the watcher sees the other process
    card = t.cards[0]
    dismiss_pair(vault, card.pair.path_a, card.pair.path_b)
    card.dismiss_button.click()
    qtbot.waitUntil(lambda: len(t.cards) == 1, timeout=10000)
    assert not window.errors.errors, window.errors.errors
    assert window.undo_bar.text.text() == "Nothing to write: the notes already say so."
    assert not window.undo_bar.undo_button.isVisible()


def test_an_edit_elsewhere_is_checked_against_the_quotes(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window, t, _run = _restored(qtbot, make_window, vault, 2)
    first, second = t.cards
    # An edit that keeps the quote: the card still stands, and its actions still work.
    note = vault / first.pair.path_a
    note.write_text(note.read_text(encoding="utf-8") + "\nA line added elsewhere.\n", "utf-8")
    with qtbot.waitSignal(t.pairs.sig_refreshed, timeout=10000):
        window.watcher.check_now()
    assert first.stale is None and first.dismiss_button.isEnabled()
    # An edit that removes the quote: the card says so and offers no action.
    other = vault / second.pair.path_b
    text = other.read_text(encoding="utf-8")
    quote = second.pair.quote_b
    assert quote in text
    other.write_text(text.replace(quote, "Rewritten since the scan."), "utf-8")
    qtbot.waitUntil(lambda: second.stale is not None, timeout=10000)
    assert "no longer in the note" in second.stale_label.text()
    assert not second.dismiss_button.isEnabled() and not second.check.isEnabled()
    assert "1 changed on disk" in t.state.text()
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        first.dismiss_button.click()
    assert not window.errors.errors, window.errors.errors


def test_the_watcher_announces_only_what_another_process_did(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window, t, run = _restored(qtbot, make_window, vault, 3)
    c = window.controller
    announced: list[bool] = []
    c.sig_history_changed.connect(lambda: announced.append(True))
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        t.cards[0].dismiss_button.click()
    assert announced == [True]  # by the action itself
    window.watcher.check_now()
    qtbot.waitUntil(lambda: window.watcher._journal == journal_mark(vault), timeout=10000)
    assert announced == [True]  # this window's own operation is not announced twice
    dismiss_pair(vault, run.pairs[2].path_a, run.pairs[2].path_b)
    window.watcher.check_now()
    qtbot.waitUntil(lambda: len(announced) == 2, timeout=10000)


def test_a_journal_change_seen_while_this_window_writes_waits_for_its_announcement(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    """The watcher's walk can see this window's own operation in the journal before the
    action announces it (a loaded machine): it is judged after the write settles, then
    counted as this window's own, and announced once."""
    window, _t, run = _restored(qtbot, make_window, vault, 3)
    c = window.controller
    announced: list[bool] = []
    c.sig_history_changed.connect(lambda: announced.append(True))
    # The window's write, as the action runs it: in flight while the watcher looks.
    pair = run.pairs[0]
    c.writes_in_flight += 1
    result = dismiss_pair(vault, pair.path_a, pair.path_b)
    window.watcher.check_now()
    qtbot.waitUntil(lambda: not window.watcher._scanning, timeout=10000)
    qtbot.wait(50)
    assert announced == []  # not taken for another process's operation
    # The write is over and the action announces it (in that order, as run_in orders them).
    c.writes_in_flight -= 1
    c.sig_writes_settled.emit()
    c.history_changed([result.operation_id])
    qtbot.waitUntil(lambda: window.watcher._journal == journal_mark(vault), timeout=10000)
    assert announced == [True]
