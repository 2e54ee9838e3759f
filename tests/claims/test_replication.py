"""#29: equivalence by TOST, the "≥" rule, the layout budget, bad input refused before anything runs, verdicts
recomputed from stored folders, the generated report and the time budget of `replicate --all --quick`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
import yaml
from typer.testing import CliRunner

from harness import paths
from harness.analysis import claims_report
from harness.claims import groups, ladders, runner
from harness.claims.layout import DRIVER_AND_DATABASE_CORES, layout_problems, preflight
from harness.claims.model import ClaimError, Comparison, cells, find, load_all, load_file, load_schema
from harness.claims.store import hours_apart, load_verdicts, save_verdict, too_recent, verdict_record
from harness.claims.verdict import (
    CONTRADICTED,
    DIRECTION_ONLY,
    INCONCLUSIVE,
    REPLICATED,
    ClaimVerdict,
    Side,
    judge,
    log_ratio_stats,
    runs_needed,
    tost_p,
    tost_power_at,
)
from harness.cli import claims as claims_cli

CLAIMS = Path(paths.ROOT) / "claims"
A = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2]


def _eq(b: list[float], margin: float = 0.05, center: float = 1.0, a: list[float] = A) -> Any:
    comparison = Comparison("a", "b", "equivalent", margin=margin, center=center)
    return judge(comparison, "java", Side("a", a), Side("b", b))


# --- TOST -------------------------------------------------------------------------------------------


def test_equivalent_within_the_margin_is_replicated() -> None:
    result = _eq([100.3, 99.8, 100.9, 99.6, 100.1, 100.4])
    assert result.outcome == REPLICATED and result.tost is not None and result.tost.p_value < 0.05
    assert "TOST p=" in result.reason


def test_a_difference_wider_than_the_margin_is_contradicted() -> None:
    result = _eq([120.0, 121.0, 119.0, 120.5, 119.5, 120.2])
    assert result.outcome == CONTRADICTED and "wholly outside" in result.reason


def test_noisy_equivalence_is_inconclusive_and_says_how_many_runs_would_do() -> None:
    result = _eq([90.0, 112.0, 101.0, 95.0, 108.0, 99.0])
    assert result.outcome == INCONCLUSIVE
    assert result.tost is not None and result.tost.n_needed is not None and result.tost.n_needed > 6
    assert f"{result.tost.n_needed} fresh starts per side would give power 0.8" in result.reason
    assert "at the observed ratio" in result.reason


def test_an_observed_ratio_at_the_bands_edge_is_not_promised_equivalence_by_more_runs() -> None:
    """Freire's builds on this machine: a ratio of 0.95 against a band from 0.952 is inconclusive, and no
    number of fresh starts is promised, since at the observed ratio they would not show equivalence."""
    openjdk = [262.0, 255.0, 266.0, 258.0, 263.0, 260.0]
    temurin = [v * 0.95 * f for v, f in zip(openjdk, [1.01, 0.99, 1.0, 1.005, 0.995, 1.0], strict=True)]
    result = _eq(temurin, a=openjdk)
    assert result.outcome == INCONCLUSIVE and result.tost is not None
    low, high = result.tost.ci90
    assert low < 1 / 1.05 < high  # the interval straddles the band's lower edge
    assert result.tost.n_needed is None
    assert "at the observed ratio 0.95" in result.reason
    assert "even 200 fresh starts per side would not show it" in result.reason


def test_equivalence_around_a_stated_ratio() -> None:
    php = [v * 1.76 for v in [100.1, 99.7, 100.6, 99.9, 100.2, 100.0]]
    assert _eq(php, margin=0.30, center=1.76).outcome == REPLICATED
    assert (
        _eq(A, margin=0.30, center=1.76).outcome == CONTRADICTED
    )  # equal costs: 1.0 is outside [1.35, 2.29]


def _n_for_power(sd: float, band: tuple[float, float]) -> int | None:
    """Fresh starts per side apart for TOST power 0.8 at the band's centre (as `replicate --pilot` asks)."""
    return runs_needed(lambda n: tost_power_at(n, sd, band, 1.0, paired=False))


def test_tost_power_matches_a_simulation() -> None:
    rng = np.random.default_rng(7)
    band, sd, n = (1 / 1.05, 1.05), 0.03, 6
    la, lb = rng.normal(0, sd, (600, n)), rng.normal(0, sd, (600, n))
    hits = float(np.mean(tost_p(*log_ratio_stats(la, lb, paired=False), band) < 0.05))
    assert abs(hits - tost_power_at(n, sd, band, 1.0, paired=False)) < 0.07
    assert _n_for_power(0.03, band) == 8  # the freire-jvm-builds note relies on this figure


# --- the "≥" rule -------------------------------------------------------------------------------------


def test_an_unbracketed_capacity_is_never_judged() -> None:
    comparison = Comparison("a", "b", "greater")
    a = Side("java", [900.0, 910.0, 905.0])
    b = Side("node", [1200.0, 1210.0], unbracketed=[1500.0])
    result = judge(comparison, "java vs node", a, b)
    assert result.outcome == INCONCLUSIVE
    assert (
        "not bracketed" in result.reason and ">= 1,500" in result.reason and "lower bounds" in result.reason
    )


def test_a_ladder_without_a_failing_step_gives_a_bound_not_a_value() -> None:
    seen = ladders.observe("capacity_rps", {"capacity_rps": None, "capacity_at_least_rps": 800.0}, 0.5, 1)
    assert seen == {"value": None, "at_least": 800.0}
    records = {("java", "java"): [{"valid": True, "run": "r", **seen}]}
    side = runner.side(records, "java", "java")
    assert side.values == [] and side.unbracketed == [800.0] and side.invalid == 0


