"""The consolidation prompt and its JSON schema, sized to the model's context.

Templates: ``resources/prompts/consolidate_system.txt`` and
``consolidate_user.txt`` (placeholders ``{subjects}``, ``{day}``,
``{weekday}``, ``{lines}``, ``{max_facts}``). Lines are numbered 1…N within
one request; the numbers map back to stable line ids in code, so the model
never has to copy an id.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from desktop.flows.memory.batches import RawLine
from desktop.flows.memory.pages import KINDS, SubjectPage, subject_key
from desktop.resources import resources_dir
from inference.base import Generator, Message

#: Tokens kept free besides the answer (chat template, rounding of counts).
MARGIN_TOKENS = 96
MAX_SUBJECT_TOKENS = 300


@functools.cache
def template(name: str) -> str:
    return (resources_dir() / "prompts" / name).read_text(encoding="utf-8")


def fact_schema(max_facts: int, *, min_facts: int = 0) -> dict[str, Any]:
    """Bounded arrays and strings: the 135M model loops without bounds."""
    short = {"type": "string", "maxLength": 60}
    return {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "minItems": min_facts,
                "maxItems": max_facts,
                "items": {
                    "type": "object",
                    # "text" first: the small model puts its best words in the first string.
                    "properties": {
                        "text": {"type": "string", "maxLength": 240},
                        "citations": {
                            "type": "array",
                            "items": {"type": "integer"},
                            "minItems": 1,
                            "maxItems": 4,
                        },
                        "subject": short,
                        "section": {"type": "string", "maxLength": 40},
                        "kind": {"enum": list(KINDS)},
                        "date": {"type": "string", "maxLength": 10},
                    },
                    "required": ["text", "citations", "subject", "section", "kind", "date"],
                },
            },
            "new_subjects": {
                "type": "array",
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": short,
                        "aliases": {"type": "array", "items": short, "maxItems": 3},
                    },
                    "required": ["name", "aliases"],
                },
            },
        },
        "required": ["facts", "new_subjects"],
    }


def shape(value: Any) -> dict[str, Any] | None:
    """Accept ``{"facts": [...], …}`` (new_subjects optional) or a bare list of facts."""
    if isinstance(value, list):
        value = {"facts": value}
    if not isinstance(value, dict) or not isinstance(value.get("facts"), list):
        return None
    facts = [f for f in value["facts"] if isinstance(f, dict)]
    subjects = value.get("new_subjects")
    subjects = [s for s in subjects if isinstance(s, dict)] if isinstance(subjects, list) else []
    return {"facts": facts, "new_subjects": subjects}


def render_line(number: int, line: RawLine) -> str:
    return f"[{number}] {line.role}: {line.text}"


def subjects_block(pages: Sequence[SubjectPage], lines: Sequence[RawLine], gen: Generator) -> str:
    """Existing subjects, those named in the lines first, within a token budget."""
    text = subject_key(" ".join(line.text for line in lines))
    named = [p for p in pages if any(subject_key(n) in text for n in (p.name, *p.aliases))]
    rest = [p for p in pages if p not in named]
    out: list[str] = []
    used = 0
    for page in named + rest:
        entry = f"- {page.name}" + (f": {', '.join(page.aliases)}" if page.aliases else "")
        cost = gen.count_tokens(entry) + 1
        if used + cost > MAX_SUBJECT_TOKENS:
            break
        out.append(entry)
        used += cost
    return "\n".join(out) if out else "(none yet)"


@dataclass(frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    #: Request line number → raw line.
    numbered: dict[int, RawLine]


def build_prompt(lines: Sequence[RawLine], *, subjects: str, max_facts: int) -> Prompt:
    numbered = {i + 1: line for i, line in enumerate(lines)}
    day = lines[0].time[:10] if lines else ""
    try:
        weekday = date.fromisoformat(day).strftime("%A")
    except ValueError:
        weekday = ""
    user = template("consolidate_user.txt").format(
        subjects=subjects,
        day=day,
        weekday=weekday,
        lines="\n".join(render_line(n, line) for n, line in numbered.items()),
        max_facts=max_facts,
    )
    messages = (
        Message("system", template("consolidate_system.txt").strip()),
        Message("user", user),
    )
    return Prompt(messages, numbered)


def line_budget(gen: Generator, *, subjects: str, max_output_tokens: int) -> int:
    """Tokens left for numbered lines once the rest of the prompt and the answer fit."""
    fixed = gen.count_tokens(template("consolidate_system.txt")) + gen.count_tokens(
        template("consolidate_user.txt") + subjects
    )
    return gen.context_length - max_output_tokens - fixed - MARGIN_TOKENS
