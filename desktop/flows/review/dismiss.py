"""Dismissing a pair as a false positive, undoing that, and listing dismissed pairs.

By default a dismissal writes each note's name into the other's
``hunter_false_positives`` (Antinomia's key and format), both notes in one
transaction; only that key's bytes change. A note whose basename other notes share is
named by its path (:func:`~desktop.flows.hunter.dismissals.entry_for`). With
``keep_in="antinomy"`` (the vault's option) the pair goes into
``.antinomy/dismissed.json`` instead and the notes are not touched — still one journaled,
undoable transaction. Every reader reads both places, and undismissing takes the pair out
of both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path

from desktop.flows.hunter.dismissals import (
    STORE_PATH,
    StoredPair,
    dismissal_target,
    dismissal_targets,
    dismisses,
    names_note,
    parse_store_bytes,
    read_store_bytes,
    store_text,
)
from desktop.flows.hunter.labels import HiddenFrame, LabelStore, frame_key, names_of, now
from desktop.flows.review.errors import (
    BadInput,
    DismissalListInvalid,
    NoteNotFound,
    ReviewRefused,
)
from desktop.flows.review.learn import forget_dismissal, keep_decision
from desktop.flows.review.records import FALSE_POSITIVES, KEEP_IN, KeepIn, ReviewResult
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
from desktop.vault.layout import state_dir
from desktop.vault.names import name_key, strip_wikilink
from desktop.vault.transactions import OnChange, Write, sha256_hex


def dismiss_pair(
    root: str | os.PathLike[str],
    a: str,
    b: str,
    *,
    seen: Mapping[str, str] | None = None,
    on_change: OnChange | None = None,
    keep_in: KeepIn = "notes",
) -> ReviewResult:
    """Mark the pair ``a``–``b`` as a false positive, in one transaction: in both notes
    (``keep_in="notes"``) or in ``.antinomy/dismissed.json`` (``"antinomy"``).

    ``a``/``b``: vault-relative paths (an unambiguous basename works too).
    ``seen``: path → sha256 of the bytes the user saw; a mismatch raises
    ``VaultChanged``. Refused (nothing written) for a missing note or the same note
    twice. A pair already dismissed in the other place is not written again. Blocking
    file I/O: call it from a worker thread. ``on_change`` gets the written paths.
    """
    if keep_in not in KEEP_IN:
        raise BadInput(f"Dismissals are kept in 'notes' or 'antinomy', not {keep_in!r}.")
    files = VaultFiles(root)
    note_a, note_b = _pair(files, a, b, seen)
    name_a, name_b = files.entry_for(note_a.path), files.entry_for(note_b.path)
    summary = f"Dismiss the pair {name_a} ↔ {name_b} (not a tension)"
    store = StoreState.read(files.root)
    if keep_in == "antinomy":
        in_notes = _in_notes(note_a, note_b)
        if in_notes or store.has(note_a.path, note_b.path):
            result = ReviewResult(None, (), (), summary)
        else:
            result = apply_review(
                files.root,
                operation_type="dismiss",
                summary=summary.removesuffix(")") + "; kept in .antinomy/, notes untouched)",
                state=store.writes(store.added(note_a.path, note_b.path)),
                on_change=on_change,
            )
    elif store.has(note_a.path, note_b.path):
        result = ReviewResult(None, (), (), summary)
    else:
        for note in (note_a, note_b):
            check_dismissal_list(note)
        result = apply_review(
            files.root,
            operation_type="dismiss",
            summary=summary,
            replaced=[
                (note_a, _with_entry(note_a, name_b)),
                (note_b, _with_entry(note_b, name_a)),
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
    """Take the dismissal of ``a``–``b`` back wherever it is written: both notes' lists
    (the key goes when it empties) and ``.antinomy/dismissed.json``, in one transaction.

    A peer that no longer exists (deleted or renamed) is accepted when the other note
    still lists it, or the file still pairs them, so a dangling entry can be cleaned up;
    only the existing note is written then. Blocking: call it from a worker thread.
    """
    files = VaultFiles(root)
    store = StoreState.read(files.root)
    try:
        notes = list(_pair(files, a, b, seen))
        peers = [notes[1].path, notes[0].path]
        shown = " ↔ ".join(sorted((files.entry_for(p) for p in peers), key=name_key))
        left = store.removed(lambda p, q: {p, q} == set(peers))
    except NoteNotFound:
        notes, peers, left = _one_sided(files, store, a, b, seen)
        gone = entry_name(peers[0]) if "/" not in peers[0] else peers[0].removesuffix(".md")
        shown = " ↔ ".join(sorted({files.entry_for(notes[0].path), gone}, key=name_key))
    for note in notes:
        check_dismissal_list(note)
    replaced = [(note, _without_entry(note, peer)) for note, peer in zip(notes, peers, strict=True)]
    result = apply_review(
        files.root,
        operation_type="undismiss",
        summary=f"Undismiss the pair {shown} (the Hunter may show it again)",
        replaced=replaced,
        state=store.writes(left),
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
    keep_in: KeepIn = "notes",
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
    result = dismiss_pair(
        files.root, path_a, path_b, seen=seen, on_change=on_change, keep_in=keep_in
    )
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


def dismissal_entries(files: VaultFiles) -> dict[str, list[str]]:
    """path → the entries its ``hunter_false_positives`` lists, as written (a ``[[link]]``
    unwrapped), for every note with one."""
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
        entries = [strip_wikilink(str(v)) for v in values if v is not None and str(v).strip()]
        if entries:
            found[path] = entries
    return found


def dismissal_lists(files: VaultFiles) -> dict[str, list[str]]:
    """path → the basenames its ``hunter_false_positives`` lists, for every note with one."""
    return {
        path: [entry_name(e) for e in entries] for path, entries in dismissal_entries(files).items()
    }


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
    files: VaultFiles, store: StoreState, a: str, b: str, seen: Mapping[str, str] | None
) -> tuple[list[NoteText], list[str], list[StoredPair]]:
    """Undismiss with one note gone: the existing note, the gone name (or path) it lists,
    and the file's pairs without the ones pairing them."""
    for present, gone in ((a, b), (b, a)):
        try:
            note = files.read(files.locate(present), seen=seen)
        except NoteNotFound:
            continue
        left = store.removed(partial(_pairs_with_gone, note.path, gone))
        if any(_names_gone(e, gone) for e in _entries(note)) or len(left) < len(store.pairs):
            return [note], [gone], left
        raise NoteNotFound(
            f"No note {gone!r} in the vault, and {note.path} does not list it as dismissed — "
            "check the name (`antinomy dismissed` lists the pairs)."
        )
    raise NoteNotFound(f"Neither {a!r} nor {b!r} is a note in the vault {files.root}.")


