"""Plans: what an operation will write, checked before anything touches the vault.

A plan is stored as JSON (``PLAN.json`` for ``antinomy tx``)::

    {
      "schema": "antinomy.plan/1",              optional on input
      "operation_id": "ingest-20240501T101500-1a2b3c4d",
      "operation_type": "ingest",
      "summary": "Ingest paper.pdf: 1 new source page, index updated",
      "writes": [
        {"action": "create",  "path": "Antinomy/Sources/Paper.md",
         "expected_sha256": null, "content": "---\\ntype: source\\n---\\n…"},
        {"action": "replace", "path": "Index.md",
         "expected_sha256": "<64 hex: sha256 of the file's bytes now>", "content": "…"},
        {"action": "delete",  "path": "Old.md", "expected_sha256": "<64 hex>"}
      ]
    }

- ``operation_id``: 1–160 of ``A–Z a–z 0–9 . _ -``, not starting with ``.``/``-``/``_``.
- ``operation_type``: lower-case word (``ingest``, ``review``, ``undo``, …).
- ``expected_sha256``: sha256 of the file's current bytes; ``null`` means "must
  not exist" (required for ``create``, refused for ``replace``/``delete``).
- ``content``: the new file, as text; it is written as UTF-8, byte for byte
  (line endings kept). Text that cannot be UTF-8 (lone surrogates) is refused.
  Exact bytes that are not UTF-8 — only needed to restore such a file, as undo
  does — go in ``content_base64`` instead. ``delete`` has neither.
- Unknown keys, duplicate keys and NaN are refused, so two readers can never
  see two different plans in one file.

The canonical form (sorted keys, no whitespace, UTF-8) is what the approval
hash and the operation's identity are computed from.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from desktop.vault.transactions.errors import PlanInvalid
from desktop.vault.transactions.paths import alias_key, check_relative_path

PLAN_SCHEMA = "antinomy.plan/1"
Action = Literal["create", "replace", "delete"]
ACTIONS: tuple[Action, ...] = ("create", "replace", "delete")

MAX_WRITES = 1000
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_PLAN_BYTES = 256 * 1024 * 1024
MAX_SUMMARY_CHARS = 2000

_OPERATION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,159}")
_OPERATION_TYPE = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_WRITE_KEYS = {"action", "path", "expected_sha256", "content", "content_base64"}
_PLAN_KEYS = {"schema", "operation_id", "operation_type", "summary", "writes"}


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_operation_id(operation_id: object) -> str:
    """``operation_id`` if it is a safe id; it names journal files, so it is never a path."""
    if not isinstance(operation_id, str) or not _OPERATION_ID.fullmatch(operation_id):
        raise PlanInvalid(
            f"Bad operation_id {operation_id!r}: use 1–160 letters, digits, '.', '_'"
            " or '-', starting with a letter or digit (new_operation_id() makes one)."
        )
    return operation_id


def is_sha256(value: object) -> bool:
    """A sha256 as plans and the journal write it: 64 lower-case hex digits."""
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


@dataclass(frozen=True)
class Write:
    """One file of a plan. ``content`` is the exact new bytes (``None`` for delete)."""

    action: Action
    path: str
    expected_sha256: str | None
    content: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_relative_path(self.path)
        if self.action not in ACTIONS:
            raise PlanInvalid(
                f"Unknown action {self.action!r} for {self.path} — use create, replace or delete."
            )
        where = f"The {self.action} of {self.path}"
        if self.action == "create":
            if self.expected_sha256 is not None:
                raise PlanInvalid(
                    f"{where} expects the file to exist — a create needs expected_sha256 null;"
                    " use replace to change an existing file."
                )
        elif not is_sha256(self.expected_sha256):
            raise PlanInvalid(
                f"{where} needs expected_sha256: the sha256 (64 lower-case hex digits) of the"
                " file as it is now."
            )
        if self.action == "delete":
            if self.content is not None:
                raise PlanInvalid(f"{where} has content; a delete has none.")
        elif not isinstance(self.content, bytes):
            raise PlanInvalid(f"{where} needs content (the whole new file).")
        elif len(self.content) > MAX_FILE_BYTES:
            raise PlanInvalid(
                f"{where} is {len(self.content)} bytes; at most {MAX_FILE_BYTES} per file."
            )

    @classmethod
    def create(cls, path: str, content: str | bytes) -> Write:
        """A new file; refused at apply time if anything exists at ``path``."""
        return cls("create", path, None, _encode(path, content))

    @classmethod
    def replace(cls, path: str, content: str | bytes, *, expected_sha256: str) -> Write:
        """New content for an existing file whose bytes now hash to ``expected_sha256``."""
        return cls("replace", path, expected_sha256, _encode(path, content))

    @classmethod
    def delete(cls, path: str, *, expected_sha256: str) -> Write:
        """Delete an existing file whose bytes now hash to ``expected_sha256``."""
        return cls("delete", path, expected_sha256, None)

    @property
    def after_sha256(self) -> str | None:
        """The file's hash once the plan is applied (``None``: it will not exist)."""
        return None if self.content is None else sha256_hex(self.content)

    @property
    def text(self) -> str | None:
        """The new content as text, or ``None`` (delete, or bytes that are not UTF-8)."""
        if self.content is None:
            return None
        try:
            return self.content.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "action": self.action,
            "path": self.path,
            "expected_sha256": self.expected_sha256,
        }
        if self.content is not None:
            text = self.text
            if text is None:
                data["content_base64"] = base64.b64encode(self.content).decode("ascii")
            else:
                data["content"] = text
        return data


