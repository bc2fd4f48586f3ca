"""Sentence vectors cached in the index database, keyed by the sentence's text and model.

The scan embeds every sentence of the notes it compares; a vault's sentences
change little between scans, so their vectors are kept (table
``sentence_vectors``, migration 2). The vault layer knows no models: the caller
passes the embedding function and the model's id.

:class:`SentenceVectorCache` opens its own connection to the index database, so
a scan on its worker thread never shares a connection (or a transaction) with
the indexer's; SQLite's own locking orders their writes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import sqlite_utils

from desktop.vault.db import IndexDatabase
from desktop.vault.layout import state_dir

EmbedFn = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: Rows unread for this long are pruned when a scan writes new ones.
KEEP_SECONDS = 90 * 24 * 3600


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def sentence_vectors(
    db: sqlite_utils.Database,
    texts: Sequence[str],
    *,
    model_id: str,
    dimension: int,
    embed: EmbedFn,
) -> npt.NDArray[np.float32]:
    """One vector per text (rows in order): cached ones read, the others embedded and kept."""
    out = np.zeros((len(texts), dimension), dtype=np.float32)
    if not texts:
        return out
    keys = [text_key(t) for t in texts]
    found: dict[str, npt.NDArray[np.float32]] = {}
    unique = sorted(set(keys))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT text_sha, vector FROM sentence_vectors WHERE model_id = ? "
            f"AND text_sha IN ({marks})",
            [model_id, *chunk],
        ).fetchall()
        for key, blob in rows:
            vector = np.frombuffer(blob, dtype="<f4")
            if vector.shape == (dimension,):
                found[key] = vector
    missing: dict[str, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key not in found:
            missing.setdefault(key, text)
    now = time.time()
    if missing:
        new = embed(list(missing.values()))
        rows_new = []
        for (key, _), vector in zip(missing.items(), new, strict=True):
            v = np.asarray(vector, dtype="<f4")
            found[key] = v
            rows_new.append((key, model_id, v.tobytes(), now))
        with db.conn:
            db.execute("BEGIN IMMEDIATE")
            db.conn.executemany(
                "INSERT OR REPLACE INTO sentence_vectors(text_sha, model_id, vector, used) "
                "VALUES (?, ?, ?, ?)",
                rows_new,
            )
            db.execute("DELETE FROM sentence_vectors WHERE used < ?", [now - KEEP_SECONDS])
    for i, key in enumerate(keys):
        out[i] = found[key]
    return out


class SentenceVectorCache:
    """The sentence vectors of one vault; use from one thread at a time."""

    def __init__(self, root: str | Path) -> None:
        self._store = IndexDatabase(state_dir(Path(root)) / "index.db")
        self._store.db.execute("PRAGMA busy_timeout = 10000")

    def vectors(
        self, texts: Sequence[str], *, model_id: str, dimension: int, embed: EmbedFn
    ) -> npt.NDArray[np.float32]:
        return sentence_vectors(
            self._store.db, texts, model_id=model_id, dimension=dimension, embed=embed
        )

    def close(self) -> None:
        self._store.close()
