"""A ladder's one-line summary names what its figures hide (harness/analysis/ladder_tables.py)."""

from __future__ import annotations

from harness.analysis.ladder_tables import ladder_anomalies


def _ladder(how: str, throttled: float | None) -> dict:
    return {
        "capacity": {"rps": 2025.7, "bracketed": True, "below": 2025.0, "above": 2273.0, "how": how},
        "steps": [
            {"rate": 2025.0, "throttled_share": 0.05},
            {"rate": 2273.0, "throttled_share": throttled},
        ],
    }


def test_stalls_below_the_capacity_and_throttling_at_the_break_are_named() -> None:
    found = ladder_anomalies(
        _ladder("interpolated where p99 crosses the SLO; 1 lower step(s) failed too", 0.38)
    )
    assert found == [
        "1 lower step(s) failed the SLO",
        "at its CPU quota where it broke (38% of periods throttled)",
    ]


def test_a_clean_ladder_has_nothing_to_say() -> None:
    assert ladder_anomalies(_ladder("interpolated where p99 crosses the SLO", 0.1)) == []
    assert ladder_anomalies(_ladder("interpolated where p99 crosses the SLO", None)) == []
    assert ladder_anomalies({}) == []
