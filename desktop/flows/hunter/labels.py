"""The user's review decisions, kept as labels the scan learns from (``.antinomy/learned.json``).

A dismissal is a negative; an elevation, a resolution or a defeat is a positive. Each label
keeps the note-level features the scan judged the pair on (taken from the last scan's
records), and the latest decision about a pair wins (the one it replaced is named). The
sentence frames the user hid ("dismiss all like this") are kept here too.

The file holds what only a scan knew (the features) on top of what the notes say, so it is
rebuilt when it is missing (``.antinomy/`` deleted, a fresh copy of the vault): negatives from
the notes' own ``hunter_false_positives`` and from ``.antinomy/dismissed.json`` (when only
``learned.json`` went), positives from tension notes (the notes each one links to,
pairwise), features unknown until the next scan judges those pairs again.

Written atomically, under a lock (``learned.lock``), never through a link. Blocking file I/O:
call it off the GUI thread.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.flows.alignment import code_names, frame
from desktop.flows.hunter.dismissals import (
    FALSE_POSITIVES,
    dismissal_targets,
    names_note,
    read_store,
)
from desktop.flows.hunter.records import TENSION_TYPE, load_last_run
from desktop.flows.hunter.verify import dismissal_key
from desktop.flows.judging import note_names
from desktop.flows.sentences import plain
from desktop.vault.layout import read_state_text, state_dir, state_lock, write_state_json
from desktop.vault.names import by_basename
from desktop.vault.notes import NoteSkipped, read_note
from desktop.vault.walk import walk_vault

log = logging.getLogger(__name__)

FORMAT = "antinomy-learned/1"
LEARNED_FILE = "learned.json"
LOCK_FILE = "learned.lock"

#: Review actions that confirm a pair as a tension, and the one that rejects it.
POSITIVE_ACTIONS = ("elevate", "resolve", "defeat", "tension")
NEGATIVE_ACTIONS = ("dismiss",)
#: A tension note linking to more notes than this is a hub, not one clash: its links
#: are not read as pairs when the labels are rebuilt.
MAX_TENSION_LINKS = 6


def now() -> str:
    """A decision's time; to the microsecond, so a reset and a decision in the same second
    still come in order."""
    return datetime.now(UTC).astimezone().isoformat(timespec="microseconds")


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The order-free key of a note pair: its two paths, sorted."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True)
class Label:
    """One decision about a note pair."""

    a: str
    b: str
    positive: bool
    #: dismiss, elevate, resolve, defeat, or tension (a tension note records the clash).
    action: str
    at: str = ""
    #: The note-level features the scan judged the pair on; None: not known yet (the next
    #: scan judges the pair again and fills them in).
    features: dict[str, float] | None = None
    #: The judge (its model id) whose scores the features hold.
    judge: str = ""
    #: The earlier decision about this pair that this one replaced ("" if none).
    overrode: str = ""
    #: "review" (an action), or "notes" (rebuilt from the notes' own frontmatter and links).
    source: str = "review"

    def features_for(self, judge: str) -> dict[str, float] | None:
        return self.features if self.features is not None and self.judge == judge else None


@dataclass(frozen=True)
class HiddenFrame:
    """A sentence pair's frame the user hid for the vault ("dismiss all like this")."""

    #: :func:`frame_key` of the two sentences: both frames, sorted, joined.
    key: str
    quote_a: str
    quote_b: str
    path_a: str
    path_b: str
    at: str = ""
    #: The dismissal it came with: undoing that transaction in the window shows the pairs
    #: again ("" for a frame kept before this was recorded).
    operation_id: str = ""


