"""Search results as the window shows them: each note with the sentence that matched, and
only notes above a relevance floor.

:func:`desktop.vault.search.search` ranks notes by words and meaning (rank fusion).
Here each hit gets the sentence of its note that matched — the first one holding the
most of the query's words, else (a note found by meaning alone) the one closest in
meaning among its first sentences — and a relevance: the best cosine between the
query and the note or that sentence. A hit under
:data:`RELEVANCE_FLOOR` is left out and counted, so the list says how many and why.

Sentence vectors come from the index's cache (the scan fills the same one), so a
vault already scanned costs no embedding here; the rest are embedded once and kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from desktop.flows.sentences import Sentence, content_words, split_sentences
from desktop.vault.index import VaultIndex
from desktop.vault.search import SearchHit, search
from desktop.vault.sentence_vectors import SentenceVectorCache

#: Below this relevance (best cosine of the query to the note or its compared sentences) a
#: hit is not shown. Measured with tests/perf/measure_search_floor.py (docs/benchmarks.md):
#: at 0.20 the sample vault's 144 labelled queries keep 99.5% of their relevant hits (0.25:
#: 94.6%) while the hits of 20 questions no note of a documentation vault answers are 87.5%
#: left out (0.25: 96.4%). Losing a relevant note costs more than showing a weak one.
RELEVANCE_FLOOR = 0.20
#: Sentences of one note looked at (long notes: the first ones, in their first characters).
MAX_SENTENCES = 80
MAX_BODY_CHARS = 12000
#: Sentences embedded for one search (those already in the cache cost nothing), and at
#: most this many of one note found by meaning alone.
SENTENCE_BUDGET = 64
PER_NOTE = 8


@dataclass(frozen=True)
class NoteMatch:
    hit: SearchHit
    #: The sentence of the note that matched, Markdown removed (None: the note has none).
    sentence: str | None
    #: Best cosine of the query to the note or one of its sentences.
    relevance: float


@dataclass(frozen=True)
class SearchResults:
    matches: tuple[NoteMatch, ...]
    #: Hits under the floor, not shown.
    left_out: int
    floor: float

    def left_out_text(self) -> str:
        """How many matches are not shown and why, in one short line (``""``: none)."""
        if not self.left_out:
            return ""
        weak = "weak match" if self.left_out == 1 else "weak matches"
        return f"{self.left_out} {weak} not shown: meaning under the {self.floor:.2f} floor."

    def left_out_why(self) -> str:
        """The same, explained (the line's tooltip)."""
        return (
            "A match is shown when the note, or its sentence that matched, is within a cosine "
            f"of {self.floor:.2f} of the search in meaning; these matched a word or came "
            "close by meaning, but not that close."
        )


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def marked(sentence: str, query: str) -> str:
    """``sentence`` with the query's words in «guillemets» (stop words never), as the
    snippets of a word match are."""
    words = content_words(query)
    if not words:
        return sentence

    def mark(m: re.Match[str]) -> str:
        word = m.group(0)
        return f"«{word}»" if _held(content_words(word), words) else word

    return _WORD.sub(mark, sentence)


def _bodies(index: VaultIndex, paths: Iterable[str]) -> dict[str, str]:
    wanted = list(paths)
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    rows = index.db.execute(f"SELECT path, body FROM notes WHERE path IN ({marks})", wanted)
    return {path: body or "" for path, body in rows.fetchall()}


def _held(sentence: frozenset[str], words: frozenset[str]) -> int:
    """How many of the query's words the sentence holds, a plural or a longer form
    counting (``release`` is held by ``releases``)."""
    return sum(
        1 for q in words if any(w == q or (len(q) >= 4 and w.startswith(q)) for w in sentence)
    )


def _candidates(sentences: list[Sentence], words: frozenset[str], budget: int) -> list[int]:
    """The rows worth embedding: the first sentence holding the most query words (a word
    match shows where its words are), else the note's first ``budget`` sentences."""
    counts = [_held(s.content, words) for s in sentences]
    most = max(counts, default=0)
    if most:
        return [counts.index(most)]
    return list(range(min(len(sentences), budget)))


def search_notes(
    index: VaultIndex,
    query: str,
    k: int = 50,
    *,
    types: Iterable[str] | None = None,
    statuses: Iterable[str] | None = None,
    floor: float | None = None,
    cache: SentenceVectorCache | None = None,
) -> SearchResults:
    """The hits of :func:`search` with their matching sentence, under-floor ones left out.

    Without an embedder (the index not yet embedded) every hit is kept, with the first
    sentence holding the query's words. Runs on a worker: it compares about
    :data:`SENTENCE_BUDGET` sentences (one per note once that is spent), embedding those the
    cache does not hold yet, so a first search stays quick."""
    floor = RELEVANCE_FLOOR if floor is None else floor
    hits = search(index, query, k, types=types, statuses=statuses)
    words = content_words(query)
    bodies = _bodies(index, (h.note.path for h in hits))
    per_note = {
        h.note.path: split_sentences(bodies.get(h.note.path, "")[:MAX_BODY_CHARS])[:MAX_SENTENCES]
        for h in hits
    }
    embedding = index.embedding
    if embedding is None or index.vectors is None or not query.strip():
        kept = []
        for hit in hits:
            rows = _candidates(per_note[hit.note.path], words, 1)
            first = per_note[hit.note.path][rows[0]].text if rows else None
            kept.append(NoteMatch(hit, first, 1.0))
        return SearchResults(tuple(kept), 0, floor)
    qvec = np.asarray(embedding.embed([query])[0], dtype=np.float32)
    qvec /= max(float(np.linalg.norm(qvec)), 1e-9)
    # Which sentences each hit compares: one per word match; a share of the budget for
    # each note found by meaning alone, best ranked first.
    chosen: dict[str, list[int]] = {}
    left = SENTENCE_BUDGET
    for hit in hits:
        rows = _candidates(per_note[hit.note.path], words, min(PER_NOTE, max(left, 1)))
        chosen[hit.note.path] = rows
        left -= len(rows)
    texts = sorted({per_note[p][i].text for p, rows in chosen.items() for i in rows})
    own = cache is None
    store = cache or SentenceVectorCache(index.root)
    try:
        found = store.vectors(
            texts, model_id=embedding.model_id, dimension=embedding.dimension, embed=embedding.embed
        )
    finally:
        if own:
            store.close()
    vectors = dict(zip(texts, found, strict=True))
    matches: list[NoteMatch] = []
    left_out = 0
    for hit in hits:
        sentences = per_note[hit.note.path]
        note_vec = index.vectors.vector(hit.note.path)
        relevance = _cosine(qvec, note_vec) if note_vec is not None else -1.0
        sentence = None
        rows = chosen[hit.note.path]
        if rows:
            cosines = [_cosine(qvec, vectors[sentences[i].text]) for i in rows]
            best = int(np.argmax(cosines))
            sentence = sentences[rows[best]].text
            relevance = max(relevance, cosines[best])
        if relevance < floor:
            left_out += 1
            continue
        matches.append(NoteMatch(hit, sentence, relevance))
    return SearchResults(tuple(matches), left_out, floor)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b) / max(float(np.linalg.norm(b)), 1e-9)
