"""The machine sizing rule: every regime's default CPU limit per instance follows the machine's cores."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.engine import sizing
from harness.regimes import demo, sweeps


@pytest.mark.parametrize(("cores", "cpus"), [(1, 0.25), (2, 0.5), (3, 0.75), (4, 1.0), (64, 1.0)])
def test_an_instance_gets_a_quarter_of_the_cores_and_at_most_one(cores: int, cpus: float) -> None:
    assert sizing.default_instance_cpus(cores) == cpus


@pytest.mark.parametrize(("cores", "cpus"), [(2, 0.5), (8, 1.0)])
def test_the_demo_sizes_its_instances_by_the_rule(
    monkeypatch: pytest.MonkeyPatch, cores: int, cpus: float
) -> None:
    monkeypatch.setattr(sizing.psutil, "cpu_count", lambda logical=True: cores)
    assert demo.sizing().cpus == cpus


def test_the_demo_refuses_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sizing.psutil, "cpu_count", lambda logical=True: 1)
    with pytest.raises(Exception, match="needs at least 2"):
        demo.sizing()


def _planned_cpus(monkeypatch: pytest.MonkeyPatch, cores: int, args: list[str]) -> list[Any]:
    """Runs a regime command with its runner replaced by one that records the plan it was given."""
    monkeypatch.setattr(sizing.psutil, "cpu_count", lambda logical=True: cores)
    seen: list[Any] = []

    def sweep(campaign: Any, impls: Any, base: Any, *rest: Any, **kwargs: Any) -> Any:
        seen.append(base)
        return []

    monkeypatch.setattr(sweeps, "run_users", sweep)
    monkeypatch.setattr(sweeps, "run_payload", sweep)
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return seen


@pytest.mark.parametrize("regime", ["users", "payload"])
def test_the_sweeps_default_to_the_sizing_rule_and_take_an_explicit_limit(
    monkeypatch: pytest.MonkeyPatch, regime: str
) -> None:
    (two_cores,) = _planned_cpus(monkeypatch, 2, [regime, "--impl", "node", "--quick"])
    assert two_cores.cpus == 0.5
    (eight_cores,) = _planned_cpus(monkeypatch, 8, [regime, "--impl", "node", "--quick"])
    assert eight_cores.cpus == 1.0
    (explicit,) = _planned_cpus(monkeypatch, 2, [regime, "--impl", "node", "--quick", "--cpus", "0.75"])
    assert explicit.cpus == 0.75
    (unlimited,) = _planned_cpus(monkeypatch, 2, [regime, "--impl", "node", "--quick", "--cpus", "0"])
    assert unlimited.cpus is None


def test_cpus_means_one_thing_on_every_command() -> None:
    """Absent: the sizing rule; 0: no limit, which is None below the CLI; negative: refused by name."""
    from harness.cli.options import cpus_label, instance_cpus
    from harness.console import UserError

    assert instance_cpus(None) == sizing.default_instance_cpus()
    assert instance_cpus(0.0) is None
    assert instance_cpus(0.75) == 0.75
    with pytest.raises(UserError, match="--cpus takes a number of cores"):
        instance_cpus(-1.0)
    assert (cpus_label(0.5), cpus_label(None)) == ("0.5 CPU", "no CPU limit")


def test_an_instance_without_a_limit_can_take_every_core_but_scales_rates_as_one() -> None:
    assert sizing.usable_cores(0.5, cores=8) == 0.5
    assert sizing.usable_cores(None, cores=8) == 8.0
    assert sizing.nominal_cores(0.5) == 0.5
    assert sizing.nominal_cores(None) == sizing.UNLIMITED_COUNTS_AS_CORES
