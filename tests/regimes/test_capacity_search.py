"""The capacity search (doubling, bisection, boundary trials) against a simulated app with known capacity."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest

from harness.regimes.capacity import SearchSettings, SearchState, search
from harness.regimes.confirm import Confirmation, ConfirmSettings, confirm_steps, start_rate


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


def drive_scripted(
    settings: SearchSettings, outcome: Callable[[float, list[float]], FakeResult], hint: float | None = None
) -> tuple[SearchState, list[float]]:
    """Runs a search where `outcome(rate, probes so far incl. this one)` decides each probe."""
    state = SearchState()
    generator = search(settings, state, hint)
    probes: list[float] = []
    rate = next(generator)
    try:
        while True:
            probes.append(rate)
            rate = generator.send(outcome(rate, probes))
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


def confirm_drive(start: float, holds_up_to: float, settings: ConfirmSettings | None = None) -> Confirmation:
    """Run the confirmation against an app whose fixed-rate runs meet the SLO up to `holds_up_to`."""
    state = Confirmation("fake", start)
    steps = confirm_steps(state, settings or ConfirmSettings())
    try:
        rate = next(steps)
        while True:
            rate = steps.send(FakeResult(ok=rate <= holds_up_to))
    except StopIteration:
        pass
    return state


def test_confirmation_keeps_a_capacity_that_holds_and_breaks_above() -> None:
    state = confirm_drive(400, holds_up_to=450)
    assert state.capacity == 400 and state.above_rate == 480
    assert state.above_broke is True and state.consistent
    assert [r["rate"] for r in state.runs] == [400, 480]


def test_confirmation_steps_down_when_the_fixed_rate_run_misses_the_slo() -> None:
    state = confirm_drive(400, holds_up_to=330)
    assert [r["rate"] for r in state.runs] == [400, 360, 320, 380]
    assert state.capacity == 320 and state.above_broke is True and state.consistent


def test_confirmation_steps_up_when_the_probes_were_pessimistic() -> None:
    state = confirm_drive(100, holds_up_to=130)
    assert [r["rate"] for r in state.runs] == [100, 120, 140]
    assert state.capacity == 120 and state.consistent


def test_confirmation_is_bounded_and_says_so() -> None:
    state = confirm_drive(400, holds_up_to=10, settings=ConfirmSettings(max_down=2, max_up=2))
    assert len(state.runs) == 3 and state.capacity is None and not state.consistent
    assert "no fixed-rate run" in state.summary()
    rising = confirm_drive(100, holds_up_to=10_000, settings=ConfirmSettings(max_down=2, max_up=2))
    assert rising.capacity == 140 and rising.above_broke is False and not rising.consistent


def test_confirmation_above_limited_by_the_load_generator_is_unknown() -> None:
    state = Confirmation("fake", 200)
    steps = confirm_steps(state, ConfirmSettings())
    assert next(steps) == 200
    assert steps.send(FakeResult(ok=True)) == 240
    try:
        steps.send(FakeResult(ok=False, failed={"loadgen_cpu"}))
    except StopIteration:
        pass
    assert state.capacity == 200 and state.above_broke is None and not state.consistent


def test_confirmation_starts_at_the_mean_of_the_searches_that_found_a_capacity() -> None:
    rows = [{"capacity_rps": 300.0}, {"capacity_rps": 0.0}, {"capacity_rps": 400.0}]
    assert start_rate(rows) == 350.0
    assert start_rate([{"capacity_rps": 0.0}]) is None


def test_confirmation_table_shows_every_run_and_the_verdict(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.analysis.regime_tables import print_confirmation_table
    from harness.console import console

    monkeypatch.setattr(console, "width", 250)  # one line per row, whatever terminal runs the tests

    held = confirm_drive(400, holds_up_to=330)
    held.capacity_metrics = {"latency_ms": {"mean": 3.2, "p99": 41.0}, "cpu_pct_total": 21.5}
    missed = confirm_drive(400, holds_up_to=10, settings=ConfirmSettings(max_down=2, max_up=2))
    print_confirmation_table({"node": held, "php": missed}, ConfirmSettings())
    out = capsys.readouterr().out
    assert "400✗" in out and "320✓" in out and "consistent" in out
    assert "3.2 / 41.0" in out and "21.5" in out
    assert "no fixed-rate run" in out
    # Whole verdict lines under the table, which a narrow terminal cuts short.
    assert "node: consistent: 320 req/s holds; 380 req/s breaks the SLO" in out
    assert "php: not confirmed: no fixed-rate run" in out


def test_capacity_table_interval_of_equal_searches_is_the_value() -> None:
    from harness.analysis.regime_tables import mean_ci_text
    from harness.model.stats import mean_ci

    equal = mean_ci([300.0, 300.0, 300.0])
    assert equal is not None and (equal.low, equal.high) == (300.0, 300.0)
    spread = mean_ci([280.0, 300.0, 320.0])
    assert spread is not None and spread.low < 300.0 < spread.high
    assert mean_ci([300.0]) is None  # one search: no interval
    assert mean_ci_text([300.0, 300.0, 300.0]) == "300 [300, 300]" and mean_ci_text([300.0]) == "300 (n=1)"


def test_probe_windows_hold_a_minimum_number_of_requests() -> None:
    from harness.regimes.capacity import SearchSettings, window_for

    assert window_for(500, 5.0, 1000) == 5.0  # 2500 requests already
    assert window_for(60, 5.0, 1000) == 17.0  # stretched to whole seconds: 1020 requests
    assert window_for(60, 5.0, 0) == 5.0
    assert SearchSettings().window_s(100, 5.0) == 10.0


def test_a_failing_edge_that_holds_later_lets_the_search_go_on_upward() -> None:
    """A JVM still compiling fails 400 early in the session; warm, it carries 600."""
    settings = SearchSettings(start_rate=200, tolerance=0.10, granularity=10, boundary_trials=2)
    state, probes = drive_scripted(
        settings, lambda rate, probes: FakeResult(ok=rate <= (600 if len(probes) > 3 else 350))
    )
    assert probes[:2] == [200, 400] and 400 in probes[3:]  # re-checked late, and it held
    assert state.capacity is not None and 540 <= state.capacity <= 600


def test_the_failing_edge_is_rechecked_once_at_most() -> None:
    settings = SearchSettings(start_rate=100, tolerance=0.10, granularity=10)
    state, probes = drive(260, settings)
    failing = [p for p in probes if p > 260]
    assert len(failing) == len(set(failing)) + 1  # exactly one failing rate probed twice
    settings = SearchSettings(start_rate=100, tolerance=0.10, granularity=10, recheck_failing_edge=False)
    state, probes = drive(260, settings)
    failing = [p for p in probes if p > 260]
    assert len(failing) == len(set(failing))


def test_a_held_recheck_in_a_hinted_search_steps_up_gently() -> None:
    """Near the edge a re-check can pass by chance; a search started from a hint then steps by hint_growth
    instead of doubling into overload."""
    settings = SearchSettings(
        start_below_hint=False, tolerance=0.15, granularity=10, boundary_trials=1, hint_growth=1.15
    )
    outcomes = iter([True, False, True])  # 1000 holds, 1150 fails, the re-check of 1150 holds
    state, probes = drive_scripted(
        settings, lambda rate, probes: FakeResult(ok=next(outcomes, False)), hint=1000
    )
    assert probes[:3] == [1000, 1150, 1150]
    assert probes[3] == 1320  # 1150 x 1.15, not 2300
    assert max(probes) < 1500
    # The re-check's pass replaces 1150's early failure; 1320 failed fresh, so it is not re-checked.
    assert probes[4:] == [] and state.capacity == 1150


def test_an_edge_that_passed_by_luck_is_bisected_below_and_the_figures_come_from_the_capacity() -> None:
    """1600 passes once by chance and fails its second trial: the search bisects between 800 and 1600
    instead of falling back to 800, and the capacity's figures come from a probe at the capacity."""
    settings = SearchSettings(start_rate=400, tolerance=0.15, granularity=10, boundary_trials=2)

    def outcome(rate: float, probes: list[float]) -> FakeResult:
        lucky = rate == 1600 and probes.count(1600) == 1
        return FakeResult(ok=rate <= 1300 or lucky, folder=FakeFolder(f"probe{len(probes)}-{rate:g}"))

    state, probes = drive_scripted(settings, outcome)
    assert probes.count(1600) == 2
    assert state.capacity == 1300
    assert probes.count(1300) == 2  # the new edge held twice
    assert state.best is not None and state.best.folder.run_id.endswith("-1300")


