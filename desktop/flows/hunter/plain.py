"""A pair described in plain words from its own quotes, when the model gives no usable line.

Every word of the description is a word of one quote or of a note's title, in its own
spelling, or one of the few framing words ("vs", "only in one note"). Nothing is
paraphrased, so nothing can be invented:

* two sentences that share their frame (:data:`desktop.flows.alignment.ALIGNED`) are
  shown as what differs and the frame they share: "Tuesday vs Thursday: Deploys happen
  on …";
* two sentences that do not are shown as their subject, then each cut down to the words
  that carry its claim — numbers, times, days and months, negations, quantifiers, words
  with an opposite, names inside a sentence — with the small words between and around
  them: "Friday release window: every Friday between 14:00 and 16:00 vs Nothing ships …
  after Thursday noon". The subject is what both quotes speak of when they share a run of
  two words that carry meaning ("tomates en pleine terre"), else the title of a note whose
  words the quotes use (a date or an identifier in front of it left out), else the one
  word they share.

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
from desktop.flows.schedule import PARTS_OF_DAY
from desktop.flows.sentences import SEE_WORDS, plain, without_citation

#: A word or a number as written: "14:00", "mi-mai", "l'ho", "0aa" are one each.
_WORD = re.compile(r"[^\W_]+(?:[.,:–'’-][^\W_]+)*", re.UNICODE)
#: Punctuation a run of claim words never crosses.
_BREAK = re.compile(r"[,;.:!?()\[\]“”\"]")
#: A pointer to another note at a quote's end ("…; see [[Ledgerline v2]]", "(cf. [[X]])",
#: "voir [[…]]", "vedi [[…]]"): where to read on, not what the quote claims.
_SEE_TAIL = re.compile(
    rf"[\s;,(—–-]*\b(?:{SEE_WORDS})\.?(?: also| aussi| anche)?\s+"
    r"(?:\[\[[^\]]+\]\]|\[[^\]]+\]\([^)]*\))(?:\s*(?:,|and|et|e)\s*"
    r"(?:\[\[[^\]]+\]\]|\[[^\]]+\]\([^)]*\)))*\)?\s*[.;]?\s*$",
    re.IGNORECASE,
)
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
#: A run of fewer words than this says too little alone ("in April"): it takes in the
#: words around it that the other quote does not have, up to ``WIDE_RUN`` words.
SHORT_RUN = 3
_CONJUNCTIONS = word_set("and but or so because et mais ou car e ma o perché")
WIDE_RUN = 8
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


def _value(key: str, parts: bool = False) -> bool:
    """A number, a day, a month — and with ``parts``, a part of the day ("in the evening"):
    only where one quote negates it, as "Good morning" claims nothing."""
    return any(
        part[:1].isdigit()
        or part in NUMBER_WORDS
        or part in WEEKDAYS
        or part.removesuffix("s") in WEEKDAYS  # "Fridays"
        or part in MONTHS
        or (parts and part in PARTS_OF_DAY)
        for part in key.split("-")
    )


def _salient(tok: _Token, first: bool, parts: bool = False) -> bool:
    key = tok.key.split("'")[-1]
    if _value(key, parts) or key in _ORDINALS:
        return True
    if key in NEGATIONS or key in QUANTIFIERS or key in _OPPOSABLE or key.endswith("n't"):
        return True
    # A capital inside a sentence is a name ("PostgreSQL", "SQLite"); the first word's is not.
    return not first and tok.text[:1].isupper() and len(tok.text) > 1


def _slice(text: str, toks: list[_Token], i: int, j: int) -> str:
    return unicodedata.normalize("NFC", text)[toks[i].start : toks[j].end]


def describe_from_quotes(
    quote_a: str, quote_b: str, titles: tuple[str, str] = ("", "")
) -> str | None:
    """The pair's subject and differing words in plain words, or None when none carries a
    claim. ``titles``: the two notes' titles, a subject when the quotes share none."""
    # No Markdown in a card's line, nor the citation a remembered fact ends with, nor a
    # pointer to another note.
    quote_a, quote_b = (plain(_without_pointer(without_citation(q))) for q in (quote_a, quote_b))
    ta, tb = _tokens(quote_a), _tokens(quote_b)
    if not ta or not tb:
        return None
    matcher = SequenceMatcher(None, [t.key for t in ta], [t.key for t in tb], autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    shared = 2 * matched / (len(ta) + len(tb))
    if shared >= ALIGNED:
        line = _aligned(quote_a, quote_b, ta, tb, matcher)
    else:
        line = _apart(quote_a, quote_b, ta, tb, matcher, titles)
    if line is None or len(line) > DESCRIPTION_MAX:
        return None
    return line


def _without_pointer(quote: str) -> str:
    """``quote`` less a pointer to another note at its end, unless that is all it says."""
    return _SEE_TAIL.sub("", quote) or quote


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
    quote_a: str,
    quote_b: str,
    ta: list[_Token],
    tb: list[_Token],
    matcher: SequenceMatcher[str],
    titles: tuple[str, str],
) -> str | None:
    """The subject, then each quote's words that carry its claim: "Subject: … vs …"."""
    keys_a, keys_b = {t.key for t in ta}, {t.key for t in tb}
    negated_a, negated_b = _negated(ta), _negated(tb)
    runs_a = _claim_runs(quote_a, ta, keys_b, negated_b != negated_a)
    runs_b = _claim_runs(quote_b, tb, keys_a, negated_a != negated_b)
    quotes = tuple({_stem(t.key) for t in toks} for toks in (ta, tb))
    # The subject from the quotes' own words: a run both share, a title they speak of, a
    # word both use.
    spoken = (
        _shared_subject(quote_a, ta, matcher, words=2)
        or _title_subject(titles, ta + tb, quotes)
        or _shared_word(ta, tb)
    )
    if not runs_a and not runs_b and not spoken:
        return None  # no claim word, and no subject to say the differing words are about
    # A side with no claim word: its longest stretch the other does not have.
    runs_a = runs_a or _differing(quote_a, ta, [(i1, i2) for _, i1, i2, _, _ in _edits(matcher)])
    runs_b = runs_b or _differing(quote_b, tb, [(j1, j2) for _, _, _, j1, j2 in _edits(matcher)])
    if not runs_a or not runs_b:
        return None
    subject = spoken or _title_subject(titles, None, quotes)
    said = f"{' … '.join(runs_a)} vs {' … '.join(runs_b)}"
    line = f"{subject[:1].upper() + subject[1:]}: {said}" if subject else said
    return line[:1].upper() + line[1:]