@dataclass(frozen=True)
class Plan:
    """A change set: checked on construction (ids, paths, sizes, no two writes to one file)."""

    operation_id: str
    operation_type: str
    summary: str
    writes: tuple[Write, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "writes", tuple(self.writes))
        check_operation_id(self.operation_id)
        if not isinstance(self.operation_type, str) or not _OPERATION_TYPE.fullmatch(
            self.operation_type
        ):
            raise PlanInvalid(
                f"Bad operation_type {self.operation_type!r}: use a lower-case word such as"
                " 'ingest', 'review' or 'edit'."
            )
        if not isinstance(self.summary, str) or not self.summary.strip():
            raise PlanInvalid("A plan needs a summary saying what it does (shown before apply).")
        if len(self.summary) > MAX_SUMMARY_CHARS:
            raise PlanInvalid(f"The summary is longer than {MAX_SUMMARY_CHARS} characters.")
        _check_writes(self.writes)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(w.path for w in self.writes)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": PLAN_SCHEMA,
            "operation_id": self.operation_id,
            "operation_type": self.operation_type,
            "summary": self.summary,
            "writes": [w.to_json() for w in self.writes],
        }

    def canonical_bytes(self) -> bytes:
        """Sorted keys, no whitespace, UTF-8: the bytes every hash of a plan is taken over."""
        return json.dumps(
            self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")

    def sha256(self) -> str:
        """The plan's identity: two plans with one id are "the same" iff this matches."""
        return sha256_hex(self.canonical_bytes())


def _check_writes(writes: tuple[Write, ...]) -> None:
    if not writes:
        raise PlanInvalid("A plan needs at least one write.")
    if len(writes) > MAX_WRITES:
        raise PlanInvalid(f"A plan has at most {MAX_WRITES} writes; split it into several.")
    total = 0
    seen: dict[str, str] = {}
    for w in writes:
        if not isinstance(w, Write):
            raise PlanInvalid(f"A plan's writes must be Write records, not {type(w).__name__}.")
        key = alias_key(w.path)
        if key in seen:
            raise PlanInvalid(
                f"{seen[key]} and {w.path} name the same file: a plan writes each file once."
            )
        seen[key] = w.path
        total += len(w.content or b"")
    if total > MAX_PLAN_BYTES:
        raise PlanInvalid(f"The plan writes {total} bytes; at most {MAX_PLAN_BYTES} in one plan.")
    for key, path in seen.items():
        folder = key.rpartition("/")[0]
        while folder:
            if folder in seen:
                raise PlanInvalid(f"{seen[folder]} cannot be both a file and the folder of {path}.")
            folder = folder.rpartition("/")[0]


def approval_hash(plan: Plan, vault_identity: str) -> str:
    """The hash a user approves: bound to the canonical plan and to one vault."""
    digest = hashlib.sha256(b"antinomy-approval/1\0")
    digest.update(vault_identity.encode("utf-8") + b"\0")
    digest.update(plan.canonical_bytes())
    return digest.hexdigest()


def new_operation_id(operation_type: str) -> str:
    """A fresh, sortable operation id such as ``ingest-20240501T101500-1a2b3c4d``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{operation_type}-{stamp}-{uuid.uuid4().hex[:8]}"


def _encode(path: str, content: str | bytes) -> bytes:
    if isinstance(content, bytes):
        return content
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError:
        raise PlanInvalid(
            f"The content for {path} is not valid Unicode text (it has a lone surrogate) — give"
            " UTF-8 text, or content_base64 for exact bytes."
        ) from None


# -- JSON ------------------------------------------------------------------------------------


def plan_to_json(plan: Plan) -> str:
    """The plan as readable JSON (same data as the canonical form, indented)."""
    return json.dumps(plan.to_json(), indent=2, ensure_ascii=False) + "\n"


def plan_from_json(text: str | bytes) -> Plan:
    """Parse and check a plan; raises :class:`PlanInvalid` naming the first problem."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_nan)
    except UnicodeDecodeError:
        raise PlanInvalid("The plan file is not UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise PlanInvalid(
            f"The plan is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})."
        ) from None
    return plan_from_dict(data)


def read_plan_file(path: str | Path) -> Plan:
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise PlanInvalid(f"No plan file at {path} — check the path.") from None
    except OSError as exc:
        raise PlanInvalid(f"Cannot read the plan file {path}: {exc.strerror}.") from None
    return plan_from_json(raw)


def plan_from_dict(data: object) -> Plan:
    if not isinstance(data, Mapping):
        raise PlanInvalid("The plan must be a JSON object (see the plan schema in --help).")
    _only_keys(data, _PLAN_KEYS, "the plan")
    schema = data.get("schema", PLAN_SCHEMA)
    if schema != PLAN_SCHEMA:
        raise PlanInvalid(f"Unknown plan schema {schema!r}; this Antinomy reads {PLAN_SCHEMA}.")
    writes = data.get("writes")
    if not isinstance(writes, list):
        raise PlanInvalid("The plan needs 'writes': a list of create/replace/delete entries.")
    return Plan(
        operation_id=_field(data, "operation_id", "the plan"),
        operation_type=_field(data, "operation_type", "the plan"),
        summary=_field(data, "summary", "the plan"),
        writes=tuple(_write_from_dict(w, n) for n, w in enumerate(writes, 1)),
    )


def _write_from_dict(data: object, number: int) -> Write:
    where = f"write #{number}"
    if not isinstance(data, Mapping):
        raise PlanInvalid(f"{where} must be a JSON object.")
    _only_keys(data, _WRITE_KEYS, where)
    action = _field(data, "action", where)
    path = check_relative_path(data.get("path"))
    expected = data.get("expected_sha256")
    if expected is not None and not isinstance(expected, str):
        raise PlanInvalid(f"{where} ({path}): expected_sha256 must be a hex string or null.")
    if "content" in data and "content_base64" in data:
        raise PlanInvalid(f"{where} ({path}): give content or content_base64, not both.")
    content: bytes | None = None
    if "content" in data:
        text = data["content"]
        if not isinstance(text, str):
            raise PlanInvalid(f"{where} ({path}): content must be a string (the whole file).")
        content = _encode(path, text)
    elif "content_base64" in data:
        try:
            content = base64.b64decode(str(data["content_base64"]), validate=True)
        except (binascii.Error, ValueError):
            raise PlanInvalid(f"{where} ({path}): content_base64 is not valid base64.") from None
    if action not in ACTIONS:
        raise PlanInvalid(
            f"{where} ({path}): unknown action {action!r} — use {', '.join(ACTIONS)}."
        )
    return Write(action, path, expected, content)


def _field(data: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise PlanInvalid(f"{where.capitalize()} is missing {key!r}.")
    return data[key]


def _only_keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise PlanInvalid(
            f"Unknown key(s) in {where}: {', '.join(unknown)}"
            f" (allowed: {', '.join(sorted(allowed))})."
        )


def _no_duplicate_keys(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise PlanInvalid(f"The plan has the key {key!r} twice in one object.")
        result[key] = value
    return result


def _no_nan(name: str) -> None:
    raise PlanInvalid(f"The plan contains {name}, which is not JSON.")
