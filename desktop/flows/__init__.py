"""Hunter, review, memory, ingest, guard and recall flows (no Qt)."""
