"""Routing: the model files one candidate fact under a subject and a section, and tidies it.

One small structured request per candidate (the structured-output policy: JSON schema, one
stricter retry, raw answers kept on failure)::

    {"fact": "The user prefers to deploy on Tuesdays.",
     "subject": "<one of the offered subjects>" | "new",
     "new_subject": "<a short name, only with subject = new>",
     "section": "facts" | "decisions" | "plans and dates" | "preferences" | "people"}

The offered subjects are an enum: the existing subjects the statement names,
the names code found in the statement (:func:`~.names.suggest_subjects`), then
other existing subjects. When the sentence's own subject is one name ("Ana bakes
bread on Saturdays", :func:`~.subject.sentence_subject`), that name is the only
subject offered and the one used: the model then chooses only the section and the
wording. A ``new_subject`` is length- and pattern-limited by
the schema and checked again in code (:func:`~.names.name_problem`: never a
token-like word); a refused name falls back to the first offered subject, and
the report says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.flows.memory.extract import Candidate
from desktop.flows.memory.names import MAX_CHARS, NAME_PATTERN, name_problem, suggest_subjects
from desktop.flows.memory.pages import SubjectPage, subject_key
from desktop.flows.memory.prompt import template
from desktop.flows.memory.subject import sentence_subject
from inference.base import Message

#: The sections a fact may go under, as written on the page.
SECTIONS = ("Facts", "Decisions", "Plans and dates", "Preferences", "People")
NEW = "new"
#: Existing subjects offered besides those the statement names.
MAX_OTHER_SUBJECTS = 8
MAX_FACT_CHARS = 240


@dataclass(frozen=True)
class Offer:
    """What one routing request offers: subjects (best first) and whether any is new."""

    subjects: tuple[str, ...]
    #: Offered names that are not existing subjects (code found them in the statement).
    fresh: tuple[str, ...]
    #: The sections the statement's words allow (code's best guess first; Facts always).
    sections: tuple[str, ...] = SECTIONS
    #: The subject was read in code from the sentence (the only one offered).
    fixed: bool = False


@dataclass(frozen=True)
class Route:
    subject: str
    section: str
    #: The model's rephrasing ("" when it gave none).
    rephrased: str
    #: Set when the model's subject was refused and the first offer was used instead.
    subject_refused: str = ""
    refused_reason: str = ""


def make_offer(
    candidate: Candidate,
    pages: Sequence[SubjectPage],
    *,
    near: Sequence[str] = (),
    names: frozenset[str] = frozenset(),
) -> Offer:
    """The sentence's own subject alone when it is one name; else the subjects the
    statement names, names found in it, then ``near`` existing subjects.

    Other existing subjects are not offered: the shipped 135M model picks an
    unrelated existing subject when offered one ("Marco is the new tech lead" → "Atlas API").
    ``names``: folded words the conversation uses as names
    (:func:`~.subject.conversation_names`).
    """
    sections = plausible_sections(candidate)
    known = names | {subject_key(n) for p in pages for n in (p.name, *p.aliases)}
    own = sentence_subject(candidate.text, known=known)
    if own and name_problem(own, known=[p.name for p in pages]) is None:
        page = _page_named(own, pages)
        return Offer((page or own,), () if page else (own,), sections, fixed=True)
    named, fresh = suggest_subjects(candidate.text, pages, context=candidate.context)
    subjects = tuple(dict.fromkeys([*named, *fresh, *near[:MAX_OTHER_SUBJECTS]]))
    return Offer(subjects, tuple(n for n in fresh if n not in named), sections)


def _page_named(name: str, pages: Sequence[SubjectPage]) -> str | None:
    """The existing subject called ``name`` (or by an alias), or whose name starts with it
    ("Atlas" → "Atlas API")."""
    key = subject_key(name)
    for page in pages:
        if any(subject_key(n) == key for n in (page.name, *page.aliases)):
            return page.name
    for page in pages:
        if any(subject_key(n).startswith(key + " ") for n in (page.name, *page.aliases)):
            return page.name
    return None


_PEOPLE = re.compile(
    r"\b(sister|brother|mother|mum|mom|father|dad|wife|husband|partner|son|daughter|friend|"
    r"colleague|boss|manager|lead|cousin|aunt|uncle|neighbou?r|soeur|frère|frere|sorella|"
    r"fratello|amico|amica|ami|amie)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decided|decide|chose|choose|chosen|picked|agreed|settled on|going with|switched|"
    r"will use|we are not|we're not|won't|stays on|décidé|choisi|deciso|scelto)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(prefer|prefers|favourite|favorite|like|likes|love|loves|hate|hates|allergic|"
    r"always|never|préfère|prefere|preferisco|preferito)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"\b(due|deadline|appointment|meeting|tomorrow|next week|tonight|plan|plans|schedule|"
    r"arrives|leaves|flight|january|february|march|april|june|july|august|september|october|"
    r"november|december|demain|domani|rendez-vous|appuntamento)\b|\b\d{1,2}(st|nd|rd|th)?\b",
    re.IGNORECASE,
)


def plausible_sections(candidate: Candidate) -> tuple[str, ...]:
    """The sections the model may choose from: those the statement's words point to, and Facts.

    Measured on the recorded conversation: offered all five, the shipped 135M model
    filed "We chose Rust …" under People and "Marco is the new tech lead" under
    Preferences; so the schema offers only the sections a cue word supports.
    """
    text = candidate.cited_text
    cues = (
        ("Decisions", _DECISION),
        ("People", _PEOPLE),
        ("Plans and dates", _PLAN),
        ("Preferences", _PREFERENCE),
    )
    found = [name for name, cue in cues if cue.search(text)]
    return (*found, "Facts")


def route_schema(offer: Offer) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "fact": {"type": "string", "minLength": 3, "maxLength": MAX_FACT_CHARS},
            "subject": {"enum": [*offer.subjects] if offer.fixed else [*offer.subjects, NEW]},
            "new_subject": {"type": "string", "maxLength": MAX_CHARS, "pattern": NAME_PATTERN},
            "section": {"enum": [s.lower() for s in offer.sections]},
        },
        "required": ["fact", "subject", "section"],
    }


def route_shape(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    if not isinstance(value.get("subject"), str) or not isinstance(value.get("section"), str):
        return None
    return value


def route_messages(candidate: Candidate, offer: Offer) -> list[Message]:
    context = f'The assistant had asked: "{candidate.context}"\n' if candidate.context else ""
    user = template("route_user.txt").format(
        statement=candidate.text,
        context=context,
        subjects=", ".join(json.dumps(s, ensure_ascii=False) for s in offer.subjects) or "(none)",
        sections=", ".join(s.lower() for s in offer.sections),
    )
    return [Message("system", template("route_system.txt").strip()), Message("user", user)]


def read_route(
    answer: dict[str, Any], candidate: Candidate, offer: Offer, pages: Sequence[SubjectPage]
) -> Route:
    """The model's answer, checked: an unknown section → Facts; a refused subject → first offer."""
    section = next(
        (s for s in offer.sections if s.lower() == str(answer.get("section", "")).strip().lower()),
        offer.sections[0],
    )
    rephrased = " ".join(str(answer.get("fact") or "").split())[:MAX_FACT_CHARS]
    if offer.fixed:
        return Route(offer.subjects[0], section, rephrased)
    chosen = str(answer.get("subject") or "").strip()
    known = [p.name for p in pages]
    if chosen == NEW:
        chosen = " ".join(str(answer.get("new_subject") or "").split())
    by_key = {subject_key(s): s for s in offer.subjects}
    if subject_key(chosen) in by_key:
        chosen = by_key[subject_key(chosen)]
    problem = name_problem(chosen, said=candidate.cited_text, known=known) if chosen else "fragment"
    if problem is None:
        return Route(chosen, section, rephrased)
    fallback = offer.subjects[0] if offer.subjects else ""
    # A token-like name is not repeated in the report: it may be a secret the model echoed.
    shown = "[secret:subject-name]" if problem == "token" else chosen
    return Route(fallback, section, rephrased, subject_refused=shown, refused_reason=problem)
