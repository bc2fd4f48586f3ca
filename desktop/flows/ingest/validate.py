"""Validation of an ingest plan before anything is written; every error is a sentence.

Checked per page, before anything is written: the transaction engine's path rules (relative,
normalised, inside the vault, not in ``.obsidian/``, ``.git/``, ``.trash/``
or ``.antinomy/``, no symbolic-link escape); a create must not exist yet and
a replace must still be what was read; the frontmatter each page type needs;
a citation of the source on every claim line the plan adds; no citation of the
page dropped by an update; no update that shrinks a page by more than
``max_shrink``. A plan with any error is refused whole.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from desktop.flows.ingest.compose import PageDraft
from desktop.flows.ingest.source_note import REQUIRED_KEYS, SourceNote
from desktop.vault.errors import VaultError
from desktop.vault.frontmatter import parse_frontmatter, split_frontmatter
from desktop.vault.transactions import PlanInvalid, sha256_hex
from desktop.vault.transactions.paths import check_relative_path, resolve_target

DEFAULT_MAX_SHRINK = 0.30
#: Frontmatter keys each page type must have (non-empty).
REQUIRED_FRONTMATTER: dict[str, tuple[str, ...]] = {
    "subject": ("type", "sources"),
    "source": REQUIRED_KEYS,
}

#: Citations a page holds: wikilinks and Markdown links (memory's line citations are links).
_CITATION = re.compile(r"\[\[[^\]\n]+\]\]|\[[^\]\n]*\]\([^)\n]+\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NOT_CLAIM = re.compile(r"^\s*(#{1,6}\s|---+\s*$|\*\*\*+\s*$|___+\s*$|<!--|\|)")


def validate_pages(
    root: Path,
    pages: Sequence[PageDraft],
    *,
    source: SourceNote,
    max_shrink: float = DEFAULT_MAX_SHRINK,
) -> list[str]:
    errors: list[str] = []
    seen: set[str] = set()
    for page in pages:
        where = page.path
        try:
            check_relative_path(page.path)
            target = resolve_target(root, page.path)
        except PlanInvalid as exc:
            errors.append(str(exc))
            continue
        key = page.path.casefold()
        if key in seen:
            errors.append(f"{where} is written twice in one plan")
            continue
        seen.add(key)
        if not page.path.endswith(".md"):
            errors.append(f"{where} is not a Markdown note (.md)")
        errors += _check_disk(page, target)
        errors += _check_frontmatter(page, source)
        if page.path != source.path:  # the source note is the cited text itself
            errors += _check_citations(page, source)
        if page.action == "replace" and page.before is not None:
            errors += _check_update(page, max_shrink)
    return errors


def _check_disk(page: PageDraft, target: Path) -> list[str]:
    try:
        exists = target.exists()
        current = sha256_hex(target.read_bytes()) if exists else None
    except OSError as exc:
        return [f"{page.path} cannot be read ({exc.strerror or exc})"]
    if page.action == "create" and exists:
        return [
            f"{page.path} already exists but was not among the pages shown — route these claims "
            "to it by name, or pick another title"
        ]
    if page.action == "replace":
        if not exists:
            return [f"{page.path} no longer exists"]
        if current != page.expected_sha256:
            return [f"{page.path} changed since it was read for this plan — plan again"]
    return []


def _check_frontmatter(page: PageDraft, source: SourceNote) -> list[str]:
    try:
        meta = parse_frontmatter(page.content)
    except VaultError as exc:
        return [f"{page.path}: the frontmatter is not valid YAML ({exc})"]
    kind = meta.get("type")
    if not isinstance(kind, str) or not kind:
        return [f"{page.path}: frontmatter has no type"]
    errors = [
        f"{page.path}: a {kind} page needs frontmatter {key!r}"
        for key in REQUIRED_FRONTMATTER.get(kind, ("type",))
        if meta.get(key) in (None, "", [])
    ]
    if kind == "subject":
        listed = meta.get("sources")
        items = listed if isinstance(listed, list) else [listed]
        if source.link not in [str(x) for x in items]:
            errors.append(f"{page.path}: frontmatter sources does not list {source.link}")
    return errors


def claim_lines(body: str) -> list[str]:
    """Lines that state something: prose and list items (not headings, rules, code, tables)."""
    out = []
    in_code = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code or not line.strip() or _NOT_CLAIM.match(line):
            continue
        out.append(line)
    return out


def _check_citations(page: PageDraft, source: SourceNote) -> list[str]:
    body = split_frontmatter(page.content).body
    if page.action == "replace" and page.before is not None:
        old = split_frontmatter(page.before).body.splitlines()
        added = [
            line[1:]
            for line in difflib.unified_diff(old, body.splitlines(), lineterm="", n=0)
            if line.startswith("+") and not line.startswith("+++")
        ]
        lines = claim_lines("\n".join(added))
    else:
        lines = claim_lines(body)
    if not lines:
        return [f"{page.path}: the plan adds no claim to it"]
    return [
        f"{page.path}: claim line without a citation of {source.link}: {line.strip()[:80]!r}"
        for line in lines
        if source.link not in line
    ]


def _check_update(page: PageDraft, max_shrink: float) -> list[str]:
    assert page.before is not None
    errors = []
    before = Counter(_CITATION.findall(page.before))
    after = Counter(_CITATION.findall(page.content))
    lost = sorted((before - after).elements())
    if lost:
        shown = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
        errors.append(f"{page.path}: the update drops existing citations: {shown}")
    if len(page.content) < (1 - max_shrink) * len(page.before):
        errors.append(
            f"{page.path}: the update shrinks the page from {len(page.before)} to "
            f"{len(page.content)} characters (more than {max_shrink:.0%})"
        )
    return errors
