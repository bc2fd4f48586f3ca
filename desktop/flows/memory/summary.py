"""A page's summary line, written by the model from the page's facts and checked in code.

One structured request per touched page (``{"summary": "..."}``, at most
:data:`MAX_SUMMARY_CHARS`). The summary is kept only if the page's facts
support it lexically (like a fact, but :data:`SUMMARY_SUPPORT` of its content
words, and every name and number) and it keeps :data:`SUMMARY_COVERAGE` of the
first fact's content words; otherwise, or when the model fails, the
summary is the page's first facts. Either way it is made of what the page says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from desktop.flows.memory.prompt import template
from desktop.flows.memory.support import (
    content_words,
    support_ratio,
    unsupported_names,
)
from inference.base import GenerationSettings, Generator, Message, StopFlag
from inference.structured import complete_structured

MAX_SUMMARY_CHARS = 200
#: Stricter than for facts: a summary's every word should come from the facts
#: ("The database stays on Neon. The one-line summary is:" has 60 % and is junk).
SUMMARY_SUPPORT = 0.8
#: And it must keep half the content words of the page's first fact: "I'm designing a
#: board game called" is supported word for word, but is a cut, not a summary.
SUMMARY_COVERAGE = 0.5
#: Facts shown to the model (the first ones of the page).
MAX_FACTS_IN_PROMPT = 8

Source = Literal["model", "first_facts"]


@dataclass(frozen=True)
class Summary:
    text: str
    source: Source
    tokens_in: int = 0
    tokens_out: int = 0


def first_facts(facts: Sequence[str]) -> str:
    out = ""
    for fact in facts:
        piece = fact.rstrip(" .") + "."
        if out and len(out) + len(piece) + 1 > MAX_SUMMARY_CHARS:
            break
        out = f"{out} {piece}".strip()
    return out[:MAX_SUMMARY_CHARS]


def _shape(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("summary"), str):
        return " ".join(value["summary"].split())
    return None


def write_summary(
    engine: Generator | None, name: str, facts: Sequence[str], *, stop: StopFlag | None = None
) -> Summary:
    """The page's summary line; blocks on the model (worker thread)."""
    fallback = first_facts(facts)
    if engine is None or not facts:
        return Summary(fallback, "first_facts")
    shown = "\n".join(f"- {f}" for f in facts[:MAX_FACTS_IN_PROMPT])
    messages = [
        Message("system", template("summary_system.txt").strip()),
        Message("user", template("summary_user.txt").format(subject=name, facts=shown)),
    ]
    schema = {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "minLength": 8, "maxLength": MAX_SUMMARY_CHARS}
        },
        "required": ["summary"],
    }
    result = complete_structured(
        engine,
        messages,
        shape=_shape,
        schema=schema,
        settings=GenerationSettings(max_tokens=80),
        stop=stop,
    )
    tin, tout = result.tokens_in, result.tokens_out
    text = result.value if result.status == "ok" else None
    source_text = "\n".join(facts)
    if (
        isinstance(text, str)
        and len(content_words(text)) >= 3
        and support_ratio(text, source_text, allowed=(name,)) >= SUMMARY_SUPPORT
        and support_ratio(facts[0], text, allowed=(name,)) >= SUMMARY_COVERAGE
        and not unsupported_names(text, source_text, allowed=(name,))
        and not text.rstrip().endswith("?")
    ):
        return Summary(text[:MAX_SUMMARY_CHARS], "model", tin, tout)
    return Summary(fallback, "first_facts", tin, tout)