def _negated(toks: list[_Token]) -> bool:
    return any(t.key in NEGATIONS or t.key.endswith("n't") for t in toks)


def _claim_runs(text: str, toks: list[_Token], other: set[str], polarity: bool) -> list[str]:
    """The runs of words that carry the quote's claim, best first, at most :data:`MAX_RUNS`.
    ``polarity``: one quote says "not" or "never" and the other does not, so a value both
    name is what they disagree on ("in the evening" / "never in the evening")."""
    text = unicodedata.normalize("NFC", text)
    marks = [_salient(t, i == 0, polarity) for i, t in enumerate(toks)]

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
        if end - start < SHORT_RUN:
            start, end = _widened(toks, start, end, joined, other)
        runs.append((start, end))
        i = j + 1

    other_stems = {_stem(k) for k in other}

    def score(run: tuple[int, int]) -> tuple[bool, int]:
        span = range(run[0], run[1] + 1)
        differs = any(marks[k] and _stem(toks[k].key) not in other_stems for k in span) or (
            polarity and any(_value(toks[k].key, parts=True) for k in span)
        )
        return (differs, sum(_value(toks[k].key, polarity) for k in span))

    merged: list[tuple[int, int]] = []
    for run in sorted(runs):  # widened runs may overlap
        if merged and run[0] <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], run[1]))
        else:
            merged.append(run)
    best = sorted(merged, key=score, reverse=True)[:MAX_RUNS]
    kept = [r for r in sorted(best) if score(r)[0]]
    return [_shorten(_slice(text, toks, a, _last_word(toks, a, b)), 70) for a, b in kept]


def _last_word(toks: list[_Token], start: int, end: int) -> int:
    """The run's end less the small words it ends on ("next to", "against the")."""
    while end > start and (toks[end].key in _SMALL or toks[end].key in _LEADS):
        end -= 1
    return end


def _edge(key: str) -> bool:
    return key in _SMALL or key in QUANTIFIERS or key in NEGATIONS


