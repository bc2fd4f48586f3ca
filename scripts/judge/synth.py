"""Note-like training pairs from the hand-written scenarios in ``scenarios/*.json``.

VitaminC teaches the judge what a refuted fact looks like in Wikipedia prose;
people's notes contradict differently: a rule and a journal entry that breaks
it, "always/never" against what was done, two days or amounts for one plan, a
decision and a later note that goes the other way, two opposed stances. Each
scenario (English, French, Italian; written for this purpose, none taken from
the sample vault, whose topics were kept out so it stays a fair test) lists
sentences by role, and the roles decide the labels:

========================  ==============
rule × break              contradiction
rule × rule (paraphrase)  entailment
rule × keep               entailment
rule × allowed            neutral  (an exception the rule names, another scope)
rule × related, others    neutral  (same subject, no conflict)
sentence × other scenario neutral  (same language, unrelated)
sentence × generic line   neutral  (short generic lines are not evidence)
========================  ==============

A second kind of object, ``"kind": "flip"``, is a group of minimal pairs that
teaches polarity rather than subject: one ``base`` sentence, ``contradicts``
written as close to it in wording as possible (a flipped negation, an antonym,
another number, day or person for the same thing), ``agrees`` just as close
(a paraphrase, a consistent instance, a negation that agrees) and ``neutral``
(another aspect of the same thing):

========================  ==============
base × contradicts        contradiction
base × agrees             entailment
base × neutral            neutral
========================  ==============

A third kind, ``"kind": "indirect"``, has the same fields but turns the
lexical overlap around, because the judge learnt to read overlap as agreement:
its ``contradicts`` are mostly worded apart from the base (another note's
words, a consequence, a counterexample to "all"/"never", a time outside a
window) and its ``agrees`` mostly reuse the base's words without clashing (an
exception the rule allows, another scope, an outcome that fits). "Agrees"
there means *compatible*, not always entailed, so those pairs are labelled
``not_contradiction`` (trained as P(entailment) + P(neutral)):

========================  ==================
base × contradicts        contradiction
base × agrees             not_contradiction
base × neutral            neutral
========================  ==================

A fourth kind, ``"kind": "notes"``, is a pair of whole notes on one subject
(``note_a`` and ``note_b``, each a title and a Markdown body) as a vault has
them, because a scan judges every sentence pair of two related notes and most
of those are compatible: the judge must leave that background alone and still
catch the one pair that clashes. The notes are cut into sentences by the app's
own splitter; ``clash`` names the sentence pairs that contradict (none for a
compatible pair), ``traps`` the ones that look like a clash and are not (an
exception the rule names, another scope, a superseded decision that says so):

=================================  ==================
a clash                            contradiction (source ``synth_notes_clash``)
a trap                             not_contradiction (source ``synth_notes_trap``)
any other cross pair (at most 12)  not_contradiction
=================================  ==================

The other cross pairs kept are the six that share the most content words (the
ones a lexical shortcut gets wrong) and six drawn at random. The three sources
are apart so that training can weigh the one clash of a note pair against its
dozen compatible pairs.

A fifth kind, ``"kind": "pairs"``, is a group of typed sentence pairs on one
``topic``, written as people write notes (personal life, work decisions, project
docs, how-to pages), half of them hard negatives. Each pair names its ``label``
and its ``type`` (:data:`PAIR_TYPES`): a contradiction (a value, a negation, a
quantifier against an instance, one step of inference, a reversal, opposed
stances) or something that only looks like one (the same template about two
subjects, compatible numbers or times, a rule and the exception it allows, a plan
and its on-time outcome, a near-duplicate, another scope). ``title_a`` /
``title_b`` optionally name each sentence's note, which the alignment rules read:

==============================  ==================
``contradiction``               contradiction (source ``synth_pairs``)
``compatible``                  not_contradiction (source ``synth_pairs_hard`` for a
                                hard-negative type, else ``synth_pairs``)
``entailment``                  entailment
``neutral``                     neutral
==============================  ==================

The group of every pair is its scenario, so a scenario's pairs are all in
train or all in validation; groups with a ``topic`` are held out by topic
(:func:`group_of`).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from bigbench_data import Example

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from desktop.flows.sentences import (
    content_words,
    is_evidence,
    plain,
    split_sentences,
)

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
#: Objects made of one base sentence and its variants, and the source of their pairs.
FLIP_KINDS = {"flip": "synth_flip", "indirect": "synth_indirect"}

#: Short generic lines of the kind notes are full of. Paired with anything they are
#: neutral; the first judge flagged them as contradictions most of the time.
GENERIC = {
    "en": [
        "The point is contact.",
        "More on this later.",
        "That is the whole idea.",
        "It worked, mostly.",
        "See the list below.",
        "Not sure yet.",
        "This matters.",
        "Keep it simple.",
        "We will see.",
        "That was the plan.",
        "Worth trying again.",
        "Everything else follows from this.",
        "It depends.",
        "Good enough for now.",
        "Nothing changed.",
        "Same as last time.",
        "This is the hard part.",
        "Why not?",
    ],
    "fr": [
        "C'est tout l'intérêt.",
        "On verra bien.",
        "Plus de détails plus tard.",
        "Rien n'a changé.",
        "C'est la partie difficile.",
        "Ça dépend.",
        "Pas encore sûr.",
        "Voir la liste ci-dessous.",
        "Ça a marché, à peu près.",
        "Restons simples.",
        "Comme la dernière fois.",
        "À revoir.",
    ],
    "it": [
        "È tutto qui.",
        "Vedremo.",
        "Più dettagli dopo.",
        "Non è cambiato niente.",
        "Questa è la parte difficile.",
        "Dipende.",
        "Non ne sono sicuro.",
        "Vedi la lista sotto.",
        "Ha funzionato, più o meno.",
        "Teniamola semplice.",
        "Come l'ultima volta.",
        "Da rivedere.",
    ],
}


def load_scenarios(folder: Path = SCENARIOS) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for path in sorted(folder.glob("*.json")):
        lang = path.stem.split("-")[0]  # en.json, en-b.json: English
        for sc in json.loads(path.read_text(encoding="utf-8")):
            sc = dict(sc)
            sc.setdefault("lang", lang)
            sc.setdefault("kind", "scenario")
            out.append(sc)
    return out


def _list(sc: dict[str, object], key: str) -> list[str]:
    value = sc.get(key) or []
    return [str(v) for v in value] if isinstance(value, list) else []


def pairs_of(
    sc: dict[str, object],
    others: list[dict[str, object]],
    rng: random.Random,
) -> list[Example]:
    sid = str(sc.get("id", ""))
    group = f"synth:{sid}"
    if sc.get("kind") in FLIP_KINDS:
        return flip_pairs(sc, others, rng)
    if sc.get("kind") == "notes":
        return notes_pairs(sc, rng)
    if sc.get("kind") == "pairs":
        return typed_pairs(sc)
    rules, breaks = _list(sc, "rules"), _list(sc, "breaks")
    keeps, allowed, related = _list(sc, "keeps"), _list(sc, "allowed"), _list(sc, "related")
    against, ok = _list(sc, "actions_against"), _list(sc, "actions_ok")
    out: list[Example] = []

    def add(a: str, b: str, label: str, source: str = "synth") -> None:
        out.append(Example(a, b, label, source, group=group))

    for r in rules:
        for x in breaks:
            add(r, x, "contradiction")
        for x in keeps:
            add(r, x, "entailment")
        for x in allowed:
            add(r, x, "neutral")
        for x in related:
            add(r, x, "neutral")
        for x in against:
            add(r, x, "contradiction", "synth_action")
        for x in ok:
            add(r, x, "neutral", "synth_action")
    for i, r in enumerate(rules):
        for r2 in rules[i + 1 :]:
            add(r, r2, "entailment")
    # Breaks and keeps against the scenario's other sentences: same subject, no direct
    # conflict (a journal entry that breaks a rule does not contradict a related fact).
    for x in breaks:
        for y in related:
            add(x, y, "neutral")
    for x in keeps:
        for y in related:
            add(x, y, "neutral")
    for x in allowed:
        for y in keeps:
            add(x, y, "neutral")
    # Unrelated sentences from other scenarios of the same language, and generic lines.
    pool = [
        s
        for o in others
        for key in ("rules", "breaks", "related", "contradicts")
        for s in _list(o, key)
    ]
    mine = rules + breaks + keeps
    for s in mine:
        if pool:
            add(s, rng.choice(pool), "neutral", "synth_unrelated")
        generic = GENERIC.get(str(sc.get("lang")), GENERIC["en"])
        if rng.random() < 0.5:
            add(s, rng.choice(generic), "neutral", "synth_generic")
    return out


def flip_pairs(
    sc: dict[str, object],
    others: list[dict[str, object]],
    rng: random.Random,
) -> list[Example]:
    group = f"synth:{sc.get('id', '')}"
    base = str(sc.get("base", "")).strip()
    if not base:
        return []
    kind = str(sc.get("kind"))
    agrees = "not_contradiction" if kind == "indirect" else "entailment"
    roles = {"contradicts": "contradiction", "agrees": agrees, "neutral": "neutral"}
    source = FLIP_KINDS[kind]
    out = [
        Example(base, x, label, source, group=group)
        for role, label in roles.items()
        for x in _list(sc, role)
    ]
    pool = [str(o["base"]) for o in others if o.get("kind") in FLIP_KINDS and o.get("base")]
    if pool:
        out.append(Example(base, rng.choice(pool), "neutral", "synth_unrelated", group=group))
    return out


#: Cross pairs of a note pair kept besides its clashes and traps: the most alike, then random.
NOTES_ALIKE, NOTES_RANDOM = 6, 6


def note_sentences(note: object) -> list[str]:
    """The evidence sentences of a ``{"title", "body"}`` note, as the scan cuts them."""
    body = str(note.get("body", "")) if isinstance(note, dict) else ""
    return [s.text for s in split_sentences(body) if is_evidence(s)]


def _marked(sc: dict[str, object], key: str) -> list[tuple[str, str]]:
    value = sc.get(key) or []
    items = value if isinstance(value, list) else []
    return [
        (plain(str(x.get("a", ""))).casefold(), plain(str(x.get("b", ""))).casefold())
        for x in items
        if isinstance(x, dict)
    ]


def _is(sentence: str, marked: str) -> bool:
    s = sentence.casefold()
    return bool(marked) and (s == marked or marked in s or (len(s) > 20 and s in marked))


def notes_pairs(sc: dict[str, object], rng: random.Random) -> list[Example]:
    group = group_of(sc)
    a_lines, b_lines = note_sentences(sc.get("note_a")), note_sentences(sc.get("note_b"))
    clashes, traps = _marked(sc, "clash"), _marked(sc, "traps")
    out: list[Example] = []
    rest: list[tuple[float, str, str]] = []
    for a in a_lines:
        for b in b_lines:
            if any(_is(a, x) and _is(b, y) for x, y in clashes):
                out.append(Example(a, b, "contradiction", "synth_notes_clash", group=group))
            elif any(_is(a, x) and _is(b, y) for x, y in traps):
                out.append(Example(a, b, "not_contradiction", "synth_notes_trap", group=group))
            else:
                wa, wb = content_words(a), content_words(b)
                rest.append((len(wa & wb) / max(1, len(wa | wb)), a, b))
    rest.sort(key=lambda r: -r[0])
    kept = rest[:NOTES_ALIKE]
    others = rest[NOTES_ALIKE:]
    kept += rng.sample(others, min(NOTES_RANDOM, len(others)))
    out += [Example(a, b, "not_contradiction", "synth_notes", group=group) for _, a, b in kept]
    return out


def generate(
    seed: int = 0,
    scenarios: int | None = None,
    folder: Path = SCENARIOS,
) -> list[Example]:
    """Every scenario's pairs (the first ``scenarios`` of each language if given)."""
    rng = random.Random(seed)
    all_sc = load_scenarios(folder)
    by_lang: dict[str, list[dict[str, object]]] = {}
    for sc in all_sc:
        by_lang.setdefault(str(sc["lang"]), []).append(sc)
    out: list[Example] = []
    for items in by_lang.values():
        chosen = items[:scenarios] if scenarios else items
        for sc in chosen:
            out.extend(pairs_of(sc, [o for o in items if o is not sc], rng))
    return out


