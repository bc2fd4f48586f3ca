"""The one embedding model the endpoint serves, by the names clients call it, and the
wait for it to be warm.

Clients name a model in every request, and tools configured for OpenAI or Ollama
name the one they were set up with. The served model has a clean id
(``all-minilm-l6-v2`` for the bundled one, from the embedder's title without its
parenthesised notes) and aliases: for the bundled model the names it has on Hugging
Face and in Ollama's library (``all-MiniLM-L6-v2``,
``sentence-transformers/all-MiniLM-L6-v2``, ``all-minilm``, ``all-minilm:l6-v2``);
for any model, its id, its title and ``<name>:latest``. Case does not matter. No
model named (or an empty name) means the served one; any other name is refused with
:class:`~desktop.service.errors.ModelNotFound` — vectors of another model than the
one asked for would be silently wrong in the client's index.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.service.errors import BadRequest, ModelNotFound, ServiceUnavailable
from foundation.errors import AntinomyError
from inference.runtime import State

if TYPE_CHECKING:
    from inference.embedder import Embedder
    from inference.runtime import Runtime

#: How long a request waits for the embedder to be warm before it is answered 503.
WARM_WAIT_SECONDS = 30.0

#: Known models: their other names (Hugging Face's, Ollama's library's) and what Ollama's
#: ``/api/tags`` says of them.
KNOWN: dict[str, dict[str, Any]] = {
    "all-minilm-l6-v2": {
        "aliases": (
            "all-MiniLM-L6-v2",
            "sentence-transformers/all-MiniLM-L6-v2",
            "all-minilm",
            "all-minilm:l6-v2",
        ),
        "family": "bert",
        "parameter_size": "23M",
    },
}


@dataclass(frozen=True)
class ServedModel:
    """The model behind the embedding routes, as clients see it."""

    id: str
    #: Other names accepted, as shown to users.
    aliases: tuple[str, ...]
    #: The embedder's own name (which weights, which precision).
    title: str
    dimension: int

    def accepts(self, name: str) -> bool:
        wanted = name.strip().lower().removesuffix(":latest")
        return wanted in {self.id, self.title.lower(), *(a.lower() for a in self.aliases)}

    def check(self, body: dict[str, Any]) -> None:
        """Refuse a request naming another model (:class:`ModelNotFound`)."""
        requested = body.get("model")
        if requested is None or requested == "":
            return
        if not isinstance(requested, str):
            raise BadRequest(f"'model' must be a string, not {type(requested).__name__}.")
        if not self.accepts(requested):
            raise ModelNotFound(requested[:200], self.id, self.aliases)

    @property
    def ollama_names(self) -> list[str]:
        """The names Ollama's ``/api/tags`` lists it under (each with its tag)."""
        names = [self.id, *(a.lower() for a in self.aliases if "/" not in a)]
        tagged = [n if ":" in n else f"{n}:latest" for n in names]
        return list(dict.fromkeys(tagged))


def served_model(embedder: Embedder) -> ServedModel:
    base = re.sub(r"\s*\([^)]*\)", "", embedder.name).strip() or embedder.name
    clean = re.sub(r"[^a-z0-9._:/-]+", "-", base.lower()).strip("-") or "embedder"
    aliases = tuple(KNOWN.get(clean, {}).get("aliases", ()))
    if base.lower() != clean and base not in aliases:
        aliases = (base, *aliases)
    return ServedModel(id=clean, aliases=aliases, title=embedder.name, dimension=embedder.dimension)


async def warm_embedder(runtime: Runtime, wait_seconds: float) -> Embedder:
    """The runtime's embedder, once it is warm. Runs on the endpoint's loop.

    Right after start the engines are still loading (20–30 s on a busy machine); a
    request then waits, up to ``wait_seconds``, instead of being refused — OpenAI's
    client gives up on a 503 after two quick retries. Past the wait: 503 with
    ``Retry-After``. A failed load is answered at once with its error.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_seconds
    while True:
        try:
            return runtime.embedder
        except AntinomyError:
            if runtime.state is not State.LOADING:
                raise  # never started, failed or closed: waiting would not help
            if loop.time() >= deadline:
                raise ServiceUnavailable(
                    f"The embedder is still loading (waited {wait_seconds:g} s) — try again "
                    "in a few seconds.",
                    retry_after=5,
                ) from None
        await asyncio.sleep(0.05)