def _widened(
    toks: list[_Token],
    start: int,
    end: int,
    joined: Callable[[int, int], bool],
    other: set[str],
) -> tuple[int, int]:
    """A short run ("in April", "We take") with the words around it that the other quote
    does not have, within its clause, up to :data:`WIDE_RUN` words: "stopped eating red meat
    in April", "take the night train". Small words may be shared; the run never reaches a
    word that carries meaning in both quotes, and never ends on a small word."""

    def free(k: int) -> bool:
        return toks[k].key in _SMALL or toks[k].key not in other

    first, last = start, end
    while end - start + 1 < WIDE_RUN:
        if start > 0 and joined(start - 1, start) and free(start - 1):
            start -= 1
        elif (
            end + 1 < len(toks)
            and joined(end, end + 1)
            and free(end + 1)
            and toks[end + 1].key not in _CONJUNCTIONS  # "and ends on time": another claim
        ):
            end += 1
        else:
            break
    while start < first and toks[start].key in _SMALL | _LEADS:  # only the words taken in
        start += 1
    while end > last and toks[end].key in _SMALL | _LEADS:
        end -= 1
    return start, end


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
    """The longest stretch of the quote the other quote does not have (2 words, or 1 that
    carries meaning)."""
    spans = [(a, b) for a, b in spans if b - a >= 2 or (b > a and _meaningful(toks[a].key))]
    if not spans:
        return []
    # The stretch with most words that carry meaning ("night train", not "We take").
    a, b = max(
        spans, key=lambda s: (sum(_meaningful(t.key) for t in toks[s[0] : s[1]]), s[1] - s[0])
    )
    return [_shorten(_slice(text, toks, a, b - 1), 70)]


def _shared_subject(
    text: str, toks: list[_Token], matcher: SequenceMatcher[str], *, words: int = 1
) -> str:
    """The longest run of words both quotes have, when it holds ``words`` words that are not
    small."""
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    for block in sorted(blocks, key=lambda b: b.size, reverse=True):
        first, last = block.a, block.a + block.size - 1
        meaning = [k for k in range(first, last + 1) if _meaningful(toks[k].key)]
        if len(meaning) < words:
            continue
        # No small word, quantifier or negation at either end ("oil change every").
        while first < last and _edge(toks[first].key):
            first += 1
        while last > first and _edge(toks[last].key):
            last -= 1
        if _edge(toks[first].key):
            continue
        if last - first < MAX_SHARED_WORDS:
            return _slice(text, toks, first, last)
    return ""


def _meaningful(key: str) -> bool:
    return key not in _SMALL and len(key) > 3


#: What a title may start with that is not its subject: a date ("2024-04-06 Jardin") or an
#: identifier ("ADR-0011 Friday release window").
_TITLE_LEAD = re.compile(r"^\s*(?:\d{4}-\d{2}(?:-\d{2})?|[A-Za-z]{2,8}-?\d+)\b[\s:.–-]*")


def _stem(key: str) -> str:
    return key[:-1] if len(key) > 4 and key.endswith("s") else key


def _title_subject(
    titles: tuple[str, str], toks: list[_Token] | None, quotes: tuple[set[str], ...]
) -> str:
    """The title, of the two, that shares most words that carry meaning with the quotes
    (the first on a tie), less a date or identifier in front; "" when none shares one.
    With ``toks`` None, the first title with words left after that."""
    said = {_stem(t.key) for t in toks or () if _meaningful(t.key)}
    best, best_shared = "", 0
    for title in titles:
        rest = _TITLE_LEAD.sub("", plain(title)).strip()
        own = {_stem(t.key) for t in _tokens(rest) if _meaningful(t.key)}
        if len(own) >= 3 and any(len(own & q) >= 0.8 * len(own) for q in quotes):
            continue  # the title restates a quote ("Mail and chat stay closed until eleven")
        shared = len(own & said)
        if toks is None and _tokens(rest):
            shared = 1
        if shared > best_shared and len(rest) <= 60:
            best, best_shared = rest, shared
    return best


def _shared_word(ta: list[_Token], tb: list[_Token]) -> str:
    """The first word of the first quote that carries meaning and is in the other quote
    too, in either's spelling ("planning" and "Planning")."""
    other = {_stem(t.key) for t in tb}
    return next(
        (
            t.text
            for t in ta
            if _meaningful(t.key) and t.key not in _UNIT_WORDS and _stem(t.key) in other
        ),
        "",
    )


#: Units that never name a subject on their own ("Hours: … at all hours … vs … first hour").
_UNIT_WORDS = word_set(
    """
    hour hours minute minutes day days week weeks month months year years time times
    heure heures jour jours semaine semaines mois année années fois ora ore giorno giorni
    settimana settimane mese mesi anno anni volta volte
    """
)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"
