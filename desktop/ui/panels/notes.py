"""Notes: the vault as a folder tree (or a flat list), type/status/tag filters, search.

The search combines full text and meaning (``desktop.flows.note_search``): its
results are a ranked list, each note with how it matched and, under its title,
the sentence that matched; notes under the relevance floor are left out and the
count says how many and why. Everything runs off the GUI thread, each request
numbered so a stale answer is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.note_search import NoteMatch, marked, search_notes
from desktop.flows.progress import plural
from desktop.ui.context import AppContext
from desktop.ui.panels import PanelSpec
from desktop.vault.index import NoteSummary, VaultIndex
from desktop.vault.tags import note_tags

ALL = "All"
PATH_ROLE = Qt.ItemDataRole.UserRole
#: The two ways to see the notes when not searching.
VIEWS = (("Folders", "tree"), ("Flat list", "list"))


@dataclass
class Listing:
    """What one refresh shows (built on the read worker)."""

    rows: list[NoteSummary]
    types: list[str]
    statuses: list[str]
    tags: list[str]
    #: Search only: path → the match (its hit, its matching sentence, its relevance).
    hits: dict[str, NoteMatch] = field(default_factory=dict)
    #: Search only: why some matches are not shown (``""``: all are).
    left_out: str = ""
    left_out_why: str = ""
    #: Search only: what was searched.
    query: str = ""


def list_notes(
    index: VaultIndex,
    text: str,
    types: list[str] | None,
    statuses: list[str] | None,
    tag: str | None,
) -> Listing:
    """Runs on the read worker: the rows to show, and the filter choices."""
    everything = index.notes()
    tags = note_tags(index)
    all_tags = sorted({t for ts in tags.values() for t in ts}, key=str.casefold)
    listing = Listing(
        [],
        sorted({n.type for n in everything if n.type}),
        sorted({n.status for n in everything if n.status}),
        all_tags,
    )
    if text.strip():
        found = search_notes(index, text, k=50, types=types, statuses=statuses)
        rows = [m.hit.note for m in found.matches]
        listing.hits = {m.hit.note.path: m for m in found.matches}
        listing.left_out = found.left_out_text()
        listing.left_out_why = found.left_out_why()
        listing.query = text
    else:
        rows = index.notes(types=types, statuses=statuses)
    if tag is not None:
        wanted = tag.casefold()
        rows = [n for n in rows if wanted in {t.casefold() for t in tags.get(n.path, ())}]
    listing.rows = rows
    return listing


def note_label(note: NoteSummary) -> str:
    label = note.title
    if note.type:
        label += f"   · {note.type}"
    if note.status:
        label += f" · {note.status}"
    return label


#: The matching sentence under a title is cut after this many characters.
SENTENCE_CHARS = 220


def score_text(match: NoteMatch) -> str:
    """Why the note is a result: its words, its meaning (the best cosine), or both."""
    parts = []
    if match.hit.text_rank is not None:
        parts.append("words match")
    if match.hit.similarity is not None or match.hit.text_rank is None:
        parts.append(f"meaning {match.relevance:.2f}")
    return " · ".join(parts)


def hit_label(match: NoteMatch, query: str) -> str:
    """Two lines: the note and how it matched, then the sentence that matched, the
    query's words in «guillemets»."""
    line = f"{note_label(match.hit.note)}   — {score_text(match)}"
    if match.sentence:
        sentence = " ".join(match.sentence.split())
        if len(sentence) > SENTENCE_CHARS:
            sentence = sentence[: SENTENCE_CHARS - 1].rstrip() + "…"
        line += "\n    " + marked(sentence, query)
    return line


