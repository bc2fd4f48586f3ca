"""Quantities of the week: days, day windows, parts of the day, how often.

What :mod:`desktop.flows.quantities` reads of a sentence beyond plain numbers, so that a
rule and a fact one step of inference apart compare as values:

* ``weekday`` — a moment or window of the week, in minutes after Monday 00:00: "every Friday
  14:00–16:00", "after Thursday noon" (Thursday 12:00 to the week's end), "no meetings on
  Wednesdays" (Wednesday ruled out), "Takeaway is for Friday nights only" (only Friday
  evening allowed), "on weekdays", "du lundi au vendredi";
* ``frequency`` — how often, in times per week: "twice a week", "every day", "at least
  three times a week", "une fois par mois", "ogni giorno";
* ``clock`` — a part of the day or a meal where no clock time is written: "this Wednesday
  afternoon" (12:00–18:00), "after lunch" (after 13:00), "avant le petit-déjeuner".

Rules of language (English, French, Italian), never word lists of a vault.
"""

from __future__ import annotations

import math
import re

from desktop.flows.quantities import (
    _CLAUSE_END,
    _NUM,
    NEGATION_BEFORE,
    Quantity,
    _bounded,
    _number,
)

WEEK = 7 * 1440.0

DAY_NUMBERS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "lundi": 0, "mardi": 1, "mercredi": 2, "jeudi": 3, "vendredi": 4,
    "samedi": 5, "dimanche": 6, "lunedì": 0, "martedì": 1, "mercoledì": 2, "giovedì": 3,
    "venerdì": 4, "sabato": 5, "domenica": 6, "lunedi": 0, "martedi": 1, "mercoledi": 2,
    "giovedi": 3, "venerdi": 4,
}  # fmt: skip
_DAY = "|".join(sorted(DAY_NUMBERS, key=len, reverse=True))
_DAY_RE = re.compile(rf"\b({_DAY})s?\b")
_RANGE_RE = re.compile(
    rf"\b(?:from\s+|du\s+|dal\s+)?({_DAY})s?\s+(?:to|through|till|until|au|à|al|-|–)\s+({_DAY})s?\b"
)
#: Whole spans of the week named by one word.
_SPANS = (
    (re.compile(r"\b(?:weekdays|working days|en semaine|jours ouvrés|giorni feriali)\b"),
     0.0, 5 * 1440.0 - 1),
    (re.compile(r"\b(?:weekends?|week-ends?|fine settimana|weekend)\b"), 5 * 1440.0, WEEK),
)  # fmt: skip

#: Parts of the day (minutes after midnight).
PARTS_OF_DAY = {
    "morning": (300.0, 720.0), "afternoon": (720.0, 1080.0), "evening": (1080.0, 1380.0),
    "night": (1200.0, 1440.0), "nights": (1200.0, 1440.0), "tonight": (1080.0, 1440.0),
    "matin": (300.0, 720.0), "matinée": (300.0, 720.0), "après-midi": (720.0, 1080.0),
    "soir": (1080.0, 1380.0), "soirée": (1080.0, 1380.0), "nuit": (1200.0, 1440.0),
    "mattina": (300.0, 720.0), "mattino": (300.0, 720.0), "pomeriggio": (720.0, 1080.0),
    "sera": (1080.0, 1380.0), "serata": (1080.0, 1380.0), "notte": (1200.0, 1440.0),
}  # fmt: skip
_PART = "|".join(sorted(PARTS_OF_DAY, key=len, reverse=True))
_PART_RE = re.compile(rf"(?<![\w-])({_PART})(?![\w-])")
#: Words before a part of the day that make it a unit, not a time: a rate ("160 a night",
#: "per night", "par nuit", "110 € la nuit") or a count ("three nights", "deux soirs").
_RATE_OR_COUNT = re.compile(
    rf"(?:\b(?:a|an|per|par)|\d|\b{_NUM}|[€$£]|\b(?:euros?|dollars?|pounds?))\s*(?:la|le|al)?\s*$"
)
#: Meals as moments of the day (minutes after midnight), for "after lunch", "avant le dîner".
MEALS = {
    "breakfast": 480.0, "lunch": 780.0, "lunchtime": 780.0, "dinner": 1170.0,
    "supper": 1170.0, "petit-déjeuner": 480.0, "petit déjeuner": 480.0, "déjeuner": 780.0,
    "dîner": 1170.0, "colazione": 480.0, "pranzo": 780.0, "cena": 1200.0,
}  # fmt: skip
_MEAL_RE = re.compile(
    r"\b(after|before|avant|après|dopo|prima d(?:i|el|ella))\s+(?:the\s+|le\s+|l'|il\s+|la\s+)?("
    + "|".join(sorted(MEALS, key=len, reverse=True))
    + r")\b"
)

