"""Dismissing a pair as a false positive, undoing that, and listing dismissed pairs.

A dismissal writes each note's basename into the other's
``hunter_false_positives`` (Antinomia's key and format), both notes in one
transaction. Only that key's bytes change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace

from desktop.flows.hunter.labels import HiddenFrame, LabelStore, frame_key, names_of, now
from desktop.flows.review.errors import (
    BadInput,
    DismissalListInvalid,
    DuplicateBasename,
    NoteNotFound,
    ReviewRefused,
)
from desktop.flows.review.learn import forget_dismissal, keep_decision
from desktop.flows.review.records import FALSE_POSITIVES, DismissedPair, ReviewResult
from desktop.flows.review.vaultfiles import (
    NoteText,
    VaultFiles,
    apply_review,
    entry_name,
)
from desktop.vault.errors import VaultError
from desktop.vault.frontmatter import (
    FrontmatterError,
    add_to_list,
    parse_frontmatter,
    remove_from_list,
    remove_key,
    set_key,
)
from desktop.vault.names import basename_of, name_key
from desktop.vault.transactions import OnChange


def dismiss_pair(
    root: str | os.PathLike[str],
    a: str,
    b: str,
    *,
    seen: Mapping[str, str] | None = None,
    on_change: OnChange | None = None,
) -> ReviewResult:
    """Mark the pair ``a``–``b`` as a false positive in both notes, in one transaction.

    ``a``/``b``: vault-relative paths (an unambiguous basename works too).
    ``seen``: path → sha256 of the bytes the user saw; a mismatch raises
    ``VaultChanged``. Refused (nothing written) for a missing note, the same
    note twice, or a basename shared by several notes. Blocking file I/O: call
    it from a worker thread. ``on_change`` gets the written paths.
    """
    files = VaultFiles(root)
    note_a, note_b = _pair(files, a, b, seen)
    for note in (note_a, note_b):
        check_dismissal_list(note)
    for note in (note_a, note_b):
        others = files.others_named_like(note.path)
        if others:
            raise DuplicateBasename(
                f"Dismissals are kept by note name, and {note.basename!r} is the name of "
                f"{note.path} and {', '.join(others)}. Nothing was written — rename one of "
                "them, then dismiss the pair again."
            )
    result = apply_review(
        files.root,
        operation_type="dismiss",
        summary=f"Dismiss the pair {note_a.basename} ↔ {note_b.basename} (not a tension)",
        replaced=[
            (note_a, _with_entry(note_a, note_b.basename)),
            (note_b, _with_entry(note_b, note_a.basename)),
        ],
        on_change=on_change,
    )
    return keep_decision(files.root, result, action="dismiss", pairs=[(note_a.path, note_b.path)])


def undismiss_pair(
    root: str | os.PathLike[str],
    a: str,
    b: str,
    *,
    seen: Mapping[str, str] | None = None,
    on_change: OnChange | None = None,
) -> ReviewResult:
    """Remove the dismissal of ``a``–``b`` from both notes (the key goes when it empties).

    A peer that no longer exists (deleted or renamed) is accepted when the
    other note still lists it, so a dangling entry can be cleaned up; only the
    existing note is written then. Blocking: call it from a worker thread.
    """
    files = VaultFiles(root)
    try:
        notes = list(_pair(files, a, b, seen))
        names = [notes[1].basename, notes[0].basename]
    except NoteNotFound:
        notes, names = _one_sided(files, a, b, seen)
    for note in notes:
        check_dismissal_list(note)
    replaced = [(note, _without_entry(note, name)) for note, name in zip(notes, names, strict=True)]
    shown = " ↔ ".join(sorted({notes[0].basename, names[0]}, key=name_key))
    result = apply_review(
        files.root,
        operation_type="undismiss",
        summary=f"Undismiss the pair {shown} (the Hunter may show it again)",
        replaced=replaced,
        on_change=on_change,
    )
    if len(notes) == 2:
        result = forget_dismissal(files.root, result, (notes[0].path, notes[1].path))
    return result


def dismiss_like(
    root: str | os.PathLike[str],
    a: str,
    b: str,
    *,
    quote_a: str,
    quote_b: str,
    seen: Mapping[str, str] | None = None,
    on_change: OnChange | None = None,
) -> tuple[ReviewResult, HiddenFrame]:
    """Dismiss the pair ``a``–``b`` and hide, for the whole vault and every scan mode, every
    pair whose two sentences have the frame of ``quote_a``/``quote_b`` (each note's own
    names and the numbers masked). The dismissal is one transaction like
    :func:`dismiss_pair`; the frame is kept in ``.antinomy/learned.json`` and listed by
    ``antinomy learned`` (undo: :func:`unhide_frame`). Blocking: call it from a worker thread."""
    files = VaultFiles(root)
    path_a, path_b = files.locate(a), files.locate(b)
    if not quote_a.strip() or not quote_b.strip():
        raise BadInput("“All like this” needs the pair's two quotes, as the scan showed them.")
    result = dismiss_pair(files.root, path_a, path_b, seen=seen, on_change=on_change)
    key = frame_key(quote_a, names_of(files.root, path_a), quote_b, names_of(files.root, path_b))
    hidden = HiddenFrame(
        key, quote_a, quote_b, path_a, path_b, at=now(), operation_id=result.operation_id or ""
    )
    try:
        with LabelStore(files.root).editing() as learned:
            if all(f.key != key for f in learned.frames):
                learned.frames.append(hidden)
    except (OSError, ValueError, VaultError) as exc:
        return replace(
            result, learned=f"the pair is dismissed, but its frame could not be hidden ({exc})"
        ), hidden
    return replace(
        result, learned=(result.learned + "; " if result.learned else "") + "pairs like it hidden"
    ), hidden


def list_dismissed(root: str | os.PathLike[str]) -> list[DismissedPair]:
    """Every dismissed pair in the vault, each once, with missing peers flagged.

    Reads the frontmatter of the notes that mention ``hunter_false_positives``;
    a note whose frontmatter cannot be read is left out (the index coverage
    report lists it). Blocking file I/O.
    """
    files = VaultFiles(root)
    listed: dict[str, set[str]] = {}  # name_key of a note -> name_keys it lists
    shown: dict[str, str] = {}  # name_key -> basename as written
    for path, entries in dismissal_lists(files).items():
        mine = name_key(basename_of(path))
        shown.setdefault(mine, basename_of(path))
        for entry in entries:
            shown.setdefault(name_key(entry), entry)
            listed.setdefault(mine, set()).add(name_key(entry))
    pairs: dict[tuple[str, str], DismissedPair] = {}
    for mine, peers in listed.items():
        for peer in peers:
            if peer == mine:
                continue
            first, second = sorted((mine, peer))
            if (first, second) in pairs:
                continue
            reciprocal = mine in listed.get(peer, set())
            pairs[(first, second)] = _record(files, shown[first], shown[second], reciprocal)
    return [pairs[key] for key in sorted(pairs)]


def dismissal_lists(files: VaultFiles) -> dict[str, list[str]]:
    """path → the basenames its ``hunter_false_positives`` lists, for every note with one."""
    found: dict[str, list[str]] = {}
    for path in files.paths:
        try:
            data = (files.root / path).read_bytes()
        except OSError:
            continue
        if FALSE_POSITIVES.encode() not in data:
            continue  # cheap: most notes never had a dismissal
        try:
            value = parse_frontmatter(data.decode("utf-8")).get(FALSE_POSITIVES)
        except (UnicodeDecodeError, FrontmatterError):
            continue
        values = value if isinstance(value, list) else [] if value is None else [value]
        names = [entry_name(v) for v in values if v is not None and str(v).strip()]
        if names:
            found[path] = names
    return found


def _record(files: VaultFiles, a: str, b: str, reciprocal: bool) -> DismissedPair:
    paths: list[str | None] = []
    missing: list[str] = []
    ambiguous: list[str] = []
    for name in (a, b):
        found = files.with_basename(name)
        paths.append(found[0] if len(found) == 1 else None)
        if not found:
            missing.append(name)
        elif len(found) > 1:
            ambiguous.append(name)
    return DismissedPair(a, b, paths[0], paths[1], tuple(missing), tuple(ambiguous), reciprocal)


def _pair(
    files: VaultFiles, a: str, b: str, seen: Mapping[str, str] | None
) -> tuple[NoteText, NoteText]:
    path_a, path_b = files.locate(a), files.locate(b)
    if path_a == path_b:
        raise ReviewRefused(
            f"{a!r} and {b!r} are the same note ({path_a}); a pair needs two notes."
        )
    return files.read(path_a, seen=seen), files.read(path_b, seen=seen)


def _one_sided(
    files: VaultFiles, a: str, b: str, seen: Mapping[str, str] | None
) -> tuple[list[NoteText], list[str]]:
    """Undismiss with one note gone: the existing note, and the gone name it lists."""
    for present, gone in ((a, b), (b, a)):
        try:
            note = files.read(files.locate(present), seen=seen)
        except NoteNotFound:
            continue
        gone_name = entry_name(gone)
        if any(name_key(n) == name_key(gone_name) for n in _entries(note)):
            return [note], [gone_name]
        raise NoteNotFound(
            f"No note {gone!r} in the vault, and {note.path} does not list it as dismissed — "
            "check the name (`antinomy dismissed` lists the pairs)."
        )
    raise NoteNotFound(f"Neither {a!r} nor {b!r} is a note in the vault {files.root}.")


def check_dismissal_list(note: NoteText) -> None:
    """Refuse a ``hunter_false_positives`` that is not a list of names (nothing is written).

    A number or a mapping there is not a dismissal Antinomy wrote; turning ``5``
    into ``[5, Peer]`` would silently rewrite the user's value.
    """
    value = note.frontmatter.get(FALSE_POSITIVES)
    # A list is edited item by item (an odd item, like `- Name: with colon` read as a
    # mapping, is kept as written); only the key's own value can be of the wrong kind.
    if value is None or isinstance(value, str | list):
        return
    held = "a mapping" if isinstance(value, dict) else f"{type(value).__name__} {value!r}"
    raise DismissalListInvalid(
        f"{note.path}: `{FALSE_POSITIVES}` holds {held}, not a list of note names. Nothing "
        f"was written — make it a list (`{FALSE_POSITIVES}: [Other note]`) or remove the key, "
        "then try again."
    )


def _entries(note: NoteText) -> list[str]:
    value = note.frontmatter.get(FALSE_POSITIVES)
    values = value if isinstance(value, list) else [] if value is None else [value]
    return [entry_name(v) for v in values if v is not None]


def _with_entry(note: NoteText, peer: str) -> str:
    # Exact match: the Hunter compares basenames exactly, so an entry spelled in another
    # case would not hide the pair; the exact name is added beside it then.
    if peer in _entries(note):
        return note.text  # already there: no duplicate
    return _edited(note, lambda text: add_to_list(text, FALSE_POSITIVES, peer))


def _without_entry(note: NoteText, peer: str) -> str:
    value = note.frontmatter.get(FALSE_POSITIVES)
    if value is None:
        return note.text
    values = value if isinstance(value, list) else [value]
    matches = [v for v in values if v is not None and name_key(entry_name(v)) == name_key(peer)]
    if not matches:
        return note.text
    remaining = [v for v in values if v not in matches]
    if all(isinstance(v, str) for v in matches):

        def cut(text: str) -> str:
            for match in dict.fromkeys(str(m) for m in matches):
                text = remove_from_list(text, FALSE_POSITIVES, match)
            return text

        return _edited(note, cut)
    # An entry YAML read as a date or number: rewrite the list without it, in its style.
    if not remaining:
        return _edited(note, lambda text: remove_key(text, FALSE_POSITIVES))
    return _edited(note, lambda text: set_key(text, FALSE_POSITIVES, remaining))


def _edited(note: NoteText, edit: Callable[[str], str]) -> str:
    """``edit(note.text)``; a frontmatter that cannot be edited faithfully is a refusal."""
    try:
        return edit(note.text)
    except FrontmatterError as exc:
        raise ReviewRefused(f"{note.path}: {exc}") from None
