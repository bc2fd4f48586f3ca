"""The resident runtime: states, warm-up, failures, work on the engines' own threads."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

import numpy as np
import pytest

from foundation.errors import ModelUnavailable
from inference.base import Completion, Generator, Message
from inference.embedder import Embedder, Vectors
from inference.note_model import NoteModel, load_note_model
from inference.paths import models_dir
from inference.runtime import BULK_NICE, Runtime, RuntimeSettings, State
from tests.fakes import ScriptedGenerator, ScriptedJudge


class FakeEmbedder(Embedder):
    dimension = 4
    name = "fake"

    def __init__(self) -> None:
        self.threads: set[str] = set()

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.threads.add(threading.current_thread().name)
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def _runtime(answers: list[str], embedder: Embedder | None = None) -> Runtime:
    return Runtime(
        make_generator=lambda: ScriptedGenerator(list(answers)),
        make_embedder=lambda: embedder or FakeEmbedder(),
    )


def test_start_warms_both_engines_and_reports_timings() -> None:
    states: list[State] = []
    rt = _runtime(["x", "{}", "answer"])
    rt.add_listener(lambda r: states.append(r.state))
    rt.start()
    rt.wait_ready(timeout=10)
    assert rt.state is State.READY and states[0] is State.LOADING and states[-1] is State.READY
    gen = rt.generator
    assert isinstance(gen, ScriptedGenerator) and len(gen.calls) == 2  # tiny + full warm-up
    for report in rt.reports.values():
        assert report.ready_seconds is not None and report.error is None
    assert rt.ready_seconds is not None
    assert rt.submit_complete([Message("user", "q")]).result().text == "answer"
    rt.close()
    assert rt.state is State.CLOSED


def test_work_runs_on_each_engines_own_thread() -> None:
    emb = FakeEmbedder()
    rt = _runtime(["x", "{}"], emb)
    rt.wait_ready(timeout=10)
    rt.submit_embed(["a", "b"]).result()
    assert emb.threads == {"antinomy-embed_0"}
    rt.close()


def test_async_helpers() -> None:
    rt = _runtime(["x", "{}", "hello"])
    rt.wait_ready(timeout=10)

    async def go() -> tuple[str, Vectors]:
        return (await rt.complete([Message("user", "q")])).text, await rt.embed(["a"])

    text, vec = asyncio.run(go())
    assert text == "hello" and vec.shape == (1, 4)
    rt.close()


def test_a_failing_engine_fails_the_runtime_with_its_message() -> None:
    def broken() -> Embedder:
        raise ModelUnavailable("The embedder file is gone — reinstall it.")

    rt = Runtime(make_generator=lambda: ScriptedGenerator(["x", "{}"]), make_embedder=broken)
    rt.start()
    with pytest.raises(ModelUnavailable, match="reinstall it"):
        rt.wait_ready(timeout=10)
    assert rt.state is State.FAILED
    assert rt.reports["embedder"].error == "The embedder file is gone — reinstall it."
    with pytest.raises(ModelUnavailable):
        rt.embedder  # noqa: B018
    rt.close()


def test_an_unexpected_exception_becomes_model_unavailable() -> None:
    def bug() -> Embedder:
        raise ZeroDivisionError("oops")

    rt = Runtime(make_generator=lambda: ScriptedGenerator(["x", "{}"]), make_embedder=bug)
    with pytest.raises(ModelUnavailable, match="ZeroDivisionError: oops"):
        rt.wait_ready(timeout=10)
    rt.close()


@pytest.mark.model
def test_real_runtime_is_warm(runtime: Runtime) -> None:
    assert runtime.state is State.READY
    vec = runtime.submit_embed(["hello world"]).result()
    assert vec.shape == (1, 384)
    llm = runtime.reports["llm"]
    assert llm.model is not None and llm.model.verified
    assert llm.load_seconds is not None and llm.load_seconds < 30


class Endless(Generator):
    """Warms up normally, then generates until told to stop."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.warm_calls = 0

    def complete(self, messages, *, schema=None, settings=None, stop=None):  # type: ignore[no-untyped-def]
        if self.warm_calls < 2:
            self.warm_calls += 1
            return Completion("{}", 1, 1, 0.0, "stop")
        self.started.set()
        while not (stop is not None and stop.is_set()):
            time.sleep(0.01)
        return Completion("partial", 1, 1, 0.0, "stopped")