def _ladder(*steps: tuple[float, bool, bool]) -> dict[str, Any]:
    return {
        "capacity_rps": None,
        "ladder": {"steps": [{"rate": r, "slo_met": met, "valid": ok} for r, met, ok in steps]},
    }


def test_a_ladder_that_missed_the_slo_from_its_first_step_gives_a_floor() -> None:
    """The unpooled driver's ladders: every step from 2 req/s missed the SLO's mean at the same latency."""
    seen = ladders.observe("capacity_rps", _ladder((3.0, False, True), (2.0, False, True)), 0.5, 1)
    assert seen == {"value": None, "at_least": None, "below": 2.0}
    records = {("java", "driver"): [{"valid": False, "run": "r", "why": "the first step...", **seen}]}
    side = runner.side(records, "java", "driver")
    assert side.values == [] and side.below == [2.0] and side.invalid == 0 and side.invalid_why == []


def test_no_floor_from_a_ladder_with_a_passing_step_or_an_invalid_first_step() -> None:
    assert "below" not in ladders.observe(
        "capacity_rps", _ladder((2.0, False, True), (3.0, True, True)), 0.5, 1
    )
    assert "below" not in ladders.observe(
        "capacity_rps", _ladder((2.0, False, False), (3.0, False, True)), 0.5, 1
    )
    assert "below" not in ladders.observe("capacity_rps", {"capacity_rps": None}, 0.5, 1)


def test_utilized_cpu_is_the_busiest_step_over_the_allotment() -> None:
    metrics = {"ladder": {"steps": [{"instance_cpu_pct": 20.0}, {"instance_cpu_pct": 48.0}]}}
    assert ladders.observe("utilized_cpu_peak", metrics, 0.5, 1)["value"] == pytest.approx(0.96)


# --- sized for this machine ---------------------------------------------------------------------------


@pytest.mark.parametrize("quick", [True, False])
def test_every_claim_fits_two_cores(quick: bool) -> None:
    for claim in load_all():
        assert layout_problems(claim, claim.size(quick), cores=2) == [], claim.id


def test_every_claim_that_used_more_cores_says_how_it_was_scaled_down() -> None:
    for name in ("thesis-table-7.1", "thesis-table-7.2", "thesis-table-7.2-instances", "freire-jvm-builds"):
        assert find(name).scaled_down, name


def test_the_claims_of_the_issue_are_fixed() -> None:
    """#45 section 4: each claim tests what its source says, or says why it cannot."""
    freire = find("freire-jvm-builds")
    assert freire.expect[0].relation == "equivalent" and freire.adaptation
    assert freire.full.repetitions >= (_n_for_power(0.03, (1 / 1.05, 1.05)) or 0)
    for name in ("step-table-2-monitor-overhead", "rubis-7-similar-scaling", "thesis-table-7.1"):
        claim = find(name)
        assert not claim.testable and not claim.runnable and len(claim.not_testable) > 80, name
    pool = find("thesis-fig-6.2-pool-size")
    assert pool.impls == ("java",) and pool.expect[0].relation == "greater"
    assert pool.expect[1].not_testable
    log = find("step-table-7-log-level")
    assert log.expect[0].relation == "greater" and "21,000x" in log.expect[0].magnitude_untested
    library = find("thesis-6.2-pool-library")
    assert {v.knobs["JAVA_POOL"] for v in library.variants} == {"hikari", "dbcp2"}
    assert library.metric == "capacity_rps" and library.quick.preset == "capacity"
    unpooled = find("thesis-6.2-pool-unpooled")
    assert {v.knobs["JAVA_POOL"] for v in unpooled.variants} == {"hikari", "driver"}
    assert "PGPoolingDataSource" in unpooled.adaptation
    assert library.changed_after_data and unpooled.changed_after_data
    pereira = find("pereira-energy-ranking")
    assert pereira.adaptation and all(c.magnitude_untested and not c.asks_magnitude for c in pereira.expect)
    assert find("thesis-table-7.2").expect[0].asks_magnitude


def _variant(tmp_path: Path, base: str, **fields: Any) -> Path:
    data = yaml.safe_load((CLAIMS / f"{base}.yaml").read_text())
    data["experiment"]["variants"][0].update(fields)
    (tmp_path / "claim.schema.json").write_text((CLAIMS / "claim.schema.json").read_text())
    path = tmp_path / f"{base}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_layout_over_the_budget_is_refused_naming_the_field(tmp_path: Path) -> None:
    claim = load_file(_variant(tmp_path, "thesis-fig-7.5", cpus=1.5), load_schema(tmp_path))
    with pytest.raises(ClaimError) as err:
        preflight(claim, claim.quick, cores=2)
    text = str(err.value)
    assert "experiment/variants/0/cpus" in text and "nothing was run" in text
    assert f"leave {DRIVER_AND_DATABASE_CORES:g} core" in text and "scaled_down" in text


def test_two_instances_at_one_cpu_name_the_instances_too(tmp_path: Path) -> None:
    claim = load_file(
        _variant(tmp_path, "thesis-6.2-pool-unpooled", cpus=1.0, instances=2), load_schema(tmp_path)
    )
    problems = layout_problems(claim, claim.quick, cores=2)
    assert problems and "experiment/variants/0/cpus (with experiment/variants/0/instances = 2)" in problems[0]


