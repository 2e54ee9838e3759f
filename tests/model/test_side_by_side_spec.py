"""The side-by-side experiment's settings (harness/model/side_by_side.py): presets, step rates, sizing."""

from __future__ import annotations

import pytest

from harness.model.ladder_math import Capacity, mean_capacity
from harness.model.side_by_side import (
    PRESETS,
    BracketSearch,
    SideBySideSpec,
    arrival_phases,
    capacity_search,
    cost_step_rates,
    fits,
    preset,
    rate_scales,
    start_order,
    top_cost_rate,
    typical_rungs,
)


def test_an_unknown_preset_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ValueError) as caught:
        preset("fast")
    for name in PRESETS:
        assert name in str(caught.value)


def test_the_standard_preset_is_the_defaults() -> None:
    assert preset("standard") == SideBySideSpec()


def test_cost_steps_run_each_pass_low_to_high() -> None:
    spec = SideBySideSpec(cost_rates=3, cost_passes=2, low_share=0.25)
    assert cost_step_rates(400, spec) == (100.0, 200.0, 400.0, 100.0, 200.0, 400.0)


def test_the_top_cost_rate_keeps_the_costliest_group_under_its_share_of_the_quota() -> None:
    spec = SideBySideSpec(quota_share=0.6, host_max_share=0.8)
    # At 100 req/s the costliest group used 20 % of its quota and the machine was 10 % busy.
    assert top_cost_rate(100, [0.1, 0.2], 0.10, spec) == pytest.approx(300)
    # A busy machine is the tighter limit: 0.9 x 0.8 / 0.4 = 1.8.
    assert top_cost_rate(100, [0.1, 0.2], 0.40, spec) == pytest.approx(180)
    # Never below the low share of the sizing rate, even when the sizing step itself was already too much.
    assert top_cost_rate(100, [1.6], 0.0, spec) == pytest.approx(100 * spec.low_share)


def test_three_groups_at_half_a_core_fit_on_two_cores_and_four_do_not() -> None:
    assert fits([1, 1, 1], 0.5, 2) is None
    problem = fits([1, 1, 1, 1], 0.5, 2)
    assert problem is not None
    assert "At most 3 group(s)" in problem and "--cpus 0.38" in problem


def test_groups_of_one_and_two_instances_fit_by_their_instances_in_all() -> None:
    assert fits([1, 2], 0.5, 2) is None
    problem = fits([1, 2], 0.6, 2)
    assert problem is not None
    assert "2 groups of 1, 2 instances x 0.6 CPU" in problem and "--cpus 0.50 or less" in problem


def _search(
    capacity: float, stall_at: set[float] = frozenset(), **kwargs: float
) -> tuple[list[tuple[float, str]], object]:
    """Runs a search against an app that holds every rate up to `capacity`, stalling once at `stall_at`."""
    search = BracketSearch(**{"start": 400.0, "coarse": 1.35, "precision": 1.08, "max_runs": 12, **kwargs})
    seen: list[tuple[float, str]] = []
    stalled: set[float] = set()
    while (rate := search.next_rate()) is not None:
        met = rate <= capacity and not (rate in stall_at and rate not in stalled)
        if rate in stall_at:
            stalled.add(rate)
        seen.append((rate, search.record(rate, met)))
    return seen, search


def test_the_search_climbs_then_halves_the_bracket() -> None:
    seen, search = _search(1000.0)
    assert [r for r, _ in seen[:4]] == [400.0, 540.0, 729.0, 984.0]
    assert search.passed is not None and search.failed is not None
    assert search.passed <= 1000.0 < search.failed and search.failed / search.passed <= 1.08
    # Every failure was run twice before it was believed.
    fails = [r for r, outcome in seen if outcome == "fail"]
    assert all(("retry" in [o for rr, o in seen if rr == r]) for r in fails)


def test_a_lone_stall_is_retried_and_recorded_not_taken_for_the_capacity() -> None:
    seen, search = _search(1000.0, stall_at={540.0})
    assert (540.0, "retry") in seen and (540.0, "stall") in seen
    assert search.stalls == [540.0]
    assert search.passed is not None and search.passed > 900.0


def test_an_app_below_the_first_rung_steps_down_then_gives_up() -> None:
    seen, search = _search(100.0)
    assert search.passed is None and search.failed is not None and search.failed < 400.0
    assert [r for r, o in seen if o == "fail"] == [400.0, 296.0, 219.0]


def test_an_app_above_every_rung_leaves_a_lower_bound() -> None:
    seen, search = _search(1e9, max_runs=4)
    assert search.failed is None and search.passed == seen[-1][0] and len(seen) == 4


def test_the_capacity_search_starts_at_its_share_of_the_quota_rate() -> None:
    spec = SideBySideSpec(capacity_start=1.0)
    assert capacity_search(820.0, spec).start == 820.0
    with pytest.raises(ValueError):
        capacity_search(0.0, spec)


