"""A scripted fake Generator: answers from a list, records what it was asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inference.base import Completion, GenerationSettings, Generator, Message, StopFlag


@dataclass
class Call:
    messages: list[Message]
    schema: dict[str, Any] | None
    settings: GenerationSettings | None


@dataclass
class ScriptedGenerator(Generator):
    """Each call pops the next answer: a string, or an exception to raise."""

    answers: list[str | BaseException]
    calls: list[Call] = field(default_factory=list)
    #: Set the caller's stop flag before answering call number N (1-based).
    stop_on_call: int | None = None
    model_name: str = "scripted"
    backend_name: str = "fake"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        self.calls.append(Call(list(messages), schema, settings))
        if self.stop_on_call == len(self.calls) and stop is not None:
            stop.set()
        if not self.answers:
            raise AssertionError("the scripted generator ran out of answers")
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        stopped = stop is not None and stop.is_set()
        return Completion(
            text=answer,
            tokens_in=sum(len(m.content) // 4 for m in messages),
            tokens_out=len(answer) // 4,
            duration=0.01,
            finish_reason="stopped" if stopped else "stop",
            model=self.model_name,
            backend=self.backend_name,
        )


class StopAfter(StopFlag):
    """Reports Stop from the Nth check on: deterministic, whatever the model writes."""

    def __init__(self, checks: int) -> None:
        super().__init__()
        self.checks = checks

    def is_set(self) -> bool:
        self.checks -= 1
        return self.checks < 0 or super().is_set()
