"""Same subject, different claim (desktop/flows/alignment.py)."""

from __future__ import annotations

from desktop.flows.alignment import align, code_names, frame, language, subject_words


def test_one_template_about_two_subjects_is_two_things() -> None:
    al = align(
        "This importer converts your Bear notes to durable Markdown files.",
        "This importer converts your Craft notes to durable Markdown files.",
        names_a=subject_words("Import from Bear"),
        names_b=subject_words("Import from Craft"),
    )
    assert al.kind == "subject" and not al.candidate


def test_a_command_named_in_code_is_the_sentence_s_own_subject() -> None:
    a = "Run `uv lock` to update the lockfile without installing anything."
    b = "Run `uv sync` to update the lockfile without installing anything."
    assert align(a, b, names_a=code_names(a), names_b=code_names(b)).kind == "subject"


def test_the_same_frame_with_another_value_is_a_candidate() -> None:
    al = align("The boiler is serviced every March.", "The boiler is serviced every October.")
    assert al.kind == "value" and al.candidate
    neg = align("Guests may park in the courtyard.", "Guests may not park in the courtyard.")
    assert neg.kind == "negation" and neg.negation_differs
    quant = align("I always cycle to work.", "I sometimes cycle to work.")
    assert quant.kind == "quantifier"
    ant = align("The shop opens before nine.", "The shop opens after nine.")
    assert ant.kind == "antonym"


def test_a_swapped_name_that_is_not_the_note_s_subject_is_not_set_aside() -> None:
    """PostgreSQL against SQLite for one ledger is a claim, not each note's own subject."""
    al = align(
        "The ledger lives in PostgreSQL.",
        "The ledger lives in SQLite.",
        names_a=subject_words("Billing"),
        names_b=subject_words("Billing service"),
    )
    assert al.kind == "swap" and al.candidate
    assert al.only_a == ("postgresql",) and al.only_b == ("sqlite",)


def test_a_rewording_is_not_a_candidate() -> None:
    al = align(
        "Staging keeps deploying on every merge.",
        "Staging is deployed automatically on every merge.",
    )
    assert al.kind == "wording" and not al.candidate


def test_sentences_worded_apart_are_left_to_the_judge() -> None:
    al = align(
        "Mail and chat stay closed until eleven.",
        "The first hour of the workday belongs to the inbox.",
    )
    assert al.kind == "apart" and not al.candidate


def test_values_are_compared_whatever_the_alignment() -> None:
    al = align("Rode 45 minutes today.", "I ride at least half an hour a day.")
    assert al.values == "compatible"


def test_the_frame_masks_names_and_numbers() -> None:
    names = subject_words("Import from Notion")
    assert frame("Import from Notion converts 12 pages per second.", names) == (
        "_ from _ converts _ pages per second"
    )


def test_two_pages_pointing_at_each_other_are_about_two_things() -> None:
    al = align(
        "This theme offers the same icons as Sunrise Icons.",
        "This theme offers the same icons as Harbour Theme.",
        names_a=subject_words("Harbour Theme"),
        names_b=subject_words("Sunrise Icons"),
    )
    assert al.kind == "subject"


def test_a_word_naming_the_subject_in_another_form_still_names_it() -> None:
    al = align(
        "Unlike grouping by date, this sorts the statuses alphabetically.",
        "Unlike sorting by date, this sorts the statuses alphabetically.",
        names_a=subject_words("Grouping"),
        names_b=subject_words("Sorting"),
    )
    assert al.kind == "subject"


def test_a_pronoun_opening_both_sentences_stands_for_each_note_s_subject() -> None:
    a, b = "They require extra styling to display correctly.", "They don't require extra styling."
    al = align(a, b, names_a=subject_words("Custom markers"), names_b=subject_words("Core markers"))
    assert al.kind == "subject"
    # In one note (or two notes about one thing) the same pair is a negation to judge.
    same = subject_words("Markers")
    assert align(a, b, names_a=same, names_b=same).kind == "negation"


def test_a_sentence_s_language_is_read_from_its_function_words() -> None:
    assert language("J'ai mis les tomates en pleine terre le 6 avril, comme chaque année.") == "fr"
    assert language("Il pane di casa si fa soltanto con il lievito madre, mai con la birra.") == (
        "it"
    )
    assert language("All services store their data in the shared PostgreSQL cluster.") == "en"
    # Too few function words to say: no language, and nothing is set aside for it.
    assert language("Production releases go out every Friday between 14:00 and 16:00.") is None
    assert language("Nothing ships to production after Thursday noon.") is None


def test_sentences_in_two_languages_are_not_compared() -> None:
    fr = "On ne met jamais les tomates en pleine terre avant les Saints de glace."
    it = "Anche questa settimana il pane del sabato l'ho fatto con il lievito di birra."
    en = "The tomatoes go out in early April, as they do every year."
    assert align(fr, it).kind == "languages"
    assert align(en, fr).kind == "languages"
    # One sentence whose language is unclear is compared as before.
    assert align("Nothing ships after Thursday noon.", fr).kind != "languages"
