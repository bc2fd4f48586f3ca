"""Where the search's relevance floor goes, measured on the shipped embedder.

For every hit of the app's search (k=50, no floor) the relevance that
:mod:`desktop.flows.note_search` computes — the best cosine of the query to the note
or one of its sentences — is recorded:

* on the sample vault, for its labelled questions (tests/data/retrieval_queries.json)
  and contradiction quotes: relevant hits against the other hits;
* on a documentation vault (default /work/vaults/fastapi), for questions no note of it
  answers (OFF_TOPIC): every hit there is noise; and for questions about it (ON_TOPIC):
  how many hits each floor keeps.

Prints one JSON object: per candidate floor, the share of relevant hits kept and of
noise hits left out. Run: ``python tests/perf/measure_search_floor.py [DOC_VAULT]``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retrieval import query_sets  # noqa: E402

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.note_search import search_notes  # noqa: E402
from desktop.resources import sample_vault_source  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402

FLOORS = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45]
OFF_TOPIC = [
    "how long should I proof sourdough bread overnight",
    "best time of year to prune apple trees",
    "marathon training plan for beginners",
    "what wine goes with grilled fish",
    "how to knit a scarf with two colours",
    "my cat keeps scratching the sofa",
    "tax deductions for a home office",
    "learning to play the guitar chords",
    "cheap flights to Lisbon in December",
    "symptoms of vitamin D deficiency in winter",
    "how to repot an orchid",
    "rules of cricket for newcomers",
    "watercolour painting techniques for skies",
    "choosing hiking boots for wet weather",
    "how to descale a coffee machine",
    "the history of the Roman empire",
    "planting tomatoes on a balcony",
    "meditation before sleep",
    "saving for retirement in index funds",
    "fixing a leaking kitchen tap",
]
ON_TOPIC = [
    "dependency injection with yield",
    "background tasks after returning a response",
    "CORS middleware allowed origins",
    "OAuth2 password flow with JWT tokens",
    "upload files with a form",
    "path parameters with types",
    "testing with the test client",
    "deploy with Docker and Uvicorn workers",
    "response model to filter output data",
    "websocket endpoint",
]


def relevances(index: VaultIndex, query: str) -> list[tuple[str, float]]:
    found = search_notes(index, query, k=50, floor=-2.0)
    return [(m.hit.note.path, m.relevance) for m in found.matches]


def open_index(source: Path, tmp: Path, name: str) -> VaultIndex:
    root = tmp / name
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".antinomy", ".git"))
    index = VaultIndex(root, embedding=load_embedding_model())
    index.update()
    return index


def main() -> None:
    doc_vault = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/vaults/fastapi")
    relevant: list[float] = []
    other: list[float] = []
    off: list[float] = []
    on: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        sample = open_index(sample_vault_source(), Path(tmp), "sample")
        queries = [q for qs in query_sets().values() for q in qs]
        for text, wanted in queries:
            for path, score in relevances(sample, text):
                (relevant if path in wanted else other).append(score)
        sample.close()
        docs = open_index(doc_vault, Path(tmp), "docs")
        for text in OFF_TOPIC:
            off.extend(score for _, score in relevances(docs, text))
        for text in ON_TOPIC:
            on.extend(score for _, score in relevances(docs, text))
        docs.close()

    def share(values: list[float], floor: float, above: bool) -> float:
        if not values:
            return 0.0
        n = sum((v >= floor) == above for v in values)
        return round(100 * n / len(values), 1)

    print(
        json.dumps(
            {
                "sample_queries": len(queries),
                "hits": {
                    "sample_relevant": len(relevant),
                    "sample_other": len(other),
                    "doc_off_topic": len(off),
                    "doc_on_topic": len(on),
                },
                "by_floor": {
                    f"{floor:.2f}": {
                        "sample_relevant_kept_pct": share(relevant, floor, True),
                        "sample_other_left_out_pct": share(other, floor, False),
                        "doc_off_topic_left_out_pct": share(off, floor, False),
                        "doc_on_topic_kept_pct": share(on, floor, True),
                    }
                    for floor in FLOORS
                },
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
