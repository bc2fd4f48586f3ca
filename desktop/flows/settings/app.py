"""The app-wide settings: one typed object, shared by the desktop app and the command line.

Stored as JSON in ``foundation.paths.config_dir() / "settings.json"`` (so
``ANTINOMY_HOME`` relocates it). Every section is a frozen dataclass that
checks itself on construction; a value the user can get wrong raises
:class:`SettingsInvalid` naming the key and the fix. Unknown keys in the file
are ignored (a newer version may have written them), missing keys take their
defaults; each value is checked against its field's type
(:mod:`desktop.flows.settings.parse`). Qt-free: the GUI edits it through its
Settings dialog, the CLI reads it. A vault's own settings live in the vault
(:mod:`desktop.flows.settings.vault`).
"""

from __future__ import annotations

import json
import os
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlparse

from desktop.flows.hunter import ScanSettings
from desktop.flows.ingest.source_note import DEFAULT_FOLDER as DEFAULT_SOURCES_FOLDER
from desktop.flows.memory.pages import DEFAULT_FOLDER as DEFAULT_SUBJECTS_FOLDER
from desktop.flows.review.records import DEFAULT_PRINCIPLES_FOLDER
from desktop.flows.settings.parse import from_mapping
from foundation import atomic
from foundation.errors import AntinomyError
from foundation.paths import config_dir
from inference.embedder import EmbedderSettings
from inference.http_backend import HttpSettings, is_loopback_host
from inference.http_embedder import HttpEmbedderSettings
from inference.llama_backend import LlamaSettings
from inference.registry import load_manifest
from inference.runtime import RuntimeSettings

SETTINGS_FILE = "settings.json"
#: How many recently opened vaults are remembered.
MAX_RECENT = 10
DEFAULT_PORT = 8765

BackendKind = Literal["embedded", "http"]


class SettingsInvalid(AntinomyError):
    """A settings value is out of range, or the settings file cannot be read."""


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise SettingsInvalid(message)


@dataclass(frozen=True)
class ModelPaths:
    #: A GGUF file of the user's own; None = the language model ``llm`` names.
    llm_path: str | None = None
    #: An ONNX encoder of the user's own; None = the shipped default.
    embedder_path: str | None = None
    #: The language model by its manifest id (``antinomy models`` lists them); None = the
    #: manifest's default. A file in ``llm_path`` is used instead.
    llm: str | None = None

    def __post_init__(self) -> None:
        if self.llm is None:
            return
        ids = [s.name for s in load_manifest() if s.kind == "llm"]
        _check(
            self.llm in ids,
            f"models.llm must be one of the language models `antinomy models` lists "
            f"({', '.join(ids)}), not {self.llm!r}.",
        )

    @property
    def llm_choice(self) -> str | None:
        """What the runtime loads: the user's file, else the chosen id (None: the default)."""
        return self.llm_path or self.llm


@dataclass(frozen=True)
class _ServerChoice:
    """An engine computed here (``embedded``) or by an OpenAI-compatible server (``http``)."""

    #: The settings section's name, in messages; what "embedded" means, in the hint.
    SECTION: ClassVar[str] = ""
    LOCAL: ClassVar[str] = ""

    kind: BackendKind = "embedded"
    base_url: str = ""
    model: str = ""
    api_key: str | None = None

    def __post_init__(self) -> None:
        _check(
            self.kind in ("embedded", "http"),
            f"{self.SECTION}.kind must be 'embedded' or 'http', not {self.kind!r}.",
        )
        if self.kind == "http":
            url = urlparse(self.base_url)
            _check(
                url.scheme in ("http", "https") and bool(url.hostname),
                f"{self.SECTION}.base_url must be an http(s) URL such as "
                f"http://127.0.0.1:8080/v1 (got {self.base_url!r}) — set it in Settings, or "
                f"choose the {self.LOCAL}.",
            )

    @property
    def leaves_machine(self) -> bool:
        """True when note text would be sent to another machine."""
        if self.kind != "http":
            return False
        return not is_loopback_host(urlparse(self.base_url).hostname or "")


@dataclass(frozen=True)
class BackendSettings(_ServerChoice):
    """Where the language model runs: the bundled GGUF, or an OpenAI-compatible server."""

    SECTION: ClassVar[str] = "backend"
    LOCAL: ClassVar[str] = "embedded backend"


