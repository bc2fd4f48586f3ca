"""The one place engines are built from settings: the generator, the embedder, the judge.

The resident :class:`~inference.runtime.Runtime` (GUI, ``antinomy serve``) and
the command line (one engine per command, loaded on first use) both call these
functions, so a model path, a backend or a hash check means the same
everywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from foundation.errors import ModelUnavailable
from inference.base import (
    Completion,
    GenerationSettings,
    Generator,
    Message,
    StopFlag,
    adopt_identity,
)
from inference.embedder import Embedder, EmbedderSettings, Vectors
from inference.http_backend import HttpSettings
from inference.http_embedder import HttpEmbedderSettings
from inference.judge import Judge, JudgeSettings
from inference.llama_backend import LlamaSettings
from inference.registry import Kind, ModelSpec, ResolvedModel, default_spec, resolve_model

log = logging.getLogger(__name__)

#: Told which model file an engine is being built from, before it loads.
ModelSeen = Callable[[ResolvedModel], None]


@dataclass(frozen=True)
class RuntimeSettings:
    #: The LLM's backend (a name in :data:`BACKENDS`): "embedded" (llama.cpp in-process)
    #: or "http" (an OpenAI-compatible server).
    backend: str = "embedded"
    llm_path: str | None = None
    embedder_path: str | None = None
    judge_path: str | None = None
    http: HttpSettings | None = None
    #: The embedder's: "embedded" (ONNX in-process) or "http" (an OpenAI-compatible
    #: /v1/embeddings server).
    embedder_backend: str = "embedded"
    embedder_http: HttpEmbedderSettings | None = None
    #: "embedded" (ONNX in-process): the judge's only backend today.
    judge_backend: str = "embedded"
    llama: LlamaSettings = field(default_factory=LlamaSettings)
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    verify_hashes: bool = True
    #: The guard embeds its decisions and each change with a real-int8 copy of the
    #: embedder (both sides the same precision; 2–3× faster per text). The embedder
    #: itself is int8 by default (``EmbedderSettings.int8``), and the guard
    #: then shares it; with an fp32 embedder the guard still gets its own int8 copy.
    guard_int8: bool = True


DEFAULTS = RuntimeSettings()


#: The engine kinds, in the order a runtime brings them up.
EngineKind = Literal["llm", "embedder", "judge"]


@dataclass(frozen=True)
class Build:
    """What a backend's factory may use besides the settings."""

    #: Told which model file the engine is built from, before it loads.
    on_model: ModelSeen | None = None
    #: How many of our other engines are working right now (llama.cpp's thread budget).
    own_busy: Callable[[], int] | None = None
    #: The manifest role to resolve (a judge: ``"guard"``).
    role: str | None = None


def _resolve(
    kind: Kind, path: str | None, settings: RuntimeSettings, build: Build
) -> ResolvedModel:
    model = resolve_model(kind, path, verify=settings.verify_hashes, role=build.role)
    if build.on_model is not None:
        build.on_model(model)
    return model


def _llama(settings: RuntimeSettings, build: Build) -> Generator:
    from inference.llama_backend import LlamaGenerator
    from inference.threads import ThreadBudget

    model = _resolve("llm", settings.llm_path, settings, build)
    budget = ThreadBudget(fixed=settings.llama.threads, own_busy=build.own_busy)
    return LlamaGenerator(model, settings.llama, budget=budget)


def _http_generator(settings: RuntimeSettings, build: Build) -> Generator:
    if settings.http is None:
        raise ModelUnavailable("The HTTP backend is selected but has no URL — set it in Settings.")
    from inference.http_backend import OpenAIHttpGenerator

    return OpenAIHttpGenerator(settings.http)


def _onnx_embedder(settings: RuntimeSettings, build: Build) -> Embedder:
    from inference.embedder import OnnxEmbedder

    model = _resolve("embedder", settings.embedder_path, settings, build)
    # int8 was measured on the shipped model only: another file runs as it is.
    if settings.embedder.int8 and model.verified:
        try:
            return OnnxEmbedder(model, settings.embedder)
        except ModelUnavailable as exc:  # no `onnx`, no disk space, a graph it cannot quantise
            log.warning("the embedder runs in fp32: %s", exc)
    return OnnxEmbedder(model, replace(settings.embedder, int8=False))


def _http_embedder(settings: RuntimeSettings, build: Build) -> Embedder:
    if settings.embedder_http is None:
        raise ModelUnavailable(
            "The HTTP embedder is selected but has no URL — set it in Settings (or --embedder-url)."
        )
    from inference.http_embedder import OpenAIHttpEmbedder

    return OpenAIHttpEmbedder(settings.embedder_http)


def _onnx_judge(settings: RuntimeSettings, build: Build) -> Judge:
    from inference.judge import OnnxJudge

    return OnnxJudge(_resolve("judge", settings.judge_path, settings, build), settings.judge)


