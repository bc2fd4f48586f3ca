"""Hands the shared embedder to the vault index (which knows no models)."""

from __future__ import annotations

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
