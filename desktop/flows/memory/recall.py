"""Recall: the subject summaries and facts most relevant to a query, with citations.

Ranking is by the embedder (cosine of L2-normalised vectors) over two kinds of
items: each page's identity summary and each of its facts (embedded as
"<subject>: <fact>" so a fact keeps its subject's meaning). Vectors are
cached by text hash and model in ``.antinomy/memory/recall-vectors.sqlite``;
a :class:`RecallIndex` re-reads pages only when the subjects folder changed,
so a warm recall is one query embedding and one matrix product.

**Relevance floor.** Nothing scoring under :data:`RECALL_FLOOR` is returned:
an unrelated query gets an empty answer, not the least bad hits. Calibrated on
``tests/data/memory/recall_calibration.json`` (12 facts, 20 questions about
them, 15 unrelated queries; shipped MiniLM; ``tests/test_memory_recall.py``
recomputes it): the questions' own facts scored 0.41–0.80, the unrelated
queries' best hits 0.04–0.20. 0.30 is the middle of that gap (every question
kept, every unrelated query empty, at any floor from 0.21 to 0.41). Each result
says how it ranked (:attr:`RecallResult.ranking`).

Thread-safety: a RecallIndex may be shared between threads (one lock).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from desktop.flows.memory.errors import RecallInvalid
from desktop.flows.memory.pages import read_pages
from desktop.flows.memory.records import MemorySettings
from desktop.vault.layout import state_dir, vault_root
from inference.embedder import Embedder

MAX_QUERY_CHARS = 8192
#: Cosine under which a summary or fact is not relevant to the query (calibrated, above).
RECALL_FLOOR = 0.30
MAX_K = 50
FULL_CHECK_SECONDS = 2.0


@dataclass(frozen=True)
class RecallHit:
    kind: Literal["summary", "fact"]
    subject: str
    page: str
    text: str
    citations: tuple[str, ...]
    score: float
    date: str | None = None
    section: str = ""


@dataclass(frozen=True)
class RecallResult:
    query: str
    subjects: tuple[RecallHit, ...]
    facts: tuple[RecallHit, ...]
    #: How the hits were ranked, in words (model, measure, floor, what was left out).
    ranking: str = ""
    floor: float = RECALL_FLOOR
    #: Items that scored under the floor (not returned).
    below_floor: int = 0

    def as_context(self, *, max_chars: int = 1500) -> str:
        """A compact block for an assistant's context (UserPromptSubmit), within ``max_chars``."""
        if not self.subjects and not self.facts:
            return ""
        out = ["Relevant memory (from the user's Antinomy vault; cite line ids if used):"]
        for hit in self.subjects:
            out.append(f"- {hit.subject}: {hit.text}")
        for hit in self.facts:
            when = f" ({hit.date})" if hit.date else ""
            out.append(f"- [{hit.subject}] {hit.text}{when} [{', '.join(hit.citations)}]")
        text = ""
        for line in out:
            if len(text) + len(line) + 1 > max_chars:
                break
            text += line + "\n"
        return text.rstrip("\n")


@dataclass(frozen=True)
class _Item:
    kind: Literal["summary", "fact"]
    subject: str
    page: str
    text: str
    embed_text: str
    citations: tuple[str, ...]
    date: str | None
    section: str


