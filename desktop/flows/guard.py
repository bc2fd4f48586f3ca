"""The action-time contradiction guard (SPEC §8): is a pending tool call against a decision?

Qt-free and HTTP-free: the endpoint embeds the hook's summary and calls
:meth:`Guard.decide`; tests call it directly.

* **Standing decisions** are notes of type/kind ``decision`` that are not
  superseded (``status`` superseded/deprecated/rejected/retired, or a
  ``superseded_by`` key), and, if the vault's settings say so, principles.
* **What is compared.** Each decision is embedded as its title plus its
  ``## Decision`` section (a principle: title plus its IF/THEN clauses) — the
  statement an action can go against — not the whole note, whose context and
  consequences dilute it. The summary of the change is compared with these by
  cosine; vectors are cached in ``.antinomy/guard/vectors.npz`` by text hash.
* **The judge decides.** Cosine only says "about the same thing". The
  decisions nearest the change (cosine at least :data:`SUBJECT_FLOOR`) are cut
  into sentences; the best few (change, decision sentence) pairs by cosine go to
  the contradiction judge, and the guard warns only when the judge reads one as
  a contradiction (P at least the judge's calibrated ``guard`` threshold, or the
  vault's ``judge_threshold``). Without a judge it falls back to cosine alone at
  :data:`DEFAULT_THRESHOLD`; see there for how that was chosen.
* **Once per session.** A decision warns at most once per agent session:
  markers in ``.antinomy/guard/sessions/``, pruned after 7 days.
* **Where it is on.** Off by default. ``.antinomy/guard/settings.json`` turns it
  on for the vault; a project entry in ``<config dir>/guard-projects.json``
  (matched by the hook's ``cwd``) turns it on or off for one project folder and
  may set its mode.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from desktop.flows.sentences import is_evidence, split_sentences
from desktop.vault.index import VaultIndex
from desktop.vault.layout import state_dir
from desktop.vault.notes import Note
from inference import atomic
from inference.errors import AntinomyError
from inference.judge import CONTRADICTION, Judge
from inference.paths import config_dir

log = logging.getLogger(__name__)

Mode = Literal["warn", "ask"]
EmbedFn = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: Cosine a change needs with a decision's statement to warn.
#:
#: Calibrated with tests/perf/calibrate_guard.py: 56 realistic tool calls
#: (Bash commands with the agent's description, file writes and edits) against
#: the sample vault's 7 standing decisions, with the shipped all-MiniLM-L6-v2.
#: Calls that go against a decision scored 0.16–0.68 with it (median 0.41);
#: calls on the same subject that respect it 0.01–0.70 (median 0.31) — cosine
#: measures "about the same thing", not "against it", so the two overlap;
#: unrelated calls scored at most 0.50 with any decision (median 0.09).
#: MiniLM's cosines run far below the 0.82 the Commonwealth guard used with
#: its embedder: at 0.82 nothing here ever warns. 0.55 is the worst unrelated
#: call plus a 0.05 margin: it warns on 3 of 19 contradicting calls, 1 of 18
#: related ones and none of the 18 unrelated (0.50 would warn on 6 / 2 / 0, with
#: no margin at all). Precision over recall: a guard that cries wolf is
#: switched off. Users who want more can lower it per vault.
DEFAULT_THRESHOLD = 0.55
#: With the judge: decisions this close (cosine) to the change are judged.
SUBJECT_FLOOR = 0.2
#: With the judge: at most this many decisions, and sentence pairs, are judged per check
#: (each pair costs ~5 ms of int8 judge on one core).
JUDGED_DECISIONS = 3
JUDGED_PAIRS = 3
MARKER_MAX_AGE = 7 * 24 * 3600
SUMMARY_MAX_BYTES = 2048
SUMMARY_MIN_CHARS = 12
NOT_STANDING = frozenset(
    {"superseded", "deprecated", "rejected", "retired", "withdrawn", "obsolete"}
)
SETTINGS_FILE = "settings.json"
PROJECTS_FILE = "guard-projects.json"

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
_SPACE = re.compile(r"\s+")


class GuardError(AntinomyError):
    """Bad guard settings (a threshold out of range, an unknown mode)."""


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class GuardSettings:
    """A vault's guard settings, in ``<vault>/.antinomy/guard/settings.json``."""

    enabled: bool = False
    mode: Mode = "warn"
    threshold: float = DEFAULT_THRESHOLD
    include_principles: bool = False
    #: P(contradiction) the judge must give to warn; None: the judge's calibrated value.
    judge_threshold: float | None = None

    def validated(self) -> GuardSettings:
        if self.mode not in ("warn", "ask"):
            raise GuardError(f"Guard mode {self.mode!r} is unknown: use 'warn' or 'ask'.")
        if not 0.0 < self.threshold <= 1.0:
            raise GuardError(
                f"Guard threshold {self.threshold} is out of range: give a cosine in (0, 1], "
                f"e.g. the default {DEFAULT_THRESHOLD}."
            )
        if self.judge_threshold is not None and not 0.0 < self.judge_threshold < 1.0:
            raise GuardError(
                f"Guard judge_threshold {self.judge_threshold} is out of range: give a "
                "probability in (0, 1), or remove it to use the judge's calibrated value."
            )
        return self


