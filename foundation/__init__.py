"""What every layer of Antinomy shares: the error root, atomic writes, where the user's state
lives, and the version. Imports nothing of ``desktop`` or ``inference``."""

from __future__ import annotations

__version__ = "0.1.0"
