"""``POST /v1/capture`` and ``POST /v1/recall``: the memory flows behind the hook client.

Every flow's HTTP handlers live in ``desktop/service/<flow>_route.py``; they
parse the request, call the flow and shape the answer.

Each takes the request's JSON object and returns a JSON-able dict; a bad
payload raises a :class:`~desktop.flows.memory.errors.MemoryError_` subclass whose message names
the field (the endpoint turns it into a JSON error; a bad capture payload is a
400, :class:`CaptureRefused`). They block (file writes, the embedder through the
runtime's queue): the endpoint runs them on its worker threads.

``POST /v1/capture``::

    {"role": "user"|"assistant", "text": "...", "session_id": "...",
     "timestamp": "2026-11-30T10:32:05Z" | 1764498725 (optional, default now;
                  from 1970 to at most 5 minutes ahead of this computer's clock),
     "context": "primary"|"subagent" (optional, default primary),
     "end_session": false (optional: close the batch after this turn)}
    → {"status": "captured"|"skipped"|"withdrawn", "line_ids": [...],
       "secrets_masked": 0, "withdrawn": [...], "closed_batch": null}

``POST /v1/recall`` (the hook client's ``userpromptsubmit`` sends
``query``, ``session_id`` and ``cwd``)::

    {"query": "...", "k": 5 (optional), "max_chars": 1500 (optional)}
    → {"subjects": [...], "facts": [...], "additionalContext": "..."}

``additionalContext`` is the recalled block cut to ``max_chars`` (empty when
memory holds nothing relevant: under :data:`MIN_SCORE` cosine).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from desktop.flows.memory import MemorySettings
from desktop.flows.memory.auto import AutoConsolidator
from desktop.flows.memory.capture import capture_turn, end_session
from desktop.flows.memory.errors import CaptureInvalid, MemoryError_, RecallInvalid
from desktop.flows.memory.recall import RECALL_FLOOR, RecallIndex
from desktop.service.errors import BadRequest
from foundation.errors import ModelUnavailable
from inference.base import Generator
from inference.embedder import Embedder
from inference.judge import Judge

#: Facts scoring under this cosine are not offered as context to an assistant.
MIN_SCORE = RECALL_FLOOR
DEFAULT_MAX_CHARS = 1500
MAX_CONTEXT_CHARS = 8000

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class _Runtime(Protocol):
    def queued_embedder(self) -> Embedder: ...

    def queued_generator(self) -> Generator: ...

    def queued_judge(self) -> Judge: ...


class _Context(Protocol):
    """What the endpoint's route factory is given (desktop.service.routes.ServiceContext)."""

    @property
    def runtime(self) -> _Runtime: ...

    @property
    def vault_root(self) -> Path | None: ...

    @property
    def closing(self) -> threading.Event: ...


class NoVault(MemoryError_):
    """The endpoint serves no vault."""


class CaptureRefused(CaptureInvalid, BadRequest):
    """A capture payload with a bad field: answered 400, the message naming the field."""


