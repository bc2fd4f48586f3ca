"""The small interface every LLM backend implements, and the records it returns."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]
FinishReason = Literal["stop", "length", "stopped", "error"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Completion:
    """One answer of a backend."""

    text: str
    tokens_in: int
    tokens_out: int
    #: Wall time of the call, seconds.
    duration: float
    #: "stop" (model ended), "length" (max tokens), "stopped" (user Stop).
    finish_reason: FinishReason
    model: str = ""
    backend: str = ""
    #: Seconds spent before the first generated token (prompt processing).
    prompt_seconds: float = 0.0

    @property
    def tokens_per_second(self) -> float:
        gen = self.duration - self.prompt_seconds
        return self.tokens_out / gen if gen > 0 and self.tokens_out else 0.0


class StopFlag:
    """A thread-safe Stop button: set from any thread, checked per token."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()


class AnyStop(StopFlag):
    """Set when any of its flags is set: the caller's Stop, or the runtime closing."""

    def __init__(self, *flags: StopFlag | None) -> None:
        super().__init__()
        self._flags = [f for f in flags if f is not None]

    def is_set(self) -> bool:
        return super().is_set() or any(f.is_set() for f in self._flags)


@dataclass(frozen=True)
class GenerationSettings:
    max_tokens: int = 512
    temperature: float = 0.0
    #: llama.cpp-style penalty on tokens seen in the last ``repeat_window``
    #: tokens (1.0 = off). The shipped 135M model loops under greedy decoding
    #: (the same JSON item forever); 1.1 breaks the loop on the test prompts.
    repeat_penalty: float = 1.1
    repeat_window: int = 64
    #: Constrain output with the JSON schema when one is given (the backend enforces it).
    constrain: bool = True


class Generator(ABC):
    """A chat model. Implementations: embedded llama.cpp, OpenAI-compatible HTTP."""

    #: Human name of the model ("SmolLM2-135M-Instruct (Q4_1)").
    model_name: str = ""
    #: Identifies the weights ("file.gguf:<sha256 prefix>"; a server: its URL and model).
    model_id: str = ""
    #: "llama.cpp (embedded)" or "openai-compatible http://…".
    backend_name: str = ""
    #: True when calls send text to another machine (non-loopback HTTP).
    leaves_machine: bool = False
    #: Whether to ask it for a scan's one-line descriptions: False for a model the manifest
    #: marks ``describes = false`` (measured to fail at it); the scan then writes them from
    #: the quotes.
    describes: bool = True
    #: Context window in tokens, for flows that size prompts.
    context_length: int = 2048

    @abstractmethod
    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        """Answer ``messages``; blocks. Call from the engine's own worker thread.

        Raises :class:`~foundation.errors.GenerationError` on transport or engine
        failure. A user Stop returns early with ``finish_reason="stopped"``.
        """

    def count_tokens(self, text: str) -> int:
        """Token count of ``text``; backends without a tokenizer estimate it."""
        return max(1, len(text) // 4)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the model."""


def identity_fields(interface: type) -> tuple[str, ...]:
    """The public attributes an engine interface declares (``model_id``, ``name``,
    ``thresholds``…): what a proxy of such an engine must answer as its engine does."""
    names: list[str] = []
    for klass in reversed(interface.__mro__):
        names += [n for n in vars(klass).get("__annotations__", {}) if not n.startswith("_")]
    return tuple(dict.fromkeys(names))


def adopt_identity(proxy: object, inner: object, interface: type) -> None:
    """Give ``proxy`` the identity of the engine it stands for: every attribute
    ``interface`` declares, read from ``inner`` (the proxy's own properties excepted)."""
    for name in identity_fields(interface):
        if isinstance(getattr(type(proxy), name, None), property) or not hasattr(inner, name):
            continue
        setattr(proxy, name, getattr(inner, name))
