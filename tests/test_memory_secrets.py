"""Secrets never reach the disk, by any capture path; ordinary words are not masked.

``secret_kinds.json`` holds 40 kinds of secret (46 realistic-looking, fake
samples): provider formats and the ones only the generic rules catch (a bare
AWS secret key, Luhn-valid cards, IBANs, bare hex, high-entropy tokens).
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.flows.memory import (
    close_open_batch,
    consolidate,
    import_transcript,
    last_report,
)
from desktop.flows.memory.batches import RawStore
from desktop.flows.memory.extract import Candidate
from desktop.flows.memory.names import name_problem, suggest_subjects
from desktop.flows.memory.route import make_offer, read_route
from desktop.flows.memory.secret_rules import iban_valid, luhn_valid
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.settings import MemoryPrefs, Settings, save_settings
from desktop.service.server import EndpointHandle, start_endpoint
from inference.base import Message
from inference.runtime import Runtime
from tests.fakes import WordEmbedder
from tests.memory_helpers import DATA, RoutingGenerator, all_files, small_batch
from tests.service_util import TOKEN, call

KINDS: list[dict[str, Any]] = json.loads((DATA / "secret_kinds.json").read_text("utf-8"))
ORDINARY = [
    line for line in (DATA / "ordinary_text.txt").read_text("utf-8").splitlines() if line.strip()
]
TOKEN_WORD = "Zp3Kq8Lm2Nx7Rv4Tw9Yb6Cd1Fg5Hj0Ks3Ql8Mn2P"
#: What the user says around the secrets, so consolidation has statements to route.
PLAIN = [
    "We decided to move the Atlas API to Fly.io in January.",
    "Marco is the new tech lead of Helios.",
    "I prefer Postgres 16 over MySQL for the billing service.",
]


class EchoingModel(RoutingGenerator):
    """A model that answers routing requests with prose repeating the statement: unreadable."""

    def _answer(self, kind: str, messages: Sequence[Message], schema: Any) -> str:
        props = (schema or {}).get("properties", {})
        if kind == "route" and "subject" in props:
            return f"Sure! You said {_statement(messages)} and I would file it somewhere."
        return super()._answer(kind, messages, schema)


class NamingModel(RoutingGenerator):
    """A model that files each statement under a new subject named after its longest word."""

    def _answer(self, kind: str, messages: Sequence[Message], schema: Any) -> str:
        props = (schema or {}).get("properties", {})
        if kind == "route" and "subject" in props:
            longest = max(_statement(messages).split() or ["x"], key=len)
            section = props["section"]["enum"][0]
            answer = {"fact": "", "subject": "new", "new_subject": longest[:40], "section": section}
            return json.dumps(answer)
        return super()._answer(kind, messages, schema)


def _statement(messages: Sequence[Message]) -> str:
    m = re.search(r'The user said: "(.*)"\n', messages[-1].content)
    assert m is not None, messages[-1].content
    return m.group(1)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[EndpointHandle, Path]]:
    # This file consolidates by itself: the endpoint's automatic run is switched off.
    save_settings(replace(Settings(), memory=MemoryPrefs(auto_consolidate=False)))
    runtime = Runtime(make_generator=RoutingGenerator, make_embedder=WordEmbedder)
    runtime.start()
    runtime.wait_ready(timeout=30)
    handle = start_endpoint(
        runtime=runtime, vault_root=tmp_path, port=0, token=TOKEN, publish=False, guard=False
    )
    yield handle, tmp_path
    handle.stop()
    runtime.close()


def _parts(secret: str) -> list[str]:
    return [part for part in secret.split("\n") if len(part) >= 8]


def _kinds_on_disk(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    files = [(f, f.read_bytes().decode("utf-8", "replace")) for f in all_files(root)]
    for case in KINDS:
        for secret in case["secrets"]:
            for part in _parts(secret):
                for file, data in files:
                    if part in data:
                        found.setdefault(case["kind"], []).append(str(file.relative_to(root)))
    return found


def test_the_sample_holds_forty_kinds() -> None:
    assert len({case["kind"] for case in KINDS}) == 40


def test_no_kind_of_secret_reaches_disk_by_any_capture_path(
    served: tuple[EndpointHandle, Path],
) -> None:
    handle, vault = served
    transcript = vault.parent / "session.jsonl"
    records = []
    for i, case in enumerate([*KINDS, *({"text": t} for t in PLAIN)]):
        for role in ("user", "assistant"):
            text = case["text"] if role == "user" else f"Noted: {case['text']}"
            records.append(
                {
                    "type": role,
                    "sessionId": "imported",
                    "timestamp": f"2026-11-30T10:{i:02d}:00Z",
                    "message": {"role": role, "content": text},
                }
            )
    transcript.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    report = import_transcript(vault, transcript)
    assert report.secrets_masked >= 2 * len(KINDS)
    for case in [*KINDS, *({"text": t} for t in PLAIN)]:
        for body_text in (case["text"], f"Remember this: {case['text']}"):
            status, body = call(
                handle.port,
                "POST",
                "/v1/capture",
                {
                    "role": "user",
                    "text": body_text,
                    "session_id": "live",
                    "timestamp": "2026-11-30T11:00:00Z",
                },
            )
            assert status == 200, body
    close_open_batch(vault)
    # Unreadable answers twice (debug notes, quarantine, reports), then a model that names
    # subjects after the longest word it is shown: every file memory writes is exercised.
    assert consolidate(vault, EchoingModel()).status == "json_failure"
    consolidate(vault, EchoingModel())
    consolidate(vault, NamingModel())
    assert (vault / ".antinomy" / "memory" / "debug").is_dir()
    assert last_report(vault) is not None
    assert list((vault / "Antinomy" / "Subjects").glob("*.md"))
    leaked = _kinds_on_disk(vault)
    assert leaked == {}, f"{len(leaked)}/40 kinds on disk: {leaked}"
    for page in (vault / "Antinomy" / "Subjects").glob("*.md"):
        assert name_problem(page.stem) != "token", page


def test_raw_answers_are_masked_in_debug_notes_and_the_report(tmp_path: Path) -> None:
    """A model may put a secret in its answer (one it saw in its own context): the answer
    is kept for debugging, masked."""
    key = next(c for c in KINDS if c["kind"] == "azure-account-key")
    leaky = RoutingGenerator(routes={"Lisbon": f"cannot say; try {key['text']}"})
    small_batch(tmp_path)
    report = consolidate(tmp_path, leaky)
    assert report.status == "json_failure"
    assert "AccountKey=[secret:azure-key]" in report.extract
    assert _kinds_on_disk(tmp_path) == {}


def test_lines_captured_before_a_rule_existed_are_masked_when_read(tmp_path: Path) -> None:
    """A batch written unmasked (by an older version) carries no secret any further."""
    store = RawStore(tmp_path)
    with store.locked():
        for text in [f"We rotated the Helios key to {TOKEN_WORD} yesterday.", *PLAIN]:
            store.append(time="2026-11-30T10:00:00Z", role="user", session="s", texts=[text])
    close_open_batch(tmp_path)
    # Masked as it is read, the line is left out as holding a secret: never sent to the
    # model, so never kept in quarantine (which keeps a statement's words) either.
    unroutable = RoutingGenerator(routes={"rotated": "Noted, I will keep it safe."})
    first = consolidate(tmp_path, unroutable)
    consolidate(tmp_path, unroutable)
    holding = [f for f in all_files(tmp_path) if TOKEN_WORD in f.read_text("utf-8", "replace")]
    assert holding == [store.path("2026-11-30")]
    assert ("2026-11-30#L1", "secret") in [(o.line_id, o.outcome) for o in first.lines]


def test_token_like_words_are_never_subject_or_page_names() -> None:
    said = f"We rotated the staging value to {TOKEN_WORD} yesterday."
    assert name_problem(TOKEN_WORD, said=said) == "token"
    assert name_problem(f"{TOKEN_WORD[:20]} key", said=said) == "token"
    assert name_problem(
        "5b77518b1018f134a069e3fab8c3bfc5", said="5b77518b1018f134a069e3fab8c3bfc5"
    ) == ("token")
    named, fresh = suggest_subjects(said, [])
    assert all(TOKEN_WORD not in n for n in named + fresh)
    candidate = Candidate(said, ("2026-11-30#L1",))
    offer = make_offer(candidate, [])
    answer = {"fact": "", "subject": "new", "new_subject": TOKEN_WORD, "section": "facts"}
    routed = read_route(answer, candidate, offer, [])
    assert routed.subject != TOKEN_WORD and routed.refused_reason == "token"
    assert routed.subject_refused == "[secret:subject-name]"  # not repeated in the report
    for name in ["Atlas API", "Python 3.11", "R2D2", "GPT-4o", "ADR-0012", "LH1234", "Fly.io"]:
        assert name_problem(name) is None, name


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_not_masked(text: str) -> None:
    assert mask_secrets(text).text == text


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        # Checksums decide: a number failing Luhn, an IBAN failing mod-97 stay.
        ("the order is 4290 5541 2403 1358", "the order is 4290 5541 2403 1358"),
        ("charge 4290 5541 2403 1359 today", "charge [secret:payment-card] today"),
        ("IBAN DE02 6419 8990 1365 3213 36", "IBAN DE02 6419 8990 1365 3213 36"),
        ("IBAN DE02641989901365321335", "IBAN [secret:iban]"),
        # A hash label spares a hex string; a secret-naming word near it does not.
        ("fixed in commit 5b77518b1018f134a069e3fab8c3bfc5e740e615", None),
        (
            "the deploy token for commit hooks is 5b77518b1018f134a069e3fab8c3bfc5e740e615",
            "the deploy token for commit hooks is [secret:hex-token]",
        ),
        (
            "use 5b77518b1018f134a069e3fab8c3bfc5e740e615 to log in",
            "use [secret:hex-token] to log in",
        ),
        # A UUID names things in prose; after a secret-naming word it is a key.
        ("request 6dfd8fd7-c17c-49f0-95ac-b395561690bd failed", None),
        ("api key 6dfd8fd7-c17c-49f0-95ac-b395561690bd", "api key [secret:named-secret]"),
        # Prose about passwords is not a password; a variable named after one is not either.
        ("the password is expired", None),
        ("the password is hunter22", "the password is [secret:password]"),
        ("credentials: Cookies, Authorization headers", None),
        ("login(hashed_password=hashed_password)", None),
        ("Co-Authored-By: Sytone", None),
        ("passing :strict_variables along", None),
        ("https://<user>:<password>@<hostname>/", None),
    ],
)
def test_generic_rules_decide_by_shape_and_checksum(text: str, masked: str | None) -> None:
    assert mask_secrets(text).text == (text if masked is None else masked)


def test_checksums() -> None:
    assert luhn_valid("4290554124031359") and not luhn_valid("4290554124031358")
    assert luhn_valid("79927398713")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid(
        "GB82 WEST 1234 5698 7654 33"
    )


def test_random_key_material_is_masked_whatever_its_alphabet() -> None:
    """Without a prefix or a name: 40 characters of random base62/base64 are masked
    (measured: 0-2 of 2,000 missed), and 24 characters nearly always."""
    rng = random.Random(20261130)
    for alphabet in (string.ascii_letters + string.digits, string.ascii_letters + "0123456789+/"):
        for length, allowed_misses in ((40, 2), (24, 8)):
            tokens = ["".join(rng.choice(alphabet) for _ in range(length)) for _ in range(200)]
            missed = [t for t in tokens if t in mask_secrets(f"the value is {t} now").text]
            assert len(missed) <= allowed_misses, missed


@given(st.text(max_size=300))
def test_masking_is_idempotent_and_never_fails(text: str) -> None:
    once = mask_secrets(text)
    assert mask_secrets(once.text).text == once.text
