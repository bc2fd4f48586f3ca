"""An operation in words, from what its journal record holds: its kind and its files.

"Dismissed: ADR-0011 Friday release window ↔ Roadmap", "Elevated: Base miles vs
hard efforts → principle Easy most days". Kinds without words of their own
(ingest, memory, debug notes…) show their recorded summary, which is already a
sentence; a record without one shows its id. No Qt; any thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop.vault.transactions import HistoryEntry

#: (action, path) of each file an operation wrote, in the plan's order.
Changes = Sequence[tuple[str, str]]

_PAIR_IN_SUMMARY = re.compile(r"the pair (.+?) \(")


def _name(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _pair(changes: Changes, summary: str) -> str | None:
    names = [_name(p) for _a, p in changes]
    if len(names) == 2:
        return f"{names[0]} ↔ {names[1]}"
    found = _PAIR_IN_SUMMARY.search(summary)  # one note was already as asked: only one written
    return found.group(1) if found else None


def operation_title(kind: str, changes: Changes, summary: str = "", operation_id: str = "") -> str:
    """The operation in words (see the module docstring)."""
    replaced = [_name(p) for a, p in changes if a == "replace"]
    created = [_name(p) for a, p in changes if a == "create"]
    title: str | None = None
    if kind in ("dismiss", "undismiss"):
        pair = _pair(changes, summary)
        title = f"{'Dismissed' if kind == 'dismiss' else 'Undismissed'}: {pair}" if pair else None
    elif kind == "elevate" and replaced and created:
        title = f"Elevated: {replaced[0]} → principle {created[0]}"
    elif kind == "resolve" and replaced:
        title = f"Resolved: {replaced[0]}"
    elif kind == "defeat" and replaced:
        motive = summary.split(": ", 1)[1] if ": " in summary else ""
        title = f"Defeated: {replaced[0]}" + (f" ({motive})" if motive else "")
    return title or summary or operation_id or kind


def entry_title(entry: HistoryEntry, by_id: dict[str, HistoryEntry] | None = None) -> str:
    """A History entry in words; an undo names what it took back."""
    if entry.undoes is not None:
        by_id = by_id or {}
        undone = by_id.get(entry.undoes)
        if undone is not None:
            original = by_id.get(undone.undoes) if undone.undoes is not None else None
            if original is not None:  # an undo taken back: the operation is in effect again
                return f"Redone: {entry_title(original, by_id)}"
            return f"Undone: {entry_title(undone, by_id)}"
    changes = [(c.action, c.path) for c in entry.changes]
    return operation_title(entry.operation_type, changes, entry.summary, entry.operation_id)


def many_title(kind: str, titles: Sequence[str]) -> str:
    """One line for several operations of one kind: "Dismissed 40 pairs"."""
    if len(titles) == 1:
        return titles[0]
    if kind == "dismiss":
        return f"Dismissed {len(titles)} pairs"
    return f"{len(titles)} operations"
