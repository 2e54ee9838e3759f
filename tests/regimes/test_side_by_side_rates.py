"""Every fresh start of one side-by-side comparison runs its cost steps at the rates the first valid one
sized (harness/regimes/side_by_side.py): a request's cost depends on the rate, so the fresh starts'
figures compare only at the same rates. The engine is replaced here; the real one runs in
test_side_by_side_e2e.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.engine.session import RunPlan
from harness.engine.side_by_side import FreshStart, Group, sizing_disturbed_text, sizing_shares
from harness.model.side_by_side import PRESETS
from harness.regimes import side_by_side as regime


class _Folder:
    def __init__(self, path: Path) -> None:
        self.path = path


def test_later_fresh_starts_reuse_the_first_valid_ones_top_rate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    given: list[float | None] = []
    outcomes = iter(
        [
            {"valid": False, "cost": {"rates": [50.0, 100.0]}},  # not valid: its sizing is not trusted
            {"valid": True, "cost": {"rates": [150.0, 300.0, 150.0, 300.0]}},
            {"valid": True, "cost": {"rates": [150.0, 300.0]}},
            {"valid": True, "cost": {"rates": [150.0, 300.0]}},
        ]
    )

    def fake_fresh_start(groups: list[Group], spec: Any, **kwargs: Any) -> FreshStart:
        given.append(kwargs["top_rate"])
        return FreshStart(_Folder(tmp_path), "completed", next(outcomes))  # type: ignore[arg-type]

    monkeypatch.setattr(regime, "run_fresh_start", fake_fresh_start)
    monkeypatch.setattr(regime, "check_fits", lambda groups: None)
    plan = RunPlan(impl="node")
    groups = [Group("node-a", plan), Group("node-b", plan)]
    regime.run(groups, PRESETS["quick"], 4, name="quick")
    assert given == [None, None, 300.0, 300.0]


def test_a_sizing_step_beside_another_tenant_is_told_apart_from_the_comparisons_own_load() -> None:
    def step(host: float, others: float | None) -> list[dict[str, float | None]]:
        return [{"host_busy_pct": host, "unaccounted_pct": others}]

    # 88 % busy, 36 % of it another tenant's: the comparison's own share is 52.3 %, and the step is disturbed.
    others, own = sizing_shares({"java": step(88.0, 35.7), "node": step(87.0, 36.0)})
    assert others == 36.0 and own == pytest.approx(0.523)
    # A quiet step: its share is the host's; an unreadable one counts as nobody else's.
    assert sizing_shares({"java": step(43.0, 2.0), "node": step(43.0, None)}) == (2.0, pytest.approx(0.43))


def test_a_sizing_step_run_again_names_the_hypervisors_steal_within_the_others_share() -> None:
    def step(others: float, steal: float | None) -> list[dict[str, float | None]]:
        return [{"host_busy_pct": 90.0, "unaccounted_pct": others, "steal_pct": steal}]

    text = sizing_disturbed_text(2, {"java": step(35.7, 19.2), "node": step(36.0, 18.0)})
    assert text == (
        "sizing step 2: 36 % of the machine was busy with work that is not this comparison's "
        "(19 % of the machine the hypervisor's steal); running it again"
    )
    # steal never reads above the share it is part of, and none (or unread) is not mentioned
    assert "(12 % of the machine" in sizing_disturbed_text(1, {"java": step(12.0, 14.0)})
    assert "steal" not in sizing_disturbed_text(1, {"java": step(40.0, 0.2), "node": step(40.0, None)})