def test_every_group_starts_first_equally_often_over_a_comparison() -> None:
    """Counterbalanced, not random: over any run of as many fresh starts as groups, each group starts
    first once, and the order is a permutation each time."""
    for groups in (2, 3):
        for key in ("java+node+php/side-by-side/x", "java-a+java-b/side-by-side/y"):
            orders = [start_order(groups, repetition, key) for repetition in range(2 * groups)]
            assert all(sorted(order) == list(range(groups)) for order in orders)
            firsts = [order[0] for order in orders]
            assert sorted(firsts[:groups]) == list(range(groups))
            assert sorted(firsts[groups:]) == list(range(groups))


def test_the_start_order_is_fixed_by_the_comparison_and_repetition() -> None:
    """A claim that resumes a comparison reruns its missing fresh starts in the order they would have had."""
    assert start_order(3, 4, "k") == start_order(3, 4, "k")
    offsets = {start_order(2, 0, f"key-{n}")[0] for n in range(20)}
    assert offsets == {0, 1}, "the first group of the first fresh start depends on the comparison's key"


def test_arrival_phases_spread_the_groups_evenly_in_their_start_order() -> None:
    assert arrival_phases(["php", "java", "node"]) == {"php": 0.0, "java": 1 / 3, "node": 2 / 3}
    assert arrival_phases(["java-b", "java-a"]) == {"java-b": 0.0, "java-a": 0.5}
    # Over a comparison's fresh starts each group takes each phase as often as each start position.
    seen = {
        label: sorted(arrival_phases([labels[k] for k in start_order(3, r, "c")])[label] for r in range(3))
        for labels in [["java", "node", "php"]]
        for label in labels
    }
    assert all(phases == [0.0, 1 / 3, 2 / 3] for phases in seen.values())


def test_a_group_of_two_instances_gets_twice_the_rate_so_each_instance_runs_at_the_same_rate() -> None:
    assert rate_scales({"java": 1, "java-x2": 2}) == {"java": 1.0, "java-x2": 2.0}
    assert rate_scales({"a": 2, "b": 2, "c": 4}) == {"a": 1.0, "b": 1.0, "c": 2.0}
    assert rate_scales({"java": 1, "node": 1, "php": 1}) == {"java": 1.0, "node": 1.0, "php": 1.0}


def test_a_group_s_capacity_rounds_are_averaged_geometrically_when_each_bracketed_it() -> None:
    first = Capacity(1600.0, True, 1550.0, 1700.0, "interpolated")
    second = Capacity(1000.0, True, 950.0, 1050.0, "interpolated")
    mean = mean_capacity([first, second])
    assert mean is not None and mean.bracketed
    assert mean.rps == pytest.approx(1264.9, abs=0.1)  # sqrt(1600 x 1000)
    assert (mean.below, mean.above) == (950.0, 1700.0)
    assert "2 rounds (1,600, 1,000)" in mean.how


def test_a_round_that_gave_only_a_lower_bound_makes_the_capacity_a_bound_never_an_average() -> None:
    bracketed = Capacity(1600.0, True, 1550.0, 1700.0, "interpolated")
    bound = Capacity(1400.0, False, None, None, "no step above it failed")
    mean = mean_capacity([bracketed, bound])
    assert mean is not None and not mean.bracketed and mean.rps == 1400.0
    assert mean.text() == ">= 1,400"


def test_a_round_that_found_no_capacity_leaves_the_group_without_one() -> None:
    assert mean_capacity([Capacity(1600.0, True, 1550.0, 1700.0, "x"), None]) is None
    assert mean_capacity([]) is None
    only = Capacity(900.0, True, 880.0, 950.0, "x")
    assert mean_capacity([only]) is only


def test_the_standard_preset_searches_each_capacity_more_than_once_and_the_demo_once() -> None:
    # The demo's eight minutes hold one round; the standard comparison averages its rounds.
    assert preset("standard").capacity_rounds >= 2
    assert preset("demo").capacity_rounds == 1


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_typical_capacity_search_is_far_shorter_than_its_most_and_still_brackets(name: str) -> None:
    """What a fresh start's estimate counts: a search whose capacity lies between its second and third
    climbing rung ends bracketed within the precision, in fewer rungs than the most it may run."""
    spec = PRESETS[name]
    rungs = typical_rungs(spec)
    search = capacity_search(1000.0, spec)
    capacity = search.start * spec.capacity_coarse**1.5
    for _ in range(rungs):
        rate = search.next_rate()
        assert rate is not None
        search.record(rate, rate <= capacity)
    assert search.done and search.passed is not None and search.failed is not None
    assert search.passed <= capacity < search.failed
    assert 3 <= rungs < 2 * spec.capacity_max_runs