def test_close_stops_a_running_generation() -> None:
    endless = Endless()
    rt = Runtime(make_generator=lambda: endless, make_embedder=FakeEmbedder)
    rt.wait_ready(timeout=10)
    future = rt.submit_complete([Message("user", "go on forever")])
    assert endless.started.wait(5)
    rt.close()  # would hang forever if the closing flag did not reach the generator
    assert future.result(timeout=5).finish_reason == "stopped"


def test_embedder_busy_is_true_while_embedding_work_runs() -> None:
    release = threading.Event()

    class Slow(FakeEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            release.wait(5)
            return super().embed(texts)

    rt = Runtime(make_generator=lambda: ScriptedGenerator(["x", "{}"]), make_embedder=Slow)
    release.set()
    rt.wait_ready(timeout=10)
    release.clear()
    assert not rt.embedder_busy()
    future = rt.submit_embed(["a"])
    assert rt.embedder_busy()
    release.set()
    future.result(timeout=5)
    assert not rt.embedder_busy()
    rt.close()


def test_queued_proxies_run_on_the_engines_own_workers() -> None:
    rt = _runtime(["x", "{}", '{"a": 1}'])
    rt.start()
    rt.wait_ready(5)
    seen: list[str] = []
    inner = rt.generator
    assert isinstance(inner, ScriptedGenerator)
    original = inner.complete

    def record(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return original(*args, **kwargs)

    inner.complete = record  # type: ignore[method-assign]
    gen = rt.queued_generator()
    assert gen.model_name == inner.model_name
    assert gen.complete([Message("user", "hi")]).text == '{"a": 1}'
    assert seen and seen[0].startswith("antinomy-llm")
    emb = rt.queued_embedder()
    assert emb.embed(["a", "b"]).shape == (2, emb.dimension)
    rt.close()


def test_the_judge_is_the_third_engine_on_its_own_thread() -> None:
    seen: set[str] = set()

    class ThreadJudge(ScriptedJudge):
        def score(self, pairs):  # type: ignore[no-untyped-def]
            seen.add(threading.current_thread().name)
            return super().score(pairs)

    judge = ThreadJudge(contradictions=[("a", "b")])
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=lambda: judge,
    )
    rt.wait_ready(timeout=10)
    report = rt.reports["judge"]
    assert report.ready_seconds is not None and "contradiction" in report.description
    assert len(judge.calls) == 5  # tiny warm-up (1 pair) + full warm-up (4 pairs)
    queued = rt.queued_judge()
    assert queued.model_id == "scripted" and queued.thresholds == judge.thresholds
    scores = queued.score([("b", "a")])
    assert scores.shape == (1, 3) and scores[0, 0] > 0.9
    assert asyncio.run(rt.score([("a", "b")]))[0, 0] > 0.9
    assert seen == {"antinomy-judge_0"}
    rt.close()
    with pytest.raises(ModelUnavailable):
        rt.judge  # noqa: B018


def test_a_missing_judge_fails_the_runtime_with_one_line_naming_the_fix() -> None:
    def missing() -> ScriptedJudge:
        raise ModelUnavailable(
            "The judge file is missing at /x/models/judge/judge-int8.onnx — reinstall Antinomy."
        )

    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=missing,
    )
    with pytest.raises(ModelUnavailable, match="reinstall Antinomy"):
        rt.wait_ready(timeout=10)
    assert rt.state is State.FAILED and "missing" in (rt.reports["judge"].error or "")
    rt.close()


