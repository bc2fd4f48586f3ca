"""The records a scan produces: frozen, JSON-round-trippable, shared with the GUI and CLI."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from desktop.flows.progress import plural
from desktop.vault.layout import state_dir
from foundation import atomic
from foundation.errors import AntinomyError

Mode = Literal["classic", "focus", "whole-vault"]
MODES: tuple[Mode, ...] = ("classic", "focus", "whole-vault")
Status = Literal["ok", "format_failure", "stopped", "error"]
Confidence = Literal["high", "medium", "low"]

#: Shown with every result, permanently: the pairs are prompts to reflect, not verdicts.
DISCLAIMER = (
    "Reflective prompts, not truths: a small local contradiction judge picked these sentence "
    "pairs and code checked that the quotes exist. Whether the notes really disagree is for you "
    "to judge."
)

#: The note type that records a tension (Antinomia's ``antinomia_type: tension``).
TENSION_TYPE = "tension"
#: Frontmatter keys by which a decision names the one it replaces, or that replaced it.
SUPERSESSION_KEYS = ("supersedes", "superseded_by")

#: Why a returned pair was not shown. Keys of ``ScanRun.dropped``; the value is
#: what was dropped, as (one, several): "1 empty quote", "5 quotes not found…".
DROP_REASONS: dict[str, tuple[str, str]] = {
    "unknown_note": (
        "pair naming a note that was not in the prompt",
        "pairs naming a note that was not in the prompt",
    ),
    "same_note": ("pair of a note with itself", "pairs of a note with itself"),
    "no_description": ("pair without a description", "pairs without a description"),
    "not_focus": ("pair not involving the focus note", "pairs not involving the focus note"),
    "missing_quote": ("pair with an empty quote", "pairs with an empty quote"),
    "quote_not_found": ("quote not found in its note", "quotes not found in their note"),
    "dismissed": (
        "pair dismissed earlier (in the notes or in .antinomy/)",
        "pairs dismissed earlier (in the notes or in .antinomy/)",
    ),
    "recorded": (
        "pair the vault already records (a tension note and a note it links to, or a decision "
        "and the one it supersedes)",
        "pairs the vault already records (tension notes and the notes they link to, decisions "
        "and the ones they supersede)",
    ),
    "duplicate": ("repeat of a pair already shown", "repeats of a pair already shown"),
    "malformed": (
        "answer item without the expected keys",
        "answer items without the expected keys",
    ),
    "judge_disagrees": (
        "pair the language model proposed but the judge does not read as contradicting",
        "pairs the language model proposed but the judge does not read as contradicting",
    ),
}


def dropped_phrase(reason: str, n: int) -> str:
    """``1 quote not found in its note``, ``5 quotes not found in their note``."""
    one, several = DROP_REASONS.get(reason, (reason, reason))
    return f"{n} {one if n == 1 else several}"


_CONFIDENCE_ORDER = {"high": 0, "medium": 1, "low": 2}


class ScanError(AntinomyError):
    """The scan cannot start (bad focus note, too few notes, no embeddings)."""


@dataclass(frozen=True)
class ScanSettings:
    """What a scan looks at. The GUI's settings object carries one of these."""

    #: Note types that take part in classic mode (open ones only).
    types: tuple[str, ...] = ("tension", "substrate")
    #: Classic mode: newest notes by mtime, at most this many.
    cap: int = 20
    #: Each body is trimmed to this many characters (after the frontmatter).
    body_chars: int = 800
    #: Focus mode: this many nearest neighbours join the focus note.
    neighbours: int = 6
    #: Whole vault: each note proposes its nearest neighbours with a cosine in
    #: [band_low, band_high]: below, the notes are about different things;
    #: above, they are near-copies (or one quotes the other).
    band_low: float = 0.30
    band_high: float = 0.97
    #: Whole vault: neighbours asked of each note, and the pair budget of a run.
    pairs_per_note: int = 4
    max_pairs: int = 400
    #: Whole vault: notes per prompt. Two = one pair whose orientation the schema
    #: fixes, so the model cannot pair a note with itself (with three, 5 of its 20
    #: proposals on the sample vault did); pairs/s measured 1.08× of three.
    batch_notes: int = 2
    #: Whole vault: types never scanned (derived or retired notes).
    skip_types: tuple[str, ...] = ("defeated", "debug", "meta_note", "source")
    #: Largest answer asked of the model, in tokens.
    max_answer_tokens: int = 640
    #: Most pairs one answer may hold (keeps a small model from looping).
    max_pairs_per_answer: int = 6
    #: Constrain generation by the answer's JSON schema (embedded backend).
    constrain: bool = True
    #: Judged scans: sentence pairs per note pair sent to the judge (best cosine first),
    #: and sentences per note considered (longer notes are cut, and the cut reported).
    sentence_pairs: int = 8
    max_sentences: int = 60
    #: Shown pairs whose one-line description the language model writes (the others
    #: get a plain one); each costs one short request.
    describe: int = 8
    #: Ask the user's own language-model server (backend http) whether each pair about to
    #: be shown contradicts, both orders: one more input of the decision. Off by default.
    second_opinion: bool = False
    #: Classic mode also asks the language model for pairs (re-checked by the judge).
    ask_model: bool = True


