"""What the judge reads of a pending change (desktop/flows/guard/change.py): a file
change's new text cut into statements, never its path; a Bash call's summary whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.guard.change import file_texts, statements_of
from desktop.service.hook import summarize

DATA = Path(__file__).parent / "data" / "hooks"
CWD = "/home/dev/ledgerline"


def said(tool: str, tool_input: dict[str, Any]) -> tuple[str, ...]:
    return statements_of(tool, summarize(tool, tool_input, CWD))


def test_a_bash_call_is_judged_as_its_summary() -> None:
    summary = summarize("Bash", {"command": "rm ledger.db", "description": "Delete the ledger"})
    assert statements_of("Bash", summary) == (summary,)
    assert statements_of("", "some other caller's summary") == ("some other caller's summary",)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (
            "Edit",
            {"file_path": f"{CWD}/docs/releasing.md", "new_string": "Releases go out on Monday."},
        ),
        (
            "Write",
            {"file_path": f"{CWD}/docs/releasing.md", "content": "Releases go out on Monday."},
        ),
        (
            "MultiEdit",
            {
                "file_path": f"{CWD}/docs/releasing.md",
                "edits": [{"old_string": "Friday", "new_string": "Releases go out on Monday."}],
            },
        ),
        (
            "apply_patch",
            {
                "command": "*** Begin Patch\n*** Update File: docs/releasing.md\n@@\n"
                "-Releases go out on Friday.\n+Releases go out on Monday.\n*** End Patch\n"
            },
        ),
    ],
)
def test_a_file_change_is_judged_on_its_new_text_without_the_path(
    tool: str, tool_input: dict[str, Any]
) -> None:
    summary = summarize(tool, tool_input, CWD)
    assert "docs/releasing.md" in summary  # the path still helps cosine find the decisions
    assert statements_of(tool, summary) == ("Releases go out on Monday.",)
    assert file_texts(tool, summary)[0][0] == "docs/releasing.md"


def test_every_recorded_file_change_has_the_header_the_endpoint_expects() -> None:
    """The hook writes the header, the endpoint reads it: the two agree on every recorded
    payload (as the hook's copies of the limits are checked in test_guard_check)."""
    seen = 0
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text())
        tool = data.get("tool_name")
        if tool not in ("Write", "Edit", "MultiEdit", "apply_patch"):
            continue
        seen += 1
        summary = summarize(tool, data["tool_input"], data["cwd"])
        files = file_texts(tool, summary)
        assert files and all(p and not p.startswith("/") for p, _ in files), path.name
        for statement in statements_of(tool, summary):
            assert not any(statement.startswith(f"{v} ") for v in ("Edit", "Write", "Update"))
            assert all(p not in statement for p, _ in files), (path.name, statement)
    assert seen >= 13


def test_prose_is_cut_into_sentences_and_headings_assert_nothing() -> None:
    content = (
        "---\ntitle: Releasing\n---\n# Releasing\n\nProduction releases go out on Tuesdays. "
        "Two engineers do each release: one drives,\none watches the dashboards.\n\n"
        "## Hotfixes\n\n- A hotfix can go out at any time.\n- Ok.\n"
    )
    assert said("Write", {"file_path": f"{CWD}/RELEASING.md", "content": content}) == (
        "Production releases go out on Tuesdays.",
        "Two engineers do each release: one drives, one watches the dashboards.",
        "A hotfix can go out at any time.",
    )


def test_code_is_judged_only_where_it_carries_words() -> None:
    content = (
        "from pymongo import MongoClient\n"
        "client = MongoClient(os.environ['MONGO_URL'])  # events move to MongoDB\n"
        "events = client.ledgerline.invoice_events\n"
        'LEDGER_URL = "postgresql://ledgerline@db.internal/ledgerline"\n'
        "DEBUG = True\n"
        "def append(event):\n"
        '    """Append one event to the invoice events collection."""\n'
        "    events.insert_one(event)  # TODO\n"
    )
    assert said("Write", {"file_path": f"{CWD}/store.py", "content": content}) == (
        "events move to MongoDB",
        'LEDGER_URL = "postgresql://ledgerline@db.internal/ledgerline"',
        "Append one event to the invoice events collection.",
    )


def test_settings_need_a_key_and_a_value_that_say_something() -> None:
    content = (
        "name: deploy\n"
        "on:\n"
        "  push:\n"
        "    branches: [main]\n"
        "required_pull_request_reviews:\n"
        "weekends: none  # nobody is on call at weekends\n"
        "runs-on: [self-hosted, office]\n"
        "page_within: next business day\n"
        "color: '#fff'\n"
        "url: https://example.com/a#b\n"
        "#!/bin/sh\n"
    )
    assert said("Write", {"file_path": f"{CWD}/ci.yml", "content": content}) == (
        "nobody is on call at weekends",
        "runs-on: [self-hosted, office]",
        "page_within: next business day",
        "url: https://example.com/a#b",  # a URL can say where data goes (LEDGER_URL)
    )


def test_code_only_says_nothing() -> None:
    edit = {"file_path": f"{CWD}/src/parser.py", "new_string": "return [t for t in tokens if t]"}
    assert said("Edit", edit) == ()
    assert said("Edit", {"file_path": f"{CWD}/README.md", "new_string": "Installation"}) == ()


def test_multiedit_edits_are_not_joined_into_one_sentence() -> None:
    edits = [
        {"old_string": "weekends included", "new_string": "weekdays only"},
        {"old_string": "thirty minutes.", "new_string": "The pager is answered within four hours."},
    ]
    tool_input = {"file_path": f"{CWD}/docs/oncall.md", "edits": edits}
    assert said("MultiEdit", tool_input) == ("The pager is answered within four hours.",)
    # An older hook joined the edits with one newline: still read, as one paragraph.
    old = "Edit docs/oncall.md\nweekdays only\nThe pager is answered within four hours."
    assert statements_of("MultiEdit", old) == (
        "weekdays only The pager is answered within four hours.",
    )


def test_a_patch_reads_each_file_by_its_own_kind() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: docs/releasing.md\n@@\n # Releasing\n"
        "-Releases go out on Friday.\n+Releases go out on Monday\n+and on Thursday.\n"
        " \n Staging deploys on every merge.\n+Hotfixes can go out at any time.\n"
        "*** Add File: deploy.sh\n+#!/bin/sh\n+# release to production right away\n"
        "+./scripts/deploy.sh production\n*** Delete File: old.txt\n*** End Patch\n"
    )
    summary = summarize("apply_patch", {"command": patch}, CWD)
    assert [p for p, _ in file_texts("apply_patch", summary)] == ["docs/releasing.md", "deploy.sh"]
    assert statements_of("apply_patch", summary) == (
        "Releases go out on Monday and on Thursday.",  # one run of added lines: one paragraph
        "Hotfixes can go out at any time.",  # another hunk: its own
        "release to production right away",
    )