def test_the_urgent_lane_counts_as_embedder_work() -> None:
    """A guard check on the urgent lane keeps the embedder busy for the LLM's thread budget
    (it used to bypass the count, so generation kept both cores and stalled)."""
    release = threading.Event()
    started = threading.Event()

    class Slow(FakeEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if texts != ["warm"] and len(texts[0]) < 100:
                started.set()
                release.wait(5)
            return super().embed(texts)

    emb = Slow()
    rt = Runtime(make_generator=lambda: ScriptedGenerator(["x", "{}"]), make_embedder=lambda: emb)
    rt.wait_ready(timeout=10)
    assert not rt.embedder_busy() and rt.engines_working() == 0
    future = rt.submit_embed(["a guard check"], urgent=True)
    assert started.wait(5)
    assert rt.embedder_busy() and rt.engines_working() == 1
    release.set()
    future.result(timeout=5)
    assert not rt.embedder_busy() and rt.engines_working() == 0
    assert "antinomy-embed-urgent_0" in emb.threads
    rt.close()


def test_urgent_embeddings_do_not_wait_behind_a_bulk_batch() -> None:
    release = threading.Event()
    entered = threading.Event()

    class Bulky(FakeEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if len(texts) > 1:
                entered.set()
                release.wait(5)
            return super().embed(texts)

    rt = Runtime(make_generator=lambda: ScriptedGenerator(["x", "{}"]), make_embedder=Bulky)
    rt.wait_ready(timeout=10)
    bulk = rt.submit_embed(["note"] * 64)
    assert entered.wait(5)  # the bulk batch holds the embedder's worker
    urgent = rt.submit_embed(["check"], urgent=True)
    assert urgent.result(timeout=5).shape == (1, 4)
    assert not bulk.done() and rt.engines_working() == 1
    release.set()
    bulk.result(timeout=5)
    rt.close()


def test_judge_work_counts_for_the_thread_budget() -> None:
    release = threading.Event()
    inside = threading.Event()

    class SlowJudge(ScriptedJudge):
        def score(self, pairs):  # type: ignore[no-untyped-def]
            if pairs[0][0] == "slow":
                inside.set()
                release.wait(5)
            return super().score(pairs)

    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=SlowJudge,
    )
    rt.wait_ready(timeout=10)
    queued = rt.submit_judge([("slow", "b")])
    assert inside.wait(5) and rt.engines_working() == 1
    release.set()
    queued.result(timeout=5)
    assert rt.engines_working() == 0
    # The direct judge (guard checks) scores on the caller's thread, counted all the same.
    inside.clear()
    release.clear()
    direct = rt.direct_judge()
    t = threading.Thread(target=direct.score, args=([("slow", "c")],))
    t.start()
    assert inside.wait(5) and rt.engines_working() == 1
    release.set()
    t.join(5)
    assert rt.engines_working() == 0
    rt.close()


def test_engines_warming_up_count_as_working() -> None:
    gate = threading.Event()
    seen: list[int] = []

    class SlowToLoad(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__()
            gate.wait(5)

    def make_generator() -> Generator:
        seen.append(rt.engines_working())
        gate.set()
        return ScriptedGenerator(["x", "{}"])

    rt = Runtime(make_generator=make_generator, make_embedder=SlowToLoad)
    rt.wait_ready(timeout=10)
    assert seen and seen[0] >= 1  # the embedder (and the judge) were still loading
    assert rt.engines_working() == 0
    rt.close()


def test_a_non_onnx_embedder_is_the_guards_own() -> None:
    rt = _runtime(["x", "{}"])
    rt.wait_ready(timeout=10)
    assert rt.guard_embedder() is rt.embedder and rt.guard_embedder_note is None
    rt.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_bulk_work_yields_the_cpu_and_the_urgent_lane_does_not() -> None:
    """Once up, the embedder's and the judge's own workers run at a lower priority (a bulk
    batch yields to generation and to a check); the urgent lane and the LLM keep ours."""
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=ScriptedJudge,
    )
    rt.wait_ready(timeout=10)

    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    ours = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        assert rt.submit("embedder", nice).result() == max(ours, BULK_NICE)
        assert rt.submit("judge", nice).result() == max(ours, BULK_NICE)
        assert rt._urgent_pool.submit(nice).result() == ours
        assert rt.submit("llm", nice).result() == ours
    finally:
        rt.close()


def _note_model() -> NoteModel:
    return load_note_model(models_dir() / "judge" / "note-model.json")


def test_the_guard_decides_with_its_own_judge_and_the_scan_keeps_the_note_model() -> None:
    main = ScriptedJudge(contradictions=[("a", "b")])
    main.note_model = _note_model()
    guard = ScriptedJudge(contradictions=[("x", "y")])
    guard.model_id = "guard"
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=lambda: main,
        make_guard_judge=lambda: guard,
    )
    rt.wait_ready(timeout=10)
    # The window's scan judges through the queue: the note-level model comes along.
    assert rt.queued_judge().note_model is main.note_model
    assert rt.direct_judge().note_model is main.note_model
    assert rt.guard_judge() is guard
    assert len(guard.calls) == 5  # warmed like the judge before its first check
    assert rt.guard_judge() is guard  # loaded once
    checked = rt.direct_judge(guard=True)
    assert checked.model_id == "guard"
    assert checked.score([("y", "x")])[0, 0] > 0.9
    assert checked.score([("a", "b")])[0, 0] < 0.5
    assert ("a", "b") in guard.calls and ("a", "b") not in main.calls
    rt.close()


