"""The pairs of a scan, as the vault has them now: sort, filter, check several, review.

The list keeps the whole run and derives what it shows from the files
(:mod:`desktop.ui.vault_state`), re-read after every transaction — this
window's, the command line's, another process's (``sig_history_changed``) —
and every change to one of its notes (``sig_notes_changed``). A pair a note
dismisses leaves the list and comes back when the dismissal is undone; a
note's type and status are the file's; a pair whose quote was edited away says
so. Review actions are guarded by the hashes of that last read.

The pairs the user's decisions hid (``ScanRun.hidden``) are read with the others and laid
out only while :meth:`QtPairList.set_show_hidden` is on, each card marked with its reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.hunter import Pair, ScanRun
from desktop.flows.hunter.records import sort_pairs
from desktop.ui.context import AppContext
from desktop.ui.dialogs.review_dialogs import ask_defeat, ask_elevate
from desktop.ui.operations import learning as learning_ops
from desktop.ui.operations import review as review_ops
from desktop.ui.panels.pair_card import QtPairCard, folder_of
from desktop.ui.vault_state import PairsNow, read_pairs_now

#: Changes within this many milliseconds are read from disk once.
REFRESH_MS = 60

#: Cards made and laid out per turn of the event loop: a run of hundreds of pairs is shown
#: a chunk at a time, the window answering between chunks, instead of all in one stall.
CARDS_PER_TURN = 10

Key = frozenset[str]


def _by_confidence(pairs: Sequence[Pair]) -> list[Pair]:
    return list(sort_pairs(list(pairs)))


SORTS: list[tuple[str, Callable[[Sequence[Pair]], list[Pair]]]] = [
    ("Confidence", _by_confidence),
    ("Note", lambda ps: sorted(ps, key=lambda p: (p.note_a.casefold(), p.note_b.casefold()))),
    (
        "Folder",
        lambda ps: sorted(
            ps,
            key=lambda p: (
                folder_of(p.path_a).casefold(),
                folder_of(p.path_b).casefold(),
                p.note_a.casefold(),
                p.note_b.casefold(),
            ),
        ),
    ),
]


def run_pairs(run: ScanRun) -> tuple[Pair, ...]:
    """Every pair of ``run``: those shown, then those the user's decisions hid."""
    return (*run.pairs, *run.hidden)


def matches(pair: Pair, words: Sequence[str]) -> bool:
    """Every word occurs in the pair's names, folders, quotes or description."""
    if not words:
        return True
    hay = " ".join(
        (pair.path_a, pair.path_b, pair.note_a, pair.note_b, pair.quote_a, pair.quote_b,
         pair.description)
    ).casefold()  # fmt: skip
    return all(w in hay for w in words)