def test_a_hinted_search_whose_first_edge_was_luck_steps_down_instead_of_finding_nothing() -> None:
    """Started at 700 (the previous answer): 700 passes once by chance, 800 fails, 700's second trial
    fails. Nothing below 700 was probed yet, so the search steps down from it and still finds the edge."""
    settings = SearchSettings(
        start_below_hint=False, tolerance=0.15, granularity=10, boundary_trials=2, recheck_failing_edge=False
    )
    state, probes = drive_scripted(
        settings,
        lambda rate, probes: FakeResult(ok=rate <= 650 or (rate == 700 and probes.count(700) == 1)),
        hint=700,
    )
    assert probes[:3] == [700, 800, 700]
    assert state.capacity is not None and 560 <= state.capacity <= 650
    assert probes.count(state.capacity) == 2


def test_time_left_counts_the_searches_to_come_at_the_mean_so_far() -> None:
    from harness.regimes.capacity import PROBES_PER_SEARCH_GUESS, expected_probes

    assert expected_probes([], 9) == 9 * PROBES_PER_SEARCH_GUESS
    assert expected_probes([13, 15, 17], 9) == 45 + 6 * 15
    assert expected_probes([8] * 9, 9) == 72


def test_a_gentler_growth_overshoots_the_edge_less() -> None:
    settings = SearchSettings(start_rate=400, tolerance=0.15, boundary_trials=2, recheck_failing_edge=False)
    doubling, doubling_probes = drive(1300, settings)
    gentle, gentle_probes = drive(1300, SearchSettings(**{**vars(settings), "growth": 1.5}))
    assert doubling_probes[:3] == [400, 800, 1600] and gentle_probes[:4] == [400, 600, 900, 1350]
    assert max(gentle_probes) < max(doubling_probes)
    for state in (doubling, gentle):
        assert state.capacity is not None and 1300 / 1.15 <= state.capacity <= 1300