class QtNotesPanel(QWidget):
    sig_notes_listed = Signal(int)
    """The list was refreshed: ``(number of rows)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self._request = 0
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Search words or meaning…  (Ctrl+F)")
        self.search_box.setClearButtonEnabled(True)
        self.type_filter = QComboBox()
        self.status_filter = QComboBox()
        self.tag_filter = QComboBox()
        for combo in (self.type_filter, self.status_filter, self.tag_filter):
            combo.addItem(ALL)
            combo.currentIndexChanged.connect(self.refresh)
        self.view = QComboBox()
        for text, key in VIEWS:
            self.view.addItem(text, key)
        self.view.setToolTip("Folders as a tree, or every note in one list")
        self.view.currentIndexChanged.connect(lambda _i: self._show_view())
        #: The flat list (also the search results); the tree holds the same notes by folder.
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)  # a result's title and sentence read as one
        self.list.currentItemChanged.connect(self._selected)
        self.list.itemActivated.connect(self._selected)
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.currentItemChanged.connect(self._tree_selected)
        self.tree.itemActivated.connect(self._tree_selected)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.tree)
        self.stack.addWidget(self.list)
        self.count = QLabel()
        #: How many matches the relevance floor left out, and why.
        self.left_out = QLabel()
        self.left_out.setWordWrap(True)
        self.left_out.hide()
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Type"))
        filters.addWidget(self.type_filter, 1)
        filters.addWidget(QLabel("Status"))
        filters.addWidget(self.status_filter, 1)
        second = QHBoxLayout()
        second.addWidget(QLabel("Tag"))
        second.addWidget(self.tag_filter, 1)
        second.addWidget(self.view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search_box)
        layout.addLayout(filters)
        layout.addLayout(second)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.left_out)
        layout.addWidget(self.count)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self.refresh)
        self.search_box.textChanged.connect(lambda _t: self._debounce.start())
        self._c.sig_index_updated.connect(lambda _r: self.refresh())
        self._c.sig_notes_changed.connect(lambda _p: self.refresh())
        self._c.sig_vault_opened.connect(lambda _root: self._clear())
        self._show_view()

    def menu_actions(self) -> list[QAction]:
        search_action = QAction("&Search notes", self)
        search_action.setShortcut(QKeySequence.StandardKey.Find)
        search_action.triggered.connect(self.focus_search)
        return [search_action]

    def focus_search(self) -> None:
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def _clear(self) -> None:
        self._request += 1
        self.list.clear()
        self.tree.clear()
        self.count.clear()

    def searching(self) -> bool:
        return bool(self.search_box.text().strip())

    def _show_view(self) -> None:
        """Search results are always the ranked list; otherwise the chosen view."""
        flat = self.searching() or self.view.currentData() == "list"
        self.stack.setCurrentWidget(self.list if flat else self.tree)

    def selected_path(self) -> str | None:
        widget = self.stack.currentWidget()
        if widget is self.tree:
            node = self.tree.currentItem()
            data = None if node is None else node.data(0, PATH_ROLE)
        else:
            item = self.list.currentItem()
            data = None if item is None else item.data(PATH_ROLE)
        return None if data is None else str(data)

    def _choice(self, combo: QComboBox) -> list[str] | None:
        text = combo.currentText()
        return None if text in ("", ALL) else [text]

    def refresh(self) -> None:
        index = self._c.index
        if index is None:
            return
        self._request += 1
        request = self._request
        text = self.search_box.text()
        types, statuses = self._choice(self.type_filter), self._choice(self.status_filter)
        tag = self._choice(self.tag_filter)

        async def go() -> None:
            listing = await self._c.run_in(
                self._c.read_pool, list_notes, index, text, types, statuses, tag[0] if tag else None
            )
            if request != self._request:
                return
            self._fill_combo(self.type_filter, listing.types)
            self._fill_combo(self.status_filter, listing.statuses)
            self._fill_combo(self.tag_filter, listing.tags)
            self._fill(listing)

        self._c.spawn(go(), what="Listing notes")

    def _fill_combo(self, combo: QComboBox, values: list[str]) -> None:
        current = combo.currentText()
        wanted = [ALL, *values]
        if [combo.itemText(i) for i in range(combo.count())] == wanted:
            return
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(wanted)
        combo.setCurrentText(current if current in wanted else ALL)
        combo.blockSignals(False)

    def _fill(self, listing: Listing) -> None:
        keep = self.selected_path()
        searching = self.searching()
        self.list.blockSignals(True)
        self.list.clear()
        for note in listing.rows:
            hit = listing.hits.get(note.path) if searching else None
            if hit is not None:
                item = QListWidgetItem(hit_label(hit, listing.query))
                item.setToolTip(
                    f"{note.path}\n{hit.sentence or ''}\nrelevance {hit.relevance:.2f}, "
                    f"fused rank score {hit.hit.score:.4f}"
                )
            else:
                item = QListWidgetItem(note_label(note))
                item.setToolTip(note.path)
            item.setData(PATH_ROLE, note.path)
            self.list.addItem(item)
            if note.path == keep:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._fill_tree(listing.rows, keep)
        self._show_view()
        noun = plural(len(listing.rows), "match", "matches") if searching else None
        self.count.setText(noun or plural(len(listing.rows), "note"))
        self.left_out.setText(listing.left_out if searching else "")
        self.left_out.setToolTip(listing.left_out_why)
        self.left_out.setVisible(searching and bool(listing.left_out))
        self.sig_notes_listed.emit(len(listing.rows))

    def _fill_tree(self, rows: list[NoteSummary], keep: str | None) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        folders: dict[str, QTreeWidgetItem] = {}

        def folder(path: str) -> QTreeWidgetItem | None:
            if not path:
                return None
            if path not in folders:
                parent_path, _, name = path.rpartition("/")
                parent = folder(parent_path)
                node = QTreeWidgetItem([f"{name}/"])
                node.setToolTip(0, path)
                if parent is None:
                    self.tree.addTopLevelItem(node)
                else:
                    parent.addChild(node)
                folders[path] = node
            return folders[path]

        # Folders first at each level (sorted by path), then the folder's notes.
        for note in sorted(rows, key=lambda n: (n.path.count("/") == 0, n.path.casefold())):
            parent = folder(note.path.rpartition("/")[0])
            leaf = QTreeWidgetItem([note_label(note)])
            leaf.setData(0, PATH_ROLE, note.path)
            leaf.setToolTip(0, note.path)
            if parent is None:
                self.tree.addTopLevelItem(leaf)
            else:
                parent.addChild(leaf)
            if note.path == keep:
                self.tree.setCurrentItem(leaf)
        for node in folders.values():
            node.setText(0, f"{node.text(0)}  ({node.childCount()})")
        self.tree.expandAll()
        self.tree.blockSignals(False)

    def _selected(self, item: QListWidgetItem | None, *_: object) -> None:
        if item is not None:
            self._c.sig_preview_requested.emit(str(item.data(PATH_ROLE)))

    def _tree_selected(self, node: QTreeWidgetItem | None, *_: object) -> None:
        path = None if node is None else node.data(0, PATH_ROLE)
        if path is not None:  # a folder row opens nothing
            self._c.sig_preview_requested.emit(str(path))


PANEL = PanelSpec("notes", "Notes", "left", QtNotesPanel)
