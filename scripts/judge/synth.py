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

The group of every pair is its scenario, so a scenario's pairs are all in
train or all in validation.
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
    group = f"synth:{sc.get('id', '')}"
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
