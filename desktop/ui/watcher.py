"""Watches the open vault and reports notes that changed on disk, and transactions.

``QFileSystemWatcher`` on the vault's folders catches files created, deleted
and replaced (editors and our own transactions write a temp file and rename
it); a slow poll catches in-place edits, which folder watches do not report.
Either way the folder walk and the stats run on the controller's read worker,
and only the paths whose size or modification time changed are reported.

The journal's folder of finished operations is watched the same way: an
operation applied or undone by another process (``antinomy dismiss``, ``antinomy
tx undo``, a second window) reaches the controller's ``sig_history_changed``,
so History, Dismissed pairs and Tensions re-read the vault without a Refresh.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from desktop.ui.controller import AppController
from desktop.vault.index import walk_vault
from desktop.vault.layout import STATE_DIR

Snapshot = dict[str, tuple[int, int]]
#: The journal's finished records: (name, size, mtime_ns) of each, sorted.
JournalMark = tuple[tuple[str, int, int], ...]

#: Seconds between polls for in-place edits.
POLL_SECONDS = 3.0
#: Folder events within this many milliseconds are handled together.
DEBOUNCE_MS = 250


def journal_done(root: Path) -> Path:
    """Where the journal keeps the record of every finished operation (not created here:
    watching reads only)."""
    return root / STATE_DIR / "journal" / "done"


def journal_mark(root: Path) -> JournalMark:
    """What the journal's finished records are now (a listing and a stat each)."""
    marks = []
    try:
        entries = list(os.scandir(journal_done(root)))
    except OSError:
        return ()
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue  # a record being written
        try:
            st = entry.stat()
        except OSError:
            continue
        marks.append((entry.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(marks))


def snapshot(root: Path) -> tuple[Snapshot, list[str], JournalMark]:
    """(path → (size, mtime_ns)) of every note, every folder to watch, and the journal."""
    files: Snapshot = {}
    for rel, st, _skip in walk_vault(root):
        if st is not None:
            files[rel] = (st.st_size, st.st_mtime_ns)
    folders = [str(root)]
    for dirpath, dirnames, _ in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        folders.extend(str(Path(dirpath) / d) for d in dirnames)
    # Only the journal's own folder: the state folder beside it holds the index, whose
    # writes would wake the watcher all through an indexing. The poll sees the first record.
    if journal_done(root).is_dir():
        folders.append(str(journal_done(root)))
    return files, folders, journal_mark(root)


def changed_paths(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


class VaultWatcher(QObject):
    sig_files_changed = Signal(object)
    """Notes created, changed or deleted on disk: ``(paths: list[str])``."""
    sig_journal_changed = Signal()
    """An operation finished (applied, undone or rolled back), by any process."""

    def __init__(self, controller: AppController, *, poll_seconds: float = POLL_SECONDS) -> None:
        super().__init__(controller)
        self._controller = controller
        self._root: Path | None = None
        self._files: Snapshot = {}
        self._journal: JournalMark = ()
        self._scanning = False
        self._again = False
        #: A journal change seen while this window was writing: judged once the write is
        #: announced (else this window's own operation could pass for another process's).
        self._after_write = False
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._soon)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.check_now)
        self._poll = QTimer(self)
        self._poll.setInterval(int(poll_seconds * 1000))
        self._poll.timeout.connect(self.check_now)
        self.sig_files_changed.connect(controller.notes_changed)
        self.sig_journal_changed.connect(controller.sig_history_changed)
        controller.sig_writes_settled.connect(self._writes_settled)

    def watch(self, root: Path) -> None:
        """Watch ``root`` from now on (its current state is the baseline)."""
        self._root = root
        self._files = {}
        self._journal = ()
        self._after_write = False
        dirs = self._watcher.directories()
        if dirs:
            self._watcher.removePaths(dirs)
        self._run(baseline=True)
        self._poll.start()

    def stop(self) -> None:
        self._poll.stop()
        self._debounce.stop()
        self._root = None

    def _soon(self, _path: str) -> None:
        self._debounce.start()

    def check_now(self) -> None:
        """Compare the vault with the last snapshot (the walk runs off the GUI thread)."""
        self._run(baseline=False)

    def _run(self, *, baseline: bool) -> None:
        root = self._root
        if root is None:
            return
        if self._scanning:
            self._again = True
            return
        self._scanning = True

        async def go() -> None:
            try:
                files, folders, journal = await self._controller.run_in(
                    self._controller.read_pool, snapshot, root
                )
            finally:
                self._scanning = False
            if root != self._root:
                return
            self._sync_folders(folders)
            changed = [] if baseline else changed_paths(self._files, files)
            journal_moved = False
            if not baseline and journal != self._journal and self._controller.writes_in_flight:
                journal, self._after_write = self._journal, True  # judged after the write
            elif not baseline:
                journal_moved = self._news(journal)
            self._files = files
            self._journal = journal
            if changed:
                self.sig_files_changed.emit(changed)
            if journal_moved:
                self.sig_journal_changed.emit()
            if self._again:
                self._again = False
                self._run(baseline=False)

        self._controller.spawn(go(), what="Watching the vault")

    def _writes_settled(self) -> None:
        if self._after_write:
            self._after_write = False
            self.check_now()

    def _news(self, journal: JournalMark) -> bool:
        """Whether the journal changed other than by this window's own operations (those
        were announced when they were applied)."""
        if journal == self._journal:
            return False
        new = set(journal) - set(self._journal)
        gone = set(self._journal) - set(journal)
        own = self._controller.applied_here
        return bool(gone) or any(name.removesuffix(".json") not in own for name, _s, _m in new)

    def _sync_folders(self, folders: list[str]) -> None:
        current = set(self._watcher.directories())
        wanted = set(folders)
        if current - wanted:
            self._watcher.removePaths(list(current - wanted))
        if wanted - current:
            self._watcher.addPaths(sorted(wanted - current))
