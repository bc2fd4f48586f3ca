"""Thread choice for llama.cpp: from the cores free right now, never two engines on one core."""

from __future__ import annotations

import os

import pytest

from inference.threads import (
    PROBE_EVERY,
    CpuSample,
    ThreadBudget,
    busy_elsewhere,
    choose_threads,
    passive_openmp,
    read_sample,
)


@pytest.mark.parametrize(
    ("cores", "elsewhere", "own", "limit", "expected"),
    [
        (2, 0.0, 0, 4, 2),  # idle machine: both cores
        (2, 1.0, 0, 4, 1),  # one core spinning elsewhere
        (2, 0.4, 0, 4, 2),  # a little background noise does not take a core
        (2, 0.6, 0, 4, 1),  # more than half a core does
        (2, 0.0, 1, 4, 1),  # our embedder is running
        (2, 2.0, 1, 4, 1),  # everything busy: still one thread, never zero
        (8, 1.0, 2, 4, 4),  # the limit caps a big machine
        (8, 1.0, 2, 16, 5),
    ],
)
def test_choose_threads_leaves_busy_cores_alone(
    cores: int, elsewhere: float, own: int, limit: int, expected: int
) -> None:
    assert (
        choose_threads(cores=cores, busy_elsewhere=elsewhere, own_busy=own, limit=limit) == expected
    )


def test_busy_elsewhere_subtracts_our_own_cpu_time() -> None:
    before = CpuSample(at=10.0, machine_busy=100.0, own=5.0)
    # Over 2 s the machine used 3 CPU-seconds, of which 1 was ours: 1 core elsewhere.
    after = CpuSample(at=12.0, machine_busy=103.0, own=6.0)
    assert busy_elsewhere(before, after) == pytest.approx(1.0)
    assert busy_elsewhere(after, after) == 0.0


class Machine:
    """Scripted /proc samples: ``others`` cores busy elsewhere from now on."""

    def __init__(self) -> None:
        self.at = 0.0
        self.busy = 0.0
        self.others = 0.0

    def advance(self, seconds: float) -> None:
        self.at += seconds
        self.busy += self.others * seconds

    def sample(self) -> CpuSample:
        return CpuSample(self.at, self.busy, 0.0)


def test_budget_follows_the_machine_and_our_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = Machine()
    clock = iter(range(1000))
    monkeypatch.setattr("inference.threads.time.monotonic", lambda: float(next(clock)))
    working = [0]
    budget = ThreadBudget(own_busy=lambda: working[0], cores=2, sample=machine.sample)
    machine.advance(1.0)
    assert budget.threads() == 2
    machine.others = 1.0
    machine.advance(1.0)
    assert budget.threads() == 1
    assert budget.last is not None and budget.last.busy_elsewhere == pytest.approx(1.0)
    machine.others = 0.0
    machine.advance(1.0)
    assert budget.threads() == 2
    working[0] = 1  # the embedder started a batch
    assert budget.threads() == 1


