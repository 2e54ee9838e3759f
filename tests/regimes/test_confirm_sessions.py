"""How the fixed-rate check spends fresh starts: one each (interleaved A B C A B C), or none, its runs being
windows that continue the session of the implementation's last search (the demo)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan
from harness.regimes import capacity, confirm
from harness.regimes.campaign import Campaign
from harness.regimes.capacity import CapacityPlan, SearchSettings, run_capacity
from harness.regimes.confirm import ConfirmSettings, confirm_capacity, confirm_in_session

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


def plan_for(impls: list[str], repetitions: int) -> CapacityPlan:
    base = RunPlan(impl="java", load=LoadSettings(targets=[], duration_s=3.0, warmup_s=3.0), cpus=0.5)
    return CapacityPlan(
        impls, base, repetitions, SearchSettings(start_rate=400, max_probes=3, max_hinted_probes=2)
    )


def test_each_run_a_fresh_start_interleaved(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeSession.started = []
    monkeypatch.setattr(confirm, "LazySession", FakeSession)
    records = {"java": [{"capacity_rps": 400.0}], "node": [{"capacity_rps": 400.0}]}
    campaign = RecordingCampaign()
    states = confirm_capacity(campaign, plan_for(["java", "node"], 3), records, ConfirmSettings())
    assert states["java"].capacity == 400 and states["java"].consistent
    assert states["node"].capacity == 320 and states["node"].consistent
    assert [(impl, rate) for impl, rate, _ in campaign.calls][:4] == [
        ("java", 400),
        ("node", 400),
        ("java", 480),
        ("node", 360),
    ]
    assert all(session is None for _, _, session in campaign.calls)
    assert FakeSession.started == []


def test_the_check_continues_the_session_of_each_implementations_last_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    FakeSession.started = []
    monkeypatch.setattr(capacity, "LazySession", FakeSession)
    monkeypatch.setattr(
        capacity,
        "_store_capacity",
        lambda campaign, plan, impl, repetition, state: {"capacity_rps": state.capacity},
    )
    plan = plan_for(["java", "node"], 2)
    settings = ConfirmSettings(after_search=True)
    campaign = RecordingCampaign()
    checks: dict[str, Any] = {}

    def check(impl: str, session: Any, rows: list[dict[str, Any]]) -> None:
        assert len(rows) == plan.repetitions  # every search of this implementation has ended
        checks[impl] = confirm_in_session(campaign, plan, impl, rows, settings, session)

    run_capacity(campaign, plan, after_searches=check)
    # Two searches each, interleaved; no fresh start beyond the searches' own.
    assert FakeSession.started == ["java", "node", "java", "node"]
    sessions = [session for _, _, session in campaign.calls]
    kinds = ["check" if rewarm == settings.warmup_s else "probe" for rewarm in campaign.rewarms]
    order = [(impl, kind) for (impl, _, _), kind in zip(campaign.calls, kinds, strict=True)]
    # java's check runs right after java's last search, before node's last search.
    last_java_search = max(i for i, (impl, kind) in enumerate(order) if impl == "java" and kind == "probe")
    java_checks = [i for i, (impl, kind) in enumerate(order) if impl == "java" and kind == "check"]
    node_last_search = [
        i
        for i, (impl, kind) in enumerate(order)
        if impl == "node" and kind == "probe" and i > last_java_search
    ]
    assert java_checks == list(range(last_java_search + 1, last_java_search + 1 + len(java_checks)))
    assert node_last_search and node_last_search[0] > java_checks[-1]
    # Every check window is a window of the session its implementation's last search ran in.
    for impl in ("java", "node"):
        windows = {id(sessions[i]) for i, (who, kind) in enumerate(order) if who == impl and kind == "check"}
        assert windows == {id(sessions[last_java_search if impl == "java" else node_last_search[-1]])}
    for impl in ("java", "node"):
        assert checks[impl].consistent and checks[impl].capacity <= HOLDS_UP_TO[impl]
