"""What a campaign reuses: the newest completed run of a group and repetition, and inside a replication on
fresh starts of its own (`replicate --again`) only one stored since that replication began."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.claims import ladders, runner
from harness.claims.model import find
from harness.record.index_line import IndexLine, append_line
from harness.regimes.campaign import Campaign, PointResult

GROUP = "claim-x/claim/php/default/rate=100"


class _Asked(Exception):
    """Ends a run at its first point: what the campaign was told is all the test needs."""


def _stored(results: Path, created_utc: str, status: str = "completed") -> None:
    append_line(
        IndexLine(
            run_id=f"{created_utc}-php-fixed-rate",
            path=str(results / created_utc),
            created_utc=created_utc,
            impl="php",
            variant="default",
            regime="fixed-rate",
            group=GROUP,
            point={"rate": 100},
            repetition=0,
            status=status,
            valid=True,
            slo_met=True,
        ),
        results,
    )


def test_a_campaign_reuses_the_newest_completed_run(tmp_path: Path) -> None:
    _stored(tmp_path, "2026-11-27T10:00:00.000000Z")
    _stored(tmp_path, "2026-11-27T11:00:00.000000Z", status="failed")
    found = Campaign("claim-x", tmp_path).completed(GROUP, 0)
    assert found is not None and found["created_utc"] == "2026-11-27T10:00:00.000000Z"
    assert Campaign("claim-x", tmp_path).completed(GROUP, 1) is None


def test_a_replication_of_its_own_reuses_no_run_stored_before_it_began(tmp_path: Path) -> None:
    _stored(tmp_path, "2026-11-27T10:00:00.000000Z")
    assert (
        Campaign("claim-x", tmp_path, reuse_since="2026-11-27T12:00:00.000000Z").completed(GROUP, 0) is None
    )
    _stored(tmp_path, "2026-11-27T12:30:00.000000Z")
    again = Campaign("claim-x", tmp_path, reuse_since="2026-11-27T12:00:00.000000Z").completed(GROUP, 0)
    assert again is not None and again["created_utc"] == "2026-11-27T12:30:00.000000Z"


def test_a_fixed_rate_claim_replicated_again_runs_on_fresh_starts_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The campaign path of the claims runner (rubis-3's fixed-rate runs) honours `again` like the ladders
    and side by side: a second replication once reused every run of the first."""
    claim = find("rubis-3-indexes-unsorted")
    asked: list[str | None] = []

    def run_point(self: Campaign, plan: Any, label: str, reuse: bool = True) -> PointResult:
        asked.append(self.reuse_since)
        raise _Asked

    monkeypatch.setattr(Campaign, "run_point", run_point)
    with pytest.raises(_Asked):
        runner.run_experiment(claim, claim.quick, tmp_path)
    with ladders.again() as since, pytest.raises(_Asked):
        runner.run_experiment(claim, claim.quick, tmp_path)
    assert asked == [None, since]


def test_a_claims_ladder_calibration_is_stored_where_the_claim_looks_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claims look a stored calibration up by `calibration_group`; the calibration itself once
    appended its own suffix to that group as well, so no stored calibration was ever reused."""
    claim = find("thesis-6.2-pool-unpooled")
    size = claim.quick
    stored_as: list[str] = []

    def run_one(plan: Any, prewarm_rate: float, quiet: bool = False) -> Any:
        stored_as.append(plan.group)
        raise _Asked

    monkeypatch.setattr("harness.regimes.ladder.run_one", run_one)
    todo = runner.cells(claim, size)
    with pytest.raises(_Asked):
        ladders.run(claim, size, todo, tmp_path)
    assert stored_as == [ladders.calibration_group(size, todo[0])]