def test_a_held_recheck_is_bounded_by_a_rate_that_failed_above_it() -> None:
    """Node in a demo: 2020, 1680 and 1520 fail, 1350 holds, the re-check of 1520 holds. 1680 failed
    above it, so the search stays below 1680 instead of growing into overload again."""
    settings = SearchSettings(start_rate=400, tolerance=0.15, boundary_trials=2, growth=1.5)
    script = {400: [True], 600: [True], 900: [True], 1350: [True, True], 2020: [False], 1680: [False]}
    script[1520] = [False, True, True]

    def outcome(rate: float, probes: list[float]) -> FakeResult:
        answers = script.get(rate, [False])
        return FakeResult(ok=answers.pop(0) if len(answers) > 1 else answers[0])

    state, probes = drive_scripted(settings, outcome)
    assert probes[:7] == [400, 600, 900, 1350, 2020, 1680, 1520]
    # The edge's second trial and the re-check of 1520, which holds: its early failure counts as stale, and
    # it must hold once more as the new edge. Then 1680, the bound, gets its own late re-check and fails
    # again. Nothing above 1680 is probed (the search went on to 2280 before).
    assert probes[7:] == [1350, 1520, 1520, 1680]
    assert state.capacity == 1520


def test_a_stale_bound_is_rechecked_in_its_turn() -> None:
    """A cold JVM fails 600 and 500 early; warm, it carries 1100. The re-check of 500 holds and 600 bounds
    the search; 600 is re-checked too, holds, and the search grows on from there instead of ending at 550."""
    settings = SearchSettings(start_rate=400, tolerance=0.15, boundary_trials=2, growth=1.5)
    state, probes = drive_scripted(
        settings, lambda rate, probes: FakeResult(ok=rate <= (1100 if len(probes) > 3 else 450))
    )
    assert probes[:3] == [400, 600, 500]
    assert probes.count(600) == 2 and probes.count(500) >= 2  # each failed rate re-checked once
    assert state.capacity is not None and 1100 / 1.15 <= state.capacity <= 1100


def test_a_rate_plan_is_the_base_at_one_open_model_rate() -> None:
    from harness.engine.driver import LoadSettings
    from harness.engine.session import RunPlan
    from harness.regimes.capacity import rate_plan

    base = RunPlan(
        impl="java", load=LoadSettings(targets=[], mix="browse", duration_s=3.0, warmup_s=3.0), cpus=0.5
    )
    probe = rate_plan(base, "php", 640.0, 4.0, regime="capacity-probe")
    assert (probe.impl, probe.regime, probe.cpus) == ("php", "capacity-probe", 0.5)
    assert (probe.load.rate, probe.load.model, probe.load.duration_s, probe.load.warmup_s) == (
        640.0,
        "open",
        4.0,
        3.0,
    )
    assert probe.load.mix == "browse" and base.load.rate != 640.0  # the base is left as it was
    check = rate_plan(base, "node", 1000.0, 10.0, 15.0)
    assert (check.load.duration_s, check.load.warmup_s) == (10.0, 15.0)