def test_a_missing_jvm_is_refused_naming_the_field(tmp_path: Path) -> None:
    claim = load_file(
        _variant(tmp_path, "freire-jvm-builds", jvm="/usr/lib/jvm/no-such-jdk"), load_schema(tmp_path)
    )
    with pytest.raises(ClaimError, match=r"experiment/variants/0/jvm: '/usr/lib/jvm/no-such-jdk'"):
        preflight(claim, claim.quick, cores=2)


def test_a_missing_or_unknown_tool_is_refused_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.tools import toolchain

    claim = load_file(
        _variant(tmp_path, "thesis-6.4-pg-native", tools=["nosuchtool", "nginx"]), load_schema(tmp_path)
    )
    monkeypatch.setitem(
        toolchain.TOOLS, "nginx", replace(toolchain.TOOLS["nginx"], probe=lambda: toolchain.Probe(False))
    )
    with pytest.raises(ClaimError) as err:
        preflight(claim, claim.quick, cores=2)
    assert "experiment/variants/0/tools/0: 'nosuchtool' is not a tool bidbench knows" in str(err.value)
    assert "experiment/variants/0/tools/1: 'nginx'" in str(err.value) and "missing from this machine" in str(
        err.value
    )


def test_an_equivalence_without_a_margin_fails_the_schema(tmp_path: Path) -> None:
    data = yaml.safe_load((CLAIMS / "freire-jvm-builds.yaml").read_text())
    data["expect"][0].pop("margin")
    (tmp_path / "claim.schema.json").write_text((CLAIMS / "claim.schema.json").read_text())
    path = tmp_path / "freire-jvm-builds.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ClaimError, match="expect/0: 'margin' is a required property"):
        load_file(path, load_schema(tmp_path))


def _cli() -> typer.Typer:
    app = typer.Typer()
    claims_cli.register(app)

    @app.command("other")
    def _other() -> None:
        pass

    return app


@pytest.mark.parametrize(
    ("base", "fields", "field"),
    [
        ("thesis-fig-7.5", {"cpus": 1.5}, "experiment/variants/0/cpus"),
        ("freire-jvm-builds", {"jvm": "/usr/lib/jvm/no-such-jdk"}, "experiment/variants/0/jvm"),
        ("thesis-6.4-pg-native", {"tools": ["nosuchtool"]}, "experiment/variants/0/tools/0"),
        ("thesis-table-7.2", {"name": "Bad Name"}, "experiment/variants/0/name"),
    ],
)
def test_the_cli_refuses_bad_claims_before_running_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: str, fields: dict[str, Any], field: str
) -> None:
    path = _variant(tmp_path, base, **fields)

    def load() -> list[Any]:
        return [load_file(path, load_schema(tmp_path))]

    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("nothing may run for a bad claim")

    monkeypatch.setattr(claims_cli, "load_all", load)
    monkeypatch.setattr(claims_cli, "replicate", never)
    monkeypatch.setattr("harness.claims.layout.machine_cores", lambda: 2)
    result = CliRunner().invoke(_cli(), ["replicate", "--all", "--quick"], env={"COLUMNS": "300"})
    assert result.exit_code != 0
    assert field in " ".join(result.output.split()) or field in str(result.exception)


# --- time -----------------------------------------------------------------------------------------------


def test_all_quick_fits_120_minutes(tmp_path: Path) -> None:
    counted: set[tuple[str, int]] = set()
    seconds = sum(runner.estimate(c, c.quick, tmp_path, counted)[0] for c in load_all())
    assert seconds <= 120 * 60, f"replicate --all --quick is estimated at {seconds / 60:.0f} min"
    assert ladders.fresh_start_s(find("pereira-energy-ranking").quick.ladder) == pytest.approx(75, abs=5)


def test_a_variant_only_rows_not_testable_here_name_is_not_run() -> None:
    claim = find("thesis-fig-6.2-pool-size")
    assert "pool-90" in {v.name for v in claim.variants} and claim.expect[1].not_testable
    assert [c.variant.name for c in runner.cells(claim, claim.quick)] == ["pool-30", "pool-60"]


def test_a_fixed_rate_run_on_a_jvm_is_estimated_with_its_pre_warm_to_the_cap(tmp_path: Path) -> None:
    """rubis-3's fixed-rate runs pre-warm each app alone: a JVM's until its JIT compiler is idle, about the
    cap; php's and node's a block past the shortest. The estimate budgets each run by its app."""
    from harness.engine import prewarm

    claim = find("rubis-3-indexes-unsorted")
    full = runner.size_for(claim, False, None)

    def per_run_s(impl: str) -> float:
        size = replace(full, impls=(impl,))
        seconds, runs, stored = runner.estimate(claim, size, tmp_path)
        assert (runs, stored) == (len(runner.cells(claim, size)) * full.repetitions, 0)
        return seconds / runs

    assert per_run_s("php") == pytest.approx(per_run_s("node"))
    assert per_run_s("java") - per_run_s("php") == pytest.approx(prewarm.MAX_S - prewarm.expected_s(False))
    assert prewarm.expected_s(False) < prewarm.MAX_S / 2


