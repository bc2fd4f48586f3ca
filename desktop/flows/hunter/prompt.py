"""What the model is shown and what shape it must answer in.

Templates live in ``resources/prompts/`` (``hunter-*.txt``). Each note is labelled by
its basename (by its path when two prompt notes share a basename), and the
JSON schema restricts ``note_a``/``note_b`` to those labels when generation is
constrained; code still verifies everything (an HTTP backend may ignore it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.resources import resources_dir

#: Keys of the answer's array: current first, then Antinomia's Italian legacy key.
ARRAY_KEYS = ("pairs", "contraddizioni")

#: Bounds in the schema: a small model otherwise writes on until its token budget
#: runs out, mid-string, and the answer is lost.
QUOTE_MAX = 200
DESCRIPTION_MAX = 200

_FIELD_ALIASES = {
    "note_a": ("note_a", "nota_a", "a"),
    "note_b": ("note_b", "nota_b", "b"),
    "quote_a": ("quote_a", "citazione_a", "quote a"),
    "quote_b": ("quote_b", "citazione_b", "quote b"),
    "description": ("description", "descrizione", "reason"),
    "confidence": ("confidence", "confidenza", "fiducia"),
}

_CONFIDENCE = {
    "high": "high",
    "alta": "high",
    "medium": "medium",
    "media": "medium",
    "moderate": "medium",
    "low": "low",
    "bassa": "low",
}


@functools.cache
def template(name: str) -> str:
    return (resources_dir() / "prompts" / f"{name}.txt").read_text(encoding="utf-8").strip()


@dataclass(frozen=True)
class PromptNote:
    path: str
    label: str
    type: str
    excerpt: str


def excerpt(body: str, limit: int) -> str:
    """A note's body (frontmatter already stripped), trimmed to ``limit`` characters
    at a word boundary."""
    body = body.strip()
    if len(body) <= limit:
        return body
    cut = body[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.8 else cut).rstrip() + " …"


def labels_for(paths: Sequence[str]) -> dict[str, str]:
    """path → label: the basename, or the path without ``.md`` when basenames collide."""
    basenames = [p.rsplit("/", 1)[-1].removesuffix(".md") for p in paths]
    seen: dict[str, int] = {}
    for name in basenames:
        seen[name.casefold()] = seen.get(name.casefold(), 0) + 1
    return {
        path: (name if seen[name.casefold()] == 1 else path.removesuffix(".md"))
        for path, name in zip(paths, basenames, strict=True)
    }


def render_note(note: PromptNote) -> str:
    return f"NOTE: {note.label} ({note.type})\n{note.excerpt}"


def build_messages(notes: Sequence[PromptNote], *, focus: PromptNote | None) -> tuple[str, str]:
    """(system, user) texts for one request."""
    if focus is not None:
        task = template("hunter-task-focus").format(focus=focus.label, others=len(notes) - 1)
    else:
        task = template("hunter-task").format(count=len(notes))
    body = "\n\n".join(render_note(n) for n in notes)
    user = template("hunter-user").format(task=task, notes=body)
    return template("hunter-system"), user


def _name(labels: Sequence[str]) -> dict[str, Any]:
    name: dict[str, Any] = {"type": "string"}
    if labels:
        name["enum"] = list(labels)
    return name


def answer_schema(
    labels: Sequence[str], *, max_pairs: int, first: Sequence[str] = ()
) -> dict[str, Any]:
    """The answer's JSON schema. ``first`` limits ``note_a`` (and keeps those labels
    out of ``note_b``): the focus note, or one note of a two-note batch — so a
    constrained model cannot pair a note with itself."""
    name_a = _name(first or labels)
    name_b = _name([label for label in labels if label not in first] if first else labels)
    return {
        "type": "object",
        "properties": {
            "pairs": {
                "type": "array",
                "maxItems": max_pairs,
                "items": {
                    "type": "object",
                    "properties": {
                        "note_a": name_a,
                        "note_b": name_b,
                        "quote_a": {"type": "string", "maxLength": QUOTE_MAX},
                        "quote_b": {"type": "string", "maxLength": QUOTE_MAX},
                        "description": {"type": "string", "maxLength": DESCRIPTION_MAX},
                        "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                    },
                    "required": [
                        "note_a",
                        "note_b",
                        "quote_a",
                        "quote_b",
                        "description",
                        "confidence",
                    ],
                },
            }
        },
        "required": ["pairs"],
    }


@dataclass(frozen=True)
class RawPair:
    """One item of the answer with its keys normalised (values not yet checked)."""

    note_a: str
    note_b: str
    quote_a: str
    quote_b: str
    description: str
    confidence: str | None


def _field(item: Mapping[str, Any], name: str) -> Any:
    lowered = {str(k).casefold(): v for k, v in item.items()}
    for alias in _FIELD_ALIASES[name]:
        if alias in lowered:
            return lowered[alias]
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return str(value).strip()


def normalise_item(item: Any) -> RawPair | None:
    """English or legacy Italian keys → one shape; None when it is not an object."""
    if not isinstance(item, Mapping):
        return None
    confidence = _text(_field(item, "confidence")).casefold()
    return RawPair(
        note_a=_text(_field(item, "note_a")),
        note_b=_text(_field(item, "note_b")),
        quote_a=_text(_field(item, "quote_a")),
        quote_b=_text(_field(item, "quote_b")),
        description=_text(_field(item, "description")),
        confidence=_CONFIDENCE.get(confidence),
    )


_WIKILINK = re.compile(r"^\[\[(.+?)(?:\|.*)?\]\]$")


def clean_name(name: str) -> str:
    """What the model wrote as a note name, minus decorations it likes to add."""
    name = name.strip().strip("\"'“”«»`*")
    match = _WIKILINK.match(name)
    if match:
        name = match.group(1)
    name = name.strip()
    if name.upper().startswith("NOTE:"):
        name = name[5:].strip()
    name = re.sub(r"\s*\((?:tension|substrate|principle|decision|[a-z_]+)\)$", "", name)
    return name.removesuffix(".md").strip()
