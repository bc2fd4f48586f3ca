"""A pair described in plain words from its own quotes, when the model gives no usable line.

Every word of the description is a word of one quote, in its own spelling, or one of the
few framing words ("one note says", "the other", "vs", "only in one note"). Nothing is
paraphrased, so nothing can be invented:

* two sentences that share their frame (:data:`desktop.flows.alignment.ALIGNED`) are
  shown as what differs and the frame they share: "Tuesday vs Thursday: Deploys happen
  on …";
* two sentences that do not are each cut down to the words that carry a claim — numbers,
  times, days and months, negations, quantifiers, words with an opposite, names inside a
  sentence — with the small words between and around them: "every Friday between 14:00
  and 16:00" / "after Thursday noon", and what both quotes speak of in front when they
  share a run of words ("les tomates en pleine terre: …").

When neither quote has such a word, there is nothing to say in plain words and the caller
keeps its sentence about the judge.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

from desktop.flows.alignment import (
    ALIGNED,
    ANTONYMS,
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    QUANTIFIERS,
    WEEKDAYS,
    word_set,
)
from desktop.flows.hunter.prompt import DESCRIPTION_MAX
from desktop.flows.sentences import plain

#: A word or a number as written: "14:00", "mi-mai", "l'ho", "0aa" are one each.
_WORD = re.compile(r"[^\W_]+(?:[.,:–'’-][^\W_]+)*", re.UNICODE)
#: Punctuation a run of claim words never crosses.
_BREAK = re.compile(r"[,;.:!?()\[\]“”\"]")
#: Words with an opposite, less the prepositions among them ("on", "over"): those place a
#: claim, they do not make one.
_OPPOSABLE = frozenset(w for pair in ANTONYMS for w in pair) - {"on", "up", "down", "over", "under"}
#: Words a claim's value leans on ("every Friday between 14:00 and 16:00").
_ORDINALS = frozenset({"first", "last", "once", "twice", "premier", "dernier", "primo", "ultimo"})
#: Small words kept before a claim's words: prepositions and articles ("after Thursday
#: noon", "le 6 avril").
_LEADS = word_set(
    """
    after before until till between at on in by within from to about around since during
    per than the a an avant après jusqu à le la les l dès depuis entre pendant vers dopo
    prima fino entro tra fra alle alla al dal il lo gli too very
    """
)
#: A side's description holds at most this many runs of words.
MAX_RUNS = 2
#: Words that speak of the subject of both quotes, shown in front: at most this many.
MAX_SHARED_WORDS = 6
#: Words that never make a shared subject on their own.
_SMALL = word_set(
    """
    the a an of to in on at by for and or is are be it its this that with as from so
    my our your his her their me us them i we you they he she should would will can could
    must may might shall
    le la les de des du un une et en à au il lo di da e con per che
    """
)


@dataclass(frozen=True)
class _Token:
    text: str
    key: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    text = unicodedata.normalize("NFC", text)
    return [
        _Token(m.group(0), m.group(0).casefold().replace("’", "'"), m.start(), m.end())
        for m in _WORD.finditer(text)
    ]


def _value(key: str) -> bool:
    return any(
        part[:1].isdigit() or part in NUMBER_WORDS or part in WEEKDAYS or part in MONTHS
        for part in key.split("-")
    )


def _salient(tok: _Token, first: bool) -> bool:
    key = tok.key.split("'")[-1]
    if _value(key) or key in _ORDINALS:
        return True
    if key in NEGATIONS or key in QUANTIFIERS or key in _OPPOSABLE or key.endswith("n't"):
        return True
    # A capital inside a sentence is a name ("PostgreSQL", "SQLite"); the first word's is not.
    return not first and tok.text[:1].isupper() and len(tok.text) > 1


def _slice(text: str, toks: list[_Token], i: int, j: int) -> str:
    return unicodedata.normalize("NFC", text)[toks[i].start : toks[j].end]


def describe_from_quotes(quote_a: str, quote_b: str) -> str | None:
    """The pair's differing words in plain words, or None when none carries a claim."""
    quote_a, quote_b = plain(quote_a), plain(quote_b)  # no Markdown in a card's line
    ta, tb = _tokens(quote_a), _tokens(quote_b)
    if not ta or not tb:
        return None
    matcher = SequenceMatcher(None, [t.key for t in ta], [t.key for t in tb], autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    shared = 2 * matched / (len(ta) + len(tb))
    if shared >= ALIGNED:
        line = _aligned(quote_a, quote_b, ta, tb, matcher)
    else:
        line = _apart(quote_a, quote_b, ta, tb, matcher)
    if line is None or len(line) > DESCRIPTION_MAX:
        return None
    return line


def _aligned(
    quote_a: str, quote_b: str, ta: list[_Token], tb: list[_Token], matcher: SequenceMatcher[str]
) -> str | None:
    """Each differing stretch, then the frame: "Tuesday vs Thursday: Deploys happen on …"."""
    pieces: list[str] = []
    frame: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            frame.append(_slice(quote_a, ta, i1, i2 - 1))
            continue
        a = _slice(quote_a, ta, i1, i2 - 1) if i2 > i1 else ""
        b = _slice(quote_b, tb, j1, j2 - 1) if j2 > j1 else ""
        pieces.append(f"{a} vs {b}" if a and b else f"“{a or b}” only in one note")
        frame.append("…")
    if not pieces:
        return None
    shown = _shorten(" ".join(frame), 90)
    return f"{'; '.join(pieces[:3])}: {shown}"


def _apart(
    quote_a: str, quote_b: str, ta: list[_Token], tb: list[_Token], matcher: SequenceMatcher[str]
) -> str | None:
    """Each quote's words that carry its claim: "One note says “…”, the other “…”"."""
    keys_a, keys_b = {t.key for t in ta}, {t.key for t in tb}
    runs_a = _claim_runs(quote_a, ta, keys_b)
    runs_b = _claim_runs(quote_b, tb, keys_a)
    if not runs_a and not runs_b:
        return None
    # One side with no claim word: its longest stretch the other does not have.
    runs_a = runs_a or _differing(quote_a, ta, [(i1, i2) for _, i1, i2, _, _ in _edits(matcher)])
    runs_b = runs_b or _differing(quote_b, tb, [(j1, j2) for _, _, _, j1, j2 in _edits(matcher)])
    if not runs_a or not runs_b:
        return None
    subject = _shared_subject(quote_a, ta, matcher)
    said = f"one note says “{' … '.join(runs_a)}”, the other “{' … '.join(runs_b)}”"
    line = f"{subject}: {said}" if subject else said
    return line[:1].upper() + line[1:]


def _claim_runs(text: str, toks: list[_Token], other: set[str]) -> list[str]:
    """The runs of words that carry the quote's claim, best first, at most :data:`MAX_RUNS`."""
    text = unicodedata.normalize("NFC", text)
    marks = [_salient(t, i == 0) for i, t in enumerate(toks)]

    def joined(i: int, j: int) -> bool:  # no clause punctuation between token i and j
        return not _BREAK.search(text[toks[i].end : toks[j].start])

    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if not marks[i]:
            i += 1
            continue
        j = i
        # One small word may sit between two claim words ("Friday between 14:00 and 16:00").
        while True:
            if j + 1 < len(toks) and marks[j + 1] and joined(j, j + 1):
                j += 1
            elif j + 2 < len(toks) and marks[j + 2] and joined(j, j + 2):
                j += 2
            else:
                break
        start, end = i, j
        if start > 0 and toks[start - 1].key in _LEADS and joined(start - 1, start):
            start -= 1  # "after Thursday noon", "until eleven"
        end = _with_object(toks, end, joined, marks)
        runs.append((start, end))
        i = j + 1

    def score(run: tuple[int, int]) -> tuple[bool, int]:
        span = range(run[0], run[1] + 1)
        differs = any(marks[k] and toks[k].key not in other for k in span)
        return (differs, sum(_value(toks[k].key) for k in span))

    best = sorted(runs, key=score, reverse=True)[:MAX_RUNS]
    kept = [r for r in sorted(best) if score(r)[0]]
    return [_shorten(_slice(text, toks, a, b), 70) for a, b in kept]


def _with_object(
    toks: list[_Token], end: int, joined: Callable[[int, int], bool], marks: list[bool]
) -> int:
    """The end of a run with the word its last claim word bears on: "fifteen minutes", "no
    on-call rotation", "without a reviewer", "PostgreSQL cluster" (up to two small words
    between, never across a comma nor into the next claim word)."""
    found = end
    for k in range(end + 1, min(end + 5, len(toks))):
        if not joined(k - 1, k) or not toks[k].text.islower() or marks[k]:
            break
        if toks[k].key in _SMALL or toks[k].key in _LEADS:
            if found > end:
                break
            continue
        found = k
        if found - end >= 2 and toks[found - 1].key not in _SMALL:
            break  # two words of the object are enough: "on-call rotation"
    return found


def _edits(matcher: SequenceMatcher[str]) -> list[tuple[str, int, int, int, int]]:
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def _differing(text: str, toks: list[_Token], spans: list[tuple[int, int]]) -> list[str]:
    """The longest stretch of the quote the other quote does not have (2 words at least)."""
    spans = [(a, b) for a, b in spans if b - a >= 2]
    if not spans:
        return []
    a, b = max(spans, key=lambda s: s[1] - s[0])
    return [_shorten(_slice(text, toks, a, b - 1), 70)]


def _shared_subject(text: str, toks: list[_Token], matcher: SequenceMatcher[str]) -> str:
    """The longest run of words both quotes have, when it holds a word that is not small."""
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    for block in sorted(blocks, key=lambda b: b.size, reverse=True):
        first, last = block.a, block.a + block.size - 1
        if not any(
            toks[k].key not in _SMALL and len(toks[k].key) > 3 for k in range(first, last + 1)
        ):
            continue
        while toks[first].key in _SMALL:
            first += 1
        while toks[last].key in _SMALL:
            last -= 1
        if last - first < MAX_SHARED_WORDS:
            return _slice(text, toks, first, last)
    return ""


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"
