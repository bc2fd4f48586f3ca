"""Keeping dismissals attached to a note that was renamed.

Dismissals in the notes name a note by its basename (Antinomia-compatible), so
renaming a note leaves its peers listing the old name, and the pair would come back
in the next scan. The pairs of ``.antinomy/dismissed.json`` name notes by path, so a
move leaves them naming the old path: a rename given as ``(old path, new path)`` (the
index reports them so) is fixed there too. An entry naming a note by its path (a shared
basename) is listed as missing instead, to undismiss and dismiss again. Two ways to
find the renames:

* the index reports them (``IndexReport.renamed``: same content, new path);
* :func:`infer_renames` needs no index: the notes that list a name no note
  has are exactly the peers one note lists without being listed back — the
  renamed note, whose own frontmatter still names them. Anything less certain
  (two such names, two such notes) is left alone.

:func:`fix_renames` then writes the new basename in place of the old one in
every peer, in one undoable transaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from desktop.flows.hunter.dismissals import STORE_PATH, StoredPair
from desktop.flows.review.dismiss import StoreState, dismissal_lists
from desktop.flows.review.records import FALSE_POSITIVES, ReviewResult
from desktop.flows.review.vaultfiles import (
    NoteText,
    VaultFiles,
    apply_review,
    entry_name,
)
from desktop.vault.frontmatter import add_to_list, parse_frontmatter, remove_from_list, set_key
from desktop.vault.names import basename_of, name_key
from desktop.vault.transactions import OnChange


@dataclass(frozen=True)
class RenameFix:
    """Peers (``notes``, paths) that still list ``old`` and should list ``new``."""

    old: str
    new: str
    new_path: str
    notes: tuple[str, ...]


def find_rename_fixes(
    root: str | os.PathLike[str], renamed: Sequence[tuple[str, str]]
) -> list[RenameFix]:
    """The dismissals that ``renamed`` (``(old, new)`` paths, or an old basename) left behind.

    A rename is skipped when the basename did not change, when another note
    still has the old basename, or when the new basename is shared (a
    dismissal by that name would be ambiguous). Reads only.
    """
    files = VaultFiles(root)
    store = StoreState.read(files.root)
    return _fixes(files, renamed, dismissal_lists(files)) + _store_fixes(files, store, renamed)[0]


def infer_renames(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``(old basename, new path)`` for renames the notes themselves reveal (see module doc)."""
    files = VaultFiles(root)
    return _inferred(files, dismissal_lists(files))


def fix_renames(
    root: str | os.PathLike[str],
    renamed: Sequence[tuple[str, str]] | None = None,
    *,
    on_change: OnChange | None = None,
) -> tuple[ReviewResult, list[RenameFix]]:
    """Replace the old basename by the new one in every peer's ``hunter_false_positives``.

    ``renamed``: ``(old, new)`` pairs as the index reports them; ``None``
    infers them from the notes. One transaction for all the fixes (its
    ``operation_id`` is ``None`` when there was nothing to fix). Blocking.
    """
    files = VaultFiles(root)
    lists = dismissal_lists(files)
    if renamed is None:
        pairs = _inferred(files, lists)
    else:  # a new name that is no note is a mistake worth saying (NoteNotFound, AmbiguousNote)
        pairs = [(old, files.locate(new)) for old, new in renamed]
    store = StoreState.read(files.root)
    moved, new_path_of = _store_fixes(files, store, pairs)
    fixes = _fixes(files, pairs, lists)
    notes: dict[str, NoteText] = {}
    texts: dict[str, str] = {}
    for fix in fixes:
        for path in fix.notes:
            if path not in notes:
                notes[path] = files.read(path)
                texts[path] = notes[path].text
            texts[path] = _renamed_entry(texts[path], fix.old, fix.new)
    kept = [_moved(p, new_path_of) for p in store.pairs] if moved else store.pairs
    fixes += moved
    summary = "Keep dismissals after renames: " + ", ".join(f"{f.old} → {f.new}" for f in fixes)
    result = apply_review(
        files.root,
        operation_type="rename-fix",
        summary=summary[:400] if fixes else "Nothing to fix",
        replaced=[(notes[p], texts[p]) for p in notes],
        state=store.writes([p for p in kept if p.a != p.b]),
        on_change=on_change,
    )
    return result, fixes


