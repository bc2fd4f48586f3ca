"""Lexical support: do the cited lines carry a fact's content words and its date?

**Content words.** A fact's words, lower-cased and accent-folded, minus stop
words (:mod:`desktop.vault.stopwords`, and the words that report speech: "user",
"said", "wants") and words under 3 letters (numbers always
count). A word is supported when the cited text has the same word or one with
the same first 5 letters ("deadline"/"deadlines", "décidé"/"décider"). Words of
the fact's subject name and section are allowed without support: the model
restates the subject ("The Lisbon trip …") while the user said "the flight".

:data:`SUPPORT_THRESHOLD` = 0.6 — the share of content words that must be
supported — and, besides, every *name* (a capitalised word not starting the
fact) and every *number* must be supported: those are what an invented detail
changes ("Migrating the database to MySQL" against "we are not migrating
Postgres" has 2 of 3 words, but not "MySQL").

Measured on ``tests/data/memory/support_calibration.json`` (42 hand-labelled
pairs: 22 faithful paraphrases, 20 facts with an invented or changed detail or
citing the wrong line; ``tests/test_memory_support.py`` recomputes this):

=========  ==========================  ============================
threshold  faithful accepted (of 22)   invented accepted (of 20)
=========  ==========================  ============================
0.4        22                          0  (3 without the names rule)
0.5–0.66   22                          0  (2 without the names rule)
0.7        18                          0
0.8        14                          0
=========  ==========================  ============================

0.6 sits in the middle of the range that keeps every faithful fact and no
invented one. Short faithful facts score 0.67 ("Likes green tea" against "I
like green tea": "like" is a stop word there), so 0.7 drops them. The set is
small and written by us; the end-to-end run reports what the real model
gets. This is lexical support, not meaning: "not on Friday" and "on Friday"
share their words.

**Entailment** (when a judge is given, :mod:`.citations`): the judge must give
the cited lines → rephrased fact P(entailment) ≥ :data:`ENTAILMENT_THRESHOLD`,
and a rephrasing with P(contradiction) ≥ :data:`CONTRADICTION_CEILING` is never
written (the user's own words are kept instead). Calibrated with the shipped judge
(``tests/perf/calibrate_memory_judge.py`` on ``support_calibration.json``: 22 faithful,
20 invented): entailment 0.4–0.7 all keep 16 of 22 faithful and 0 of 20 invented
rephrasings (0.3 lets 1 invented through), so 0.5 sits in that range; P(contradiction)
≥ 0.5 holds back 3 of the 22 faithful ones (they keep their verbatim words) and 5 of 20
invented. A failed rephrasing loses nothing, so a strict threshold costs only tidiness.

**Dates.** A fact's date (``YYYY-MM-DD``) is kept only if a cited line names
it: the ISO form; a day and month name (English, French, Italian, full or
abbreviated) or ``d/m``, ``m/d``, ``d.m``; or a relative day resolved against
the time the line was spoken (today, tomorrow, the day after tomorrow, in N
days, next/this/on <weekday>, and their French and Italian forms). A year in
the text must match; a text without a year supports the month and day in any
year. Otherwise the date is stripped and the fact kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import date, timedelta

from desktop.vault.stopwords import STOP_WORDS, word_set

SUPPORT_THRESHOLD = 0.6
#: The judge must give at least this P(entailment) for cited lines → rephrased fact.
ENTAILMENT_THRESHOLD = 0.5
#: A rephrasing the judge says the cited lines contradict at this P or more is never written.
CONTRADICTION_CEILING = 0.5
PREFIX = 5

#: A fact is the model's account of what was said ("The user wants the flight on
#: Friday"): the words of the account ("user", "wants", "said") and a paraphrase's filler
#: ("things", "one", "like") are not the fact, so the cited line need not hold them.
_REPORTING_WORDS = word_set(
    """
    user users assistant said says say told tell mentioned mention wants want wanted plans
    plan planned going get got one ones thing things like
    """
)
_STOP = STOP_WORDS | _REPORTING_WORDS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

_MONTHS = {
    1: ["january", "jan", "janvier", "janv", "gennaio", "gen"],
    2: ["february", "feb", "février", "fevrier", "fév", "fev", "febbraio"],
    3: ["march", "mar", "mars", "marzo"],
    4: ["april", "apr", "avril", "avr", "aprile"],
    5: ["may", "mai", "maggio", "mag"],
    6: ["june", "jun", "juin", "giugno", "giu"],
    7: ["july", "jul", "juillet", "juil", "luglio", "lug"],
    8: ["august", "aug", "août", "aout", "agosto", "ago"],
    9: ["september", "sep", "sept", "septembre", "settembre", "set"],
    10: ["october", "oct", "octobre", "ottobre", "ott"],
    11: ["november", "nov", "novembre"],
    12: ["december", "dec", "décembre", "decembre", "déc", "dicembre", "dic"],
}
_WEEKDAYS = [
    ["monday", "lundi", "lunedì", "lunedi"],
    ["tuesday", "mardi", "martedì", "martedi"],
    ["wednesday", "mercredi", "mercoledì", "mercoledi"],
    ["thursday", "jeudi", "giovedì", "giovedi"],
    ["friday", "vendredi", "venerdì", "venerdi"],
    ["saturday", "samedi", "sabato"],
    ["sunday", "dimanche", "domenica"],
]


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def content_words(text: str) -> list[str]:
    words = _WORD.findall(fold(text))
    return [w for w in words if w.isdigit() or (len(w) >= 3 and w not in _STOP_FOLDED)]


_STOP_FOLDED = {fold(w) for w in _STOP}


def _key(word: str) -> str:
    return word if word.isdigit() else word[:PREFIX]


def support_ratio(fact: str, cited: str, *, allowed: Iterable[str] = ()) -> float:
    """Share of ``fact``'s content words found in ``cited`` (1.0 if it has none)."""
    words = content_words(fact)
    if not words:
        return 0.0
    have = {_key(w) for w in content_words(cited)}
    free = {_key(w) for text in allowed for w in content_words(text)}
    have |= free
    # "12" supports "12th"; ordinals and numbers are compared by their digits.
    have |= {re.sub(r"\D", "", w) for w in have if any(ch.isdigit() for ch in w)}
    supported = sum(1 for w in words if _key(w) in have or _digits(w) in have)
    return supported / len(words)


