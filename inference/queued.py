"""Engines seen through a :class:`~inference.runtime.Runtime`: each call goes through the
engine's own worker (or, for the guard's judge, the caller's thread), and each proxy
answers its engine's identity (:func:`~inference.base.adopt_identity`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from inference.base import (
    Completion,
    GenerationSettings,
    Generator,
    Message,
    StopFlag,
    adopt_identity,
)
from inference.embedder import Embedder, Vectors
from inference.judge import Judge, Scores

if TYPE_CHECKING:
    from inference.runtime import Runtime


class QueuedGenerator(Generator):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        inner = runtime.generator
        adopt_identity(self, inner, Generator)
        self._inner = inner

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        future = self._runtime.submit_complete(
            messages, schema=schema, settings=settings, stop=stop
        )
        return future.result()

    def count_tokens(self, text: str) -> int:
        # Tokenising is read-only and thread-safe in llama.cpp.
        return self._inner.count_tokens(text)


class QueuedEmbedder(Embedder):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        adopt_identity(self, runtime.embedder, Embedder)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._runtime.submit_embed(texts).result()


class QueuedJudge(Judge):
    def __init__(
        self, runtime: Runtime, *, direct: bool = False, inner: Judge | None = None
    ) -> None:
        self._runtime = runtime
        self._direct = direct
        self._inner = inner
        adopt_identity(self, inner or runtime.judge, Judge)

    def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        if self._direct:
            return self._runtime.score_now(pairs, self._inner)
        return self._runtime.submit_judge(pairs).result()
