"""Micro-batching of concurrent embedding requests, with small requests first.

Requests that arrive while the embedder is busy wait together and go in one
embed call as soon as it is free; a request that finds it idle goes at once
(after one turn of the event loop, so requests that arrived in the same turn
share the call). No fixed wait is added to a lone request — the hook's budget
is tight — yet under load the work collapses into few calls. The embedder
already sorts each call's texts by length and splits them into ONNX runs, and
a text's vector does not depend on its neighbours (the same alone or in a batch), so batching
changes no result.

Bulk work cannot hold the engine: a big request is fed to the embedder in
chunks of at most :data:`CHUNK_TEXTS` texts and :data:`CHUNK_CHARS`
characters (one longer text goes alone), and before each chunk the *urgent*
requests waiting — a guard check, a one-text hook request: at most :data:`URGENT_TEXTS` texts and
:data:`URGENT_CHARS` characters, or marked ``urgent=True`` — go first. A guard
check therefore waits for at most one chunk, not for a 256-text batch — and
with ``submit_urgent`` (the endpoint gives it a thread of its own on the same
engine) it waits for none: urgent calls run beside the bulk chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from inference.embedder import Vectors

SubmitEmbed = Callable[[list[str]], "Future[Vectors]"]

#: Most texts / characters of bulk work in one embedder call. The cost of a call is
#: its tokens: a 256-token text (~1,000 characters) took 0.27 s here on a loaded 2-core
#: machine (~30 ms quiet), so a chunk holds about one full-length text, or 32 short ones.
CHUNK_TEXTS = 32
CHUNK_CHARS = 1_024
#: A request this small is interactive (a hook's summary is at most 2 KB): it jumps the queue.
URGENT_TEXTS = 4
URGENT_CHARS = 4_096


@dataclass
class BatchStats:
    calls: int = 0
    texts: int = 0
    requests: int = 0
    largest: int = 0
    sizes: list[int] = field(default_factory=list)
    #: Requests served ahead of bulk work that was waiting.
    jumped: int = 0


@dataclass(eq=False)  # identity: compared to find it in a queue
class _Waiting:
    texts: list[str]
    future: asyncio.Future[Vectors]
    urgent: bool
    #: How many of ``texts`` have gone to the embedder, and their vectors so far.
    sent: int = 0
    parts: list[Vectors] = field(default_factory=list)

    @property
    def left(self) -> int:
        return len(self.texts) - self.sent


def is_urgent(texts: Sequence[str]) -> bool:
    return len(texts) <= URGENT_TEXTS and sum(len(t) for t in texts) <= URGENT_CHARS


class EmbedBatcher:
    """Collects concurrent ``embed`` calls on one event loop into single embedder calls.

    Only the loop that created it may call :meth:`embed`.
    """

    def __init__(
        self,
        submit: SubmitEmbed,
        *,
        max_texts: int = 256,
        chunk_texts: int = CHUNK_TEXTS,
        chunk_chars: int = CHUNK_CHARS,
        submit_urgent: SubmitEmbed | None = None,
    ) -> None:
        self._submit = submit
        #: Where urgent calls go when they have a lane of their own (another thread on
        #: the same engine, which the engine allows): they then never wait for bulk work.
        self._submit_urgent = submit_urgent
        self.max_texts = max_texts
        self.chunk_texts = min(chunk_texts, max_texts)
        self.chunk_chars = chunk_chars
        self._urgent: list[_Waiting] = []
        self._bulk: list[_Waiting] = []
        self._running: asyncio.Task[None] | None = None
        self._running_urgent: asyncio.Task[None] | None = None
        self.stats = BatchStats()

    async def embed(self, texts: Sequence[str], *, urgent: bool | None = None) -> Vectors:
        """The vectors of ``texts``; ``urgent`` (default: decided by size) jumps the queue."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        loop = asyncio.get_running_loop()
        first = is_urgent(texts) if urgent is None else urgent
        waiting = _Waiting(list(texts), loop.create_future(), first)
        (self._urgent if first else self._bulk).append(waiting)
        self.stats.requests += 1
        if first and any(item.sent for item in self._bulk):
            self.stats.jumped += 1
        if first and self._submit_urgent is not None:
            if self._running_urgent is None or self._running_urgent.done():
                self._running_urgent = loop.create_task(self._drain(urgent_lane=True))
        elif self._running is None or self._running.done():
            self._running = loop.create_task(self._drain())
        return await waiting.future

    def _next_call(self, urgent_lane: bool = False) -> list[tuple[_Waiting, int, int]]:
        """(request, start, end) slices for one embedder call: urgent requests whole, then
        bulk texts up to the chunk limits (a big request is continued next call). With an
        urgent lane, each lane takes only its own queue."""
        plan: list[tuple[_Waiting, int, int]] = []
        count = chars = 0
        queues: tuple[list[_Waiting], ...]
        if urgent_lane:
            queues = (self._urgent,)
        elif self._submit_urgent is not None:
            queues = (self._bulk,)
        else:
            queues = (self._urgent, self._bulk)
        for queue in queues:
            for item in list(queue):
                if item.future.cancelled():  # the client went away
                    queue.remove(item)
                    continue
                # Urgent requests are small by definition: all those waiting share one call.
                urgent = queue is self._urgent
                limit_texts = self.max_texts if urgent else self.chunk_texts
                limit_chars = 1 << 62 if urgent else self.chunk_chars
                start = end = item.sent
                while end < len(item.texts) and (
                    (end == start and not plan)  # one text always goes, however long
                    or (count < limit_texts and chars + len(item.texts[end]) <= limit_chars)
                ):
                    count += 1
                    chars += len(item.texts[end])
                    end += 1
                if end > start:
                    plan.append((item, start, end))
                if end < len(item.texts) or count >= limit_texts:
                    return plan
            if plan:  # urgent requests go alone: no bulk text rides along to slow them
                return plan
        return plan

    async def _drain(self, urgent_lane: bool = False) -> None:
        await asyncio.sleep(0)  # let requests from this loop turn join the first call
        submit = self._submit_urgent if urgent_lane and self._submit_urgent else self._submit
        while True:
            plan = self._next_call(urgent_lane)
            if not plan:
                if urgent_lane or self._submit_urgent is not None:
                    own = self._urgent if urgent_lane else self._bulk
                    if not own:
                        return
                    continue  # only cancelled requests were left: they are gone now
                if not (self._urgent or self._bulk):
                    return
                continue
            texts = [t for item, start, end in plan for t in item.texts[start:end]]
            for item, _, end in plan:
                item.sent = end
            self.stats.calls += 1
            self.stats.texts += len(texts)
            self.stats.largest = max(self.stats.largest, len(plan))
            self.stats.sizes.append(len(plan))
            del self.stats.sizes[:-1000]
            try:
                vectors = await asyncio.wrap_future(submit(texts))
            except Exception as exc:  # every waiter in this call gets the engine's error
                for item, _, _ in plan:
                    self._forget(item)
                    if not item.future.done():
                        item.future.set_exception(exc)
                continue
            offset = 0
            for item, start, end in plan:
                item.parts.append(vectors[offset : offset + end - start])
                offset += end - start
                if item.left == 0:
                    self._forget(item)
                    if not item.future.done():
                        whole = item.parts[0] if len(item.parts) == 1 else np.vstack(item.parts)
                        item.future.set_result(whole)

    def _forget(self, item: _Waiting) -> None:
        for queue in (self._urgent, self._bulk):
            if item in queue:
                queue.remove(item)
