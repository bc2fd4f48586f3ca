"""Note pairs judged sentence by sentence: the gate, the budget, what is left out, Stop."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from desktop.flows.judging import JudgingSettings, NoteJudge
from desktop.vault.index import VaultIndex
from desktop.vault.sentence_vectors import SentenceVectorCache
from desktop.vault.vectors import EmbeddingModel
from inference.base import StopFlag
from inference.judge import Thresholds
from tests.fakes import ScriptedJudge
from tests.test_index import BagOfWords

RULE = "Most of my weekly mileage should be easy enough to hold a conversation."
BREAK = "Every run should leave me out of breath at the end, or it was wasted."
A = f"# Easy\n\n{RULE} The point is contact. Easy running builds the aerobic base slowly.\n"
B = f"# Hard\n\n{BREAK} Tempo runs on Tuesdays build the aerobic base quickly.\n"
C = "# Bread\n\nSourdough needs a warm kitchen and a patient baker.\n"


class Counting(BagOfWords):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def __call__(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return super().__call__(texts)


def judge(**t: float) -> ScriptedJudge:
    j = ScriptedJudge(contradictions=[(RULE, BREAK)])
    j.thresholds = Thresholds(min_cosine=t.get("min_cosine", 0.0))
    return j


def model(embed: BagOfWords | None = None) -> EmbeddingModel:
    return EmbeddingModel("bag-of-words", 64, embed or BagOfWords())


def test_the_contradicting_sentences_are_found_and_generic_lines_skipped() -> None:
    j = judge()
    nj = NoteJudge(j, model())
    nj.prepare({"a": A, "b": B, "c": C})
    ab, ac = nj.judge_pairs([("a", "b"), ("a", "c")])
    assert ab.best is not None and (ab.best.a.text, ab.best.b.text) == (RULE, BREAK)
    assert nj.shown(ab) and ab.contradiction > 0.9 and nj.confidence(ab.contradiction) == "high"
    assert not nj.shown(ac)
    assert all("The point is contact." not in a + b for a, b in j.calls)


def test_the_subject_gate_keeps_unrelated_sentences_from_the_judge() -> None:
    j = judge(min_cosine=0.99)
    nj = NoteJudge(j, model())
    nj.prepare({"a": A, "c": C})
    (verdict,) = nj.judge_pairs([("a", "c")])
    assert verdict.best is None and verdict.reason == "no two sentences share a subject"
    assert j.calls == []


def test_budget_per_note_pair_and_what_is_left_out_are_counted() -> None:
    nj = NoteJudge(judge(), model(), settings=JudgingSettings(pairs_per_note_pair=1))
    nj.prepare({"a": A, "b": B})
    (verdict,) = nj.judge_pairs([("a", "b")])
    assert verdict.judged == 1 and verdict.over_budget == 3  # 2 × 2 evidence sentences
    assert nj.stats.sentence_pairs_over_budget == 3


def test_long_notes_are_cut_and_reported() -> None:
    long = " ".join(f"Line number {i} talks about running shoes today." for i in range(100))
    nj = NoteJudge(judge(), model(), settings=JudgingSettings(max_sentences=10))
    nj.prepare({"long": long, "b": B})
    assert len(nj.sentences_of("long").sentences) == 10  # type: ignore[union-attr]
    assert nj.stats.sentences_cut == 90


def test_notes_without_evidence_are_reported_not_judged() -> None:
    nj = NoteJudge(judge(), model())
    nj.prepare({"empty": "", "code": "```\nx = 1\n```\n", "b": B})
    verdicts = nj.judge_pairs([("empty", "b"), ("code", "b")])
    assert [v.reason for v in verdicts] == ["no sentence with enough content to compare"] * 2
    assert sorted(nj.stats.notes_without_evidence) == ["code", "empty"]


def test_stop_between_judge_calls() -> None:
    stop = StopFlag()
    j = judge()
    original = j.score

    def then_stop(pairs):  # type: ignore[no-untyped-def]
        stop.set()
        return original(pairs)

    j.score = then_stop  # type: ignore[method-assign]
    nj = NoteJudge(j, model(), settings=JudgingSettings(batch=1))
    nj.prepare({"a": A, "b": B})
    (verdict,) = nj.judge_pairs([("a", "b")], stop=stop)
    assert verdict.judged == 1 and len(j.calls) == 1


def test_sentence_vectors_are_cached_in_the_index(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text(A)
    VaultIndex(root).close()  # creates the database
    first = Counting()
    cache = SentenceVectorCache(root)
    nj = NoteJudge(judge(), model(first), cache=cache)
    nj.prepare({"a": A, "b": B})
    assert len(first.texts) == 4  # the evidence sentences of both notes
    cache.close()
    again = Counting()
    cache = SentenceVectorCache(root)
    nj = NoteJudge(judge(), model(again), cache=cache)
    nj.prepare({"a": A, "b": B, "c": C})
    assert again.texts == ["Sourdough needs a warm kitchen and a patient baker."]
    vec = nj.sentences_of("a").vectors  # type: ignore[union-attr]
    assert vec.shape == (2, 64) and np.allclose(np.linalg.norm(vec, axis=1), 1.0, atol=1e-5)
    cache.close()


def _always_contradicts() -> ScriptedJudge:
    """A judge that reads every pair as a clash: only what NoteJudge sets aside is safe."""
    j = ScriptedJudge(lambda a, b: (0.97, 0.01, 0.02))
    j.thresholds = Thresholds(min_cosine=0.0, contradiction=0.7)
    return j


def test_a_template_about_each_note_s_own_subject_never_reaches_the_judge() -> None:
    j = _always_contradicts()
    nj = NoteJudge(j, model())
    nj.prepare(
        {
            "Import/Import from Notion.md": "Import from Notion converts your Notion export "
            "into Markdown files, one per page.",
            "Import/Import from Evernote.md": "Import from Evernote converts your Evernote "
            "export into Markdown files, one per page.",
        }
    )
    (v,) = nj.judge_pairs([("Import/Import from Notion.md", "Import/Import from Evernote.md")])
    assert v.best is None and not nj.shown(v) and not j.calls
    assert v.set_aside == {"each about its own subject": 1}
    assert v.reason == "every sentence pair agrees or names its own subject"


def test_sentences_in_two_languages_never_reach_the_judge() -> None:
    j = _always_contradicts()
    nj = NoteJudge(j, model())
    garden = "Ensuite, paillage épais sur toute la planche, avec la tonte de gazon."
    bread = "Anche questa settimana il pane del sabato l'ho fatto con il lievito di birra."
    rule = "Le pain se fait avec du levain, jamais avec de la levure."
    nj.prepare({"jardin.md": garden, "pane.md": bread, "pain.md": rule})
    apart, same = nj.judge_pairs([("jardin.md", "pane.md"), ("jardin.md", "pain.md")])
    assert apart.best is None and apart.set_aside == {"written in different languages": 1}
    assert (garden, bread) not in j.calls and (bread, garden) not in j.calls
    # Two French notes are judged as any two notes are.
    assert same.best is not None and not same.set_aside


def test_values_that_agree_as_numbers_are_set_aside_and_those_that_clash_are_judged() -> None:
    j = _always_contradicts()
    nj = NoteJudge(j, model())
    nj.prepare(
        {
            "rule.md": "I ride at least 30 minutes every day, whatever the weather.",
            "kept.md": "I ride 45 minutes every day, whatever the weather.",
            "broke.md": "I ride 10 minutes every day, whatever the weather.",
        }
    )
    kept, broke = nj.judge_pairs([("rule.md", "kept.md"), ("rule.md", "broke.md")])
    # 45 minutes is at least 30 …
    assert kept.best is None and kept.set_aside == {"values agree": 1}
    # … 10 is not: the pair goes to the judge, and its alignment travels with it.
    assert broke.best is not None and broke.best.alignment is not None
    assert broke.best.alignment.kind == "value" and broke.best.alignment.values == "conflict"
    assert broke.features["values_conflict"] == 1.0


def test_boilerplate_repeated_across_the_vault_is_not_evidence() -> None:
    from desktop.flows.judging import frame_counts

    notes = {
        f"Plugins/{name}.md": f"The {name} plugin is maintained by the community. "
        f"{name} stores its settings in the vault folder under a hidden directory."
        for name in ("Calendar", "Kanban", "Dataview", "Outliner")
    }
    frames = frame_counts((p, (), body) for p, body in notes.items())
    j = _always_contradicts()
    nj = NoteJudge(j, model(), frames=frames)
    nj.prepare(notes)
    (v,) = nj.judge_pairs([("Plugins/Calendar.md", "Plugins/Kanban.md")])
    assert v.best is None and not j.calls
    assert nj.stats.not_evidence["boilerplate"] == 8  # both sentences of each of 4 notes
    assert nj.sentences_of("Plugins/Calendar.md").boilerplate == 2  # type: ignore[union-attr]


def test_the_note_level_model_decides_what_is_shown() -> None:
    from inference.note_model import NoteModel

    j = judge()
    # A model that only trusts a pair whose best sentence pair is aligned: this pair's
    # sentences are worded apart, so it is not shown even at P(contradiction) 0.96.
    cautious = NoteModel(
        ("best", "best_aligned"), (0.0, 0.0), (1.0, 1.0), (2.0, 6.0), -5.0, 0.5, 0.9
    )
    nj = NoteJudge(j, model(), note_model=cautious)
    nj.prepare({"a": A, "b": B})
    (v,) = nj.judge_pairs([("a", "b")])
    assert v.sentence_contradiction > 0.9
    assert v.probability is not None and v.probability < 0.5
    assert v.contradiction == v.probability and not nj.shown(v)


def test_the_note_level_features_count_values_that_conflict_and_agree() -> None:
    """A day a rule rules out and a day a rule allows, each against a statement of fact, are
    counted for the note-level model, judged or not, with the strongest conflicting and
    rule-against-fact pairs; two statements of fact are not counted."""
    j = _always_contradicts()
    nj = NoteJudge(j, model())
    nj.prepare(
        {
            "rule.md": "We hold no meetings on Wednesdays, internal or with clients. "
            "Client meetings are always on Thursday afternoons with the whole team.",
            "week.md": "This Wednesday afternoon we had a meeting with clients and the team. "
            "On Thursday afternoon we had a meeting with clients and the whole team.",
        }
    )
    (v,) = nj.judge_pairs([("rule.md", "week.md")])
    assert v.features["value_conflicts"] >= 1.0  # Wednesday against "no meetings on Wednesdays"
    assert v.features["value_agreements"] >= 1.0  # Thursday afternoon kept
    assert v.features["conflict_best"] > 0.0 and v.features["rule_fact_best"] > 0.0
    assert 0.0 < v.features["mean_contradiction"] <= 1.0


def test_values_of_two_statements_of_fact_are_not_counted_as_a_breach() -> None:
    j = _always_contradicts()
    nj = NoteJudge(j, model())
    nj.prepare(
        {
            "monday.md": "I left the office before 9:00 to catch the early train home.",
            "tuesday.md": "I left the office at 9:30 to catch the early train home.",
        }
    )
    (v,) = nj.judge_pairs([("monday.md", "tuesday.md")])
    assert v.best is not None and v.best.alignment is not None
    assert v.best.alignment.values == "conflict"  # the numbers clash …
    assert v.features["value_conflicts"] == 0.0  # … but no rule is broken


def test_an_act_outside_what_a_rule_forbids_is_set_aside_and_one_inside_is_judged() -> None:
    j = _always_contradicts()
    nj = NoteJudge(j, model())
    nj.prepare(
        {
            "rule.md": "Our team never deploys on weekends, whoever is on call.",
            "friday.md": "The platform team ships its releases on Fridays, whoever is on call.",
            "sunday.md": "The platform team ships its releases on Sundays, whoever is on call.",
        }
    )
    friday, sunday = nj.judge_pairs([("rule.md", "friday.md"), ("rule.md", "sunday.md")])
    assert friday.best is None and friday.set_aside == {"outside what the rule forbids": 1}
    assert sunday.best is not None and not sunday.set_aside
