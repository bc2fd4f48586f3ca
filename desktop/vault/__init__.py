"""Notes, frontmatter, index and transactions (no Qt, no models)."""
