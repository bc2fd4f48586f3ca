"""Choosing a stronger language model: a GGUF file of one's own, or an OpenAI-compatible server.

The bundled model (SmolLM2-135M) is small: it writes each pair's one-line
description and, in classic mode, proposes pairs for the judge to re-check.
A larger model does both better. These checks run before the choice is
saved: a GGUF file is verified (format, hash, known or not), a server is asked
for its models and timed on one short completion. Blocking; call them off the
GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from desktop.flows.settings import Settings
from foundation.errors import AntinomyError, ModelUnavailable
from inference.diagnostics import GenerationSpeed, measure_generation
from inference.engines import RuntimeSettings, open_generator
from inference.http_backend import HttpSettings, OpenAIHttpGenerator
from inference.registry import ResolvedModel, find_spec, resolve_model

#: What the bundled model is, in the words the Models panel and an empty scan use.
BUNDLED_NOTE = (
    "The bundled language model is small (SmolLM2-135M, 135 million parameters): the "
    "contradiction judge decides which pairs are shown, and the small model only writes their "
    "descriptions and proposes a few pairs in classic mode. A larger model — a GGUF file of "
    "your own, or a server such as Ollama, llama-server, LM Studio or vLLM — does both better."
)


def check_gguf(path: str | Path) -> ResolvedModel:
    """Verify a GGUF file (exists, is GGUF, its hash); raises ModelUnavailable saying why not."""
    text = str(path).strip()
    if not text:
        raise ModelUnavailable("Choose a GGUF file first.")
    return resolve_model("llm", Path(text).expanduser())


@dataclass(frozen=True)
class ServerCheck:
    base_url: str
    #: Model ids the server lists, and the one that answered.
    models: tuple[str, ...]
    model: str
    speed: GenerationSpeed
    leaves_machine: bool

    def summary(self) -> str:
        s = self.speed
        listed = f"{len(self.models)} model{'s' if len(self.models) != 1 else ''} listed"
        return (
            f"{listed}; {self.model or 'the default model'} answered {s.generated_tokens} tokens "
            f"in {s.seconds:.1f} s ({s.tokens_per_second:.0f} tokens/s, prompt "
            f"{s.prompt_tokens_per_second:.0f} tokens/s)."
        )


def check_server(base_url: str, *, model: str = "", api_key: str | None = None) -> ServerCheck:
    """List the server's models and time one short completion; raises AntinomyError."""
    url = base_url.strip().rstrip("/")

    def server(name: str) -> OpenAIHttpGenerator:
        # Built where every engine is built (inference.engines), from the same settings.
        generator = open_generator(
            RuntimeSettings(backend="http", http=HttpSettings(url, name, api_key or None))
        )
        assert isinstance(generator, OpenAIHttpGenerator)
        return generator

    generator = server(model.strip())
    models = tuple(generator.list_models())
    chosen = model.strip() or (models[0] if models else "")
    if model.strip() and models and chosen not in models:
        raise ModelUnavailable(
            f"The server at {url} has no model {chosen!r}; it lists {', '.join(models[:8])}."
        )
    if chosen != model.strip():
        generator = server(chosen)
    speed = measure_generation(generator, max_tokens=16)
    if speed.generated_tokens == 0:
        raise AntinomyError(f"The server at {url} answered with no text — try another model.")
    return ServerCheck(url, models, chosen, speed, generator.leaves_machine)


def model_choice_text(settings: Settings) -> str:
    """The language model this install uses, in a few words (status bar, Models panel)."""
    backend = settings.backend
    if backend.kind == "http":
        host = urlsplit(backend.base_url).netloc or backend.base_url
        return f"{backend.model or 'server default'} at {host}"
    if settings.models.llm_path:
        return f"own GGUF {Path(settings.models.llm_path).name}"
    if settings.models.llm:
        spec = find_spec("llm", settings.models.llm)
        return spec.title if spec is not None else settings.models.llm
    return "bundled SmolLM2-135M"


def uses_bundled_model(settings: Settings) -> bool:
    """The embedded default model runs (none chosen, or the default chosen by its id)."""
    if settings.backend.kind != "embedded" or settings.models.llm_path:
        return False
    spec = find_spec("llm", settings.models.llm) if settings.models.llm else None
    return spec is None or spec.default
