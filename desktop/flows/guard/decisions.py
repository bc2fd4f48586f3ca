"""The standing decisions a change is compared with, their statements and vectors."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from desktop.flows.guard.constants import NOT_STANDING
from desktop.vault.index import VaultIndex, sql_filters
from desktop.vault.layout import state_dir
from desktop.vault.notes import Note
from foundation import atomic

EmbedFn = Callable[[Sequence[str]], npt.NDArray[np.float32]]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
_SPACE = re.compile(r"\s+")


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
    """Changes whenever a decision (or principle) note changes: one query, no note read.

    The paths and content hashes are joined inside SQLite and only their digest comes
    back: building a row object per note cost 260–660 ms at 10k decisions on a busy
    machine, every refresh, in the endpoint's process (66 ms this way)."""
    clauses, params = sql_filters(_kinds(include_principles), None)
    count, joined = index.db.execute(
        "SELECT count(*), group_concat(path || char(31) || sha256, char(30)) FROM "
        f"(SELECT path, sha256 FROM notes WHERE {' AND '.join(clauses)} ORDER BY path)",
        params,
    ).fetchone()
    digest = hashlib.sha256((joined or "").encode("utf-8")).hexdigest()
    return (include_principles, int(count), digest)


def _standing(note: Note) -> StandingDecision | None:
    if not is_standing(note):
        return None
    ident = note.frontmatter.get("id")
    return StandingDecision(
        path=note.path,
        id=str(ident) if ident else note.basename,
        title=note.title,
        kind=(note.type or "decision").lower(),
        text=decision_text(note),
    )


def standing_decisions(
    index: VaultIndex,
    *,
    include_principles: bool,
    known: dict[str, tuple[str, StandingDecision | None]] | None = None,
) -> list[StandingDecision]:
    """The standing decisions, by path. With ``known`` (path → (content hash, what that
    content gave)), only notes whose hash changed are read again; ``known`` is updated
    in place and forgets notes that are gone."""
    out: list[StandingDecision] = []
    seen: set[str] = set()
    for summary in index.notes(types=_kinds(include_principles)):
        seen.add(summary.path)
        hit = known.get(summary.path) if known is not None else None
        if hit is not None and hit[0] == summary.sha256:
            decision = hit[1]
        else:
            note = index.note(summary.path)
            decision = None if note is None else _standing(note)
            if known is not None and note is not None:
                known[summary.path] = (summary.sha256, decision)
        if decision is not None:
            out.append(decision)
    if known is not None:
        for gone in set(known) - seen:
            del known[gone]
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
    #: Where each decision's sentences start in :attr:`sentences` (one more entry than
    #: decisions; the sentences are in decision order): a check finds a decision's
    #: sentences by slicing, not by walking all of them (10k decisions: ~30k sentences).
    sentence_starts: npt.NDArray[np.intp] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owners = np.fromiter((row for row, _ in self.sentences), dtype=np.intp)
        if owners.size > 1 and bool((np.diff(owners) < 0).any()):
            raise ValueError("a DecisionSet's sentences must be in decision order")
        starts = np.searchsorted(owners, np.arange(len(self.decisions) + 1), side="left")
        object.__setattr__(self, "sentence_starts", starts.astype(np.intp))

    def sentences_of(self, rows: Sequence[int]) -> npt.NDArray[np.intp]:
        """Indices into :attr:`sentences` of the sentences of decision ``rows``."""
        spans = [np.arange(self.sentence_starts[r], self.sentence_starts[r + 1]) for r in rows]
        return np.concatenate(spans).astype(np.intp) if spans else np.zeros(0, dtype=np.intp)

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