class RecallIndex:
    def __init__(
        self, vault: str | Path, embedder: Embedder, *, settings: MemorySettings | None = None
    ) -> None:
        self.root = vault_root(vault)
        self.embedder = embedder
        self.settings = settings or MemorySettings()
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._folder_mtime = -2
        self._is_fact: npt.NDArray[np.bool_] = np.zeros(0, bool)
        self._checked_at = 0.0
        self._items: list[_Item] = []
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, embedder.dimension), np.float32)
        self._db_path = state_dir(self.root, "memory") / "recall-vectors.sqlite"
        self._model = f"{getattr(embedder, 'name', 'embedder')}/{embedder.dimension}"

    def _folder_signature(self) -> tuple[tuple[str, int, int], ...]:
        folder = self.root / self.settings.subjects_folder
        if not folder.is_dir():
            return ()
        sig = []
        for entry in sorted(folder.glob("*.md")):
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue
            sig.append((entry.name, st.st_mtime_ns, st.st_size))
        return tuple(sig)

    def refresh(self) -> int:
        """Re-read pages if the folder changed; returns how many items are indexed.

        Stat-ing every page costs ~0.1 ms each (100 ms at 1,000 pages on a busy
        machine), so the full check runs when the folder's own mtime moved (a page
        created, deleted or replaced by rename, as the transaction engine does) or
        at most every :data:`FULL_CHECK_SECONDS` (an editor writing in place).
        """
        with self._lock:
            folder = self.root / self.settings.subjects_folder
            try:
                folder_mtime = folder.stat().st_mtime_ns
            except FileNotFoundError:
                folder_mtime = -1
            now = time.monotonic()
            if (
                self._signature is not None
                and folder_mtime == self._folder_mtime
                and now - self._checked_at < FULL_CHECK_SECONDS
            ):
                return len(self._items)
            self._folder_mtime = folder_mtime
            self._checked_at = now
            sig = self._folder_signature()
            if sig == self._signature:
                return len(self._items)
            items: list[_Item] = []
            for page in read_pages(self.root, self.settings.subjects_folder):
                if page.summary:
                    items.append(
                        _Item(
                            "summary",
                            page.name,
                            page.path,
                            page.summary,
                            f"{page.name}: {page.summary}",
                            (),
                            None,
                            "",
                        )
                    )
                for fact in page.facts:
                    items.append(
                        _Item(
                            "fact",
                            page.name,
                            page.path,
                            fact.text,
                            f"{page.name}: {fact.text}",
                            fact.citations,
                            fact.date,
                            fact.section,
                        )
                    )
            self._matrix = self._vectors([i.embed_text for i in items])
            self._items = items
            self._is_fact = np.fromiter((i.kind == "fact" for i in items), bool, len(items))
            self._signature = sig
            return len(items)

    def _vectors(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.embedder.dimension), np.float32)
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        db = sqlite3.connect(self._db_path)
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS vec"
                " (key TEXT, model TEXT, v BLOB, PRIMARY KEY (key, model))"
            )
            found: dict[str, bytes] = {}
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT key, v FROM vec WHERE model = ? AND key IN ({marks})",
                    [self._model, *chunk],
                )
                found.update(dict(rows))
            missing = list(dict.fromkeys(k for k in keys if k not in found))
            if missing:
                text_of = dict(zip(keys, texts, strict=True))
                vecs = self.embedder.embed([text_of[k] for k in missing])
                rows_new = [
                    (k, self._model, vecs[i].astype(np.float32).tobytes())
                    for i, k in enumerate(missing)
                ]
                with db:
                    db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?, ?)", rows_new)
                found.update({k: v for k, _, v in rows_new})
        finally:
            db.close()
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def recall(
        self, query: str, *, k: int = 5, subjects: int = 3, floor: float = RECALL_FLOOR
    ) -> RecallResult:
        if not isinstance(query, str) or not query.strip():
            raise RecallInvalid("The recall query is empty — give a few words to look for.")
        if len(query) > MAX_QUERY_CHARS:
            raise RecallInvalid(
                f"The recall query is {len(query)} characters; at most {MAX_QUERY_CHARS}."
            )
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise RecallInvalid(f"k must be a whole number from 1 to {MAX_K}, not {k!r}.")
        self.refresh()
        with self._lock:
            items, matrix, is_fact = self._items, self._matrix, self._is_fact
        how = (
            f"cosine similarity of {self._model.split('/')[0]} embeddings between the query and "
            "each subject summary and fact (embedded as “subject: fact”)"
        )
        if not items:
            return RecallResult(query, (), (), f"{how}; memory holds no subject page yet", floor)
        q = self.embedder.embed([query])[0]
        # Not ``matrix @ q``: OpenBLAS spreads a matrix-vector product over its threads,
        # and on a busy 2-core machine that took 30 ms p50 (5,000 × 384) against
        # 0.6 ms for einsum, which stays on this thread (measured, bench_memory.py).
        scores = np.einsum("ij,j->i", matrix, q)
        below = int(np.count_nonzero(scores < floor))
        hits: dict[str, list[RecallHit]] = {"summary": [], "fact": []}
        for kind, mask, n in (("summary", ~is_fact, min(subjects, k)), ("fact", is_fact, k)):
            rows = np.flatnonzero(mask & (scores >= floor))
            if not len(rows) or n <= 0:
                continue
            part = scores[rows]
            best = np.argpartition(-part, n - 1)[:n] if n < len(rows) else np.arange(len(rows))
            for j in best[np.argsort(-part[best])]:
                item = items[int(rows[j])]
                hits[kind].append(
                    RecallHit(
                        item.kind,
                        item.subject,
                        item.page,
                        item.text,
                        item.citations,
                        round(float(part[j]), 4),
                        item.date,
                        item.section,
                    )
                )
        subj, facts = hits["summary"], hits["fact"]
        ranking = (
            f"{how}; best first; {below} of {len(items)} items under the relevance floor "
            f"{floor:.2f} left out"
        )
        return RecallResult(query, tuple(subj), tuple(facts), ranking, floor, below)


_INDEXES: dict[tuple[Path, int], RecallIndex] = {}
_INDEXES_LOCK = threading.Lock()


def recall(
    vault: str | Path,
    query: str,
    *,
    embedder: Embedder,
    k: int = 5,
    settings: MemorySettings | None = None,
    floor: float = RECALL_FLOOR,
) -> RecallResult:
    """Recall from ``vault``; keeps one warm :class:`RecallIndex` per vault and embedder."""
    root = vault_root(vault)
    with _INDEXES_LOCK:
        index = _INDEXES.get((root, id(embedder)))
        if index is None or index.embedder is not embedder:
            index = RecallIndex(root, embedder, settings=settings)
            _INDEXES[(root, id(embedder))] = index
    return index.recall(query, k=k, floor=floor)
