"""Numbers in notes compared as numbers (desktop/flows/quantities.py, value_compare.py)."""

from __future__ import annotations

import pytest

from desktop.flows.quantities import quantities
from desktop.flows.value_compare import compare_quantities, outside_prohibition


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # a value within the other's bound
        (
            "Rode 45 minutes to the office today.",
            "I ride at least half an hour a day.",
            "compatible",
        ),
        ("Spent 420 euros on the trip.", "The trip budget is capped at 500 euros.", "compatible"),
        ("Il faut au moins 2 heures de repos.", "Le pain se repose 3 heures.", "compatible"),
        (
            "Serve il almeno 20 minuti di riscaldamento.",
            "Oggi 25 minuti di riscaldamento.",
            "compatible",
        ),
        (
            "I left my phone in the kitchen at half past nine.",
            "No phone in the bedroom after ten.",
            "compatible",
        ),
        # a value that breaks the bound
        ("Spent 640 euros on the trip.", "The trip budget is capped at 500 euros.", "conflict"),
        (
            "Standup is capped at fifteen minutes.",
            "Our standup runs about forty minutes now.",
            "conflict",
        ),
        (
            "No phone in the bedroom after ten.",
            "I took my phone to bed at half past ten.",
            "conflict",
        ),
        (
            "Production releases go out every Friday between 14:00 and 16:00.",
            "Nothing ships to production after Thursday noon.",
            "conflict",
        ),
        # two limits for one thing, and two limits that meet
        ("The budget is capped at 500 euros.", "The budget is capped at 640 euros.", "differ"),
        ("Sessions last at least 30 minutes.", "Sessions last at most 90 minutes.", "compatible"),
        ("Sessions last at least 2 hours.", "Sessions last at most 90 minutes.", "conflict"),
        # two plain values
        ("The laptop closes at nine.", "I closed the laptop at 20:45.", "differ"),
        (
            "The rent is 900 euros a month.",
            "The rent is 900 euros a month, bills included.",
            "compatible",
        ),
        # nothing to compare
        ("Mail and chat stay closed until eleven.", "The first hour belongs to the inbox.", "none"),
        ("In 2024 we moved to Lyon.", "We moved in the spring.", "none"),
        # a duration "after" names when something happens, as "for" does
        ("Tokens expire after one hour.", "An access token is valid for 60 minutes.",
         "compatible"),
        ("Logs are deleted after thirty days.", "We keep app logs for 30 days.", "compatible"),
        # a bound whose own words hold the negation is not a prohibition
        ("Minutes go out no later than three days after the meeting.",
         "The minutes went out two days after the meeting.", "compatible"),
        ("Results come out no later than 10 days after the exam.",
         "Results came out 14 days after the exam.", "conflict"),
        # a threshold a rule is conditioned on: below it, the rule does not apply
        ("Trips costing over €2,000 need the department head's approval.",
         "My €1,450 trip to Madrid was approved by my manager alone.", "compatible"),
        ("Trips costing over €2,000 need the department head's approval.",
         "My €2,400 trip was approved by my manager alone.", "none"),
        ("If I need the inhaler more than three times a week, I call the nurse.",
         "Used the inhaler twice this week.", "compatible"),
        # a rule with an exception: the exception may be the fact
        ("No coffee after 14:00, except on night-shift days.",
         "Night shift tonight, so a coffee at 22:00 before heading in.", "none"),
        ("Aucune remise au-delà de 10 %, sauf pour les clients fidèles.",
         "Remise de 15 % accordée à Maubert, client fidèle.", "none"),
        # a rate or a count of nights is not a time of day
        ("Paris hotel cap: 160 euros a night.",
         "Three nights in Paris came to 459 euros before breakfast.", "differ"),
        ("Pas plus de 110 € la nuit pour l'hôtel.", "Pensão Flor : 95 € la nuit.", "compatible"),
        # scale words and hours with minutes
        ("Medical costs are covered up to €1 million.", "The hospital stay cost €38,000.",
         "compatible"),
        ("At least seven hours of sleep a night.", "Sleep tracker: 7 h 20 min last night.",
         "compatible"),
    ],
)  # fmt: skip
def test_quantities_are_compared_as_numbers(a: str, b: str, expected: str) -> None:
    assert compare_quantities(a, b) == expected
    assert compare_quantities(b, a) == expected  # order does not matter


