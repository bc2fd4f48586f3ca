"""The source note: the clean text of one ingested file, created once, never rewritten.

``Antinomy/Sources/<title>.md``::

    ---
    type: source
    title: "Installation"
    sha256: 9f2c…
    origin: "/home/ana/Downloads/installation.html"
    format: html
    date: 2026-12-01
    source_meta:            # the source's own front matter, when it has one
      permalink: /docs/installation/
    ---
    # Installation

    > Ingested from `/home/ana/Downloads/installation.html` on 2026-12-01 …

    <the clean text>

The source's own front matter is metadata of the note, never text of it: its keys and
values are kept, in the source's order, under the one key ``source_meta`` (its raw text
when it is not valid YAML or TOML), so its ``title``, ``date`` or ``type`` never collide
with the note's own keys.

A file is known by its sha256: the same bytes ingested again find their note
and offer nothing new. Changed bytes from the same origin get a new note
(``<title> (2).md``); the earlier one is never touched.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

from desktop.flows.ingest.read import Meta, SourceText
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.index import VaultIndex
from desktop.vault.names import note_file_name

DEFAULT_FOLDER = "Antinomy/Sources"
MAX_NAME_CHARS = 80
REQUIRED_KEYS = ("type", "title", "sha256", "origin", "date")


@dataclass(frozen=True)
class KnownSource:
    path: str
    sha256: str
    origin: str
    title: str


@dataclass(frozen=True)
class SourceNote:
    #: Vault-relative path and the basename every claim line cites as ``[[name]]``.
    path: str
    name: str
    content: str

    @property
    def link(self) -> str:
        return f"[[{self.name}]]"


def clean_name(name: str) -> str:
    """A file name from a title (:func:`desktop.vault.names.note_file_name`), bounded."""
    cleaned = note_file_name(name, max_chars=MAX_NAME_CHARS).strip(" .,;:!?-–—'")
    return cleaned or "Source"


def known_sources(root: Path, folder: str = DEFAULT_FOLDER) -> list[KnownSource]:
    """Source notes already in ``folder`` (``type: source`` with a sha256)."""
    base = root / folder
    if not base.is_dir():
        return []
    found = []
    for file in sorted(base.glob("*.md")):
        if file.is_symlink() or not file.is_file():
            continue
        try:
            meta = parse_frontmatter(file.read_text(encoding="utf-8"))
        except Exception:  # an unreadable note is simply not a known source
            continue
        if meta.get("type") != "source" or not isinstance(meta.get("sha256"), str):
            continue
        found.append(
            KnownSource(
                path=f"{folder}/{file.name}",
                sha256=str(meta["sha256"]),
                origin=str(meta.get("origin") or ""),
                title=str(meta.get("title") or file.stem),
            )
        )
    return found


def find_known(root: Path, source: SourceText, folder: str = DEFAULT_FOLDER) -> KnownSource | None:
    for known in known_sources(root, folder):
        if known.sha256 == source.sha256:
            return known
    return None


def earlier_version(
    root: Path, source: SourceText, folder: str = DEFAULT_FOLDER
) -> KnownSource | None:
    """A source note from the same origin with other bytes: the file changed since."""
    for known in known_sources(root, folder):
        if known.origin == source.origin and known.sha256 != source.sha256:
            return known
    return None


def pick_name(root: Path, title: str, *, index: VaultIndex | None, folder: str) -> str:
    """A basename free in ``folder`` and, when an index is given, in the whole vault.

    A free basename keeps ``[[name]]`` unambiguous: a link to a shared basename
    is reported as ambiguous, never guessed.
    """
    base = clean_name(title)
    for n in range(1, 1000):
        name = base if n == 1 else f"{base} ({n})"
        if (root / folder / f"{name}.md").exists():
            continue
        if index is not None and index.resolve(name):
            continue
        return name
    raise RuntimeError("no free source note name")  # pragma: no cover - 999 namesakes


def render_source_note(source: SourceText, *, name: str, folder: str, day: str) -> SourceNote:
    note = [
        "---",
        "type: source",
        f"title: {_yaml_str(source.title)}",
        f"sha256: {source.sha256}",
        f"origin: {_yaml_str(source.origin)}",
        f"format: {source.kind}",
        f"date: {day}",
        *_meta_lines(source.meta),
        "---",
        f"# {source.title}",
        "",
        f"> Ingested from `{source.origin}` on {day}: {source.words_kept} words"
        + (f" from {source.pages} pages" if source.pages else "")
        + (
            f", {source.boilerplate_removed:.0%} of the page's text left out as navigation"
            if source.kind == "html"
            else ""
        )
        + (" (cut at the size limit)" if source.truncated else "")
        + ".",
        "",
        source.text.rstrip("\n"),
        "",
    ]
    return SourceNote(path=f"{folder}/{name}.md", name=name, content="\n".join(note))


def _meta_lines(meta: Meta) -> list[str]:
    if not meta:
        return []
    if isinstance(meta, str):
        # An explicit indentation: a first line that opens with spaces stays in the block.
        return ["source_meta: |2-", *(f"  {line}".rstrip() for line in meta.splitlines())]
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.allow_unicode = True
    yaml.width = 100
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # source order
    # Values shared in the parsed front matter are written out, never as &anchors.
    yaml.representer.ignore_aliases = lambda data: True
    out = io.StringIO()
    yaml.dump({"source_meta": meta}, out)
    return out.getvalue().rstrip("\n").splitlines()


def _yaml_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{escaped}"'
