"""OpenAI- and Ollama-compatible embeddings on the resident embedder.

``POST /v1/embeddings`` takes ``input`` as a string or a list of strings,
``encoding_format`` ``"float"`` (default) or ``"base64"`` (little-endian
float32, which the official ``openai`` client asks for by default), and refuses
``dimensions`` other than the model's own. ``model`` must name the served model
or one of its aliases (desktop.service.model_names); the answer names its clean
id. ``usage`` counts the tokens the embedder actually read (at most 256 per text).

Each input is cut to :data:`MAX_INPUT_CHARS` characters before tokenising; the
indices of the inputs cut are listed in ``truncated_inputs`` (all shapes).

Ollama's shapes: ``POST /api/embed`` ``{"model", "input"}`` →
``{"model", "embeddings", "total_duration", "load_duration", "prompt_eval_count"}``,
and the older ``POST /api/embeddings`` ``{"model", "prompt"}`` → ``{"embedding"}``.
As Ollama does, no input (or an empty prompt) embeds nothing: tools send that to
load the model.

Right after start, a request waits for the embedder to be warm (up to
``wait_seconds``) rather than being refused.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop.service.batching import EmbedBatcher
from desktop.service.errors import BadRequest, PayloadTooLarge
from desktop.service.model_names import WARM_WAIT_SECONDS, served_model, warm_embedder
from desktop.service.routes import JsonBody, JsonHandler, ServiceContext

if TYPE_CHECKING:
    from inference.runtime import Runtime

log = logging.getLogger(__name__)

MAX_TOKENS = 256
#: Each input is cut to this many characters before it is tokenised. The model reads
#: at most 256 tokens, which ordinary text reaches within ~1,500 characters; without
#: the cut a 2 MB string cost 5 s of CPU and 365 MB (kept) in the tokenizer, and
#: stalled every other client behind it.
MAX_INPUT_CHARS = 8192


class TokenCounter:
    """Counts what the embedder reads, with its own tokenizer (no padding). Any thread.

    The tokenizer is loaded on first use, from the loaded embedder's model.
    """

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._tokenizer: Any = None
        self._loaded = False
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if not self._loaded:
                self._loaded = True
                path = self._runtime.embedder.tokenizer_path
                try:
                    from tokenizers import Tokenizer

                    tok = Tokenizer.from_file(str(path))
                    tok.no_padding()
                    tok.enable_truncation(max_length=MAX_TOKENS)
                    self._tokenizer = tok
                except Exception:  # counting is a courtesy; an estimate will do
                    log.warning("cannot load the tokenizer %s; token counts are estimates", path)
            return self._tokenizer

    def count(self, texts: Sequence[str]) -> int:
        tokenizer = self._load()
        if tokenizer is None:
            return sum(min(MAX_TOKENS, len(t) // 4 + 2) for t in texts)
        return sum(len(e.ids) for e in tokenizer.encode_batch(list(texts)))


def parse_inputs(body: JsonBody, *, key: str, max_batch: int) -> list[str]:
    value = body.get(key)
    if isinstance(value, str):
        texts = [value]
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        texts = list(value)
    elif isinstance(value, list) and not value:
        raise BadRequest(f"'{key}' is an empty list: send at least one text.")
    elif isinstance(value, list):
        raise BadRequest(
            f"'{key}' must be a string or a list of strings; token-id arrays are not "
            "supported — send the text itself."
        )
    elif value is None:
        raise BadRequest(f"'{key}' is missing: send a string or a list of strings.")
    else:
        raise BadRequest(
            f"'{key}' must be a string or a list of strings, not {type(value).__name__}."
        )
    if len(texts) > max_batch:
        raise PayloadTooLarge(
            f"{len(texts)} texts in one request; the limit is {max_batch} — split the batch."
        )
    return texts


def bounded_inputs(
    texts: list[str], *, max_chars: int = MAX_INPUT_CHARS
) -> tuple[list[str], list[int]]:
    """``texts`` each cut to ``max_chars`` characters, and the indices of those cut.

    The answer lists the cut ones in ``truncated_inputs``; their vectors are those
    of the first ``max_chars`` characters (the model would not read further anyway
    in any ordinary text).
    """
    cut = [i for i, t in enumerate(texts) if len(t) > max_chars]
    if not cut:
        return texts, []
    return [t[:max_chars] for t in texts], cut


def _check_dimensions(body: JsonBody, dimension: int) -> None:
    wanted = body.get("dimensions")
    if wanted is not None and wanted != dimension:
        raise BadRequest(
            f"dimensions={wanted!r} is not supported: this model gives {dimension}-dimensional "
            "vectors and cannot shorten them — leave 'dimensions' out."
        )


def embedding_routes(
    ctx: ServiceContext,
    *,
    max_batch: int,
    counter: TokenCounter,
    wait_seconds: float = WARM_WAIT_SECONDS,
) -> dict[str, JsonHandler]:
    """The embeddings routes, on ``ctx.batcher``. The model may still be loading when
    they are made (the desktop app starts the endpoint at once): a request then waits
    up to ``wait_seconds`` for it, and is answered 503 (``Retry-After``) past that."""
    batcher: EmbedBatcher = ctx.batcher
    runtime = ctx.runtime

    async def count_tokens(texts: list[str]) -> int:
        # Off the loop: tokenising a full batch takes long enough to delay a guard check.
        return await asyncio.get_running_loop().run_in_executor(None, counter.count, texts)

    async def ready(body: JsonBody) -> str:
        """Waits for the embedder; checks ``model`` and ``dimensions``; the served id."""
        served = served_model(await warm_embedder(runtime, wait_seconds))
        served.check(body)
        _check_dimensions(body, served.dimension)
        return served.id

    async def openai_embeddings(body: JsonBody) -> JsonBody:
        texts, cut = bounded_inputs(parse_inputs(body, key="input", max_batch=max_batch))
        fmt = body.get("encoding_format", "float") or "float"
        if fmt not in ("float", "base64"):
            raise BadRequest(f"encoding_format={fmt!r} is not supported: use 'float' or 'base64'.")
        model = await ready(body)
        vectors = await batcher.embed(texts)
        tokens = await count_tokens(texts)
        data: list[dict[str, Any]] = []
        for i, vec in enumerate(vectors):
            if fmt == "base64":
                packed = np.ascontiguousarray(vec, dtype="<f4").tobytes()
                value: Any = base64.b64encode(packed).decode("ascii")
            else:
                value = vec.tolist()
            data.append({"object": "embedding", "index": i, "embedding": value})
        answer: JsonBody = {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        if cut:
            answer["truncated_inputs"] = cut
        return answer

    async def ollama_embed(body: JsonBody) -> JsonBody:
        start = time.perf_counter_ns()
        preload = body.get("input") in (None, "", [])  # Ollama loads the model, embeds nothing
        texts, cut = (
            ([], [])
            if preload
            else bounded_inputs(parse_inputs(body, key="input", max_batch=max_batch))
        )
        loading = time.perf_counter_ns()
        model = await ready(body)
        loaded = time.perf_counter_ns()
        vectors = await batcher.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
        answer: JsonBody = {
            "model": model,
            "embeddings": vectors.tolist(),
            "total_duration": time.perf_counter_ns() - start,
            "load_duration": loaded - loading,
            "prompt_eval_count": await count_tokens(texts) if texts else 0,
        }
        if cut:
            answer["truncated_inputs"] = cut
        return answer

    async def ollama_embeddings(body: JsonBody) -> JsonBody:
        prompt = body.get("prompt", "")
        if prompt is None:
            prompt = ""
        if not isinstance(prompt, str):
            raise BadRequest(f"'prompt' must be a string, not {type(prompt).__name__}.")
        await ready(body)
        if not prompt:
            return {"embedding": []}  # Ollama's answer to an empty prompt (it loads the model)
        texts, cut = bounded_inputs([prompt])
        vectors = await batcher.embed(texts)
        answer: JsonBody = {"embedding": vectors[0].tolist()}
        if cut:
            answer["truncated_inputs"] = cut
        return answer

    return {
        "/v1/embeddings": openai_embeddings,
        "/api/embed": ollama_embed,
        "/api/embeddings": ollama_embeddings,
    }