@dataclass(frozen=True)
class Pair:
    """A verified pair: both notes exist, both quotes occur in them."""

    path_a: str
    path_b: str
    note_a: str
    note_b: str
    quote_a: str
    quote_b: str
    description: str
    confidence: Confidence = "medium"
    #: The model gave no usable confidence; shown and sorted as medium.
    confidence_defaulted: bool = False
    #: sha256 of each file as the scan read it: review actions refuse if it changed.
    sha_a: str = ""
    sha_b: str = ""
    #: The judge's P(contradiction) for the two quotes (None: not judged).
    probability: float | None = None
    #: Who found the pair: "judge", "model" (re-checked by the judge), or both.
    found_by: str = "model"
    #: The description is the model's ("model") or built from the quotes ("plain").
    described_by: str = "model"
    #: The note-level features the decision read (``desktop.flows.judging.FEATURES``): kept
    #: so that a review decision on the pair becomes a label with them. Empty: not judged
    #: at note level (a classic scan's model pair).
    features: dict[str, float] = field(default_factory=dict, compare=False)
    #: Why the pair is not shown although it passed ("" for a shown pair): what the user's
    #: decisions taught this vault (:data:`HIDDEN_REASONS`).
    hidden_because: str = ""
    #: What the user's server said when asked (``ScanSettings.second_opinion``): yes, no
    #: (both orders), split, unusable, failed; "" when it was not asked.
    second_opinion: str = ""

    def key(self) -> frozenset[str]:
        return frozenset((self.path_a, self.path_b))


#: Why a pair that passed is hidden, by the key in ``Pair.hidden_because``.
HIDDEN_REASONS = {
    "calibration": "this vault's calibration, learned from your decisions, does not show it "
    "(the shipped one would)",
    "like": "its two sentences are like a pair you dismissed with “all like this”",
    "second_opinion": "your language-model server answered that the two sentences do not "
    "contradict, both ways round, and that outweighed the judge",
}


@dataclass(frozen=True)
class SecondOpinionReport:
    """What the user's own server said (``ScanRun.second_opinion``; all 0 when not asked)."""

    #: Pairs asked, requests made (two a pair: both orders), and the verdicts.
    asked: int = 0
    requests: int = 0
    yes: int = 0
    no: int = 0
    split: int = 0
    unusable: int = 0
    failed: int = 0
    #: Pairs its "no" hid, and the seconds its requests took.
    hidden: int = 0
    seconds: float = 0.0
    server: str = ""
    #: The server is not on this machine: the quotes were sent over the network.
    leaves_machine: bool = False
    #: The weight of its vote in the note-level decision (log-odds).
    weight: float = 0.0
    #: Why it was not asked, or what went wrong ("" if nothing).
    error: str = ""