def test_a_side_by_side_fresh_start_is_estimated_with_its_runtimes_pre_warm() -> None:
    """A JVM's pre-warm runs to the preset's cap (its JIT compiler stays busy); node's and php's end soon
    after the shortest the settling rule allows."""
    from harness.claims import side_by_side as sbs
    from harness.engine.prewarm import shortest_s
    from harness.model.side_by_side import preset

    jvm = find("thesis-6.2-pool-library")
    node = find("thesis-6.4-pg-native")
    (jvm_lineup,) = sbs.lineups(jvm, jvm.quick)
    (node_lineup,) = sbs.lineups(node, node.quick)
    cap = preset(node.quick.preset).prewarm_max_s
    longer = sbs.fresh_start_s(
        node.quick,
        replace(node_lineup, cells=(replace(node_lineup.cells[0], impl="java"),) + node_lineup.cells[1:]),
    )
    assert longer - sbs.fresh_start_s(node.quick, node_lineup) == pytest.approx(cap - shortest_s() - 3.0)
    assert sbs.fresh_start_s(jvm.quick, jvm_lineup) > sbs.fresh_start_s(node.quick, node_lineup)


def test_a_claims_ladder_keeps_the_shape_of_its_stored_verdicts_and_is_keyed_on_the_ladder_method() -> None:
    """docs/replication/REPORT.md was run with this shape and its `--from` recomputes match folders by the
    group key, which carries the shape: changing it means re-running the claims. The key also carries
    the ladder method, so ladders stored by an older method are run again."""
    from harness.claims.model import LadderShape
    from harness.regimes import ladder as ladder_regime

    assert LadderShape() == LadderShape(
        steps=6, step_s=2.5, warmup_s=12.0, prewarm_max_s=40.0, calibration_step_s=1.5
    )
    claim = find("pereira-energy-ranking")
    keys = {cell.impl: ladders.group_of(claim.quick, cell) for cell in runner.cells(claim, claim.quick)}
    # The default ladders' keys of the report's runs (method 3, the pre-warm without the quota).
    assert keys == {
        "java": "claims-ladder/java/4564fc9a4c",
        "node": "claims-ladder/node/c1300fd13b",
        "php": "claims-ladder/php/efdbdf90c8",
    }
    cell = runner.cells(claim, claim.quick)[0]
    assert ladders.fingerprint(claim.quick, cell)["method"] == ladder_regime.METHOD_VERSION


