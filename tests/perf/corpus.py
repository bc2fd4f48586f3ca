"""A deterministic corpus of note-like texts for embedder measurements.

Written for Antinomy's benchmarks and quality checks, not downloaded: short
notes, decisions that contradict each other, journal entries, meeting notes,
reading notes, lists with wikilinks and tags, a little code, and some French
and Italian — the kind of text a personal Markdown vault holds. Long notes
are hand-written or assembled (like a weekly review that gathers daily
entries) with a fixed seed, so every run sees exactly the same texts.

``notes()`` returns ~150 texts; ``texts_of_about(words, count)`` cuts texts of
a given length out of them for throughput runs.
"""

from __future__ import annotations

import random
from pathlib import Path

ENGLISH = [
    # Decisions and the notes that later contradict them.
    "Decision: we deploy to production every Friday afternoon, right after the weekly review.",
    "Nothing gets deployed in the two days before a weekend; risky changes wait until Monday.",
    "We agreed to keep the monorepo. Splitting it would cost more in tooling than it saves.",
    "The payments service moves to its own repository next quarter so its team can release "
    "on their own schedule.",
    "All new services are written in Go. Python is only for scripts and data notebooks.",
    "The ingestion pipeline stays in Python because the data team owns it and knows pandas.",
    "Code review must happen within one working day, or the author may merge on their own.",
    "Every merge needs two approvals, no exceptions, even for one-line fixes.",
    "We stopped estimating in story points in March; we count finished items per week instead.",
    "Sprint planning: estimate every ticket in points before it enters the sprint.",
    "Meetings are banned on Wednesdays so people get one full day of focus.",
    "Customer calls can be booked any weekday, including Wednesday mornings.",
    "Remote-first: nobody is expected in the office, and decisions are written down, not said.",
    "From September the team comes to the office Tuesday to Thursday.",
    "Postgres is our only database. If something needs a cache, use Postgres until it hurts.",
    "Redis is the session store and the rate limiter; it is already in production.",
    "Use feature flags for every user-visible change so we can turn it off without a deploy.",
    "Feature flags older than thirty days are debt: remove them or make them permanent.",
    "Hiring freeze until the end of the year, backfills only.",
    "Open two junior positions in the platform team in November.",
    # Personal notes and tensions.
    "I want to read more fiction this year: one novel a month, no business books.",
    "Reading list for Q2: High Output Management, The Goal, Thinking in Systems.",
    "Morning routine: no phone before breakfast, twenty minutes of writing first.",
    "Check email first thing so nothing urgent waits until noon.",
    "I run three times a week, Monday, Wednesday and Saturday, about 5 km each time.",
    "Knee hurts after running on asphalt. Physio says rest for two weeks, then trails only.",
    "Coffee after 2 pm ruins my sleep. Switched to tea in the afternoon.",
    "Double espresso at four before the late review session, otherwise I fall asleep.",
    "Budget: no more than 200 euros a month on eating out.",
    "Booked the tasting menu for our anniversary, 180 euros per person.",
    "Goal for the year: save enough for a three-month sabbatical in 2026.",
    "Bought the new laptop after all; the old one could not run the local models.",
    "Keep weekends offline. Laptop stays in the bag from Friday evening to Monday.",
    "Sunday evening: one hour to plan the week, inbox to zero.",
    # Work log fragments.
    "Bug: the export drops notes whose titles contain a slash. Reproduced with 'CI/CD'.",
    "Fixed the slash bug by escaping titles before building file paths. Added a test.",
    "Latency p99 of the search endpoint went from 120 ms to 340 ms after the index rebuild.",
    "The rebuild changed the tokenizer; long queries now hit the slow path. Rolled back.",
    "Incident 2024-03-12: disk full on the build server, caches never cleaned. Added a cron.",
    "Postmortem action: alert at 80% disk usage on every build machine.",
    "TODO: rotate the API keys for the staging environment before the audit.",
    "Audit passed. Only remark: document who has production access and why.",
    "Benchmark: int8 embedder is 2.4x faster on short texts, vectors move slightly.",
    "The vector index must never mix embeddings from two different models.",
    "Thought: the guard hook has a 300 ms budget, so it can only use embeddings, not the LLM.",
    # Reading notes.
    "Goodhart's law: when a measure becomes a target, it ceases to be a good measure.",
    "Gall's law: a complex system that works evolved from a simple system that worked.",
    "Chesterton's fence: do not remove a fence until you know why it was put up.",
    "The map is not the territory. The index is not the vault.",
    "Little's law: items in the system equal arrival rate times time in the system.",
    "From 'The Goal': an hour lost at the bottleneck is an hour lost for the whole plant.",
    "Writing is thinking. If I cannot write the decision down, I have not made it yet.",
    "Spaced repetition works because forgetting is the signal that makes memory stronger.",
    "Second-order effects: cheaper deploys lead to more deploys, which lead to more incidents.",
    # Household and life admin.
    "Groceries: oat milk, eggs, spinach, lemons, parmesan, coffee beans, dish soap.",
    "Call the landlord about the boiler. It loses pressure every few days.",
    "The plumber came on Thursday; the boiler valve is replaced, 140 euros.",
    "Passport expires in August. Renew before booking anything abroad.",
    "Mum's birthday on the 14th: she wants the Ferrante books in Italian.",
    "Car insurance renewal: the quote went up 30%. Compare three offers before the 20th.",
    "Plant the tomatoes after the last frost, around mid-May, against the south wall.",
    "Recipe: risotto needs warm stock, added a ladle at a time, about eighteen minutes.",
    "Backups: the photo library goes to the external disk every Sunday, and offsite monthly.",
    "The external disk is full; photos from March are only on the laptop.",
    # Project ideas.
    "Idea: a tool that finds notes contradicting each other in my vault.",
    "Idea: weekly digest of notes I have not opened in six months.",
    "What if the app suggested merging notes that say the same thing twice?",
    "Question for later: how should tensions be shown, as pairs or as clusters?",
    "Keep the app offline. No telemetry, no accounts, no cloud sync of any kind.",
    "Sync the vault through the cloud so the phone and the laptop stay in step.",
    # Very short fragments.
    "Call Anna.",
    "Ship it.",
    "Why is the build red again?",
    "Remember the umbrella.",
    "#todo renew gym membership",
    "[[Deploy policy]] contradicts [[Weekend freeze]].",
    "See also [[Reading list 2024]] and [[Habits]].",
    "- [ ] dentist\n- [x] taxes\n- [ ] fix bike brakes",
]

