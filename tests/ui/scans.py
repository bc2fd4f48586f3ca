"""Scripted scan answers over the sample vault, for the GUI tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from desktop.flows.settings import ScanCaps
from desktop.ui.window import MainWindow
from inference.base import Completion, GenerationSettings, Generator, Message, StopFlag
from tests.fakes import ScriptedGenerator

A = "Substrates/A run should leave me spent.md"
B = "Substrates/Easy runs build the base.md"
GOOD = json.dumps(
    {
        "pairs": [
            {
                "note_a": "A run should leave me spent",
                "note_b": "Easy runs build the base",
                "quote_a": "Every run should leave me out of breath at the end, or it was wasted.",
                "quote_b": (
                    "Most of my weekly mileage should be easy enough to hold a conversation."
                ),
                "description": "One says every run must exhaust; the other that most are easy.",
                "confidence": "high",
            }
        ]
    }
)


def big_context(gen: Generator) -> Generator:
    gen.context_length = 100_000  # every sample note fits one prompt
    return gen


def scripted(*answers: str | BaseException) -> ScriptedGenerator:
    gen = ScriptedGenerator(["x", "{}", *answers])
    big_context(gen)
    return gen


def scan_everything(window: MainWindow) -> None:
    """Classic mode over all tensions and substrates (the cap would leave some out)."""
    c = window.controller
    c.update_settings(replace(c.settings, scan=ScanCaps(cap=100)))


class SlowGenerator(Generator):
    """Warms up at once; then 'generates' a token every ``token_seconds`` until done or stopped."""

    model_name = "slow"
    backend_name = "fake"
    context_length = 100_000

    def __init__(self, tokens: int, answer: str, token_seconds: float = 0.01) -> None:
        self.tokens = tokens
        self.answer = answer
        self.token_seconds = token_seconds
        self.started = threading.Event()
        self.stopped_at: float | None = None
        self._warm = 0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        if self._warm < 2:
            self._warm += 1
            return Completion("{}", 1, 1, 0.0, "stop")
        self.started.set()
        for n in range(self.tokens):
            if stop is not None and stop.is_set():
                self.stopped_at = time.perf_counter()
                return Completion("", 10, n, n * self.token_seconds, "stopped")
            time.sleep(self.token_seconds)  # one token's worth of work, off the GUI thread
        return Completion(self.answer, 10, self.tokens, self.tokens * self.token_seconds, "stop")
