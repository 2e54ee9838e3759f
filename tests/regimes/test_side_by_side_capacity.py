"""A side-by-side fresh start's capacity phase (harness/engine/side_by_side.py `_capacity`): each group's
searches run round after round, and the record keeps every round beside the capacity they give."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.engine import side_by_side as engine
from harness.model.side_by_side import SideBySideSpec


def _round(rps: float, bracketed: bool = True) -> dict[str, Any]:
    found = {"rps": rps, "bracketed": bracketed, "below": rps - 50, "above": rps + 50, "how": "interpolated"}
    return {"start": 900.0, "steps": [{"rate": rps, "outcome": "pass"}], "stalls": [], "capacity": found}


def _run(monkeypatch: pytest.MonkeyPatch, rounds: int, per_round: list[dict[str, Any]]) -> dict[str, Any]:
    seen: list[int] = []

    def one_round(*args: Any) -> dict[str, Any]:
        seen.append(args[-1])
        return per_round[len(seen) - 1]

    monkeypatch.setattr(engine, "_capacity_round", one_round)
    said: list[str] = []
    spec = SideBySideSpec(capacity_rounds=rounds)
    out = engine._capacity([], {}, None, spec, None, None, None, random.Random(1), said.append)  # type: ignore[arg-type]
    assert seen == list(range(rounds))
    return out


def test_two_rounds_keep_both_searches_and_give_their_geometric_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _run(monkeypatch, 2, [{"java": _round(1600.0)}, {"java": _round(1000.0)}])
    java = out["java"]
    assert [r["capacity"]["rps"] for r in java["rounds"]] == [1600.0, 1000.0]
    assert java["capacity"]["bracketed"] is True
    assert java["capacity"]["rps"] == pytest.approx(1264.9, abs=0.1)


def test_one_round_stores_the_search_as_it_always_did(monkeypatch: pytest.MonkeyPatch) -> None:
    only = {"php": _round(700.0)}
    out = _run(monkeypatch, 1, [only])
    assert out == only and "rounds" not in out["php"]


def test_a_round_with_only_a_bound_makes_the_groups_capacity_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _run(monkeypatch, 2, [{"node": _round(900.0)}, {"node": _round(1100.0, bracketed=False)}])
    assert out["node"]["capacity"]["bracketed"] is False and out["node"]["capacity"]["rps"] == 900.0
