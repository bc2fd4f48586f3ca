"""Recall: the subject summaries and facts most relevant to a query, with citations.

Ranking is by the embedder (cosine of L2-normalised vectors) over two kinds of
items: each page's identity summary and each of its facts (embedded as
"<subject>: <fact>" so a fact keeps its subject's meaning). Vectors are
cached by text hash and model in ``.antinomy/memory/recall-vectors.sqlite``;
a :class:`RecallIndex` re-reads pages only when the subjects folder changed,
so a warm recall is one query embedding and one matrix product.

Thread-safety: a RecallIndex may be shared between threads (one lock).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from desktop.flows.memory.consolidate import MemorySettings
from desktop.flows.memory.errors import RecallInvalid
from desktop.flows.memory.pages import read_pages
from desktop.vault.layout import state_dir, vault_root
from inference.embedder import Embedder

MAX_QUERY_CHARS = 8192
MAX_K = 50


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
        """Re-read pages if the folder changed; returns how many items are indexed."""
        with self._lock:
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

    def recall(self, query: str, *, k: int = 5, subjects: int = 3) -> RecallResult:
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
            items, matrix = self._items, self._matrix
        if not items:
            return RecallResult(query, (), ())
        q = self.embedder.embed([query])[0]
        scores = matrix @ q
        order = np.argsort(-scores)
        subj: list[RecallHit] = []
        facts: list[RecallHit] = []
        for idx in order:
            item = items[int(idx)]
            hit = RecallHit(
                item.kind,
                item.subject,
                item.page,
                item.text,
                item.citations,
                round(float(scores[idx]), 4),
                item.date,
                item.section,
            )
            if item.kind == "summary" and len(subj) < min(subjects, k):
                subj.append(hit)
            elif item.kind == "fact" and len(facts) < k:
                facts.append(hit)
            if len(facts) >= k and len(subj) >= min(subjects, k):
                break
        return RecallResult(query, tuple(subj), tuple(facts))


_INDEXES: dict[tuple[Path, int], RecallIndex] = {}
_INDEXES_LOCK = threading.Lock()


def recall(
    vault: str | Path,
    query: str,
    *,
    embedder: Embedder,
    k: int = 5,
    settings: MemorySettings | None = None,
) -> RecallResult:
    """Recall from ``vault``; keeps one warm :class:`RecallIndex` per vault and embedder."""
    root = vault_root(vault)
    with _INDEXES_LOCK:
        index = _INDEXES.get((root, id(embedder)))
        if index is None or index.embedder is not embedder:
            index = RecallIndex(root, embedder, settings=settings)
            _INDEXES[(root, id(embedder))] = index
    return index.recall(query, k=k)
