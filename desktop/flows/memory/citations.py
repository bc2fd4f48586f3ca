"""Citation control: the gate every fact passes before it is written.

A candidate's citations are fixed in code (:mod:`.extract`): its own user line,
and the assistant question it answers when it is a short answer. What the gate
checks is the *wording* the model proposed:

1. **Lexical support** (:mod:`.support`): at least :data:`~.support.SUPPORT_THRESHOLD`
   of the rephrasing's content words, and every name and number, are in the
   cited lines (the subject name and section are allowed words); and the
   rephrasing keeps :data:`COVERAGE_THRESHOLD` of the statement's content words
   and all its names and numbers (a tidy, not a cut).
2. **Entailment** (when a judge is given): ``judge.score([(cited, fact)])`` must give
   P(entailment) ≥ :data:`~.support.ENTAILMENT_THRESHOLD` and P(contradiction) <
   :data:`~.support.CONTRADICTION_CEILING`: a fact its cited lines contradict is
   never written.

A rephrasing that fails either check is not dropped: the user's own words are
kept verbatim (``wording = "verbatim"``, with the reason), since they are what
the cited line says. Secrets are masked again (a page must never hold one).

A date is found in code from the cited text (an explicit day and month, or
today / tomorrow / in N days, resolved against the day the line was spoken);
weekday-only mentions ("on Tuesdays") give no date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from desktop.flows.memory.extract import Candidate
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.memory.support import (
    _MONTHS,
    CONTRADICTION_CEILING,
    ENTAILMENT_THRESHOLD,
    SUPPORT_THRESHOLD,
    date_supported,
    fold,
    support_ratio,
    unsupported_names,
)
from inference.judge import CONTRADICTION, ENTAILMENT, Judge

Wording = Literal["rephrased", "verbatim"]
#: A rephrasing must keep this share of the statement's content words (and all its names
#: and numbers): "Lisbon" is supported by "My sister Giulia arrives in Lisbon…" but says nothing.
COVERAGE_THRESHOLD = 0.6
#: "the user" / "l'utilisateur" / "l'utente": how a model names the speaker it should not.
_THIRD_PERSON_USER = re.compile(
    r"\b(?:the user|user's|l['’]utilisat(?:eur|rice)|l['’]utente)\b", re.I
)
_DEADLINE = re.compile(r"\b(due|deadline|by|before|must|until|échéance|entro|scadenza)\b", re.I)
#: Recurring weekdays ("on Tuesdays", "every Monday") name no single day.
_WEEKDAY_WORDS = re.compile(
    r"\b(?:every |each )(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b|"
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s\b"
)


@dataclass(frozen=True)
class Gated:
    """The wording a fact is written with, and why."""

    text: str
    wording: Wording
    #: Lexical support of the written text (1.0 for verbatim words).
    support: float
    #: P(entailment) / P(contradiction) of the cited lines → the written text (None: no judge).
    entailment: float | None = None
    contradiction: float | None = None
    #: Why the rephrasing was not used ("" when it was, or when there was none).
    fallback_reason: str = ""


def gate_fact(
    candidate: Candidate,
    rephrased: str,
    *,
    allowed: tuple[str, ...] = (),
    judge: Judge | None = None,
    threshold: float = SUPPORT_THRESHOLD,
) -> Gated:
    """The rephrasing if the cited lines support it, else the user's own words."""
    cited = candidate.cited_text
    verbatim = mask_secrets(candidate.verbatim).text
    text = mask_secrets(" ".join(rephrased.split())).text
    if not text or text.casefold() == candidate.text.casefold():
        return Gated(verbatim, "verbatim", 1.0, *_judged(judge, cited, verbatim))
    if text.rstrip().endswith("?"):
        return _verbatim(verbatim, judge, cited, "the rephrasing is a question")
    if _THIRD_PERSON_USER.search(text):
        # "The user prefers Postgres … I build": a fact is kept in the user's own voice.
        return _verbatim(
            verbatim, judge, cited, "the rephrasing speaks of the user in the third person"
        )
    ratio = support_ratio(text, cited, allowed=allowed)
    if ratio < threshold:
        reason = f"{ratio:.0%} of its content words are in the cited lines (needs {threshold:.0%})"
        return _verbatim(verbatim, judge, cited, reason)
    names = unsupported_names(text, cited, allowed=allowed)
    if names:
        return _verbatim(
            verbatim,
            judge,
            cited,
            f"names or numbers not in the cited lines: {', '.join(names[:5])}",
        )
    kept = support_ratio(candidate.text, text, allowed=allowed)
    lost = unsupported_names(candidate.text, text, allowed=allowed)
    if kept < COVERAGE_THRESHOLD or lost:
        what = f"drops {', '.join(lost[:5])}" if lost else f"keeps {kept:.0%} of the statement"
        return _verbatim(verbatim, judge, cited, f"the rephrasing {what}")
    entail, contra = _judged(judge, cited, text)
    if contra is not None and contra >= CONTRADICTION_CEILING:
        return _verbatim(
            verbatim, judge, cited, f"the judge says the cited lines contradict it ({contra:.2f})"
        )
    if entail is not None and entail < ENTAILMENT_THRESHOLD:
        return _verbatim(
            verbatim, judge, cited, f"the judge does not find it entailed ({entail:.2f})"
        )
    return Gated(text, "rephrased", round(ratio, 3), entail, contra)


