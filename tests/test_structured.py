"""The structured-output policy (schema, one stricter retry, raw answers) and the extractor."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foundation.errors import GenerationError, ModelUnavailable
from inference.base import GenerationSettings, Message, StopFlag
from inference.structured import (
    STRICT_SUFFIX,
    FormatFailure,
    complete_structured,
    extract_json,
    object_with_array,
    strip_reasoning,
)
from tests.fakes import ScriptedGenerator

PAIRS = object_with_array("pairs", "contraddizioni")
SCHEMA = {"type": "object", "properties": {"pairs": {"type": "array"}}, "required": ["pairs"]}
MESSAGES = [Message("system", "Find tensions."), Message("user", "NOTE A ... NOTE B ...")]


# ----------------------------------------------------------------------------- extraction


def test_takes_first_value_with_expected_structure() -> None:
    text = 'Sure! {"note": 1} and then {"pairs": [{"note_a": "A"}]} and {"pairs": []}'
    assert extract_json(text, PAIRS) == ("pairs", [{"note_a": "A"}])


def test_strips_reasoning_and_fences() -> None:
    text = '<think>maybe {"pairs": ["wrong"]}</think>\n```json\n{"pairs": []}\n```'
    assert extract_json(text, PAIRS) == ("pairs", [])


def test_unclosed_reasoning_block_runs_to_the_end() -> None:
    assert strip_reasoning('answer <think>{"pairs": []} still thinking') == "answer "
    assert extract_json('<think>{"pairs": []} never closed', PAIRS) is None


def test_legacy_key_is_accepted() -> None:
    assert extract_json('{"contraddizioni": [{"nota_a": "X"}]}', PAIRS) == (
        "contraddizioni",
        [{"nota_a": "X"}],
    )


def test_trailing_commas_are_forgiven() -> None:
    assert extract_json('{"pairs": [{"a": 1},],}', PAIRS) == ("pairs", [{"a": 1}])


def test_nothing_usable_is_none() -> None:
    assert extract_json("I could not find any contradiction.", PAIRS) is None
    assert extract_json('{"pairs": "none"}', PAIRS) is None
    assert extract_json("", PAIRS) is None


def test_a_shape_that_raises_only_rejects() -> None:
    def fussy(value: object) -> object:
        raise KeyError("boom")

    assert extract_json('{"a": 1}', fussy) is None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_extractor_never_raises_on_arbitrary_text(text: str) -> None:
    extract_json(text, PAIRS)
    extract_json(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(max_size=50), pairs=st.lists(json_values, max_size=5))
def test_extractor_finds_the_object_after_arbitrary_prose(prefix: str, pairs: list[object]) -> None:
    # Prose without brackets before it: the object is always found intact.
    prefix = prefix.replace("{", "").replace("[", "")
    text = prefix + json.dumps({"pairs": pairs}) + " trailing"
    assert extract_json(text, PAIRS) == ("pairs", pairs)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet='{[]}",: ', max_size=400))
def test_extractor_survives_bracket_soup(text: str) -> None:
    extract_json(text, PAIRS)


# ----------------------------------------------------------------------------- policy


def test_first_answer_good_means_one_call_constrained_by_schema() -> None:
    gen = ScriptedGenerator(['{"pairs": []}'])
    result = complete_structured(gen, MESSAGES, shape=PAIRS, schema=SCHEMA)
    assert result.status == "ok" and result.value == ("pairs", [])
    assert len(gen.calls) == 1
    assert gen.calls[0].schema == SCHEMA


def test_constraining_can_be_turned_off() -> None:
    gen = ScriptedGenerator(['{"pairs": []}'])
    complete_structured(
        gen, MESSAGES, shape=PAIRS, schema=SCHEMA, settings=GenerationSettings(constrain=False)
    )
    assert gen.calls[0].schema is None


def test_retry_once_with_stricter_suffix_and_same_context() -> None:
    gen = ScriptedGenerator(["no json here", '{"pairs": [{"note_a": "A"}]}'])
    result = complete_structured(gen, MESSAGES, shape=PAIRS, schema=SCHEMA)
    assert result.status == "ok" and result.retried
    second = gen.calls[1].messages
    assert second[0].role == "system"
    assert second[0].content.startswith("Find tensions.")
    assert STRICT_SUFFIX in second[0].content
    # Same user context, and the failed answer is not sent back.
    assert second[1:] == MESSAGES[1:]
    assert all("no json here" not in m.content for m in second)


def test_suffix_is_added_as_system_message_when_there_is_none() -> None:
    gen = ScriptedGenerator(["nope", "[]"])
    complete_structured(gen, [Message("user", "hi")], shape=PAIRS)
    assert [m.role for m in gen.calls[1].messages] == ["system", "user"]


def test_two_failures_return_both_raw_answers() -> None:
    gen = ScriptedGenerator(["first raw", "second raw"])
    result = complete_structured(gen, MESSAGES, shape=PAIRS, schema=SCHEMA)
    assert result.status == "format_failure"
    assert result.raw_answers == ("first raw", "second raw")
    with pytest.raises(FormatFailure) as info:
        result.raise_for_failure("Hunter")
    assert info.value.raw_answers == ("first raw", "second raw")
    assert "stricter retry" in str(info.value)


def test_empty_array_is_usable_and_stops_retrying() -> None:
    gen = ScriptedGenerator(['{"pairs": []}', "never asked"])
    result = complete_structured(gen, MESSAGES, shape=PAIRS)
    assert result.status == "ok" and len(gen.calls) == 1


@pytest.mark.parametrize(
    "error", [GenerationError("socket closed"), ModelUnavailable("server down")]
)
def test_transport_errors_are_never_retried(error: Exception) -> None:
    gen = ScriptedGenerator([error, '{"pairs": []}'])
    with pytest.raises(type(error)):
        complete_structured(gen, MESSAGES, shape=PAIRS)
    assert len(gen.calls) == 1


def test_stop_is_never_retried() -> None:
    stop = StopFlag()
    gen = ScriptedGenerator(["partial {", '{"pairs": []}'], stop_on_call=1)
    result = complete_structured(gen, MESSAGES, shape=PAIRS, stop=stop)
    assert result.status == "stopped"
    assert len(gen.calls) == 1
    assert result.raw_answers == ("partial {",)


def test_a_code_fence_inside_a_string_value_is_kept() -> None:
    text = '```json\n{"pairs": ["```", "run ```make``` first"]}\n```'
    assert extract_json(text, PAIRS) == ("pairs", ["```", "run ```make``` first"])
