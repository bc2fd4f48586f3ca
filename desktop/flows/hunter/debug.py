"""The raw-response debug note: what the model said when its answer was unusable."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from desktop.flows.hunter.records import ScanRun
from desktop.vault.transactions import Plan, Write, apply_plan, inspect_plan, new_operation_id

DEBUG_FOLDER = "Antinomy/Debug"


def _fence(text: str) -> str:
    """A code fence longer than any backtick run inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _yaml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _stem(path: str) -> str:
    return path.removesuffix(".md")


def debug_note_text(run: ScanRun) -> str:
    lines = [
        "---",
        "type: debug",
        "flow: hunter",
        f"status: {run.status}",
        f"model: {_yaml_str(run.model)}",
        f"backend: {_yaml_str(run.backend)}",
        f"created: {run.started_at}",
        "---",
        f"# Hunter raw response — {run.started_at[:19].replace('T', ' ')}",
        "",
        f"**Why this note exists:** {run.error or run.status}",
        "",
        f"- Mode: {run.mode}" + (f" (focus: [[{_stem(run.focus)}]])" if run.focus else ""),
        f"- Model: {run.model} — backend: {run.backend}",
        f"- Notes examined: {run.notes_examined} of {run.candidates} candidates",
        f"- Duration: {run.duration:.2f} s — tokens in {run.tokens_in}, out {run.tokens_out}",
        "",
        "| attempt | prompt chars | tokens in | tokens out | prompt s | total s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, a in enumerate(run.attempts, 1):
        kind = "stricter retry" if a.retry else "first"
        lines.append(
            f"| {i} ({kind}) | {a.prompt_chars} | {a.tokens_in} | {a.tokens_out} "
            f"| {a.prompt_seconds:.2f} | {a.duration:.2f} |"
        )
    answers = run.raw_answers or tuple(a.answer for a in run.attempts)
    for i, answer in enumerate(answers, 1):
        fence = _fence(answer)
        lines += ["", f"## Raw answer {i}", "", fence, answer, fence]
    if not answers:
        lines += ["", "_The model returned no answer._"]
    return "\n".join(lines) + "\n"


def write_debug_note(root: Path, run: ScanRun, *, folder: str = DEBUG_FOLDER) -> str:
    """Create ``<folder>/HUNTER-RAW <timestamp>.md`` through a transaction; returns its path."""
    root = Path(root)
    try:
        stamp = datetime.fromisoformat(run.started_at).strftime("%Y-%m-%d %H-%M-%S")
    except ValueError:
        stamp = datetime.now().strftime("%Y-%m-%d %H-%M-%S")
    folder = folder.strip("/")
    path = f"{folder}/HUNTER-RAW {stamp}.md"
    n = 2
    while (root / path).exists():
        path = f"{folder}/HUNTER-RAW {stamp} ({n}).md"
        n += 1
    plan = Plan(
        new_operation_id("debug"),
        "debug-note",
        f"Debug note for the Hunter run of {run.started_at}",
        (Write.create(path, debug_note_text(run)),),
    )
    preview = inspect_plan(root, plan)
    apply_plan(root, plan, approval=preview.approval)
    return path
