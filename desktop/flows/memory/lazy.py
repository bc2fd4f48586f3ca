"""Engines loaded on first use, so commands that find nothing to do never load a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inference.base import Completion, GenerationSettings, Generator, Message, StopFlag
from inference.embedder import Embedder, Vectors
from inference.judge import Judge
from inference.registry import resolve_model


class LazyGenerator(Generator):
    """The shipped (or given) GGUF model, loaded by the first call that needs it."""

    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._inner: Generator | None = None

    @property
    def inner(self) -> Generator:
        if self._inner is None:
            from inference.llama_backend import LlamaGenerator

            self._inner = LlamaGenerator(resolve_model("llm", self._path))
            self.model_name = self._inner.model_name
            self.backend_name = self._inner.backend_name
        return self._inner

    @property
    def context_length(self) -> int:  # type: ignore[override]
        return self.inner.context_length

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        return self.inner.complete(messages, schema=schema, settings=settings, stop=stop)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
            self._inner = None


def load_embedder(path: str | None = None) -> Embedder:
    from inference.embedder import OnnxEmbedder

    return OnnxEmbedder(resolve_model("embedder", path))


class LazyEmbedder(Embedder):
    """The shipped (or given) embedder, loaded by the first call that needs it."""

    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._inner: Embedder | None = None
        self.dimension = 384
        self.name = "embedder"

    @property
    def inner(self) -> Embedder:
        if self._inner is None:
            self._inner = load_embedder(self._path)
            self.dimension = self._inner.dimension
            self.name = self._inner.name
        return self._inner

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
            self._inner = None


def load_judge_or_none() -> tuple[Judge | None, str]:
    """The shipped judge, or None with the reason (it is optional: lexical checks then decide)."""
    # The CLI has no resident runtime: it loads the shipped judge itself.
    try:
        from inference.judge import OnnxJudge

        return OnnxJudge(resolve_model("judge")), ""
    except Exception as exc:  # missing file, no manifest entry, ONNX error: all mean "no judge"
        return None, str(exc)