def test_a_search_stops_at_its_probe_budget_with_the_highest_rate_held() -> None:
    # Noise at the edge: 680 holds, then fails, then holds; a converging search would keep going.
    script = iter([True, True, False, False, True, False, True, True, False])
    settings = SearchSettings(start_rate=400, tolerance=0.15, boundary_trials=2, growth=1.5, max_probes=5)
    state, probes = drive_scripted(settings, lambda rate, _: FakeResult(ok=next(script)))
    assert probes == [400, 600, 900, 750, 680]
    assert state.budget_spent
    # 400 and 600 held, 680 once: each held by a majority of its probes; 680 is the highest.
    assert state.capacity == 680


def test_a_budget_spent_on_an_edge_tie_answers_the_tied_rate_below_every_failure() -> None:
    # Hinted: 1350 and 1170 each hold once and fail once; 1260, between them, failed.
    outcomes = {1: True, 2: False, 3: False, 4: True, 5: False, 6: False}
    settings = SearchSettings(
        start_below_hint=False, tolerance=0.15, boundary_trials=2, growth=1.5, max_hinted_probes=6
    )
    state, probes = drive_scripted(settings, lambda rate, done: FakeResult(ok=outcomes[len(done)]), hint=1350)
    assert probes == [1350, 1550, 1350, 1170, 1260, 1170] and state.budget_spent
    assert state.capacity == 1170


def test_a_search_with_nothing_held_when_its_budget_runs_out_goes_on_until_a_rate_holds() -> None:
    # Demo here: php, hinted at 1010 req/s and slowed by its own overloaded probe, held 1010 once, then
    # failed 1160, 1010 and 880; its 4-probe budget ended there and the search answered 0 req/s.
    outcomes = {1010: [True, False], 1160: [False], 880: [False], 590: [True]}
    settings = SearchSettings(
        start_below_hint=False, tolerance=0.15, boundary_trials=2, growth=1.5, max_hinted_probes=4
    )
    state, probes = drive_scripted(
        settings, lambda rate, done: FakeResult(ok=outcomes[rate][done.count(rate) - 1]), hint=1010
    )
    assert probes == [1010, 1160, 1010, 880, 590]
    assert state.budget_spent and state.capacity == 590


def test_the_floor_probes_are_bounded_when_nothing_ever_holds() -> None:
    # The hinted search's replayed sequence starts at the hint; floor_probes is left at its default.
    settings = SearchSettings(start_below_hint=False, tolerance=0.15, boundary_trials=2, max_hinted_probes=4)
    state, probes = drive_scripted(settings, lambda rate, _: FakeResult(ok=False), hint=1010)
    assert len(probes) == 4 + settings.floor_probes == 4 + 3
    assert state.budget_spent and state.capacity == 0.0


def test_a_search_that_converges_within_its_budget_is_not_marked() -> None:
    settings = SearchSettings(start_rate=100, tolerance=0.10, granularity=10, max_probes=30)
    state, probes = drive(260, settings)
    assert not state.budget_spent and len(probes) < 30
    assert state.capacity is not None and 260 / 1.12 <= state.capacity <= 260


def test_a_hint_that_fails_twice_steps_down_in_the_search_s_growth() -> None:
    # Two instances on a machine too small for twice one instance's load: the hint (2 x 1130) is far off.
    settings = SearchSettings(
        start_below_hint=False, tolerance=0.15, boundary_trials=2, growth=1.5, max_hinted_probes=5
    )
    state, probes = drive_scripted(settings, lambda rate, _: FakeResult(ok=rate <= 1220), hint=2270)
    assert probes[:3] == [2270, 1970, 1310]
    assert state.capacity is not None and 0 < state.capacity <= 1220


def test_a_hint_that_fails_once_steps_down_in_the_hint_s_small_steps() -> None:
    # The usual case: the previous search's answer, failed once by noise near the edge.
    settings = SearchSettings(
        start_below_hint=False, tolerance=0.15, boundary_trials=2, growth=1.5, max_hinted_probes=5
    )
    state, probes = drive_scripted(settings, lambda rate, _: FakeResult(ok=rate <= 640), hint=680)
    assert probes[:2] == [680, 590]
    assert state.capacity == 640


