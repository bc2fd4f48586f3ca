"""The judge's hand-written training data: well formed, labelled by role, and apart from
the sample vault, which is the judge's test set. No PyTorch needed."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "judge"))

import synth  # noqa: E402

SCENARIO_FIELDS = ("rules", "breaks", "keeps", "allowed", "related")
FLIP_FIELDS = ("contradicts", "agrees")


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def test_every_scenario_file_is_well_formed() -> None:
    scenarios = synth.load_scenarios()
    ids = [str(sc["id"]) for sc in scenarios]
    assert len(ids) == len(set(ids)), "scenario ids must be unique across files"
    assert {sc["lang"] for sc in scenarios} == {"en", "fr", "it"}
    for sc in scenarios:
        if sc["kind"] in synth.FLIP_KINDS:
            assert str(sc.get("base", "")).strip(), sc["id"]
            for key in FLIP_FIELDS:
                assert synth._list(sc, key), f"{sc['id']} has no {key}"
        elif sc["kind"] == "notes":
            _check_note_pair(sc)
        elif sc["kind"] == "pairs":
            assert not synth.check_group(sc), synth.check_group(sc)[:3]
        else:
            assert sc["kind"] == "scenario", sc["id"]
            for key in SCENARIO_FIELDS:
                assert synth._list(sc, key), f"{sc['id']} has no {key}"


def _check_note_pair(sc: dict[str, object]) -> None:
    """Both notes cut into sentences, and every marked clash or trap found in them once:
    a sentence the splitter cuts differently would silently lose its label."""
    a_lines = synth.note_sentences(sc["note_a"])
    b_lines = synth.note_sentences(sc["note_b"])
    assert len(a_lines) >= 3 and len(b_lines) >= 3, f"{sc['id']}: notes too short"
    rows = synth.notes_pairs(sc, random.Random(0))
    clashes = [r for r in rows if r.label == "contradiction"]
    traps = [r for r in rows if r.source == "synth_notes_trap"]
    assert len(clashes) == len(synth._marked(sc, "clash")), f"{sc['id']}: a clash not found"
    assert len(traps) <= len(synth._marked(sc, "traps")), f"{sc['id']}: a trap matched twice"


def test_note_pairs_label_the_clash_the_traps_and_the_background() -> None:
    group = {
        "id": "en-t-9",
        "kind": "notes",
        "lang": "en",
        "note_a": {
            "title": "No screens after ten",
            "body": "Screens go off at ten on weeknights, phone included.\n\n## Why\n"
            "I sleep badly after scrolling in bed, as [[Sleep log]] shows.\n"
            "- The tablet stays in the kitchen drawer overnight.\n"
            "- Weekends are exempt from the rule entirely.\n",
        },
        "note_b": {
            "title": "2025-02-11",
            "body": "Tuesday. Watched two episodes in bed and closed the laptop at half past "
            "midnight. The kitchen drawer was full of receipts again. On Saturday I watched "
            "films until two in the morning.",
        },
        "clash": [
            {
                "a": "Screens go off at ten on weeknights, phone included.",
                "b": "Watched two episodes in bed and closed the laptop at half past midnight.",
            }
        ],
        "traps": [
            {
                "a": "Weekends are exempt from the rule entirely.",
                "b": "On Saturday I watched films until two in the morning.",
            }
        ],
    }
    rows = synth.notes_pairs(group, random.Random(0))
    got = {(r.a, r.b): (r.label, r.source) for r in rows}
    clash = (
        "Screens go off at ten on weeknights, phone included.",
        "Watched two episodes in bed and closed the laptop at half past midnight.",
    )
    assert got.pop(clash) == ("contradiction", "synth_notes_clash")
    trap = (
        "Weekends are exempt from the rule entirely.",
        "On Saturday I watched films until two in the morning.",
    )
    assert got.pop(trap) == ("not_contradiction", "synth_notes_trap")
    # Every other pair is compatible background; the wikilink reads as its text, "Tuesday."
    # is too short to be evidence, and the note pair is one group (all train or all val).
    assert got and set(got.values()) == {("not_contradiction", "synth_notes")}
    assert any("as Sleep log shows" in a for a, _ in got)
    assert not any(b == "Tuesday." for _, b in got)
    assert {r.group for r in rows} == {"synth:en-t-9"}
    _check_note_pair(group)


def test_language_comes_from_the_file_name_prefix(tmp_path: Path) -> None:
    (tmp_path / "fr-b.json").write_text(
        json.dumps([{"id": "x-1", "kind": "flip", "base": "b", "contradicts": ["c"]}]),
        encoding="utf-8",
    )
    (tmp_path / "it.json").write_text(json.dumps([{"id": "x-2", "rules": ["r"]}]), encoding="utf-8")
    loaded = {sc["id"]: sc for sc in synth.load_scenarios(tmp_path)}
    assert loaded["x-1"]["lang"] == "fr" and loaded["x-1"]["kind"] == "flip"
    assert loaded["x-2"]["lang"] == "it" and loaded["x-2"]["kind"] == "scenario"


def test_flip_roles_become_labels() -> None:
    group = {
        "id": "en-t-1",
        "kind": "flip",
        "lang": "en",
        "base": "The gym pass costs 30 a month.",
        "contradicts": ["The gym pass costs 50 a month."],
        "agrees": ["I pay 30 a month for the gym.", "The gym pass is not more than 30 a month."],
        "neutral": ["The gym opens at six."],
    }
    other = {"id": "en-t-2", "kind": "flip", "lang": "en", "base": "The boiler was serviced."}
    rows = synth.pairs_of(group, [other], random.Random(0))
    got = {(r.b, r.label) for r in rows}
    assert ("The gym pass costs 50 a month.", "contradiction") in got
    assert ("I pay 30 a month for the gym.", "entailment") in got
    assert ("The gym pass is not more than 30 a month.", "entailment") in got
    assert ("The gym opens at six.", "neutral") in got
    assert ("The boiler was serviced.", "neutral") in got  # another group's base: unrelated
    assert all(r.a == group["base"] for r in rows)
    assert {r.group for r in rows} == {"synth:en-t-1"}  # one group: all train or all val


def test_indirect_groups_label_agreeing_lines_as_compatible_not_entailed() -> None:
    """An ``indirect`` group's agreeing lines may only be consistent with the base, so
    they train as "not a contradiction" rather than as entailment, under their own source."""
    group = {
        "id": "en-t-4",
        "kind": "indirect",
        "lang": "en",
        "base": "Every purchase over 200 euros needs a second signature, no exceptions.",
        "contradicts": ["Marta bought the 450-euro printer on her own card and signed alone."],
        "agrees": ["Purchases under 200 euros need one signature."],
        "neutral": ["The signature forms are in the blue folder."],
    }
    other = {"id": "en-t-5", "kind": "flip", "lang": "en", "base": "The boiler was serviced."}
    rows = synth.pairs_of(group, [other], random.Random(0))
    got = {(r.b, r.label, r.source) for r in rows}
    assert (group["contradicts"][0], "contradiction", "synth_indirect") in got
    assert (group["agrees"][0], "not_contradiction", "synth_indirect") in got
    assert (group["neutral"][0], "neutral", "synth_indirect") in got
    assert ("The boiler was serviced.", "neutral", "synth_unrelated") in got
    assert all(r.label != "entailment" for r in rows)


def test_a_scenario_without_a_base_or_roles_gives_no_pairs() -> None:
    empty = {"id": "en-t-3", "kind": "flip", "lang": "en", "base": "  "}
    assert synth.pairs_of(empty, [], random.Random(0)) == []


def test_no_training_sentence_comes_from_the_sample_vault() -> None:
    """The sample vault's contradictions are the judge's test set: none of its quotes, and
    no sentence of its notes, may appear in the training scenarios."""
    expected = json.loads((ROOT / "tests/data/sample_vault_expected.json").read_text("utf-8"))
    quotes = {_words(c[key]) for c in expected["contradictions"] for key in ("quote_a", "quote_b")}
    vault_sentences: set[str] = set()
    for note in (ROOT / "resources/sample-vault").rglob("*.md"):
        text = note.read_text(encoding="utf-8", errors="replace")
        for part in re.split(r"(?<=[.!?])\s+|\n+", text):
            words = _words(part)
            if len(words.split()) >= 6:
                vault_sentences.add(words)
    assert quotes, "the expected file lists the sample vault's contradictions"
    leaked: list[str] = []
    for sc in synth.load_scenarios():
        for key in (*SCENARIO_FIELDS, "base", *FLIP_FIELDS, "neutral"):
            values = [sc[key]] if key == "base" and key in sc else synth._list(sc, key)
            for text in values:
                words = _words(str(text))
                if words in quotes or words in vault_sentences:
                    leaked.append(f"{sc['id']}: {text}")
        if sc["kind"] == "pairs":
            for item in sc["pairs"]:
                for text in (item["a"], item["b"]):
                    if _words(text) in quotes or _words(text) in vault_sentences:
                        leaked.append(f"{sc['id']}: {text}")
        if sc["kind"] == "notes":
            for text in synth.note_sentences(sc["note_a"]) + synth.note_sentences(sc["note_b"]):
                if _words(text) in quotes or _words(text) in vault_sentences:
                    leaked.append(f"{sc['id']}: {text}")
    assert not leaked, leaked[:5]


def test_each_language_has_minimal_pairs_of_both_polarities() -> None:
    rows = [r for r in synth.generate() if r.source == "synth_flip"]
    for lang in ("en", "fr", "it"):
        labels = {r.label for r in rows if r.group.split(":")[1].startswith(lang)}
        assert {"contradiction", "entailment"} <= labels, lang


def _bag_of_words(texts: list[str]) -> list[list[float]]:
    """A deterministic stand-in embedder: normalised word counts over a shared vocabulary."""
    vocab = sorted({w for t in texts for w in _words(t).split()})
    out = []
    for t in texts:
        words = _words(t).split()
        v = [float(words.count(w)) for w in vocab]
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        out.append([x / norm for x in v])
    return out


def test_fever_near_pairs_true_claims_on_one_subject_only() -> None:
    import prepare

    claims = [
        ("Brie Larson is an actress.", True),
        ("Brie Larson is a singer.", True),
        ("Brie Larson is a dentist.", False),  # false: never paired
        ("Brie Larson is an actress.", True),  # a duplicate claim counts once
        ("Granite is an igneous rock found in Brazil.", True),
        ("The Nile flows north.", True),
    ]
    rows = prepare.fever_near(claims, _bag_of_words, per_claim=3, band=(0.4, 0.95))
    pairs = {frozenset((r.a, r.b)) for r in rows}
    assert pairs == {frozenset(("Brie Larson is an actress.", "Brie Larson is a singer."))}
    (row,) = rows
    assert row.label == prepare.NOT_CONTRADICTION and row.source == "fever_near"
    # Restatements above the band are left out (they teach nothing about false alarms).
    assert prepare.fever_near(claims, _bag_of_words, band=(0.4, 0.5)) == []
    assert prepare.fever_near([("One claim.", True)], _bag_of_words) == []


def test_prepare_rejects_an_unknown_part(tmp_path: Path, capsys) -> None:
    import prepare

    try:
        prepare.main(["--out", str(tmp_path / "x.jsonl"), "--parts", "synth,fevr"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("an unknown part must be refused")
    assert "unknown part(s): fevr" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def test_vitaminc_revisions_pair_the_evidence_a_claim_tells_apart() -> None:
    import prepare
    from bigbench_data import Example

    g = "vitaminc:the song sold fewer than two million copies ."
    rows = [
        Example(
            "It sold a million copies.",
            "The song sold fewer than two million copies .",
            "entailment",
            "vitaminc",
            g,
        ),
        Example(
            "It sold four million copies.",
            "The song sold fewer than two million copies .",
            "contradiction",
            "vitaminc",
            g,
        ),
        Example(
            "It sold many copies.",
            "The song sold fewer than two million copies .",
            "neutral",
            "vitaminc",
            g,
        ),
        # A claim with supporting evidence only gives no pair.
        Example(
            "Paris is in France.", "Paris is French .", "entailment", "vitaminc", "vitaminc:paris"
        ),
        # Other sources are not VitaminC revisions, whatever their group.
        Example("a b c", "d e f", "contradiction", "synth", g),
    ]
    out = prepare.vitaminc_revisions(rows)
    assert [(r.a, r.b, r.label, r.group) for r in out] == [
        ("It sold a million copies.", "It sold four million copies.", "contradiction", g)
    ]
    assert out[0].source == "vitaminc_revision"


def test_banded_pairs_keep_to_the_band_the_cap_and_the_filter() -> None:
    import numpy as np
    import prepare

    # Unit vectors at known angles: cos(v0, v1) = 0.5, cos(v0, v2) = 0.0, cos(v1, v2) ≈ 0.87.
    v = np.array([[1.0, 0.0], [0.5, 0.866], [0.0, 1.0]], dtype=np.float32)
    rng = random.Random(0)
    assert prepare.banded_pairs(v, (0.3, 0.6), 2, rng) == [(0, 1)]
    assert prepare.banded_pairs(v, (0.3, 0.9), 1, rng) == [(0, 1), (1, 2)]
    assert prepare.banded_pairs(v, (0.3, 0.9), 2, rng, lambda i, j: 2 not in (i, j)) == [(0, 1)]


def test_loose_pairs_use_training_scenarios_only_and_never_one_scenario_twice() -> None:
    import prepare

    scenarios = [
        s for s in synth.load_scenarios() if s["kind"] == "scenario" and s["lang"] == "en"
    ][:40]
    rows = prepare.loose_pairs(
        [("Brie Larson is an actress.", True), ("Brie Larson was born in 1989.", True)],
        scenarios,
        _bag_of_words,
        random.Random(1),
        band=(0.1, 0.6),
    )
    by_text: dict[str, set[str]] = {}
    for sc in scenarios:
        for key in SCENARIO_FIELDS:
            for t in synth._list(sc, key):
                by_text.setdefault(t, set()).add(str(sc["id"]))
    held_out = {
        str(sc["id"]) for sc in scenarios if prepare.split_of(f"synth:{sc['id']}", 0.2) == "val"
    }
    synth_rows = [r for r in rows if r.source == "synth_loose"]
    assert synth_rows and all(r.label == "neutral" for r in synth_rows)
    for r in synth_rows:
        ids_a, ids_b = by_text.get(r.a, set()), by_text.get(r.b, set())
        assert ids_a and ids_b and not (ids_a & held_out) and not (ids_b & held_out)
        assert ids_a != ids_b
    fever = [r for r in rows if r.source == "fever_loose"]
    assert [(r.label, {r.a, r.b}) for r in fever] == [
        (prepare.NOT_CONTRADICTION, {"Brie Larson is an actress.", "Brie Larson was born in 1989."})
    ]


def test_shipped_thresholds_follow_the_false_alarm_bound_not_a_precision_that_hides_all() -> None:
    import calibrate

    # Held-out precision reached 0.9 only at 0.939 (stage 8 at step 500: 10 of 184 shown):
    # the shown threshold is the label-free bound, and 0.939 becomes "high".
    assert calibrate.shipped_thresholds(0.939, True, 0.8, 0.86) == (0.8, 0.939)
    # Precision never reached: its best-F0.5 point says nothing about "high".
    assert calibrate.shipped_thresholds(0.31, False, 0.8, 0.86) == (0.8, 0.86)
    # "high" always lies above the shown threshold.
    shown, high = calibrate.shipped_thresholds(0.5, True, 0.8, 0.8)
    assert shown == 0.8 and high > shown


def test_validation_of_a_source_with_clashes_and_compatible_lines() -> None:
    """``synth_indirect`` mixes 3-way labels with "not contradiction" rows: each kind is
    measured on its own rows, and the two are compared by P(contradiction)."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "scripts" / "judge"))
    import export

    rows = [
        {"label": "contradiction"},
        {"label": "entailment"},
        {"label": "neutral"},
        {"label": "not_contradiction"},
        {"label": "not_contradiction"},
    ]
    probs = np.array(
        [[0.5, 0.4, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1], [0.6, 0.2, 0.2]]
    )
    got = export.metrics(probs, rows)
    assert got["accuracy"] == 1.0  # the three labelled rows only
    assert got["false_contradiction"] == 0.5  # one of the two compatible lines read as a clash
    assert got["auc_vs_compatible"] == 0.5  # the clash (0.5) sits between them (0.2, 0.6)


