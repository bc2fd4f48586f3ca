"""The Tensions panel shows and uses what the scan learns from review: the learning line and
its warning, the hidden pairs one click away, "All like this" (journaled, undoable), Ignore
from a card, the second-opinion badge — and Settings ▸ Learning lists and removes it all."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop.flows.hunter import Pair, ScanRun
from desktop.flows.hunter.ignored import IgnoreStore
from desktop.flows.hunter.labels import LabelStore
from desktop.flows.hunter.records import HIDDEN_REASONS, LearningReport, SecondOpinionReport
from desktop.flows.review import dismiss_like, ignore_folder, ignore_sentence, list_ignored
from desktop.flows.sentences import split_sentences
from desktop.flows.settings import BackendSettings, Settings
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from desktop.ui.panels.tensions import QtTensionsPanel
from desktop.vault.notes import read_note
from tests.ui.conftest import fake_runtime
from tests.ui.scans import GOOD, A, B, scan_everything, scripted

C = "Decisions/ADR-0003 Event storage in MongoDB.md"
D = "Decisions/ADR-0004 One PostgreSQL cluster.md"
E = "Decisions/ADR-0011 Friday release window.md"


def _quote(vault: Path, path: str, n: int = 0) -> str:
    return [s.quote for s in split_sentences(read_note(vault, path).body) if len(s.quote) > 40][n]


def _pair(vault: Path, a: str, b: str, **kw: object) -> Pair:
    base = Pair(
        path_a=a,
        path_b=b,
        note_a=Path(a).stem,
        note_b=Path(b).stem,
        quote_a=_quote(vault, a),
        quote_b=_quote(vault, b),
        description="They disagree.",
        confidence="medium",
        probability=0.7,
        found_by="judge",
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _run(vault: Path, **kw: object) -> ScanRun:
    run = ScanRun(
        started_at=datetime.now(UTC).astimezone().isoformat(timespec="seconds"),
        mode="whole-vault",
        status="ok",
        pairs=(_pair(vault, C, D),),
        hidden=(
            _pair(vault, C, E, hidden_because="calibration"),
            _pair(vault, D, E, hidden_because="like"),
        ),
        learning=LearningReport(
            decisions=12,
            used=12,
            hidden_by_calibration=1,
            hidden_like=1,
            message="12 of your decisions used; 1 pair like ones you dismissed is hidden",
            error="what was learned could not be read (bad json)",
        ),
    )
    return replace(run, **kw)  # type: ignore[arg-type]


def _show(qtbot, window, run: ScanRun) -> QtTensionsPanel:  # type: ignore[no-untyped-def]
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    with qtbot.waitSignal(t.sig_results_shown, timeout=10000):
        t.show_run(run)
    qtbot.waitUntil(lambda: t.pairs.now is not None and len(t.cards) >= 1, timeout=5000)
    return t


def _scan(qtbot, window) -> QtTensionsPanel:  # type: ignore[no-untyped-def]
    scan_everything(window)
    t = window.panel("tensions")
    assert isinstance(t, QtTensionsPanel)
    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.run_button.click()
    qtbot.waitUntil(lambda: len(t.cards) == 1, timeout=5000)
    return t


def test_the_learning_line_and_the_hidden_pairs_one_click_away(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    t = _show(qtbot, window, _run(vault))
    bar = t.learning
    assert bar.message.isVisibleTo(t)
    assert bar.message.text() == (
        "<b>Learned from your decisions:</b> 12 of your decisions used; 1 pair like ones you "
        "dismissed is hidden"
    )
    assert bar.warning.isVisibleTo(t)
    assert "⚠ Learning: what was learned could not be read (bad json)" in bar.warning.text()
    assert bar.toggle.isVisibleTo(t) and bar.toggle.text() == "Show 2 hidden"
    assert [c.pair.path_b for c in t.cards] == [D]

    bar.toggle.click()
    assert len(t.cards) == 3 and bar.toggle.text() == "Hide the 2 hidden pairs"
    hidden = [c for c in t.cards if c.pair.hidden_because]
    assert len(hidden) == 2
    for card in hidden:
        assert card.hidden_label.isVisibleTo(card)
        assert escape(HIDDEN_REASONS[card.pair.hidden_because]) in card.hidden_label.text()
        assert "hidden" in card.title.text()
    assert not t.cards[0].hidden_label.isVisibleTo(t.cards[0])
    assert "2 hidden pairs shown too" in t.state.text()

    bar.toggle.click()  # off again: hidden again
    assert [c.pair.path_b for c in t.cards] == [D] and bar.toggle.text() == "Show 2 hidden"

    bar.toggle.click()  # on, then another vault is opened: its hidden pairs start hidden
    with qtbot.waitSignal(window.controller.sig_vault_opened, timeout=5000):
        window.controller.open_vault(vault)
    assert not bar.toggle.isChecked() and not t.pairs.show_hidden
    assert not bar.toggle.isVisibleTo(t) and not bar.message.isVisibleTo(t)


def test_no_learning_no_line_and_no_toggle(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    t = _show(qtbot, window, _run(vault, hidden=(), learning=LearningReport()))
    assert not t.learning.message.isVisibleTo(t)
    assert not t.learning.warning.isVisibleTo(t)
    assert not t.learning.toggle.isVisibleTo(t)


def test_dismiss_all_like_this_is_one_undo_for_the_pair_and_its_frame(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(generator=scripted(GOOD)))
    t = _scan(qtbot, window)
    card = t.cards[0]
    with qtbot.waitSignal(t.sig_pair_removed, timeout=10000):
        card.like_button.click()
    (frame,) = LabelStore(vault).read().frames
    assert frame.operation_id and {frame.path_a, frame.path_b} == {A, B}
    bar = window.undo_bar
    qtbot.waitUntil(lambda: bar.text.text().startswith("Dismissed all like"), timeout=5000)
    # The sample vault's tension note records this clash: the dismissal replaces it.
    learned = (
        "kept as 1 dismissed pair to learn from; replaces your earlier “tension” of that pair "
        "(the latest decision counts); pairs like it hidden"
    )
    assert (
        bar.text.text()
        == "Dismissed all like A run should leave me spent ↔ Easy runs build the base"
    )
    assert bar.operation_ids == (frame.operation_id,)
    qtbot.waitUntil(lambda: t.learning.learned.isVisibleTo(t), timeout=5000)
    assert t.learning.learned.text() == f"<i>Your last decision: {escape(learned)}.</i>"
    history = window.panel("history")
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=5000)
    assert history.entries[0].operation_type == "dismiss"

    bar.undo_button.click()  # both halves come back
    qtbot.waitUntil(lambda: len(t.cards) == 1, timeout=10000)
    qtbot.waitUntil(lambda: LabelStore(vault).read().frames == [], timeout=5000)
    assert b"hunter_false_positives" not in (vault / B).read_bytes()


def test_ignore_from_a_card_and_the_next_scan_leaves_it_out(
    qtbot, make_window, vault: Path
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(fake_runtime(generator=scripted(GOOD, GOOD)))
    t = _scan(qtbot, window)
    card = t.cards[0]
    actions = {a.text(): a for a in card.ignore_menu.actions()}
    assert list(actions)[2:] == [
        "Ignore the note A run should leave me spent",
        "Ignore the note Easy runs build the base",
        "Ignore the folder Substrates/",
    ]
    sentence = next(
        a for text, a in actions.items() if text.startswith("Ignore this sentence of A")
    )
    sentence.trigger()
    qtbot.waitUntil(lambda: len(list_ignored(vault)) == 1, timeout=5000)
    (item,) = list_ignored(vault)
    assert (item.kind, item.value, item.note) == ("sentence", card.pair.quote_a, A)
    qtbot.waitUntil(lambda: window.undo_bar.text.text().startswith("Ignored"), timeout=5000)
    assert window.undo_bar.text.text() == (
        f"Ignored from the next scan on: sentence “{card.pair.quote_a}” (from A run should "
        "leave me spent) (Settings ▸ Learning lists it)."
    )
    assert not window.undo_bar.undo_button.isVisible()

    with qtbot.waitSignal(t.sig_results_shown, timeout=15000):
        t.run_button.click()
    run = t.run
    assert run is not None and run.pairs == ()  # the model's quote is no longer in the note
    assert run.ignored.sentences == 1
    assert t.learning.ignored.isVisibleTo(t)
    assert t.learning.ignored.text() == "Left out 1 sentence you asked to ignore."


def test_the_second_opinion_badge_and_line(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    run = _run(
        vault,
        pairs=(_pair(vault, C, D, second_opinion="yes"), _pair(vault, D, E)),
        hidden=(_pair(vault, C, E, second_opinion="no", hidden_because="second_opinion"),),
        learning=LearningReport(),
        second_opinion=SecondOpinionReport(
            asked=2, requests=4, yes=1, no=1, hidden=1, server="http", leaves_machine=True
        ),
    )
    t = _show(qtbot, window, run)
    asked, plain = sorted(t.cards, key=lambda c: c.pair.path_b)
    assert "server: yes" in asked.title.text()
    assert "it says they contradict, both ways round" in asked.title.toolTip()
    assert "server:" not in plain.title.text()
    assert t.learning.opinion.text() == (
        "Second opinion from http (not on this machine): 2 pairs asked both ways — 1 yes, 1 no, "
        "0 split, 0 without an answer; 1 hidden by its no."
    )
    t.learning.toggle.click()
    (hidden,) = [c for c in t.cards if c.pair.hidden_because]
    assert "server: no" in hidden.title.text()
    assert escape(HIDDEN_REASONS["second_opinion"]) in hidden.hidden_label.text()


# ---------------------------------------------------------------- Settings ▸ Learning


def test_settings_lists_what_was_learned_and_ignored_and_removes_it(
    qtbot, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    quote_a, quote_b = _quote(vault, C), _quote(vault, D)
    dismiss_like(vault, C, D, quote_a=quote_a, quote_b=quote_b)
    ignore_folder(vault, "Archive")
    ignore_sentence(vault, _quote(vault, E), note=E)
    dialog = SettingsDialog(Settings(), vault=vault)
    qtbot.addWidget(dialog)
    tab = dialog.learning
    assert dialog.tabs.tabText(dialog.tabs.indexOf(tab)) == "Learning"
    kept = len(LabelStore(vault).read().active())  # with those the notes already record
    assert kept > 1
    assert tab.summary.text() == f"{kept} of your decisions kept for this vault's calibration."
    assert tab.frames.count() == 1
    assert tab.frames.item(0).text() == (
        f"“{quote_a[:59]}…”  ⟂  “{quote_b[:59]}…” (ADR-0003 Event storage in MongoDB ↔ "
        "ADR-0004 One PostgreSQL cluster)"
    )
    (frame,) = LabelStore(vault).read().frames
    assert tab.frames.item(0).toolTip() == (
        f"Every pair whose two sentences read as:\n{frame.key}\n(dismissed from ADR-0003 Event "
        "storage in MongoDB ↔ ADR-0004 One PostgreSQL cluster)"
    )
    assert [tab.ignored.item(i).text() for i in range(tab.ignored.count())] == [
        "folder Archive",
        f"sentence “{_quote(vault, E)[:89]}…” (from ADR-0011 Friday release window)"
        if len(_quote(vault, E)) > 90
        else f"sentence “{_quote(vault, E)}” (from ADR-0011 Friday release window)",
    ]

    tab.frames.setCurrentRow(0)
    tab.unhide.click()
    assert LabelStore(vault).read().frames == [] and tab.frames.count() == 0
    assert tab.status.text().endswith("the pair's own dismissal stays).")
    tab.ignored.setCurrentRow(0)
    tab.unignore.click()
    assert [i.kind for i in IgnoreStore(vault).read().items] == ["sentence"]
    assert tab.status.text() == "No longer ignored: folder Archive."

    asked: list[str] = []

    def question(*args: object, **kw: object) -> QMessageBox.StandardButton:
        asked.append(str(args[1]))
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", question)
    tab.reset.click()
    assert asked == ["Reset what was learned"]
    assert tab.status.text() == (
        f"Back to the shipped calibration: {kept} decision(s) set aside, 0 hidden frame(s) shown "
        "again."
    )
    assert tab.summary.text() == "0 of your decisions kept for this vault's calibration."


def test_settings_without_a_vault_says_so(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    assert dialog.learning.summary.text() == (
        "Open a vault to see what its scans learned and leave out."
    )
    assert not dialog.learning.reset.isEnabled()


def test_the_second_opinion_toggle_is_off_by_default_and_asks_before_leaving(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    remote = Settings(backend=BackendSettings(kind="http", base_url="http://192.0.2.7:8080/v1"))
    dialog = SettingsDialog(remote)
    qtbot.addWidget(dialog)
    box = dialog.learning.second_opinion
    assert not box.isChecked()
    assert dialog.collect().scan.second_opinion is False
    box.setChecked(True)
    assert dialog.collect().scan.second_opinion is True

    warned: list[str] = []
    answer = [QMessageBox.StandardButton.No]

    def warning(*args: object, **kw: object) -> QMessageBox.StandardButton:
        warned.append(str(args[2]))
        return answer[0]

    monkeypatch.setattr(QMessageBox, "warning", warning)
    dialog.accept()
    assert dialog.result_settings is None
    assert warned == [
        "The language model server http://192.0.2.7:8080/v1 is not on this machine — the two "
        "sentences of every pair about to be shown are sent to it for a second opinion. Use it "
        "only if you trust that server with your notes."
    ]
    assert dialog.problem.text() == (
        "The second opinion was not turned on: it would send sentences elsewhere."
    )
    answer[0] = QMessageBox.StandardButton.Yes
    dialog.accept()
    assert dialog.result_settings is not None and dialog.result_settings.scan.second_opinion