#: Every engine kind and its backends, by the name the settings choose them with. A new
#: backend is its module, a factory here and (for a model file) its manifest entry.
BACKENDS: dict[EngineKind, dict[str, Callable[[RuntimeSettings, Build], Any]]] = {
    "llm": {"embedded": _llama, "http": _http_generator},
    "embedder": {"embedded": _onnx_embedder, "http": _http_embedder},
    "judge": {"embedded": _onnx_judge},
}


def backend_of(kind: EngineKind, settings: RuntimeSettings) -> str:
    """The backend ``settings`` choose for ``kind``."""
    return {
        "llm": settings.backend,
        "embedder": settings.embedder_backend,
        "judge": settings.judge_backend,
    }[kind]


def open_engine(
    kind: EngineKind, settings: RuntimeSettings = DEFAULTS, build: Build = Build()
) -> Any:
    """Build the engine of ``kind`` with the backend ``settings`` choose."""
    name = backend_of(kind, settings)
    factory = BACKENDS[kind].get(name)
    if factory is None:
        raise ModelUnavailable(
            f"No {kind} backend named {name!r}; this version has "
            f"{', '.join(sorted(BACKENDS[kind]))}."
        )
    return factory(settings, build)


def open_generator(
    settings: RuntimeSettings = DEFAULTS,
    *,
    on_model: ModelSeen | None = None,
    own_busy: Callable[[], int] | None = None,
) -> Generator:
    """The LLM: llama.cpp in-process, or the configured OpenAI-compatible server.
    ``own_busy``: how many of our other engines are working right now, for llama.cpp's
    thread budget (inference/threads.py)."""
    generator: Generator = open_engine("llm", settings, Build(on_model, own_busy))
    return generator


def open_embedder(
    settings: RuntimeSettings = DEFAULTS, *, on_model: ModelSeen | None = None
) -> Embedder:
    """The sentence embedder: ONNX Runtime in-process, or the configured embedding server."""
    embedder: Embedder = open_engine("embedder", settings, Build(on_model))
    return embedder


def open_int8_embedder(settings: RuntimeSettings, embedder: Embedder) -> Embedder | None:
    """The real-int8 copy of ``embedder`` for the guard (inference/int8.py), or None when
    ``embedder`` is not an ONNX one of ours or already int8. Blocking: ~5 s to prepare
    the copy the first time, then it is cached on disk."""
    from inference.embedder import OnnxEmbedder

    if not isinstance(embedder, OnnxEmbedder) or embedder.settings.int8:
        return None
    return OnnxEmbedder(embedder.model, replace(settings.embedder, int8=True))


def open_judge(
    settings: RuntimeSettings = DEFAULTS,
    *,
    on_model: ModelSeen | None = None,
    role: str | None = None,
) -> Judge:
    """The contradiction judge on ONNX Runtime. ``role="guard"``: the judge the guard
    decides with (the manifest's guard entry, when it has one); a judge file the user
    chose serves every role."""
    judge: Judge = open_engine("judge", settings, Build(on_model, role=role))
    return judge


def guard_judge_spec(settings: RuntimeSettings = DEFAULTS) -> ModelSpec | None:
    """The manifest entry of the guard's own judge, or None where the guard decides with
    the scan's judge: the user chose a judge file (it serves every role), or the manifest
    has no guard entry."""
    if settings.judge_path is not None:
        return None
    spec = default_spec("judge", role="guard")
    return spec if spec.extra.get("role") == "guard" else None


def open_guard_judge(settings: RuntimeSettings = DEFAULTS) -> Judge | None:
    """The guard's own judge (:func:`guard_judge_spec`), or None."""
    if guard_judge_spec(settings) is None:
        return None
    return open_judge(settings, role="guard")


def open_judge_or_none(settings: RuntimeSettings = DEFAULTS) -> tuple[Judge | None, str]:
    """The judge, or None with the reason, where the judge is optional (lexical checks
    decide without it)."""
    try:
        return open_judge(settings), ""
    except Exception as exc:  # missing file, no manifest entry, ONNX error: all mean "no judge"
        log.info("no judge: %s", exc)
        return None, str(exc)


class LazyGenerator(Generator):
    """:func:`open_generator`, called by the first completion that needs the model, so a
    command that finds nothing to do never loads it."""

    def __init__(self, settings: RuntimeSettings = DEFAULTS) -> None:
        self._settings = settings
        self._inner: Generator | None = None

    @property
    def inner(self) -> Generator:
        if self._inner is None:
            self._inner = open_generator(self._settings)
            adopt_identity(self, self._inner, Generator)
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


class LazyEmbedder(Embedder):
    """:func:`open_embedder`, called by the first embedding that needs the model."""

    def __init__(self, settings: RuntimeSettings = DEFAULTS) -> None:
        self._settings = settings
        self._inner: Embedder | None = None
        self.dimension = 384  # all-MiniLM-L6-v2's, until the model says otherwise
        self.name = "embedder"

    @property
    def inner(self) -> Embedder:
        if self._inner is None:
            self._inner = open_embedder(self._settings)
            adopt_identity(self, self._inner, Embedder)
        return self._inner

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
            self._inner = None
