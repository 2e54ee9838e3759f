"""The noise floor end to end (issue #28): real nginx serving a fixed document on loopback, the real load
driver running a short ladder against it through Session's remote path, one result folder of regime
ladder-floor that the analysis accepts as a floor, and no nginx left behind. About 15 s; no timing
asserted."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from harness.analysis.comparison import floor_usable
from harness.analysis.ladder_report import floor_of
from harness.analysis.load import Run, read_run
from harness.engine.driver import LoadSettings
from harness.engine.session import RunOutcome, RunPlan
from harness.engine.validity import Slo
from harness.regimes.floor import (
    BODY,
    REGIME,
    STEPS,
    floor_plan,
    floor_rates,
    highest_rates,
    render_conf,
    run_floor,
    static_responder,
)
from harness.regimes.ladder import LadderSettings, ladder_rates


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_static_responder_answers_and_stops(tmp_path: Path) -> None:
    with static_responder(tmp_path / "nginx") as responder:
        with urllib.request.urlopen(responder.url + "/health", timeout=5) as response:
            assert response.status == 200
            assert json.loads(response.read()) == json.loads(BODY)
            assert response.headers["Content-Type"] == "application/json"
        pid = responder.pid
    assert not _alive(pid)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(responder.url + "/health", timeout=2)


def _base(tmp_path: Path) -> RunPlan:
    return RunPlan(
        impl="node",
        load=LoadSettings(targets=[], mix="browse"),
        cpus=0.5,
        slo=Slo(p99_ms=50.0, mean_ms=8.0),
        results_dir=tmp_path,
    )


def test_the_floor_runs_at_the_ladder_that_reaches_highest() -> None:
    def outcome(rates: list[float] | None) -> RunOutcome:
        metrics = {"ladder": {"rates": rates}} if rates is not None else None
        return RunOutcome(None, "completed" if metrics else "failed", metrics, None)  # type: ignore[arg-type]

    outcomes = {
        ("node", 1): [outcome([100.0, 200.0, 400.0]), outcome([100.0, 200.0, 390.0])],
        ("php", 1): [outcome(None), outcome([50.0, 80.0])],
    }
    assert highest_rates(outcomes) == (100.0, 200.0, 400.0)
    assert highest_rates({("php", 1): [outcome(None)]}) is None


def test_the_floor_runs_a_coarse_grid_across_the_apps_range() -> None:
    ladder = ladder_rates(2000.0, LadderSettings())
    with_passes = ladder[:3] * 2 + ladder
    rates = floor_rates(with_passes)
    assert len(rates) == STEPS < len(ladder) and (rates[0], rates[-1]) == (ladder[0], ladder[-1])
    assert floor_rates((300.0, 100.0, 200.0, 100.0)) == (100.0, 200.0, 300.0)


def test_floor_plan_is_the_ladder_with_the_bare_mix_at_the_responder(tmp_path: Path) -> None:
    settings = replace(LadderSettings(), steps=3, step_s=2.0, cost_passes=3)
    plan = floor_plan(_base(tmp_path), (10.0, 20.0, 40.0), settings, "http://127.0.0.1:1")
    assert (plan.regime, plan.impl, plan.variant) == (REGIME, "nginx", "static")
    assert plan.target_urls == ("http://127.0.0.1:1",) and not plan.prewarm
    assert plan.load.mix == "bare" and plan.load.steps == (10.0, 20.0, 40.0) and plan.load.step_s == 2.0
    assert plan.slo.p99_ms == 50.0 and plan.results_dir == tmp_path
    assert plan.load.warmup_s == 2.0 < settings.warmup_s  # nothing in a static responder to settle
    conf = render_conf(tmp_path, 8080, None)
    assert "listen 127.0.0.1:8080;" in conf and f"return 200 '{BODY}';" in conf and "user " not in conf


def test_a_floor_is_usable_unless_a_check_other_than_the_cost_fit_failed() -> None:
    def floor(status: str, failed: tuple[str, ...]) -> Run:
        checks = {name: {"ok": name not in failed} for name in ("steps", "late_sends", "cost_fit")}
        metrics = {"ladder": {"steps": [{"rate": 100.0}]}}
        return Run(
            "f",
            None,
            "nginx",
            "static",
            REGIME,
            {},
            0,
            status,
            False,
            [],
            metrics=metrics,
            verdict={"checks": checks},
        )

    assert floor_usable(floor("completed", ("cost_fit",)))  # the responder's CPU is not measured
    assert floor_usable(floor("completed", ()))
    assert not floor_usable(floor("completed", ("cost_fit", "late_sends")))  # the driver stalled
    assert not floor_usable(floor("completed", ("steps",)))
    assert not floor_usable(floor("failed", ()))


@pytest.mark.slow
def test_floor_ladder_is_stored_and_read_as_a_floor(tmp_path: Path) -> None:
    settings = replace(LadderSettings(), steps=3, step_s=1.0, warmup_s=2.0)
    outcome = run_floor(_base(tmp_path), (100.0, 200.0, 300.0), settings, quiet=True)
    assert outcome.status == "completed", outcome.reason
    manifest = json.loads((outcome.folder.path / "manifest.json").read_text())
    assert manifest["regime"]["name"] == REGIME and manifest["load"]["mix"] == "bare"
    assert manifest["target"]["urls"][0].startswith("http://127.0.0.1:")
    assert "fixed document" in manifest["floor"]["responder"]
    steps = (outcome.metrics or {})["ladder"]["steps"]
    assert [s["rate"] for s in steps] == [100.0, 200.0, 300.0]
    assert all(s["p99_ms"] is not None and s["sys_errors"] == 0 for s in steps)
    run = read_run(outcome.folder.path)
    # A late send below the top step is a stall of the host or the driver (the responder does no work):
    # the ladder then does not count as a floor. On a busy host that happens, so both outcomes are checked.
    stalled = any(s["late_sends"] for s in steps)
    assert floor_usable(run) == (all(s["valid"] for s in steps) and not stalled)
    floor = floor_of([run])
    assert floor is not None and floor.rates == (100.0, 200.0, 300.0)
    # the responder's nginx is gone once the floor is stored
    pid_file = Path(manifest["floor"]["conf"].split("pid ")[1].split(";")[0])
    assert not pid_file.exists() or not _alive(int(pid_file.read_text().strip() or 0))