def _verbatim(verbatim: str, judge: Judge | None, cited: str, reason: str) -> Gated:
    entail, contra = _judged(judge, cited, verbatim)
    return Gated(verbatim, "verbatim", 1.0, entail, contra, reason)


def _judged(judge: Judge | None, cited: str, text: str) -> tuple[float | None, float | None]:
    if judge is None:
        return None, None
    row = judge.score([(cited, text)])[0]
    return round(float(row[ENTAILMENT]), 3), round(float(row[CONTRADICTION]), 3)


def find_date(text: str, spoken: date) -> tuple[str, str] | None:
    """``(kind, YYYY-MM-DD)`` when ``text`` names exactly one day, else None.

    A day and month without a year is the nearest one from the day it was said.
    Parsed directly (a search over every day of the year recompiled ~40 patterns
    per day: seconds per fact on a busy machine), then confirmed by
    :func:`~.support.date_supported`, the rule citation control documents.
    """
    plain = _WEEKDAY_WORDS.sub(" ", fold(text))
    found: set[date] = set()
    for m in _ISO.finditer(plain):
        try:
            found.add(date.fromisoformat(m.group(0)))
        except ValueError:
            continue
    for m in _DAY_MONTH.finditer(plain):
        _add(found, spoken, int(m.group(1)), _MONTH_OF[m.group(2)], m.group(3))
    for m in _MONTH_DAY.finditer(plain):
        _add(found, spoken, int(m.group(2)), _MONTH_OF[m.group(1)], m.group(3))
    found |= _relative(plain, spoken)
    if len(found) != 1:
        return None
    (day,) = found
    if not date_supported(day, plain, spoken=spoken):
        return None
    kind = "deadline" if _DEADLINE.search(text) else "event"
    return kind, day.isoformat()


def _add(found: set[date], spoken: date, day: int, month: int, year: str | None) -> None:
    try:
        if year:
            found.add(date(int(year), month, day))
            return
        this = date(spoken.year, month, day)
        found.add(this if this >= spoken - timedelta(days=1) else date(spoken.year + 1, month, day))
    except ValueError:
        return


def _relative(text: str, spoken: date) -> set[date]:
    out: set[date] = set()
    if re.search(r"\b(today|tonight|this evening|aujourd'hui|ce soir|oggi|stasera)\b", text):
        out.add(spoken)
    if re.search(r"\b(day after tomorrow|apres-demain|dopodomani)\b", text):
        out.add(spoken + timedelta(days=2))
    elif re.search(r"\b(tomorrow|demain|domani)\b", text):
        out.add(spoken + timedelta(days=1))
    for n in re.findall(r"\b(?:in|dans|tra|fra)\s+(\d{1,3})\s+(?:days?|jours?|giorni)\b", text):
        out.add(spoken + timedelta(days=int(n)))
    for i, name in enumerate(_WEEKDAY_NAMES):
        if re.search(rf"\bnext\s+{name}\b", text):
            return set(out) | {date.min, date.max}  # "next Friday": this one or the one after
        if re.search(rf"\b(?:on|this|by|until|before)\s+{name}\b", text):
            out.add(spoken + timedelta(days=(i - spoken.weekday()) % 7 or 7))
    return out


_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_OF = {fold(name): month for month, names in _MONTHS.items() for name in names}
_MONTH_RE = "|".join(sorted((re.escape(n) for n in _MONTH_OF), key=len, reverse=True))
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th|er)?\s+(?:of\s+|de\s+|d')?({_MONTH_RE})\b\.?(?:,?\s+(\d{{4}}))?"
)
_MONTH_DAY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?")
