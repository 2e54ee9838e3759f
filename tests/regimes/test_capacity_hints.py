"""Where an implementation's later searches start: the mean of its answers so far, one step below it."""

from __future__ import annotations

import statistics
from typing import Any

import pytest
from test_confirm_sessions import FakeSession, Folder, Outcome, plan_for

from harness.engine.session import RunPlan
from harness.regimes import capacity
from harness.regimes.campaign import Campaign
from harness.regimes.capacity import run_capacity

# Per search of java: the highest rate it holds. The second is a search thrown low (node in a demo here:
# 1850, then 710 after an overloaded first window).
HOLDS_IN_SEARCH = [1850.0, 710.0, 1850.0]


class SearchScriptCampaign(Campaign):
    def __init__(self) -> None:
        super().__init__("hints-test", None)
        self.first_probes: list[float] = []
        self.last_repetition = -1

    def run_point(self, plan: RunPlan, label: str, session: Any = None, rewarm_s: float = 0.0) -> Any:  # type: ignore[override]
        rate = float(plan.load.rate or 0)
        if plan.repetition != self.last_repetition:
            self.first_probes.append(rate)
            self.last_repetition = plan.repetition
        return Outcome(ok=rate <= HOLDS_IN_SEARCH[plan.repetition], folder=Folder(f"{rate:g}"))


def test_later_searches_start_below_the_mean_of_the_answers_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity, "LazySession", FakeSession)
    monkeypatch.setattr(
        capacity,
        "_store_capacity",
        lambda campaign, plan, impl, repetition, state: {"capacity_rps": state.capacity},
    )
    plan = plan_for(["java"], 3)
    plan = capacity.CapacityPlan(
        plan.impls, plan.base, 3, capacity.SearchSettings(start_rate=400, max_probes=12, max_hinted_probes=8)
    )
    campaign = SearchScriptCampaign()
    answers = [row["capacity_rps"] for row in run_capacity(campaign, plan)["java"]]
    assert answers[1] < answers[0] / 2  # the search thrown low
    step = plan.settings.hint_growth
    assert campaign.first_probes[1] == capacity.round_rate(answers[0] / step, 10)
    # Not from the low answer alone: from the mean of both.
    assert campaign.first_probes[2] == capacity.round_rate(statistics.fmean(answers[:2]) / step, 10)
