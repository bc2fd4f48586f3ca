"""The tags of every indexed note (frontmatter ``tags`` and inline ``#tags``)."""

from __future__ import annotations

import json

from desktop.vault.index import VaultIndex


def note_tags(index: VaultIndex) -> dict[str, tuple[str, ...]]:
    """path → its tags, as the index parsed them. Call from the index's reading thread."""
    return {
        path: tuple(str(t) for t in json.loads(tags))
        for path, tags in index.db.execute("SELECT path, tags FROM notes")
    }
