"""Shared helpers of the memory tests: a batch, a routing fake of the model, an embedder fake."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.flows.memory import capture_turn, close_open_batch
from inference.base import Completion, GenerationSettings, Generator, Message, StopFlag

DATA = Path(__file__).parent / "data" / "memory"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)

#: Lines 1–4 of the batch "2026-11-30" made by :func:`small_batch`.
SMALL_TURNS = [
    ("user", "We decided to fly to Lisbon on 12 December with Ana."),
    ("assistant", "Great, Lisbon on December 12 it is. I suggest a hotel in Alfama."),
    ("user", "I prefer window seats on long flights."),
    ("user", "The Helios report is due next Friday."),
]


def small_batch(vault: Path) -> None:
    for role, text in SMALL_TURNS:
        capture_turn(vault, role=role, text=text, session_id="s1", ts=T0)
    close_open_batch(vault)


def route(subject: str, fact: str = "", section: str = "", **kw: Any) -> dict[str, Any]:
    """A routing answer; ``section`` empty means the first section offered."""
    out: dict[str, Any] = {"fact": fact, "subject": subject, "section": section}
    out.update(kw)
    return out


_STATEMENT = re.compile(r'The user said: "(.*)"\n')


@dataclass
class RoutingGenerator(Generator):
    """A fake model that answers routing and summary requests like the real flow expects.

    ``routes`` maps a piece of the statement to the answer (a dict, or a raw string
    to play a format failure); a statement no key matches gets the first offered
    subject and section and no rephrasing. ``summary`` answers summary requests
    (None: an unusable answer, so the page keeps its first facts). Records calls.
    """

    routes: dict[str, dict[str, Any] | str | list[str] | BaseException] = field(
        default_factory=dict
    )
    summary: str | None = None
    calls: list[tuple[str, list[Message], dict[str, Any] | None]] = field(default_factory=list)
    #: Called before each answer with the call count (e.g. to press Stop).
    before: Callable[[int], None] | None = None
    model_name: str = "routing-fake"
    backend_name: str = "fake"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        kind = "summary" if "summary" in messages[0].content else "route"
        self.calls.append((kind, list(messages), schema))
        if self.before is not None:
            self.before(len(self.calls))
        text = self._answer(kind, messages, schema)
        stopped = stop is not None and stop.is_set()
        return Completion(
            text=text,
            tokens_in=sum(len(m.content) // 4 for m in messages),
            tokens_out=len(text) // 4,
            duration=0.001,
            finish_reason="stopped" if stopped else "stop",
            model=self.model_name,
            backend=self.backend_name,
        )

    def _answer(self, kind: str, messages: Sequence[Message], schema: Any) -> str:
        props = (schema or {}).get("properties", {})
        if "subject" not in props and "summary" not in props:  # the runtime's warm-up
            return '{"ok": true}'
        if kind == "summary":
            return json.dumps({"summary": self.summary}) if self.summary else "no idea"
        m = _STATEMENT.search(messages[-1].content)
        statement = m.group(1) if m else ""
        for key, value in self.routes.items():
            if key in statement:
                if isinstance(value, BaseException):
                    raise value
                if isinstance(value, list):  # one answer per attempt
                    return value.pop(0) if value else "still no JSON"
                if isinstance(value, str):
                    return value
                answer = dict(value)
                if not answer.get("section"):
                    answer["section"] = schema["properties"]["section"]["enum"][0]
                return json.dumps(answer)
        return json.dumps(
            {
                "fact": "",
                "subject": props["subject"]["enum"][0],
                "section": props["section"]["enum"][0],
            }
        )

    def routed(self) -> list[str]:
        """The statements routed, in order."""
        out = []
        for kind, messages, _ in self.calls:
            m = _STATEMENT.search(messages[-1].content)
            if kind == "route" and m:
                out.append(m.group(1))
        return out


def all_files(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file():
            yield path


def page_fact_lines(vault: Path) -> list[str]:
    out = []
    for page in sorted((vault / "Antinomy" / "Subjects").glob("*.md")):
        out += [line for line in page.read_text().splitlines() if line.startswith("- ")]
    return out


def turns(vault: Path, *items: tuple[str, str], session: str = "s1", close: bool = True) -> None:
    for role, text in items:
        capture_turn(vault, role=role, text=text, session_id=session, ts=T0)
    if close:
        close_open_batch(vault)