_TOKEN = re.compile(r"[^\W_][\w.'’-]*", re.UNICODE)


def unsupported_names(fact: str, cited: str, *, allowed: Iterable[str] = ()) -> list[str]:
    """Names and numbers of ``fact`` missing from ``cited``: what a made-up detail changes.

    A name is a capitalised word that does not start the fact; a number is any
    token with a digit. Compared like content words (accent-folded, 5-letter prefix).
    """
    have = {_key(w) for w in content_words(cited)}
    have |= {_key(w) for text in allowed for w in content_words(text)}
    have |= {re.sub(r"\D", "", w) for w in have if any(ch.isdigit() for ch in w)}
    missing = []
    for i, token in enumerate(_TOKEN.findall(fact)):
        is_name = i > 0 and token[:1].isupper()
        is_number = any(ch.isdigit() for ch in token)
        if not (is_name or is_number):
            continue
        words = content_words(token)
        if words and not all(_key(w) in have or _digits(w) in have for w in words):
            missing.append(token.rstrip(".'’-"))
    return missing


def _digits(word: str) -> str:
    digits = re.sub(r"\D", "", word)
    return digits if digits and digits != word else "\x00"


def date_supported(value: date, cited: str, *, spoken: date) -> bool:
    """Whether ``cited`` (spoken on ``spoken``) names ``value``."""
    text = fold(cited)
    if value.isoformat() in text:
        return True
    years = {int(y) for y in re.findall(r"\b(20\d\d|19\d\d)\b", text)}
    if years and value.year not in years:
        return False
    day = value.day
    for name in _MONTHS[value.month]:
        n = fold(name)
        if re.search(rf"\b0?{day}(?:st|nd|rd|th|er|°)?\s+(?:of\s+|de\s+|d')?{n}\b", text):
            return True
        if re.search(rf"\b{n}\.?\s+0?{day}(?:st|nd|rd|th)?\b", text):
            return True
    m = value.month
    if re.search(rf"\b0?{day}[/.]0?{m}\b|\b0?{m}/0?{day}\b", text):
        return True
    return value in _relative_dates(text, spoken)


def _relative_dates(text: str, spoken: date) -> set[date]:
    found: set[date] = set()
    if re.search(r"\b(today|tonight|this evening|aujourd'hui|ce soir|oggi|stasera)\b", text):
        found.add(spoken)
    if re.search(r"\b(day after tomorrow|apres-demain|dopodomani)\b", text):
        found.add(spoken + timedelta(days=2))
    if re.search(r"\b(tomorrow|demain|domani)\b", text) and not re.search(
        r"\b(day after tomorrow|apres-demain)\b", text
    ):
        found.add(spoken + timedelta(days=1))
    for n in re.findall(r"\b(?:in|dans|tra|fra)\s+(\d{1,3})\s+(?:days?|jours?|giorni)\b", text):
        found.add(spoken + timedelta(days=int(n)))
    if re.search(r"\b(?:in|dans|tra|fra)\s+(?:a|one|une|una)\s+(?:week|semaine|settimana)\b", text):
        found.add(spoken + timedelta(days=7))
    for index, names in enumerate(_WEEKDAYS):
        for name in names:
            n = fold(name)
            if re.search(rf"\b{n}\b", text):
                ahead = (index - spoken.weekday()) % 7 or 7
                found.add(spoken + timedelta(days=ahead))
                if re.search(rf"\b(next|prochain)\s+{n}\b|\b{n}\s+(prochain|prossimo)\b", text):
                    found.add(spoken + timedelta(days=ahead + 7))
    return found