def _store_fixes(
    files: VaultFiles, store: StoreState, renamed: Sequence[tuple[str, str]]
) -> tuple[list[RenameFix], dict[str, str]]:
    """The renames that pairs of ``.antinomy/dismissed.json`` still name by the old path,
    and old path → new path for each; an old path that is still a note is no rename."""
    fixes: list[RenameFix] = []
    new_path_of: dict[str, str] = {}
    existing = set(files.paths)
    for old, new_path in renamed:
        old_path = old if old.lower().endswith(".md") else old + ".md"
        if old_path in existing or new_path not in existing or old_path == new_path:
            continue
        if any(old_path in (p.a, p.b) for p in store.pairs):
            fixes.append(RenameFix(old_path[:-3], new_path[:-3], new_path, (STORE_PATH,)))
            new_path_of[old_path] = new_path
    return fixes, new_path_of


def _moved(pair: StoredPair, new_path_of: Mapping[str, str]) -> StoredPair:
    first, second = sorted((new_path_of.get(pair.a, pair.a), new_path_of.get(pair.b, pair.b)))
    return StoredPair(first, second, pair.at)


def _fixes(
    files: VaultFiles, renamed: Sequence[tuple[str, str]], lists: Mapping[str, list[str]]
) -> list[RenameFix]:
    fixes: list[RenameFix] = []
    for old, new_path in renamed:
        old_name, new_name = basename_of(old), basename_of(new_path)
        if name_key(old_name) == name_key(new_name) or files.with_basename(old_name):
            continue
        if len(files.with_basename(new_name)) != 1:
            continue
        peers = tuple(
            path
            for path, names in lists.items()
            if path != new_path and any(name_key(n) == name_key(old_name) for n in names)
        )
        if peers:
            fixes.append(RenameFix(old_name, new_name, new_path, peers))
    return fixes


def _inferred(files: VaultFiles, lists: Mapping[str, list[str]]) -> list[tuple[str, str]]:
    """A missing name X and a note Q match when the notes that list X are exactly
    the notes Q lists without being listed back (Q kept its side of each dismissal)."""
    keys = {path: {name_key(n) for n in names} for path, names in lists.items()}
    listers: dict[str, set[str]] = {}  # missing name -> name_keys of the notes listing it
    shown: dict[str, str] = {}
    for path, names in lists.items():
        for name in names:
            if not files.with_basename(name):
                listers.setdefault(name_key(name), set()).add(name_key(basename_of(path)))
                shown.setdefault(name_key(name), name)
    unanswered: dict[str, frozenset[str]] = {}  # note -> peers it lists that do not list it
    for path, names in lists.items():
        mine = name_key(basename_of(path))
        peers = set()
        for name in names:
            found = files.with_basename(name)
            if len(found) == 1 and mine not in keys.get(found[0], set()):
                peers.add(name_key(name))
        if peers:
            unanswered[path] = frozenset(peers)
    matches: list[tuple[str, str]] = []
    for missing, who in listers.items():
        candidates = [q for q, peers in unanswered.items() if peers == who]
        rivals = [m for m, w in listers.items() if candidates and w == who]
        if len(candidates) == 1 and len(rivals) == 1:
            matches.append((shown[missing], candidates[0]))
    return sorted(matches)


def _renamed_entry(text: str, old: str, new: str) -> str:
    """``old`` replaced by ``new`` in the list, touching as little of it as possible."""
    value = parse_frontmatter(text).get(FALSE_POSITIVES)
    values = value if isinstance(value, list) else [value]
    matching = [
        v for v in values if isinstance(v, str) and name_key(entry_name(v)) == name_key(old)
    ]
    has_new = any(name_key(entry_name(v)) == name_key(new) for v in values if v is not None)
    if len(values) == 1 and not has_new:
        return set_key(text, FALSE_POSITIVES, [new] if isinstance(value, list) else new)
    for match in dict.fromkeys(matching):
        text = remove_from_list(text, FALSE_POSITIVES, match)
    return text if has_new else add_to_list(text, FALSE_POSITIVES, new)