def settings_path(root: Path) -> Path:
    return state_dir(root, "guard") / SETTINGS_FILE


def load_settings(root: Path) -> GuardSettings:
    try:
        data = json.loads(settings_path(root).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return GuardSettings()
    except (OSError, ValueError) as exc:
        raise GuardError(
            f"{settings_path(root)} cannot be read ({exc}) — fix it or run "
            "`antinomy guard enable` again."
        ) from exc
    known = {k: data[k] for k in GuardSettings.__dataclass_fields__ if k in data}
    return GuardSettings(**known).validated()


def save_settings(root: Path, settings: GuardSettings) -> None:
    _write_json(settings_path(root), asdict(settings.validated()))


@dataclass(frozen=True)
class ProjectSetting:
    path: str
    enabled: bool
    mode: Mode | None = None


def projects_path() -> Path:
    return config_dir() / PROJECTS_FILE


def load_projects() -> dict[str, ProjectSetting]:
    try:
        data = json.loads(projects_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise GuardError(f"{projects_path()} cannot be read ({exc}) — fix or delete it.") from exc
    out: dict[str, ProjectSetting] = {}
    for path, entry in (data.get("projects") or {}).items():
        mode = entry.get("mode")
        out[path] = ProjectSetting(
            path, bool(entry.get("enabled")), mode if mode in ("warn", "ask") else None
        )
    return out


def set_project(path: Path, *, enabled: bool | None, mode: Mode | None = None) -> None:
    """Turn the guard on/off for one project folder; ``enabled=None`` forgets the folder."""
    projects = load_projects()
    key = str(path.expanduser().resolve())
    if enabled is None:
        projects.pop(key, None)
    else:
        projects[key] = ProjectSetting(key, enabled, mode)
    payload = {
        "projects": {
            k: {"enabled": p.enabled, **({"mode": p.mode} if p.mode else {})}
            for k, p in sorted(projects.items())
        }
    }
    _write_json(projects_path(), payload)


def project_for(cwd: str, projects: dict[str, ProjectSetting]) -> ProjectSetting | None:
    """The most specific project folder containing ``cwd``, if any."""
    if not cwd or not projects:
        return None
    here = Path(cwd)
    best: ProjectSetting | None = None
    for key, setting in projects.items():
        inside = here == Path(key) or Path(key) in here.parents
        if inside and (best is None or len(key) > len(best.path)):
            best = setting
    return best


def _write_json(path: Path, data: Any) -> None:
    atomic.write_json(path, data)


# ---------------------------------------------------------------- decisions


@dataclass(frozen=True)
class StandingDecision:
    path: str
    #: ``id`` from the frontmatter (``ADR-0011``), else the file's basename.
    id: str
    title: str
    kind: str
    #: What is embedded: the title and the statement.
    text: str = field(repr=False)


def is_standing(note: Note) -> bool:
    status = (note.status or "").strip().lower()
    return status not in NOT_STANDING and not note.frontmatter.get("superseded_by")


def _section(body: str, names: tuple[str, ...]) -> str:
    """The text under the first heading named one of ``names`` (case-insensitive)."""
    headings = list(_HEADING.finditer(body))
    for i, h in enumerate(headings):
        if h.group(2).strip().lower() in names:
            end = len(body)
            for later in headings[i + 1 :]:
                if len(later.group(1)) <= len(h.group(1)):
                    end = later.start()
                    break
            return body[h.end() : end].strip()
    return ""


def _first_paragraph(body: str) -> str:
    for block in re.split(r"\n\s*\n", body):
        text = block.strip()
        if text and not text.startswith("#"):
            return text
    return ""


def decision_text(note: Note) -> str:
    """The statement an action can go against: title + Decision section (or IF/THEN)."""
    fm = note.frontmatter
    if (note.type or "").lower() == "principle" and (fm.get("if_clause") or fm.get("then_clause")):
        statement = f"If {fm.get('if_clause', '')}, then {fm.get('then_clause', '')}."
    else:
        statement = _section(note.body, ("decision", "decision outcome", "the decision"))
        statement = statement or _first_paragraph(note.body)
    text = f"{note.title}. {_SPACE.sub(' ', statement)}".strip()
    return text[:1500]


def _kinds(include_principles: bool) -> list[str]:
    kinds = ["decision", "Decision", "adr", "ADR"]
    if include_principles:
        kinds += ["principle", "Principle"]
    return kinds


def decision_fingerprint(index: VaultIndex, *, include_principles: bool) -> tuple[Any, ...]:
    """Changes whenever a decision (or principle) note changes: one query, no note read."""
    summaries = index.notes(types=_kinds(include_principles))
    return (include_principles, *((s.path, s.sha256) for s in summaries))


def standing_decisions(index: VaultIndex, *, include_principles: bool) -> list[StandingDecision]:
    out: list[StandingDecision] = []
    for summary in index.notes(types=_kinds(include_principles)):
        note = index.note(summary.path)
        if note is None or not is_standing(note):
            continue
        ident = note.frontmatter.get("id")
        out.append(
            StandingDecision(
                path=note.path,
                id=str(ident) if ident else note.basename,
                title=note.title,
                kind=(note.type or "decision").lower(),
                text=decision_text(note),
            )
        )
    return out


class VectorCache:
    """Decision-text vectors by text hash, kept in ``.antinomy/guard/vectors.npz``."""

    def __init__(self, root: Path, model_id: str) -> None:
        self.path = state_dir(root, "guard") / "vectors.npz"
        self.model_id = model_id
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if str(data["model"]) == model_id:
                    for key, vec in zip(data["keys"], data["vectors"], strict=True):
                        self._vectors[str(key)] = vec.astype(np.float32)
        except (OSError, KeyError, ValueError):
            pass  # no cache yet, or another model's: recompute

    def vectors(
        self, texts: Sequence[str], embed: EmbedFn, *, chunk: int = 16
    ) -> npt.NDArray[np.float32]:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest()[:32] for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._vectors]
        # Small chunks: a hook's check waits behind at most one of them on the embedder.
        for start in range(0, len(missing), chunk):
            part = missing[start : start + chunk]
            for i, vec in zip(part, embed([texts[i] for i in part]), strict=True):
                self._vectors[keys[i]] = np.asarray(vec, dtype=np.float32)
        if missing:
            self._save(set(keys))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])

    def _save(self, keep: set[str]) -> None:
        self._vectors = {k: v for k, v in self._vectors.items() if k in keep}
        keys = sorted(self._vectors)
        with atomic.replacing(self.path, durable=False) as out:  # a cache: rebuilt if lost
            np.savez(
                out,
                model=np.array(self.model_id),
                keys=np.array(keys),
                vectors=np.stack([self._vectors[k] for k in keys]),
            )


