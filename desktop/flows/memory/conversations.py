"""Conversation notes: the lines a fact cites, as a Markdown note a person can open.

The raw batches (``.antinomy/raw/<batch>.tsv``) stay the engine's input; what a subject
page links to is the conversation's note, ``Antinomy/Conversations/<batch>.md``, one
paragraph per line with an Obsidian block id (``^L12`` for line ``<batch>#L12``), so a
citation is a block reference Obsidian renders and opens::

    - Flies to Lisbon on 12 December. — [[Antinomy/Conversations/2026-11-30#^L12|2026-11-30#L12]]

The note is rebuilt from its batch whenever a consolidation cites the batch or a line of
it is withdrawn (in the same transaction as the pages, or as the withdrawal), so it never
holds a line the user withdrew; secrets are masked again, as on every page. It is the
batch's view: edits to it are replaced (the note says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from desktop.flows.memory.batches import Batch, RawLine, RawStore, split_line_id
from desktop.flows.memory.secrets import mask_secrets
from desktop.vault.transactions import (
    Plan,
    Write,
    apply_plan,
    inspect_plan,
    new_operation_id,
    sha256_hex,
)

DEFAULT_FOLDER = "Antinomy/Conversations"
_SPEAKERS = {"user": "You", "assistant": "Assistant", "system": "System"}


def note_path(batch_id: str, folder: str = DEFAULT_FOLDER) -> str:
    return f"{folder}/{batch_id}.md"


def block_id(line: RawLine) -> str:
    return f"L{line.number}"


def citation_link(line_id: str, folder: str = DEFAULT_FOLDER) -> str:
    """``2026-11-30#L12`` → ``[[Antinomy/Conversations/2026-11-30#^L12|2026-11-30#L12]]``
    (the full path: a daily note may be called ``2026-11-30`` too)."""
    parts = split_line_id(line_id)
    if parts is None:
        return f"[{line_id}]"
    batch, number = parts
    return f"[[{note_path(batch, folder)[:-3]}#^L{number}|{line_id}]]"


def render_conversation(batch: Batch) -> str:
    """The note of ``batch``: front matter, then one paragraph per line, each ending with its
    block id; withdrawn lines are left out (their numbers stay unused)."""
    day = batch.day
    out = [
        "---",
        "type: conversation",
        f"batch: {batch.batch_id}",
        "generated: true",
        "---",
        f"# Conversation of {day}",
        "",
        "*Rebuilt by Antinomy from the captured conversation (secrets masked, withdrawn lines "
        "left out); edits here are replaced — correct a fact on its subject page instead.*",
        "",
    ]
    for line in batch.lines:
        if line.withdrawn:
            continue
        speaker = _SPEAKERS.get(line.role, line.role)
        time = line.time[11:16] if len(line.time) >= 16 else ""
        text = " ".join(mask_secrets(line.text).text.split())
        head = "" if line.continues else f"**{speaker}** ({time}): "
        out += [f"{head}{text} ^{block_id(line)}", ""]
    return "\n".join(out)


def conversation_writes(
    root: Path, store: RawStore, batch_ids: Iterable[str], folder: str = DEFAULT_FOLDER
) -> list[Write]:
    """A write per batch whose note is missing or out of date (none when it is current)."""
    writes: list[Write] = []
    for batch_id in sorted(set(batch_ids)):
        content = render_conversation(store.read(batch_id))
        path = note_path(batch_id, folder)
        target = root / path
        try:
            current = target.read_bytes()
        except FileNotFoundError:
            writes.append(Write.create(path, content))
            continue
        if current != content.encode("utf-8"):
            writes.append(Write.replace(path, content, expected_sha256=sha256_hex(current)))
    return writes


def cited_batches(line_ids: Sequence[str]) -> set[str]:
    return {parts[0] for lid in line_ids if (parts := split_line_id(lid)) is not None}


def refresh_after_withdrawal(
    root: Path, store: RawStore, line_ids: Sequence[str], folder: str = DEFAULT_FOLDER
) -> str | None:
    """Take withdrawn lines out of the conversation notes that already show them, as one
    transaction; its operation id, or None when no note had them."""
    batches = {b for b in cited_batches(line_ids) if (root / note_path(b, folder)).exists()}
    writes = conversation_writes(root, store, batches, folder)
    if not writes:
        return None
    plan = Plan(
        new_operation_id("memory"),
        "memory",
        f"Withdraw {len(line_ids)} line(s) from the conversation notes",
        tuple(writes),
    )
    apply_plan(root, plan, approval=inspect_plan(root, plan).approval)
    return plan.operation_id