#: The types a ``"kind": "pairs"`` pair may have, and the label each implies.
CONTRADICTION_TYPES = frozenset(
    {
        "direct_value",  # another number, day, time, amount, person for the same thing
        "negation",  # the same claim negated
        "quantifier",  # always / never / every / only against an instance that breaks it
        "one_step_inference",  # needs one step: "every Friday 14-16" / "nothing after Thursday"
        "reversal",  # a decision and a later note that goes the other way without saying so
        "opposed_stance",  # two opinions that cannot both be held
    }
)
HARD_NEGATIVE_TYPES = frozenset(
    {
        "template_swap",  # one sentence frame, each about its own note's subject
        "compatible_numbers",  # numbers, times, amounts, durations that agree
        "rule_exception",  # a rule and an exception the rule itself allows
        "plan_outcome",  # a plan and an outcome that kept to it
        "near_duplicate",  # the same fact worded twice
        "other_scope",  # the same words about another time, place, person or case
        "elaboration",  # one adds a detail the other leaves open
    }
)
AGREEMENT_TYPES = frozenset({"paraphrase"})
PAIR_TYPES = CONTRADICTION_TYPES | HARD_NEGATIVE_TYPES | AGREEMENT_TYPES | {"unrelated"}
PAIR_LABELS = {
    "contradiction": "contradiction",
    "compatible": "not_contradiction",
    "entailment": "entailment",
    "neutral": "neutral",
}


