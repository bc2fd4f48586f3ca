"""Frontmatter reading and byte-faithful editing (an edit changes only its key's bytes)."""

from __future__ import annotations

import contextlib
import datetime
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from desktop.vault.errors import VaultError
from desktop.vault.frontmatter import (
    FrontmatterError,
    add_to_list,
    parse_frontmatter,
    remove_from_list,
    remove_key,
    set_key,
    split_frontmatter,
)

# Fuzzed YAML may reuse an anchor name; ruamel.yaml warns, which is fine here.
FUZZ_WARNINGS = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def typed(value: object) -> object:
    """Data with types made explicit, so that `1`, `true` and `"1"` differ."""
    if isinstance(value, list):
        return ["list", [typed(item) for item in value]]
    if isinstance(value, dict):
        return ["dict", [(typed(k), typed(v)) for k, v in value.items()]]
    return [type(value).__name__, value]


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """Pairs of differing lines of two texts with the same number of lines."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


# ----------------------------------------------------------------------------- examples

NOTE = (
    "---\r\n"
    "# Antinomia tension — edited by hand\r\n"
    "antinomia_type: tension\r\n"
    "status: open   # was: proposed\r\n"
    "'if_clause': \"If the deadline slips\"\r\n"
    "hunter_false_positives: [Alpha, 'Beta note' ,Gamma]\r\n"
    "aliases:\r\n"
    '    - "First"\r\n'
    "    # keep this one\r\n"
    "    - second\r\n"
    "grey_zone:\r\n"
    "motive: >\r\n"
    "  folded text\r\n"
    "  # still text\r\n"
    "\r\n"
    "sources: [ ]\r\n"
    "created: 2024-05-01\r\n"
    "# trailing comment\r\n"
    "---\r\n"
    "Body with trailing spaces   \r\n"
    "---\r\n"
    "not frontmatter: no\r\n"
    "no final newline"
)


def test_reads_plain_data() -> None:
    assert parse_frontmatter(NOTE) == {
        "antinomia_type": "tension",
        "status": "open",
        "if_clause": "If the deadline slips",
        "hunter_false_positives": ["Alpha", "Beta note", "Gamma"],
        "aliases": ["First", "second"],
        "grey_zone": None,
        "motive": "folded text # still text\n",
        "sources": [],
        "created": datetime.date(2024, 5, 1),
    }


def test_flow_list_gets_item_inside_its_brackets() -> None:
    edited = add_to_list(NOTE, "hunter_false_positives", "Delta")
    assert changed_lines(NOTE, edited) == [
        (
            "hunter_false_positives: [Alpha, 'Beta note' ,Gamma]\r\n",
            "hunter_false_positives: [Alpha, 'Beta note' ,Gamma, Delta]\r\n",
        )
    ]
    assert remove_from_list(edited, "hunter_false_positives", "Delta") == NOTE


def test_flow_list_item_removed_from_the_middle_and_the_ends() -> None:
    key = "hunter_false_positives"
    assert "[Alpha, Gamma]" in remove_from_list(NOTE, key, "Beta note")
    assert "['Beta note' ,Gamma]" in remove_from_list(NOTE, key, "Alpha")
    assert "[Alpha, 'Beta note']\r\n" in remove_from_list(NOTE, key, "Gamma")


def test_block_list_gets_a_line_indented_like_its_items() -> None:
    edited = add_to_list(NOTE, "aliases", "[[Third]]")
    assert edited == NOTE.replace("    - second\r\n", '    - second\r\n    - "[[Third]]"\r\n')
    assert remove_from_list(edited, "aliases", "[[Third]]") == NOTE


def test_removing_a_block_item_keeps_the_comments_around_it() -> None:
    edited = remove_from_list(NOTE, "aliases", "First")
    assert edited == NOTE.replace('    - "First"\r\n', "")


def test_empty_list_after_removal_removes_the_key() -> None:
    once = remove_from_list(NOTE, "hunter_false_positives", "Alpha")
    twice = remove_from_list(once, "hunter_false_positives", "Gamma")
    gone = remove_from_list(twice, "hunter_false_positives", "Beta note")
    assert gone == NOTE.replace("hunter_false_positives: [Alpha, 'Beta note' ,Gamma]\r\n", "")


def test_adding_an_existing_item_or_removing_a_missing_one_changes_nothing() -> None:
    assert add_to_list(NOTE, "hunter_false_positives", "Alpha") is NOTE
    assert remove_from_list(NOTE, "hunter_false_positives", "Omega") is NOTE
    assert remove_from_list(NOTE, "no_such_key", "Alpha") is NOTE
    assert remove_key(NOTE, "no_such_key") is NOTE


def test_empty_flow_list_gets_its_first_item() -> None:
    edited = add_to_list(NOTE, "sources", "Book")
    assert changed_lines(NOTE, edited) == [("sources: [ ]\r\n", "sources: [Book ]\r\n")]


def test_scalar_changes_in_place_keeping_the_inline_comment() -> None:
    edited = set_key(NOTE, "status", "resolved")
    assert changed_lines(NOTE, edited) == [
        ("status: open   # was: proposed\r\n", "status: resolved   # was: proposed\r\n")
    ]


def test_quoted_key_and_value_keep_the_key_as_written() -> None:
    edited = set_key(NOTE, "if_clause", "If it slips: ship less")
    assert changed_lines(NOTE, edited) == [
        (
            "'if_clause': \"If the deadline slips\"\r\n",
            "'if_clause': \"If it slips: ship less\"\r\n",
        )
    ]


def test_empty_value_is_filled_after_its_colon() -> None:
    edited = set_key(NOTE, "grey_zone", "Only on Fridays")
    assert changed_lines(NOTE, edited) == [("grey_zone:\r\n", "grey_zone: Only on Fridays\r\n")]


def test_block_scalar_as_the_touched_key() -> None:
    edited = set_key(NOTE, "motive", "short")
    assert edited == NOTE.replace(
        "motive: >\r\n  folded text\r\n  # still text\r\n", "motive: short\r\n"
    )


def test_new_key_goes_after_the_last_line_with_the_file_line_breaks() -> None:
    edited = set_key(NOTE, "origin_tension", "[[Deadline vs quality]]")
    assert edited == NOTE.replace(
        "# trailing comment\r\n",
        '# trailing comment\r\norigin_tension: "[[Deadline vs quality]]"\r\n',
    )
    assert remove_key(edited, "origin_tension") == NOTE


def test_new_list_is_written_in_block_style() -> None:
    text = "---\ntitle: A\n---\nbody\n"
    edited = add_to_list(text, "hunter_false_positives", "B")
    assert edited == "---\ntitle: A\nhunter_false_positives:\n  - B\n---\nbody\n"


def test_setting_a_list_keeps_flow_or_block_style() -> None:
    flow = set_key(NOTE, "hunter_false_positives", ["X", "true", "a, b"])
    assert 'hunter_false_positives: [X, "true", "a, b"]\r\n' in flow
    block = set_key(NOTE, "aliases", ["One", "Two"])
    assert "aliases:\r\n    - One\r\n    - Two\r\ngrey_zone:" in block


def test_value_types_we_write() -> None:
    text = "---\na: 1\n---\n"
    assert set_key(text, "b", True) == "---\na: 1\nb: true\n---\n"
    assert set_key(text, "b", 42) == "---\na: 1\nb: 42\n---\n"
    assert set_key(text, "b", datetime.date(2024, 5, 1)) == "---\na: 1\nb: 2024-05-01\n---\n"
    assert set_key(text, "b", "2024-05-01") == '---\na: 1\nb: "2024-05-01"\n---\n'
    assert set_key(text, "b", "yes") == '---\na: 1\nb: "yes"\n---\n'
    assert set_key(text, "b", "two\nlines") == '---\na: 1\nb: "two\\nlines"\n---\n'
    assert set_key(text, "b", None) == "---\na: 1\nb:\n---\n"
    assert set_key(text, "b", []) == "---\na: 1\nb: []\n---\n"
    with pytest.raises(TypeError, match="float"):
        set_key(text, "b", 1.5)
    with pytest.raises(TypeError, match="ISO"):
        set_key(text, "b", datetime.datetime(2024, 5, 1, 10, 0))


def test_same_value_returns_the_text_untouched() -> None:
    assert set_key(NOTE, "status", "open") is NOTE
    assert set_key(NOTE, "hunter_false_positives", ["Alpha", "Beta note", "Gamma"]) is NOTE


def test_note_without_frontmatter_gets_a_block_and_loses_it_again() -> None:
    text = "\ufeffFirst line\r\nsecond"
    edited = set_key(text, "status", "open")
    assert edited == "\ufeff---\r\nstatus: open\r\n---\r\nFirst line\r\nsecond"
    assert remove_key(edited, "status") == text


def test_removing_the_last_key_keeps_comments_and_fences() -> None:
    assert remove_key("---\n# c\na: 1\n---\nbody", "a") == "---\n# c\n---\nbody"
    assert remove_key("---\na: 1\n---\nbody", "a") == "body"
    # A body that starts with a fence keeps the empty block, else it would become frontmatter.
    assert remove_key("---\na: 1\n---\n---\nb: 2\n---\n", "a") == "---\n---\n---\nb: 2\n---\n"


def test_blank_lines_go_with_a_removed_key_when_a_keep_block_scalar_would_take_them() -> None:
    text = "---\nb: |+\n  kept\na: |\n  clipped\n\n---\n"
    assert remove_key(text, "a") == "---\nb: |+\n  kept\n---\n"
    assert set_key(text, "a", "short") == "---\nb: |+\n  kept\na: short\n\n---\n"
    assert remove_key(set_key(text, "a", "short"), "a") == remove_key(text, "a")


def test_empty_items_at_the_end_of_a_block_list_belong_to_it() -> None:
    text = "---\nl:\n- a\n-  # to do\n# note\nm: 1\n---\n"
    assert add_to_list(text, "l", "z") == "---\nl:\n- a\n-  # to do\n- z\n# note\nm: 1\n---\n"
    assert set_key(text, "l", "x") == "---\nl: x\n# note\nm: 1\n---\n"


def test_frontmatter_at_the_end_of_the_file_and_dot_closing() -> None:
    assert set_key("---\na: 1\n---", "b", "x") == "---\na: 1\nb: x\n---"
    assert set_key("---\na: 1\n...\nbody", "a", 2) == "---\na: 2\n...\nbody"
    assert set_key("---\n---\n", "a", "x") == "---\na: x\n---\n"


def test_last_key_with_block_list_and_indentless_items() -> None:
    text = "---\nk: v\ntags:\n- one\n- two # why\n---\n"
    assert (
        add_to_list(text, "tags", "three") == "---\nk: v\ntags:\n- one\n- two # why\n- three\n---\n"
    )
    assert remove_from_list(text, "tags", "two") == "---\nk: v\ntags:\n- one\n---\n"


def test_scalar_value_becomes_a_list_when_an_item_is_added() -> None:
    text = "---\naliases: Solo\n---\n"
    assert add_to_list(text, "aliases", "Duo") == "---\naliases:\n  - Solo\n  - Duo\n---\n"
    assert remove_from_list(text, "aliases", "Solo") == ""


def test_split_parts() -> None:
    split = split_frontmatter("\ufeff---\r\na: 1\r\n---\r\nbody")
    assert split.has_frontmatter and split.bom == "\ufeff" and split.newline == "\r\n"
    assert (split.opening, split.yaml_text, split.closing, split.body) == (
        "---\r\n",
        "a: 1\r\n",
        "---\r\n",
        "body",
    )
    plain = split_frontmatter("no fences\n---\n")
    assert not plain.has_frontmatter and plain.body == "no fences\n---\n"
    empty = split_frontmatter("---\n---\n")
    assert empty.has_frontmatter and empty.yaml_text == "" and empty.body == ""


# ----------------------------------------------------------------------------- bad input


def test_invalid_yaml_names_the_line() -> None:
    with pytest.raises(FrontmatterError, match="at line 4") as caught:
        parse_frontmatter("---\ntitle: A\nlist: [a,\nnext: : b\n---\nbody\n")
    assert caught.value.line == 4
    assert isinstance(caught.value, VaultError)


def test_duplicate_key_names_its_line() -> None:
    with pytest.raises(FrontmatterError, match=r"line 3: found duplicate key \"a\""):
        parse_frontmatter("---\na: 1\na: 2\n---\n")


def test_frontmatter_that_is_a_list_is_refused_clearly() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter("---\n- a\n- b\n---\n")
    assert str(caught.value) == (
        "The frontmatter is a list, not `key: value` lines (line 2). "
        "Rewrite it as one `key: value` per line."
    )
    with pytest.raises(FrontmatterError, match="is a list"):
        set_key("---\n- a\n---\n", "status", "open")


def test_unclosed_frontmatter_reads_as_body_but_is_not_edited() -> None:
    text = "---\ntitle: A\nbody"
    assert parse_frontmatter(text) == {}
    assert remove_key(text, "title") is text
    with pytest.raises(FrontmatterError, match="never closed"):
        set_key(text, "status", "open")


def test_flow_mapping_frontmatter_is_read_but_not_edited() -> None:
    text = "---\n{a: 1, b: [x]}\n---\n"
    assert parse_frontmatter(text) == {"a": 1, "b": ["x"]}
    with pytest.raises(FrontmatterError, match="flow mapping"):
        set_key(text, "a", 2)


def test_edit_that_would_break_an_alias_is_refused() -> None:
    text = "---\na: &x shared\nb: *x\n---\n"
    with pytest.raises(FrontmatterError, match="left as it is"):
        set_key(text, "a", "other")
    assert set_key(text, "b", "own") == "---\na: &x shared\nb: own\n---\n"


def test_list_key_holding_a_mapping_is_refused() -> None:
    with pytest.raises(FrontmatterError, match="holds a mapping"):
        add_to_list("---\nsources:\n  a: 1\n---\n", "sources", "b")


# ----------------------------------------------------------------------------- properties

NEWLINES = st.sampled_from(["\n", "\r\n"])
RESERVED = {"true", "false", "null"}
KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda k: k not in RESERVED)
TEXT = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]), max_size=20)
WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9 _.()/-]{0,14}[A-Za-z0-9]|[A-Za-z]", fullmatch=True)
COMMENTS = TEXT.map(lambda s: "#" + s)
INLINE_SCALARS = st.one_of(
    WORDS,
    TEXT.map(lambda s: json.dumps(s, ensure_ascii=False)),
    TEXT.map(lambda s: "'" + s.replace("'", "''") + "'"),
    st.integers(-(10**9), 10**9).map(str),
    st.sampled_from(["true", "false", "2024-05-01", '"[[Note]]"', "'[[Note|alias]]'", "~"]),
)
ANY_VALUE: st.SearchStrategy[Any] = st.one_of(
    st.text(max_size=30),
    st.integers(),
    st.booleans(),
    st.dates(),
    st.none(),
    st.lists(st.one_of(st.text(max_size=15), st.integers(), st.booleans(), st.dates()), max_size=4),
)


@st.composite
def flow_lists(draw: st.DrawFn, *, non_empty: bool = False) -> list[str]:
    items = draw(st.lists(INLINE_SCALARS, min_size=1 if non_empty else 0, max_size=4))
    trailing = draw(st.sampled_from([",", ""])) if items else ""
    if items and draw(st.booleans()) and draw(st.booleans()):  # one item per line
        lines = [f"  {item}," for item in items]
        lines[-1] = lines[-1][:-1] + trailing + draw(st.sampled_from(["", "  # last"]))
        return [": [", *lines, draw(st.sampled_from(["]", "  ]"]))]
    sep = draw(st.sampled_from([", ", ",", " , "]))
    pad = draw(st.sampled_from(["", " "]))
    return [": [" + pad + sep.join(items) + trailing + pad + "]"]


@st.composite
def block_lists(draw: st.DrawFn) -> list[str]:
    indent = draw(st.sampled_from(["", "  ", "    "]))
    lines = [":"]
    for item in draw(st.lists(INLINE_SCALARS, min_size=1, max_size=4)):
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(indent + draw(COMMENTS))
        lines.append(f"{indent}- {item}")
    return lines


@st.composite
def other_values(draw: st.DrawFn) -> list[str]:
    kind = draw(st.sampled_from(["scalar", "empty", "block_scalar", "mapping", "multiline"]))
    if kind == "scalar":
        return [": " + draw(INLINE_SCALARS)]
    if kind == "empty":
        return [":"]
    if kind == "block_scalar":
        header = draw(st.sampled_from(["|", ">", "|-", ">-", "|+"]))
        body = draw(st.lists(st.one_of(WORDS, COMMENTS), min_size=1, max_size=3))
        tail = [""] * draw(st.integers(0, 2))
        return [": " + header] + ["  " + line for line in body] + tail
    if kind == "mapping":
        subkeys = draw(st.lists(KEYS, min_size=1, max_size=2, unique=True))
        return [":"] + [f"  {k}: {draw(WORDS)}" for k in subkeys]
    return [": " + draw(WORDS), "  " + draw(WORDS)]


@st.composite
def notes(draw: st.DrawFn, *, with_list: bool = False, fenced: bool = True) -> str:
    """A note whose frontmatter is varied but valid YAML."""
    nl = draw(NEWLINES)
    bom = "\ufeff" if draw(st.booleans()) and draw(st.booleans()) else ""
    body = draw(st.text(max_size=40))
    if not fenced:
        assume(not split_frontmatter(body).has_frontmatter and not body.startswith("---"))
        return bom + body
    keys = draw(st.lists(KEYS, unique=True, min_size=1 if with_list else 0, max_size=6))
    lines: list[str] = []
    for n, key in enumerate(keys):
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(draw(st.one_of(COMMENTS, st.sampled_from(["", "  "]))))
        written = draw(st.sampled_from([key, key, key, f'"{key}"', f"'{key}'"]))
        if with_list and n == 0:
            value = draw(st.one_of(flow_lists(non_empty=True), block_lists()))
        else:
            value = draw(st.one_of(flow_lists(), block_lists(), other_values()))
        if len(value) == 1 and draw(st.booleans()):
            value = [value[0] + "  " + draw(COMMENTS)]  # an inline comment
        lines.append(written + value[0])
        lines.extend(value[1:])
    if draw(st.booleans()):
        lines.append(draw(COMMENTS))
    closing = draw(st.sampled_from(["---", "---", "..."]))
    ending = nl if body or draw(st.booleans()) else ""
    text = bom + "---" + nl + "".join(line + nl for line in lines) + closing + ending
    return text + (body if ending else "")


def expected_after_set(data: dict[str, object], key: str, value: object) -> dict[str, object]:
    expected = dict(data)
    expected[key] = list(value) if isinstance(value, list | tuple) else value
    return expected


@PROPERTY
@given(text=st.one_of(notes(), notes(fenced=False)), key=KEYS, value=ANY_VALUE)
def test_set_then_remove_of_a_new_key_gives_the_original_bytes(
    text: str, key: str, value: object
) -> None:
    data = parse_frontmatter(text)
    assume(key not in data)
    assume(split_frontmatter(text).yaml_text != "" or not split_frontmatter(text).has_frontmatter)
    edited = set_key(text, key, value)
    assert typed(parse_frontmatter(edited)) == typed(expected_after_set(data, key, value))
    assert split_frontmatter(edited).body == split_frontmatter(text).body
    assert remove_key(edited, key) == text


@PROPERTY
@given(text=notes(with_list=True), item=st.text(max_size=20))
def test_add_then_remove_of_a_new_list_item_gives_the_original_bytes(text: str, item: str) -> None:
    data = parse_frontmatter(text)
    key = next(iter(data))
    old = data[key]
    assert isinstance(old, list) and old
    assume(item not in old)
    edited = add_to_list(text, key, item)
    assert typed(parse_frontmatter(edited)) == typed(expected_after_set(data, key, [*old, item]))
    assert remove_from_list(edited, key, item) == text


@PROPERTY
@given(text=notes(with_list=True), data=st.data())
def test_removing_an_existing_item_changes_only_that_list(text: str, data: st.DataObject) -> None:
    before = parse_frontmatter(text)
    key = next(iter(before))
    items = before[key]
    assert isinstance(items, list)
    strings = [item for item in items if isinstance(item, str)]
    assume(strings)
    item = data.draw(st.sampled_from(strings))
    remaining = [x for x in items if x != item or not isinstance(x, str)]
    expected = {k: v for k, v in before.items() if k != key or remaining}
    if remaining:
        expected[key] = remaining
    assert typed(parse_frontmatter(remove_from_list(text, key, item))) == typed(expected)


@PROPERTY
@given(text=notes(), data=st.data())
def test_setting_an_existing_key_touches_only_its_own_lines(text: str, data: st.DataObject) -> None:
    before = parse_frontmatter(text)
    assume(before)
    key = data.draw(st.sampled_from(sorted(before)))
    value = data.draw(ANY_VALUE)
    edited = set_key(text, key, value)
    assert typed(parse_frontmatter(edited)) == typed(expected_after_set(before, key, value))
    # Whatever the key held, removing it afterwards leaves what removing it at once leaves.
    assert remove_key(edited, key) == remove_key(text, key)


JUNK = st.one_of(
    st.text(st.sampled_from(list("ab x")), max_size=6),
    st.text(st.sampled_from(list("ab :-[]{}#&*!|>'\",?\t")), max_size=8),
)
KEY_LINES = st.builds("{}: {}".format, st.sampled_from(["a", "b", "'a'", "c", "  a"]), JUNK)
YAMLISH = st.lists(
    st.one_of(
        KEY_LINES,
        KEY_LINES,
        KEY_LINES,
        st.builds("{}- {}".format, st.sampled_from(["", "  "]), JUNK),
        st.builds("  {}".format, JUNK),
        st.builds("#{}".format, JUNK),
        JUNK,
    ),
    max_size=6,
).map("\n".join)


@FUZZ_WARNINGS
@PROPERTY
@given(
    yaml_text=YAMLISH,
    nl=NEWLINES,
    key=st.sampled_from(["a", "b", "new"]),
    value=st.one_of(st.sampled_from(["x", "a"]), st.lists(st.sampled_from(["x", "a"]), max_size=2)),
)
def test_edits_of_odd_frontmatter_are_correct_or_refused(
    yaml_text: str, nl: str, key: str, value: str | list[str]
) -> None:
    # A generated line that is itself a closing fence ends the frontmatter there: the rest
    # is body by definition, so "body" would not be the body (hypothesis found '---').
    assume(not any(line.rstrip("\r") in ("---", "...") for line in yaml_text.split("\n")))
    text = "---" + nl + yaml_text.replace("\n", nl) + nl + "---" + nl + "body"
    try:
        before = parse_frontmatter(text)
    except FrontmatterError:
        return
    edits = [
        (lambda: set_key(text, key, value), expected_after_set(before, key, value)),
        (lambda: remove_key(text, key), {k: v for k, v in before.items() if k != key}),
    ]
    old = before.get(key) or []
    if isinstance(value, str) and isinstance(old, list):
        added = old if value in old else [*old, value]
        edits.append(
            (lambda: add_to_list(text, key, value), expected_after_set(before, key, added))
        )
    for edit, expected in edits:
        try:
            edited = edit()
        except FrontmatterError:
            continue
        assert typed(parse_frontmatter(edited)) == typed(expected)
        assert split_frontmatter(edited).body == "body"


@FUZZ_WARNINGS
@PROPERTY
@given(
    text=st.one_of(
        st.text(),
        st.builds(lambda a, b: "---\n" + a + "\n---\n" + b, st.text(), st.text(max_size=5)),
        st.builds(
            lambda a: "---\r\n" + a + "\r\n...",
            st.text(st.sampled_from(list("ab:-[]{}#&*!|>'\"%@` \n\t,?\r\x00\u2028"))),
        ),
    )
)
def test_reading_arbitrary_text_raises_only_frontmatter_errors(text: str) -> None:
    split = split_frontmatter(text)
    assert split.bom + split.opening + split.yaml_text + split.closing + split.body == text
    with contextlib.suppress(FrontmatterError):
        parse_frontmatter(text)


def test_an_item_ending_in_a_colon_is_quoted_in_a_multiline_flow_list() -> None:
    # Found by the round-trip property: "[A0, 0:\n]" reads "0:" as a mapping key.
    text = "---\na: [\n  A0\n]\nb: []\n---\nbody"
    edited = add_to_list(text, "a", "0:")
    assert edited == '---\na: [\n  A0, "0:"\n]\nb: []\n---\nbody'
    assert remove_from_list(edited, "a", "0:") == text