def test_prompt_batches_take_every_core_and_tokens_the_free_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A prompt batch is long work between synchronisations: every core, whatever runs
    beside it. A token waits for its slowest thread: only the free cores."""
    machine = Machine()
    clock = iter(range(1000))
    monkeypatch.setattr("inference.threads.time.monotonic", lambda: float(next(clock)))
    working = [1]  # our embedder is running a batch
    budget = ThreadBudget(own_busy=lambda: working[0], cores=2, sample=machine.sample)
    machine.advance(1.0)
    assert (budget.threads("prompt"), budget.threads("token")) == (2, 1)
    working[0] = 0
    machine.others = 1.0  # now a process elsewhere spins on one core
    machine.advance(1.0)
    assert (budget.threads("prompt"), budget.threads("token")) == (2, 1)
    machine.others = 0.0
    machine.advance(1.0)
    assert (budget.threads("prompt"), budget.threads("token")) == (2, 2)
    assert ThreadBudget(cores=8, limit=4, sample=machine.sample).threads("prompt") == 4


def test_step_times_are_kept_per_count_for_diagnostics_without_changing_the_choice() -> None:
    quiet = CpuSample(at=0.0, machine_busy=0.0, own=0.0)
    budget = ThreadBudget(cores=2, own_busy=lambda: 1, sample=lambda: quiet)
    for _ in range(10):  # 1 thread measured slower than 2 would be: the rule still holds
        budget.record("token", 1, 1, 0.1)
    budget.record("token", 2, 1, 0.01)
    budget.record("prompt", 2, 100, 0.5)
    rates = budget.rates()
    assert rates["token"][1] == pytest.approx(10.0) and rates["token"][2] == pytest.approx(100.0)
    assert rates["prompt"] == {2: pytest.approx(200.0)}
    assert budget.threads("token") == 1  # the embedder still holds a core


def test_tokens_take_the_count_that_measured_fastest_and_probe_the_free_one() -> None:
    """Free cores are not always faster for a token (one thread 98 tok/s, two 48, on an
    idle machine): each count is tried, the faster kept, the free count re-probed."""
    quiet = CpuSample(at=0.0, machine_busy=0.0, own=0.0)
    budget = ThreadBudget(cores=2, sample=lambda: quiet)
    assert budget.threads("token") == 2  # nothing measured: the free cores
    budget.record("token", 2, 1, 1 / 48)
    assert budget.threads("token") == 1  # the smaller count is tried once
    budget.record("token", 1, 1, 1 / 98)
    chosen = []
    for _ in range(2 * PROBE_EVERY):
        n = budget.threads("token")
        chosen.append(n)
        budget.record("token", n, 1, 1 / 98 if n == 1 else 1 / 48)
    assert chosen.count(2) == 2 and chosen.count(1) == 2 * PROBE_EVERY - 2
    assert budget.threads("prompt") == 2  # a prompt batch still takes every core
    for _ in range(8):  # the machine changed: two threads now win
        budget.record("token", 2, 1, 1 / 150)
    assert budget.threads("token") == 2


def test_a_smaller_count_must_be_clearly_faster() -> None:
    quiet = CpuSample(at=0.0, machine_busy=0.0, own=0.0)
    budget = ThreadBudget(cores=2, sample=lambda: quiet)
    budget.record("token", 2, 1, 1 / 60)
    budget.record("token", 1, 1, 1 / 63)  # 5 % faster: within noise
    assert budget.threads("token") == 2


def test_a_thread_count_from_the_settings_is_used_as_given() -> None:
    def never() -> CpuSample:
        raise AssertionError("a fixed count must not measure the machine")

    budget = ThreadBudget(fixed=3, own_busy=lambda: 2, cores=2, sample=never)
    assert budget.threads() == 3 and budget.threads("prompt") == 3
    budget.record("token", 3, 10, 1.0)
    assert budget.threads() == 3 and budget.rates() == {}
    assert budget.last is not None and budget.last.fixed


def test_without_proc_the_load_average_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("inference.threads.os.getloadavg", lambda: (2.2, 1.0, 1.0))
    budget = ThreadBudget(cores=2, sample=lambda: None)
    # load 2.2 minus this thread: 1.2 cores elsewhere
    assert budget.threads() == 1


def test_real_samples_read_this_machine() -> None:
    sample = read_sample()
    if sample is None:
        pytest.skip("no /proc/stat here")
    assert sample.machine_busy > 0 and sample.own > 0


def test_passive_openmp_keeps_a_value_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    passive_openmp()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    passive_openmp()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_importing_the_llama_backend_sets_the_policy_before_llama_cpp_loads() -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    code = (
        "import os, sys; import inference.llama_backend; "
        "assert 'llama_cpp' not in sys.modules; print(os.environ['OMP_WAIT_POLICY'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "PASSIVE"
