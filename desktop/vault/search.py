"""Search that combines full text (FTS5, BM25) and meaning (cosine), by rank fusion.

Reciprocal rank fusion (Cormack et al., 2009): each list contributes
``1 / (RRF_K + rank)``. It needs no score calibration between BM25 and cosine,
and a note found by both lists rises above notes found by one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from desktop.vault.fulltext import plan_query
from desktop.vault.index import NoteSummary, VaultIndex, sql_filters
from desktop.vault.stopwords import content_words

RRF_K = 60
#: How deep each list is read before fusing.
CANDIDATES = 50
#: Below this cosine a note is not "about" the query (all-MiniLM-L6-v2: unrelated
#: sentences score about -0.1 to 0.15); it only pads the list with noise.
MIN_SIMILARITY = 0.2


@dataclass(frozen=True)
class SearchHit:
    note: NoteSummary
    score: float
    #: Rank in the full-text list and in the semantic list (None: not found there).
    text_rank: int | None
    semantic_rank: int | None
    #: Cosine similarity to the query, when the semantic list found the note.
    similarity: float | None
    #: A short excerpt with the matching terms in «guillemets», when full text matched.
    snippet: str | None


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query, without the vault's word counts: each term
    quoted (no operator injection), stop words and very short words dropped unless
    nothing else is left, OR-ed so partial matches still rank; the last term also as
    a prefix. :func:`full_text` bounds it further by the vault's word counts.

    >>> fts_query('deploy on "friday"')
    '"deploy" OR "friday"*'
    """
    return plan_query(None, text, notes=0).match


def _match(index: VaultIndex, query: str) -> str | None:
    notes = index.db.execute("SELECT count(*) FROM notes").fetchone()[0]
    return plan_query(index.db, query, notes=int(notes)).match


def full_text(
    index: VaultIndex,
    query: str,
    k: int,
    *,
    types: Iterable[str] | None = None,
    statuses: Iterable[str] | None = None,
) -> list[str]:
    """Paths best first, by BM25 (title weighted over aliases over body), over a
    bounded set of matches (desktop/vault/fulltext.py)."""
    match = _match(index, query)
    if match is None:
        return []
    clauses, params = sql_filters(types, statuses, prefix="n.")
    where = " AND ".join(["notes_fts MATCH ?", *clauses])
    rows = index.db.execute(
        "SELECT n.path FROM notes_fts JOIN notes n ON n.rowid = notes_fts.rowid "
        f"WHERE {where} ORDER BY bm25(notes_fts, 5.0, 3.0, 1.0) LIMIT ?",
        [match, *params, k],
    ).fetchall()
    return [p for (p,) in rows]


def snippets(index: VaultIndex, query: str, paths: Iterable[str]) -> dict[str, str]:
    """A short excerpt of each note's body around the query's words.

    Made only for the notes shown: a snippet costs about as much as ranking
    five notes, and the ranking reads many more than are shown.
    """
    # Highlight what the user meant, not "the" or "de"; the same bounded plan as the ranking.
    match = _match(index, " ".join(content_words(query)))
    out: dict[str, str] = {}
    if match is None:
        return out
    for path in paths:
        row = index.db.execute(
            "SELECT snippet(notes_fts, 2, '«', '»', '…', 12) FROM notes_fts "
            "WHERE notes_fts MATCH ? AND notes_fts.rowid = "
            "(SELECT rowid FROM notes WHERE path = ?)",
            [match, path],
        ).fetchone()
        if row is not None and row[0]:
            out[path] = row[0]
    return out


def search(
    index: VaultIndex,
    query: str,
    k: int = 10,
    *,
    types: Iterable[str] | None = None,
    statuses: Iterable[str] | None = None,
) -> list[SearchHit]:
    """Notes matching ``query`` by words and by meaning, best first."""
    types = list(types) if types is not None else None
    statuses = list(statuses) if statuses is not None else None
    text_hits = full_text(index, query, CANDIDATES, types=types, statuses=statuses)
    semantic: list[tuple[str, float]] = []
    if index.embedding is not None and index.vectors is not None and query.strip():
        qvec = index.embedding.embed([query])[0]
        allowed = None
        if types is not None or statuses is not None:
            ok = {n.path for n in index.notes(types=types, statuses=statuses)}
            allowed = ok.__contains__
        semantic = [
            (path, sim)
            for path, sim in index.vectors.nearest(qvec, CANDIDATES, allowed=allowed)
            if sim >= MIN_SIMILARITY
        ]
    scores: dict[str, float] = {}
    text_rank = {p: r for r, p in enumerate(text_hits, 1)}
    sem_rank = {p: r for r, (p, _) in enumerate(semantic, 1)}
    for path, rank in text_rank.items():
        scores[path] = scores.get(path, 0.0) + 1.0 / (RRF_K + rank)
    for path, rank in sem_rank.items():
        scores[path] = scores.get(path, 0.0) + 1.0 / (RRF_K + rank)
    best = sorted(scores, key=lambda p: (-scores[p], p))[:k]
    summaries = index.summaries(best)
    excerpts = snippets(index, query, (p for p in best if p in text_rank))
    similarity = dict(semantic)
    return [
        SearchHit(
            note=summaries[p],
            score=scores[p],
            text_rank=text_rank.get(p),
            semantic_rank=sem_rank.get(p),
            similarity=similarity.get(p),
            snippet=excerpts.get(p),
        )
        for p in best
        if p in summaries
    ]


def neighbours(index: VaultIndex, path: str, k: int = 10) -> list[tuple[NoteSummary, float]]:
    """The ``k`` notes most similar in meaning to the note at ``path``."""
    if index.vectors is None:
        return []
    vector = index.vectors.vector(path)
    if vector is None:
        return []
    near = index.vectors.nearest(np.asarray(vector), k, exclude=[path])
    summaries = index.summaries(p for p, _ in near)
    return [(summaries[p], s) for p, s in near if p in summaries]
