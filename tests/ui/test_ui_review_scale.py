"""Review at scale: the Undo bar, History in words, sort and filter, dismissing many pairs
at once, and the Tensions panel's layout at 1280×800."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from desktop.flows.review import list_dismissed
from desktop.resources import ensure_sample_vault
from desktop.ui.dialogs.review_dialogs import DefeatForm
from desktop.ui.panels import pair_list as pair_list_module
from desktop.ui.panels.history import QtHistoryPanel
from desktop.ui.panels.pair_card import folder_of
from desktop.ui.panels.tensions import QtTensionsPanel
from desktop.ui.toast import QtUndoBar
from tests.ui.runs import save_run

ADR = "Decisions/ADR-0011 Friday release window.md"


def _restored(qtbot, make_window, vault: Path, n: int, **kw):  # type: ignore[no-untyped-def]
    run = save_run(vault, n, **kw)
    window = make_window()
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    qtbot.waitUntil(lambda: len(t.cards) == n, timeout=15000)
    return window, t, run


def _name(path: str) -> str:
    return Path(path).stem


def test_dismiss_offers_undo_in_words_and_history_says_the_same(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window, t, _run = _restored(qtbot, make_window, vault, 2)
    pair = t.cards[0].pair
    words = f"Dismissed: {_name(pair.path_a)} ↔ {_name(pair.path_b)}"
    before = {p: (vault / p).read_bytes() for p in (pair.path_a, pair.path_b)}
    t.cards[0].dismiss_button.click()
    bar = window.undo_bar
    qtbot.waitUntil(lambda: bar.isVisible() and bar.text.text() == words, timeout=10000)
    assert bar.undo_button.isVisible() and not bar.isWindow()  # a bar, never a dialog
    history = window.panel("history")
    assert isinstance(history, QtHistoryPanel)
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=5000)
    bar.undo_button.click()
    qtbot.waitUntil(lambda: bar.text.text() == f"Undone: {words}", timeout=10000)
    assert {p: (vault / p).read_bytes() for p in before} == before
    assert not bar.undo_button.isVisible()
    qtbot.waitUntil(lambda: len(history.entries) == 2, timeout=5000)
    rows = [history.tree.topLevelItem(i) for i in range(2)]
    texts = [(r.text(1), r.text(3)) for r in rows if r is not None]
    assert texts[0] == (f"Undone: {words}", "")
    assert texts[1][0] == words and re.fullmatch(r"undone \d\d:\d\d:\d\d", texts[1][1])
    # No operation id is shown as the operation: it stays in the tooltip.
    assert not any(re.search(r"dismiss-\d{8}T", a + b) for a, b in texts)
    assert history.entries[1].operation_id in rows[1].toolTip(1)  # type: ignore[union-attr]


def test_resolve_and_defeat_offer_undo_in_words(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    tension = "Tensions/Base miles vs hard efforts.md"
    window, t, _run = _restored(qtbot, make_window, vault, 3, first=tension)
    card = next(c for c in t.cards if tension in (c.pair.path_a, c.pair.path_b))
    card.action_buttons[("resolve", tension)].click()
    bar = window.undo_bar
    qtbot.waitUntil(
        lambda: bar.text.text() == "Resolved: Base miles vs hard efforts", timeout=10000
    )
    qtbot.waitUntil(lambda: card.note_state[tension].text() == "✓ resolved", timeout=10000)
    monkeypatch.setattr(
        pair_list_module, "ask_defeat", lambda name, parent: DefeatForm("outgrown", None)
    )
    card.action_buttons[("defeat", tension)].click()
    qtbot.waitUntil(
        lambda: bar.text.text() == "Defeated: Base miles vs hard efforts (outgrown)", timeout=10000
    )
    assert bar.undo_button.isVisible()


def test_the_undo_bar_hides_by_itself(qtbot) -> None:  # type: ignore[no-untyped-def]
    host = QWidget()  # away from the pointer: a bar under the pointer stays to be read
    qtbot.addWidget(host)
    host.setGeometry(400, 300, 400, 80)
    bar = QtUndoBar(host, hide_ms=50)
    host.show()
    bar.show_action("Dismissed: A ↔ B", ("op-1",))
    assert bar.isVisible() and bar.undo_button.isVisible()
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=5000)
    with qtbot.waitSignal(bar.sig_undo_requested) as asked:
        bar.show_action("Dismissed 2 pairs", ("op-1", "op-2"))
        bar.undo_button.click()
    assert asked.args == ["Dismissed 2 pairs", ("op-1", "op-2")]


def test_sort_and_filter_with_counts_for_a_restored_run(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    _window, t, run = _restored(qtbot, make_window, vault, 12)
    # The mode box says what the results on screen are: the restored run's mode.
    assert t.mode.currentData() == "whole-vault"
    assert re.fullmatch(r"12 pairs shown \(restored from \d\d:\d\d\)\.", t.state.text())
    p = t.pairs
    confidences = [c.pair.confidence for c in t.cards]
    assert confidences == sorted(confidences, key=["high", "medium", "low"].index)
    p.sort.setCurrentIndex(p.sort.findData("Note"))
    names = [(c.pair.note_a.casefold(), c.pair.note_b.casefold()) for c in t.cards]
    assert names == sorted(names) and len(names) == 12
    p.sort.setCurrentIndex(p.sort.findData("Folder"))
    folders = [folder_of(c.pair.path_a).casefold() for c in t.cards]
    assert folders == sorted(folders)
    p.filter.setText("decisions/")
    shown = [c.pair for c in t.cards]
    expected = [q for q in run.pairs if "Decisions/" in q.path_a + q.path_b]
    assert 0 < len(shown) == len(expected) < 12
    hidden = 12 - len(shown)
    assert t.state.text().startswith(f"{len(shown)} pairs shown (restored from ")
    assert t.state.text().endswith(f"; {hidden} filtered out).")
    p.filter.setText("no pair has these words")
    assert t.cards == [] and t.empty.text() == "No pair matches the filter."
    p.filter.clear()
    assert len(t.cards) == 12


def test_forty_pairs_dismissed_in_two_clicks_and_undone_in_one(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window, t, run = _restored(qtbot, make_window, vault, 40)
    notes = {p for pair in run.pairs for p in (pair.path_a, pair.path_b)}
    before = {p: (vault / p).read_bytes() for p in notes}
    already = len(list_dismissed(vault))
    t.pairs.select_all.click()
    assert t.pairs.dismiss_checked.text() == "Dismiss checked (40)"
    t.pairs.dismiss_checked.click()
    qtbot.waitUntil(lambda: t.cards == [], timeout=60000)
    assert len(list_dismissed(vault)) == already + 40
    assert not window.errors.errors, window.errors.errors
    bar = window.undo_bar
    assert bar.text.text() == "Dismissed 40 pairs" and len(bar.operation_ids) == 40
    assert t.empty.text() == "No pairs left in this run."
    bar.undo_button.click()
    qtbot.waitUntil(lambda: len(t.cards) == 40, timeout=60000)
    assert {p: (vault / p).read_bytes() for p in notes} == before
    assert bar.text.text() == "Undone: Dismissed 40 pairs"


def test_cards_show_links_as_text_and_folders_instead_of_no_type(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    _window, t, _run = _restored(qtbot, make_window, vault, 12, first=ADR)
    adr = next(c for c in t.cards if ADR in (c.pair.path_a, c.pair.path_b))
    assert "[[Projects/Staging pipeline|Staging]]" in (adr.pair.quote_a + adr.pair.quote_b)
    assert "“Staging keeps deploying on every merge.”" in adr.quotes.text()
    assert "[[" not in adr.quotes.text()
    assert "(Decisions/ · decision, accepted)" in adr.quotes.text()
    labels = [label.text() for c in t.cards for label in c.findChildren(QLabel)]
    assert not any("no type" in text for text in labels)
    untyped = next(
        c for c in t.cards if "Quick capture" in (c.pair.note_a, c.pair.note_b)
    )  # Inbox/Quick capture.md has no type: its folder says where it is
    assert "<b>Quick capture</b> <span style='color:#808080;'>(Inbox/)</span>" in (
        untyped.quotes.text()
    )
    assert all(not row.isVisibleTo(untyped) for row in untyped.rows.values() if "Quick" in row.name)


def test_the_status_bar_shows_the_endpoint_whole_at_1280(
    qtbot, make_window, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.resize(1280, 800)
    c = window.controller
    deep = tmp_path / "home" / "someone" / "Documents" / "Obsidian vaults" / "Engineering handbook"
    c.open_vault(ensure_sample_vault(deep))
    qtbot.waitUntil(lambda: c.last_report is not None and c.root is not None, timeout=20000)
    QApplication.processEvents()
    status = window.status
    # The status bar fits the window (a bar wider than its window is cut at the right).
    assert status.width() <= window.width() == 1280
    for label in (status.endpoint, status.models):
        assert label.width() >= label.sizeHint().width(), label.text()
        assert label.mapTo(window, label.rect().topRight()).x() < window.width()
    assert status.vault.text() == f"vault: {c.root}" == status.vault.toolTip()
    assert "…" in status.vault.shown_text()  # the path gives up its middle, not the endpoint


def test_del_dismisses_the_checked_pairs_and_undo_names_what_it_cannot_take_back(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window, t, _run = _restored(qtbot, make_window, vault, 6)
    first, second = t.cards[0], t.cards[1]
    keep = set(first.pair.key() | second.pair.key())
    third = next(c for c in t.cards[2:] if keep.isdisjoint(c.pair.key()))
    first.check.setChecked(True)
    third.check.setChecked(True)
    assert t.pairs.dismiss_checked.text() == "Dismiss checked (2)"
    delete = next(a for a in t.menu_actions() if a.shortcut().toString() == "Del")
    delete.trigger()
    qtbot.waitUntil(lambda: len(t.cards) == 4, timeout=10000)
    assert second in t.cards and first not in t.cards and third not in t.cards
    bar = window.undo_bar
    assert bar.text.text() == "Dismissed 2 pairs"
    # A note of the first pair is edited by hand since: that dismissal stays, named; the
    # other one is undone.
    edited = vault / first.pair.path_a
    edited.write_text(edited.read_text(encoding="utf-8") + "\nTyped since.\n", encoding="utf-8")
    with qtbot.waitSignal(window.errors.sig_error_shown, timeout=10000) as shown:
        bar.undo_button.click()
    what, message = shown.args
    assert what == "Undoing “Dismissed 2 pairs”"
    assert first.pair.path_a in message and "never overwrites a later edit" in message
    qtbot.waitUntil(lambda: third in t.cards, timeout=10000)
    assert first not in t.cards and "Typed since." in edited.read_text(encoding="utf-8")
    assert bar.text.text() == "Undone 1 of 2: Dismissed 2 pairs"


def test_a_long_run_is_laid_out_a_chunk_per_turn_with_the_window_answering_between(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QTimer

    n = 35  # several chunks
    run = save_run(vault, n)
    window = make_window()
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    qtbot.waitUntil(lambda: len(t.cards) == n, timeout=15000)
    # Shown again (as after a scan): cards are made a chunk at a time, and a timer of the
    # window fires between chunks, so the window answers while the list fills.
    sizes: list[int] = []
    ticker = QTimer()
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: sizes.append(len(t.cards)))
    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.show_run(run)
        ticker.start()
    assert 0 < len(t.cards) < n
    # The header counts every pair from the start, made or not.
    assert f"{n} " in t.state.text() and "filtered" not in t.state.text()
    # All shown checks every pair, those whose cards are not made yet too.
    t.pairs.select_all.click()
    assert len(t.cards) == n and len(t.pairs.checked()) == n
    t.pairs.select_all.click()
    t.show_run(run)
    qtbot.waitUntil(lambda: 0 < len(t.cards) < n, timeout=15000)
    qtbot.waitUntil(lambda: len(t.cards) == n, timeout=15000)
    ticker.stop()
    assert any(0 < s < n for s in sizes)  # the event loop ran while the list was not full
    assert [c.pair.key() for c in t.cards] == [p.key() for p in t.pairs._listed]
