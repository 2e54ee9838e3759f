"""A fixed-rate run as a user makes it (`./bidbench run`) warms up long enough for a fresh app under a CPU
limit to reach its steady latency."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.engine import session as run_module
from harness.engine.driver import FIXED_RATE_WARMUP_S


class _Captured(Exception):
    """Stops the command once it has built its plan: nothing is started."""


def _default_run_plan(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> Any:
    seen: list[Any] = []

    def capture(plan: Any, quiet: bool = False) -> Any:
        seen.append(plan)
        raise _Captured

    monkeypatch.setattr(run_module, "execute", capture)
    result = CliRunner().invoke(app, ["run", *args], env={"COLUMNS": "200"})
    assert isinstance(result.exception, _Captured), result.output
    (plan,) = seen
    return plan


def test_a_plain_run_warms_up_for_the_fixed_rate_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _default_run_plan(monkeypatch, ["--impl", "php", "--rate", "1000", "--cpus", "0.5"])
    assert plan.load.warmup_s == FIXED_RATE_WARMUP_S
    assert plan.load.duration_s == 20.0
    # 10 s left every app short of its steady latency at 0.5 CPU (see FIXED_RATE_WARMUP_S).
    assert FIXED_RATE_WARMUP_S >= 60


def test_an_explicit_warm_up_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _default_run_plan(monkeypatch, ["--impl", "node", "--warmup", "5s"])
    assert plan.load.warmup_s == 5.0