class MemoryEndpoint:
    """The memory routes of one endpoint; the recall index is built once and kept warm."""

    def __init__(
        self,
        vault_root: Path | None,
        embedder: Callable[[], Embedder],
        *,
        auto: AutoConsolidator | None = None,
        settings: MemorySettings | None = None,
    ) -> None:
        self.vault_root = vault_root
        self._embedder = embedder
        self._settings = settings or MemorySettings()
        #: Consolidates in the background after a batch closes (None: off for this endpoint).
        self.auto = auto
        self._index: RecallIndex | None = None
        self._lock = threading.Lock()

    def _vault(self) -> Path:
        if self.vault_root is None:
            raise NoVault(
                "This endpoint serves no vault — start it with `antinomy serve --vault DIR`."
            )
        return self.vault_root

    def index(self) -> RecallIndex:
        with self._lock:
            if self._index is None:
                self._index = RecallIndex(self._vault(), self._embedder(), settings=self._settings)
            return self._index

    def warm(self) -> None:
        """Embed the subject pages now, so the first hook's recall is fast."""
        if self.vault_root is not None:
            self.index().refresh()

    def capture(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._capture(body)
        except CaptureInvalid as bad:
            raise CaptureRefused(str(bad)) from None

    def _capture(self, body: dict[str, Any]) -> dict[str, Any]:
        _known(body, {"role", "text", "session_id", "timestamp", "context", "end_session"})
        ts = _timestamp(body.get("timestamp"))
        end = body.get("end_session", False)
        if not isinstance(end, bool):
            raise CaptureInvalid("end_session must be true or false.")
        vault = self._vault()
        result = capture_turn(
            vault,
            role=body.get("role"),  # type: ignore[arg-type]
            text=body.get("text"),  # type: ignore[arg-type]
            session_id=body.get("session_id"),  # type: ignore[arg-type]
            ts=ts,
            context=body.get("context", "primary"),
        )
        closed = end_session(vault, session_id=str(body["session_id"])) if end else None
        if self.auto is not None:
            self.auto.notify()  # a batch may have closed (session end, size, day change)
        return _plain(asdict(result) | {"closed_batch": closed})

    def recall(self, body: dict[str, Any]) -> dict[str, Any]:
        _known(body, {"query", "k", "max_chars", "session_id", "cwd"})
        max_chars = body.get("max_chars", DEFAULT_MAX_CHARS)
        if (
            isinstance(max_chars, bool)
            or not isinstance(max_chars, int)
            or not (0 < max_chars <= MAX_CONTEXT_CHARS)
        ):
            raise RecallInvalid(
                f"max_chars must be a whole number from 1 to {MAX_CONTEXT_CHARS},"
                f" not {max_chars!r}."
            )
        query = body.get("query")
        if not isinstance(query, str):
            raise RecallInvalid("query must be a string (what to recall).")
        result = self.index().recall(query, k=body.get("k", 5))
        out = asdict(result)
        out["additionalContext"] = result.as_context(max_chars=max_chars)
        return _plain(out)

    def routes(self) -> dict[str, Handler]:
        return {"/v1/capture": self.capture, "/v1/recall": self.recall}


def _judge_or_none(runtime: _Runtime) -> Judge | None:
    try:
        return runtime.queued_judge()
    except ModelUnavailable:  # still loading: the run's lexical checks decide alone
        return None


def memory_routes(context: _Context) -> Mapping[str, Handler]:
    """Route factory for the endpoint: ``{path: handler}``; warms recall in the background."""
    runtime = context.runtime
    auto = None
    if context.vault_root is not None:
        auto = AutoConsolidator(
            context.vault_root,
            settings=memory_settings(),
            generator=runtime.queued_generator,
            embedder=runtime.queued_embedder,
            judge=lambda: _judge_or_none(runtime),
            enabled=auto_consolidate_enabled,
            closing=context.closing,
        )
    endpoint = MemoryEndpoint(
        context.vault_root, runtime.queued_embedder, auto=auto, settings=memory_settings()
    )
    if context.vault_root is not None:

        def warm() -> None:
            # The engines may still be loading: retry for a while, stop with the endpoint.
            for _ in range(120):
                try:
                    endpoint.warm()
                    break
                except Exception:
                    if context.closing.wait(1.0):
                        return
            if endpoint.auto is not None:
                endpoint.auto.notify()  # batches that closed while nothing was running

        threading.Thread(target=warm, name="antinomy-recall-warm", daemon=True).start()
    return endpoint.routes()


def memory_settings() -> MemorySettings:
    """Memory's folders as the user set them (a damaged settings file: the defaults, as the
    window does)."""
    from desktop.flows.settings import SettingsInvalid, resolve

    try:
        return resolve().memory
    except SettingsInvalid:
        return MemorySettings()


def auto_consolidate_enabled() -> bool:
    """The user's setting, read at each run (a damaged settings file means the default: on)."""
    from desktop.flows.settings import SettingsInvalid, load_settings

    try:
        return load_settings().memory.auto_consolidate
    except SettingsInvalid:
        return True


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    """Tuples as lists: exactly what the JSON answer holds."""
    result: dict[str, Any] = json.loads(json.dumps(data, ensure_ascii=False))
    return result


def _known(body: Mapping[str, Any], keys: set[str]) -> None:
    if not isinstance(body, Mapping):
        raise CaptureInvalid("The request body must be a JSON object.")
    unknown = sorted(set(body) - keys)
    if unknown:
        raise CaptureInvalid(
            f"Unknown field(s) {', '.join(unknown)} — accepted: {', '.join(sorted(keys))}."
        )


def _timestamp(value: object) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise CaptureInvalid("timestamp must be an ISO 8601 string or seconds since 1970.")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            raise CaptureInvalid(f"timestamp {value!r} is out of range.") from None
    if isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise CaptureInvalid(
                f"timestamp {value!r} is not ISO 8601 (like 2026-11-30T10:32:05Z)."
            ) from None
        return ts if ts.tzinfo else ts.replace(tzinfo=UTC)
    raise CaptureInvalid("timestamp must be an ISO 8601 string or seconds since 1970.")