def test_typed_pairs_become_labels_and_are_held_out_by_topic() -> None:
    group = {
        "id": "en-t-pairs-1",
        "kind": "pairs",
        "lang": "en",
        "topic": "bike commute",
        "pairs": [
            {
                "a": "I ride at least half an hour a day.",
                "b": "Rode 45 minutes today.",
                "label": "compatible",
                "type": "compatible_numbers",
            },
            {
                "a": "I cycle every weekday.",
                "b": "Took the bus all week.",
                "label": "contradiction",
                "type": "quantifier",
            },
            {
                "a": "I cycle to work.",
                "b": "My commute is by bike.",
                "label": "entailment",
                "type": "paraphrase",
            },
        ],
    }
    assert synth.check_group(group) == []
    rows = synth.pairs_of(group, [], random.Random(0))
    assert [(r.label, r.source) for r in rows] == [
        ("not_contradiction", "synth_pairs_hard"),
        ("contradiction", "synth_pairs"),
        ("entailment", "synth_pairs"),
    ]
    # The split follows the topic: another group on the same topic falls on the same side.
    twin = dict(group, id="fr-t-pairs-9")
    assert {r.group for r in rows} == {"topic:bike commute"}
    assert synth.heldout(group) == synth.heldout(twin)


def test_a_typed_pair_whose_label_contradicts_its_type_is_refused() -> None:
    bad = {
        "id": "en-t-pairs-2",
        "kind": "pairs",
        "topic": "x",
        "pairs": [{"a": "A is on.", "b": "A is off.", "label": "compatible", "type": "negation"}],
    }
    assert synth.check_group(bad) == ["en-t-pairs-2[0]: type negation needs label contradiction"]
