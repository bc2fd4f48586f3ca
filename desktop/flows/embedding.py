"""Hands the shared embedder to the vault index (which knows no models)."""

from __future__ import annotations

from desktop.vault.vectors import EmbeddingModel
from inference.embedder import Embedder
from inference.engines import RuntimeSettings, open_embedder
from inference.http_embedder import HttpEmbedderSettings


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


def load_embedding_model(
    path: str | None = None, http: HttpEmbedderSettings | None = None
) -> EmbeddingModel:
    """Load the embedder alone (no LLM), for index and search commands: the server's
    when ``http`` is given, else the ONNX model (``path`` or the bundled one)."""
    settings = RuntimeSettings(
        embedder_path=path,
        embedder_backend="http" if http is not None else "embedded",
        embedder_http=http,
    )
    return embedding_model(open_embedder(settings))
