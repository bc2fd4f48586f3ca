"""A source's own title and front matter: the title is its own, the front matter is metadata."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.flows.ingest import plan_ingest, read_source
from desktop.flows.ingest.source_note import render_source_note
from desktop.vault.frontmatter import parse_frontmatter, split_frontmatter
from desktop.vault.index import VaultIndex
from tests.fakes import ScriptedGenerator
from tests.ingest_helpers import answer, make_vault, write_source

#: Shaped like a package manager's manual page: front matter, then a generic heading.
REGISTRY = """---
title: Package registry
section: 7
description: The JavaScript Package Registry
---

### Description

To resolve packages by name and version, the client talks to a registry website.
The client is configured to use the public registry by default, and anyone can read it.
You can run your own registry with any server that speaks the same protocol.

### Overview

The registry is a database of packages, each with its software and its metadata.
"""

BODY = "\n\nThe lockfile records the exact version of every dependency that was resolved.\n"


def read(tmp_path: Path, text: str, name: str = "page.md") -> tuple[str, object, str]:
    source = read_source(write_source(tmp_path, name, text))
    return source.title, source.meta, source.text


def test_the_title_is_the_front_matter_title_and_the_front_matter_is_not_text(
    tmp_path: Path,
) -> None:
    title, meta, text = read(tmp_path, REGISTRY)
    assert title == "Package registry"  # not "Description", the first heading
    assert meta == {
        "title": "Package registry",
        "section": 7,
        "description": "The JavaScript Package Registry",
    }
    assert text.startswith("### Description")
    assert "section: 7" not in text and "JavaScript Package Registry" not in text


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("## Overview\n\nSome words.\n\n# Lock files" + BODY, "Lock files"),  # an H1 first
        ("# Introduction\n\n## Package locking" + BODY, "Package locking"),  # generic H1
        ("# 1. Overview\n\n## Description\n\n### Package locking" + BODY, "Package locking"),
        ("# Features { #features }" + BODY, "Features"),  # an attribute list is not a word
        ("# The `uv lock` **command**" + BODY, "The uv lock command"),
        ("```bash\n# install the tool\n```\n\n## Setup steps" + BODY, "Setup steps"),
        ("Package locking\n===============" + BODY, "Package locking"),
        ("## Overview\n\n## Description" + BODY, "lockfiles"),  # nothing but generic headings
    ],
)
def test_the_title_is_the_first_h1_or_the_first_heading_that_is_not_generic(
    tmp_path: Path, text: str, title: str
) -> None:
    assert read(tmp_path, text, "lockfiles.md")[0] == title


def test_a_generic_file_name_gives_way_to_its_folder(tmp_path: Path) -> None:
    source = read_source(
        write_source(tmp_path / "package-locking", "index.md", "# Overview" + BODY)
    )
    assert source.title == "package locking"


def test_toml_front_matter_is_metadata_too_and_round_trips_in_the_source_note(
    tmp_path: Path,
) -> None:
    text = '+++\ntitle = "Hugo page"\ndate = 2024-01-02T10:00:00Z\ntags = ["a", "b"]\n+++' + BODY
    source = read_source(write_source(tmp_path, "hugo.md", text))
    assert source.title == "Hugo page"
    assert "+++" not in source.text and "tags" not in source.text
    note = render_source_note(source, name="Hugo page", folder="Sources", day="2026-01-02")
    meta = parse_frontmatter(note.content)
    assert meta["type"] == "source" and meta["title"] == "Hugo page"
    assert meta["date"] == dt.date(2026, 1, 2)  # the note's own keys are never overwritten
    assert meta["source_meta"] == {
        "title": "Hugo page",
        "date": dt.datetime(2024, 1, 2, 10, 0, tzinfo=dt.UTC),
        "tags": ["a", "b"],
    }


def test_front_matter_that_is_not_valid_yaml_is_kept_raw_and_out_of_the_text(
    tmp_path: Path,
) -> None:
    raw = "title: Lock files\nbroken: [unclosed\n  indented: line"
    source = read_source(write_source(tmp_path, "broken.md", f"---\n{raw}\n---" + BODY))
    assert source.meta == raw
    assert "unclosed" not in source.text
    note = render_source_note(source, name="broken", folder="Sources", day="2026-01-02")
    assert parse_frontmatter(note.content)["source_meta"] == raw
    assert "unclosed" not in split_frontmatter(note.content).body
    # a raw block whose first line is indented stays one block
    indented = replace(source, meta="  indented: first\nthen: less")
    note = render_source_note(indented, name="broken", folder="Sources", day="2026-01-02")
    assert parse_frontmatter(note.content)["source_meta"] == "  indented: first\nthen: less"


def test_a_document_opening_with_a_rule_keeps_its_text(tmp_path: Path) -> None:
    text = "---\nA rule opens this page, then prose follows it.\n---\n\n# Lock files" + BODY
    source = read_source(write_source(tmp_path, "rule.md", text))
    assert source.meta == {}
    assert "A rule opens this page" in source.text


def test_an_ingest_keeps_the_front_matter_as_source_meta_and_never_as_a_claim(
    tmp_path: Path,
) -> None:
    vault = make_vault(tmp_path / "vault")
    path = write_source(tmp_path / "downloads", "registry.md", REGISTRY)
    engine = ScriptedGenerator([answer(title="Package registry", summary="")])
    index = VaultIndex(vault)
    try:
        index.update()
        report = plan_ingest(vault, path, engine=engine, judge=None, index=index)
    finally:
        index.close()
    assert report.status == "planned", report.errors_first
    assert report.source_note == "Antinomy/Sources/Package registry.md"
    assert report.plan is not None
    note = report.plan.writes[0].text or ""
    assert parse_frontmatter(note)["source_meta"] == {
        "title": "Package registry",
        "section": 7,
        "description": "The JavaScript Package Registry",
    }
    assert "section: 7" not in split_frontmatter(note).body
    prompt = engine.calls[0].messages[-1].content
    assert "JavaScript Package Registry" not in prompt and "section" not in prompt
    assert not any("JavaScript" in (w.text or "") for w in report.plan.writes[1:])
    # generic headings are never offered as names: only the source's title is
    schema = engine.calls[0].schema
    assert schema is not None
    assert schema["properties"]["title"] == {"enum": ["Package registry"]}