def _names_gone(entry: object, gone: str) -> bool:
    """The entry names the note ``gone`` (a name or a path, ``.md`` optional)."""
    t = dismissal_target(entry)
    gone_path = gone if gone.lower().endswith(".md") else gone + ".md"
    return bool(t) and (t == dismissal_target(gone) or names_note((t,), gone_path))


def _pairs_with_gone(path: str, gone: str, p: str, q: str) -> bool:
    """The file's pair ``p``–``q`` pairs ``path`` with the note ``gone`` names."""
    other = q if p == path else p if q == path else None
    return other is not None and names_note((dismissal_target(gone),), other)


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
    """The note's entries as written (a ``[[link]]`` unwrapped)."""
    value = note.frontmatter.get(FALSE_POSITIVES)
    values = value if isinstance(value, list) else [] if value is None else [value]
    return [strip_wikilink(str(v)) for v in values if v is not None]


def _in_notes(a: NoteText, b: NoteText) -> bool:
    """Either note's list already dismisses the pair."""
    ta = dismissal_targets(a.frontmatter.get(FALSE_POSITIVES))
    tb = dismissal_targets(b.frontmatter.get(FALSE_POSITIVES))
    return dismisses(a.path, ta, b.path, tb)


def _with_entry(note: NoteText, peer: str) -> str:
    # Exact match: an entry spelled in another case is left as written and the exact name
    # added beside it (what Antinomia compares).
    if peer in _entries(note):
        return note.text  # already there: no duplicate
    return _edited(note, lambda text: add_to_list(text, FALSE_POSITIVES, peer))


def _without_entry(note: NoteText, peer: str) -> str:
    """``note`` without the entries naming ``peer`` (a path, or a gone note's name)."""
    value = note.frontmatter.get(FALSE_POSITIVES)
    if value is None:
        return note.text
    values = value if isinstance(value, list) else [value]
    matches = [v for v in values if v is not None and _names_gone(v, peer)]
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


class StoreState:
    """``.antinomy/dismissed.json`` as read for one action: its pairs and its bytes' hash
    (the transaction is refused if the file changes meanwhile)."""

    def __init__(self, root: Path, pairs: list[StoredPair], sha256: str | None) -> None:
        self.root = root
        self.pairs = pairs
        self.sha256 = sha256

    @classmethod
    def read(cls, root: Path) -> StoreState:
        data = read_store_bytes(root)
        if data is None:
            return cls(root, [], None)
        return cls(root, parse_store_bytes(data, where=str(root / STORE_PATH)), sha256_hex(data))

    def has(self, a: str, b: str) -> bool:
        return any({p.a, p.b} == {a, b} for p in self.pairs)

    def added(self, a: str, b: str) -> list[StoredPair]:
        first, second = sorted((a, b))
        return [*self.pairs, StoredPair(first, second, now())]

    def removed(self, match: Callable[[str, str], bool]) -> list[StoredPair]:
        return [p for p in self.pairs if not match(p.a, p.b)]

    def writes(self, pairs: list[StoredPair]) -> list[Write]:
        """The write that leaves ``pairs`` in the file (none when they are what it holds)."""
        if pairs == self.pairs:
            return []
        state_dir(self.root)
        text = store_text(pairs)
        if self.sha256 is None:
            return [Write.create(STORE_PATH, text)]
        return [Write.replace(STORE_PATH, text, expected_sha256=self.sha256)]
