"""What every panel gets: the controller and the app-wide services."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from desktop.ui.controller import AppController
from desktop.ui.logview import QtLogHandler

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget


@dataclass
class AppContext:
    controller: AppController
    log_handler: QtLogHandler
    #: Panels by key, filled in by the window as it builds them.
    panels: dict[str, QWidget] = field(default_factory=dict)
