"""Named step boundaries of the engine, where tests inject crashes.

The engine calls :func:`checkpoint` at every point where a crash would leave a
different state on disk (after each before-image, after the pending journal
record, after each temp file, rename and folder sync, after verification, after
the completion mark, and at each step of recovery). In normal runs no hook is
installed and a checkpoint costs one attribute read.

Tests run an apply in a child process with a hook that SIGKILLs the process at
one named step, then check that ``recover`` restores a consistent vault.
"""

from __future__ import annotations

from collections.abc import Callable

Hook = Callable[[str], None]

_hook: Hook | None = None


def checkpoint(name: str) -> None:
    """Mark a step boundary; calls the installed hook, if any, with ``name``."""
    if _hook is not None:
        _hook(name)


def set_hook(hook: Hook | None) -> None:
    """Install (or remove, with ``None``) the hook called at every checkpoint."""
    global _hook
    _hook = hook
