"""Which model is served, in OpenAI's and Ollama's shapes: ``GET /v1/models``,
``GET /api/tags``, ``GET /api/version``.

Ollama-based tools ask ``/api/version`` and ``/api/tags`` before anything else (is
this Ollama? does it have my model?); OpenAI-based ones ask ``/v1/models``. Like
the embeddings routes, these wait for the embedder to be warm (bounded), so a tool
started beside the endpoint does not conclude the model is missing.
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from typing import Any

from desktop.service.model_names import KNOWN, WARM_WAIT_SECONDS, served_model, warm_embedder
from desktop.service.routes import GetHandler, ServiceContext

#: What ``/api/version`` says: the Ollama API level whose embedding routes are served
#: (``/api/embed`` came with Ollama 0.3.0). Tools compare it to a minimum; Antinomy's
#: own version is in ``/healthz``.
OLLAMA_API_VERSION = "0.3.0"


def model_routes(
    ctx: ServiceContext, *, wait_seconds: float = WARM_WAIT_SECONDS
) -> dict[str, GetHandler]:
    runtime = ctx.runtime
    started = time.time()

    async def openai_models() -> dict[str, Any]:
        served = served_model(await warm_embedder(runtime, wait_seconds))
        entry = {"id": served.id, "object": "model", "created": 0, "owned_by": "antinomy"}
        return {"object": "list", "data": [entry]}

    async def ollama_tags() -> dict[str, Any]:
        embedder = await warm_embedder(runtime, wait_seconds)
        served = served_model(embedder)
        model = getattr(embedder, "model", None)  # a local file (ResolvedModel), or None
        path = getattr(model, "path", None)
        try:
            modified = path.stat().st_mtime if path is not None else started
        except OSError:
            modified = started
        known = KNOWN.get(served.id, {})
        digest = getattr(model, "sha256", "") or hashlib.sha256(served.title.encode()).hexdigest()
        spec = getattr(model, "spec", None)
        details = {
            "parent_model": "",
            "format": spec.format if spec is not None else "",
            "family": known.get("family", ""),
            "families": [known["family"]] if "family" in known else None,
            "parameter_size": known.get("parameter_size", ""),
            "quantization_level": "int8" if "int8" in served.title.lower() else "",
        }
        when = datetime.fromtimestamp(modified, tz=UTC).isoformat()
        entries = [
            {
                "name": name,
                "model": name,
                "modified_at": when,
                "size": int(getattr(model, "size", 0) or 0),
                "digest": digest,
                "details": details,
            }
            for name in served.ollama_names
        ]
        return {"models": entries}

    async def ollama_version() -> dict[str, Any]:
        return {"version": OLLAMA_API_VERSION}

    return {"/v1/models": openai_models, "/api/tags": ollama_tags, "/api/version": ollama_version}
