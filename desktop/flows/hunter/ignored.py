"""What the user asked the scan to ignore in this vault: sentences, notes, folders.

Kept in ``.antinomy/ignored.json`` (never shared with another vault), edited under a lock
(``ignored.lock``), written atomically, never through a link. The scan reads the list once
(:class:`Ignoring`): an ignored note, or a note in an ignored folder, is not compared at
all; an ignored sentence is taken out of every note it occurs in before the judge reads the
note (so the next sentence pair of those notes can still be found). The run says what was
left out (``ScanRun.ignored``).

A sentence is matched as :func:`~desktop.flows.hunter.verify.quote_found` matches a quote:
case, spacing, typographic quotes and Markdown emphasis do not count.

Blocking file I/O: call it off the GUI thread.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from desktop.flows.hunter.labels import now
from desktop.flows.hunter.records import IgnoredReport
from desktop.flows.hunter.verify import clean_quote, normalise_text
from desktop.flows.progress import plural
from desktop.flows.sentences import split_sentences
from desktop.vault.errors import StateUnsafe, VaultError
from desktop.vault.layout import read_state_text, state_dir, state_lock, write_state_json

log = logging.getLogger(__name__)

FORMAT = "antinomy-ignored/1"
IGNORED_FILE = "ignored.json"
LOCK_FILE = "ignored.lock"
#: The kinds of thing the list holds, as the CLI and the window name them.
KINDS = ("sentence", "note", "folder")


class IgnoreListUnreadable(VaultError):
    """``ignored.json`` cannot be read: it is not overwritten (it is the user's list)."""


def sentence_key(text: str) -> str:
    """How an ignored sentence is compared with a note's sentences."""
    return normalise_text(clean_quote(text))


@dataclass(frozen=True)
class IgnoredItem:
    """One thing the user asked the scan to ignore."""

    #: sentence, note or folder.
    kind: str
    #: The sentence as it was shown, or the vault-relative path of the note or folder.
    value: str
    #: For a sentence: the note it was ignored from ("" when given without one).
    note: str = ""
    at: str = ""

    @property
    def key(self) -> str:
        return sentence_key(self.value) if self.kind == "sentence" else self.value


@dataclass
class IgnoreList:
    """The contents of ``ignored.json``."""

    items: list[IgnoredItem] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[IgnoredItem]:
        return [i for i in self.items if i.kind == kind]

    def find(self, kind: str, value: str) -> IgnoredItem | None:
        key = sentence_key(value) if kind == "sentence" else value.strip("/")
        return next((i for i in self.items if i.kind == kind and i.key == key), None)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "items": [asdict(i) for i in self.items]}

    @classmethod
    def from_json(cls, data: object) -> IgnoreList:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} file")
        known = {f.name for f in fields(IgnoredItem)}
        items = []
        for raw in data.get("items", []):
            if not isinstance(raw, dict):
                raise ValueError("an item is not an object")
            item = IgnoredItem(**{k: str(v) for k, v in raw.items() if k in known})
            if item.kind not in KINDS or not item.value:
                raise ValueError(f"an item of kind {item.kind!r} cannot be read")
            items.append(item)
        return cls(items)


class IgnoreStore:
    """The vault's ``ignored.json``: read, edited under a lock, replaced atomically."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @property
    def path(self) -> Path:
        return self.root / ".antinomy" / IGNORED_FILE

    def read(self) -> IgnoreList:
        """The list (empty when there is none); ``ValueError`` when it cannot be read."""
        if not (self.root / ".antinomy").is_dir():
            return IgnoreList()
        raw = read_state_text(state_dir(self.root) / IGNORED_FILE)
        if raw is None:
            return IgnoreList()
        try:
            return IgnoreList.from_json(json.loads(raw))
        except (json.JSONDecodeError, TypeError) as exc:
            raise ValueError(str(exc)) from None

    @contextmanager
    def editing(self) -> Iterator[IgnoreList]:
        """Read, let the caller change, write back — one writer at a time. An unreadable
        file is refused (:class:`IgnoreListUnreadable`), never overwritten."""
        folder = state_dir(self.root)
        with state_lock(folder, LOCK_FILE):
            try:
                ignored = self.read()
            except ValueError as exc:
                raise IgnoreListUnreadable(
                    f"{self.path} cannot be read ({exc}); nothing was changed — fix it, or "
                    "delete it to start an empty list (it holds only what you asked the scan "
                    "to ignore)."
                ) from None
            yield ignored
            write_state_json(folder / IGNORED_FILE, ignored.to_json())


def add_item(ignored: IgnoreList, item: IgnoredItem) -> bool:
    """Add ``item`` unless the list holds it already; True when added."""
    if ignored.find(item.kind, item.value) is not None:
        return False
    ignored.items.append(item if item.at else IgnoredItem(item.kind, item.value, item.note, now()))
    return True


class Ignoring:
    """The list as one scan applies it; counts what it left out. Not thread-safe: the
    scan's worker thread only."""

    def __init__(self, root: Path) -> None:
        self.error = ""
        try:
            ignored = IgnoreStore(root).read()
        except (OSError, ValueError, StateUnsafe) as exc:
            self.error = (
                f"the list of what you asked to ignore could not be read ({exc}); nothing was "
                "left out"
            )
            log.warning("%s", self.error)
            ignored = IgnoreList()
        self.sentences = {i.key for i in ignored.of_kind("sentence")}
        self.notes = {i.value for i in ignored.of_kind("note")}
        self.folders = [i.value.strip("/") for i in ignored.of_kind("folder")]
        self.focus: str | None = None
        self._notes_hit: set[str] = set()
        self._folders_hit: dict[str, set[str]] = {}
        self._sentences_hit: set[str] = set()
        self._occurrences = 0

    def skips(self, path: str) -> bool:
        """Whether ``path`` is an ignored note or in an ignored folder (counted). The focus
        note of a focus scan is never skipped: the user asked for it."""
        if path == self.focus:
            return False
        if path in self.notes:
            self._notes_hit.add(path)
            return True
        for folder in self.folders:
            if path.startswith(folder + "/"):
                self._folders_hit.setdefault(folder, set()).add(path)
                return True
        return False

    def keep(self, paths: list[str]) -> list[str]:
        """``paths`` without the ones :meth:`skips`."""
        return [p for p in paths if not self.skips(p)]

    def clean(self, body: str) -> str:
        """``body`` with every ignored sentence taken out (as written in the note)."""
        if not self.sentences:
            return body
        for s in split_sentences(body):
            key = sentence_key(s.quote)
            if key in self.sentences and s.quote in body:
                body = body.replace(s.quote, "")
                self._sentences_hit.add(key)
                self._occurrences += 1
        return body

    def report(self) -> IgnoredReport:
        notes, folders = len(self._notes_hit), len(self._folders_hit)
        in_folders = len({p for paths in self._folders_hit.values() for p in paths})
        sentences = len(self._sentences_hit)
        parts = []
        if sentences:
            parts.append(plural(sentences, "sentence"))
        if notes:
            parts.append(plural(notes, "note"))
        if folders:
            it = "it" if folders == 1 else "them"
            parts.append(f"{plural(folders, 'folder')} ({plural(in_folders, 'note')} in {it})")
        message = ""
        if parts:
            listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
            message = f"left out {listed} you asked to ignore"
        return IgnoredReport(
            sentences=sentences,
            occurrences=self._occurrences,
            notes=notes,
            folders=folders,
            notes_in_folders=in_folders,
            message=message,
            error=self.error,
        )
