"""Resident engines: the LLM, the embedder, their registry and structured output.

This package knows nothing of vaults or Qt (ARCHITECTURE.md).
"""

from __future__ import annotations

__version__ = "0.1.0"
