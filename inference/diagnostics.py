"""Quick speed checks of warm engines, for ``antinomy doctor`` and the Models panel."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from inference.base import GenerationSettings, Generator, Message
from inference.embedder import Embedder

_PROMPT = (
    "Write a short paragraph about keeping notes in plain text files, and why a person "
    "might prefer them to a database."
)
_SHORT = "the meeting moved to thursday because the client asked for more time"
_LONG = (
    "We decided to keep every architectural decision as a short note in the vault, with the "
    "context that led to it, the options we weighed and the reason we chose one. Decisions "
    "that are replaced are not deleted but marked as superseded, with a link to the note "
    "that replaces them, so that anyone can follow how our thinking changed over time. "
) * 2


@dataclass(frozen=True)
class GenerationSpeed:
    prompt_tokens: int
    prompt_tokens_per_second: float
    generated_tokens: int
    tokens_per_second: float
    seconds: float


@dataclass(frozen=True)
class EmbeddingSpeed:
    short_texts_per_second: float
    long_texts_per_second: float
    single_latency_ms: float


def measure_generation(generator: Generator, *, max_tokens: int = 64) -> GenerationSpeed:
    """One unconstrained completion; call from the generator's worker thread."""
    completion = generator.complete(
        [Message("user", _PROMPT)], settings=GenerationSettings(max_tokens=max_tokens)
    )
    gen_seconds = completion.duration - completion.prompt_seconds
    return GenerationSpeed(
        prompt_tokens=completion.tokens_in,
        prompt_tokens_per_second=completion.tokens_in / max(completion.prompt_seconds, 1e-9),
        generated_tokens=completion.tokens_out,
        tokens_per_second=completion.tokens_out / max(gen_seconds, 1e-9),
        seconds=completion.duration,
    )


def measure_embedding(embedder: Embedder, *, batch: int = 32) -> EmbeddingSpeed:
    """Throughput on short and long texts, and one single-text latency."""
    t0 = time.perf_counter()
    embedder.embed([_SHORT] * batch)
    short = batch / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    embedder.embed([_LONG] * batch)
    long = batch / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    embedder.embed([_SHORT])
    single = (time.perf_counter() - t0) * 1000
    return EmbeddingSpeed(short, long, single)


def as_dict(record: GenerationSpeed | EmbeddingSpeed) -> dict[str, Any]:
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(record).items()}
