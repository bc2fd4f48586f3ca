"""Engines are built in one place (inference/engines.py), from settings."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np
import pytest

from desktop.flows.embedding import embedding_model
from foundation.errors import ModelUnavailable
from inference.base import adopt_identity
from inference.embedder import Embedder
from inference.engines import (
    BACKENDS,
    LazyEmbedder,
    LazyGenerator,
    RuntimeSettings,
    open_embedder,
    open_generator,
    open_guard_judge,
    open_judge,
    open_judge_or_none,
)
from inference.http_backend import HttpSettings, OpenAIHttpGenerator
from inference.registry import resolve_model

ROOT = Path(__file__).resolve().parents[1]
ENGINE_CLASSES = ("LlamaGenerator", "OpenAIHttpGenerator", "OnnxEmbedder", "OnnxJudge")


def test_only_the_engines_module_constructs_engines() -> None:
    pattern = re.compile(r"\b(" + "|".join(ENGINE_CLASSES) + r")\(")
    found = []
    for folder in ("desktop", "inference"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "inference/engines.py":
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                if pattern.search(line) and not line.lstrip().startswith("class "):
                    found.append(f"{rel}: {line.strip()}")
    assert found == []


def test_the_http_backend_needs_a_url() -> None:
    with pytest.raises(ModelUnavailable, match="has no URL — set it in Settings"):
        open_generator(RuntimeSettings(backend="http"))
    remote = open_generator(
        RuntimeSettings(
            backend="http", http=HttpSettings(base_url="http://127.0.0.1:9/v1/", model="m")
        )
    )
    assert isinstance(remote, OpenAIHttpGenerator)
    assert remote.model_id == "http://127.0.0.1:9/v1#m"


def test_a_missing_model_file_is_the_same_error_for_every_engine(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.onnx")
    for open_engine, settings in (
        (open_generator, RuntimeSettings(llm_path=str(tmp_path / "nope.gguf"))),
        (open_embedder, RuntimeSettings(embedder_path=missing)),
        (open_judge, RuntimeSettings(judge_path=missing)),
    ):
        with pytest.raises(ModelUnavailable, match="nope"):
            open_engine(settings)  # type: ignore[operator]
    judge, why = open_judge_or_none(RuntimeSettings(judge_path=missing))
    assert judge is None and "nope.onnx" in why


def test_lazy_engines_load_on_first_use_only(tmp_path: Path) -> None:
    settings = RuntimeSettings(
        llm_path=str(tmp_path / "nope.gguf"), embedder_path=str(tmp_path / "nope.onnx")
    )
    generator, embedder = LazyGenerator(settings), LazyEmbedder(settings)
    generator.close()
    embedder.close()  # closing an engine never loaded loads nothing
    with pytest.raises(ModelUnavailable):
        generator.count_tokens("x")
    with pytest.raises(ModelUnavailable):
        embedder.embed(["x"])


@pytest.mark.model
def test_model_ids_come_from_the_base_classes() -> None:
    embedder = open_embedder()
    judge = open_judge()
    guard = open_guard_judge()
    try:
        model = resolve_model("embedder")
        # The index keys its vectors by this id. The embedder runs its int8 copy by
        # default: an id of its own, so an fp32 index redoes its vectors once.
        assert embedder.model_id == f"{model.title} (int8)@{model.sha256[:16]}"
        assert embedding_model(embedder).model_id == embedder.model_id
        assert embedder.tokenizer_path == model.tokenizer
        # The shipped judge has 7-bit weights already: it runs as it is.
        assert judge.model_id == f"judge-int8.onnx:{resolve_model('judge').sha256[:12]}"
        # The guard's judge has full-range ones: it runs from its 7-bit copy
        # (inference/judge_graph.py).
        assert guard is not None
        guard_sha = resolve_model("judge", role="guard").sha256
        assert guard.model_id == f"guard-int8.onnx:{guard_sha[:12]}+int7"
    finally:
        embedder.close()
        judge.close()
        if guard is not None:
            guard.close()


def test_a_backend_is_one_entry_in_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new backend: its factory registered under a name the settings choose."""

    class Echo(Embedder):
        dimension = 2
        name = "echo"
        model_id = "echo@1"

        def embed(self, texts):  # type: ignore[no-untyped-def]
            return np.ones((len(texts), 2), dtype=np.float32)

    monkeypatch.setitem(BACKENDS["embedder"], "echo", lambda settings, build: Echo())
    embedder = open_embedder(RuntimeSettings(embedder_backend="echo"))
    assert isinstance(embedder, Echo)
    lazy = LazyEmbedder(RuntimeSettings(embedder_backend="echo"))
    assert lazy.embed(["a"]).shape == (1, 2) and lazy.model_id == "echo@1"


def test_an_unknown_backend_names_the_ones_there_are() -> None:
    with pytest.raises(ModelUnavailable) as info:
        open_embedder(RuntimeSettings(embedder_backend="grpc"))
    assert str(info.value) == "No embedder backend named 'grpc'; this version has embedded, http."


def test_a_proxy_answers_every_attribute_its_interface_declares() -> None:
    class Engine(ABC):
        model_id: str = ""
        thresholds: tuple[float, ...] = ()

        @abstractmethod
        def run(self) -> None: ...

    class Inner(Engine):
        model_id = "inner@1"
        thresholds = (0.5,)

        def run(self) -> None:
            return None

    class Proxy(Engine):
        @property
        def model_id(self) -> str:  # type: ignore[override]
            return "own"

        def run(self) -> None:
            return None

    proxy = Proxy()
    adopt_identity(proxy, Inner(), Engine)
    assert proxy.thresholds == (0.5,) and proxy.model_id == "own"
