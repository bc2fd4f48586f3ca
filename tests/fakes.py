"""Scripted fake engines: a Generator answering from a list, a Judge answering from rules,
an Embedder of hashed words."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inference.base import Completion, GenerationSettings, Generator, Message, StopFlag
from inference.embedder import Embedder, Vectors
from inference.judge import Judge, Scores, Thresholds


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


class ScriptedJudge(Judge):
    """A judge whose verdicts come from a function of the two texts.

    ``verdict(a, b)`` returns ``(P(contradiction), P(entailment), P(neutral))``;
    it is called with both orders and averaged, like the real judge, so a
    lopsided script shows up as a symmetric answer. Records every pair scored.
    """

    def __init__(
        self,
        verdict: Callable[[str, str], tuple[float, float, float]] | None = None,
        *,
        contradictions: Iterable[tuple[str, str]] = (),
        entailments: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.name = "scripted judge"
        self.model_id = "scripted"
        self.calls: list[tuple[str, str]] = []
        self._contra = {frozenset(p) for p in contradictions}
        self._entail = {frozenset(p) for p in entailments}
        self._verdict = verdict

    def _one(self, a: str, b: str) -> tuple[float, float, float]:
        if self._verdict is not None:
            return self._verdict(a, b)
        key = frozenset((a, b))
        if key in self._contra:
            return (0.96, 0.02, 0.02)
        if key in self._entail:
            return (0.02, 0.96, 0.02)
        return (0.03, 0.07, 0.90)

    def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        self.calls.extend(pairs)
        rows = [
            [(x + y) / 2 for x, y in zip(self._one(a, b), self._one(b, a), strict=True)]
            for a, b in pairs
        ]
        return np.asarray(rows, dtype=np.float32).reshape(len(pairs), 3)


def confirming_judge() -> ScriptedJudge:
    """A judge that confirms every pair the language model proposes and finds none itself.

    Its subject gate is impossible to pass (cosine above 1), so the judged phase of a
    scan compares nothing; every quote pair it is asked about directly (the classic
    mode's re-check of the model's proposals) scores 0.9. Tests of the model's path
    (retry policy, verification, legacy keys) use it to keep their answers in order.
    """
    judge = ScriptedJudge(verdict=lambda a, b: (0.9, 0.05, 0.05))
    judge.thresholds = Thresholds(min_cosine=2.0)
    return judge


class WordEmbedder(Embedder):
    """Bag of hashed words, L2-normalised: texts sharing words are neighbours.

    Each lower-cased word (``\\w+``) adds 1 to the coordinate its md5 picks out of
    ``dimension``. Records every text it embeds (``texts``), and can be called as the
    guard's embedding function (``embedder(texts)``).
    """

    name = "words"

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension
        self.texts: list[str] = []

    @property
    def texts_embedded(self) -> int:
        return len(self.texts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
            norm = float(np.linalg.norm(out[i]))
            if norm:
                out[i] /= norm
        return out

    def __call__(self, texts: Sequence[str]) -> Vectors:
        return self.embed(texts)