FRENCH = [
    "Décision : on livre en production chaque vendredi après la revue hebdomadaire.",
    "Rien ne part en production le vendredi ; les changements risqués attendent lundi.",
    "Lire plus de romans cette année, un par mois, et moins d'essais sur le management.",
    "Rendez-vous chez le dentiste mardi à 9 h, penser à apporter la carte vitale.",
    "Le télétravail est la règle ; le bureau sert aux ateliers et aux repas d'équipe.",
    "À partir de septembre, présence au bureau trois jours par semaine pour tout le monde.",
    "Recette de la pâte brisée : 250 g de farine, 125 g de beurre froid, une pincée de sel, "
    "un peu d'eau glacée. Ne pas trop travailler la pâte.",
    "Réunion avec l'équipe produit : on garde l'application hors ligne, sans compte.",
    "Budget du mois dépassé à cause des réparations de la voiture ; pas de restaurant.",
    "Idée : noter chaque soir une chose apprise et une chose à améliorer.",
]

ITALIAN = [
    "Decisione: rilasciamo in produzione ogni venerdì pomeriggio, dopo la riunione settimanale.",
    "Niente rilasci nei due giorni prima del fine settimana; le modifiche rischiose aspettano.",
    "Comprare: pane, pomodori, basilico, mozzarella, olio d'oliva, caffè.",
    "Quest'anno voglio leggere più romanzi, uno al mese, a partire da Calvino.",
    "La riunione di lunedì è spostata a martedì alle dieci, in sala grande.",
    "Appunti dal corso: il ripasso distanziato funziona meglio di tre ore di fila.",
    "Il medico dice di correre solo su sterrato per un mese, niente asfalto.",
    "Ricetta del ragù: soffritto lento, carne macinata, vino rosso, tre ore a fuoco basso.",
    "Idea per il progetto: segnalare le note che si contraddicono a vicenda.",
    "Prenotare il treno per Bologna prima di venerdì, altrimenti i prezzi salgono.",
]

