"""Note preview: the selected note rendered as Markdown, with clickable wikilinks."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from desktop.ui.context import AppContext
from desktop.ui.markdown import SCHEME, link_target, note_markdown
from desktop.ui.panels import PanelSpec


class QtPreviewPanel(QWidget):
    sig_preview_shown = Signal(str)
    """A note's preview finished rendering: ``(path)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self.path: str | None = None
        self._request = 0
        self._title = QLabel("No note selected.")
        self._title.setWordWrap(True)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._follow)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self._title)
        layout.addWidget(self.browser, 1)
        self._c.sig_preview_requested.connect(self.show_note)
        self._c.sig_notes_changed.connect(self._changed)
        self._c.sig_vault_opened.connect(lambda _root: self._clear())

    def _clear(self) -> None:
        self.path = None
        self._title.setText("No note selected.")
        self.browser.clear()

    def show_note(self, path: str) -> None:
        """Render ``path`` (vault-relative); the file is read off the GUI thread."""
        root = self._c.root
        if root is None:
            return
        self.path = path
        self._request += 1
        request = self._request

        async def go() -> None:
            full = root / path
            try:
                data = await self._c.run_in(self._c.read_pool, Path.read_bytes, full)
            except FileNotFoundError:
                text = f"*{path} is no longer in the vault.*"
            else:
                text = await self._c.run_in(self._c.read_pool, note_markdown, path, data)
            if request != self._request:
                return  # a newer request won: drop this stale one
            self._title.setText(path)
            self.browser.setMarkdown(text)
            self.sig_preview_shown.emit(path)

        self._c.spawn(go(), what=f"Showing {path}")

    def _changed(self, paths: tuple[str, ...]) -> None:
        if self.path is not None and self.path in paths:
            self.show_note(self.path)

    def _follow(self, url: QUrl) -> None:
        if url.scheme() != SCHEME:
            return  # outside links are not opened from here (offline app)
        target = link_target(url.toString())
        index = self._c.index
        if index is None:
            return
        matches = index.resolve(target)
        if len(matches) == 1:
            self._c.sig_preview_requested.emit(matches[0])
        elif not matches:
            self._c.sig_error.emit("Following a link", f"No note named “{target}” in this vault.")
        else:
            self._c.sig_error.emit(
                "Following a link",
                f"“{target}” could mean {', '.join(matches)} — write the folder in the link "
                "to choose one.",
            )


PANEL = PanelSpec("preview", "Preview", "right", QtPreviewPanel)
