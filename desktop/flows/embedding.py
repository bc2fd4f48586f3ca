"""Hands the shared embedder to the vault index (which knows no models)."""

from __future__ import annotations

from desktop.vault.vectors import EmbeddingModel
from inference.embedder import Embedder
from inference.engines import RuntimeSettings, open_embedder


def embedding_model(embedder: Embedder) -> EmbeddingModel:
    """The index's view of an embedder; its id changes with the model file."""
    return EmbeddingModel(
        model_id=embedder.model_id or embedder.name,
        dimension=embedder.dimension,
        embed=embedder.embed,
    )


def load_embedding_model(path: str | None = None) -> EmbeddingModel:
    """Load the embedder alone (no LLM), for index and search commands."""
    return embedding_model(open_embedder(RuntimeSettings(embedder_path=path)))