def typed_pairs(sc: dict[str, object]) -> list[Example]:
    group = group_of(sc)
    items = sc.get("pairs") or []
    out: list[Example] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        a, b = str(item.get("a", "")).strip(), str(item.get("b", "")).strip()
        label = PAIR_LABELS.get(str(item.get("label", "")))
        if not a or not b or label is None:
            continue
        kind = str(item.get("type", ""))
        source = "synth_pairs_hard" if kind in HARD_NEGATIVE_TYPES else "synth_pairs"
        out.append(Example(a, b, label, source, group=group))
    return out


def group_of(sc: dict[str, object]) -> str:
    """The split group of a scenario's pairs: its ``topic`` where it has one (every group on
    one topic, in any file, falls on the same side of the split), else its id."""
    topic = " ".join(str(sc.get("topic", "")).split()).casefold()
    return f"topic:{topic}" if topic else f"synth:{sc.get('id', '')}"


def heldout(sc: dict[str, object], share: float = 0.2) -> bool:
    """Whether a scenario is held out (validation), as ``prepare.py`` splits its pairs."""
    import hashlib

    digest = hashlib.sha256(group_of(sc).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) / 0xFFFFFFFF < share


def check_group(sc: dict[str, object]) -> list[str]:
    """What is wrong with one ``"kind": "pairs"`` or ``"kind": "notes"`` group (empty: fine)."""
    errors: list[str] = []
    sid = str(sc.get("id", "?"))
    if sc.get("kind") == "pairs":
        if not str(sc.get("topic", "")).strip():
            errors.append(f"{sid}: no topic")
        items = sc.get("pairs")
        if not isinstance(items, list) or not items:
            return [*errors, f"{sid}: no pairs"]
        for n, item in enumerate(items):
            if not isinstance(item, dict):
                errors.append(f"{sid}[{n}]: not an object")
                continue
            label, kind = str(item.get("label", "")), str(item.get("type", ""))
            if not str(item.get("a", "")).strip() or not str(item.get("b", "")).strip():
                errors.append(f"{sid}[{n}]: empty a or b")
            if label not in PAIR_LABELS:
                errors.append(f"{sid}[{n}]: label {label!r} not in {sorted(PAIR_LABELS)}")
            if kind not in PAIR_TYPES:
                errors.append(f"{sid}[{n}]: type {kind!r} unknown")
            elif kind in CONTRADICTION_TYPES and label != "contradiction":
                errors.append(f"{sid}[{n}]: type {kind} needs label contradiction")
            elif kind in HARD_NEGATIVE_TYPES and label != "compatible":
                errors.append(f"{sid}[{n}]: type {kind} needs label compatible")
            elif kind == "paraphrase" and label != "entailment":
                errors.append(f"{sid}[{n}]: type paraphrase needs label entailment")
            if str(item.get("a", "")).strip() == str(item.get("b", "")).strip():
                errors.append(f"{sid}[{n}]: a and b are the same text")
    elif sc.get("kind") == "notes":
        a_lines, b_lines = note_sentences(sc.get("note_a")), note_sentences(sc.get("note_b"))
        if len(a_lines) < 3 or len(b_lines) < 3:
            errors.append(f"{sid}: a note has fewer than 3 evidence sentences")
        for key in ("clash", "traps"):
            for x, y in _marked(sc, key):
                if not any(_is(a, x) for a in a_lines) or not any(_is(b, y) for b in b_lines):
                    errors.append(f"{sid}: a {key} sentence is not found as a sentence: {x!r}")
    return errors


