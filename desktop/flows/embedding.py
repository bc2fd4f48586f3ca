"""Hands the shared embedder to the vault index (which knows no models)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from desktop.flows.progress import Progress
from desktop.vault.vectors import EmbeddingModel
from inference.embedder import Embedder
from inference.engines import RuntimeSettings, open_embedder


def embedding_model(embedder: Embedder) -> EmbeddingModel:
    """The index's view of an embedder; its id changes with the model file.

    A server's embedder has no file: its id is the model the server says it
    served, so switching the server's model re-embeds the vault.
    """
    return EmbeddingModel(
        model_id=embedder.model_id or embedder.name,
        dimension=embedder.dimension,
        embed=embedder.embed,
    )


def load_embedding_model(runtime: RuntimeSettings | None = None) -> EmbeddingModel:
    """Load the embedder alone (no LLM), for index and search commands, as ``runtime``
    (the resolved settings: :func:`desktop.flows.settings.resolve`) chooses it — the same
    model, and so the same model id, as the window's."""
    return embedding_model(open_embedder(runtime or RuntimeSettings()))


#: Texts embedded per step when the embedding reports its progress.
EMBED_STEP = 128


def embed_in_steps(
    embedding: EmbeddingModel, progress: Progress, what: str
) -> Callable[[Sequence[str]], npt.NDArray[np.float32]]:
    """``embedding.embed`` in steps of :data:`EMBED_STEP`, each told to ``progress`` as
    ``(texts embedded, texts, "<what>: 128 of 2875 sentences")``: a long embedding then shows
    its time left, measured on the texts embedded."""

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        parts = [np.zeros((0, embedding.dimension), dtype=np.float32)]
        for start in range(0, len(texts), EMBED_STEP):
            progress(start, len(texts), f"{what}: {start} of {len(texts)} sentences")
            batch = list(texts[start : start + EMBED_STEP])
            parts.append(np.asarray(embedding.embed(batch), dtype=np.float32))
        progress(len(texts), len(texts), f"{what}: {len(texts)} sentences")
        return np.concatenate(parts)

    return embed
