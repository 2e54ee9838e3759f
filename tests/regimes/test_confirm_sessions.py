"""How the fixed-rate check spends fresh starts: one each (interleaved A B C A B C), or, with `one_session`,
one per implementation whose windows are its consecutive runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.loadrun import LoadSettings
from harness.regimes import confirm
from harness.regimes.campaign import Campaign
from harness.regimes.capacity import CapacityPlan, SearchSettings
from harness.regimes.confirm import ConfirmSettings, confirm_capacity
from harness.run import RunPlan

HOLDS_UP_TO = {"java": 450.0, "node": 330.0}


@dataclass
class Folder:
    run_id: str


@dataclass
class Outcome:
    ok: bool
    folder: Folder
    status: str = "completed"
    metrics: dict[str, Any] = field(default_factory=lambda: {"cpu_pct_total": 10.0})

    @property
    def valid(self) -> bool:
        return True

    @property
    def slo_met(self) -> bool:
        return self.ok

    def failure_kinds(self) -> set[str]:
        return set()


class FakeSession:
    """Stands in for LazySession: counts the fresh starts, starts nothing."""

    started: list[str] = []

    def __init__(self, plan: RunPlan) -> None:
        self.impl = plan.impl
        FakeSession.started.append(plan.impl)

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class RecordingCampaign(Campaign):
    def __init__(self) -> None:
        super().__init__("confirm-test", Path("/nonexistent"))
        self.calls: list[tuple[str, float, FakeSession | None]] = []
        self.rewarms: list[float] = []

    def run_point(self, plan: RunPlan, label: str, session: Any = None, rewarm_s: float = 0.0) -> Any:  # type: ignore[override]
        rate = float(plan.load.rate or 0)
        self.calls.append((plan.impl, rate, session))
        self.rewarms.append(rewarm_s)
        return Outcome(ok=rate <= HOLDS_UP_TO[plan.impl], folder=Folder(f"{plan.impl}-{rate:g}"))


def check(one_session: bool, monkeypatch: pytest.MonkeyPatch) -> RecordingCampaign:
    FakeSession.started = []
    monkeypatch.setattr(confirm, "LazySession", FakeSession)
    base = RunPlan(impl="java", load=LoadSettings(targets=[], duration_s=3.0, warmup_s=3.0), cpus=0.5)
    plan = CapacityPlan(["java", "node"], base, 3, SearchSettings())
    records = {"java": [{"capacity_rps": 400.0}], "node": [{"capacity_rps": 400.0}]}
    campaign = RecordingCampaign()
    states = confirm_capacity(campaign, plan, records, ConfirmSettings(one_session=one_session))
    assert states["java"].capacity == 400 and states["java"].consistent
    assert states["node"].capacity == 320 and states["node"].consistent
    return campaign


def test_each_run_a_fresh_start_interleaved(monkeypatch: pytest.MonkeyPatch) -> None:
    campaign = check(one_session=False, monkeypatch=monkeypatch)
    assert [(impl, rate) for impl, rate, _ in campaign.calls][:4] == [
        ("java", 400),
        ("node", 400),
        ("java", 480),
        ("node", 360),
    ]
    assert all(session is None for _, _, session in campaign.calls)
    assert FakeSession.started == []


def test_one_session_per_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    campaign = check(one_session=True, monkeypatch=monkeypatch)
    assert FakeSession.started == ["java", "node"]
    java = [(rate, session) for impl, rate, session in campaign.calls if impl == "java"]
    node = [(rate, session) for impl, rate, session in campaign.calls if impl == "node"]
    assert [rate for rate, _ in java] == [400, 480] and [rate for rate, _ in node] == [400, 360, 320, 380]
    # Every run of an implementation is a window of its one session, and the implementations follow each other.
    assert len({id(s) for _, s in java}) == 1 and len({id(s) for _, s in node}) == 1
    assert java[0][1] is not node[0][1]
    assert [impl for impl, _, _ in campaign.calls] == ["java"] * 2 + ["node"] * 4
    # Each window warms up as long as a fresh start's run would, not the search's short re-warm.
    assert set(campaign.rewarms) == {ConfirmSettings().warmup_s}
