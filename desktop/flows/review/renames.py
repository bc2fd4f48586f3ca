"""Keeping dismissals attached to a note that was renamed.

Dismissals are kept by basename (Antinomia-compatible), so renaming a note
leaves its peers listing the old name, and the pair would come back in the
next scan. Two ways to find the renames:

* the index reports them (``IndexReport.renamed``: same content, new path);
* :func:`infer_renames` needs no index: a peer lists a name no note has, and
  exactly one note lists that peer without being listed back — the renamed
  note, whose own frontmatter still names the peer.

:func:`fix_renames` then writes the new basename in place of the old one in
every peer, in one undoable transaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from desktop.flows.review.dismiss import dismissal_lists
from desktop.flows.review.records import FALSE_POSITIVES, ReviewResult
from desktop.flows.review.vaultfiles import (
    NoteText,
    VaultFiles,
    apply_review,
    basename_of,
    entry_name,
    name_key,
)
from desktop.vault.frontmatter import add_to_list, parse_frontmatter, remove_from_list, set_key
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
    return _fixes(files, renamed, dismissal_lists(files))


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
    pairs = _inferred(files, lists) if renamed is None else renamed
    fixes = _fixes(files, pairs, lists)
    notes: dict[str, NoteText] = {}
    texts: dict[str, str] = {}
    for fix in fixes:
        for path in fix.notes:
            if path not in notes:
                notes[path] = files.read(path)
                texts[path] = notes[path].text
            texts[path] = _renamed_entry(texts[path], fix.old, fix.new)
    summary = "Keep dismissals after renames: " + ", ".join(f"{f.old} → {f.new}" for f in fixes)
    result = apply_review(
        files.root,
        operation_type="rename-fix",
        summary=summary[:400] if fixes else "Nothing to fix",
        replaced=[(notes[p], texts[p]) for p in notes],
        on_change=on_change,
    )
    return result, fixes


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
    keys = {path: {name_key(n) for n in names} for path, names in lists.items()}
    found: dict[str, set[str]] = {}  # new path -> old names pointing at it
    for path, names in lists.items():
        mine = name_key(basename_of(path))
        for name in names:
            if files.with_basename(name):
                continue  # not missing
            candidates = [
                other
                for other, listed in keys.items()
                if other != path
                and mine in listed
                and name_key(basename_of(other)) not in keys[path]
            ]
            if len(candidates) == 1:
                found.setdefault(candidates[0], set()).add(name)
    return sorted(
        (next(iter(olds)), new_path)
        for new_path, olds in found.items()
        if len({name_key(o) for o in olds}) == 1
    )


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
