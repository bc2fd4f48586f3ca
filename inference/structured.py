"""The structured-output policy, once, for every flow that expects JSON.

1. The first request is constrained by the flow's JSON schema (embedded
   backend), unless the user turned constraining off.
2. Reasoning blocks and code fences are stripped; the first JSON value that
   has the expected structure is taken (an empty array counts).
3. If there is none, exactly one more request is made with the same context
   and a stricter system suffix naming the failure; the first answer is not
   sent back. Transport errors and a user Stop are never retried.
4. If both fail, the result carries both raw answers.

:func:`extract_json` never raises, whatever the text (property-tested).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from foundation.errors import AntinomyError
from inference.base import Completion, GenerationSettings, Generator, Message, StopFlag

#: Returns the accepted (possibly normalised) value, or None to reject.
Shape = Callable[[Any], Any | None]

Status = Literal["ok", "format_failure", "stopped"]

_REASONING = re.compile(
    r"<(think|thinking|reasoning|reflection)>.*?(</\1>|\Z)", re.IGNORECASE | re.DOTALL
)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?|```")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
#: Bound the work on pathological text: this many candidate starts at most.
_MAX_STARTS = 2000
_MAX_CHARS = 200_000

STRICT_SUFFIX = (
    "FORMAT FAILURE: your previous answer could not be read as JSON with the required "
    "structure. Answer again with ONLY one JSON value that follows this schema exactly. "
    "No prose before or after it, no code fences, no reasoning, no comments."
)


class FormatFailure(AntinomyError):
    """Both answers lacked the expected JSON structure."""

    def __init__(self, message: str, raw_answers: Sequence[str]) -> None:
        super().__init__(message)
        self.raw_answers = tuple(raw_answers)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>…</think>``-style blocks (an unclosed one runs to the end)."""
    return _REASONING.sub("", text)


def strip_fences(text: str) -> str:
    return _FENCE.sub("", text)


def _candidates(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    values: list[Any] = []
    starts = 0
    i = 0
    n = len(text)
    while i < n and starts < _MAX_STARTS:
        ch = text[i]
        if ch in "{[":
            starts += 1
            try:
                value, end = decoder.raw_decode(text, i)
            except (ValueError, RecursionError):
                i += 1
                continue
            values.append(value)
            i = end
            continue
        i += 1
    return values


def extract_json(text: Any, shape: Shape | None = None) -> Any | None:
    """The first JSON object or array in ``text`` that ``shape`` accepts.

    Reasoning blocks are stripped first. The text is read as it stands (so a
    string value that holds a code fence keeps it), then without code fences,
    then forgiving trailing commas, the commonest slip of small models.
    Returns None when nothing fits. Never raises.
    """
    if not isinstance(text, str):
        return None
    reasoned = strip_reasoning(text[:_MAX_CHARS])
    cleaned = strip_fences(reasoned)
    accept = shape or (lambda v: v)
    sources = dict.fromkeys((reasoned, cleaned, _TRAILING_COMMA.sub(r"\1", cleaned)))
    for source in sources:
        for value in _candidates(source):
            try:
                accepted = accept(value)
            except Exception:  # a shape that trips on odd input rejects it
                accepted = None
            if accepted is not None:
                return accepted
    return None


def object_with_array(*keys: str) -> Shape:
    """Accept an object holding a list under one of ``keys`` (first key wins).

    Returns ``(key, list)``. A bare list is accepted as the first key's list.
    """

    def shape(value: Any) -> tuple[str, list[Any]] | None:
        if isinstance(value, dict):
            for key in keys:
                if isinstance(value.get(key), list):
                    return key, value[key]
            return None
        if isinstance(value, list):
            return keys[0], value
        return None

    return shape


@dataclass(frozen=True)
class StructuredResult:
    status: Status
    #: What ``shape`` returned for the accepted answer (None unless ok).
    value: Any
    completions: tuple[Completion, ...]

    @property
    def raw_answers(self) -> tuple[str, ...]:
        return tuple(c.text for c in self.completions)

    @property
    def retried(self) -> bool:
        return len(self.completions) > 1

    @property
    def tokens_in(self) -> int:
        return sum(c.tokens_in for c in self.completions)

    @property
    def tokens_out(self) -> int:
        return sum(c.tokens_out for c in self.completions)

    @property
    def duration(self) -> float:
        return sum(c.duration for c in self.completions)

    def raise_for_failure(self, what: str = "The model") -> Any:
        if self.status == "format_failure":
            raise FormatFailure(
                f"{what} replied but did not return the expected JSON structure, even after a "
                "stricter retry. Open the raw response to see what it said, or try a larger "
                "model or another backend.",
                self.raw_answers,
            )
        return self.value


def with_strict_suffix(messages: Sequence[Message], schema: dict[str, Any] | None) -> list[Message]:
    """The same messages, with the stricter format instruction on the system message."""
    suffix = STRICT_SUFFIX
    if schema is not None:
        suffix += "\nSchema: " + json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    out = list(messages)
    if out and out[0].role == "system":
        out[0] = Message("system", out[0].content.rstrip() + "\n\n" + suffix)
    else:
        out.insert(0, Message("system", suffix))
    return out


def complete_structured(
    generator: Generator,
    messages: Sequence[Message],
    *,
    shape: Shape,
    schema: dict[str, Any] | None = None,
    settings: GenerationSettings | None = None,
    stop: StopFlag | None = None,
    on_attempt: Callable[[int], None] | None = None,
) -> StructuredResult:
    """Run the two-attempt policy. Call from the engine's worker thread.

    ``on_attempt(n)`` is called before each attempt (0, then 1 for the stricter
    retry), so a progress display can say which one runs.

    :class:`~foundation.errors.GenerationError` propagates at once (never
    retried); a Stop returns ``status="stopped"``.
    """
    settings = settings or GenerationSettings()
    constrained = schema if settings.constrain else None
    done: list[Completion] = []
    for number, attempt in enumerate((list(messages), with_strict_suffix(messages, schema))):
        if on_attempt is not None:
            on_attempt(number)
        completion = generator.complete(attempt, schema=constrained, settings=settings, stop=stop)
        done.append(completion)
        if completion.finish_reason == "stopped" or (stop is not None and stop.is_set()):
            return StructuredResult("stopped", None, tuple(done))
        value = extract_json(completion.text, shape)
        if value is not None:
            return StructuredResult("ok", value, tuple(done))
    return StructuredResult("format_failure", None, tuple(done))
