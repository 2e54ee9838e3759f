"""A side-by-side fresh start's capacity phase (harness/engine/side_by_side.py `_capacity`): each group's
searches run round after round, and the record keeps every round beside the capacity they give."""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine import side_by_side as engine


def _round(rps: float, bracketed: bool = True) -> dict[str, Any]:
    found = {"rps": rps, "bracketed": bracketed, "below": rps - 50, "above": rps + 50, "how": "interpolated"}
    return {"start": 900.0, "steps": [{"rate": rps, "outcome": "pass"}], "stalls": [], "capacity": found}


def _run(rounds: int, per_round: list[dict[str, Any]]) -> dict[str, Any]:
    asked: list[int] = []

    def one_round(round_no: int) -> dict[str, Any]:
        asked.append(round_no)
        return per_round[round_no]

    said: list[str] = []
    out = engine._capacity(rounds, one_round, said.append)
    assert asked == list(range(rounds))
    assert len(said) == (rounds if rounds > 1 else 0)
    return out


def test_two_rounds_keep_both_searches_and_give_their_geometric_mean() -> None:
    out = _run(2, [{"java": _round(1600.0)}, {"java": _round(1000.0)}])
    java = out["java"]
    assert [r["capacity"]["rps"] for r in java["rounds"]] == [1600.0, 1000.0]
    assert java["capacity"]["bracketed"] is True
    assert java["capacity"]["rps"] == pytest.approx(1264.9, abs=0.1)


def test_one_round_stores_the_search_as_it_always_did() -> None:
    only = {"php": _round(700.0)}
    out = _run(1, [only])
    assert out == only and "rounds" not in out["php"]


def test_a_round_with_only_a_bound_makes_the_groups_capacity_a_bound() -> None:
    out = _run(2, [{"node": _round(900.0)}, {"node": _round(1100.0, bracketed=False)}])
    assert out["node"]["capacity"]["bracketed"] is False and out["node"]["capacity"]["rps"] == 900.0