@dataclass(frozen=True)
class EmbedderBackendSettings(_ServerChoice):
    """Where embeddings are computed: the bundled ONNX model, or an OpenAI-compatible
    ``/v1/embeddings`` server (llama-server --embeddings, Ollama, vLLM, TEI, another
    Antinomy). The index records the model id; switching re-embeds the vault."""

    SECTION: ClassVar[str] = "embedder_backend"
    LOCAL: ClassVar[str] = "embedded embedder"

    def http_settings(self) -> HttpEmbedderSettings | None:
        if self.kind != "http":
            return None
        return HttpEmbedderSettings(
            base_url=self.base_url, model=self.model, api_key=self.api_key or None
        )


#: The largest whole-vault budget the settings take: about an hour of judging on a laptop.
MAX_SCAN_PAIRS = 20000


@dataclass(frozen=True)
class ScanCaps:
    #: Classic mode: newest notes in one prompt.
    cap: int = 20
    #: Characters of each body put in the prompt.
    body_chars: int = 800
    types: tuple[str, ...] = ("tension", "substrate")
    #: Focus mode: nearest neighbours of the focus note.
    neighbours: int = 6
    #: Ask the user's own language-model server (backend http) about each pair about to be
    #: shown (``ScanSettings.second_opinion``). Off by default.
    second_opinion: bool = False
    #: Whole vault: candidate note pairs judged in one run (``antinomy scan --max-pairs``).
    max_pairs: int = ScanSettings.max_pairs
    #: Whole vault: note types never scanned (derived or retired notes).
    skip_types: tuple[str, ...] = ScanSettings.skip_types

    def __post_init__(self) -> None:
        _check(2 <= self.cap <= 500, f"scan.cap must be between 2 and 500 notes, not {self.cap}.")
        _check(
            100 <= self.body_chars <= 20000,
            f"scan.body_chars must be between 100 and 20000, not {self.body_chars}.",
        )
        _check(
            1 <= self.neighbours <= 50,
            f"scan.neighbours must be between 1 and 50, not {self.neighbours}.",
        )
        _check(
            bool(self.types) and all(isinstance(t, str) and t.strip() for t in self.types),
            "scan.types must name at least one note type, e.g. ['tension', 'substrate'].",
        )
        _check(
            isinstance(self.second_opinion, bool),
            f"scan.second_opinion must be true or false, not {self.second_opinion!r}.",
        )
        _check(
            1 <= self.max_pairs <= MAX_SCAN_PAIRS,
            f"scan.max_pairs must be between 1 and {MAX_SCAN_PAIRS} note pairs, "
            f"not {self.max_pairs}.",
        )
        _check(
            all(isinstance(t, str) and t.strip() for t in self.skip_types),
            "scan.skip_types must be note types (words such as 'source'), or empty to skip none.",
        )


@dataclass(frozen=True)
class EndpointSettings:
    port: int = DEFAULT_PORT

    def __post_init__(self) -> None:
        _check(
            1024 <= self.port <= 65535,
            f"endpoint.port must be between 1024 and 65535, not {self.port}.",
        )


@dataclass(frozen=True)
class FolderSettings:
    principles: str = DEFAULT_PRINCIPLES_FOLDER
    subjects: str = DEFAULT_SUBJECTS_FOLDER
    sources: str = DEFAULT_SOURCES_FOLDER
    debug: str = "Antinomy/Debug"

    def __post_init__(self) -> None:
        for f in fields(self):
            value: str = getattr(self, f.name)
            parts = value.replace("\\", "/").split("/")
            _check(
                bool(value.strip())
                and not value.startswith(("/", "\\"))
                and ":" not in value
                and ".." not in parts
                and not any(p.startswith(".") for p in parts),
                f"folders.{f.name} must be a folder inside the vault such as "
                f"'Antinomy/{f.name.title()}', not {value!r}.",
            )


@dataclass(frozen=True)
class MemoryPrefs:
    #: Consolidate automatically after a conversation batch closes (app and `antinomy serve`).
    auto_consolidate: bool = True

    def __post_init__(self) -> None:
        _check(
            isinstance(self.auto_consolidate, bool),
            f"memory.auto_consolidate must be true or false, not {self.auto_consolidate!r}.",
        )


@dataclass(frozen=True)
class PerformanceSettings:
    #: Threads for llama.cpp: 0 = chosen before each prompt batch and token from the cores
    #: free right now (inference/threads.py); 1–64 = that many, always.
    llm_threads: int = 0
    #: The embedder runs its real-int8 copy (inference/int8.py) for notes, search, scans and
    #: the guard: 1.8× faster to index, within a point of fp32 on 144 labelled queries
    #: (docs/benchmarks.md, "Precision"). False: fp32 everywhere (the index then re-embeds
    #: every note).
    embedder_int8: bool = True

    def __post_init__(self) -> None:
        _check(
            isinstance(self.llm_threads, int) and 0 <= self.llm_threads <= 64,
            "performance.llm_threads must be 0 (choose from the free cores) or a thread "
            f"count from 1 to 64, not {self.llm_threads!r}.",
        )


