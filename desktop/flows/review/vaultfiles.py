"""Finding the notes an action names, reading them as the user saw them, applying the plan.

The files are the source of truth: names are looked up on disk (not in the
index, which may lag behind), so a note deleted or renamed a moment ago is
never written to by its old name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.flows.hunter.dismissals import entry_for
from desktop.flows.review.errors import NoteNotFound, ReviewRefused
from desktop.flows.review.records import ReviewResult
from desktop.vault.errors import VaultChanged
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.layout import approval_identity, vault_root
from desktop.vault.links import stored_aliases
from desktop.vault.names import (
    basename_of,
    by_basename,
    name_key,
    resolve_note_name,
    strip_wikilink,
)
from desktop.vault.transactions import (
    OnChange,
    Plan,
    PlanInvalid,
    Write,
    apply_plan,
    approval_hash,
    new_operation_id,
    sha256_hex,
)
from desktop.vault.transactions.paths import resolve_target

#: Keys a note's type is read from, in order; the first one set wins.
TYPE_KEYS = ("type", "antinomia_type", "kind")


def entry_name(value: object) -> str:
    """A ``hunter_false_positives`` entry as a basename (``[[X]]`` and ``X.md`` tolerated)."""
    text = strip_wikilink(str(value))
    return basename_of(text) if "/" in text or text.lower().endswith(".md") else text


@dataclass(frozen=True)
class NoteText:
    """A note as read for an action: its text (line endings and BOM kept) and hash."""

    path: str
    text: str
    sha256: str
    frontmatter: Mapping[str, object]

    @property
    def basename(self) -> str:
        return basename_of(self.path)

    @property
    def type_key(self) -> str | None:
        """The frontmatter key the note's type is written under (``None``: no type)."""
        for key in TYPE_KEYS:
            value = self.frontmatter.get(key)
            if isinstance(value, str) and value.strip():
                return key
        return None

    @property
    def type(self) -> str | None:
        key = self.type_key
        return None if key is None else str(self.frontmatter[key]).strip()

    @property
    def status(self) -> str | None:
        value = self.frontmatter.get("status")
        return None if value is None or not str(value).strip() else str(value).strip()


def list_notes(root: Path) -> list[str]:
    """Vault-relative paths of the ``.md`` files, as the index sees them: dot-folders
    and dot-files skipped, folder links not followed, file links only inside the vault.

    Names only (no stat per file): ~25× faster than ``index.walk_vault`` on 10,000
    notes, which matters because every action lists the vault to resolve names.
    """
    found: list[str] = []
    folders = [(root, "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable folder: the index reports it
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append((Path(entry.path), prefix + entry.name + "/"))
                elif entry.name.lower().endswith(".md") and entry.is_file():
                    if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(root):
                        continue
                    found.append(prefix + entry.name)
            except OSError:
                continue
    return sorted(found)


class VaultFiles:
    """The vault's Markdown files, listed once per action."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = vault_root(root)
        self.paths: list[str] = list_notes(self.root)
        self._by_name = by_basename(self.paths)

    def with_basename(self, name: str) -> list[str]:
        return list(self._by_name.get(name_key(name), ()))

    def others_named_like(self, path: str) -> list[str]:
        return [p for p in self.with_basename(basename_of(path)) if p != path]

    def locate(self, name: str) -> str:
        """The vault-relative path of the note ``name``: see :func:`resolve_note_name`."""
        return resolve_note_name(
            name,
            root=self.root,
            paths=self.paths,
            named=self._by_name,
            aliases=lambda: stored_aliases(self.root),
        )

    def entry_for(self, path: str) -> str:
        """How a dismissal names ``path``: its basename, or its path when that is shared."""
        return entry_for(path, self.paths)

    def link_to(self, path: str) -> str:
        """A wikilink to ``path``: by basename, or by path when the basename is shared."""
        target = basename_of(path) if not self.others_named_like(path) else path[:-3]
        return f"[[{target}]]"

    def read(self, path: str, *, seen: Mapping[str, str] | None = None) -> NoteText:
        """Read ``path``; ``VaultChanged`` if it differs from the bytes the user saw."""
        try:
            target = resolve_target(self.root, path)
            data = target.read_bytes()
        except PlanInvalid as exc:
            raise ReviewRefused(f"Antinomy does not edit {path}: {exc}") from None
        except FileNotFoundError:
            raise NoteNotFound(
                f"{path} is no longer in the vault — it was moved or deleted. Re-run the scan."
            ) from None
        except OSError as exc:
            raise ReviewRefused(f"Cannot read {path} ({exc.strerror or exc}).") from None
        digest = sha256_hex(data)
        expected = (seen or {}).get(path)
        if expected is not None and expected != digest:
            raise VaultChanged(
                f"{path} changed on disk since it was shown. Nothing was written — look at the "
                "note again (re-run the scan), then repeat the action.",
                (path,),
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ReviewRefused(
                f"{path} is not UTF-8 text, so Antinomy does not edit it — re-save it as UTF-8."
            ) from None
        return NoteText(path, text, digest, parse_frontmatter(text))


def apply_review(
    root: Path,
    *,
    operation_type: str,
    summary: str,
    replaced: Sequence[tuple[NoteText, str]] = (),
    created: Sequence[tuple[str, str]] = (),
    state: Sequence[Write] = (),
    on_change: OnChange | None = None,
) -> ReviewResult:
    """One transaction: each ``(note, new_text)`` replaced (only if it changed), each
    ``(path, text)`` created, and the ``state`` writes (the review state a vault keeps in
    ``.antinomy/``). Guarded by the hashes the files had when read."""
    writes = [
        Write.replace(note.path, new_text.encode("utf-8"), expected_sha256=note.sha256)
        for note, new_text in replaced
        if new_text != note.text
    ]
    writes += [Write.create(path, text) for path, text in created]
    writes += state
    if not writes:
        return ReviewResult(None, (), (), summary)
    plan = Plan(new_operation_id(operation_type), operation_type, summary, tuple(writes))
    result = apply_plan(
        root,
        plan,
        approval=approval_hash(plan, approval_identity(root)),
        on_change=on_change,
    )
    return ReviewResult(
        operation_id=result.operation_id,
        changed=tuple(c.path for c in result.changes if c.action == "replace"),
        created=tuple(c.path for c in result.changes if c.action == "create"),
        summary=summary,
    )
