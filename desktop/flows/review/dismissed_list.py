"""The Dismissed list: every dismissed pair of the vault, from the notes and from
``.antinomy/dismissed.json``, each once, with what went wrong with it (a note gone, a name
several notes answer to, a dismissal written in one note only)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from desktop.flows.hunter.dismissals import dismissal_target, names_note, read_store
from desktop.flows.review.dismiss import dismissal_entries
from desktop.flows.review.records import KEEP_IN, DismissedPair, KeepIn
from desktop.flows.review.vaultfiles import VaultFiles
from desktop.vault.names import name_key


@dataclass
class _Found:
    """One pair being gathered: its two sides (a path, or ``?name`` for a name no single
    note answers to) and what is known about it."""

    sides: tuple[str, str]
    listed_by: set[str] = field(default_factory=set)
    kept_in: set[KeepIn] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)  # "?target" → the entry as written


def list_dismissed(root: str | os.PathLike[str]) -> list[DismissedPair]:
    """Every dismissed pair in the vault, each once, with missing peers flagged.

    Reads the frontmatter of the notes that mention ``hunter_false_positives`` and the
    vault's ``.antinomy/dismissed.json``; a note whose frontmatter cannot be read is left
    out (the index coverage report lists it). Blocking file I/O.
    """
    files = VaultFiles(root)
    found: dict[frozenset[str], _Found] = {}

    def add(side_a: str, side_b: str, where: KeepIn, by: str | None, name: str = "") -> None:
        key = frozenset((side_a, side_b))
        item = found.setdefault(key, _Found((side_a, side_b)))
        item.kept_in.add(where)
        if by is not None:
            item.listed_by.add(by)
        if side_b.startswith("?"):
            item.names.setdefault(side_b, name)

    for path, entries in dismissal_entries(files).items():
        for entry in entries:
            target = dismissal_target(entry)
            peers = _named(files, target)
            if len(peers) == 1:
                if peers[0] != path:
                    add(path, peers[0], "notes", by=path)
            else:
                add(path, "?" + target, "notes", by=path, name=entry)
    for stored in read_store(files.root):
        add(stored.a, stored.b, "antinomy", by=None)
    records = [_record(files, item) for item in found.values()]
    return sorted(records, key=lambda r: (name_key(r.a), name_key(r.b)))


def _named(files: VaultFiles, target: str) -> list[str]:
    """The notes a dismissal target names."""
    if "/" not in target:
        return files.with_basename(target)
    return [p for p in files.paths if names_note((target,), p)]


def _record(files: VaultFiles, item: _Found) -> DismissedPair:
    existing = set(files.paths)
    shown: list[tuple[str, str | None]] = []  # (name, path)
    missing: list[str] = []
    ambiguous: list[str] = []
    for side in item.sides:
        if side.startswith("?"):
            name = item.names[side]
            several = len(_named(files, side[1:])) > 1
            (ambiguous if several else missing).append(name)
            shown.append((name, None))
        elif side in existing:
            shown.append((files.entry_for(side), side))
        else:  # a path the file keeps, of a note deleted or renamed since
            name = side[:-3] if side.lower().endswith(".md") else side
            missing.append(name)
            shown.append((name, None))
    (a, path_a), (b, path_b) = sorted(shown, key=lambda s: name_key(s[0]))
    resolved = [s for s in item.sides if not s.startswith("?")]
    # A pair in the file stands on its own; a pair in the notes wants both to list it.
    reciprocal = "antinomy" in item.kept_in or (
        len(resolved) == 2 and all(s in item.listed_by for s in resolved)
    )
    kept_in = tuple(k for k in KEEP_IN if k in item.kept_in)
    return DismissedPair(
        a, b, path_a, path_b, tuple(missing), tuple(ambiguous), reciprocal, kept_in
    )
