"""Hands the shared embedder to the vault index (which knows no models)."""

from __future__ import annotations

from desktop.vault.vectors import EmbeddingModel
from inference.embedder import Embedder
from inference.registry import resolve_model


def embedding_model(embedder: Embedder) -> EmbeddingModel:
    """The index's view of an embedder; its id changes with the model file."""
    model = getattr(embedder, "model", None)
    digest = getattr(model, "sha256", "") or ""
    return EmbeddingModel(
        model_id=f"{embedder.name}@{digest[:16]}" if digest else embedder.name,
        dimension=embedder.dimension,
        embed=embedder.embed,
    )


def load_embedding_model(path: str | None = None) -> EmbeddingModel:
    """Load the embedder alone (no LLM), for index and search commands."""
    from inference.embedder import OnnxEmbedder

    return embedding_model(OnnxEmbedder(resolve_model("embedder", path)))
