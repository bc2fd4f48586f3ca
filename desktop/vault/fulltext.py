"""The full-text half of search: an FTS5 query whose ranking cost stays bounded.

FTS5 ranks every note its query matches, so the cost of ``ORDER BY bm25 LIMIT k``
grows with the matches, not with ``k``: an OR of everyday words matched 9,200–9,900
of 10k synthetic notes and took 55–117 ms on a loaded 2-core machine, where counting
the same matches took 10–13 ms and ranking a word found in 1% of notes well under
1 ms (tests/perf/bench_search.py). So the query is planned from each word's
document frequency (read from an ``fts5vocab`` table on this connection, ~1 ms):

* **Stop words** (:mod:`desktop.vault.stopwords`) are dropped, and so are words of
  one or two letters (the "l" of "l'eau", "s", "ok"), which seldom say what a note
  is about, unless nothing else is left.
* **Words found in most notes** (more than half) only match titles and aliases.
  FTS5's BM25 gives such a word an IDF of ~0 (its ``log((N - n + 0.5) / (n + 0.5))``
  is clamped at 1e-6), so in a body it cannot rank anything; in a title it still
  selects a few notes cheaply.
* **The other words** are OR-ed, rarest first, while the notes they match add up
  to at most :data:`RANKED_MATCHES`; the rarest is always kept. A word past the
  bound is searched in titles and aliases only — if those stay within the bound
  too (a word in every title, such as "Note", is dropped).
* Below :data:`RANKED_MATCHES` notes nothing is bounded: every word is ranked.
* **Phrases** the user put in double quotes stay phrases; the last word is also a
  prefix (``deplo`` finds ``deploy``), as it is usually still being typed.

Each word is quoted, so the user's text is never FTS5 syntax.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from desktop.vault.stopwords import STOP_WORDS

#: Most notes the ranked part of a query may match (~6 µs of ranking each here).
RANKED_MATCHES = 1500

_PHRASE = re.compile(r'"([^"]+)"')
_TERM = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class FullTextPlan:
    """What one query asks of FTS5, and why (for tests and benchmarks)."""

    match: str | None
    #: Words searched in titles, aliases and bodies; words searched in titles only.
    ranked: tuple[str, ...] = ()
    titles_only: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    #: The last word is searched as a prefix too.
    prefix: str | None = None


def query_words(text: str) -> tuple[list[str], list[str]]:
    """(phrases, words) of the user's text, stop words and very short words dropped
    unless nothing else is left."""
    phrases = [
        " ".join(_TERM.findall(p)) for p in _PHRASE.findall(text) if len(_TERM.findall(p)) > 1
    ]
    rest = _PHRASE.sub(lambda m: m.group(0) if len(_TERM.findall(m.group(1))) <= 1 else " ", text)
    words = _TERM.findall(rest)
    kept = [w for w in words if len(w) > 2 and w.lower() not in STOP_WORDS]
    if not kept and not phrases:
        kept = [w for w in words if len(w) > 2] or words
    unique: dict[str, str] = {}
    for word in kept:
        unique.setdefault(word.lower(), word)
    return phrases, list(unique.values())


def _quote(word: str) -> str:
    return '"' + word.replace('"', "") + '"'


def _vocab(db: Any) -> None:
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.antinomy_fts_terms "
        "USING fts5vocab(main, notes_fts, 'col')"
    )


def document_counts(db: Any, words: list[str], prefix: str | None) -> dict[str, tuple[int, int]]:
    """For each word, how many notes hold it anywhere and in a title or alias (the
    prefix: every word it starts, summed). A note with the word in several columns
    counts once per column: an upper bound, which is what the plan needs."""
    _vocab(db)
    counts: dict[str, tuple[int, int]] = {}
    for word in words:
        term = word.lower()
        if word == prefix:
            where, params = "term >= ? AND term < ?", [term, term + "\U0010ffff"]
        else:
            where, params = "term = ?", [term]
        row = db.execute(
            "SELECT COALESCE(SUM(doc), 0), COALESCE(SUM(CASE WHEN col != 'body' THEN doc END), 0) "
            f"FROM temp.antinomy_fts_terms WHERE {where}",
            params,
        ).fetchone()
        counts[word] = (int(row[0]), int(row[1])) if row else (0, 0)
    return counts


def plan_query(db: Any, text: str, *, notes: int) -> FullTextPlan:
    """The bounded FTS5 query for ``text`` over a vault of ``notes`` notes (``db`` is
    only read past :data:`RANKED_MATCHES` notes)."""
    phrases, words = query_words(text)
    if not words and not phrases:
        return FullTextPlan(None)
    prefix = words[-1] if words and len(words[-1]) >= 3 else None
    if db is None or notes <= RANKED_MATCHES:  # a small vault: ranking every match is cheap
        counts = dict.fromkeys(words, (0, 0))
    else:
        try:
            counts = document_counts(db, words, prefix)
        except sqlite3.Error:  # no fts5vocab in this SQLite: the plain OR query
            counts = dict.fromkeys(words, (0, 0))
    ranked = _within_bound([w for w in words if counts[w][0] * 2 <= notes], lambda w: counts[w][0])
    # Only words that are in some title: reading a long word list to find none costs time.
    titles_only = _within_bound(
        [w for w in words if w not in ranked and (counts[w][1] > 0 or notes <= RANKED_MATCHES)],
        lambda w: counts[w][1],
        always_one=False,
    )
    parts = [_term(w, prefix) for w in ranked]
    parts += [_quote(p) for p in phrases]
    if titles_only:
        parts.append(
            "{title aliases} : (" + " OR ".join(_term(w, prefix) for w in titles_only) + ")"
        )
    return FullTextPlan(
        # None: every word is in most notes and in no title: full text cannot rank it.
        match=" OR ".join(parts) or None,
        ranked=tuple(ranked),
        titles_only=tuple(titles_only),
        phrases=tuple(phrases),
        prefix=prefix,
    )


def _within_bound(
    words: list[str], matches: Callable[[str], int], *, always_one: bool = True
) -> list[str]:
    """The rarest ``words`` whose matches add up to at most :data:`RANKED_MATCHES`
    (the rarest one always, when ``always_one``)."""
    kept: list[str] = []
    total = 0
    for word in sorted(words, key=matches):
        if total + matches(word) > RANKED_MATCHES and (kept or not always_one):
            break
        kept.append(word)
        total += matches(word)
    return kept


def _term(word: str, prefix: str | None) -> str:
    return f"{_quote(word)}*" if word == prefix else _quote(word)
