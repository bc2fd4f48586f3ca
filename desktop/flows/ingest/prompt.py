"""The ingest prompt, its JSON schema, and the one repair request.

Templates: ``resources/prompts/ingest-system.txt``, ``ingest-user.txt``
(``{source}``, ``{names}``, ``{sentences}``, ``{pages}``) and ``ingest-repair.txt``
(``{previous}``, ``{errors}``), plus ``ingest-repair-title-page.txt`` when the repair asks
the simpler question (no new page). Sentences are numbered 1…N; the model routes
numbers, code quotes the sentences.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from desktop.flows.ingest.context import ContextPage, render_page
from desktop.flows.ingest.sentences import Sentence
from desktop.resources import resources_dir
from inference.base import Message

SEVERITIES = ("high", "medium", "low")
#: The previous answer sent back in the repair request is cut to this many characters.
REPAIR_CHARS = 20_000


@functools.cache
def template(name: str) -> str:
    return (resources_dir() / "prompts" / name).read_text(encoding="utf-8")


_WORD = r"[A-Za-z][A-Za-z+]{0,19}[0-9]{0,4}(-[A-Za-z]{1,19})?"
#: What a page name may be; the grammar keeps a constrained model inside it: 1–6 words
#: of letters (a number of up to 4 digits may end one, or stand alone; one hyphen may
#: join two), separated by single spaces. No quote, comma or long digit run can be
#: generated; the rest of the rules (:func:`.names.page_name_problem`) is checked after.
NAME_PATTERN = rf"^{_WORD}( ({_WORD}|[0-9]{{1,4}})){{0,5}}$"


def plan_schema(
    *,
    claims: int,
    max_pages: int,
    max_contradictions: int,
    pages: Sequence[str] = (),
    names: Sequence[str] = (),
    new_pages: bool = True,
) -> dict[str, Any]:
    """Bounded, enumerated where possible: a 135M model loops or invents without bounds.

    Claim numbers are an enum of the numbered sentences; a contradiction's page
    is one of the pages shown (none shown: no contradiction can be claimed). The
    title and each page name are one of ``names`` (the source's own title and
    headings, :func:`.names.offered_names`) or of the pages shown; with no name
    offered, a name matches :data:`NAME_PATTERN`. ``new_pages=False`` (the simpler
    question of a repair): sentences go to the title page or a page shown, none other.
    """
    choices = list(dict.fromkeys([*names, *pages]))
    name: dict[str, Any] = (
        {"enum": choices} if names else {"type": "string", "pattern": NAME_PATTERN}
    )
    routed: dict[str, Any] = name
    if not new_pages:  # an empty enum is no grammar llama.cpp accepts: no item at all
        routed, max_pages = ({"enum": list(pages)}, max_pages) if pages else (name, 0)
    number = {"enum": list(range(1, max(1, claims) + 1))}
    page_item: dict[str, Any] = {
        "type": "object",
        "properties": {
            "page": {"enum": list(pages)} if pages else name,
            "existing_claim": {"type": "string", "minLength": 10, "maxLength": 240},
            "claim": number,
            "severity": {"enum": list(SEVERITIES)},
        },
        "required": ["page", "existing_claim", "claim", "severity"],
    }
    return {
        "type": "object",
        "properties": {
            "title": name,
            "summary": {"type": "string", "maxLength": 320},
            "pages": {
                "type": "array",
                "maxItems": max_pages,
                "items": {
                    "type": "object",
                    "properties": {
                        "page": routed,
                        "claims": {
                            "type": "array",
                            "items": number,
                            "minItems": 1,
                            "maxItems": max(1, min(claims, 6)),
                        },
                    },
                    "required": ["page", "claims"],
                },
            },
            "contradictions": {
                "type": "array",
                "maxItems": max_contradictions if pages else 0,
                "items": page_item,
            },
        },
        "required": ["title", "summary", "pages", "contradictions"],
    }


def shape(value: Any) -> dict[str, Any] | None:
    """Accept an object with a string title or summary; lists default to empty.

    Anything finer (types inside lists, numbers in range, names) is checked by
    validation, whose errors go into the repair request.
    """
    if not isinstance(value, dict):
        return None
    if not any(isinstance(value.get(k), str) for k in ("title", "summary")) and not isinstance(
        value.get("pages"), list
    ):
        return None
    return value


def render_sentences(sentences: Sequence[Sentence]) -> str:
    return "\n".join(f"[{i}] {s.text}" for i, s in enumerate(sentences, 1))


def build_messages(
    *,
    source_title: str,
    sentences: Sequence[Sentence],
    pages: Sequence[ContextPage],
    names: Sequence[str] = (),
) -> list[Message]:
    user = template("ingest-user.txt").format(
        source=source_title,
        names="\n".join(f"- {n}" for n in names) or "(none: name pages yourself)",
        sentences=render_sentences(sentences),
        pages="\n\n".join(render_page(p) for p in pages) or "(none)",
    )
    return [Message("system", template("ingest-system.txt").strip()), Message("user", user)]


def repair_messages(
    messages: Sequence[Message],
    *,
    previous: str,
    errors: Sequence[str],
    max_chars: int,
    new_pages: bool = True,
) -> list[Message]:
    """The same context, plus the refused answer (capped) and why it was refused;
    ``new_pages=False``: and that this time no new page is named."""
    cap = max(0, min(REPAIR_CHARS, max_chars))
    cut = previous.replace("\x00", "")[:cap]
    note = template("ingest-repair.txt").format(
        previous=cut or "(nothing readable)",
        errors="\n".join(f"- {e}" for e in errors),
    )
    if not new_pages:
        note = note.rstrip() + "\n" + template("ingest-repair-title-page.txt").strip()
    out = list(messages)
    out[-1] = Message(out[-1].role, out[-1].content.rstrip() + "\n\n" + note)
    return out