SHORT = [*ENGLISH, *FRENCH, *ITALIAN]

LONG = [
    "# Deploy policy\n\n"
    "We deploy to production every Friday afternoon, right after the weekly review. The idea "
    "is that the whole team is present, the week's work is fresh in everyone's mind, and the "
    "people who wrote the changes can watch the dashboards together. A release on Friday "
    "also forces us to finish work within the week instead of letting branches drift. We "
    "tried Monday releases last year and they always slipped to Tuesday because Monday was "
    "spent catching up on email and support tickets. The rollback procedure is one command "
    "and has been tested twice this quarter. If a release goes wrong, the person on call "
    "rolls back first and investigates after. Nobody debugs in production on a Friday "
    "evening. See [[On-call rotation]] and [[Rollback checklist]].",
    "# Weekend freeze\n\n"
    "Nothing is deployed in the last two days before a weekend. Risky changes wait until "
    "Monday so that nobody is paged on Saturday. This came out of the March incident, when a "
    "schema migration released on Friday at five locked the orders table for forty minutes "
    "and two people spent their Saturday restoring data. The rule applies to code, "
    "configuration and infrastructure alike. Exceptions need a written note from the head "
    "of engineering and a second person on call for the whole weekend. Small copy changes "
    "behind a feature flag are allowed, because turning the flag off does not need a deploy. "
    "The freeze starts Thursday at 18:00 and ends Monday at 09:00.",
    "Journal, Tuesday. Slept badly again; the neighbours were moving furniture until "
    "midnight. Started the day with coffee and no writing, which I keep telling myself not "
    "to do. The morning went to the search latency problem: p99 jumped after the index "
    "rebuild and it took two hours to see that the new tokenizer produced twice as many "
    "tokens for long queries. Rolled back, wrote it down, and felt oddly calm about it. "
    "Lunch with Marco, who is thinking about leaving; he says the on-call load is what "
    "wears him out, not the work itself. In the afternoon I reviewed three pull requests "
    "and left one unreviewed since Friday, which breaks our own one-day rule. Ran 5 km in "
    "the evening on the trail by the river, knee fine. Read forty pages of the Calvino "
    "novel before bed.",
    "Meeting notes — architecture review, 14 March\n\n"
    "Attendees: Anna, Marco, Li, Sophie, me.\n\n"
    "1. Monorepo or not. Anna wants the payments service in its own repository so that "
    "its releases are not blocked by the web app's test suite. Li thinks the tooling cost "
    "is underestimated: shared libraries, CI templates and dependency updates would all "
    "have to be duplicated. No decision; Anna writes a one-page proposal with costs.\n"
    "2. Database. Sophie proposed moving sessions from Redis to Postgres to drop one "
    "system. Marco objected that the rate limiter depends on Redis's atomic counters. We "
    "keep Redis for now and revisit in Q3.\n"
    "3. Feature flags. Forty-two flags are older than thirty days. Each owner cleans up "
    "theirs by the end of the month.\n\n"
    "Actions: Anna — proposal; Sophie — flag report; me — update the deploy policy page.",
    "Reading notes: Thinking in Systems, chapters 1–3.\n\n"
    "A system is a set of elements interconnected in a way that achieves something: its "
    "purpose is deduced from behaviour, not from rhetoric or stated goals. Stocks change "
    "only through flows, which is why they act as buffers and delays. A bathtub fills as "
    "long as inflow exceeds outflow, regardless of how fast either is changing. Balancing "
    "feedback loops seek a goal; reinforcing loops amplify whatever is happening, good or "
    "bad. Delays in balancing loops produce oscillations: the shower that is too cold, "
    "then too hot. What struck me is how much of our on-call trouble looks like a "
    "reinforcing loop: incidents create tired people, tired people make riskier changes, "
    "riskier changes create incidents. The leverage point is probably not more process "
    "but fewer, smaller changes.",
    "Trip planning, Bologna and Florence, late April.\n\n"
    "Train from Milan on Friday morning, two nights in Bologna near the university, then "
    "Florence on Sunday for three nights. In Bologna: the market streets behind Piazza "
    "Maggiore, the arcades to San Luca if the weather holds, tortellini in brodo at the "
    "place Giulia recommended. In Florence: book the Uffizi in advance, skip the Accademia "
    "queue, walk up to San Miniato at sunset. Budget about 900 euros for the two of us "
    "without trains. Passport is fine until August, but check the ID cards. Ask Mum if she "
    "wants anything from the bookshops; she mentioned a particular edition of Ferrante.",
    "Recipe — Sunday ragù, the slow way.\n\n"
    "Chop one onion, one carrot and a stick of celery very finely and cook them in olive "
    "oil and a little butter over low heat for at least twenty minutes, until soft and "
    "sweet but not brown. Add 500 g of minced beef and pork, raise the heat and break it "
    "up until it loses its pink colour. Pour in a glass of red wine and let it evaporate. "
    "Add a spoonful of tomato paste and a tin of passata, a bay leaf, salt and pepper. "
    "Cover partly and leave it at the barest simmer for three hours, adding a splash of "
    "milk or water when it looks dry. It is better the next day. Serve with tagliatelle, "
    "never spaghetti, and a little parmesan.",
    "Retrospective, Q1.\n\n"
    "What went well: we shipped the export feature, cut build times from 22 to 9 minutes, "
    "and had no weekend incidents after the freeze. What did not: estimates in points kept "
    "causing arguments in planning, code reviews often waited two or three days, and the "
    "audit preparation was a scramble because nobody had kept a list of who has production "
    "access. Surprises: the junior hires ramped up faster than expected when paired with "
    "the on-call rotation, which goes against what we assumed. Changes for Q2: count "
    "finished items per week instead of estimating, keep Wednesdays free of meetings, and "
    "write every decision into the vault on the day it is made, with a link to the note it "
    "replaces.",
    "Journal, dimanche soir.\n\n"
    "Semaine chargée mais plutôt bonne. Lundi et mardi passés sur l'audit ; tout est en "
    "ordre sauf la liste des accès à la production, qu'il faut tenir à jour. Mercredi sans "
    "réunion, enfin une vraie journée de travail : j'ai fini le prototype qui détecte les "
    "notes contradictoires. Il trouve bien la contradiction entre la politique de "
    "déploiement du vendredi et le gel du week-end. Jeudi, dîner chez Claire, trop de vin, "
    "mal dormi. Vendredi, la mise en production s'est bien passée. Ce week-end : marché, "
    "lessive, deux chapitres de lecture, pas d'ordinateur. Pour la semaine prochaine : "
    "appeler le propriétaire pour la chaudière, préparer la présentation de jeudi, courir "
    "trois fois.",
    "Diario, domenica.\n\n"
    "Settimana lunga. Lunedì la riunione è saltata e martedì abbiamo discusso per due ore "
    "se dividere il repository. Alla fine nessuna decisione, Anna scriverà una proposta. "
    "Mercoledì giornata senza riunioni: ho finalmente sistemato il bug dell'esportazione "
    "con le barre nei titoli. Giovedì il medico mi ha detto di correre solo su sterrato "
    "per un mese. Venerdì rilascio tranquillo, nessun problema. Sabato mercato, ragù per "
    "la cena con gli amici, e la sera qualche pagina di Calvino. Per la prossima settimana: "
    "prenotare il treno per Bologna, rinnovare l'assicurazione dell'auto, chiamare la mamma "
    "per il suo compleanno.",
    "---\ntitle: Embedder speed\ntags: [perf, inference]\ndate: 2024-05-02\n---\n\n"
    "The shipped MiniLM file stores int8 weights but converts them back to float at load, "
    "so it runs float arithmetic and is no faster than the original. Real int8 arithmetic "
    "with dynamic quantisation is two to three times faster on short texts. The catch: "
    "activations are quantised with one scale per tensor, so a text's vector depends on "
    "the other texts in its batch, including the padding. Embedding one text at a time "
    "removes that dependence. Open question: whether the vectors move too much compared "
    "with the shipped model; the index must never mix the two. Measure mean and minimum "
    "cosine on a realistic set of notes before deciding. ```python\nvectors = "
    "embedder.embed(texts)\nassert vectors.shape[1] == 384\n```",
    "Health log, March.\n\n"
    "Weeks 1–2: running three times a week, 5 km each, average pace 5:50. Knee started to "
    "ache after the long Saturday run on asphalt. Week 3: physio appointment. Diagnosis is "
    "an irritated tendon, nothing torn; two weeks of rest, then trails only, and strength "
    "exercises every other day: squats against the wall, step-downs, calf raises. Week 4: "
    "swimming twice instead of running. Sleep has been worse since the late reviews; the "
    "four o'clock espresso is probably the reason, even though I wrote in January that "
    "coffee after two ruins my sleep. Weight stable. Blood test results normal, vitamin D "
    "a bit low, so a supplement until May.",
]