def main(argv: list[str] | None = None) -> int:
    """``synth.py --check FILE…``: validate data files and count their labelled pairs."""
    import argparse
    from collections import Counter

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--check", nargs="+", type=Path, required=True)
    args = ap.parse_args(argv)
    rng = random.Random(0)
    errors: list[str] = []
    labels: Counter[str] = Counter()
    types: Counter[str] = Counter()
    checked = {p.resolve() for p in args.check}
    elsewhere = {
        str(sc.get("id"))
        for f in sorted(SCENARIOS.glob("*.json"))
        if f.resolve() not in checked
        for sc in json.loads(f.read_text(encoding="utf-8"))
    }
    for path in args.check:
        try:
            groups = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            errors.append(f"{path}: {exc}")
            continue
        for sc in groups:
            sc = dict(sc)
            sc.setdefault("lang", path.stem.split("-")[0])
            errors += check_group(sc)
            if sc.get("kind") == "pairs":
                types.update(str(i.get("type")) for i in sc.get("pairs", []) if isinstance(i, dict))
            for ex in pairs_of(sc, [], rng):
                labels[ex.label] += 1
        seen = [str(sc.get("id")) for sc in groups]
        if len(seen) != len(set(seen)):
            errors.append(f"{path}: duplicate ids within the file")
        errors += [f"{path}: id {i} is used in another file" for i in set(seen) & elsewhere]
    summary = {"pairs": sum(labels.values()), "labels": labels, "types": types}
    print(json.dumps(summary, indent=1))
    for e in errors[:50]:
        print("ERROR", e)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