@dataclass(frozen=True)
class DecisionSet:
    """An immutable snapshot: the standing decisions and their vectors, row for row."""

    decisions: tuple[StandingDecision, ...] = ()
    matrix: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), dtype=np.float32), repr=False
    )
    signature: tuple[tuple[str, str], ...] = ()
    #: The decisions' statements cut into sentences: (decision row, text), and their vectors.
    sentences: tuple[tuple[int, str], ...] = ()
    sentence_matrix: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), dtype=np.float32), repr=False
    )

    def scores(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine with every decision (rows and vector are unit length).

        ``einsum``, not ``@``: ``@`` hands a matrix-vector product to OpenBLAS, which
        spreads it over its threads; on a busy machine waking them costs more than the
        product. Measured here with 10k decisions under load: ``@`` p50 16 ms, ``einsum``
        (one thread, SIMD) 1.7 ms, same numbers to 1e-6.
        """
        if not self.decisions:
            return np.zeros(0, dtype=np.float32)
        scores: npt.NDArray[np.float32] = np.einsum(
            "ij,j->i", self.matrix, np.asarray(vector, dtype=np.float32)
        )
        return scores


# ---------------------------------------------------------------- session markers


class SessionMarkers:
    """Which decisions already warned in which agent session (files, so restarts keep them)."""

    def __init__(self, root: Path) -> None:
        self.folder = state_dir(root, "guard", "sessions")
        self._lock = threading.Lock()
        self._pruned_at = 0.0

    def _file(self, session_id: str) -> Path:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def warned(self, session_id: str) -> set[str]:
        try:
            data = json.loads(self._file(session_id).read_text(encoding="utf-8"))
            return set(data.get("warned", []))
        except (OSError, ValueError):
            return set()

    def mark(self, session_id: str, path: str) -> None:
        with self._lock:
            warned = self.warned(session_id) | {path}
            _write_json(self._file(session_id), {"session": session_id, "warned": sorted(warned)})
            if time.time() - self._pruned_at > 3600:
                self.prune()

    def prune(self, max_age: float = MARKER_MAX_AGE) -> int:
        """Delete markers untouched for ``max_age`` seconds; returns how many."""
        self._pruned_at = time.time()
        cutoff = time.time() - max_age
        removed = 0
        for marker in self.folder.glob("*.json"):
            try:
                if marker.stat().st_mtime < cutoff:
                    marker.unlink()
                    removed += 1
            except OSError:
                continue
        return removed


# ---------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class GuardVerdict:
    #: "warn" | "ask" | "allow" | "repeat" | "off" | "skip"
    verdict: str
    decision: StandingDecision | None = None
    score: float | None = None
    #: The hook's stdout JSON, when the agent should be told something.
    output: dict[str, Any] | None = None


def warning_text(decision: StandingDecision, score: float, *, judged: bool = False) -> str:
    measure = f"contradiction {score:.2f}" if judged else f"similarity {score:.2f}"
    return (
        f"⚠ This change may contradict decision {decision.id}: {decision.title} "
        f"(vault note {decision.path}; {measure}). Read the decision before going "
        "ahead. If it no longer holds, say so to the user rather than working around it."
    )


def hook_output(
    decision: StandingDecision, score: float, mode: Mode, *, judged: bool = False
) -> dict[str, Any]:
    text = warning_text(decision, score, judged=judged)
    if mode == "ask":
        inner = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": text,
        }
    else:
        inner = {"hookEventName": "PreToolUse", "additionalContext": text}
    return {"hookSpecificOutput": inner}


def bound_summary(summary: str) -> str:
    data = summary.encode("utf-8")
    if len(data) > SUMMARY_MAX_BYTES:
        summary = data[:SUMMARY_MAX_BYTES].decode("utf-8", errors="ignore")
    return summary


# ---------------------------------------------------------------- the guard


@dataclass(frozen=True)
class Activation:
    """Whether the guard checks a call from ``cwd``, and how it answers."""

    active: bool
    mode: Mode
    threshold: float


class GuardSwitch:
    """Where the guard is on, and how it answers: the vault's settings and the project
    entries, re-read when their files change. Cheap (two stats); any thread."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._settings_cache: tuple[int, GuardSettings] | None = None
        self._projects_cache: tuple[int, dict[str, ProjectSetting]] | None = None

    def settings(self) -> GuardSettings:
        path = settings_path(self.root)
        try:
            mtime = path.stat().st_mtime_ns
        except FileNotFoundError:
            return GuardSettings()
        cached = self._settings_cache
        if cached is None or cached[0] != mtime:
            cached = (mtime, load_settings(self.root))
            self._settings_cache = cached
        return cached[1]

    def _projects(self) -> dict[str, ProjectSetting]:
        try:
            mtime = projects_path().stat().st_mtime_ns
        except FileNotFoundError:
            return {}
        cached = self._projects_cache
        if cached is None or cached[0] != mtime:
            cached = (mtime, load_projects())
            self._projects_cache = cached
        return cached[1]

    def activation(self, cwd: str, mode: str | None = None) -> Activation:
        """Is the guard on for a call from ``cwd``, in which mode, at which threshold?"""
        settings = self.settings()
        active = settings.enabled
        chosen: Mode = settings.mode
        project = project_for(cwd, self._projects())
        if project is not None:
            active = project.enabled
            chosen = project.mode or chosen
        if mode == "warn":  # the hook command's --mode wins (set by `hooks install --mode`)
            chosen = "warn"
        elif mode == "ask":
            chosen = "ask"
        return Activation(active, chosen, settings.threshold)


class Guard:
    """One vault's guard. ``decide`` and ``activation`` are safe from any thread;
    ``refresh`` embeds (blocking) and should run on a worker thread."""

    def __init__(
        self,
        root: Path,
        *,
        index: VaultIndex,
        embed: EmbedFn,
        model_id: str,
        switch: GuardSwitch | None = None,
    ) -> None:
        self.root = root
        self.index = index
        self._embed = embed
        self._cache = VectorCache(root, model_id)
        self.markers = SessionMarkers(root)
        self.switch = switch or GuardSwitch(root)
        self._snapshot = DecisionSet()
        self._refresh_lock = threading.Lock()
        self._fingerprint: tuple[Any, ...] | None = None

    @property
    def decisions(self) -> DecisionSet:
        return self._snapshot

    def activation(self, cwd: str, mode: str | None = None) -> Activation:
        return self.switch.activation(cwd, mode)

    def refresh(self) -> DecisionSet:
        """Re-read the standing decisions from the index; embed new or changed ones."""
        with self._refresh_lock:
            principles = self.switch.settings().include_principles
            # Cheap when nothing changed (the usual case): one query, no note parsed. It
            # runs every few seconds beside the checks, which it must not slow down.
            fingerprint = decision_fingerprint(self.index, include_principles=principles)
            if fingerprint == self._fingerprint:
                return self._snapshot
            decisions = standing_decisions(self.index, include_principles=principles)
            signature = tuple((d.path, d.text) for d in decisions)
            if signature != self._snapshot.signature:
                sentences = tuple(
                    (row, s.text)
                    for row, d in enumerate(decisions)
                    for s in split_sentences(d.text)
                    if is_evidence(s)
                )
                # One call: the cache keeps only the texts of its last call.
                texts = [d.text for d in decisions] + [t for _, t in sentences]
                both = self._cache.vectors(texts, self._embed)
                matrix, sentence_matrix = both[: len(decisions)], both[len(decisions) :]
                self._snapshot = DecisionSet(
                    tuple(decisions), matrix, signature, sentences, sentence_matrix
                )
                log.info("guard: %d standing decisions", len(decisions))
            self._fingerprint = fingerprint
            return self._snapshot

    def decide(
        self,
        *,
        vector: npt.NDArray[np.float32],
        session_id: str,
        activation: Activation,
        summary: str = "",
        judge: Judge | None = None,
    ) -> GuardVerdict:
        """The verdict for a change whose summary embeds to ``vector``.

        With a ``judge`` (and the ``summary`` text) it decides; without one, cosine
        alone does. Blocking when judging (a few ms): call it off the event loop."""
        snapshot = self._snapshot
        scores = snapshot.scores(vector)
        if scores.size == 0:
            return GuardVerdict("allow")
        if judge is not None and summary:
            return self._judged(snapshot, scores, vector, summary, session_id, activation, judge)
        best = int(np.argmax(scores))
        top = snapshot.decisions[best]
        top_score = float(scores[best])
        if top_score < activation.threshold:
            return GuardVerdict("allow", top, top_score)
        hits = np.flatnonzero(scores >= activation.threshold)  # few: sort only these
        warned = self.markers.warned(session_id) if session_id else set()
        for i in hits[np.argsort(-scores[hits])]:
            score = float(scores[i])
            decision = snapshot.decisions[int(i)]
            if decision.path in warned:
                continue
            if session_id:
                self.markers.mark(session_id, decision.path)
            return GuardVerdict(
                activation.mode, decision, score, hook_output(decision, score, activation.mode)
            )
        return GuardVerdict("repeat", top, top_score)

    def _judged(
        self,
        snapshot: DecisionSet,
        scores: npt.NDArray[np.float32],
        vector: npt.NDArray[np.float32],
        summary: str,
        session_id: str,
        activation: Activation,
        judge: Judge,
    ) -> GuardVerdict:
        near = np.flatnonzero(scores >= SUBJECT_FLOOR)
        if near.size == 0:
            best = int(np.argmax(scores))
            return GuardVerdict("allow", snapshot.decisions[best], 0.0)
        near = near[np.argsort(-scores[near])][:JUDGED_DECISIONS]
        rows = set(int(i) for i in near)
        candidates = [k for k, (row, _) in enumerate(snapshot.sentences) if row in rows]
        if candidates:
            sims = np.einsum(
                "ij,j->i",
                snapshot.sentence_matrix[candidates],
                np.asarray(vector, dtype=np.float32),
            )
            order = np.argsort(-sims)[:JUDGED_PAIRS]
            picked = [candidates[int(i)] for i in order]
        else:
            picked = []
        pairs = [(summary, snapshot.sentences[k][1]) for k in picked]
        owners = [snapshot.sentences[k][0] for k in picked]
        if not pairs:  # the near decisions have no sentence with content: judge the statement
            pairs = [(summary, snapshot.decisions[int(near[0])].text)]
            owners = [int(near[0])]
        probs = judge.score(pairs)[:, CONTRADICTION]
        threshold = self.switch.settings().judge_threshold or judge.thresholds.guard
        best_by_row: dict[int, float] = {}
        for row, p in zip(owners, probs, strict=True):
            best_by_row[row] = max(float(p), best_by_row.get(row, 0.0))
        ranked = sorted(best_by_row.items(), key=lambda kv: -kv[1])
        top_row, top_p = ranked[0]
        if top_p < threshold:
            return GuardVerdict("allow", snapshot.decisions[top_row], top_p)
        warned = self.markers.warned(session_id) if session_id else set()
        for row, p in ranked:
            if p < threshold:
                break
            decision = snapshot.decisions[row]
            if decision.path in warned:
                continue
            if session_id:
                self.markers.mark(session_id, decision.path)
            return GuardVerdict(
                activation.mode, decision, p, hook_output(decision, p, activation.mode, judged=True)
            )
        return GuardVerdict("repeat", snapshot.decisions[top_row], top_p)
