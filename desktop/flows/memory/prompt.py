"""Prompt templates of the memory flows: plain text in ``resources/prompts/``.

``route_system.txt`` / ``route_user.txt`` (placeholders ``{context}``,
``{statement}``, ``{subjects}``, ``{sections}``) file one candidate fact;
``summary_system.txt`` / ``summary_user.txt`` (``{subject}``, ``{facts}``)
write a page's summary line.
"""

from __future__ import annotations

import functools

from desktop.resources import resources_dir


@functools.cache
def template(name: str) -> str:
    return (resources_dir() / "prompts" / name).read_text(encoding="utf-8")
