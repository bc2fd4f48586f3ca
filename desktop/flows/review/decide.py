"""Deciding a tension: elevate it to a principle, mark it resolved, or defeat a note.

Each action is one transaction guarded by the hash of the note as the user
saw it. The type is written under the key the note already uses (``type``,
``antinomia_type`` or ``kind``), so Antinomia vaults stay Antinomia vaults.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from desktop.flows.review.errors import BadInput, NotEligible, PrincipleExists, ReviewRefused
from desktop.flows.review.learn import confirmed_pairs, keep_decision
from desktop.flows.review.records import DEFAULT_PRINCIPLES_FOLDER, ReviewResult
from desktop.flows.review.vaultfiles import NoteText, VaultFiles, apply_review
from desktop.vault.frontmatter import FrontmatterError, set_key
from desktop.vault.transactions import OnChange, PlanInvalid
from desktop.vault.transactions.paths import check_relative_path

#: Types that can be defeated; any other type is refused (NotEligible).
DEFEATABLE = ("tension", "substrate", "principle")
#: Characters Obsidian and common filesystems do not allow in a note's name.
_BAD_TITLE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f]')
MAX_TITLE_CHARS = 180


def available_actions(note_type: str | None, status: str | None) -> tuple[str, ...]:
    """Which of ``elevate``, ``resolve``, ``defeat`` a note of this type and status allows.

    The same rules the actions enforce, for a UI to show only the buttons that
    will work: open tensions can be elevated and resolved; tensions (open or
    not), substrates and principles can be defeated. Pure; any thread.
    """
    kind = (note_type or "").strip().casefold()
    actions: list[str] = []
    if kind == "tension" and (status or "open").strip().casefold() == "open":
        actions += ["elevate", "resolve"]
    if kind in DEFEATABLE:
        actions.append("defeat")
    return tuple(actions)


def elevate_tension(
    root: str | os.PathLike[str],
    tension: str,
    *,
    title: str,
    if_clause: str,
    then_clause: str,
    grey_zone: str = "",
    seen: Mapping[str, str] | None = None,
    folder: str = DEFAULT_PRINCIPLES_FOLDER,
    on_change: OnChange | None = None,
) -> ReviewResult:
    """Create the principle ``title`` from an open tension, and mark the tension defeated.

    The principle (``<folder>/<title>.md``) gets ``type: principle``,
    ``origin_tension``, the clauses and a body linking back; the tension gets
    ``type: defeated``, ``motive: elevated``, ``replaced_by``. One transaction.
    Refused if the note is not an open tension, if a note named ``title``
    exists anywhere in the vault, or if the tension changed since it was seen.
    Blocking: call it from a worker thread.
    """
    title = _title(title)
    clauses = {"IF": if_clause, "THEN": then_clause}
    for label, text in clauses.items():
        if not text.strip():
            raise BadInput(f"The {label} clause is empty — say {_CLAUSE_HINT[label]}.")
    folder = _folder(folder)
    files = VaultFiles(root)
    note = _open_tension(files, tension, seen, action="elevated")
    clash = files.with_basename(title)
    if clash:
        raise PrincipleExists(
            f"A note named {title!r} already exists ({', '.join(clash)}). Nothing was written — "
            "choose another title for the principle."
        )
    path = f"{folder}/{title}.md" if folder else f"{title}.md"
    origin = files.link_to(note.path)
    principle = _principle_text(
        title=title,
        origin=origin,
        if_clause=if_clause.strip(),
        then_clause=then_clause.strip(),
        grey_zone=grey_zone.strip(),
    )
    new_tension = _edit(
        note,
        lambda t: set_key(t, note.type_key or "type", "defeated"),
        lambda t: set_key(t, "motive", "elevated"),
        lambda t: set_key(t, "replaced_by", f"[[{title}]]"),
    )
    result = apply_review(
        files.root,
        operation_type="elevate",
        summary=f"Elevate the tension {note.basename} to the principle {title}",
        replaced=[(note, new_tension)],
        created=[(path, principle)],
        on_change=on_change,
    )
    pairs = confirmed_pairs(files.root, files, note)
    return keep_decision(files.root, result, action="elevate", pairs=pairs)


def resolve_tension(
    root: str | os.PathLike[str],
    tension: str,
    *,
    seen: Mapping[str, str] | None = None,
    on_change: OnChange | None = None,
) -> ReviewResult:
    """Set ``status: resolved`` on an open tension. Blocking: call it from a worker thread."""
    files = VaultFiles(root)
    note = _open_tension(files, tension, seen, action="resolved")
    result = apply_review(
        files.root,
        operation_type="resolve",
        summary=f"Mark the tension {note.basename} resolved",
        replaced=[(note, _edit(note, lambda t: set_key(t, "status", "resolved")))],
        on_change=on_change,
    )
    pairs = confirmed_pairs(files.root, files, note)
    return keep_decision(files.root, result, action="resolve", pairs=pairs)


def defeat_note(
    root: str | os.PathLike[str],
    note: str,
    *,
    motive: str,
    replaced_by: str | None = None,
    seen: Mapping[str, str] | None = None,
    on_change: OnChange | None = None,
) -> ReviewResult:
    """Mark a tension, substrate or principle ``type: defeated`` with ``motive``.

    ``replaced_by``: another note (path or unambiguous basename), written as a
    wikilink. Blocking: call it from a worker thread.
    """
    motive = " ".join(motive.split())
    if not motive:
        raise BadInput("The motive is empty — say in a few words why the note is defeated.")
    files = VaultFiles(root)
    target = files.read(files.locate(note), seen=seen)
    if "defeat" not in available_actions(target.type, target.status):
        shown = f"of type {target.type!r}" if target.type else "without a type"
        raise NotEligible(
            f"{target.path} is {shown}; only tensions, substrates and principles can be "
            "defeated. Nothing was written."
        )
    edits: list[Callable[[str], str]] = [
        lambda t: set_key(t, target.type_key or "type", "defeated"),
        lambda t: set_key(t, "motive", motive),
    ]
    successor: str | None = None
    if replaced_by is not None and replaced_by.strip():
        successor = files.locate(replaced_by)
        if successor == target.path:
            raise BadInput(f"{target.path} cannot be replaced by itself — name another note.")
        link = files.link_to(successor)
        edits.append(lambda t: set_key(t, "replaced_by", link))
    result = apply_review(
        files.root,
        operation_type="defeat",
        summary=f"Defeat the {target.type} {target.basename}: {motive}"[:400],
        replaced=[(target, _edit(target, *edits))],
        on_change=on_change,
    )
    pairs = confirmed_pairs(files.root, files, target, successor)
    return keep_decision(files.root, result, action="defeat", pairs=pairs)


_CLAUSE_HINT = {"IF": "when the principle applies", "THEN": "what you do then"}


def _open_tension(
    files: VaultFiles, name: str, seen: Mapping[str, str] | None, *, action: str
) -> NoteText:
    note = files.read(files.locate(name), seen=seen)
    kind = (note.type or "").casefold()
    if kind == "defeated" and str(note.frontmatter.get("motive", "")).casefold() == "elevated":
        successor = note.frontmatter.get("replaced_by")
        where = f" to {successor}" if isinstance(successor, str) and successor.strip() else ""
        raise NotEligible(
            f"{note.path} was already elevated{where}; it cannot be {action} again. "
            "Nothing was written."
        )
    if kind != "tension":
        shown = f"of type {note.type!r}" if note.type else "without a type"
        raise NotEligible(
            f"{note.path} is {shown}, not a tension; only open tensions can be {action}. "
            "Nothing was written."
        )
    if "resolve" not in available_actions(note.type, note.status):
        raise NotEligible(
            f"{note.path} is a tension with status {note.status!r}, not an open one; only open "
            f"tensions can be {action}. Nothing was written."
        )
    return note


def _edit(note: NoteText, *edits: Callable[[str], str]) -> str:
    text = note.text
    try:
        for edit in edits:
            text = edit(text)
    except FrontmatterError as exc:
        raise ReviewRefused(f"{note.path}: {exc}") from None
    return text


def _title(title: str) -> str:
    title = " ".join(title.split())
    if not title:
        raise BadInput("The principle needs a title — it becomes the note's name.")
    bad = sorted(set(_BAD_TITLE.findall(title)))
    if bad:
        raise BadInput(
            f"The title {title!r} contains {' '.join(bad)}, which a note's name cannot hold — "
            "rephrase it without those characters."
        )
    if title.startswith(".") or title.lower().endswith(".md"):
        raise BadInput(f"The title {title!r} cannot start with '.' or end in '.md' — rephrase it.")
    if len(title) > MAX_TITLE_CHARS:
        raise BadInput(
            f"The title is {len(title)} characters long; keep it under {MAX_TITLE_CHARS} "
            "(put the detail in the clauses)."
        )
    return title


def _folder(folder: str) -> str:
    folder = folder.strip().strip("/")
    if not folder:
        return ""
    try:
        return check_relative_path(folder)
    except PlanInvalid as exc:
        raise BadInput(f"The principles folder {folder!r} cannot be used: {exc}") from None


def _principle_text(
    *, title: str, origin: str, if_clause: str, then_clause: str, grey_zone: str
) -> str:
    body = [
        f"# {title}",
        "",
        f"**IF** {if_clause.rstrip(',')}, **THEN** {then_clause.rstrip('.')}.",
        "",
    ]
    if grey_zone:
        body += [f"**Grey zone:** {grey_zone}", ""]
    body += [f"Elevated from the tension {origin}.", ""]
    text = "\n".join(body)
    for key, value in (
        ("type", "principle"),
        ("origin_tension", origin),
        ("if_clause", if_clause),
        ("then_clause", then_clause),
        ("grey_zone", grey_zone),
    ):
        if value:
            text = set_key(text, key, value)
    return text