@dataclass
class Learned:
    """The contents of ``learned.json``."""

    labels: dict[tuple[str, str], Label] = field(default_factory=dict)
    frames: list[HiddenFrame] = field(default_factory=list)
    #: Decisions before this moment are kept but no longer used (``antinomy learned --reset``).
    reset_at: str = ""
    #: When the labels were rebuilt from the notes ("" if never).
    rebuilt_at: str = ""
    #: The last calibration a scan fitted, per judge id (what ``antinomy learned`` shows).
    calibration: dict[str, dict[str, Any]] = field(default_factory=dict)

    def active(self) -> list[Label]:
        """The labels the calibration uses: those since the last reset."""
        return [lab for lab in self.labels.values() if not self.reset_at or lab.at > self.reset_at]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "labels": [asdict(lab) for lab in self.labels.values()],
            "frames": [asdict(f) for f in self.frames],
            "reset_at": self.reset_at,
            "rebuilt_at": self.rebuilt_at,
            "calibration": self.calibration,
        }

    @classmethod
    def from_json(cls, data: object) -> Learned:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} file")
        known = {f.name for f in fields(Label)}
        labels: dict[tuple[str, str], Label] = {}
        for raw in data.get("labels", []):
            lab = Label(**{k: v for k, v in raw.items() if k in known})
            if lab.features is not None:
                lab = replace(lab, features={str(k): float(v) for k, v in lab.features.items()})
            labels[pair_key(lab.a, lab.b)] = lab
        frame_fields = {f.name for f in fields(HiddenFrame)}
        frames = [
            HiddenFrame(**{k: v for k, v in raw.items() if k in frame_fields})
            for raw in data.get("frames", [])
        ]
        calibration = data.get("calibration", {})
        return cls(
            labels=labels,
            frames=frames,
            reset_at=str(data.get("reset_at", "")),
            rebuilt_at=str(data.get("rebuilt_at", "")),
            calibration=calibration if isinstance(calibration, dict) else {},
        )


class LabelStore:
    """The vault's ``learned.json``: read (rebuilt from the notes when missing), edited under
    a lock, replaced atomically."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @property
    def path(self) -> Path:
        return self.root / ".antinomy" / LEARNED_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    def read(self) -> Learned:
        """What was learned; rebuilt from the notes (not saved) when the file is missing.
        An unreadable file raises ``ValueError`` (the caller says so and decides as shipped)."""
        raw = read_state_text(state_dir(self.root) / LEARNED_FILE)
        if raw is None:
            return rebuild(self.root)
        return Learned.from_json(json.loads(raw))

    @contextmanager
    def editing(self) -> Iterator[Learned]:
        """Read, let the caller change, write back — one writer at a time (a blocking lock:
        edits are short). A damaged file is kept aside as ``learned.json.damaged``."""
        folder = state_dir(self.root)
        with state_lock(folder, LOCK_FILE):
            try:
                learned = self.read()
            except ValueError as exc:
                damaged = folder / (LEARNED_FILE + ".damaged")
                log.warning("%s is damaged (%s): kept as %s, rebuilt", self.path, exc, damaged)
                (folder / LEARNED_FILE).rename(damaged)  # set aside, not written: no temp file
                learned = rebuild(self.root)
            yield learned
            write_state_json(folder / LEARNED_FILE, learned.to_json())


# ------------------------------------------------------------------ recording decisions


def record(
    learned: Learned,
    pairs: Iterable[tuple[str, str]],
    *,
    action: str,
    features: Mapping[tuple[str, str], tuple[dict[str, float], str]] | None = None,
    source: str = "review",
    at: str | None = None,
) -> list[Label]:
    """Keep ``action`` as the label of each pair (the latest decision wins, the replaced one
    named); ``features``: pair key → (features, judge id) where the scan knew them."""
    positive = action in POSITIVE_ACTIONS
    when = at or now()
    out: list[Label] = []
    for a, b in pairs:
        key = pair_key(a, b)
        if key[0] == key[1]:
            continue
        old = learned.labels.get(key)
        known = (features or {}).get(key)
        if known is None and old is not None and old.features is not None:
            known = (old.features, old.judge)  # a new decision on the same pair: same scores
        overrode = ""
        if old is not None and old.positive != positive:
            overrode = old.action
        label = Label(
            a=key[0],
            b=key[1],
            positive=positive,
            action=action,
            at=when,
            features=dict(known[0]) if known else None,
            judge=known[1] if known else "",
            overrode=overrode,
            source=source,
        )
        learned.labels[key] = label
        out.append(label)
    return out


def forget(learned: Learned, pairs: Iterable[tuple[str, str]], *, action: str) -> int:
    """Take back the labels ``action`` left on ``pairs`` (an undismissal takes back its
    dismissal, not a later elevation); returns how many went."""
    gone = 0
    for a, b in pairs:
        key = pair_key(a, b)
        lab = learned.labels.get(key)
        if lab is not None and lab.action == action:
            del learned.labels[key]
            gone += 1
    return gone


def last_run_features(root: Path) -> dict[tuple[str, str], tuple[dict[str, float], str]]:
    """Pair key → (features, judge id) of every pair, shown or hidden, of the last scan."""
    run = load_last_run(root)
    if run is None:
        return {}
    out: dict[tuple[str, str], tuple[dict[str, float], str]] = {}
    for pair in (*run.pairs, *run.hidden):
        if pair.features:
            out[pair_key(pair.path_a, pair.path_b)] = (dict(pair.features), run.judge_id)
    return out


def last_run_pairs_with(root: Path, path: str) -> list[tuple[str, str]]:
    """The pairs of the last scan (shown or hidden) that ``path`` is part of."""
    run = load_last_run(root)
    if run is None:
        return []
    return [(p.path_a, p.path_b) for p in (*run.pairs, *run.hidden) if path in (p.path_a, p.path_b)]


# ------------------------------------------------------------------ sentence frames


def sentence_frame(quote: str, names: Iterable[str]) -> str:
    """A quoted sentence's frame as the scan computes it: its note's names and its values
    masked (:func:`~desktop.flows.alignment.frame`)."""
    return frame(plain(quote), frozenset(names) | code_names(quote))


def frame_key(quote_a: str, names_a: Iterable[str], quote_b: str, names_b: Iterable[str]) -> str:
    """The order-free frame of a sentence pair: both frames, sorted, joined."""
    fa, fb = sorted((sentence_frame(quote_a, names_a), sentence_frame(quote_b, names_b)))
    return f"{fa} ⟂ {fb}"


def names_of(root: Path, path: str) -> frozenset[str]:
    """The words naming a note's subject, read from the file (title, aliases, name)."""
    try:
        note = read_note(root, path)
    except NoteSkipped:
        return note_names(path)
    return note_names(path, note.title, *note.aliases)