@dataclass(frozen=True)
class LearningReport:
    """What the user's decisions changed in one scan (``ScanRun.learning``)."""

    #: Decisions kept for this vault (since the last reset), and those the calibration
    #: read (with features from this judge); the rest wait for a scan to judge their pair.
    decisions: int = 0
    used: int = 0
    waiting: int = 0
    positives: int = 0
    #: Labelled pairs judged by this scan only to learn their features.
    judged_again: int = 0
    #: shipped (nothing learned yet), too few, vault, held, refused — see
    #: :mod:`desktop.flows.hunter.calibrate`; and why, in words.
    calibration: str = "shipped"
    reason: str = ""
    #: The shown threshold: shipped, and this vault's (None: no note-level model decided).
    threshold_shipped: float | None = None
    threshold_vault: float | None = None
    #: Decisions needed before the vault's calibration is fitted.
    min_decisions: int = 0
    #: Pairs hidden by the vault's calibration / by a hidden frame (the vault's calibration
    #: only ever hides: it never shows a pair the shipped one would not).
    hidden_by_calibration: int = 0
    hidden_like: int = 0
    #: Sentence frames hidden for this vault.
    frames: int = 0
    #: The one line the CLI and the results view show ("" when there is nothing to say).
    message: str = ""
    #: What went wrong reading or writing what was learned ("" if nothing): the scan then
    #: decides as shipped and says so.
    error: str = ""

    @property
    def hidden(self) -> int:
        return self.hidden_by_calibration + self.hidden_like


@dataclass(frozen=True)
class IgnoredReport:
    """What one scan left out because the user asked it to (``ScanRun.ignored``)."""

    #: Ignored sentences found in the notes compared (each counted once), and the
    #: occurrences taken out.
    sentences: int = 0
    occurrences: int = 0
    #: Ignored notes that would have been compared, ignored folders that held such notes,
    #: and the notes those folders kept out.
    notes: int = 0
    folders: int = 0
    notes_in_folders: int = 0
    #: The line the CLI and the window show ("" when nothing was left out).
    message: str = ""
    #: Why the list could not be read ("" if it could): nothing was left out then.
    error: str = ""


