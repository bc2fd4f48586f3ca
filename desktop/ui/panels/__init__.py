"""The panel registry: the window builds whatever is listed here, in this order.

Adding a panel is one new module in this folder that defines ``PANEL`` (a
:class:`PanelSpec` whose factory builds a ``QWidget`` from the
:class:`~desktop.ui.context.AppContext`), plus its line in :data:`PANELS`.
The window, menus (View ▸ panel) and geometry saving pick it up by itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from desktop.ui.context import AppContext

#: "left"/"right": a dock beside the tabs; "tab": a tab of the central area.
Area = Literal["left", "right", "tab"]


@dataclass(frozen=True)
class PanelSpec:
    key: str
    title: str
    area: Area
    factory: Callable[[AppContext], QWidget]


def _panels() -> list[PanelSpec]:
    from desktop.ui.panels import (
        debug,
        dismissed,
        guard,
        history,
        ingest,
        memory,
        models,
        notes,
        preview,
        related,
        tensions,
    )

    return [
        notes.PANEL,
        preview.PANEL,
        related.PANEL,
        tensions.PANEL,
        dismissed.PANEL,
        memory.PANEL,
        ingest.PANEL,
        guard.PANEL,
        history.PANEL,
        debug.PANEL,
        models.PANEL,
    ]


def panels() -> list[PanelSpec]:
    """Every panel of the window, in display order."""
    return _panels()