# ------------------------------------------------------------------ rebuilding


def rebuild(root: Path) -> Learned:
    """Labels from the vault alone: every dismissal (``hunter_false_positives`` and
    ``.antinomy/dismissed.json``) a negative, every tension note's linked notes (pairwise)
    a positive; features unknown."""
    notes = []
    for path, st, _skip in walk_vault(root):
        if st is None:
            continue
        try:
            notes.append(read_note(root, path))
        except NoteSkipped:
            continue
    names = by_basename(n.path for n in notes)
    by_key = {dismissal_key(name): paths for name, paths in names.items()}
    every = [n.path for n in notes]

    def unique(entry: str) -> str | None:
        found = by_key.get(dismissal_key(entry), [])
        return found[0] if len(found) == 1 else None

    def named(target: str) -> str | None:
        """The one note a dismissal entry names (by basename, or by path)."""
        if "/" not in target:
            found = by_key.get(target, [])
        else:
            found = [p for p in every if names_note((target,), p)]
        return found[0] if len(found) == 1 else None

    learned = Learned(rebuilt_at=now())
    negatives: list[tuple[str, str]] = []
    positives: dict[str, list[tuple[str, str]]] = {}
    for note in notes:
        for target in dismissal_targets(note.frontmatter.get(FALSE_POSITIVES)):
            peer = named(target)
            if peer is not None and peer != note.path:
                negatives.append((note.path, peer))
        action = _tension_action(note.type, note.status, note.frontmatter.get("motive"))
        if action is None:
            continue
        linked = sorted({p for link in note.links if (p := unique(link.target_basename))})
        linked = [p for p in linked if p != note.path]
        if 2 <= len(linked) <= MAX_TENSION_LINKS:
            positives.setdefault(action, []).extend(
                (a, b) for i, a in enumerate(linked) for b in linked[i + 1 :]
            )
    known = set(every)
    negatives += [(p.a, p.b) for p in read_store(root) if p.a in known and p.b in known]
    # Oldest first so a positive (the clash the user recorded) wins over a dismissal of it.
    record(learned, negatives, action="dismiss", source="notes")
    for action, pairs in positives.items():
        record(learned, pairs, action=action, source="notes")
    return learned


def _tension_action(kind: str | None, status: str | None, motive: object) -> str | None:
    """Which positive a note stands for: a tension (open: "tension", resolved: "resolve"),
    or a former tension elevated to a principle ("elevate"); None for other notes."""
    kind = (kind or "").casefold()
    if kind == TENSION_TYPE:
        return "resolve" if (status or "").casefold() == "resolved" else "tension"
    if kind == "defeated" and str(motive or "").casefold() == "elevated":
        return "elevate"
    return None


def summary_counts(labels: Sequence[Label]) -> dict[str, int]:
    """Decisions by action, for a report."""
    out: dict[str, int] = {}
    for lab in labels:
        out[lab.action] = out.get(lab.action, 0) + 1
    return out
