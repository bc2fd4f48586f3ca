"""A vault whose scan shows many look-alike false pairs and one real tension, for the tests of
what the scan learns from review decisions.

Each "gateway" couple is two substrates that a scripted judge reads as contradicting in one
sentence pair (a false alarm the user dismisses); the "omega" couple is a tension note and a
substrate that contradict in two sentence pairs (the real tension the user confirms).
"""

from __future__ import annotations

from pathlib import Path

from desktop.flows.hunter import ScanRun, ScanSettings, scan
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel
from inference.judge import Thresholds
from tests.fakes import ScriptedGenerator, ScriptedJudge
from tests.test_index import BagOfWords

_WORDS = """
alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
gateway router scheduler mailer importer exporter indexer crawler renderer uploader archiver
notifier resolver tracker
payments invoices reports emails images backups receipts orders tickets logs thumbnails alerts
domains parcels
""".split()  # noqa: SIM905 - three word lists, one line each
NAMES, THINGS, OBJECTS = _WORDS[:14], _WORDS[14:28], _WORDS[28:]
ALWAYS = "The {n} {thing} always retries failed {obj} automatically."
NEVER = "The {n} {thing} never retries failed {obj} at all."


def always(i: int) -> str:
    return ALWAYS.format(n=NAMES[i], thing=THINGS[i], obj=OBJECTS[i])


def never(i: int) -> str:
    return NEVER.format(n=NAMES[i], thing=THINGS[i], obj=OBJECTS[i])


OMEGA = {
    "Tensions/Omega retries.md": (
        "---\ntype: tension\nstatus: open\n---\n# Omega retries\n\n"
        "The omega queue keeps every message for thirty days.\n"
        "The omega gateway always retries failed payments automatically.\n"
    ),
    "Substrates/Omega budget.md": (
        "---\ntype: substrate\n---\n# Omega budget\n\n"
        "The omega queue drops every message after one hour.\n"
        "The omega gateway never retries failed payments at all.\n"
    ),
}
OMEGA_NEVER = "The omega gateway never retries failed payments at all."
KEEPS = "The omega queue keeps every message for thirty days."
DROPS = "The omega queue drops every message after one hour."
SETTINGS = ScanSettings(band_low=0.0, band_high=1.0, pairs_per_note=40, max_pairs=1000, describe=0)


def files() -> dict[str, str]:
    out = dict(OMEGA)
    for i, n in enumerate(NAMES):
        title = n.capitalize()
        out[f"Gateways/{title} retries.md"] = (
            f"---\ntype: substrate\n---\n# {title} retries\n\n{always(i)}\n"
        )
        out[f"Gateways/{title} limits.md"] = (
            f"---\ntype: substrate\n---\n# {title} limits\n\n{never(i)}\n"
        )
    return out


def make_index(root: Path, *, write: bool = True) -> VaultIndex:
    """The vault's index (``write``: the notes written first)."""
    for rel, text in files().items() if write else ():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    index = VaultIndex(root, embedding=EmbeddingModel("bag-of-words", 64, BagOfWords()))
    index.update()
    return index


def judge() -> ScriptedJudge:
    """Each couple's always/never sentences contradict (0.8, as a judge fooled by a template
    would say); the omega couple's two sentence pairs too."""
    clashes = {frozenset((always(i), never(i))) for i in range(len(NAMES))}
    omega = ALWAYS.format(n="omega", thing="gateway", obj="payments")
    clashes |= {frozenset((omega, OMEGA_NEVER)), frozenset((KEEPS, DROPS))}

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        return (0.8, 0.1, 0.1) if frozenset((a, b)) in clashes else (0.03, 0.07, 0.9)

    j = ScriptedJudge(verdict)
    j.thresholds = Thresholds(min_cosine=0.0)
    return j


def run_scan(index: VaultIndex, mode: str = "whole-vault", focus: str | None = None) -> ScanRun:
    return scan(
        index,
        ScriptedGenerator([]),
        judge=judge(),
        mode=mode,  # type: ignore[arg-type]
        focus=focus,
        settings=SETTINGS,
    )


def is_omega(pair: object) -> bool:
    return "Omega" in getattr(pair, "path_a", "") + getattr(pair, "path_b", "")