def test_a_bare_hour_is_read_both_ways_and_compared_like_with_like() -> None:
    readings = [(q.lo, q.reading) for q in quantities("Lights out at ten.")]
    assert readings == [(600.0, 0), (1320.0, 1)]
    (q,) = quantities("Lights out at 22:00.")
    assert q.reading == -1 and q.lo == 1320.0


def test_until_is_a_time_not_a_bound() -> None:
    """ "Closed until eleven" bounds a state: a fact at 9:30 may keep or break it."""
    assert compare_quantities("Mail stays closed until eleven.", "I answered mail at 9:30.") == (
        "differ"
    )


def test_days_of_the_year_with_their_bounds() -> None:
    rule = "On ne met jamais les tomates dehors avant les Saints de glace, à la mi-mai."
    assert compare_quantities(rule, "Tomates dehors le 6 avril, comme chaque année.") == "conflict"
    assert compare_quantities(rule, "Tomates dehors le 20 mai.") == "compatible"
    assert compare_quantities("Taxes are due by April 30.", "I filed on 2 May.") == "conflict"
    assert (
        compare_quantities("The boiler is serviced on 12 March.", "Service: March 3.") == "differ"
    )


@pytest.mark.parametrize(
    ("rule", "act", "outside"),
    [
        ("We never deploy on weekends.", "The team ships on Fridays.", True),
        ("No meetings on Wednesdays.", "The review meeting is on Thursday at 10:00.", True),
        ("I never eat after 20:00.", "Dinner was at 19:00 yesterday.", True),
        ("Pas de réunion le mercredi.", "La réunion d'équipe a lieu le jeudi.", True),
        # The act lies in the forbidden window: a breach, for the judge to read.
        ("We never deploy on weekends.", "We deployed on Saturday.", False),
        ("I never eat after 20:00.", "Dinner was at 21:30 yesterday.", False),
        # One of the acts lies in it.
        ("We never deploy on weekends.", "We deploy on Fridays and Sundays.", False),
        # The act's own negation may be the clash.
        ("We never deploy on weekends.", "We did not deploy on Friday.", False),
        # Not a prohibition: a bound the act keeps is compared elsewhere (values agree).
        ("I ride at least half an hour a day.", "I rode 45 minutes today.", False),
        # Two rules, or more than one kind of quantity shared: not this rule's question.
        ("Nothing ships after Thursday noon.", "Releases go out every Friday 14:00-16:00.", False),
        ("We never deploy on weekends.", "We never deploy on Fridays.", False),
    ],
)
def test_an_act_outside_what_a_rule_forbids_does_not_break_it(
    rule: str, act: str, outside: bool
) -> None:
    assert outside_prohibition(rule, act) is outside
    assert outside_prohibition(act, rule) is outside


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # one bound said two ways
        (
            "The board expects churn from the price rise to stay below 3%.",
            "According to the board, fewer than 3% of customers should leave.",
            "compatible",
        ),
        (
            "Orders from Kartonwerk arrive no later than 10 working days after we order.",
            "Kartonwerk delivers within 10 working days of an order.",
            "compatible",
        ),
        (
            "Marks within ten working days.",
            "Results come out no later than 10 business days after the exam.",
            "compatible",
        ),
        (
            "Le presentazioni vanno mandate a Silvia entro il 31 marzo.",
            "Silvia vuole le slide di tutti entro fine marzo.",
            "compatible",
        ),
        # a comparative is a bound: two rules, not a value against a rule
        ("Don't burn anything wetter than 20%.", "Firewood must be below 20% moisture.", "none"),
        # a value at the very end of an exclusive bound: the words decide, not the number
        ("Churn must stay below 3%.", "Churn was 3% this quarter.", "none"),
        ("After two in the afternoon, no more coffee for me.", "Caffeine cutoff is 2pm.", "none"),
        # ... and at the end of a window a rule forbids, it keeps the rule
        ("No coffee after 14:00.", "Caffeine cutoff is 2pm.", "compatible"),
        # the same day named twice in one sentence, once under a rule: the rule speaks
        (
            "Wednesday is our maker day: no meetings on Wednesdays.",
            "This Wednesday afternoon we had a two-hour meeting with the board.",
            "conflict",
        ),
        # "after ten" reaches past midnight; "by midnight" is the day's end
        (
            "No phone in the bedroom after 22:00.",
            "I scrolled listings in bed until nearly midnight.",
            "conflict",
        ),
        (
            "Heating goes off at 22:00 every night.",
            "The house was at 18 °C by midnight.",
            "compatible",
        ),
        # a time of day given with a day is compared with the day's rule; one given apart too
        (
            "Lessons are booked only between 16:00 and 19:00 on weekdays.",
            "Booked a lesson for Kofi at 20:00 on Wednesday, after his football.",
            "conflict",
        ),
        (
            "Since February I eat only between noon and eight in the evening.",
            "A croissant at the station at half past seven in the morning.",
            "conflict",
        ),
        (
            "Les réunions durent au plus trente minutes.",
            "Une réunion d'une heure et demie chaque semaine.",
            "conflict",
        ),
        (
            "Chaque sinistre est déclaré au gestionnaire sous 48 heures.",
            "On prévient le gestionnaire dans les deux jours.",
            "compatible",
        ),
        # a threshold below which a rule applies: a fact above it is outside the rule
        (
            "I flew to Rome, since the train would have taken eleven hours.",
            "Trips under six hours by train must be done by rail.",
            "compatible",
        ),
        # "one-off" is not one o'clock
        (
            "Answered two emails from the sofa after dinner.",
            "No working from the sofa, apart from one-off evening emails.",
            "compatible",
        ),
        # "only" reaches the words next to it, not another thing the sentence names
        (
            "Il corso base è il mercoledì e usa solo gres bianco.",
            "Il corso avanzato è il lunedì e usa anche la porcellana.",
            "differ",
        ),
        # compound number words
        (
            "Each performer gets up to ten minutes.",
            "The poet read for twenty-five minutes and nobody stopped her.",
            "conflict",
        ),
        ("The walk takes thirty one minutes.", "The walk is at least half an hour.", "compatible"),
        # "only" after a conjunction opens what comes next, not the day before it
        (
            "An on-call week is paid as such and followed by a free Monday morning.",
            "I answer the questions from the weekend and only then open the planning.",
            "differ",
        ),
        # and the clashes these readings must keep
        (
            "More than 3% of customers left after the price rise.",
            "Churn must stay below 3%.",
            "conflict",
        ),
        (
            "The train would have taken four hours, so I flew.",
            "Trips under six hours by train must be done by rail.",
            "none",
        ),
        (
            "Results came out 14 working days after the exam.",
            "Marks within ten working days.",
            "conflict",
        ),
        (
            "The slides reached Silvia on 9 April.",
            "Silvia vuole le slide entro fine marzo.",
            "conflict",
        ),
        (
            "The kiln ran at 1,300 degrees with wood wetter than 25%.",
            "Firewood must be below 20% moisture.",
            "conflict",
        ),
    ],
)
def test_bounds_said_in_other_words(a: str, b: str, expected: str) -> None:
    assert compare_quantities(a, b) == expected
    assert compare_quantities(b, a) == expected
