"""``POST /v1/guard/check``: the guard behind the hook client.

Request (what ``antinomy-hook pretooluse`` sends)::

    {"summary": "Delete the SQLite ledger…", "session_id": "…", "cwd": "/path/to/project",
     "tool_name": "Bash", "mode": "warn" | "ask" (optional: overrides the settings)}

For a file change (``tool_name`` Write, Edit, MultiEdit, apply_patch) the summary
opens with the hook's header line (``Edit billing/config.py``): the whole summary
helps find the near decisions, the judge reads only the new text after it
(desktop/flows/guard/change.py). The request is the same for every hook version.

Answer::

    {"verdict": "warn" | "ask" | "allow" | "repeat" | "off" | "skip",
     "output": {"hookSpecificOutput": {...}} | null,   # what the hook prints
     "decision": {"id", "title", "path"} | null, "score": 0.61 | null, "latency_ms": 4.2}

The cheap gate comes first: when the guard is off for the vault and the
project, nothing is embedded. The vault's notes are re-read in the background
(every :data:`REFRESH_SECONDS`, and at once on :meth:`GuardService.refresh_now`),
on a metadata-only index (no note embedding), so a hook never waits behind
indexing; only new or changed decisions are embedded, in small chunks.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from desktop.flows.embedding import embedding_model
from desktop.flows.guard import (
    Guard,
    GuardNotReady,
    GuardSwitch,
    GuardVerdict,
    bound_summary,
    too_short,
)
from desktop.service.errors import BadRequest, ServiceUnavailable
from desktop.service.guard_log import GuardRecord
from desktop.service.routes import JsonBody, JsonHandler, ServiceContext
from desktop.vault.index import VaultIndex
from foundation.errors import AntinomyError
from inference.embedder import Embedder, Vectors
from inference.judge import Judge
from inference.runtime import State

log = logging.getLogger(__name__)

REFRESH_SECONDS = 30.0


class GuardService:
    """Owns the vault's guard for one endpoint; refreshes it on its own thread.

    The route only parses the request and logs the answer: :meth:`Guard.check`
    decides."""

    def __init__(self, ctx: ServiceContext, *, refresh_seconds: float = REFRESH_SECONDS) -> None:
        self.ctx = ctx
        self.root: Path | None = ctx.vault_root
        self.refresh_seconds = refresh_seconds
        self.switch = GuardSwitch(ctx.vault_root) if ctx.vault_root is not None else None
        self.guard: Guard | None = None
        if ctx.vault_root is not None:
            self.guard = Guard(
                ctx.vault_root,
                switch=self.switch,
                judge=self._judge,
                embed_query=self._embed_change,
            )
        #: Set once the guard has read the vault's decisions.
        self.ready = self.guard.ready if self.guard is not None else threading.Event()
        self.error: str | None = None
        #: The embedder of both sides of the comparison (set once the models are up).
        self.embedder: Embedder | None = None
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.root is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="antinomy-guard", daemon=True)
        self._thread.start()

    def refresh_now(self) -> None:
        """Re-read decisions soon (after the GUI indexed, say). Any thread."""
        self._wake.set()

    def _run(self) -> None:
        assert self.root is not None and self.guard is not None
        runtime = self.ctx.runtime
        # Wait for the owner to bring the models up (never start them from here).
        while runtime.state is not State.READY:
            if runtime.state in (State.FAILED, State.CLOSED):
                self.error = f"the embedder is not available ({runtime.error})"
                return
            if self.ctx.closing.wait(0.2):
                return
        index: VaultIndex | None = None
        try:
            # Decisions and changes go through the same embedder (the int8 copy when the
            # settings allow it: the check's hot path), so the two sides' vectors match.
            embedder = runtime.guard_embedder()
            self.embedder = embedder
            runtime.guard_judge()  # loaded and warm before the first check

            def embed_decisions(texts: Sequence[str]) -> Vectors:
                return runtime.submit_embed(texts, embedder=embedder).result()

            index = VaultIndex(self.root)
            self.guard.attach(
                index=index, embed=embed_decisions, model_id=embedding_model(embedder).model_id
            )
            while not self.ctx.closing.is_set():
                try:
                    index.update()  # re-reads only files whose size or mtime changed
                    self.guard.refresh()  # one query when no decision changed
                    self.error = None
                except Exception as exc:  # keep serving the last good snapshot
                    self.error = str(exc)
                    log.exception("guard: refreshing the decisions failed")
                self._wake.wait(self.refresh_seconds)
                self._wake.clear()
        except Exception as exc:
            self.error = str(exc)
            log.exception("guard: cannot open the vault")
        finally:
            if index is not None:
                index.close()

    def stop(self) -> None:
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # ------------------------------------------------------------------ the route

    async def check(self, body: JsonBody) -> JsonBody:
        started = time.perf_counter()
        summary = body.get("summary")
        if not isinstance(summary, str):
            raise BadRequest("'summary' is missing: send the text of the pending change.")
        session_id = _string(body, "session_id")
        cwd = _string(body, "cwd")
        tool = _string(body, "tool_name")
        mode = body.get("mode")
        if mode is not None and mode not in ("warn", "ask"):
            raise BadRequest(f"mode={mode!r} is unknown: use 'warn' or 'ask'.")
        try:
            verdict = await self._verdict(
                summary, session_id=session_id, cwd=cwd, mode=mode, tool=tool
            )
        except Exception:
            self._log(GuardVerdict("error"), tool, session_id, cwd, summary, started)
            raise
        latency = self._log(verdict, tool, session_id, cwd, summary, started)
        decision = verdict.decision
        return {
            "verdict": verdict.verdict,
            "output": verdict.output,
            "decision": (
                {"id": decision.id, "title": decision.title, "path": decision.path}
                if decision
                else None
            ),
            "score": None if verdict.score is None else round(verdict.score, 4),
            "latency_ms": round(latency, 2),
        }

    def _log(
        self,
        verdict: GuardVerdict,
        tool: str,
        session_id: str,
        cwd: str,
        summary: str,
        started: float,
    ) -> float:
        latency = (time.perf_counter() - started) * 1000
        decision = verdict.decision
        self.ctx.guard_log.add(
            GuardRecord(
                time=time.time(),
                tool=tool,
                verdict=verdict.verdict,
                score=verdict.score,
                decision_id=decision.id if decision else None,
                decision_title=decision.title if decision else None,
                decision_path=decision.path if decision else None,
                latency_ms=latency,
                session_id=session_id,
                cwd=cwd,
                summary=summary[:200],
            )
        )
        return latency

    async def _verdict(
        self, summary: str, *, session_id: str, cwd: str, mode: str | None, tool: str
    ) -> GuardVerdict:
        if self.guard is None:  # an endpoint without a vault has nothing to guard
            return GuardVerdict("skip" if too_short(bound_summary(summary)) else "off")
        try:
            return await self.guard.check(
                summary, session_id=session_id, cwd=cwd, mode=mode, tool_name=tool
            )
        except GuardNotReady:
            raise ServiceUnavailable(
                "The guard is still reading the vault's decisions"
                + (f" ({self.error})" if self.error else "")
                + "; the tool was allowed — try again in a moment."
            ) from None

    async def _embed_change(self, texts: Sequence[str]) -> Vectors:
        """The change's vector, by the decisions' own embedder, on the urgent lane: a
        check never waits behind bulk embedding work."""
        return await asyncio.wrap_future(
            self.ctx.runtime.submit_embed(texts, urgent=True, embedder=self.embedder)
        )

    def _judge(self) -> Judge | None:
        try:
            self.ctx.runtime.judge  # noqa: B018 - raises while it is not loaded
        except AntinomyError:
            return None
        return self.ctx.runtime.direct_judge(guard=True)

    def routes(self) -> dict[str, JsonHandler]:
        return {"/v1/guard/check": self.check}


def _string(body: JsonBody, key: str) -> str:
    value: Any = body.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"'{key}' must be a string, not {type(value).__name__}.")
    return value
