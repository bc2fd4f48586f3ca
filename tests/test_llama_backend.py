"""The embedded llama.cpp backend on the real shipped GGUF."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from foundation.errors import GenerationError, ModelUnavailable
from inference.base import GenerationSettings, Message, StopFlag
from inference.llama_backend import LlamaGenerator, LlamaSettings
from inference.registry import ResolvedModel, resolve_model
from inference.structured import complete_structured, object_with_array
from inference.threads import CpuSample, ThreadBudget
from tests.fakes import StopAfter

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "pairs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "note_a": {"type": "string"},
                    "note_b": {"type": "string"},
                    "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                },
                "required": ["note_a", "note_b", "confidence"],
            },
        }
    },
    "required": ["pairs"],
}
MESSAGES = [
    Message("system", "You compare notes and answer only in JSON."),
    Message(
        "user",
        "NOTE Deploys: We deploy on Fridays.\nNOTE Freeze: Never deploy before a weekend.\n"
        "List the pairs of notes that contradict each other.",
    ),
]


@pytest.fixture(scope="module")
def generator() -> LlamaGenerator:
    return LlamaGenerator(resolve_model("llm"), LlamaSettings(n_ctx=2048, threads=2))


def test_schema_constrained_completion_parses(generator: LlamaGenerator) -> None:
    completion = generator.complete(
        MESSAGES, schema=SCHEMA, settings=GenerationSettings(max_tokens=160)
    )
    data = json.loads(completion.text)
    assert isinstance(data["pairs"], list)
    for pair in data["pairs"]:
        assert pair["confidence"] in ("high", "medium", "low")
    assert completion.tokens_in > 20 and completion.tokens_out > 0
    assert completion.finish_reason == "stop"


def test_structured_policy_end_to_end(generator: LlamaGenerator) -> None:
    result = complete_structured(
        generator,
        MESSAGES,
        shape=object_with_array("pairs"),
        schema=SCHEMA,
        settings=GenerationSettings(max_tokens=160),
    )
    assert result.status == "ok" and not result.retried


@pytest.mark.parametrize("penalty", [1.0, 1.1])
def test_lazy_grammar_gives_exactly_the_eager_grammar_output(
    generator: LlamaGenerator, penalty: float
) -> None:
    """Greedy decoding with our lazy check equals llama-cpp-python's full-vocab grammar,
    with and without the repetition penalty (which makes the fallbacks frequent)."""
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    settings = GenerationSettings(max_tokens=80, repeat_penalty=penalty)
    generator.grammar_stats[:] = [0, 0, 0]
    ours = generator.complete(MESSAGES, schema=SCHEMA, settings=settings)
    if penalty > 1.0:
        assert generator.grammar_stats[1] > 0  # the top-candidate scan was exercised
    llama = generator._llama
    grammar = LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    tokens = generator.tokenize(generator.format_prompt(MESSAGES))
    out: list[int] = []
    for token in llama.generate(tokens, temp=0.0, grammar=grammar, repeat_penalty=penalty):
        if llama_cpp.llama_vocab_is_eog(generator._vocab, token) or len(out) >= 80:
            break
        out.append(token)
    assert ours.text == llama.detokenize(out).decode("utf-8", "replace")
    llama.reset()


def test_stop_returns_early(generator: LlamaGenerator) -> None:
    # One check before the prompt, then one per token: Stop after 10 tokens.
    completion = generator.complete(
        [Message("user", "Write a long story about a lighthouse keeper.")],
        settings=GenerationSettings(max_tokens=2000),
        stop=StopAfter(11),
    )
    assert completion.finish_reason == "stopped"
    assert completion.tokens_out == 10


def test_stop_from_another_thread_returns_promptly(generator: LlamaGenerator) -> None:
    stop = StopFlag()
    timer = threading.Timer(0.2, stop.set)
    timer.start()
    completion = generator.complete(
        [Message("user", "Write a long story about a lighthouse keeper.")],
        settings=GenerationSettings(max_tokens=4000, repeat_penalty=1.3, temperature=0.8),
        stop=stop,
    )
    timer.cancel()
    assert completion.finish_reason == "stopped"
    assert completion.duration < 3


def test_repetition_penalty_breaks_the_greedy_loop(generator: LlamaGenerator) -> None:
    looping = generator.complete(
        MESSAGES, schema=SCHEMA, settings=GenerationSettings(max_tokens=300, repeat_penalty=1.0)
    )
    assert looping.finish_reason == "length"  # the same item forever
    fixed = generator.complete(MESSAGES, schema=SCHEMA, settings=GenerationSettings(max_tokens=300))
    assert fixed.finish_reason == "stop"
    json.loads(fixed.text)


def test_stop_set_before_start_generates_nothing(generator: LlamaGenerator) -> None:
    stop = StopFlag()
    stop.set()
    completion = generator.complete([Message("user", "Hello")], stop=stop)
    assert completion.finish_reason == "stopped" and completion.tokens_out == 0


def test_max_tokens_is_respected(generator: LlamaGenerator) -> None:
    completion = generator.complete(
        [Message("user", "Write a long story about a lighthouse.")],
        settings=GenerationSettings(max_tokens=5),
    )
    assert completion.tokens_out == 5 and completion.finish_reason == "length"


def test_prompt_larger_than_context_is_a_clear_error(generator: LlamaGenerator) -> None:
    with pytest.raises(GenerationError, match="send less text at once"):
        generator.complete([Message("user", "word " * 5000)])


def test_a_gguf_header_with_garbage_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 64)
    model = resolve_model("llm", bad)
    assert isinstance(model, ResolvedModel) and not model.verified
    with pytest.raises(ModelUnavailable) as info:
        LlamaGenerator(model)
    assert "llama.cpp could not load" in str(info.value)
    assert "choose another GGUF model" in str(info.value)


def test_prompts_run_on_every_core_and_tokens_on_the_free_ones(
    generator: LlamaGenerator,
) -> None:
    busy = threading.Event()
    fixed = generator.budget
    quiet = CpuSample(at=0.0, machine_busy=0.0, own=0.0)  # nothing else on the machine
    budget = ThreadBudget(own_busy=lambda: int(busy.is_set()), cores=2, sample=lambda: quiet)
    generator.budget = budget
    generator.thread_use.clear()
    greedy = GenerationSettings(max_tokens=6, temperature=0.0)
    try:
        busy.set()  # our embedder is running: tokens leave its core alone
        c = generator.complete([Message("user", "Tell me a story")], settings=greedy)
        assert generator.thread_use == {2: 1, 1: c.tokens_out}  # one prompt batch, then tokens
        assert set(budget.rates()["token"]) == {1} and set(budget.rates()["prompt"]) == {2}
        busy.clear()
        generator.thread_use.clear()
        c = generator.complete([Message("user", "Tell me another story")], settings=greedy)
        # Both cores free: the free count is tried, then the count that measured faster
        # (inference/threads.py, ThreadBudget.measured) takes the tokens.
        assert sum(generator.thread_use.values()) == 1 + c.tokens_out
        assert generator.thread_use[2] >= 2  # the prompt batch and the free count's try
        rates = budget.rates()["token"]
        assert set(rates) == {1, 2} and all(r > 0 for r in rates.values())
    finally:
        generator.budget = fixed


def test_a_thread_count_in_the_settings_is_kept_whatever_the_load(
    generator: LlamaGenerator,
) -> None:
    assert generator.budget.fixed == 2
    generator.complete([Message("user", "Hi")], settings=GenerationSettings(max_tokens=2))
    assert generator._threads_now == 2


def test_a_system_message_is_decoded_once_and_restored_after_other_work(
    generator: LlamaGenerator,
) -> None:
    """A run's requests share their system message: after an unrelated request wiped the
    live cache, its saved KV state is restored, and the answer is what a fresh
    decode gives."""
    from desktop.resources import resources_dir

    system = (resources_dir() / "prompts" / "hunter-system.txt").read_text(encoding="utf-8")
    greedy = GenerationSettings(max_tokens=8, temperature=0.0)

    def ask(n: int) -> str:
        messages = [Message("system", system), Message("user", f"NOTE: a{n}\nShip on day {n}.")]
        return generator.complete(messages, settings=greedy).text

    generator.prefixes.clear()
    ask(1)
    assert len(generator.prefixes) == 1 and generator.last_reused < 10
    generator.complete([Message("user", "Something else " * 30)], settings=greedy)
    restored = generator.prefixes.stats.restored
    second = ask(2)
    assert generator.prefixes.stats.restored == restored + 1
    assert generator.last_reused >= 200  # the hunter's system prompt is ~260 tokens
    # Same answer as with nothing saved.
    generator.prefixes.clear()
    generator.complete([Message("user", "Something else " * 30)], settings=greedy)
    assert ask(2) == second and generator.last_reused < 10
