"""Settings resolved once: the saved settings with one run's overrides on top.

Every entry point — each CLI command, ``antinomy serve``, the window, the memory, ingest
and review flows — takes what a run needs from :func:`resolve`, so the same saved file
gives the same models, model ids and folders whichever of them runs. A command line's
flags are :class:`Overrides`; a value it does not set keeps the saved one. A vault's own
review settings (where its dismissals are written) come from :func:`resolve_review`, for
the window and the command line alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from desktop.flows.hunter import ScanSettings
from desktop.flows.memory import MemorySettings
from desktop.flows.settings.app import (
    BackendSettings,
    EmbedderBackendSettings,
    FolderSettings,
    Settings,
    load_settings,
)
from desktop.flows.settings.review import ReviewSettings, load_review_settings
from inference.registry import find_spec
from inference.runtime import RuntimeSettings


@dataclass(frozen=True)
class Overrides:
    """What one run sets over the saved settings; None keeps the saved value."""

    #: A GGUF / ONNX file of the user's own for this run (for the language model, a
    #: manifest id too: ``--llm qwen2.5-coder-1.5b-instruct-q4_k_m``).
    llm_path: str | None = None
    embedder_path: str | None = None
    #: A judge file of the user's own (it serves the scan and the guard alike).
    judge_path: str | None = None
    #: Where the language model runs, and where embeddings are computed.
    backend: BackendSettings | None = None
    embedder_backend: EmbedderBackendSettings | None = None
    llm_threads: int | None = None
    embedder_int8: bool | None = None
    #: Folder settings by name (``{"principles": "Rules"}``).
    folders: dict[str, str] = field(default_factory=dict)
    #: Scan settings by name (``{"max_pairs": 200}``).
    scan: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """Everything a run needs, decided once."""

    #: The saved settings with the overrides applied.
    settings: Settings
    #: What the engines load (the window's Runtime, serve's, a CLI command's models).
    runtime: RuntimeSettings
    folders: FolderSettings
    scan: ScanSettings
    #: Memory's folders (its Subjects folder is the user's).
    memory: MemorySettings


def resolve(overrides: Overrides | None = None, saved: Settings | None = None) -> Resolved:
    """``saved`` (default: the settings file; :class:`SettingsInvalid` when it is damaged)
    with ``overrides`` on top."""
    o = overrides or Overrides()
    s = saved if saved is not None else load_settings()
    llm_path, llm = s.models.llm_path, s.models.llm
    if o.llm_path and find_spec("llm", o.llm_path) is not None:
        llm_path, llm = None, o.llm_path  # a manifest id: it replaces a saved file too
    elif o.llm_path:
        llm_path = o.llm_path
    s = replace(
        s,
        models=replace(
            s.models,
            llm_path=llm_path,
            llm=llm,
            embedder_path=o.embedder_path or s.models.embedder_path,
        ),
        backend=o.backend or s.backend,
        embedder_backend=o.embedder_backend or s.embedder_backend,
        performance=replace(
            s.performance,
            llm_threads=s.performance.llm_threads if o.llm_threads is None else o.llm_threads,
            embedder_int8=(
                s.performance.embedder_int8 if o.embedder_int8 is None else o.embedder_int8
            ),
        ),
        folders=replace(s.folders, **o.folders),
    )
    runtime = s.runtime_settings()
    if o.judge_path:
        runtime = replace(runtime, judge_path=o.judge_path)
    # The whole-vault budget and the types it leaves out are the user's (Settings ▸ Scan);
    # a command line's flag is one run's.
    saved_scan: dict[str, Any] = {"max_pairs": s.scan.max_pairs, "skip_types": s.scan.skip_types}
    given = {k: v for k, v in o.scan.items() if v is not None}
    scan = replace(s.scan_settings(), **(saved_scan | given))
    memory = MemorySettings(subjects_folder=s.folders.subjects)
    return Resolved(settings=s, runtime=runtime, folders=s.folders, scan=scan, memory=memory)


def resolve_review(root: Path) -> ReviewSettings:
    """The vault's review settings (``<vault>/.antinomy/review/settings.json``);
    :class:`~desktop.flows.settings.review.ReviewSettingsInvalid` when the file is
    damaged. The window and every command take where dismissals go from here."""
    return load_review_settings(root)
