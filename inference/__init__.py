"""Resident engines: the language model, the embedder, the judge, their registry and
structured output. Knows nothing of vaults or Qt (docs/architecture.md)."""

from __future__ import annotations