def test_a_runtime_given_its_own_judge_lets_the_guard_use_it() -> None:
    main = ScriptedJudge()
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=lambda: main,
    )
    rt.wait_ready(timeout=10)
    assert rt.guard_judge() is main
    assert rt.guard_judge_note is None
    rt.close()


def test_a_guard_judge_that_fails_to_load_leaves_the_guard_on_the_judge_and_says_why() -> None:
    def missing() -> ScriptedJudge:
        raise ModelUnavailable("The judge file is missing at /x/guard-int8.onnx.")

    main = ScriptedJudge()
    rt = Runtime(
        make_generator=lambda: ScriptedGenerator(["x", "{}"]),
        make_embedder=FakeEmbedder,
        make_judge=lambda: main,
        make_guard_judge=missing,
    )
    rt.wait_ready(timeout=10)
    assert rt.guard_judge() is main
    assert rt.guard_judge_note == (
        "the guard decides with the scan's judge: The judge file is missing at /x/guard-int8.onnx."
    )
    rt.close()


@pytest.mark.model
def test_the_real_guard_judge_is_the_manifests_guard_entry(runtime: Runtime) -> None:
    guard = runtime.guard_judge()
    assert guard.model_id.startswith("guard-int8.onnx:")
    assert guard.thresholds.guard == 0.9
    assert runtime.direct_judge(guard=True).model_id == guard.model_id
    scan = runtime.queued_judge()
    assert scan.model_id.startswith("judge-int8.onnx:") and scan.note_model is not None


def test_the_guard_threshold_is_its_own_judges_before_that_judge_loads() -> None:
    rt = Runtime()  # not started: nothing loaded
    try:
        assert rt.guard_thresholds().guard == 0.9  # the manifest's guard entry
    finally:
        rt.close()
    own = Runtime(RuntimeSettings(judge_path="/x/my-judge.onnx"))
    try:
        with pytest.raises(ModelUnavailable):  # the user's judge decides, not loaded yet
            own.guard_thresholds()
    finally:
        own.close()


def test_an_on_demand_engine_loads_at_first_use_not_at_start() -> None:
    made: list[ScriptedGenerator] = []

    def make() -> ScriptedGenerator:
        made.append(ScriptedGenerator(["x", "{}", "hello"]))
        return made[-1]

    rt = Runtime(make_generator=make, make_embedder=FakeEmbedder, on_demand=("llm",))
    rt.wait_ready(timeout=10)
    assert rt.state is State.READY and made == []  # ready without the language model
    assert rt.reports["llm"].model is None and rt.reports["llm"].load_seconds is None
    answer = rt.queued_generator().complete([Message("user", "hi")])
    assert answer.text == "hello" and len(made) == 1  # loaded and warmed (2 calls), once
    assert rt.reports["llm"].ready_seconds is not None
    rt.queued_generator()
    assert len(made) == 1
    rt.close()


def test_an_on_demand_engine_that_fails_says_why_and_leaves_the_others_up() -> None:
    def missing() -> ScriptedGenerator:
        raise ModelUnavailable("The language model file is missing at /x/m.gguf.")

    rt = Runtime(make_generator=missing, make_embedder=FakeEmbedder, on_demand=("llm",))
    rt.wait_ready(timeout=10)
    with pytest.raises(ModelUnavailable, match=r"missing at /x/m\.gguf"):
        rt.generator  # noqa: B018
    assert rt.state is State.READY and rt.submit_embed(["a"]).result().shape == (1, 4)
    rt.close()