def test_a_declared_break_gives_every_cell_one_grid_and_no_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two variants of one app calibrated apart can read different grids; a break the claim declares
    (`ladder.break_rps`) builds one grid for every cell, runs no calibration, and is counted so."""
    from types import SimpleNamespace

    from harness.record.folders import RunFolder
    from harness.record.verdict import Verdict

    claim = find("thesis-fig-6.2-pool-size")
    size = replace(claim.quick, repetitions=2, ladder=replace(claim.quick.ladder, break_rps=3000.0))
    grids: dict[str, tuple[float, ...]] = {}

    def no_calibration(*_: Any, **__: Any) -> Any:
        raise AssertionError("a declared break runs no calibration")

    def plan_of(base: Any, impl: str, instances: int, repetition: int, rates: Any, settings: Any) -> Any:
        grids[base.variant] = tuple(rates)
        return base

    def fake_run(plan: Any, prewarm_rate: float, quiet: bool = False) -> Any:
        folder = RunFolder(tmp_path / f"run-{plan.variant}-{len(list(tmp_path.iterdir()))}")
        return SimpleNamespace(
            verdict=Verdict(True, [], {}), metrics={}, status="completed", folder=folder, reason=""
        )

    monkeypatch.setattr(ladders.ladder, "calibrate", no_calibration)
    monkeypatch.setattr(ladders.ladder, "ladder_plan", plan_of)
    monkeypatch.setattr(ladders.ladder, "run_one", fake_run)
    todo = cells(claim, size)
    observed = ladders.run(claim, size, todo, tmp_path)
    settings = ladders.settings_for(size.ladder)
    assert grids == {c.variant.name: ladders.ladder.ladder_rates(3000.0, settings) for c in todo}
    assert sorted(len(records) for records in observed.values()) == [2, 2]
    seconds, to_run, _ = ladders.starts_left(size, todo, tmp_path / "none", set())
    assert to_run == 2 * len(todo) and seconds == to_run * ladders.fresh_start_s(size.ladder)


def test_a_declared_break_is_keyed_and_stored_and_an_undeclared_one_changes_no_key() -> None:
    claim = find("thesis-fig-6.2-pool-size")
    cell = cells(claim, claim.full)[0]
    calibrated = replace(claim.full, ladder=replace(claim.full.ladder, break_rps=None))
    declared = replace(claim.full, ladder=replace(claim.full.ladder, break_rps=3000))
    assert "break_rps" not in ladders.fingerprint(calibrated, cell)["ladder"]
    assert "break_rps" not in calibrated.settings()["ladder"]
    assert ladders.fingerprint(declared, cell)["ladder"]["break_rps"] == 3000.0
    assert declared.settings()["ladder"]["break_rps"] == 3000.0
    assert ladders.group_of(declared, cell) != ladders.group_of(calibrated, cell)
    assert claim.full.ladder.break_rps == 3417.0 == claim.quick.ladder.break_rps


def test_shared_ladders_are_counted_once() -> None:
    pereira, table72 = find("pereira-energy-ranking"), find("thesis-table-7.2")
    java72 = [c for c in runner.cells(table72, table72.quick) if c.impl == "java"][0]
    javap = [c for c in runner.cells(pereira, pereira.quick) if c.impl == "java"][0]
    assert ladders.group_of(table72.quick, java72) == ladders.group_of(pereira.quick, javap)
    log = find("step-table-7-log-level")
    info = [c for c in runner.cells(log, log.quick) if c.variant.name == "log-info"][0]
    nodep = [c for c in runner.cells(pereira, pereira.quick) if c.impl == "node"][0]
    assert ladders.group_of(log.quick, info) == ladders.group_of(
        pereira.quick, nodep
    )  # LOG_LEVEL=info is the default


# --- recomputed from stored folders, and the report ----------------------------------------------------


def _fake_folder(
    results: Path,
    claim: Any,
    cell: Any,
    repetition: int,
    cost: float,
    regime: str = "ladder",
    year: int = 2026,
) -> str:
    run_id = f"{year}T{repetition}-{cell.impl}-{cell.variant.name}-{regime}-{claim.id}"
    folder = results / run_id
    folder.mkdir(parents=True)
    group = groups.cell_group(claim, claim.quick, cell) + ("/calibration" if regime != "ladder" else "")
    manifest = {
        "status": "completed",
        "impl": cell.impl,
        "regime": {"name": regime, "group": group, "repetition": repetition},
        "host": {"cpu_model": "Test CPU", "cores": 2, "memory_bytes": 2**33, "kernel": "6.x"},
        "runtimes": {cell.impl: f"{cell.impl} 1.0"},
        "git": {"commit": "abc123", "dirty": False},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "metrics.json").write_text(json.dumps({"cpu_us_per_request": cost}))
    (folder / "verdict.json").write_text(json.dumps({"valid": True}))
    return run_id


def test_a_verdict_is_recomputed_from_stored_folders_alone(tmp_path: Path) -> None:
    # Pereira runs side by side (tests/claims/test_claims_side_by_side.py); here its ladders, run apart.
    claim = replace(find("pereira-energy-ranking"), design="apart")
    costs = {"java": [300.0, 305.0, 298.0], "node": [420.0, 430.0, 425.0], "php": [700.0, 690.0, 710.0]}
    ids = []
    for cell in runner.cells(claim, claim.quick):
        ids.append(_fake_folder(tmp_path, claim, cell, 0, 999.0, regime="ladder-calibration"))
        for rep, cost in enumerate(costs[cell.impl]):
            ids.append(_fake_folder(tmp_path, claim, cell, rep, cost))
    size, quick, observations = runner.from_folders(claim, [tmp_path / i for i in ids])
    assert quick and size.repetitions == 3
    assert [r["value"] for r in observations[("php", "php")]] == costs["php"]
    verdict = runner.judge_claim(claim, size, observations)
    verdict.observations = observations
    # both rows' directions hold; Pereira's figures are another construct, so their magnitude is not tested
    assert verdict.outcome == DIRECTION_ONLY
    # a folder of another claim is named, never silently used
    other = find("thesis-fig-6.2-pool-size")
    stray = _fake_folder(tmp_path, other, runner.cells(other, other.quick)[1], 0, 1.0)
    with pytest.raises(ValueError, match=stray):
        runner.from_folders(claim, [tmp_path / stray, *(tmp_path / i for i in ids)])
    # the report lists it with its folders, the machine once, and every other claim as not yet run
    record = verdict_record(claim, size, True, verdict)
    save_verdict(record, tmp_path)
    # the report shows verdicts of the design a claim runs: here Pereira's, apart
    claims = [claim if c.id == claim.id else c for c in load_all()]
    target = claims_report.write(claims, tmp_path, tmp_path / "REPORT.md")
    text = target.read_text()
    assert "never edited by hand" in text and "GENERATED" in text
    runnable = [c for c in load_all() if c.runnable]
    assert text.count("**not yet run on this machine**") == len(runnable) - 1
    assert text.count("| **not testable here** |") == len([c for c in load_all() if not c.testable])
    assert "Test CPU, 2 logical cores" in text and "git commit of the runs: abc123" in text
    assert f"./bidbench replicate pereira-energy-ranking --from {','.join(record['runs'])}" in text
    assert "**direction only**" in text and "Pereira" in text
    assert "## Power per claim" in text and "## Rows that share runs" in text


def test_the_cli_recomputes_with_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An equivalence claim run apart: Table 7.2's instances as they ran before they moved side by side.
    claims = tmp_path / "claim-files"
    claims.mkdir()
    data = yaml.safe_load((CLAIMS / "thesis-table-7.2-instances.yaml").read_text())
    data["experiment"]["design"] = "apart"
    for size in ("quick", "full"):
        data["experiment"][size].pop("preset")
    (claims / "thesis-table-7.2-instances.yaml").write_text(yaml.safe_dump(data))
    (claims / "claim.schema.json").write_text((CLAIMS / "claim.schema.json").read_text())
    monkeypatch.setattr("harness.claims.model.claims_dir", lambda: claims)
    claim = find("thesis-table-7.2-instances")
    assert claim.design == "apart"
    costs = {"java": [300.0, 303.0, 298.0, 305.0], "java-x2": [302.0, 300.0, 301.0, 304.0]}
    ids = []
    for cell in runner.cells(claim, claim.quick):
        for rep, cost in enumerate(costs[cell.variant.name]):
            ids.append(_fake_folder(tmp_path, claim, cell, rep, cost))
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    result = CliRunner().invoke(
        _cli(), ["replicate", claim.id, "--from", ",".join(ids), "--pilot"], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert "nothing was run" in result.output and "replicated" in result.output
    assert "n per side needed" in result.output


def test_report_numbers_are_finite() -> None:
    result = _eq([1.0, 1.0, 1.0], margin=0.1, a=[1.0, 1.01, 0.99])
    assert result.tost is not None and math.isfinite(result.tost.p_value)


def _stand_in(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    seen: Callable[[Any], None],
    answer: Callable[[Any], Any] | None = None,
) -> None:
    """`replicate` runs nothing: each claim is shown to `seen` and answered by `answer`, by default with a
    not-runnable verdict. Reports are not written."""

    def stand_in(claim: Any, *_: Any) -> Any:
        seen(claim)
        if answer is not None:
            return answer(claim)
        return runner.not_runnable(replace(claim, not_testable="a stand-in for the run"))

    monkeypatch.setattr(claims_cli, "replicate", stand_in)
    monkeypatch.setattr("harness.claims.layout.machine_cores", lambda: 2)
    monkeypatch.setattr(claims_cli, "write_report", lambda *_: None)
    monkeypatch.setattr(claims_cli.claims_report, "write", lambda *_: tmp_path / "REPORT.md")
    monkeypatch.setattr(paths, "RESULTS", tmp_path)


def test_again_replicates_on_fresh_starts_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--again` runs each claim inside ladders.again(), so nothing stored before it began is reused;
    without it, stored fresh starts are reused."""
    seen: list[str | None] = []
    _stand_in(monkeypatch, tmp_path, lambda _: seen.append(ladders._REUSE_SINCE.get()))
    for args in (
        ["replicate", "thesis-table-7.2", "--quick"],
        ["replicate", "thesis-table-7.2", "--quick", "--again"],
    ):
        result = CliRunner().invoke(_cli(), args, env={"COLUMNS": "300"})
        assert result.exit_code == 0, result.output
    assert seen[0] is None and seen[1] is not None
    assert f"nothing stored before {seen[1][:19]} UTC is reused" in " ".join(result.output.split())
    assert ladders._REUSE_SINCE.get() is None