#: A rule that allows only what it names ("only on Fridays", "Friday nights only").
_ONLY = re.compile(
    r"\b(?:only|solely|exclusively|seulement|uniquement|solo|soltanto|"
    r"solamente|unicamente)\b"
)

_PERIOD_WEEKS = {
    "day": 1 / 7, "jour": 1 / 7, "giorno": 1 / 7, "week": 1.0, "semaine": 1.0,
    "settimana": 1.0, "month": 30 / 7, "mois": 30 / 7, "mese": 30 / 7, "year": 365 / 7,
    "an": 365 / 7, "année": 365 / 7, "anno": 365 / 7,
}  # fmt: skip
_TIMES = (
    rf"(once|twice|one time|({_NUM})\s+times|une fois|({_NUM})\s+fois|una volta|"
    rf"({_NUM})\s+volte)"
)
_FREQ_RE = re.compile(
    _TIMES + r"\s+(?:a|an|per|each|every|this|that|last|par|à la|au|cette|al|alla|a|ogni|"
    r"questa|la|le|il)\s+"
    r"(day|week|month|year|jour|semaine|mois|an|année|giorno|settimana|mese|anno)\b"
)
_UNIT_OF = {
    "day": "day", "days": "day", "jour": "day", "jours": "day", "giorno": "day",
    "giorni": "day", "week": "week", "weeks": "week", "semaine": "week", "semaines": "week",
    "settimana": "week", "settimane": "week", "month": "month", "months": "month",
    "mois": "month", "mese": "month", "mesi": "month", "year": "year", "years": "year",
    "an": "year", "ans": "year", "anno": "year", "anni": "year",
}  # fmt: skip
_EVERY_RE = re.compile(
    rf"\b(?:every|each|chaque|tous les|toutes les|ogni)\s+(?:({_NUM}|other|second)\s+)?"
    r"(" + "|".join(sorted(_UNIT_OF, key=len, reverse=True)) + r")\b"
)
_ADVERB_FREQ = {
    "daily": 7.0, "nightly": 7.0, "weekly": 1.0, "monthly": 12 / 52, "fortnightly": 0.5,
    "quotidiennement": 7.0, "quotidiano": 7.0, "hebdomadaire": 1.0, "settimanale": 1.0,
    "mensuel": 12 / 52, "mensile": 12 / 52, "tous les jours": 7.0, "un jour sur deux": 3.5,
    "a giorni alterni": 3.5, "tutti i giorni": 7.0,
}  # fmt: skip
_ADVERB_RE = re.compile(r"\b(" + "|".join(sorted(_ADVERB_FREQ, key=len, reverse=True)) + r")\b")


def _clause(text: str, start: int, end: int) -> tuple[str, str]:
    """The clause around ``text[start:end]``: the words before and after it in it."""
    before = _CLAUSE_END.split(text[max(0, start - 80) : start])[-1]
    after = _CLAUSE_END.split(text[end : end + 60])[0]
    return before, after


#: "Only" reaches the words next to it: "only on Fridays", "we only deploy on Fridays",
#: "Friday nights only"; not "il corso è il mercoledì e usa solo gres bianco".
_ONLY_BEFORE = re.compile(r"(?:^|\W)" + _ONLY.pattern + r"(?:\W+\w+){0,2}\W*$")
_ONLY_AFTER = re.compile(
    # one word between ("Friday nights only"), not a conjunction opening what comes next
    # ("questions from the weekend and only then the planning")
    r"^\W*(?:(?!(?:and|or|but|then|et|ou|mais|puis|e|o|ma|poi)\b)\w+\W+)?" + _ONLY.pattern
)


def _only_near(before: str, after: str) -> bool:
    return bool(_ONLY_BEFORE.search(before) or _ONLY_AFTER.search(after))


def _week_quantity(text: str, start: int, end: int, lo: float, hi: float, timed: bool) -> Quantity:
    """A span of the week with the bound its clause puts on it."""
    before, after = _clause(text, start, end)
    only = _only_near(before, after)
    negated = bool(NEGATION_BEFORE.search(before))
    probe = _bounded(
        "weekday",
        0.0,
        re.sub(r"\b(?:on|every|each|this|le|chaque|il|ogni)\s*$", "", before.rstrip()).rstrip()
        + " ",
    )
    if probe.bound:  # the bound's own words may hold a negation: "no later than Friday"
        negated = probe.forbidden
    if probe.bound and math.isinf(probe.hi):  # after / from … on
        lo, hi = (lo if timed else hi), WEEK
    elif probe.bound and math.isinf(probe.lo):  # before (the day's start) / by (its end)
        lo, hi = 0.0, (lo if probe.hi < 0 or timed else hi)
    elif not (only or negated):
        return Quantity("weekday", lo, hi)
    if negated and not only:
        return Quantity("weekday", lo, hi, bound=True, forbidden=True)
    return Quantity("weekday", lo, hi, bound=True)


