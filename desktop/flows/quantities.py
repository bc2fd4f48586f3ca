"""The quantities a sentence states, read with their bounds.

This module finds the quantities a sentence states — durations, clock times, amounts,
percentages, dates — with the bound it puts on them ("at least", "capped at", "until",
"no… after", "between … and …", "fewer than", "within 10 working days");
:mod:`desktop.flows.value_compare` compares two sentences' quantities.

"Only between 10:00 and 20:00" is a window the sentence allows; a window whose end comes
before its start runs past midnight; the words after a bare hour choose its half of the day
("eight in the morning"), and a bare hour from one to four is an afternoon hour. Days and
windows of the week, meals, parts of the day and frequencies are read by
:mod:`desktop.flows.schedule` and compared like the rest.

"Until" is read as a plain time, not a bound: "stays closed until eleven" bounds a state,
and whether a fact at 9:30 keeps or breaks it depends on the fact, not on the numbers.

English, French and Italian; rules of language only.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass

_WORD_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60,
    "ninety": 90, "hundred": 100,
    "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8,
    "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "quinze": 15, "vingt": 20, "trente": 30,
    "quarante": 40, "cinquante": 50, "soixante": 60, "cent": 100,
    "uno": 1, "una": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7,
    "otto": 8, "nove": 9, "dieci": 10, "undici": 11, "dodici": 12, "quindici": 15,
    "venti": 20, "trenta": 30, "quaranta": 40, "cinquanta": 50, "sessanta": 60, "cento": 100,
}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}  # fmt: skip
_WORD_NUMBERS.update({"seventy": 70, "eighty": 80})
# "twenty-five", "thirty one"
_WORD_NUMBERS.update(
    {
        f"{tens}{sep}{unit}": value + _WORD_NUMBERS[unit]
        for tens, value in _TENS.items()
        for unit in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
        for sep in ("-", " ")
    }
)
_NUM = r"(?:\d+(?:[.,]\d+)?|" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + ")"

#: Duration units in minutes.
_UNITS = {
    "minute": 1, "minutes": 1, "min": 1, "mins": 1, "minuti": 1, "minuto": 1,
    "hour": 60, "hours": 60, "hr": 60, "hrs": 60, "heure": 60, "heures": 60, "ora": 60, "ore": 60,
    "day": 1440, "days": 1440, "jour": 1440, "jours": 1440, "giorno": 1440, "giorni": 1440,
    "week": 10080, "weeks": 10080, "semaine": 10080, "semaines": 10080, "settimana": 10080,
    "settimane": 10080, "month": 43200, "months": 43200, "mois": 43200, "mese": 43200,
    "mesi": 43200, "year": 525600, "years": 525600, "an": 525600, "ans": 525600,
    "année": 525600, "années": 525600, "anno": 525600, "anni": 525600,
    # a count of working days is a span of time, not the days of the week it names
    "working days": 1440, "working day": 1440, "business days": 1440, "business day": 1440,
    "jours ouvrés": 1440, "jours ouvrables": 1440, "giorni lavorativi": 1440,
    "giorni feriali": 1440,
}  # fmt: skip
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
_HOURS_MINUTES = re.compile(
    r"\b(\d{1,3})\s?(?:h|hrs?|hours?|heures?|ore|ora)\s?(?:and\s+|et\s+|e\s+)?(\d{1,2})\s?"
    r"(?:min|mins|minutes?|minuti|minuto)\b"
)
_HALF_HOUR = re.compile(r"\b(?:half an hour|demi-heure|mezz'?ora|mezza ora)\b")
_DURATION = re.compile(rf"\b({_NUM})(?:\s+and a half)?\s*({_UNIT})\b(\s+(?:et demie?|e mezz[oa]))?")
_CLOCK = re.compile(
    r"\b(\d{1,2})(?::(\d{2})|h(\d{2})?\b|\s*(am|pm|a\.m\.|p\.m\.))|\b(noon|midnight|midi|"
    r"minuit|mezzogiorno|mezzanotte)\b"
)
#: A bare hour after a word that introduces a time ("until eleven", "at ten", "dopo le 9").
_CLOCK_WORD = re.compile(
    rf"\b(?:at|until|till|before|after|by|from|past|à|avant|après|jusqu'à|vers|dès|alle|"
    rf"dopo le|prima delle|fino alle|entro le|verso le|dalle)\s+(?:the\s+)?({_NUM})\b"
    # "apart from one-off emails": a word made with a number is not a time
    rf"(?!-)(?!\s*(?:{_UNIT}|%|percent|euros?|dollars?|€|\$))"
)
#: Words that multiply the number before them ("€1 million", "$5k", "2,5 milioni di euro").
_SCALE = {
    "k": 1e3, "thousand": 1e3, "mille": 1e3, "m": 1e6, "million": 1e6, "millions": 1e6,
    "mio": 1e6, "milione": 1e6, "milioni": 1e6, "bn": 1e9, "billion": 1e9, "milliard": 1e9,
    "milliards": 1e9, "miliardo": 1e9, "miliardi": 1e9,
}  # fmt: skip
_SCALE_WORD = r"(?:\s?(" + "|".join(sorted(_SCALE, key=len, reverse=True)) + r")\b)?"
_MONEY = re.compile(
    rf"(?:[$€£]\s?(\d[\d,.]*){_SCALE_WORD})|(?:\b(\d[\d,.]*){_SCALE_WORD}\s?(?:de |di )?"
    r"(?:€|\$|£|euros?|dollars?|pounds?|chf|francs?|eur|usd|gbp)(?!\w))"
)
_PERCENT = re.compile(r"\b(\d+(?:[.,]\d+)?)\s?(?:%|percent|pour ?cent|per ?cento)")
#: Month names (English, French, Italian) and their numbers.
MONTH_NUMBERS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "janvier": 1, "février": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "août": 8, "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12,
    "gennaio": 1, "febbraio": 2, "marzo": 3, "aprile": 4, "maggio": 5, "giugno": 6,
    "luglio": 7, "agosto": 8, "settembre": 9, "ottobre": 10, "dicembre": 12,
}  # fmt: skip
_MONTH = "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
#: A day of the year: "6 April", "April 6th", "le 6 avril", "mid-May", "à la mi-mai",
#: "early June", "fin juin", "metà maggio".
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th|er)?\s+(?:of\s+)?({_MONTH})|({_MONTH})\s+(\d{{1,2}})"
    rf"(?:st|nd|rd|th)?\b|(mid|mi|metà|early|début|inizio|late|end of|fin|fine)[\s-]+"
    rf"(?:di\s+)?({_MONTH}))\b"
)
#: Parts of a month: the middle day of the part and how far the part reaches either side.
_PART_OF_MONTH = {
    "mid": (15.5, 5.0), "mi": (15.5, 5.0), "metà": (15.5, 5.0), "early": (5.5, 4.5),
    "début": (5.5, 4.5), "inizio": (5.5, 4.5), "late": (26.0, 5.0), "end of": (26.0, 5.0),
    "fin": (26.0, 5.0), "fine": (26.0, 5.0),
}  # fmt: skip
_MONTH_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def _day_of_year(month: int, day: float) -> float:
    return float(_MONTH_DAYS[month - 1] + day)


_BETWEEN = re.compile(
    r"\b(?:between|from|entre|de|tra|fra|da|dalle)\s+(?:the\s+)?(\S+)\s+(?:and|to|et|à|e|a|"
    r"alle)\s+(\S+)"
)

_AT_LEAST = re.compile(
    r"(?:at least|no less than|not less than|minimum(?: of)?|min\.|a minimum of|upwards of|"
    r"au moins|minimum|au minimum|pas moins de|almeno|minimo|non meno di)\s*$"
)
#: A comparative ending in "-er than" that says "less" ("fewer than 3 %", "lower than"), or
#: that is not a bound at all ("other than", "rather than", "no later than" is one below).
_LESS_COMPARATIVES = (
    "fewer|lower|smaller|cheaper|earlier|younger|lighter|slower|shorter|colder|cooler|"
    "less|other|rather|later|sooner"
)
_MORE_THAN = re.compile(
    r"(?:more than|over|above|longer than|after|plus de|au-delà de|après|dès|oltre|più di|"
    r"dopo(?: le)?|past|supérieure? à|superiore a|maggiore di|"
    # any other comparative: "wetter than 20 %", "higher than", "greater than"
    rf"\b(?!(?:{_LESS_COMPARATIVES})\b)[^\W\d]+er than)\s*$"
)
#: "After" before a duration names when something happens.
_AFTER = re.compile(r"\b(?:after|après|dopo|past)\s*$")
_AT_MOST = re.compile(
    r"(?:at most|no more than|not more than|up to|maximum(?: of)?|max\.?|capped at|a cap of|"
    r"within|by|no later than|au plus|au maximum|pas plus de|d'ici|dans les|"
    r"al massimo|non più di|entro(?: il| la| le| i)?|massimo)\s*$"
)
_LESS_THAN = re.compile(
    r"(?:less than|under|below|shorter than|fewer than|lower than|smaller than|cheaper than|"
    r"earlier than|before|moins de|avant|sous|inférieure? à|meno di|sotto|inferiore a|"
    r"minore di|prima d(?:i|elle))\s*$"
)
NEGATION_BEFORE = re.compile(
    r"\b(?:no|never|nothing|not|none|nobody|don't|doesn't|won't|mustn't|shouldn't|ne|pas|"
    r"jamais|rien|aucun|aucune|non|mai|niente|nulla|nessun[oa]?)\b"
)
_APPROX = re.compile(
    r"(?:about|around|roughly|nearly|almost|some|environ|vers|presque|circa|"
    r"quasi|più o meno)\s*$"
)


#: A rule that allows only the window it names ("only between 10:00 and 20:00").
_ONLY = re.compile(
    r"\s*\b(?:only|solely|exclusively|seulement|uniquement|solo|soltanto|solamente)\b"
)
#: Words after a bare hour that say which half of the day it is ("eight in the morning").
_DAY_HALF = re.compile(
    r"\s*(?:(?:o'clock\s+)?(?:in the|this|du|de l'|di|del|della)\s+)?"
    r"(morning|matin|mattina|mattino|afternoon|evening|night|après-midi|soir|pomeriggio|sera|notte)\b"
)


def _half_of_day(after: str) -> int | None:
    """0 (morning) or 1 (afternoon, evening) when the words after a bare hour say so."""
    m = _DAY_HALF.match(after)
    if m is None:
        return None
    return 0 if m.group(1) in ("morning", "matin", "mattina", "mattino") else 1


#: Weekday and "on/le/il" words between a bound and its time ("after Thursday noon").
_DAY_WORDS = re.compile(
    r"(?:\b(?:on|every|each|le|chaque|il|ogni)\s+)?\b(?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|lunedì|"
    r"martedì|mercoledì|giovedì|venerdì|sabato|domenica)s?\s*$"
)


@dataclass(frozen=True)
class Quantity:
    #: ``duration`` (minutes), ``clock`` (minutes after midnight), ``date`` (day of the
    #: year), ``amount``, ``percent``.
    dim: str
    #: The interval the sentence states or allows, and whether it is a bound ("at least"),
    #: not a plain value; ``forbidden``: the sentence rules the interval out ("never
    #: after ten").
    lo: float
    hi: float
    bound: bool = False
    forbidden: bool = False
    #: A bare clock hour under 13 is read both ways: 0 as written, 1 twelve hours later;
    #: -1 for a value with one reading. Two such readings are compared like with like.
    reading: int = -1


_HALF_PAST = re.compile(rf"\b(half|quarter) past ({_NUM})\b")


def _read(q: Quantity, reading: int, readings: int) -> Quantity:
    if readings < 2:
        return q
    return Quantity(q.dim, q.lo, q.hi, q.bound, q.forbidden, reading)


def _number(text: str) -> float | None:
    text = text.strip().casefold().rstrip(".,")
    if text in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[text])
    try:
        return (
            float(text.replace(",", ""))
            if "," in text and "." not in text and len(text.split(",")[-1]) == 3
            else float(text.replace(",", "."))
        )
    except ValueError:
        return None


#: A comma before these words and the value opens an appositive, not a new clause.
_CLAUSE_END = re.compile(r"[;:.!?]|,(?!\s*(?:in|at|around|à la|à|en|alla|a|verso)\s*$)")
#: "<bound> <a named moment>, <in|at> <value>": the words between the bound and the value.
_APPOSITIVE = re.compile(
    r"\b(before|after|until|avant|après|prima|dopo)\s+(?:the\s+|les?\s+|la\s+|l'|i\s+|"
    r"il\s+)?[^\W\d][\w' -]{0,30},\s*(?:in|at|around|à la|à|en|alla|a|verso)\s*$"
)


def _bounded(dim: str, value: float, before: str, *, spread: float = 0.0) -> Quantity:
    """A value with the bound the words just before it put on it."""
    tail = _DAY_WORDS.sub("", before[-60:])[-40:]
    # An appositive names the same moment again: "before the Ice Saints, in mid-May".
    tail = _APPOSITIVE.sub(lambda m: m.group(1) + " ", tail)
    clause = _CLAUSE_END.split(before[-80:])[-1]
    if dim == "duration" and _AFTER.search(tail):
        # "expire after 30 minutes", "deleted after thirty days": the moment it happens,
        # as "valid for 30 minutes" says, not a bound on how long something is
        return Quantity(dim, value - spread, value + spread)
    if m := _AT_LEAST.search(tail):
        q = Quantity(dim, value - spread, math.inf, bound=True)
    elif m := _MORE_THAN.search(tail):
        q = Quantity(dim, value + 1e-6, math.inf, bound=True)
    elif m := _AT_MOST.search(tail):
        q = Quantity(dim, -math.inf, value + spread, bound=True)
    elif m := _LESS_THAN.search(tail):
        q = Quantity(dim, -math.inf, value - 1e-6, bound=True)
    else:
        if _APPROX.search(tail):
            spread = max(spread, 0.15 * abs(value))
        return Quantity(dim, value - spread, value + spread)
    # The negation of a bound's own words ("no later than", "not less than") is the bound.
    own = clause.rfind(m.group(0).strip())
    negated = bool(NEGATION_BEFORE.search(clause[:own] if own >= 0 else clause))
    if negated:  # "no phone after ten": the bound names what is ruled out
        return Quantity(dim, q.lo, q.hi, bound=True, forbidden=True)
    return q


def _clock_minutes(hour: float, minute: float, suffix: str) -> list[float]:
    """A clock time in minutes after midnight; a bare hour under 13 may be a.m. or p.m."""
    suffix = suffix.replace(".", "")
    if suffix == "pm" and hour < 12:
        return [(hour + 12) * 60 + minute]
    if suffix == "am":
        return [(hour % 12) * 60 + minute]
    if suffix == "24" or hour == 0 or hour > 12:
        return [hour * 60 + minute]
    if 1 <= hour <= 4:  # "at four", "half past three": said of the afternoon
        return [(hour + 12) * 60 + minute]
    return [hour * 60 + minute, (hour + 12) * 60 + minute]


def folded(text: str) -> str:
    """``text`` as the value readings match it: NFC, straight apostrophes, case folded."""
    return unicodedata.normalize("NFC", text).replace("’", "'").casefold()


@functools.lru_cache(maxsize=4096)
def quantities(text: str) -> tuple[Quantity, ...]:
    """The quantities ``text`` states, each with its bound. Clock times that may be morning
    or evening ("until eleven") give one quantity per reading."""
    text = folded(text)
    out: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for m in _BETWEEN.finditer(text):
        lo, hi = _clock_of(m.group(1)), _clock_of(m.group(2))
        unit_after = re.match(rf"\s*(?:{_UNIT}|%|€|\$|euros?)\b", text[m.end() :])
        if lo is not None and hi is not None and not unit_after:
            clause = _CLAUSE_END.split(text[max(0, m.start() - 60) : m.start()])[-1]
            negated = bool(NEGATION_BEFORE.search(clause))
            # "only between 10:00 and 20:00", "entre 9h et 18h seulement": an allowed window
            after = _CLAUSE_END.split(text[m.end() : m.end() + 30])[0]
            only = not negated and bool(_ONLY.search(clause) or _ONLY.match(after))
            half = _half_of_day(text[m.end() :]) if len(hi) == 2 else None
            if half is not None:  # "between noon and eight in the evening"
                hi = [hi[half]]
            if len(lo) == len(hi) == 2 and lo[0] > hi[0]:
                pairs = [(lo[0], hi[1])]  # "between nine and five": 9:00 to 17:00
            elif len(lo) == 1 and len(hi) == 2:  # "between noon and eight": the later one
                pairs = [(lo[0], hi[1] if hi[0] < lo[0] else hi[0])]
            else:
                pairs = list(zip(lo, hi, strict=False))
            for reading, (a, b) in enumerate(pairs):
                q = Quantity("clock", a, b, bound=negated or only, forbidden=negated)
                out.append(_read(q, reading, len(pairs)))
            taken.append(m.span())
    for m in _HALF_PAST.finditer(text):
        past = _number(m.group(2))
        if past is None or past > 12 or not free(*m.span()):
            continue
        readings = _clock_minutes(past, {"half": 30.0, "quarter": 15.0}[m.group(1)], "")
        half = _half_of_day(text[m.end() :]) if len(readings) == 2 else None
        if half is not None:  # "half past seven in the morning"
            readings = [readings[half]]
        for reading, at in enumerate(readings):
            out.append(_read(_bounded("clock", at, text[: m.start()]), reading, len(readings)))
        taken.append(m.span())
    for m in _HOURS_MINUTES.finditer(text):  # "7 h 20 min", "2 hours 15 minutes"
        if free(*m.span()):
            hours, extra = float(m.group(1)), float(m.group(2))
            out.append(_bounded("duration", 60 * hours + extra, text[: m.start()]))
            taken.append(m.span())
    for m in _HALF_HOUR.finditer(text):
        if free(*m.span()):
            out.append(_bounded("duration", 30.0, text[: m.start()]))
            taken.append(m.span())
    for m in _DURATION.finditer(text):
        count = _number(m.group(1))
        if count is None or not free(*m.span()):
            continue
        if "and a half" in m.group(0) or m.group(3):  # "une heure et demie", "un'ora e mezza"
            count += 0.5
        out.append(_bounded("duration", count * _UNITS[m.group(2)], text[: m.start()]))
        taken.append(m.span())
    for m in _CLOCK.finditer(text):
        if not free(*m.span()):
            continue
        if m.group(5):
            word = m.group(5)
            minutes = [0.0] if word in ("midnight", "minuit", "mezzanotte") else [720.0]
        else:
            hour = float(m.group(1))
            minute = float(m.group(2) or m.group(3) or 0)
            if hour > 24 or minute > 59:
                continue
            suffix = m.group(4) or ("24" if (m.group(2) or "h" in m.group(0)) else "")
            minutes = _clock_minutes(hour, minute, suffix)
            half = _half_of_day(text[m.end() :]) if len(minutes) == 2 else None
            if half is not None:
                minutes = [minutes[half]]
        for reading, at in enumerate(minutes):
            q = _bounded("clock", at, text[: m.start()])
            if at == 0.0 and q.bound and math.isinf(q.lo):  # "by midnight": the day's end
                q = Quantity("clock", q.lo, q.hi + 1440.0, bound=True, forbidden=q.forbidden)
            out.append(_read(q, reading, len(minutes)))
        taken.append(m.span())
    for m in _CLOCK_WORD.finditer(text):
        start = m.start(1)
        if not free(start, m.end(1)):
            continue
        hour_said = _number(m.group(1))
        if hour_said is None or hour_said > 24:
            continue
        readings = _clock_minutes(hour_said, 0, "")
        half = _half_of_day(text[m.end(1) :]) if len(readings) == 2 else None
        if half is not None:
            readings = [readings[half]]
        for reading, at in enumerate(readings):
            q = _bounded("clock", at, text[: m.end(1) - len(m.group(1))])
            out.append(_read(q, reading, len(readings)))
        taken.append((start, m.end(1)))
    for m in _DATE.finditer(text):
        if not free(*m.span()):
            continue
        if m.group(1):
            month, day = MONTH_NUMBERS[m.group(2)], int(m.group(1))
        elif m.group(3):
            month, day = MONTH_NUMBERS[m.group(3)], int(m.group(4))
        else:
            middle, reach = _PART_OF_MONTH[m.group(5)]
            at = _day_of_year(MONTH_NUMBERS[m.group(6)], middle)
            out.append(_bounded("date", at, text[: m.start()], spread=reach))
            taken.append(m.span())
            continue
        if 1 <= day <= 31:
            out.append(_bounded("date", _day_of_year(month, day), text[: m.start()]))
            taken.append(m.span())
    for m in _PERCENT.finditer(text):
        pct = _number(m.group(1))
        if pct is not None and free(*m.span()):
            out.append(_bounded("percent", pct, text[: m.start()]))
            taken.append(m.span())
    for m in _MONEY.finditer(text):
        amount = _number(m.group(1) or m.group(3))
        scale = m.group(2) or m.group(4)
        if amount is not None and scale:
            amount *= _SCALE[scale]
        if amount is not None and free(*m.span()):
            out.append(_bounded("amount", amount, text[: m.start()]))
            taken.append(m.span())
    # A bare number under a bound ("the budget is capped at 500") is an amount too.
    for m in re.finditer(r"\b\d[\d,.]*\b", text):
        if not free(*m.span()):
            continue
        before = text[: m.start()]
        number = _number(m.group(0))
        if number is None or (1900 <= number <= 2100 and "." not in m.group(0)):
            continue  # a year
        q = _bounded("amount", number, before)
        if q.bound or re.search(
            r"\b(?:spent|paid|cost|costs|costed|dépensé|payé|coûte|speso|pagato|"
            r"costa|budget)\b[^.]{0,20}$",
            before,
        ):
            out.append(q)
            taken.append(m.span())
    from desktop.flows.schedule import (  # here: schedule builds on this module
        day_part_quantities,
        frequency_quantities,
        week_quantities,
    )

    has_clock = any(q.dim == "clock" for q in out)
    out += week_quantities(text) + frequency_quantities(text)
    out += day_part_quantities(text, has_clock)
    return tuple(out)


def _clock_of(word: str) -> list[float] | None:
    m = _CLOCK.match(word)
    if m and m.group(5):
        return [0.0] if m.group(5) in ("midnight", "minuit", "mezzanotte") else [720.0]
    if m:
        hour, minute = float(m.group(1)), float(m.group(2) or m.group(3) or 0)
        suffix = m.group(4) or ("24" if (m.group(2) or "h" in m.group(0)) else "")
        return _clock_minutes(hour, minute, suffix) if hour <= 24 else None
    value = _number(word.rstrip(",."))
    if value is not None and value <= 24 and float(value).is_integer():
        return _clock_minutes(value, 0, "")
    return None