class QtPairList(QWidget):
    sig_view_changed = Signal()
    """What is shown changed (read ``counts()``)."""
    sig_pair_removed = Signal(object)
    """A pair left the view because a note now dismisses it: ``(Pair)``."""
    sig_refreshed = Signal()
    """The notes were read again and the cards show them."""
    sig_learned = Signal(str)
    """A review action said what the scan learned from it: ``(line)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._ctx = ctx
        self._c = ctx.controller
        self.run: ScanRun | None = None
        self.now: PairsNow | None = None
        #: The cards made so far (each pair's card is made when it is first laid out).
        self.by_key: dict[Key, QtPairCard] = {}
        self._pairs: dict[Key, Pair] = {}  # the run's pairs, one per key
        self._previous = False
        self._listed: list[Pair] = []  # what lay_out lists, cards made or not
        self._more = QTimer(self)  # lays out the next chunk of cards
        self._more.setSingleShot(True)
        self._more.setInterval(0)
        self._more.timeout.connect(self.lay_out)
        self.cards: list[QtPairCard] = []  # shown, in order
        self.selected: QtPairCard | None = None
        self.show_hidden = False
        self._request = 0

        self.select_all = QCheckBox("All shown")
        self.select_all.setToolTip("Check every pair shown (the filter narrows them)")
        self.select_all.clicked.connect(self._select_all_clicked)
        self.sort = QComboBox()
        for text, _fn in SORTS:
            self.sort.addItem(f"Sort: {text.lower()}", text)
        self.sort.currentIndexChanged.connect(lambda _i: self.lay_out())
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: note, folder, words of a quote…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(lambda _t: self.lay_out())
        self.dismiss_checked = QPushButton("Dismiss checked")
        self.dismiss_checked.setToolTip("Dismiss every checked pair (Del); one Undo for all")
        self.dismiss_checked.clicked.connect(self.dismiss_checked_pairs)
        tools = QHBoxLayout()
        tools.setContentsMargins(0, 0, 0, 0)
        tools.addWidget(self.select_all)
        tools.addWidget(self.sort)
        tools.addWidget(self.filter, 1)
        tools.addWidget(self.dismiss_checked)
        self.toolbar = QWidget()
        self.toolbar.setLayout(tools)

        self.list_widget = QWidget()
        self.list_layout = QVBoxLayout(self.list_widget)
        self.list_layout.addStretch(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(self.list_widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.scroll_area, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._refresh_now)
        self._c.sig_history_changed.connect(self.refresh)
        self._c.sig_notes_changed.connect(self._notes_changed)
        self._buttons()

    # ------------------------------------------------------------------ the run and the disk

    @property
    def all_cards(self) -> list[QtPairCard]:
        return list(self.by_key.values())

    @property
    def seen(self) -> dict[str, str]:
        """path → sha256 of each note as last read (what the cards were checked against)."""
        return self.now.hashes if self.now is not None else {}

    def set_run(self, run: ScanRun | None, now: PairsNow | None = None) -> None:
        """Show ``run`` as ``now`` says (read by :func:`read_pairs_now`); None: nothing."""
        self._request += 1  # a read still under way was for the run before
        for card in self.by_key.values():
            card.hide()
            card.deleteLater()
        self.by_key = {}
        self._pairs = {}
        self.cards = []
        self.selected = None
        self.run = run
        self.now = None
        if run is not None:
            for pair in run_pairs(run):
                self._pairs.setdefault(pair.key(), pair)
        if run is not None and now is not None:
            self._apply(now)
        else:
            self.lay_out()
            self.refresh()

    def _card(self, key: Key) -> QtPairCard:
        """The card of the pair ``key``, made (as the notes now are) the first time."""
        card = self.by_key.get(key)
        if card is not None:
            return card
        card = QtPairCard(self._pairs[key])
        card.hide()
        card.sig_note_clicked.connect(self._c.sig_preview_requested)
        card.sig_dismiss_clicked.connect(self.dismiss)
        card.sig_dismiss_like_clicked.connect(self.dismiss_like)
        card.sig_ignore_clicked.connect(self.ignore)
        card.sig_action_clicked.connect(self._note_action)
        card.sig_card_selected.connect(self._select)
        card.sig_checked.connect(lambda _c: self._buttons())
        if self.now is not None:
            card.show_notes(dict(self.now.notes), self.now.stale.get(key))
        if self._previous:
            card.set_previous(True)
        self.by_key[key] = card
        return card

    def refresh(self) -> None:
        """Read the notes again soon (changes close together are read once)."""
        if self.run is not None:
            self._timer.start()

    def _notes_changed(self, paths: Sequence[str]) -> None:
        if self.now is not None and not set(paths).isdisjoint(self.now.notes):
            self.refresh()

    def _refresh_now(self) -> None:
        run, root, before = self.run, self._c.root, self.now
        if run is None or root is None:
            return
        self._request += 1
        request = self._request

        async def go() -> None:
            now = await self._c.run_in(
                self._c.read_pool, read_pairs_now, root, run_pairs(run), before
            )
            if request == self._request and self.run is run and self._c.root == root:
                self._apply(now)

        self._c.spawn(go(), what="Reading the notes of the pairs")

    def _apply(self, now: PairsNow) -> None:
        shown_before = {card.pair.key() for card in self.cards}
        before, self.now = self.now, now
        notes = dict(now.notes)
        for key, card in self.by_key.items():
            # Only the cards whose notes changed are redrawn (a dismissal touches two notes).
            if (
                before is None
                or before.stale.get(key) != now.stale.get(key)
                or any(before.notes.get(p) != notes.get(p) for p in key)
            ):
                card.show_notes(notes, now.stale.get(key))
        self.lay_out()
        for key in shown_before & now.dismissed:
            self.sig_pair_removed.emit(self.by_key[key].pair)
        self.sig_refreshed.emit()

    # ------------------------------------------------------------------ what is shown

    def set_show_hidden(self, on: bool) -> None:
        """Lay out the pairs the user's decisions hid too (marked so), or not."""
        self.show_hidden = on
        self.lay_out()

    def standing(self, *, hidden: bool | None = None) -> list[Pair]:
        """The run's pairs no note dismisses (``hidden``: with the hidden ones; default:
        as the toggle says)."""
        if self.run is None or self.now is None:
            return []
        with_hidden = self.show_hidden if hidden is None else hidden
        seen = set(self.now.dismissed)  # a pair listed twice is shown once
        standing = []
        for pair in self.run.pairs + (self.run.hidden if with_hidden else ()):
            if pair.key() not in seen:
                seen.add(pair.key())
                standing.append(pair)
        return standing

    def lay_out(self) -> None:
        """Lay the cards out: the standing pairs, filtered, in the chosen order. Cards not
        made yet are made :data:`CARDS_PER_TURN` at a time: the list grows by a chunk per
        turn of the event loop until it holds them all (a later call starts again from
        what is laid out, so a sort or filter meanwhile is followed)."""
        self._more.stop()
        words = self.filter.text().casefold().split()
        sort = dict(SORTS)[self.sort.currentData()]
        wanted: list[QtPairCard] = []
        made = 0
        self._listed = sort([p for p in self.standing() if matches(p, words)])
        for p in self._listed:
            if p.key() not in self.by_key:
                if made == CARDS_PER_TURN:
                    self._more.start()  # the rest after the window has answered
                    break
                made += 1
            wanted.append(self._card(p.key()))
        if wanted != self.cards:
            keep = self.selected if self.selected in wanted else None
            index = self.cards.index(self.selected) if self.selected in self.cards else 0
            self._place(wanted)
            self.cards = wanted
            if keep is None and self.cards:
                keep = self.cards[min(index, len(self.cards) - 1)]
            self._select(keep)
        self._buttons()
        self.sig_view_changed.emit()

    def _place(self, wanted: list[QtPairCard]) -> None:
        """Make the layout hold ``wanted`` in order, moving as few cards as it can: one
        dismissal or undo moves one card, not the hundreds around it."""
        keep = set(map(id, wanted))
        for card in self.cards:
            if id(card) not in keep:
                self.list_layout.removeWidget(card)
                card.hide()
                card.check.setChecked(False)  # only what is shown is acted on
        placed = [c for c in self.cards if id(c) in keep]
        placed_ids = set(map(id, placed))
        if placed != [c for c in wanted if id(c) in placed_ids]:  # reordered: lay out anew
            for card in placed:
                self.list_layout.removeWidget(card)
            placed_ids = set()
        for i, card in enumerate(wanted):
            if id(card) not in placed_ids:
                self.list_layout.insertWidget(i, card)
                card.show()

    def counts(self) -> dict[str, int]:
        """shown, dismissed (since the scan), filtered out, stale, hidden (laid out on
        request) — for the header."""
        standing = self.standing(hidden=False)
        total = len({p.key() for p in self.run.pairs}) if self.run is not None else 0
        # What the list holds once every card is made (it fills a chunk per turn).
        listed = self._listed
        shown = [p for p in listed if not p.hidden_because]
        stale = self.now.stale if self.now is not None else {}
        return {
            "shown": len(shown),
            "dismissed": total - len(standing) if self.now is not None else 0,
            "filtered": len(self.standing()) - len(listed),
            "stale": sum(1 for p in listed if stale.get(p.key()) is not None),
            "hidden": len(listed) - len(shown),
        }

    def hidden_standing(self) -> int:
        """The run's hidden pairs no note dismisses: what "Show N hidden" lays out."""
        return len(self.standing(hidden=True)) - len(self.standing(hidden=False))

    def checked(self) -> list[QtPairCard]:
        return [c for c in self.cards if c.check.isChecked() and c.stale is None]

    def _buttons(self) -> None:
        n = len(self.checked())
        self.dismiss_checked.setText(f"Dismiss checked ({n})" if n else "Dismiss checked")
        self.dismiss_checked.setEnabled(n > 0)
        eligible = [c for c in self.cards if c.stale is None]
        self.select_all.setEnabled(bool(eligible))
        state = (
            Qt.CheckState.Checked
            if eligible and n == len(eligible)
            else Qt.CheckState.PartiallyChecked
            if n
            else Qt.CheckState.Unchecked
        )
        self.select_all.blockSignals(True)
        self.select_all.setCheckState(state)
        self.select_all.blockSignals(False)

    def _select_all_clicked(self) -> None:
        while self._more.isActive():  # every pair the filter leaves, made or not yet
            self.lay_out()
        on = len(self.checked()) < len([c for c in self.cards if c.stale is None])
        for card in self.cards:
            card.check.blockSignals(True)
            card.check.setChecked(on and card.stale is None)
            card.check.blockSignals(False)
        self._buttons()

    def _select(self, card: QtPairCard | None) -> None:
        if self.selected is not None and self.selected is not card:
            self.selected.set_selected(False)
        self.selected = card
        if card is not None:
            card.set_selected(True)

    def set_previous(self, previous: bool) -> None:
        self._previous = previous
        for card in self.by_key.values():
            card.set_previous(previous)

    # ------------------------------------------------------------------ review

    def _after(self, task: asyncio.Task[Any] | None) -> None:
        """Whatever the action did or refused, show the notes as they are then, and what
        the scan learned from it."""
        if task is not None:
            task.add_done_callback(lambda _t: self.refresh())
            task.add_done_callback(self._learned)

    def _learned(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        outcome = task.result()
        if isinstance(outcome, review_ops.Dismissals):
            results = [r for _a, _b, r in outcome.done if r.operation_id is not None]
        else:
            results = [outcome.result] if outcome.result.operation_id is not None else []
        line = review_ops.learned_line(results)
        if line:
            self.sig_learned.emit(line)

    def dismiss_like(self, pair: Pair) -> None:
        """Dismiss ``pair`` and hide every pair like it ("dismiss all like this")."""
        seen = {p: self.seen[p] for p in (pair.path_a, pair.path_b) if p in self.seen}
        self._after(
            review_ops.dismiss_like(
                self._c,
                a=pair.path_a,
                b=pair.path_b,
                quote_a=pair.quote_a,
                quote_b=pair.quote_b,
                seen=seen,
            )
        )

    def ignore(self, kind: str, value: str, note: str) -> None:
        """Leave a sentence, a note or a folder out of later scans (``.antinomy/``)."""
        if kind == "sentence":
            learning_ops.ignore_sentence(self._c, text=value, note=note)
        elif kind == "note":
            learning_ops.ignore_note(self._c, note=value)
        else:
            learning_ops.ignore_folder(self._c, folder=value)

    def dismiss(self, pair: Pair) -> None:
        self.dismiss_pairs([pair])

    def dismiss_pairs(self, pairs: Sequence[Pair]) -> None:
        seen = self.seen
        guard = {p: seen[p] for pair in pairs for p in (pair.path_a, pair.path_b) if p in seen}
        task = review_ops.dismiss_pairs(self._c, [(p.path_a, p.path_b) for p in pairs], seen=guard)
        if task is not None:
            task.add_done_callback(self._dismissed)
        self._after(task)

    def _dismissed(self, task: asyncio.Task[review_ops.Dismissals]) -> None:
        """The notes now dismiss these pairs: take them off at once. The files were just
        written so; the read that follows (``refresh``) confirms it from the files."""
        if task.cancelled() or task.exception() is not None or self.now is None:
            return
        outcome = task.result()
        self._request += 1  # a read begun before the write must not put the pairs back
        now = self.now
        notes = dict(now.notes)
        for path, sha in outcome.hashes.items():
            if path in notes:  # stamp None: the next read parses the note again
                notes[path] = replace(notes[path], sha256=sha, stamp=None)
        keys = {frozenset((a, b)) for a, b, _r in outcome.done}
        self._apply(PairsNow(notes, now.dismissed | keys, now.stale))

    def dismiss_checked_pairs(self) -> None:
        cards = self.checked()
        if cards:
            self.dismiss_pairs([c.pair for c in cards])

    def dismiss_selected(self) -> None:
        """Del: the checked pairs, else the selected one."""
        if self.checked():
            self.dismiss_checked_pairs()
        elif self.selected is not None and self.selected.stale is None:
            self.dismiss(self.selected.pair)

    def _note_action(self, action: str, path: str) -> None:
        name = Path(path).stem
        seen = {path: self.seen[path]} if path in self.seen else None
        task: asyncio.Task[Any] | None
        if action == "elevate":
            form = ask_elevate(name, self)
            if form is None:
                return
            task = review_ops.elevate(
                self._c,
                tension=path,
                title=form.title,
                if_clause=form.if_clause,
                then_clause=form.then_clause,
                grey_zone=form.grey_zone,
                seen=seen,
            )
        elif action == "resolve":
            task = review_ops.resolve(self._c, tension=path, seen=seen)
        else:
            answer = ask_defeat(name, self)
            if answer is None:
                return
            task = review_ops.defeat(
                self._c, note=path, motive=answer.motive, replaced_by=answer.replaced_by, seen=seen
            )
        self._after(task)
