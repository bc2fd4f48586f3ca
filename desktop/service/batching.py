"""Micro-batching of concurrent embedding requests.

Requests that arrive while the embedder is busy wait together and go in one
embed call as soon as it is free; a request that finds it idle goes at once
(after one turn of the event loop, so requests that arrived in the same turn
share the call). No fixed wait is added to a lone request — the hook's budget
is tight — yet under load the work collapses into few calls. The embedder
already sorts each call's texts by length and splits them into ONNX runs, and
a text's vector does not depend on its neighbours (MEASURED.md), so batching
changes no result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from inference.embedder import Vectors

SubmitEmbed = Callable[[list[str]], "Future[Vectors]"]


@dataclass
class BatchStats:
    calls: int = 0
    texts: int = 0
    requests: int = 0
    largest: int = 0
    sizes: list[int] = field(default_factory=list)


@dataclass
class _Waiting:
    texts: list[str]
    future: asyncio.Future[Vectors]


class EmbedBatcher:
    """Collects concurrent ``embed`` calls on one event loop into single embedder calls.

    Only the loop that created it may call :meth:`embed`.
    """

    def __init__(self, submit: SubmitEmbed, *, max_texts: int = 256) -> None:
        self._submit = submit
        self.max_texts = max_texts
        self._queue: list[_Waiting] = []
        self._running: asyncio.Task[None] | None = None
        self.stats = BatchStats()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        loop = asyncio.get_running_loop()
        waiting = _Waiting(list(texts), loop.create_future())
        self._queue.append(waiting)
        self.stats.requests += 1
        if self._running is None or self._running.done():
            self._running = loop.create_task(self._drain())
        return await waiting.future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let requests from this loop turn join the first call
        while self._queue:
            batch: list[_Waiting] = []
            count = 0
            while self._queue and (
                not batch or count + len(self._queue[0].texts) <= self.max_texts
            ):
                item = self._queue.pop(0)
                if item.future.cancelled():  # the client went away
                    continue
                batch.append(item)
                count += len(item.texts)
            if not batch:
                continue
            texts = [t for item in batch for t in item.texts]
            self.stats.calls += 1
            self.stats.texts += len(texts)
            self.stats.largest = max(self.stats.largest, len(batch))
            self.stats.sizes.append(len(batch))
            del self.stats.sizes[:-1000]
            try:
                vectors = await asyncio.wrap_future(self._submit(texts))
            except Exception as exc:  # every waiter gets the engine's error
                for item in batch:
                    if not item.future.done():
                        item.future.set_exception(exc)
                continue
            start = 0
            for item in batch:
                end = start + len(item.texts)
                if not item.future.done():
                    item.future.set_result(vectors[start:end])
                start = end
