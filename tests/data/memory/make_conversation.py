"""Writes conversation.json: a recorded ~200-turn, 4-session conversation with planted facts.

Run once (``python make_conversation.py``); the output is committed. Deterministic.
Each planted fact is a user turn; ``keywords`` are the words a page fact must
contain to count as that fact reaching a page, ``date`` the date it names.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

PLANTED = [
    # (day index, text, keywords, date or None)
    (
        0,
        "We decided to move the Atlas API to Fly.io; the cutover is on 15 December.",
        ["atlas", "fly"],
        "2026-12-15",
    ),
    (0, "The database stays on Neon, we are not migrating Postgres.", ["neon"], None),
    (0, "I prefer to deploy on Tuesdays and never on Fridays.", ["tuesday"], None),
    (
        1,
        "My sister Giulia arrives in Lisbon on 12 December, I pick her up at the airport.",
        ["giulia"],
        "2026-12-12",
    ),
    (
        1,
        "The quarterly report for Helios is due on 19 December.",
        ["helios", "report"],
        "2026-12-19",
    ),
    (
        1,
        "I switched my running plan to three runs a week: Monday, Wednesday and Saturday.",
        ["run"],
        None,
    ),
    (2, "We chose Rust for the new ingestion service instead of Go.", ["rust", "ingestion"], None),
    (2, "The dentist appointment moved to tomorrow at 9.", ["dentist"], "2026-12-02"),
    (2, "Marco is the new tech lead of the payments team from January.", ["marco", "lead"], None),
    (
        3,
        "I am allergic to penicillin, keep that in mind for travel insurance forms.",
        ["penicillin"],
        None,
    ),
    (
        3,
        "The Helios contract renewal must be signed by 8 January 2027.",
        ["helios", "contract"],
        "2027-01-08",
    ),
    (3, "My favourite editor setup is Neovim with the gruvbox theme.", ["neovim"], None),
]

#: Words one of which a subject page's name must contain for a planted fact to be on the
#: right page (what a person would file it under), for tests/perf/bench_memory.py.
SUBJECTS = {
    "We decided to move the Atlas API to Fly.io; the cutover is on 15 December.": [
        "atlas",
        "fly",
        "cutover",
    ],
    "The database stays on Neon, we are not migrating Postgres.": ["neon", "database", "postgres"],
    "I prefer to deploy on Tuesdays and never on Fridays.": ["deploy"],
    "My sister Giulia arrives in Lisbon on 12 December, I pick her up at the airport.": [
        "giulia",
        "sister",
        "lisbon",
    ],
    "The quarterly report for Helios is due on 19 December.": ["helios", "report"],
    "I switched my running plan to three runs a week: Monday, Wednesday and Saturday.": [
        "run",
    ],
    "We chose Rust for the new ingestion service instead of Go.": ["rust", "ingestion"],
    "The dentist appointment moved to tomorrow at 9.": ["dentist"],
    "Marco is the new tech lead of the payments team from January.": [
        "marco",
        "lead",
        "payments",
    ],
    "I am allergic to penicillin, keep that in mind for travel insurance forms.": [
        "penicillin",
        "allerg",
        "health",
        "insurance",
    ],
    "The Helios contract renewal must be signed by 8 January 2027.": ["helios", "contract"],
    "My favourite editor setup is Neovim with the gruvbox theme.": ["neovim", "editor"],
}

FILLER_USER = [
    "Can you explain what a context manager does in Python?",
    "Thanks, that helps.",
    "What is the difference between a list and a tuple?",
    "Show me a quick example of a dataclass.",
    "How do I reverse a string?",
    "ok",
    "Can you rephrase that more simply?",
    "What does idempotent mean?",
    "Give me a regex for an email address.",
    "How do I read a CSV file with the standard library?",
    "What is a good name for a function that parses dates?",
    "Hmm, interesting.",
    "Why is my loop slow?",
    "Can you summarise what we did so far?",
    "What time zone is Lisbon in?",
    "How many weeks until the end of the year?",
]
FILLER_ASSISTANT = [
    "Sure. A context manager sets something up and tears it down around a block, via __enter__ "
    "and __exit__.",
    "You're welcome.",
    "A list is mutable; a tuple is immutable and hashable if its items are.",
    "Here is one: @dataclass class Point: x: int; y: int.",
    "Use slicing: text[::-1].",
    "Of course. In short: it wraps setup and cleanup.",
    "An idempotent operation gives the same result when applied twice.",
    "A simple one is [^@\\s]+@[^@\\s]+\\.[^@\\s]+ — not complete, but practical.",
    "csv.reader(open(path, newline='')) yields rows as lists.",
    "parse_date is clear and short.",
    "It may be doing work inside the loop that could move out of it.",
    "So far we talked about deployment, travel and a few Python questions.",
    "Lisbon uses Western European Time (UTC+0 in winter).",
]
ACK = [
    "Noted.",
    "Got it, I'll keep that in mind.",
    "Understood.",
    "Thanks for letting me know.",
]


def main() -> None:
    rng = random.Random(42)
    start = datetime(2026, 11, 29, 9, 0, 0)
    turns = []
    planted_out = []
    for day in range(4):
        session = f"session-{day + 1}"
        t = start + timedelta(days=day)
        todays = [p for p in PLANTED if p[0] == day]
        slots = sorted(rng.sample(range(2, 22), len(todays)))
        plant_iter = iter(todays)
        for i in range(25):
            t += timedelta(minutes=rng.randint(1, 6))
            if i in slots:
                _, text, keywords, date = next(plant_iter)
                turns.append(dict(session=session, ts=t.isoformat() + "Z", role="user", text=text))
                planted_out.append(
                    dict(
                        text=text,
                        keywords=keywords,
                        date=date,
                        ts=turns[-1]["ts"],
                        subjects=SUBJECTS[text],
                    )
                )
                turns.append(
                    dict(
                        session=session,
                        ts=(t + timedelta(seconds=20)).isoformat() + "Z",
                        role="assistant",
                        text=rng.choice(ACK),
                    )
                )
                continue
            k = rng.randrange(len(FILLER_USER))
            turns.append(
                dict(session=session, ts=t.isoformat() + "Z", role="user", text=FILLER_USER[k])
            )
            turns.append(
                dict(
                    session=session,
                    ts=(t + timedelta(seconds=30)).isoformat() + "Z",
                    role="assistant",
                    text=FILLER_ASSISTANT[k % len(FILLER_ASSISTANT)],
                )
            )
        if day == 1:
            # a secret and a withdrawal, to prove neither reaches a page
            t += timedelta(minutes=2)
            turns.append(
                dict(
                    session=session,
                    ts=t.isoformat() + "Z",
                    role="user",
                    text="My bank PIN hint is the year my dog Pixel was born.",
                )
            )
            turns.append(
                dict(
                    session=session,
                    ts=(t + timedelta(seconds=15)).isoformat() + "Z",
                    role="assistant",
                    text="Okay.",
                )
            )
            turns.append(
                dict(
                    session=session,
                    ts=(t + timedelta(seconds=40)).isoformat() + "Z",
                    role="user",
                    text="Forget what I just said.",
                )
            )
        if day == 2:
            t += timedelta(minutes=2)
            turns.append(
                dict(
                    session=session,
                    ts=t.isoformat() + "Z",
                    role="user",
                    text="The staging token is GITHUB_TOKEN="
                    "ghp_8kT3mV6xQ1zR4wY7nB2cF5hJ9pL0sD3gA6eU",
                )
            )
    data = {"turns": turns, "planted": planted_out}
    with open("conversation.json", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(len(turns), "turns,", len(planted_out), "planted facts")


if __name__ == "__main__":
    main()