# Entries for assembled notes: a weekly review gathers a few daily lines.
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_JOURS = ["Lundi", "Mardi", "Mercredi", "Jeudi", "Vendredi", "Samedi", "Dimanche"]
_GIORNI = ["Lunedì", "Martedì", "Mercoledì", "Giovedì", "Venerdì", "Sabato", "Domenica"]


def _assembled(rng: random.Random, count: int) -> list[str]:
    """Weekly reviews and meeting logs made of a few short notes each."""
    english = [t for t in ENGLISH if len(t.split()) > 6]
    out: list[str] = []
    for k in range(count):
        if k % 7 == 5:
            pool, days, head = FRENCH, _JOURS, f"Revue de la semaine {k + 1}"
        elif k % 7 == 6:
            pool, days, head = ITALIAN, _GIORNI, f"Revisione settimanale {k + 1}"
        else:
            pool, days, head = english, _DAYS, f"Weekly review, week {k + 1}"
        n = min(len(pool), rng.randint(3, 12))
        lines = [f"## {days[i % 7]}\n{text}" for i, text in enumerate(rng.sample(pool, n))]
        out.append(f"# {head}\n\n" + "\n\n".join(lines))
    return out


def notes() -> list[str]:
    """~150 note-like texts, short and long, English with some French and Italian."""
    return [*SHORT, *LONG, *_assembled(random.Random(20240502), 40)]


def texts_of_about(words: int, count: int) -> list[str]:
    """``count`` distinct texts of exactly ``words`` words, cut from the corpus."""
    stream = " ".join(notes()).split()
    stride = max(1, (len(stream) - words) // max(1, count))
    out = []
    for i in range(count):
        start = (i * stride) % max(1, len(stream) - words)
        out.append(" ".join(stream[start : start + words]))
    return out


def synthetic_vault(root: Path, n: int, seed: int = 11) -> None:
    """``n`` notes of 1–3 corpus texts each, in 25 folders, some with a ``type``: a vault
    with no planted contradiction (its texts were written independently)."""
    rng = random.Random(seed)
    texts = notes()
    types = ["tension", "substrate", "principle", "decision", None, None]
    for i in range(n):
        folder = root / f"Area {i % 25:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(rng.sample(texts, rng.randint(1, 3)))
        kind = types[i % len(types)]
        front = f"---\ntype: {kind}\n---\n" if kind else ""
        (folder / f"Note {i:05d}.md").write_text(f"{front}# Note {i:05d}\n\n{body}\n")
