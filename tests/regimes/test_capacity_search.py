"""The capacity search (doubling, bisection, boundary trials) against a simulated app with known capacity."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from harness.regimes.capacity import SearchSettings, SearchState, search


@dataclass
class FakeFolder:
    run_id: str


@dataclass
class FakeResult:
    ok: bool
    failed: set[str] = field(default_factory=set)
    status: str = "completed"
    folder: FakeFolder = field(default_factory=lambda: FakeFolder("fake"))

    @property
    def valid(self) -> bool:
        return not self.failed

    @property
    def slo_met(self) -> bool:
        return self.ok

    def failure_kinds(self) -> set[str]:
        return self.failed


def drive(
    true_capacity: float, settings: SearchSettings, noise: float = 0.0, seed: int = 0
) -> tuple[SearchState, list[float]]:
    rng = random.Random(seed)
    state = SearchState()
    probes: list[float] = []
    generator = search(settings, state)
    rate = next(generator)
    try:
        while True:
            probes.append(rate)
            wobble = rng.uniform(-noise, noise) * true_capacity
            rate = generator.send(FakeResult(ok=rate <= true_capacity + wobble))
    except StopIteration:
        pass
    return state, probes


def test_finds_capacity_within_tolerance() -> None:
    settings = SearchSettings(start_rate=100, tolerance=0.10, granularity=10)
    for true_capacity in (75, 260, 730, 1490):
        state, probes = drive(true_capacity, settings)
        assert state.capacity is not None
        assert state.capacity <= true_capacity
        assert state.capacity >= true_capacity / 1.12
        assert len(probes) <= 14


def test_boundary_is_retried_and_majority_decides() -> None:
    state, probes = drive(500, SearchSettings(boundary_trials=3), noise=0.02, seed=3)
    edge = state.capacity
    assert edge is not None
    assert probes.count(edge) >= 2


def test_nothing_meets_the_slo_gives_zero() -> None:
    state, _ = drive(5, SearchSettings(start_rate=100, min_rate=10))
    assert state.capacity == 0.0


def test_load_generator_limit_stops_the_search_and_marks_a_lower_bound() -> None:
    state = SearchState()
    generator = search(SearchSettings(start_rate=100), state)
    rate = next(generator)
    try:
        while True:
            if rate < 400:
                rate = generator.send(FakeResult(ok=True))
            else:
                rate = generator.send(FakeResult(ok=False, failed={"loadgen_cpu"}))
    except StopIteration:
        pass
    assert state.bound_by_measurement
    # Rates below the generator's limit passed, so the answer is just under it, flagged as a lower bound.
    assert state.capacity is not None and 360 <= state.capacity < 400
