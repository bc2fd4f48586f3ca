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
#: How far ahead a date is looked for (days after the line was spoken).
DATE_HORIZON_DAYS = 400
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
    """``(kind, YYYY-MM-DD)`` when ``text`` names exactly one day (the nearest), else None."""
    plain = _WEEKDAY_WORDS.sub(" ", fold(text))
    if not re.search(r"\d|today|tomorrow|tonight|demain|domani|oggi|aujourd", plain):
        return None
    found = [
        day
        for offset in range(-1, DATE_HORIZON_DAYS)
        if date_supported(day := spoken + timedelta(days=offset), plain, spoken=spoken)
    ]
    # A day and month without a year matches every year: the nearest one is meant.
    if not found or len({(d.month, d.day) for d in found}) != 1:
        return None
    kind = "deadline" if _DEADLINE.search(text) else "event"
    return kind, found[0].isoformat()