@dataclass(frozen=True)
class Settings:
    models: ModelPaths = field(default_factory=ModelPaths)
    backend: BackendSettings = field(default_factory=BackendSettings)
    embedder_backend: EmbedderBackendSettings = field(default_factory=EmbedderBackendSettings)
    scan: ScanCaps = field(default_factory=ScanCaps)
    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    folders: FolderSettings = field(default_factory=FolderSettings)
    memory: MemoryPrefs = field(default_factory=MemoryPrefs)
    performance: PerformanceSettings = field(default_factory=PerformanceSettings)
    #: Absolute paths, most recent first.
    recent_vaults: tuple[str, ...] = ()
    last_vault: str | None = None
    #: The main window's saved geometry and state (opaque, base64), GUI only.
    window_geometry: str | None = None
    window_state: str | None = None

    def runtime_settings(self) -> RuntimeSettings:
        """What the resident runtime needs to load the chosen models."""
        http = None
        if self.backend.kind == "http":
            http = HttpSettings(
                base_url=self.backend.base_url,
                model=self.backend.model,
                api_key=self.backend.api_key or None,
            )
        return RuntimeSettings(
            backend=self.backend.kind,
            llm_path=self.models.llm_choice,
            embedder_path=self.models.embedder_path,
            http=http,
            embedder_backend=self.embedder_backend.kind,
            embedder_http=self.embedder_backend.http_settings(),
            llama=LlamaSettings(threads=self.performance.llm_threads),
            embedder=EmbedderSettings(int8=self.performance.embedder_int8),
        )

    def scan_settings(self) -> ScanSettings:
        """The Hunter's settings from the user's scan caps."""
        return replace(
            ScanSettings(),
            types=self.scan.types,
            cap=self.scan.cap,
            body_chars=self.scan.body_chars,
            neighbours=self.scan.neighbours,
            second_opinion=self.scan.second_opinion,
        )

    def with_vault_opened(self, path: str | os.PathLike[str]) -> Settings:
        """These settings with ``path`` as the last vault and first of the recent ones."""
        full = str(Path(path).expanduser().resolve())
        recent = (full, *(p for p in self.recent_vaults if p != full))[:MAX_RECENT]
        return replace(self, recent_vaults=recent, last_vault=full)


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


def _sections() -> dict[str, type[Any]]:
    """The sections of :class:`Settings`: its fields that are settings dataclasses."""
    hints = typing.get_type_hints(Settings)
    return {
        f.name: hints[f.name]
        for f in fields(Settings)
        if isinstance(hints[f.name], type) and is_dataclass(hints[f.name])
    }


def settings_from_dict(data: Any) -> Settings:
    """Build and check settings from parsed JSON; raises :class:`SettingsInvalid`."""
    _check(isinstance(data, dict), "The settings file must hold a JSON object.")
    sections = {
        name: from_mapping(cls, data.get(name), where=name, error=SettingsInvalid)
        for name, cls in _sections().items()
    }
    recent = data.get("recent_vaults", [])
    _check(
        isinstance(recent, list) and all(isinstance(p, str) for p in recent),
        "recent_vaults must be a list of folder paths.",
    )
    for key in ("last_vault", "window_geometry", "window_state"):
        value = data.get(key)
        _check(value is None or isinstance(value, str), f"{key} must be a string.")
    return Settings(
        **sections,
        recent_vaults=tuple(recent[:MAX_RECENT]),
        last_vault=data.get("last_vault"),
        window_geometry=data.get("window_geometry"),
        window_state=data.get("window_state"),
    )


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    return asdict(settings)


def load_settings(path: Path | None = None) -> Settings:
    """The saved settings, or the defaults when none were saved yet.

    Raises :class:`SettingsInvalid` (naming the file) when the file is damaged;
    the app then starts on the defaults and says so, without overwriting it.
    """
    path = path or settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise SettingsInvalid(f"Cannot read the settings file {path}: {exc}.") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsInvalid(
            f"The settings file {path} is not valid JSON ({exc.msg}, line {exc.lineno}) — "
            "fix it or delete it to start from the defaults."
        ) from exc
    try:
        return settings_from_dict(data)
    except SettingsInvalid as exc:
        raise SettingsInvalid(
            f"The settings file {path} has a bad value: {exc} Fix it in Settings, or delete "
            "the file to start from the defaults."
        ) from exc


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically, owner-only (it may hold an API key)."""
    path = path or settings_path()
    return atomic.write_json(path, settings_to_dict(settings), mode=atomic.PRIVATE_MODE)
