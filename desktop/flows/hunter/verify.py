"""Code, not the model, decides what is shown: every pair is checked against the notes."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from desktop.flows.hunter.dismissals import dismisses
from desktop.flows.hunter.prompt import RawPair, clean_name, normalise_item
from desktop.flows.hunter.records import SUPERSESSION_KEYS, TENSION_TYPE, Pair
from desktop.vault.notes import Note, frontmatter_strings

_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"[*_`~]|\[\[|\]\]|^#+\s*|^>\s*|^[-+]\s+", re.MULTILINE)
_TRANSLATE = str.maketrans(
    {"’": "'", "‘": "'", "“": '"', "”": '"', "«": '"', "»": '"', "–": "-", "—": "-"}
)


def normalise_text(text: str) -> str:
    """Case, whitespace, typographic quotes and Markdown emphasis do not matter."""
    text = unicodedata.normalize("NFC", text).translate(_TRANSLATE)
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # a lone CR ends a line too
    text = _MARKUP.sub("", text)
    return _SPACE.sub(" ", text).strip().casefold()


def clean_quote(quote: str) -> str:
    """A model's quote without the wrapping it adds: quotation marks, ellipses."""
    quote = quote.strip()
    for _ in range(2):
        quote = quote.strip().strip("\"'“”«»`").strip()
        quote = quote.removeprefix("...").removeprefix("…").removesuffix("...").removesuffix("…")
    return quote.strip()


def quote_found(quote: str, text: str) -> bool:
    wanted = normalise_text(clean_quote(quote))
    return bool(wanted) and wanted in normalise_text(text)


def dismissal_key(entry: object) -> str:
    """A ``hunter_false_positives`` entry as a comparable basename: ``[[X|alias]]``,
    ``Folder/X.md`` and case differences all name X (as links resolve)."""
    text = str(entry).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    text = text.rsplit("/", 1)[-1]
    if text.lower().endswith(".md"):
        text = text[:-3]
    return text.strip().casefold()


@dataclass(frozen=True)
class NoteInPrompt:
    """What verification needs of a prompt note."""

    path: str
    label: str
    basename: str
    #: The whole note (body without frontmatter), not only the excerpt sent.
    text: str
    sha256: str
    #: What dismisses a pair with this note (:mod:`desktop.flows.hunter.dismissals`): the
    #: targets of its ``hunter_false_positives`` and of ``.antinomy/dismissed.json``.
    dismissed: frozenset[str]
    #: The ``dismissal_key`` of each note whose clash with this one the vault already
    #: records (:func:`recorded_with`): a clash with one of them is not a new tension.
    records: frozenset[str] = frozenset()


def recorded_with(note: Note) -> frozenset[str]:
    """The ``dismissal_key`` of each note whose clash with ``note`` the vault already records:
    every note a tension note links to (it states both positions), and every decision a note
    ``supersedes`` or is ``superseded_by`` (the newer one goes the other way on purpose)."""
    keys: set[str] = set()
    if (note.type or "").casefold() == TENSION_TYPE:
        keys.update(dismissal_key(link.target_basename) for link in note.links)
    for field in SUPERSESSION_KEYS:
        keys.update(dismissal_key(v) for v in frontmatter_strings(note.frontmatter.get(field)))
    keys.discard("")
    return frozenset(keys)


def records_pair(a: NoteInPrompt | Note, b: NoteInPrompt | Note) -> bool:
    """One of the two records its clash with the other (:func:`recorded_with`)."""
    ra = a.records if isinstance(a, NoteInPrompt) else recorded_with(a)
    rb = b.records if isinstance(b, NoteInPrompt) else recorded_with(b)
    return dismissal_key(b.basename) in ra or dismissal_key(a.basename) in rb


class Verifier:
    """Checks pairs from one or more answers of one scan; counts every drop by reason."""

    def __init__(self, *, focus: str | None = None) -> None:
        self.focus = focus
        self.dropped: Counter[str] = Counter()
        self.accepted: list[Pair] = []
        self._seen: set[frozenset[str]] = set()

    def forget_seen(self) -> set[frozenset[str]]:
        """Let pairs already accepted through again (and return them), so a second source of
        pairs for the same notes can be merged by the caller instead of dropped as duplicates."""
        seen, self._seen = self._seen, set()
        return seen

    def remember_seen(self, seen: set[frozenset[str]]) -> None:
        self._seen |= seen

    def check_answer(
        self,
        items: Sequence[object],
        notes: Mapping[str, NoteInPrompt],
    ) -> None:
        """Verify the items of one answer; ``notes`` maps label → note of that prompt."""
        lookup = _lookup(notes)
        for item in items:
            raw = normalise_item(item)
            if raw is None:
                self.dropped["malformed"] += 1
                continue
            reason, pair = self._check(raw, lookup)
            if reason:
                self.dropped[reason] += 1
            elif pair is not None:
                self.accepted.append(pair)
                self._seen.add(pair.key())

    def _check(
        self,
        raw: RawPair,
        lookup: Mapping[str, NoteInPrompt],
    ) -> tuple[str | None, Pair | None]:
        a = lookup.get(clean_name(raw.note_a).casefold())
        b = lookup.get(clean_name(raw.note_b).casefold())
        if a is None or b is None:
            return "unknown_note", None
        if a.path == b.path:
            return "same_note", None
        if not raw.description:
            return "no_description", None
        if self.focus is not None and self.focus not in (a.path, b.path):
            return "not_focus", None
        if not clean_quote(raw.quote_a) or not clean_quote(raw.quote_b):
            return "missing_quote", None
        if not quote_found(raw.quote_a, a.text) or not quote_found(raw.quote_b, b.text):
            # A model sometimes swaps the quotes; accept them the right way round.
            if quote_found(raw.quote_a, b.text) and quote_found(raw.quote_b, a.text):
                raw = RawPair(
                    raw.note_a,
                    raw.note_b,
                    raw.quote_b,
                    raw.quote_a,
                    raw.description,
                    raw.confidence,
                )
            else:
                return "quote_not_found", None
        if dismisses(a.path, a.dismissed, b.path, b.dismissed):
            return "dismissed", None
        if records_pair(a, b):
            return "recorded", None
        if frozenset((a.path, b.path)) in self._seen:
            return "duplicate", None
        if self.focus is not None and b.path == self.focus:
            a, b = b, a
            raw = RawPair(
                raw.note_b, raw.note_a, raw.quote_b, raw.quote_a, raw.description, raw.confidence
            )
        return None, Pair(
            path_a=a.path,
            path_b=b.path,
            note_a=a.label,
            note_b=b.label,
            quote_a=clean_quote(raw.quote_a),
            quote_b=clean_quote(raw.quote_b),
            description=raw.description,
            confidence=raw.confidence or "medium",  # type: ignore[arg-type]
            confidence_defaulted=raw.confidence is None,
            sha_a=a.sha256,
            sha_b=b.sha256,
        )


def _lookup(notes: Mapping[str, NoteInPrompt]) -> dict[str, NoteInPrompt]:
    """Label, basename and path (without .md), case-insensitive — unique ones only."""
    out: dict[str, NoteInPrompt] = {}
    ambiguous: set[str] = set()
    for note in notes.values():
        for key in {note.label, note.basename, note.path.removesuffix(".md")}:
            k = key.casefold()
            if k in out and out[k].path != note.path:
                ambiguous.add(k)
            out[k] = note
    for k in ambiguous:
        out.pop(k, None)
    for note in notes.values():  # a label always names its own note
        out[note.label.casefold()] = note
    return out
