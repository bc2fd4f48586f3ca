"""Loading reports and warm-up: what bringing each engine up cost, and the calls that warm
it (a tiny one, then one at full length) so its first real call is not the slow one."""

from __future__ import annotations

import time
from dataclasses import dataclass

from inference.base import GenerationSettings, Generator, Message
from inference.embedder import Embedder
from inference.judge import Judge
from inference.registry import ResolvedModel

_WARM_TEXT = (
    "Antinomy keeps the user's notes on this machine. A tension is a pair of notes that "
    "cannot both be right as written: one says the team ships on Fridays, the other says "
    "nothing is deployed before a weekend. The user decides what to do with it; the tool "
    "only points at the two passages and quotes them exactly. "
)


@dataclass
class EngineReport:
    """What loading and warming one engine cost; filled in as it happens."""

    name: str
    model: ResolvedModel | None = None
    description: str = ""
    load_seconds: float | None = None
    warm_tiny_seconds: float | None = None
    warm_full_seconds: float | None = None
    error: str | None = None

    @property
    def ready_seconds(self) -> float | None:
        parts = (self.load_seconds, self.warm_tiny_seconds, self.warm_full_seconds)
        return None if None in parts else sum(p for p in parts if p is not None)


def warm_generator(generator: Generator, report: EngineReport) -> None:
    t0 = time.perf_counter()
    generator.complete([Message("user", "Hi")], settings=GenerationSettings(max_tokens=1))
    report.warm_tiny_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    generator.complete(
        [Message("system", "Answer in JSON."), Message("user", _WARM_TEXT * 2)],
        schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        settings=GenerationSettings(max_tokens=8),
    )
    report.warm_full_seconds = time.perf_counter() - t0


def warm_embedder(embedder: Embedder, report: EngineReport) -> None:
    t0 = time.perf_counter()
    embedder.embed(["warm"])
    report.warm_tiny_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    embedder.embed([_WARM_TEXT * 3])  # one text at the 256-token limit
    report.warm_full_seconds = time.perf_counter() - t0


def warm_judge(judge: Judge, report: EngineReport) -> None:
    t0 = time.perf_counter()
    judge.score([("warm", "up")])
    report.warm_tiny_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    half = len(_WARM_TEXT) // 2
    judge.score([(_WARM_TEXT[:half], _WARM_TEXT[half:])] * 4)
    report.warm_full_seconds = time.perf_counter() - t0
