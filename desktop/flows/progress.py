"""What long work is doing, in words a person reads: phase, count, time left.

Flows report progress as ``(done, total, what)``. :class:`ProgressClock` turns
that stream into a line with an ETA from the rate measured in the current
phase; the GUI and the CLI progress bar both use it. :class:`ModelMeter` is a
Stop flag that also reports what a language-model request is doing: both
backends check Stop once per prompt batch and once per generated token, so
counting the checks tells prompt processing from generation without touching
the engines.

Thread-agnostic: each object belongs to the thread that calls it (the
meter is called on the engine's worker; its ``report`` must be thread-safe).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from desktop.vault.index import Progress as Progress  # the one (done, total, what) shape
from inference.base import StopFlag

#: The embedded backend decodes a prompt in batches of this many tokens
#: (``LlamaSettings.n_batch``) and checks Stop before each.
PROMPT_BATCH = 512

Clock = Callable[[], float]


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 pair``, ``5 pairs``; ``many`` for irregular nouns (``1 match``, ``2 matches``)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def eta_text(seconds: float) -> str:
    """``about 40 s left``, ``about 3 min left``, ``about 1 h 5 min left``."""
    s = max(1, round(seconds))
    if s < 90:
        return f"about {s} s left"
    minutes = round(s / 60)
    if minutes < 60:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60} min left"


class ProgressClock:
    """Measures the rate of the current phase and says how long the rest will take.

    A phase is a run of updates with the same ``total`` and a growing ``done``;
    a new total, or a count going back, starts a new one. The rate is measured
    from the phase's first update (not from 0), so time spent before the first
    count — loading, prompt processing — does not skew it.
    """

    def __init__(self, *, clock: Clock = time.monotonic, min_seconds: float = 1.0) -> None:
        self._clock = clock
        self._min_seconds = min_seconds
        self._phase: tuple[int, int, float] | None = None  # (total, first done, first time)
        self.started = clock()

    def eta(self, done: int, total: int) -> float | None:
        """Seconds left in this phase, or None while there is no measured rate."""
        now = self._clock()
        if self._phase is None or total != self._phase[0] or done < self._phase[1]:
            self._phase = (total, done, now)
            return None
        _, first, since = self._phase
        elapsed = now - since
        if total <= 1 or done <= first or elapsed < self._min_seconds or done >= total:
            return None
        rate = (done - first) / elapsed
        return (total - done) / rate

    def line(self, done: int, total: int, what: str) -> str:
        """``what`` with the time left once it is measured: the text to show."""
        seconds = self.eta(done, total)
        return what if seconds is None else f"{what} — {eta_text(seconds)}"

    def elapsed(self) -> float:
        return self._clock() - self.started


class ModelMeter(StopFlag):
    """The caller's Stop, plus a report of one model request's progress.

    ``report(text)`` is called from the engine's thread at most every
    ``every`` seconds (and at each new attempt) with e.g. ``asking the model
    about 12 notes: prompt 1 of 612 tokens`` then ``… 45 tokens generated (of
    at most 640)``. Call :meth:`attempt` before each attempt (the structured
    output's second, stricter one is announced as such).
    """

    def __init__(
        self,
        stop: StopFlag | None,
        *,
        what: str,
        prompt_tokens: int,
        max_tokens: int,
        report: Callable[[str], None],
        every: float = 0.25,
        clock: Clock = time.monotonic,
    ) -> None:
        super().__init__()
        self._stop = stop
        self.what = what
        self.prompt_tokens = max(1, prompt_tokens)
        self.max_tokens = max_tokens
        self._report = report
        self._every = every
        self._clock = clock
        self._last = -math.inf
        self.attempt_number = 0
        self.checks = 0

    def attempt(self, number: int) -> None:
        """Attempt ``number`` (0 = first, 1 = the stricter retry) is starting."""
        self.attempt_number = number
        self.checks = 0
        self._last = -math.inf
        self._emit(force=True)

    @property
    def batches(self) -> int:
        return math.ceil(self.prompt_tokens / PROMPT_BATCH)

    @property
    def generated(self) -> int:
        """Tokens generated so far in this attempt (0 while the prompt is processed)."""
        return max(0, self.checks - self.batches)

    def text(self) -> str:
        head = self.what
        if self.attempt_number > 0:
            head += " (stricter retry: the first answer could not be read)"
        if self.checks <= self.batches:
            read = min(self.prompt_tokens, max(0, self.checks - 1) * PROMPT_BATCH)
            return f"{head}: reading the prompt, {read} of {self.prompt_tokens} tokens"
        return f"{head}: {plural(self.generated, 'token')} generated (of at most {self.max_tokens})"

    def _emit(self, *, force: bool = False) -> None:
        now = self._clock()
        if force or now - self._last >= self._every:
            self._last = now
            self._report(self.text())

    def is_set(self) -> bool:
        self.checks += 1
        self._emit()
        return super().is_set() or (self._stop is not None and self._stop.is_set())
