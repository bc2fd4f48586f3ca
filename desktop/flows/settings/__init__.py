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
from desktop.flows.settings.resolve import Overrides, Resolved, resolve

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
    "ScanCaps",
    "Settings",
    "SettingsInvalid",
    "load_settings",
    "resolve",
    "save_settings",
    "settings_from_dict",
    "settings_path",
    "settings_to_dict",
]
