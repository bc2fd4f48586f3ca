"""Days of the week, day windows, parts of the day and frequencies compared as values
(desktop/flows/schedule.py through desktop/flows/quantities.py)."""

from __future__ import annotations

import pytest

from desktop.flows.quantities import quantities
from desktop.flows.schedule import frequency_quantities, week_quantities
from desktop.flows.value_compare import compare_quantities


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # a day and time of the week against a rule on the week
        (
            "Deploys go out on Monday at 15:00.",
            "Nothing ships to production after Thursday noon.",
            "compatible",
        ),
        (
            "Takeaway is for Friday nights only.",
            "Too tired to cook on a Wednesday, so I ordered pad thai at eight.",
            "conflict",
        ),
        ("Takeaway is for Friday nights only.", "Ordered pizza on Friday at nine.", "compatible"),
        (
            "We hold no meetings on Wednesdays, internal or with customers.",
            "This Wednesday afternoon I still had a one-hour meeting with the clinic.",
            "conflict",
        ),
        (
            "We hold no meetings on Wednesdays, internal or with customers.",
            "On Thursday afternoon I had a meeting with the clinic.",
            "compatible",
        ),
        ("Pas de réunion le mercredi.", "Mercredi après-midi, réunion avec le client.", "conflict"),
        ("Pas de réunion le mercredi.", "Jeudi après-midi, réunion avec le client.", "compatible"),
        ("Niente riunioni il mercoledì.", "Mercoledì pomeriggio riunione col cliente.", "conflict"),
        ("The office is closed on weekends.", "On Tuesday I worked at the office.", "differ"),
        # an allowed window, and one that runs past midnight
        (
            "Because of the neighbours, piano practice only happens between 10:00 and 20:00.",
            "Couldn't sleep, so I did my piano practice at 21:30 with the soft pedal down.",
            "conflict",
        ),
        (
            "Because of the neighbours, piano practice only happens between 10:00 and 20:00.",
            "Did my piano practice at 18:30.",
            "compatible",
        ),
        (
            "Nobody uses the washing machine between 22:00 and 7:00, and nobody drills then.",
            "I forgot the towels, so I used the washing machine at 22:30 anyway.",
            "conflict",
        ),
        (
            "Nobody uses the washing machine between 22:00 and 7:00.",
            "Used the washing machine at 19:30.",
            "compatible",
        ),
        (
            "I eat only between noon and eight in the evening.",
            "Had lunch at one and dinner at seven.",
            "compatible",
        ),
        # meals as moments under a bound
        (
            "Nobody at the agency phones a prospect after lunch.",
            "At a quarter past four I phoned the dental chain.",
            "conflict",
        ),
        (
            "Nobody at the agency phones a prospect after lunch.",
            "At 10:15 I phoned the dental chain.",
            "compatible",
        ),
        ("Non si lavora dopo le 18.", "Ho lavorato fino alle 20 ieri sera.", "conflict"),
        # how often
        ("I swim at least three times a week.", "Only swam once this week.", "conflict"),
        ("I swim at least three times a week.", "I swim every day before work.", "compatible"),
        ("On arrose deux fois par semaine.", "On arrose tous les jours.", "differ"),
        ("Le linge se lave au moins une fois par semaine.", "Lessive chaque jour.", "compatible"),
        ("Innaffio almeno tre volte a settimana.", "Innaffio una volta al mese.", "conflict"),
        # a part of the day a rule rules out, or allows alone
        ("The kids never watch TV in the evening.", "They watched a film in the evening.",
         "conflict"),
        ("The kids never watch TV in the evening.", "They watched a film in the afternoon.",
         "compatible"),
        ("No calls in the morning.", "The call with Ana is in the afternoon.", "compatible"),
        ("I run in the morning only.", "Went for a run in the evening.", "conflict"),
        ("I run in the morning only.", "Ran in the morning, 8 km.", "compatible"),
        ("On ne tond jamais le soir.", "J'ai tondu la pelouse le soir.", "conflict"),
        ("Mai annaffiare di sera.", "Ho annaffiato di sera.", "conflict"),
    ],
)  # fmt: skip
def test_week_values_are_compared(a: str, b: str, expected: str) -> None:
    assert compare_quantities(a, b) == expected
    assert compare_quantities(b, a) == expected  # order does not matter


def test_a_window_of_the_week_in_minutes_after_monday() -> None:
    (q,) = week_quantities("production releases go out every friday between 14:00 and 16:00.")
    assert (q.lo, q.hi, q.bound) == (4 * 1440 + 840, 4 * 1440 + 960, False)
    (q,) = week_quantities("nothing ships to production after thursday noon.")
    assert (q.lo, q.hi, q.forbidden) == (3 * 1440 + 720, 7 * 1440, True)
    (q,) = week_quantities("le magasin est ouvert du lundi au vendredi.")
    assert (q.lo, q.hi) == (0, 5 * 1440 - 1)


def test_how_often_in_times_per_week() -> None:
    assert [q.lo for q in frequency_quantities("we meet twice a week")] == [pytest.approx(2.0)]
    assert [q.lo for q in frequency_quantities("every other day")] == [pytest.approx(3.5)]
    (q,) = frequency_quantities("at least 3 times a week")
    assert q.bound and q.lo == pytest.approx(3.0)


def test_the_words_after_a_bare_hour_choose_its_half_of_the_day() -> None:
    assert [q.lo for q in quantities("Porridge at eight in the morning.")] == [480.0]
    assert [q.lo for q in quantities("Dinner at eight in the evening.")] == [1200.0]
    assert [q.lo for q in quantities("Alle otto di sera.")] == [1200.0]
    # a bare hour from one to four is an afternoon hour
    assert [q.lo for q in quantities("Called them at four.")] == [960.0]
