"""Only prose is evidence: lines taken from real documentation (the uv, Rust book,
Material for MkDocs, Foam and Logseq docs) sorted into claims and everything else."""

from __future__ import annotations

import pytest

from desktop.flows.sentences import evidence_reason, split_sentences


def reason(line: str) -> str | None:
    sentences = split_sentences(line)
    if not sentences:
        return "markup"  # markup alone leaves no text at all
    (sentence,) = sentences
    return evidence_reason(sentence)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        # code and commands
        ("cargo build --release", "code"),
        ("uv pip install -r requirements.txt", "code"),
        ("`ghcr.io/astral-sh/uv:trixie`", "code"),
        ("`$CWD/.uv`", "code"),
        ("`Foam › Edit: Link Reference Definitions` -> `withExtensions`", "code"),
        # placeholders and templates
        ('{% include "partials/search.html" %}', "placeholder"),
        ("{{embed ((60acbe13-f12d-451a-9793-56201f858074))}}", "placeholder"),
        ("This is an alias for `foam search --tag <tag>`.", "placeholder"),
        ("{* ../../docs_src/query_params/tutorial001_py310.py hl[9] *}", "placeholder"),
        # markup
        ('<div class="result" markdown>', "markup"),
        (
            '<Listing number="13-1" file-name="src/main.rs" caption="Shirt company giveaway">',
            "markup",
        ),
        ("!!! important", "markup"),
        ("![Run Result](../assets/uv_gui_script_hello_world.png)", "markup"),
        ("collapsed:: true", "markup"),
        ("> [!warning] Back up your vault before upgrading", "markup"),
        # key: value
        ('Type: "dev", "optional"', "key_value"),
        ("Status: accepted", "key_value"),
        # lead-ins
        ("To reinstall a single package in a tool environment:", "lead_in"),
        ("The created module defines a simple API function:", "lead_in"),
        # links
        ("See [[Publishing]] for more details on the graph export option.", "links"),
        ("Check the [[frequently-asked-questions]] and [[getting-started]]", "links"),
        # formulas (a personal maths garden's lines)
        (r"$\sum_{n=m}^\infty a_n$ is **absolute convergent** *iff* "
         r"$\sum_{n=m}^\infty |a_n|$ converges.", "math"),
        (r"Snell's law: $$ n_1 \sin \theta_1 = n_2 \sin \theta_2 $$ holds at the boundary.",
         "math"),
        # questions ask, they do not claim
        ("Why does the brain not do this process when we are awake?", "question"),
        ("Pourquoi le levain monte-t-il moins vite en hiver ?", "question"),
    ],
)  # fmt: skip
def test_what_is_not_a_claim(line: str, why: str) -> None:
    assert reason(line) == why


@pytest.mark.parametrize(
    "line",
    [
        "By default, `uv run` and `uv sync` operates on the workspace root.",
        "Within a cache version, changes are guaranteed to be forwards-compatible.",
        "A package can contain multiple binary crates and optionally one library crate.",
        "You can always interrupt the program with <kbd>ctrl</kbd>-<kbd>C</kbd>.",
        "{: .note .info} When you're developing a site, serve it locally before you push.",
        "Rule for this year: no sugar after dinner on weekdays.",
        "J'ai mis les tomates en pleine terre le 6 avril, comme chaque année à cette date.",
        "Production releases go out every Friday between 14:00 and 16:00.",
        "Parking costs $5 on weekdays and $10 at weekends.",
        r"The inverse of an orthogonal matrix $Q$ is equal to its transpose.",
    ],
)
def test_prose_is_evidence(line: str) -> None:
    assert reason(line) is None


def test_tables_without_outer_pipes_and_link_definitions_are_not_sentences() -> None:
    body = (
        "Option | Default | Meaning\n"
        "--- | --- | ---\n"
        "cache | on | keeps wheels\n"
        "\n"
        "[info]: info.md\n"
        "[create a minimal reproduction]: ../guides/creating-a-reproduction.md\n"
        "\n"
        "The cache is shared between projects on one machine.\n"
    )
    assert [s.text for s in split_sentences(body)] == [
        "The cache is shared between projects on one machine."
    ]


def test_inline_markup_is_read_as_nothing() -> None:
    (s,) = split_sentences("{: .note .info} Press <kbd>Enter</kbd> to confirm the change.")
    assert s.text == "Press Enter to confirm the change."


def test_task_items_are_not_claims() -> None:
    body = "- [ ] Renew the passport before the trip to Lisbon.\n- [x] Booked the ferry for June.\n"
    sentences = split_sentences(body)
    assert [evidence_reason(s) for s in sentences] == ["task", "task"]
    assert sentences[0].quote == "Renew the passport before the trip to Lisbon."  # in the note
