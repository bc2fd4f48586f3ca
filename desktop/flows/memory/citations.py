"""Citation control: every proposed fact is checked in code before anything is written.

Checks, in order (the first failure is the recorded reason):

``malformed``            no subject or no text, or citations that are not line numbers
``no_citation``          the fact cites nothing
``missing_line``         a cited number is not a line of the input the model was given
                         (withdrawn lines are never given, so citing one fails here too)
``assistant_only``       none of the cited lines was spoken by the user
``question``             the fact is a question ("How do I read a CSV file?"): the small
                         model copies the user's questions, which are not facts
``unsupported_content``  under :data:`~.support.SUPPORT_THRESHOLD` of the fact's content
                         words are in the cited text, or a name or number is not

A date the cited text does not name is stripped (``date_stripped`` is noted on
the accepted fact); the fact itself is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from desktop.flows.memory.batches import RawLine
from desktop.flows.memory.pages import KINDS, Fact, clean_subject_name
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.memory.support import (
    SUPPORT_THRESHOLD,
    date_supported,
    support_ratio,
    unsupported_names,
)

Reason = Literal[
    "malformed", "no_citation", "missing_line", "assistant_only", "unsupported_content", "question"
]
REASONS: tuple[Reason, ...] = (
    "malformed",
    "no_citation",
    "missing_line",
    "assistant_only",
    "unsupported_content",
    "question",
)


@dataclass(frozen=True)
class Checked:
    """A fact that passed, with what was adjusted."""

    fact: Fact
    support: float
    date_stripped: str | None = None


@dataclass(frozen=True)
class Rejected:
    reason: Reason
    detail: str
    proposal: dict[str, Any]
    #: Line ids of the cited lines that exist (to re-queue them).
    line_ids: tuple[str, ...] = ()


def check_fact(
    proposal: Mapping[str, Any],
    lines: Mapping[int, RawLine],
    *,
    threshold: float = SUPPORT_THRESHOLD,
) -> Checked | Rejected:
    """Check one proposed fact against the numbered input lines it was made from."""
    raw = dict(proposal)
    subject = clean_subject_name(str(raw.get("subject") or ""))
    # Masked again: the model only saw masked text, but a page must never hold a secret.
    text = mask_secrets(" ".join(str(raw.get("text") or "").split())).text
    section = " ".join(str(raw.get("section") or "Notes").split())[:80] or "Notes"
    cites = raw.get("citations")
    if not subject or not text:
        return Rejected("malformed", "the fact has no subject or no text", raw)
    if not isinstance(cites, list) or not all(isinstance(c, int) for c in cites):
        return Rejected("malformed", "citations must be a list of line numbers", raw)
    numbers = list(dict.fromkeys(cites))
    if not numbers:
        return Rejected("no_citation", "the fact cites no line", raw)
    known = [lines[n] for n in numbers if n in lines]
    ids = tuple(line.line_id for line in known)
    missing = [n for n in numbers if n not in lines]
    if missing:
        shown = ", ".join(str(n) for n in missing[:5])
        return Rejected("missing_line", f"cited line(s) {shown} not in the input", raw, ids)
    if not any(line.role == "user" for line in known):
        return Rejected("assistant_only", "only assistant lines are cited", raw, ids)
    if text.rstrip().endswith("?"):
        return Rejected("question", "a question is not a fact", raw, ids)
    cited_text = "\n".join(line.text for line in known)
    ratio = support_ratio(text, cited_text, allowed=(subject, section))
    if ratio < threshold:
        return Rejected(
            "unsupported_content",
            f"{ratio:.0%} of its content words are in the cited lines (needs {threshold:.0%})",
            raw,
            ids,
        )
    names = unsupported_names(text, cited_text, allowed=(subject, section))
    if names:
        shown = ", ".join(names[:5])
        return Rejected(
            "unsupported_content", f"names or numbers not in the cited lines: {shown}", raw, ids
        )
    kind = str(raw.get("kind") or "fact")
    kind = kind if kind in KINDS else "fact"
    fact_date, stripped = _checked_date(raw.get("date"), known)
    fact = Fact(
        subject=subject,
        section=section,
        text=text,
        citations=ids,
        kind=kind,
        date=fact_date,
    )
    return Checked(fact, ratio, stripped)


def _checked_date(value: object, lines: list[RawLine]) -> tuple[str | None, str | None]:
    """(kept date, stripped date)."""
    if value in (None, ""):
        return None, None
    try:
        wanted = date.fromisoformat(str(value))
    except ValueError:
        return None, str(value)
    for line in lines:
        try:
            spoken = date.fromisoformat(line.time[:10])
        except ValueError:
            continue
        if date_supported(wanted, line.text, spoken=spoken):
            return wanted.isoformat(), None
    return None, wanted.isoformat()
