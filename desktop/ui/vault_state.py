"""What the notes of the pairs on screen say now. Read on a worker; no Qt.

The Tensions panel re-reads this after every transaction (this window's, the
command line's, another process's) and every note changed on disk, and shows
what the files say, never what it showed a moment ago:

- a pair that either note dismisses (``hunter_false_positives``), or that the vault's
  ``.antinomy/dismissed.json`` pairs, is dismissed — the Hunter's own rule, whoever
  wrote the dismissal;
- each note's type and status, and once it is decided, how (``motive``,
  ``replaced_by``);
- a pair whose note is gone, or whose quote is no longer in its note, is
  *stale*: its card says so and offers no action.

``PairsNow.hashes`` are the notes' sha256 as read here. A review action is
guarded by them: the card was re-checked against exactly these bytes, so a
note edited after this read still refuses the action.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from desktop.flows.hunter import Pair
from desktop.flows.hunter.dismissals import (
    FALSE_POSITIVES,
    dismissal_targets,
    dismisses,
    read_store,
    stored_peers,
)
from desktop.flows.hunter.verify import clean_quote, normalise_text
from desktop.ui.markdown import wikilinks_as_text
from desktop.vault.errors import VaultError
from desktop.vault.notes import NoteSkipped, read_note

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NoteNow:
    """One note as its file is now."""

    path: str
    #: sha256 of the file; ``None`` when it is gone or cannot be read (``problem`` says why).
    sha256: str | None = None
    type: str | None = None
    status: str | None = None
    motive: str | None = None
    replaced_by: str | None = None
    #: The targets of its ``hunter_false_positives`` (:mod:`desktop.flows.hunter.dismissals`).
    dismissed: frozenset[str] = frozenset()
    problem: str = ""
    #: The body as the Hunter compares quotes with it (``normalise_text``), for the quote check.
    text: str = field(default="", repr=False, compare=False)
    #: (size, mtime_ns) when read: an unchanged file is not parsed again.
    stamp: tuple[int, int] | None = field(default=None, repr=False, compare=False)

    def holds(self, quote: str) -> bool:
        """Whether ``quote`` is in the note, as the Hunter checked it before showing it."""
        wanted = normalise_text(clean_quote(quote))
        return bool(wanted) and wanted in self.text

    @property
    def basename(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name

    @property
    def folder(self) -> str:
        """``Decisions/``, or ``vault root`` for a note at the top."""
        return self.path.rsplit("/", 1)[0] + "/" if "/" in self.path else "vault root"

    def kind_text(self) -> str:
        """``tension, open``: the type and status the file has (empty without a type)."""
        if self.type is None:
            return ""
        return self.type + (f", {self.status}" if self.status else "")

    def decided_text(self) -> str:
        """How a decided note was decided, as its frontmatter says (empty if it is not)."""
        kind = (self.type or "").casefold()
        successor = wikilinks_as_text(self.replaced_by) if self.replaced_by else ""
        if kind == "defeated":
            if (self.motive or "").casefold() == "elevated":
                return f"✓ elevated to {successor}" if successor else "✓ elevated"
            text = "✓ defeated" + (f": {self.motive}" if self.motive else "")
            return text + (f" → {successor}" if successor else "")
        if kind == "tension" and (self.status or "").casefold() == "resolved":
            return "✓ resolved"
        return ""


@dataclass(frozen=True)
class PairsNow:
    """The notes of a run's pairs as they are now, and what that means for each pair."""

    notes: Mapping[str, NoteNow]
    #: Keys (``Pair.key()``) of the pairs that a note dismisses.
    dismissed: frozenset[frozenset[str]]
    #: Key → why the pair no longer stands as shown (a note gone, a quote edited away).
    stale: Mapping[frozenset[str], str]

    @property
    def hashes(self) -> dict[str, str]:
        return {p: n.sha256 for p, n in self.notes.items() if n.sha256 is not None}


def read_note_now(root: Path, path: str, before: NoteNow | None = None) -> NoteNow:
    """``path`` as its file is now; ``before`` is reused if the file did not change since."""
    try:
        st = os.stat(root / path)
        stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = None
    if before is not None and stamp is not None and before.stamp == stamp:
        return before
    try:
        note = read_note(root, path)
    except NoteSkipped as exc:
        gone = exc.reason == "vanished" or not os.path.lexists(root / path)
        return NoteNow(path, problem="no longer in the vault" if gone else str(exc))
    fm = note.frontmatter

    def text(key: str) -> str | None:
        value = fm.get(key)
        return str(value).strip() if value is not None and str(value).strip() else None

    return NoteNow(
        path=path,
        sha256=note.sha256,
        type=note.type,
        status=note.status,
        motive=text("motive"),
        replaced_by=text("replaced_by"),
        dismissed=dismissal_targets(fm.get(FALSE_POSITIVES)),
        text=normalise_text(note.body),
        stamp=stamp,
    )


def is_dismissed(a: NoteNow, b: NoteNow, stored: Mapping[str, frozenset[str]]) -> bool:
    """Either note lists the other as a false positive, or ``stored`` (the file's pairs,
    :func:`stored_dismissals`) pairs them: what the Hunter hides."""
    return dismisses(
        a.path,
        a.dismissed | stored.get(a.path, frozenset()),
        b.path,
        b.dismissed | stored.get(b.path, frozenset()),
    )


def stored_dismissals(root: Path) -> Mapping[str, frozenset[str]]:
    """The pairs of ``.antinomy/dismissed.json``, by note; none when it cannot be read
    (the next scan and the Dismissed list say why)."""
    try:
        return stored_peers(read_store(root))
    except VaultError as exc:
        log.warning("%s", exc)
        return {}


def stale_reason(pair: Pair, a: NoteNow, b: NoteNow) -> str | None:
    for note, quote in ((a, pair.quote_a), (b, pair.quote_b)):
        if note.sha256 is None:
            return f"{note.basename}: {note.problem}"
        if not note.holds(quote):
            return f"the quote from {note.basename} is no longer in the note"
    return None


def read_pairs_now(root: Path, pairs: Iterable[Pair], before: PairsNow | None = None) -> PairsNow:
    """Read every note of ``pairs`` once (a note unchanged since ``before`` is not parsed
    again: a stat is enough). Blocking file I/O: call it from a worker."""
    pairs = list(pairs)
    paths = dict.fromkeys(p for pair in pairs for p in (pair.path_a, pair.path_b))
    known = before.notes if before is not None else {}
    notes = {p: read_note_now(root, p, known.get(p)) for p in paths}
    stored = stored_dismissals(root)
    dismissed: set[frozenset[str]] = set()
    stale: dict[frozenset[str], str] = {}
    for pair in pairs:
        a, b = notes[pair.path_a], notes[pair.path_b]
        if is_dismissed(a, b, stored):
            dismissed.add(pair.key())
            continue
        why = stale_reason(pair, a, b)
        if why is not None:
            stale[pair.key()] = why
    return PairsNow(notes, frozenset(dismissed), stale)


def dismissed_on_disk(root: Path, a: str, b: str) -> bool:
    """Whether the notes ``a`` and ``b`` already dismiss each other (blocking)."""
    return is_dismissed(read_note_now(root, a), read_note_now(root, b), stored_dismissals(root))
