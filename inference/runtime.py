"""The resident runtime: the three engines loaded, warmed and owned in one place.

Shared by the desktop app and ``antinomy serve``. The LLM, the embedder and
the contradiction judge each live on their own single-worker executor, so a
``Llama`` is only ever touched by one thread and a long generation never
delays an embedding. Loading and warm-up run on those
executors; nothing here blocks the caller except :meth:`Runtime.wait_ready`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from foundation.errors import AntinomyError, ModelUnavailable
from inference.base import (
    AnyStop,
    Completion,
    GenerationSettings,
    Generator,
    Message,
    StopFlag,
)
from inference.embedder import Embedder, Vectors
from inference.engines import (
    BACKENDS,
    EngineKind,
    RuntimeSettings,
    guard_judge_spec,
    open_embedder,
    open_generator,
    open_guard_judge,
    open_int8_embedder,
    open_judge,
)
from inference.http_backend import OpenAIHttpGenerator
from inference.http_embedder import OpenAIHttpEmbedder
from inference.judge import Judge, Scores, Thresholds
from inference.llama_backend import LlamaGenerator
from inference.queued import QueuedEmbedder, QueuedGenerator, QueuedJudge
from inference.registry import ResolvedModel
from inference.warm import EngineReport, warm_embedder, warm_generator, warm_judge

__all__ = ["ENGINES", "EngineReport", "Runtime", "RuntimeSettings", "State"]

log = logging.getLogger(__name__)

EngineName = EngineKind
#: The engines a runtime keeps resident: every registered kind.
ENGINES: tuple[EngineName, ...] = tuple(BACKENDS)


#: Nice value of the embedder's and the judge's own workers once their engine is up: the
#: bulk work they run (indexing, a scan's sentence pairs, the guard's decisions) yields
#: the CPU to generation and to the urgent lane (a guard check, a search query), which
#: keep the process's priority. Measured with bench_load.py (docs/benchmarks.md, "Bulk work
#: yields").
BULK_NICE = 10


def lower_this_threads_priority(nice: int = BULK_NICE) -> int | None:
    """Give the calling thread at least ``nice`` (Linux: a thread is its own task; never
    raises its priority, which would need privileges). Its nice value, or None where the
    platform has no per-thread priority."""
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        if current < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        return os.getpriority(os.PRIO_PROCESS, tid)
    except (AttributeError, OSError) as exc:  # no per-thread nice here (macOS, Windows)
        log.info("bulk work keeps its priority: %s", exc)
        return None


class State(enum.Enum):
    IDLE = "idle"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"
    CLOSED = "closed"


Listener = Callable[["Runtime"], None]


class Runtime:
    """Owns the generator, the embedder and the judge. Methods are safe from any thread."""

    def __init__(
        self,
        settings: RuntimeSettings | None = None,
        *,
        make_generator: Callable[[], Generator] | None = None,
        make_embedder: Callable[[], Embedder] | None = None,
        make_judge: Callable[[], Judge] | None = None,
        make_guard_judge: Callable[[], Judge | None] | None = None,
        on_demand: Iterable[EngineName] = (),
    ) -> None:
        """``make_*``: build an engine instead of the settings' model (tests). A runtime
        given its own ``make_judge`` and no ``make_guard_judge`` lets the guard decide with
        that judge. ``on_demand``: engines not brought up at start but on first use
        (``antinomy serve`` loads the language model only when memory needs it)."""
        self.settings = settings or RuntimeSettings()
        self.on_demand = frozenset(on_demand)
        self._make_generator = make_generator or self._default_generator
        self._make_embedder = make_embedder or self._default_embedder
        self._make_judge = make_judge or self._default_judge
        #: The guard's judge comes from the manifest (not from a ``make_*`` given here).
        self._guard_from_manifest = make_guard_judge is None and make_judge is None
        if make_guard_judge is None:
            make_guard_judge = self._default_guard_judge if make_judge is None else _no_judge
        self._make_guard_judge = make_guard_judge
        self._llm_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-llm")
        self._embed_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-embed")
        #: Interactive embeddings (a guard check, a search query) run here, beside a bulk
        #: batch on the embedder's own worker: the ONNX session allows two callers.
        self._urgent_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-embed-urgent")
        # Started now, like the other workers (which start by loading their engine), not
        # on the first urgent call: a runtime's threads are all there from its start.
        self._urgent_pool.submit(lambda: None)
        self._judge_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-judge")
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []
        self._generator: Generator | None = None
        self._embedder: Embedder | None = None
        self._judge: Judge | None = None
        self._guard_embedder: Embedder | None = None
        #: Why the guard fell back to the fp32 embedder, if it did.
        self.guard_embedder_note: str | None = None
        self._guard_judge: Judge | None = None
        #: Why the guard decides with the scan's judge though the manifest names its own.
        self.guard_judge_note: str | None = None
        self.reports: dict[EngineName, EngineReport] = {
            name: EngineReport(name) for name in ENGINES
        }
        self.state = State.IDLE
        self.error: AntinomyError | None = None
        self.started_at: float | None = None
        #: Seconds from :meth:`start` until all three engines were warm.
        self.ready_seconds: float | None = None
        self._ready = threading.Event()
        self._pending = 0
        #: Set by close(): a running generation stops at its next token.
        self._closing = StopFlag()
        self._embed_jobs = 0  # running or queued on the embedder's two executors
        #: Jobs running right now on the embedder and the judge, and engines warming up:
        #: what the LLM's thread budget leaves their cores to.
        self._running: dict[EngineName, int] = {"llm": 0, "embedder": 0, "judge": 0}

    # ------------------------------------------------------------------ factories

    def _seen(self, name: EngineName) -> Callable[[ResolvedModel], None]:
        def record(model: ResolvedModel) -> None:
            self.reports[name].model = model

        return record

    def _default_generator(self) -> Generator:
        s = self.settings
        # Tokens on the free cores: our own embedder and judge jobs count as taken cores
        # (inference/threads.py).
        generator = open_generator(s, on_model=self._seen("llm"), own_busy=self.engines_working)
        if not isinstance(generator, LlamaGenerator):
            self.reports["llm"].description = generator.backend_name
        return generator

    def _default_embedder(self) -> Embedder:
        embedder = open_embedder(self.settings, on_model=self._seen("embedder"))
        if isinstance(embedder, OpenAIHttpEmbedder):
            self.reports["embedder"].description = (
                f"{embedder.backend_name}, {embedder.served_model or 'server default'}, "
                f"{embedder.dimension} dimensions"
                + (" — sends note text off this machine" if embedder.leaves_machine else "")
            )
        return embedder

    def _default_judge(self) -> Judge:
        return open_judge(self.settings, on_model=self._seen("judge"))

    def _default_guard_judge(self) -> Judge | None:
        return open_guard_judge(self.settings)

    # ------------------------------------------------------------------ lifecycle

    def add_listener(self, listener: Listener) -> None:
        """``listener(runtime)`` is called on state changes, from a worker thread."""
        self._listeners.append(listener)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:  # a broken listener must not break the engines
                log.exception("runtime listener failed")

    def start(self) -> None:
        """Load and warm the engines in the background. Returns at once."""
        with self._lock:
            if self.state is not State.IDLE:
                return
            self.state = State.LOADING
            self.started_at = time.perf_counter()
            eager = [name for name in ENGINES if name not in self.on_demand]
            self._pending = len(eager)
            for name in eager:  # loading and warming keep a core busy too
                self._running[name] += 1
        self._notify()
        for name in eager:
            self._pools[name].submit(self._bring_up, name)

    @property
    def _pools(self) -> dict[EngineName, ThreadPoolExecutor]:
        return {"llm": self._llm_pool, "embedder": self._embed_pool, "judge": self._judge_pool}

    def _bring_up(self, name: EngineName) -> None:
        report = self.reports[name]
        try:
            error = self._load(name, report)
        finally:
            with self._lock:
                self._running[name] -= 1
        self._finish(error)
        if name != "llm":  # loaded at full priority (cold start), then bulk work yields
            lower_this_threads_priority()

    def _on_demand(self, name: EngineName) -> None:
        """Load an on-demand engine on its own worker, once; raises why it cannot."""
        if name == "llm" and self._generator is not None:
            return
        with self._lock:
            self._running[name] += 1
        try:
            error = self._load(name, self.reports[name])
        finally:
            with self._lock:
                self._running[name] -= 1
        if error is not None:
            raise error
        self._notify()

    def _load(self, name: EngineName, report: EngineReport) -> AntinomyError | None:
        """Load and warm one engine; the error that stopped it, if any."""
        try:
            t0 = time.perf_counter()
            if name == "llm":
                generator = self._make_generator()
                report.load_seconds = time.perf_counter() - t0
                if isinstance(generator, OpenAIHttpGenerator):
                    generator.list_models()  # fail now, not on first use
                report.description = report.description or generator.backend_name
                warm_generator(generator, report)
                self._generator = generator
            elif name == "judge":
                judge = self._make_judge()
                report.load_seconds = time.perf_counter() - t0
                report.description = "onnxruntime, contradiction / entailment / neutral"
                warm_judge(judge, report)
                self._judge = judge
            else:
                embedder = self._make_embedder()
                report.load_seconds = time.perf_counter() - t0
                report.description = (
                    report.description or f"onnxruntime, {embedder.dimension} dimensions"
                )
                warm_embedder(embedder, report)
                self._embedder = embedder
        except AntinomyError as exc:
            report.error = str(exc)
            return exc
        except Exception as exc:  # an engine bug must surface as a message, not a hang
            log.exception("loading the %s failed", name)
            report.error = f"{type(exc).__name__}: {exc}"
            return ModelUnavailable(f"Loading the {name} failed: {report.error}")
        log.info("%s ready in %.2f s", name, report.ready_seconds or 0.0)
        return None

    def _finish(self, error: AntinomyError | None) -> None:
        with self._lock:
            if error is not None and self.error is None:
                self.error = error
            self._pending -= 1
            if self._pending > 0 or self.state is State.CLOSED:
                return
            if self.error is not None:
                self.state = State.FAILED
            else:
                self.state = State.READY
                self.ready_seconds = time.perf_counter() - (self.started_at or 0.0)
        self._ready.set()
        self._notify()

    def wait_ready(self, timeout: float | None = None) -> Runtime:
        """Block until the engines are warm; raises the first load error."""
        if self.state is State.IDLE:
            self.start()
        if not self._ready.wait(timeout):
            raise ModelUnavailable(f"The models were not ready after {timeout} s.")
        if self.error is not None:
            raise self.error
        return self

    @property
    def generator(self) -> Generator:
        """The language model; an on-demand one is loaded now (blocking: call from a
        worker thread)."""
        if self._generator is None and "llm" in self.on_demand and self.state is State.READY:
            self._llm_pool.submit(self._on_demand, "llm").result()
        if self._generator is None:
            raise self.error or ModelUnavailable("The language model is still loading.")
        return self._generator

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            raise self.error or ModelUnavailable("The embedder is still loading.")
        return self._embedder

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            raise self.error or ModelUnavailable("The contradiction judge is still loading.")
        return self._judge

    # ------------------------------------------------------------------ work

    def embedder_busy(self) -> bool:
        """True while embedding work is running or queued, on either lane (any thread)."""
        return self._embed_jobs > 0

    def engines_working(self) -> int:
        """How many cores the embedder and the judge use right now (running jobs, and
        engines still warming up). The LLM's thread budget leaves these alone. Any thread."""
        with self._lock:
            return self._running["embedder"] + self._running["judge"]

    def _counted(self, engine: EngineName, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        """``fn(*args)`` wrapped so the engine counts as working while it runs."""

        def run() -> Any:
            with self._lock:
                self._running[engine] += 1
            try:
                return fn(*args)
            finally:
                with self._lock:
                    self._running[engine] -= 1
                    if engine == "embedder":
                        self._embed_jobs -= 1

        return run

    def _on_embedder(self, fn: Callable[..., Any], *args: Any, urgent: bool = False) -> Future[Any]:
        with self._lock:
            self._embed_jobs += 1
        pool = self._urgent_pool if urgent else self._embed_pool
        return pool.submit(self._counted("embedder", fn, *args))

    def submit(self, engine: EngineName, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run ``fn(*args)`` on that engine's own worker thread."""
        if engine == "embedder":
            return self._on_embedder(fn, *args)
        if engine == "judge":
            return self._judge_pool.submit(self._counted("judge", fn, *args))
        return self._llm_pool.submit(fn, *args)

    def submit_complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Future[Completion]:
        generator = self.generator
        either = AnyStop(stop, self._closing)
        return self._llm_pool.submit(
            lambda: generator.complete(messages, schema=schema, settings=settings, stop=either)
        )

    def submit_embed(
        self, texts: Sequence[str], *, urgent: bool = False, embedder: Embedder | None = None
    ) -> Future[Vectors]:
        """Embed on the embedder's worker; ``urgent`` (a guard check, a query: a few short
        texts) on its second lane, so it never waits behind a bulk batch. ``embedder``:
        another precision of the same engine (:meth:`guard_embedder`)."""
        engine = embedder or self.embedder
        return self._on_embedder(engine.embed, list(texts), urgent=urgent)

    def guard_embedder(self) -> Embedder:
        """The embedder the guard uses for both its decisions and each change: a real-int8
        copy of the embedder when :attr:`RuntimeSettings.guard_int8` (prepared once and
        cached on disk, inference/int8.py), else the embedder itself. Blocking the first
        time (loading, or ~5 s preparing the copy): call it from a worker thread."""
        main = self.embedder
        with self._lock:
            if self._guard_embedder is not None:
                return self._guard_embedder
        chosen = main
        if self.settings.guard_int8:
            try:
                copy = self._on_embedder(open_int8_embedder, self.settings, main).result()
                chosen = copy or main
            except AntinomyError as exc:
                self.guard_embedder_note = f"the guard uses the fp32 embedder: {exc}"
                log.warning("%s", self.guard_embedder_note)
        with self._lock:
            if self._guard_embedder is None:
                self._guard_embedder = chosen
            return self._guard_embedder

    def guard_judge(self) -> Judge:
        """The judge the guard decides with: the manifest's guard judge where it ships one
        and the user chose no judge file (models/judge/README.md says why the guard has
        its own), else the judge itself. Loaded and warmed on the judge's worker the first
        time — blocking: call it from a worker thread."""
        main = self.judge
        with self._lock:
            if self._guard_judge is not None:
                return self._guard_judge
        own: Judge | None = None
        try:
            own = self._judge_pool.submit(self._load_guard_judge).result()
        except Exception as exc:  # missing or damaged file, ONNX error: the scan's judge decides
            self.guard_judge_note = f"the guard decides with the scan's judge: {exc}"
            log.warning("%s", self.guard_judge_note)
        with self._lock:
            if self._guard_judge is None:
                self._guard_judge = own or main
            elif own is not None and own is not self._guard_judge:
                own.close()  # another thread loaded it first
            return self._guard_judge

    def guard_thresholds(self) -> Thresholds:
        """The thresholds of the judge the guard decides with, without loading it. Raises
        :class:`ModelUnavailable` while that is the judge and it is not loaded."""
        with self._lock:
            loaded = self._guard_judge
        if loaded is not None:
            return loaded.thresholds
        if self._guard_from_manifest:
            spec = guard_judge_spec(self.settings)
            if spec is not None:
                return Thresholds.from_mapping(spec.extra.get("thresholds"))
        return self.judge.thresholds

    def _load_guard_judge(self) -> Judge | None:
        judge = self._make_guard_judge()
        if judge is not None:
            warm_judge(judge, EngineReport("judge"))
        return judge

    def submit_judge(self, pairs: Sequence[tuple[str, str]]) -> Future[Scores]:
        judge = self.judge
        return self._judge_pool.submit(self._counted("judge", judge.score, list(pairs)))

    def score_now(self, pairs: Sequence[tuple[str, str]], judge: Judge | None = None) -> Scores:
        """Judge ``pairs`` on the calling thread, not behind the judge's queue (a guard
        check must not wait for a scan's batch; the ONNX session allows two callers),
        counted as judge work all the same; with ``judge`` (the guard's), that one.
        Blocking."""
        judge = judge or self.judge
        scores: Scores = self._counted("judge", judge.score, list(pairs))()
        return scores

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        future = self.submit_complete(messages, schema=schema, settings=settings, stop=stop)
        return await asyncio.wrap_future(future)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.wrap_future(self.submit_embed(texts))

    async def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        return await asyncio.wrap_future(self.submit_judge(pairs))

    def close(self) -> None:
        """Stop a running generation, wait for running calls, free the models."""
        with self._lock:
            if self.state is State.CLOSED:
                return
            self.state = State.CLOSED
        self._closing.set()
        engines: tuple[tuple[ThreadPoolExecutor, Generator | Embedder | Judge | None], ...] = (
            (self._llm_pool, self._generator),
            (self._urgent_pool, None),
            (self._embed_pool, self._embedder),
            (self._judge_pool, self._judge),
        )
        for pool, engine in engines:
            if engine is not None:
                pool.submit(engine.close)
            pool.shutdown(wait=True)
        if self._guard_embedder is not None and self._guard_embedder is not self._embedder:
            self._guard_embedder.close()
        if self._guard_judge is not None and self._guard_judge is not self._judge:
            self._guard_judge.close()
        self._guard_judge = None
        self._generator = None
        self._embedder = None
        self._guard_embedder = None
        self._judge = None
        self._ready.set()
        self._notify()

    # ------------------------------------------------------------------ proxies

    def queued_generator(self) -> Generator:
        """A :class:`Generator` whose calls go through the LLM's own worker.

        Flows are blocking functions that take a plain ``Generator``; the GUI and
        the server run them on their own threads and pass this proxy, so the
        ``Llama`` is still only touched by its single worker. Do not call it from
        the LLM worker itself (it would wait for itself).
        """
        return QueuedGenerator(self)

    def queued_embedder(self) -> Embedder:
        """An :class:`Embedder` whose calls run on the embedder's own worker."""
        return QueuedEmbedder(self)

    def queued_judge(self) -> Judge:
        """A :class:`Judge` whose calls run on the judge's own worker."""
        return QueuedJudge(self)

    def direct_judge(self, *, guard: bool = False) -> Judge:
        """A :class:`Judge` that scores on the caller's thread (:meth:`score_now`); with
        ``guard``, the guard's judge once :meth:`guard_judge` has loaded it."""
        inner = (self._guard_judge or self.judge) if guard else None
        return QueuedJudge(self, direct=True, inner=inner)


def _no_judge() -> Judge | None:
    return None