@dataclass(frozen=True)
class Excluded:
    """A note the scan did not send to the model, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class Attempt:
    """One request to the model (for the debug note and the timing split)."""

    prompt_chars: int
    tokens_in: int
    tokens_out: int
    duration: float
    answer: str
    retry: bool = False
    #: Seconds before the first generated token (prompt processing).
    prompt_seconds: float = 0.0


@dataclass(frozen=True)
class ScanRun:
    started_at: str
    mode: Mode
    status: Status
    focus: str | None = None
    model: str = ""
    backend: str = ""
    duration: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    #: Notes sent to the model / notes that could have been.
    notes_examined: int = 0
    candidates: int = 0
    #: Whole vault: candidate pairs judged (classic/focus: pairs the prompt allowed).
    pairs_considered: int = 0
    batches: int = 0
    failed_batches: int = 0
    excluded: tuple[Excluded, ...] = ()
    pairs: tuple[Pair, ...] = ()
    dropped: dict[str, int] = field(default_factory=dict)
    #: Both raw answers of a format failure (and of failed whole-vault batches).
    raw_answers: tuple[str, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    error: str | None = None
    #: The judge that decided the pairs, and what it looked at.
    judge: str = ""
    threshold: float | None = None
    note_pairs_judged: int = 0
    sentence_pairs_judged: int = 0
    #: Candidate sentence pairs that shared a subject but were beyond the per-pair budget.
    sentence_pairs_left_out: int = 0
    sentences: int = 0
    judge_seconds: float = 0.0
    #: Shown pairs whose description the model could not write (plain one shown).
    description_failures: int = 0
    #: The model that was not asked for descriptions (its manifest entry says it fails at
    #: them): every description is the plain one. "" when the model was asked.
    plain_descriptions_for: str = ""
    #: Very long notes of which only the first ``max_sentences`` sentences were compared.
    notes_cut: tuple[str, ...] = ()
    #: Lines not read as claims, by reason (code, placeholder, boilerplate…), and sentence
    #: pairs set aside before the judge, by reason (each about its own subject, values
    #: agree…): what the scan left out and why.
    not_evidence: dict[str, int] = field(default_factory=dict)
    set_aside: dict[str, int] = field(default_factory=dict)
    #: What decided the shown pairs: the note-level model's id, or "" for the judge's
    #: threshold on the strongest sentence pair.
    decided_by: str = ""
    #: The judge's model id (its sha256 prefix): the features of ``pairs`` are its scores.
    judge_id: str = ""
    #: Pairs that passed but are hidden by what the user's decisions taught this vault, each
    #: with its reason (``Pair.hidden_because``): one command away (``scan --show-hidden``).
    hidden: tuple[Pair, ...] = ()
    learning: LearningReport = field(default_factory=LearningReport)
    second_opinion: SecondOpinionReport = field(default_factory=SecondOpinionReport)
    #: What the user asked the scan to ignore and it left out (``.antinomy/ignored.json``).
    ignored: IgnoredReport = field(default_factory=IgnoredReport)

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())

    def summary(self) -> str:
        """One metadata line, as the results view and the CLI show it."""
        parts = [
            f"{self.started_at[:19].replace('T', ' ')}",
            f"{self.mode}",
            f"{self.notes_examined}/{self.candidates} notes",
        ]
        if self.mode == "focus" and self.focus:
            name = self.focus.rsplit("/", 1)[-1].removesuffix(".md")
            # Each judged pair of a focus scan is the focus note and one neighbour.
            n = self.note_pairs_judged
            parts.append(f"focus “{name}”, {n} {'neighbour' if n == 1 else 'neighbours'} judged")
        elif self.note_pairs_judged:
            noun = "pair" if self.note_pairs_judged == 1 else "pairs"
            parts.append(f"{self.note_pairs_judged} note {noun} judged")
        elif self.mode == "whole-vault":
            parts.append(f"{plural(self.pairs_considered, 'pair')} considered")
        parts += [
            f"{self.model or 'model?'} ({self.backend or 'backend?'})",
            f"{self.duration:.1f} s",
            f"{self.tokens_in} tokens in / {self.tokens_out} out",
        ]
        return " · ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScanRun:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["excluded"] = tuple(Excluded(**e) for e in data.get("excluded", ()))
        values["pairs"] = tuple(Pair(**p) for p in data.get("pairs", ()))
        values["hidden"] = tuple(Pair(**p) for p in data.get("hidden", ()))
        reports = (
            ("learning", LearningReport),
            ("second_opinion", SecondOpinionReport),
            ("ignored", IgnoredReport),
        )
        for name, kind in reports:
            report = values.pop(name, None)
            if isinstance(report, dict):
                known_report = {f.name for f in fields(kind)}
                values[name] = kind(**{k: v for k, v in report.items() if k in known_report})
        values["attempts"] = tuple(Attempt(**a) for a in data.get("attempts", ()))
        values["raw_answers"] = tuple(data.get("raw_answers", ()))
        values["dropped"] = dict(data.get("dropped", {}))
        values["notes_cut"] = tuple(data.get("notes_cut", ()))
        values["not_evidence"] = dict(data.get("not_evidence", {}))
        values["set_aside"] = dict(data.get("set_aside", {}))
        return cls(**values)


def sort_pairs(pairs: list[Pair]) -> tuple[Pair, ...]:
    """By confidence (unknown counts as medium), then the judge's probability, then names."""
    return tuple(
        sorted(
            pairs,
            key=lambda p: (
                _CONFIDENCE_ORDER.get(p.confidence, 1),
                -(p.probability or 0.0),
                p.note_a.casefold(),
                p.note_b.casefold(),
            ),
        )
    )


LAST_RUN_FILE = "last-scan.json"


def save_last_run(root: Path, run: ScanRun) -> Path:
    """Keep ``run`` in ``.antinomy/`` so the app shows it after a restart."""
    folder = state_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / LAST_RUN_FILE
    return atomic.write_json(target, run.to_json(), indent=1, newline=False)


def load_last_run(root: Path) -> ScanRun | None:
    """The last completed scan of this vault, or None (also when the file is unreadable)."""
    target = state_dir(root) / LAST_RUN_FILE
    try:
        return ScanRun.from_json(json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        return None