def _time_of_day(after: str) -> tuple[float, float] | None:
    """A clock time or part of the day just after a day's name ("Friday 14:00–16:00")."""
    from desktop.flows.quantities import quantities

    head = after[:40]
    found = [q for q in quantities(head) if q.dim == "clock" and q.reading in (-1, 1, 0)]
    if found:
        # A bare hour after a day's name: the afternoon reading unless it says otherwise.
        q = next((q for q in found if q.reading in (-1, 1)), found[0])
        return q.lo, q.hi
    m = _PART_RE.search(head[:25])
    if m:
        return PARTS_OF_DAY[m.group(1)]
    return None


def week_quantities(text: str) -> list[Quantity]:
    """The days and windows of the week ``text`` names, each with its bound."""
    out: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for m in _RANGE_RE.finditer(text):
        a, b = DAY_NUMBERS[m.group(1)], DAY_NUMBERS[m.group(2)]
        if a <= b:
            out.append(
                _week_quantity(text, m.start(), m.end(), a * 1440.0, (b + 1) * 1440.0 - 1, False)
            )
            taken.append(m.span())
    for rx, lo, hi in _SPANS:
        for m in rx.finditer(text):
            if re.search(rf"\b{_NUM}\s*$", text[: m.start()]):
                continue  # "within 10 working days": a span of time (a duration)
            out.append(_week_quantity(text, m.start(), m.end(), lo, hi, False))
            taken.append(m.span())
    for m in _DAY_RE.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        day = DAY_NUMBERS[m.group(1)] * 1440.0
        window = _time_of_day(text[m.end() :])
        if window is None:  # "this Wednesday afternoon", "le vendredi soir"
            lo, hi, timed = day, day + 1439.0, False
        else:
            lo, hi, timed = day + window[0], day + min(window[1], 1440.0), True
        out.append(_week_quantity(text, m.start(), m.end(), lo, hi, timed))
    return out


def frequency_quantities(text: str) -> list[Quantity]:
    """How often ``text`` says something happens, in times per week, with its bound."""
    out: list[Quantity] = []
    for m in _FREQ_RE.finditer(text):
        word = m.group(1)
        count = _number(m.group(2) or m.group(3) or m.group(4) or "")
        if count is None:
            count = 2.0 if word == "twice" else 1.0
        per = count / _PERIOD_WEEKS[m.group(5)]
        out.append(_bounded("frequency", per, text[: m.start()], spread=1e-6))
    for m in _EVERY_RE.finditer(text):
        unit = _UNIT_OF[m.group(2)]
        n = m.group(1)
        step = 2.0 if n in ("other", "second") else (_number(n) if n else 1.0)
        if not step:
            continue
        out.append(_bounded("frequency", 1 / (step * _PERIOD_WEEKS[unit]), text[: m.start()]))
    for m in _ADVERB_RE.finditer(text):
        out.append(_bounded("frequency", _ADVERB_FREQ[m.group(1)], text[: m.start()]))
    return out


def day_part_quantities(text: str, has_clock: bool) -> list[Quantity]:
    """Meals under a bound ("after lunch") and, where no clock time is written, parts of the
    day ("in the afternoon"), as clock quantities."""
    out: list[Quantity] = []
    for m in _MEAL_RE.finditer(text):
        out.append(_bounded("clock", MEALS[m.group(2)], text[: m.start(2)]))
    if not has_clock and not out:
        for m in _PART_RE.finditer(text):
            if _DAY_RE.search(text[max(0, m.start() - 15) : m.start()]):
                continue  # "Friday nights": part of a day of the week
            if _RATE_OR_COUNT.search(text[max(0, m.start() - 25) : m.start()]):
                continue  # "160 a night", "par nuit", "three nights in Paris": not a time
            lo, hi = PARTS_OF_DAY[m.group(1)]
            out.append(_part_of_day(text, m.start(), m.end(), lo, hi))
    return out


def _part_of_day(text: str, start: int, end: int, lo: float, hi: float) -> Quantity:
    """A part of the day with the bound its clause puts on it: "never in the evening" rules
    it out, "only in the morning" is the one part allowed, "in the evening" is a plain
    value."""
    before, after = _clause(text, start, end)
    hi -= 1  # a part ends where the next begins: "never in the morning" allows an afternoon
    if NEGATION_BEFORE.search(before):
        return Quantity("clock", lo, hi, bound=True, forbidden=True)
    if _ONLY.search(before) or _ONLY.match(after.lstrip()):  # "in the morning only"
        return Quantity("clock", lo, hi, bound=True)
    return Quantity("clock", lo, hi)
