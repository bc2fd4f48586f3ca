"""Settings: the app-wide ones (:mod:`.app`, in the user's config folder) and each
vault's own (:mod:`.vault`, in ``<vault>/.antinomy/``), both parsed from their
dataclass fields (:mod:`.parse`)."""

from __future__ import annotations

from desktop.flows.settings.app import (
    DEFAULT_PORT,
    MAX_RECENT,
    SETTINGS_FILE,
    BackendKind,
    BackendSettings,
    EmbedderBackendSettings,
    EndpointSettings,
    FolderSettings,
    MemoryPrefs,
    ModelPaths,
    PerformanceSettings,
    ScanCaps,
    Settings,
    SettingsInvalid,
    load_settings,
    save_settings,
    settings_from_dict,
    settings_path,
    settings_to_dict,
)
from desktop.flows.settings.resolve import Overrides, Resolved, resolve, resolve_review
from desktop.flows.settings.review import (
    ReviewSettings,
    ReviewSettingsInvalid,
    load_review_settings,
    save_review_settings,
)

__all__ = [
    "DEFAULT_PORT",
    "MAX_RECENT",
    "SETTINGS_FILE",
    "BackendKind",
    "BackendSettings",
    "EmbedderBackendSettings",
    "EndpointSettings",
    "FolderSettings",
    "MemoryPrefs",
    "ModelPaths",
    "Overrides",
    "PerformanceSettings",
    "Resolved",
    "ReviewSettings",
    "ReviewSettingsInvalid",
    "ScanCaps",
    "Settings",
    "SettingsInvalid",
    "load_review_settings",
    "load_settings",
    "resolve",
    "resolve_review",
    "save_review_settings",
    "save_settings",
    "settings_from_dict",
    "settings_path",
    "settings_to_dict",
]
