"""Capture: masking, withdrawal, transcript import, batch closing, input errors."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from desktop.flows.memory import (
    capture_turn,
    close_open_batch,
    end_session,
    import_transcript,
    pending_batches,
)
from desktop.flows.memory.batches import MAX_LINES, WITHDRAWN_TEXT, RawStore
from desktop.flows.memory.errors import CaptureInvalid, TranscriptInvalid
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.memory.withdraw import withdrawal_scope
from tests.memory_helpers import DATA, T0, all_files

SECRETS = json.loads((DATA / "secrets.json").read_text(encoding="utf-8"))


def _secret_parts(secret: str) -> list[str]:
    return [part for part in secret.split("\n") if len(part) >= 8]


@pytest.mark.parametrize("case", SECRETS, ids=lambda c: c["text"][:30])
def test_each_realistic_secret_is_masked(case: dict[str, str]) -> None:
    masked = mask_secrets(case["text"])
    assert masked.count >= 1
    for part in _secret_parts(case["secret"]):
        assert part not in masked.text
    assert "[secret:" in masked.text


def test_ordinary_text_is_not_masked() -> None:
    for text in [
        "the auth flow is complicated",
        "commit 3f2a9c01de7788aa fixed it; see https://example.com/a@b",
        "PASSWORD=${DB_PASSWORD} comes from the environment",
        "the token is expired",
        "ssh://git@github.com:me/repo.git",
    ]:
        assert mask_secrets(text).text == text


def test_no_secret_reaches_disk(tmp_path: Path) -> None:
    for i, case in enumerate(SECRETS):
        capture_turn(tmp_path, role="user", text=case["text"], session_id="s", ts=T0)
        capture_turn(tmp_path, role="assistant", text=f"Repeating: {case['text']}", session_id="s")
        assert i >= 0
    import_transcript(tmp_path, DATA / "claude_transcript.jsonl")
    secrets = [p for c in SECRETS for p in _secret_parts(c["secret"])]
    secrets.append("3f9c2b7e-1a4d-4e8b-9c6f-0d2e5a7b8c1d")  # in the transcript
    files = list(all_files(tmp_path))
    assert any(f.suffix == ".tsv" for f in files)
    for file in files:
        data = file.read_bytes().decode("utf-8", "replace")
        for secret in secrets:
            assert secret not in data, f"{secret!r} reached {file}"


def test_lines_are_numbered_and_ids_stable(tmp_path: Path) -> None:
    r1 = capture_turn(
        tmp_path, role="user", text="first line\n\nsecond line", session_id="s", ts=T0
    )
    r2 = capture_turn(tmp_path, role="assistant", text="reply", session_id="s", ts=T0)
    assert r1.line_ids == ("2026-11-30#L1", "2026-11-30#L2")
    assert r2.line_ids == ("2026-11-30#L3",)
    batch = RawStore(tmp_path).read("2026-11-30")
    assert [(line.number, line.role, line.text) for line in batch.lines] == [
        (1, "user", "first line"),
        (2, "user", "second line"),
        (3, "assistant", "reply"),
    ]
    assert batch.lines[0].time == "2026-11-30T10:00:00Z"


def test_batch_closes_on_day_change_size_and_session_end(tmp_path: Path) -> None:
    capture_turn(tmp_path, role="user", text="monday", session_id="s", ts=T0)
    capture_turn(tmp_path, role="user", text="tuesday", session_id="s", ts=T0 + timedelta(days=1))
    store = RawStore(tmp_path)
    assert store.batch_ids() == ["2026-11-30", "2026-12-01"]
    assert store.read("2026-11-30").close_reason == "day change"
    assert not store.is_closed("2026-12-01")
    assert end_session(tmp_path, session_id="other") is None
    assert end_session(tmp_path, session_id="s") == "2026-12-01"
    capture_turn(tmp_path, role="user", text="again", session_id="s", ts=T0 + timedelta(days=1))
    assert store.batch_ids()[-1] == "2026-12-01.2"
    big = "\n".join(f"line {i}" for i in range(MAX_LINES))
    capture_turn(tmp_path, role="user", text=big, session_id="s", ts=T0 + timedelta(days=1))
    assert store.read("2026-12-01.2").close_reason == "size limit"
    assert store.batch_ids()[-1] == "2026-12-01.3"
    assert close_open_batch(tmp_path) == "2026-12-01.3"
    assert close_open_batch(tmp_path) is None


def test_subagent_turns_and_blank_text_are_not_kept(tmp_path: Path) -> None:
    r = capture_turn(tmp_path, role="user", text="hi", session_id="s", context="subagent")
    assert r.status == "skipped" and "primary" in r.reason
    assert capture_turn(tmp_path, role="user", text="  \n ", session_id="s").status == "skipped"
    assert pending_batches(tmp_path) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"role": "system"}, "role must be 'user' or 'assistant', not 'system'."),
        ({"text": 42}, "text must be a string (the turn's words)."),
        ({"session_id": ""}, "session_id must be 1–128 characters"),
        ({"session_id": "a/b"}, "session_id must be 1–128 characters"),
        ({"context": "tool"}, "context must be 'primary' or 'subagent', not 'tool'."),
        ({"text": "x" * 100_001}, "text is 100001 characters; at most 100000 per turn — split it."),
    ],
)
def test_bad_turns_are_refused_with_the_field_named(
    tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    base: dict[str, object] = {"role": "user", "text": "hello", "session_id": "s"}
    with pytest.raises(CaptureInvalid) as err:
        capture_turn(tmp_path, **(base | kwargs))  # type: ignore[arg-type]
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("Forget what I just said.", "previous"),
        ("don't remember this", "previous"),
        ("Don't remember this: my salary is 4200 a month before tax", "this"),
        ("Oublie ce que je viens de dire.", "previous"),
        ("Ne retiens pas ça : je déteste mon chef et je vais démissionner", "this"),
        ("Dimentica quello che ho appena detto.", "previous"),
        ("Non ricordare questo", "previous"),
        ("off the record, I am interviewing at Globex next week", "this"),
        ("Don't forget that the meeting is on Monday", None),
        ("I remember this café well", None),
    ],
)
def test_withdrawal_phrases(text: str, scope: str | None) -> None:
    assert withdrawal_scope(text) == scope


def test_forget_what_i_just_said_withdraws_the_previous_turn_and_reply(tmp_path: Path) -> None:
    capture_turn(tmp_path, role="user", text="Keep this one.", session_id="s", ts=T0)
    capture_turn(
        tmp_path,
        role="user",
        text="My PIN hint is my dog's birth year.",
        session_id="s",
        ts=T0 + timedelta(seconds=5),
    )
    capture_turn(
        tmp_path,
        role="user",
        text="other session talk",
        session_id="t",
        ts=T0 + timedelta(seconds=6),
    )
    capture_turn(
        tmp_path,
        role="assistant",
        text="Okay, your dog's birth year.",
        session_id="s",
        ts=T0 + timedelta(seconds=7),
    )
    r = capture_turn(
        tmp_path,
        role="user",
        text="Oublie ce que je viens de dire",
        session_id="s",
        ts=T0 + timedelta(seconds=9),
    )
    assert r.status == "withdrawn"
    assert r.withdrawn == ("2026-11-30#L2", "2026-11-30#L4")
    lines = RawStore(tmp_path).read("2026-11-30").lines
    assert [line.withdrawn for line in lines] == [False, True, False, True, True]
    raw = (tmp_path / ".antinomy/raw/2026-11-30.tsv").read_text()
    assert "dog" not in raw and "Oublie" not in raw
    assert raw.count(WITHDRAWN_TEXT) == 3
    assert "Keep this one." in raw and "other session talk" in raw


def test_dont_remember_this_with_content_withdraws_only_that_turn(tmp_path: Path) -> None:
    capture_turn(tmp_path, role="user", text="Lunch was nice.", session_id="s", ts=T0)
    r = capture_turn(
        tmp_path,
        role="user",
        text="Non ricordare questo: sto cercando un altro lavoro a Milano",
        session_id="s",
        ts=T0,
    )
    assert r.status == "withdrawn" and r.withdrawn == ()
    lines = RawStore(tmp_path).read("2026-11-30").lines
    assert [line.withdrawn for line in lines] == [False, True]
    assert "Milano" not in (tmp_path / ".antinomy/raw/2026-11-30.tsv").read_text()


def test_import_claude_code_transcript_skips_tool_noise(tmp_path: Path) -> None:
    report = import_transcript(tmp_path, DATA / "claude_transcript.jsonl")
    assert report.turns_captured == 6
    assert report.bad_records == 1
    assert report.secrets_masked == 1
    lines = RawStore(tmp_path).read("2026-11-28").lines
    texts = [line.text for line in lines]
    assert texts[0].startswith("We are moving the Atlas API")
    assert lines[0].session == "7f3c2a10-4b5e-4d8a-9c1f-2e6b7a8d9c0e"
    assert lines[0].time == "2026-11-28T09:01:10Z"
    joined = "\n".join(texts)
    for noise in ("gunicorn atlas.wsgi", "fly launch", "Subagent", "repo layout", "clear", "Todo"):
        assert noise not in joined
    assert "HEROKU_API_KEY=[secret:password]" in joined
    assert [line.role for line in lines] == [
        "user",
        "assistant",
        "assistant",
        "user",
        "user",
        "assistant",
    ]


def test_import_refuses_a_file_that_is_not_a_transcript(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"a": 1}\nhello\n')
    with pytest.raises(TranscriptInvalid) as err:
        import_transcript(tmp_path, bad)
    assert "has no user or assistant messages (1 unreadable line)" in str(err.value)
    with pytest.raises(TranscriptInvalid, match="No transcript at"):
        import_transcript(tmp_path, tmp_path / "missing.jsonl")


def test_key_material_is_masked_without_its_key_id_and_commit_hashes_stay() -> None:
    from desktop.flows.memory.secrets import looks_random

    key = "Hq8vR2mK5tW9zB3nX6cF1dG4jL7pS0aE2yU5iO8r"
    assert looks_random(key)
    assert mask_secrets(f"the build cache is {key}").text == (
        "the build cache is [secret:high-entropy]"  # no key id near it: masked all the same
    )
    sha1 = "3f2a9c01de7788aa3f2a9c01de7788aa3f2a9c01"
    text = f"AKIAJ7Q2W5E8R3T6Y9UP was rotated in commit {sha1}"
    assert mask_secrets(text).text == f"[secret:aws-access-key] was rotated in commit {sha1}"