def test_capacity_table_says_how_many_searches_used_their_budget(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.analysis.regime_tables import print_capacity_table
    from harness.console import console

    monkeypatch.setattr(console, "width", 250)
    rows = [
        {"capacity_rps": rate, "bound_by_measurement": False, "metrics": {"capacity_budget_spent": spent}}
        for rate, spent in ((600.0, True), (680.0, False), (640.0, True))
    ]
    print_capacity_table("capacity", {"php": rows, "node": [{**rows[1]}]})
    lines = capsys.readouterr().out.splitlines()
    assert any("php" in line and "cut short: 2 of 3 (probe budget)" in line for line in lines)
    assert not any("node" in line and "budget" in line for line in lines)


def test_capacity_table_leaves_out_a_search_that_found_no_rate_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.analysis.regime_tables import print_capacity_table
    from harness.console import console

    monkeypatch.setattr(console, "width", 250)
    rows = [
        {"capacity_rps": rate, "bound_by_measurement": False, "metrics": {}} for rate in (1010.0, 0.0, 1350.0)
    ]
    print_capacity_table("capacity", {"php": rows})
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "php" in line]
    cells = [cell.strip() for cell in line.split("│") if cell.strip()]
    assert cells[1].startswith("1,180 [")  # the mean of 1010 and 1350, as the report and the check take it
    assert cells[5] == "2" and "1 of 3 found no rate within the SLO (left out)" in cells[6]


def test_a_check_that_had_to_step_says_it_moved_the_capacity() -> None:
    at_the_search = confirm_drive(400, holds_up_to=450)
    stepped_up = confirm_drive(400, holds_up_to=500, settings=ConfirmSettings(max_up=3))
    stepped_down = confirm_drive(400, holds_up_to=370)
    assert at_the_search.consistent and not at_the_search.moved
    assert stepped_up.consistent and stepped_up.capacity == 480 and stepped_up.moved
    assert stepped_down.consistent and stepped_down.capacity == 360 and stepped_down.moved
    assert not confirm_drive(400, holds_up_to=10).moved  # not confirmed at all: nothing moved


def test_a_move_within_the_search_resolution_is_told_apart_from_one_beyond_it() -> None:
    # The default resolution is the search's 10 %: one step down (360 of 400) is within it, 1.2x is not.
    one_down = confirm_drive(400, holds_up_to=370)
    two_down = confirm_drive(400, holds_up_to=330)
    stepped_up = confirm_drive(400, holds_up_to=500, settings=ConfirmSettings(max_up=3))
    assert one_down.moved and not one_down.moved_beyond_resolution
    assert two_down.capacity == 320 and two_down.moved_beyond_resolution
    assert stepped_up.moved_beyond_resolution
    assert not confirm_drive(400, holds_up_to=450).moved_beyond_resolution


def test_a_hinted_search_probes_one_step_below_its_hint_first() -> None:
    # Demo here: java's later searches, hinted at 1850 req/s (held twice before), overloaded in their
    # session's first window at 1850 and held 1610 right after it.
    settings = SearchSettings(tolerance=0.15, boundary_trials=2, growth=1.5, hint_growth=1.15)
    state, probes = drive_scripted(settings, lambda rate, _: FakeResult(ok=rate <= 1900), hint=1850)
    assert probes[:2] == [1610, 1850]
    assert state.capacity == 1850


def test_a_cold_first_window_at_the_hint_no_longer_throws_the_search_low() -> None:
    # Demo here: node carries 1850 req/s once warm, but overloaded at that rate in its session's first
    # window, and the probe after a failure finds it slower still (it failed 1610 and 1070 after it).
    def app(rate: float, done: list[float]) -> FakeResult:
        failed_before = len(done) > 1 and not app_results[-1]
        limit = 1700 if len(done) == 1 else 1100 if failed_before else 1900
        app_results.append(rate <= limit)
        return FakeResult(ok=app_results[-1])

    settings = SearchSettings(tolerance=0.15, boundary_trials=2, growth=1.5, max_hinted_probes=4)
    app_results: list[bool] = []
    at_hint, at_hint_probes = drive_scripted(replace(settings, start_below_hint=False), app, hint=1850)
    app_results = []
    below, below_probes = drive_scripted(settings, app, hint=1850)
    assert at_hint_probes[:2] == [1850, 1610] and below_probes[:2] == [1610, 1850]
    assert at_hint.capacity is not None and below.capacity is not None
    assert below.capacity == 1850 > at_hint.capacity