def test_a_claim_named_twice_is_replicated_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    _stand_in(monkeypatch, tmp_path, lambda claim: ran.append(claim.id))
    args = ["replicate", "thesis-table-7.2,thesis-fig-7.5,thesis-table-7.2", "--quick"]
    result = CliRunner().invoke(_cli(), args, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert ran == ["thesis-table-7.2", "thesis-fig-7.5"]
    assert "named more than once, run once: thesis-table-7.2" in result.output


def test_an_interrupted_again_resumes_from_the_start_it_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--again` prints how to resume it; `--again --since <that time>` reuses the fresh starts stored since
    then (its own) and none before. A time that is not one, one in the future, or --since without --again
    is refused before anything runs."""
    seen: list[str | None] = []
    _stand_in(monkeypatch, tmp_path, lambda _: seen.append(ladders.reuse_since()))
    base = ["replicate", "thesis-table-7.2", "--quick"]
    first = CliRunner().invoke(_cli(), [*base, "--again"], env={"COLUMNS": "300"})
    assert first.exit_code == 0, first.output
    hint = " ".join(first.output.split())
    assert f"resume it with --again --since {seen[0]}" in hint
    for since in (str(seen[0]), f"{str(seen[0])[:19]} UTC", str(seen[0]).replace("Z", "+00:00")):
        resumed = CliRunner().invoke(_cli(), [*base, "--again", "--since", since], env={"COLUMNS": "300"})
        assert resumed.exit_code == 0, resumed.output
    assert seen[1] == seen[3] == seen[0]
    assert seen[2] == str(seen[0])[:19] + ".000000Z"
    future = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    for args, message in (
        ([*base, "--again", "--since", "yesterday"], "is not a time"),
        ([*base, "--again", "--since", future], "lies in the future"),
        ([*base, "--since", str(seen[0])], "--since resumes an interrupted --again: give both"),
    ):
        refused = CliRunner().invoke(_cli(), args, env={"COLUMNS": "300"})
        said = " ".join(f"{refused.output} {refused.exception}".split())
        assert refused.exit_code != 0 and message in said, said
    assert len(seen) == 4


def test_again_names_a_claim_whose_last_verdict_is_within_the_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report compares a claim's two replications; `--again` run minutes after the first says so, per
    claim and size, and says nothing of a verdict stored hours before or of the other size."""
    monkeypatch.setattr(
        claims_cli, "replicate", lambda claim, *_: runner.not_runnable(replace(claim, not_testable="x"))
    )
    monkeypatch.setattr("harness.claims.layout.machine_cores", lambda: 2)
    monkeypatch.setattr(claims_cli, "write_report", lambda *_: None)
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    now = datetime.now(UTC)

    def stored(claim_id: str, size: str, minutes_ago: float) -> None:
        created = (now - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        save_verdict({"claim_id": claim_id, "size": size, "created_utc": created}, tmp_path)

    stored("thesis-table-7.2", "quick", 10)
    stored("thesis-table-7.1", "quick", 180)
    stored("freire-jvm-builds", "full", 5)
    result = CliRunner().invoke(
        _cli(),
        ["replicate", "thesis-table-7.2,thesis-table-7.1,freire-jvm-builds", "--quick", "--again"],
        env={"COLUMNS": "400"},
    )
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if line.startswith("note:")]
    assert len(notes) == 1, result.output
    assert notes[0].startswith(
        "note: the last fresh start of thesis-table-7.2's quick verdict began 10 minutes ago"
    )
    assert "at least 1 h apart" in notes[0]


def test_too_recent_is_the_hours_since_the_newest_verdicts_last_fresh_start_within_apart_h() -> None:
    records = [
        {"claim_id": "c", "size": "quick", "created_utc": "2026-01-01T10:00:00Z"},
        {"claim_id": "c", "size": "quick", "created_utc": "2026-01-01T11:30:00Z"},
        {"claim_id": "c", "size": "full", "created_utc": "2026-01-01T11:55:00Z"},
        # judged at 11:58 on fresh starts that began at 10:50 and 11:10
        {
            "claim_id": "d",
            "size": "quick",
            "created_utc": "2026-01-01T11:58:00Z",
            "runs": ["20260101T111000Z-java-ladder-aaaaaa", "20260101T105000Z-node-ladder-bbbbbb"],
        },
    ]
    assert too_recent(records, "c", "quick", "2026-01-01T12:00:00Z") == pytest.approx(0.5)
    assert too_recent(records, "c", "quick", "2026-01-01T12:30:00Z") is None  # exactly APART_H: apart enough
    assert too_recent(records, "c", "full", "2026-01-01T12:00:00Z") == pytest.approx(5 / 60)
    assert too_recent(records, "other", "quick", "2026-01-01T12:00:00Z") is None
    assert too_recent(records, "d", "quick", "2026-01-01T12:00:00Z") == pytest.approx(50 / 60)
    assert too_recent(records, "d", "quick", "2026-01-01T12:10:00Z") is None


def test_two_replications_are_as_far_apart_as_their_fresh_starts_not_their_verdicts() -> None:
    """A verdict judged on another claim's fresh starts is stored when it is judged: the gap is from the
    earlier replication's last fresh start to the later's first, and 0 when they interleave."""
    first = {"created_utc": "2026-01-01T12:00:00Z", "runs": ["20260101T100000Z-a", "20260101T103000Z-b"]}
    second = {"created_utc": "2026-01-01T12:20:00Z", "runs": ["20260101T120000Z-c", "20260101T115000Z-d"]}
    assert hours_apart(first, second) == pytest.approx(80 / 60)
    interleaved = {"created_utc": "2026-01-01T12:20:00Z", "runs": ["20260101T102000Z-e"]}
    assert hours_apart(first, interleaved) == 0.0
    no_times = {"created_utc": "2026-01-01T13:00:00Z", "runs": ["folder-without-a-time"]}
    assert hours_apart(first, no_times) == pytest.approx(2.5)


def test_a_ladder_the_host_alone_disturbed_runs_again_at_most_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh start that another tenant's work made invalid runs again; the invalid one stays in the
    verdict, marked. One invalid for a reason of its own does not, and a host that stays busy ends the
    repetition after two more runs."""
    from types import SimpleNamespace

    from harness.engine.validity import DISTURBED
    from harness.record.folders import RunFolder
    from harness.record.verdict import Check, Verdict

    claim = find("thesis-fig-7.5")
    size = replace(claim.quick, repetitions=1)
    verdicts = {
        "disturbed": Verdict(False, ["another tenant"], {DISTURBED: Check(False, 1, 0, "another tenant")}),
        "own": Verdict(False, ["the driver"], {"steps": Check(False, 1, 0, "the driver")}),
        "valid": Verdict(True, [], {DISTURBED: Check(True, 0, 0, "none")}),
    }
    script: list[str] = []
    ran: list[str] = []

    def fake_run(plan: Any, prewarm_rate: float, quiet: bool = False) -> Any:
        kind = script.pop(0)
        ran.append(kind)
        folder = RunFolder(tmp_path / f"run-{len(ran)}")
        return SimpleNamespace(
            verdict=verdicts[kind], metrics={}, status="completed", folder=folder, reason=""
        )

    monkeypatch.setattr(ladders.ladder, "run_one", fake_run)
    todo = [c for c in cells(claim, size) if c.impl == "java"]
    rates = {"java": (100.0, 200.0)}

    def runs_of(kinds: list[str]) -> list[dict[str, Any]]:
        script[:], ran[:] = kinds, []
        observed = ladders.run(claim, size, todo, tmp_path, rates=rates)
        return [r for records in observed.values() for r in records]

    once = runs_of(["disturbed", "valid"])
    assert ran == ["disturbed", "valid"]
    assert [(r["valid"], r.get("run_again", False)) for r in once] == [(False, True), (True, False)]
    assert runs_of(["own"]) and ran == ["own"]
    busy = runs_of(["disturbed"] * 5)
    assert ran == ["disturbed"] * (ladders.DISTURBED_REDOS + 1)
    assert [r.get("run_again", False) for r in busy] == [True] * ladders.DISTURBED_REDOS + [False]
    assert ladders.ran_again({("node", "a"): once, ("java", "b"): busy}) == 1 + ladders.DISTURBED_REDOS


def test_a_fixed_rate_run_the_host_alone_disturbed_runs_again_without_reusing_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixed-rate runs of a claim follow the ladders' rule: a run another tenant's work made invalid runs
    again, at most twice, and the run again is a new fresh start, never the disturbed one reused from the
    index, where it is stored under the same key and repetition."""
    from types import SimpleNamespace

    from harness.engine.validity import DISTURBED
    from harness.record.folders import RunFolder
    from harness.record.verdict import Check, Verdict
    from harness.regimes import campaign as campaign_module

    claim = find("rubis-3-indexes-unsorted")
    assert claim.regime == "fixed-rate" and claim.design == "apart"
    size = replace(claim.quick, repetitions=2, impls=("php",))
    verdicts = {
        "disturbed": Verdict(False, ["another tenant"], {DISTURBED: Check(False, 30, 10, "another tenant")}),
        "own": Verdict(False, ["late sends"], {"late_sends": Check(False, 2, 0, "late sends")}),
        "valid": Verdict(True, [], {DISTURBED: Check(True, 1, 10, "none")}),
    }
    metrics = {
        "throughput_rps": 100.0,
        "latency_ms": {"mean": 2.0, "p99": 9.0},
        "cpu_pct_total": 10.0,
        "sys_errors": 0,
    }
    script: list[str] = []
    ran: list[str] = []
    reused: list[bool] = []

    def fake_execute(plan: Any, quiet: bool = False) -> Any:
        kind = script.pop(0)
        ran.append(kind)
        return SimpleNamespace(
            folder=RunFolder(tmp_path / f"run-{len(ran)}"),
            status="completed",
            metrics=metrics,
            verdict=verdicts[kind],
        )

    def stored_is_the_disturbed_run(self: Any, group: str, repetition: int) -> dict[str, Any] | None:
        # every key has a stored run: the first attempt reuses it unless told not to; later ones never may
        reused.append(True)
        return None

    monkeypatch.setattr(campaign_module, "execute", fake_execute)
    monkeypatch.setattr(campaign_module.Campaign, "completed", stored_is_the_disturbed_run)
    point = campaign_module.Campaign.run_point
    runs_left: list[int] = []

    def counted_point(self: Any, plan: Any, label: str, reuse: bool = True) -> Any:
        # what the progress line's time left counts on: a run again is a run still to come
        runs_left.append(self.planned_runs - self.done_runs)
        return point(self, plan, label, reuse)

    monkeypatch.setattr(campaign_module.Campaign, "run_point", counted_point)

    def runs_of(kinds: list[str]) -> dict[str, list[tuple[bool, bool]]]:
        script[:], ran[:], reused[:] = kinds, [], []
        observed = runner.run_experiment(claim, size, tmp_path)
        return {
            v: [(r["valid"], r.get("run_again", False)) for r in records]
            for (_, v), records in observed.items()
        }

    # two cells (indexed-sorted, no-index), two repetitions, run in turns
    seen = runs_of(["disturbed", "valid", "own", *["disturbed"] * (ladders.DISTURBED_REDOS + 1), "valid"])
    assert seen == {
        "indexed-sorted": [(False, True), (True, False)]
        + [(False, True)] * ladders.DISTURBED_REDOS
        + [(False, False)],
        "no-index": [(False, False), (True, False)],
    }
    assert script == [] and len(ran) == 4 + ladders.DISTURBED_REDOS + 1
    # the index was asked once per cell and repetition, at its first attempt only
    assert len(reused) == 4
    assert runs_left == [4, 4, 3, 2, 2, 2, 1]


def test_a_campaign_point_told_not_to_reuse_runs_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from harness.engine.driver import LoadSettings
    from harness.engine.session import RunPlan
    from harness.record.folders import RunFolder
    from harness.regimes import campaign as campaign_module

    stored_folder = tmp_path / "stored"
    stored_folder.mkdir()
    stored_metrics = {
        "throughput_rps": 1.0,
        "latency_ms": {"mean": 1.0, "p99": 2.0},
        "cpu_pct_total": 1.0,
        "sys_errors": 0,
    }
    (stored_folder / "metrics.json").write_text(json.dumps(stored_metrics))
    executed: list[str] = []

    def fake_execute(plan: Any, quiet: bool = False) -> Any:
        executed.append(plan.impl)
        return SimpleNamespace(
            folder=RunFolder(tmp_path / "fresh"), status="failed", metrics=None, verdict=None
        )

    monkeypatch.setattr(campaign_module, "execute", fake_execute)
    monkeypatch.setattr(
        campaign_module.Campaign, "completed", lambda self, group, repetition: {"path": str(stored_folder)}
    )
    campaign = campaign_module.Campaign("c", results_dir=tmp_path)
    plan = RunPlan(impl="node", load=LoadSettings(targets=[]), group="g")
    assert campaign.run_point(plan, "first").reused and executed == []
    again = campaign.run_point(plan, "again", reuse=False)
    assert not again.reused and again.folder.path == tmp_path / "fresh" and executed == ["node"]


def test_a_verdict_on_fresh_starts_a_stored_verdict_judged_is_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `--quick` after the full size reuses the first fresh starts of the full size's key: the verdict
    measured nothing new and is printed, not stored. A verdict with one fresh start of its own is stored."""
    claim = find("thesis-table-7.2")
    full_runs = [f"20260101T10{m:02d}00Z-java-ladder-abcdef" for m in range(5)]
    save_verdict(
        {"claim_id": claim.id, "size": "full", "created_utc": "2026-01-01T11:00:00Z", "runs": full_runs},
        tmp_path,
    )
    answers = iter([full_runs[:3], [*full_runs[:2], "20260101T130000Z-java-ladder-fedcba"]])

    def answer(claim: Any) -> Any:
        runs = next(answers)
        return ClaimVerdict(claim.id, INCONCLUSIVE, observations={("java", "a"): [{"run": r} for r in runs]})

    _stand_in(monkeypatch, tmp_path, lambda _: None, answer)
    said = []
    for _ in range(2):
        result = CliRunner().invoke(_cli(), ["replicate", claim.id, "--quick"], env={"COLUMNS": "300"})
        assert result.exit_code == 0, result.output
        said.append(" ".join(result.output.split()))
    assert (
        "not stored: every fresh start it judged was judged by the full size's verdict of 2026-01-01 11:00"
        in said[0]
    )
    assert "verdict stored in" not in said[0]
    assert "verdict stored in" in said[1] and "not stored" not in said[1]
    mine = [r for r in load_verdicts(tmp_path / "claims") if set(r.get("runs") or ()) & set(full_runs)]
    assert sorted(r["size"] for r in mine) == ["full", "quick"]
