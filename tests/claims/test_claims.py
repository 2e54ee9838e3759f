"""Claim files and the verdict logic on synthetic numbers (no real runs)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from harness import paths
from harness.claims import groups, runner
from harness.claims.ladders import _rates_from_calibration
from harness.claims.model import Claim, ClaimError, Comparison, find, load_all, load_file, load_schema
from harness.claims.verdict import CONTRADICTED, INCONCLUSIVE, NOT_RUNNABLE, REPLICATED, Side, judge
from harness.cli.claims import register
from harness.regimes.ladder import LadderSettings, calibration_start, ladder_rates

CLAIMS = Path(paths.ROOT) / "claims"
README = Path(paths.ROOT) / "docs" / "replication" / "README.md"


def readme_rows() -> dict[str, str]:
    """The claims table of docs/replication/README.md: claim file id -> claim sentence."""
    text = README.read_text()
    section = text.split("\n## The claims\n", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # header and separator
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return {cell[0].strip("`"): cell[2] for cell in cells}


def test_every_claim_file_validates() -> None:
    claims = load_all()
    assert len(claims) == len(list(CLAIMS.glob("*.yaml")))
    for claim in claims:
        assert claim.path is not None and claim.path.stem == claim.id


def test_one_claim_per_readme_row() -> None:
    """docs/replication/README.md lists every claim file, each with its exact claim sentence, and nothing else."""
    claims = {c.id: c.claim for c in load_all()}
    rows = readme_rows()
    assert rows, "docs/replication/README.md has no claims table"
    assert rows == claims


def test_metrics_are_known_keys() -> None:
    known = re.compile(
        r"^(throughput_rps|normalized_throughput|cpu_pct_total|utilized_cpu|utilized_cpu_peak|memory_per_instance_mb"
        r"|capacity_rps|cpu_us_per_request|db_us_per_request|saturation_rps|rps_per_mb|latency_ms\.\w+)$"
    )
    for claim in load_all():
        if claim.runnable:
            assert known.match(claim.metric)


def _needs_variant(tmp_path: Path) -> Claim:
    """The unpooled claim as it was before JAVA_POOL existed: no claim file needs a variant any more."""
    data = yaml.safe_load((CLAIMS / "thesis-6.2-pool-unpooled.yaml").read_text())
    data.update(
        status="needs-variant", missing="a Java pool-library knob (HikariCP vs the driver's own pool)"
    )
    data["experiment"]["variants"][0]["available"] = False
    (tmp_path / "claim.schema.json").write_text((CLAIMS / "claim.schema.json").read_text())
    path = tmp_path / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_file(path, load_schema(tmp_path))


def test_needs_variant_claim_is_not_runnable(tmp_path: Path) -> None:
    claim = _needs_variant(tmp_path)
    assert not claim.runnable
    verdict = runner.replicate(claim, quick=True, runner=_never_run)
    assert verdict.outcome == NOT_RUNNABLE
    assert "HikariCP" in verdict.reason or "pool" in verdict.reason


def _never_run(claim: Claim, size: Any) -> runner.Observations:
    raise AssertionError("a not-runnable claim must never run")


def _broken(tmp_path: Path, mutate: Any) -> Path:
    data = yaml.safe_load((CLAIMS / "thesis-table-7.2.yaml").read_text())
    mutate(data)
    (tmp_path / "claim.schema.json").write_text((CLAIMS / "claim.schema.json").read_text())
    path = tmp_path / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("metric"), "'metric' is a required property"),
        (lambda d: d.update(metric="speed"), "metric: 'speed' does not match"),
        (lambda d: d["expect"][0].update(relation="bigger"), "expect/0/relation: 'bigger' is not one of"),
        (
            lambda d: d["expect"][0].update(variant="nodejs"),
            "expect/0/variant: 'nodejs' is not one of the variants",
        ),
        (
            lambda d: d["experiment"]["quick"].update(repetitions=2),
            "experiment/quick/repetitions: 2 is less than",
        ),
        (lambda d: d.update(status="needs-variant"), "'missing' is a required property"),
        # Bad input (#45): a quoted source, a tolerance for a published figure, a declared sample size
        (lambda d: d["source"].pop("quote"), "source: 'quote' is a required property"),
        (lambda d: d["expect"][0].pop("tolerance"), "expect/0: 'tolerance' is a required property"),
        (
            lambda d: d["experiment"]["full"].pop("repetitions"),
            "experiment/full: 'repetitions' is a required property",
        ),
        (lambda d: d.update(status="not-testable"), "'not_testable' is a required property"),
        (lambda d: d["expect"][0].update(relation="similar"), "expect/0/relation: 'similar' is not one of"),
        # a row that would exclude its expected effect must have one, on its relation's side, and no figure
        (
            lambda d: d["expect"][0].update(tests_expected_effect="yes"),
            "expect/0/tests_expected_effect: 'yes' is not of type 'boolean'",
        ),
        (
            lambda d: d["expect"][0].update(tests_expected_effect=True),
            "expect/0/tests_expected_effect: needs expected_effect",
        ),
        (
            lambda d: d["expect"][0].update(tests_expected_effect=True, expected_effect=0.9),
            "expect/0/tests_expected_effect: expected_effect 0.9 is not on the side of 1 that 'greater' expects",
        ),
        (
            lambda d: d["expect"][0].update(tests_expected_effect=True, expected_effect=1.1),
            "expect/0/tests_expected_effect: a row with a published_ratio asks its magnitude instead",
        ),
    ],
)
def test_broken_claim_fails_with_clear_message(tmp_path: Path, mutate: Any, message: str) -> None:
    path = _broken(tmp_path, mutate)
    with pytest.raises(ClaimError) as err:
        load_file(path, load_schema(tmp_path))
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_id_must_match_file_name(tmp_path: Path) -> None:
    path = _broken(tmp_path, lambda d: None)
    renamed = path.with_name("other.yaml")
    path.rename(renamed)
    with pytest.raises(ClaimError, match="must equal the file name"):
        load_file(renamed, load_schema(tmp_path))


# --- verdict logic on synthetic numbers -------------------------------------------------------------

A = [100.0, 101.0, 99.0, 100.5, 99.5]


def _judge(relation: str, b: list[float], a: list[float] = A, **kw: float) -> str:
    comparison = Comparison("a", "b", relation, **kw)
    return judge(comparison, "node", Side("a", a), Side("b", b)).outcome


def test_greater_replicated_and_contradicted() -> None:
    assert _judge("greater", [120.0, 121.0, 119.0, 120.5, 119.5]) == REPLICATED
    assert _judge("greater", [80.0, 81.0, 79.0, 80.5, 79.5]) == CONTRADICTED
    assert _judge("less", [80.0, 81.0, 79.0, 80.5, 79.5]) == REPLICATED


def test_overlapping_noise_is_inconclusive() -> None:
    assert _judge("greater", [60.0, 140.0, 100.0, 90.0, 115.0]) == INCONCLUSIVE


def test_too_few_valid_runs_is_inconclusive() -> None:
    comparison = Comparison("a", "b", "greater")
    result = judge(comparison, "node", Side("a", A), Side("b", [150.0, 151.0], invalid=3))
    assert result.outcome == INCONCLUSIVE
    assert "fewer than 3 valid runs" in result.reason and "3 invalid" in result.reason


def test_too_few_valid_runs_say_why_the_others_were_excluded() -> None:
    """An inconclusive row names what its invalid runs lacked, each reason once with its count: what a rerun
    would have to change (a lower first step, a quieter host), or that none would."""
    first_step = "the first step (50 req/s) already missed the SLO: lower the ladder's start rate"
    records = [
        {"valid": False, "value": None, "at_least": None, "run": f"r{k}", "why": first_step} for k in range(3)
    ]
    b = runner.side({("java", "driver-pool"): records}, "java", "driver-pool")
    assert b.invalid == 3 and b.invalid_why == [first_step] * 3
    result = judge(Comparison("a", "b", "greater"), "java", Side("java/hikaricp", A), b)
    assert result.outcome == INCONCLUSIVE
    assert result.reason.endswith(f"; java/driver-pool: {first_step} (3 runs)")


def _fake_observations(values: dict[tuple[str, str], list[float | None]]) -> Any:
    def run(claim: Claim, size: Any) -> runner.Observations:
        return {
            key: [{"valid": v is not None, "value": v, "run": "x"} for v in vals]
            for key, vals in values.items()
        }

    return run


def test_claim_end_to_end_with_synthetic_runs() -> None:
    claim = find("thesis-table-7.2")  # CPU cost per request: node's over java's, expected > 1
    good = _fake_observations(
        {
            ("java", "java"): [7.52, 7.29, 7.10, 7.41],
            ("node", "node"): [9.35, 9.09, 9.17, 9.26],
        }
    )
    assert runner.replicate(claim, quick=True, runner=good).outcome == REPLICATED
    # invalid runs are excluded and counted: two valid runs on one side -> inconclusive
    few = _fake_observations(
        {("java", "java"): [1330.0, None, None, 1350.0], ("node", "node"): [1070.0, 1100.0, 1090.0]}
    )
    verdict = runner.replicate(claim, quick=True, runner=few)
    assert verdict.outcome == INCONCLUSIVE
    assert verdict.results[0].a.invalid == 2


def test_per_impl_comparisons_and_unsorted_note() -> None:
    claim = find("rubis-3-indexes-unsorted")
    # the unsorted variant moved to rubis-3-unsorted: still listed (its stored runs keep their key), never run
    assert "unsorted" in [v.name for v in claim.variants]
    assert {c.variant.name for c in runner.cells(claim, claim.full)} == {"indexed-sorted", "no-index"}
    obs = _fake_observations(
        {
            ("php", "indexed-sorted"): [5.0, 5.1, 4.9, 5.05],
            ("php", "no-index"): [9.0, 9.2, 8.8, 9.1],
        }
    )
    verdict = runner.replicate(claim, quick=True, runner=obs)
    assert [r.outcome for r in verdict.results] == [REPLICATED]
    assert not any("conformance" in note for note in verdict.notes)
    unsorted = find("rubis-3-unsorted")
    obs = _fake_observations(
        {("php", "indexed-sorted"): [5.0, 5.1, 4.9, 5.05], ("php", "unsorted"): [4.0, 4.1, 3.9, 4.05]}
    )
    verdict = runner.replicate(unsorted, quick=True, runner=obs)
    assert [r.outcome for r in verdict.results] == [REPLICATED]
    assert any("conformance" in note for note in verdict.notes)


def test_group_keys_are_deterministic() -> None:
    claim = find("thesis-fig-6.2-pool-size")
    size = runner.size_for(claim, True, None)
    assert groups.campaign_for(claim, size) == groups.campaign_for(find("thesis-fig-6.2-pool-size"), size)
    # quick and full differ only in repetitions here: the full size extends the quick size's runs
    assert groups.campaign_for(claim, size) == groups.campaign_for(claim, runner.size_for(claim, False, None))
    log = find("step-table-7-log-level")  # its full size adds apps: another campaign
    assert groups.campaign_for(log, log.quick) != groups.campaign_for(log, log.full)
    # the thesis measured HikariCP in its Java app: so does the claim
    assert [c.impl for c in runner.cells(claim, size)] == ["java", "java"]
    assert all(c.variant.knobs["JAVA_POOL"] == "hikari" for c in runner.cells(claim, size))


def test_metric_value_dotted_path() -> None:
    metrics = {"latency_ms": {"p99": 12.5}, "throughput_rps": 100, "utilized_cpu": None}
    assert runner.metric_value(metrics, "latency_ms.p99") == 12.5
    assert runner.metric_value(metrics, "throughput_rps") == 100.0
    assert runner.metric_value(metrics, "utilized_cpu") is None
    assert runner.metric_value(None, "throughput_rps") is None


def test_cli_list_shows_every_claim() -> None:
    app = typer.Typer()
    register(app)

    @app.command("other")
    def _other() -> None:  # a second command keeps typer in multi-command mode
        pass

    result = CliRunner().invoke(app, ["replicate", "--list"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    for claim in load_all():
        assert claim.id in result.output
        if not claim.runnable:
            assert "not testable here" in result.output or "needs a variant" in result.output


def _step(rate: float, met: bool) -> dict[str, Any]:
    return {"rate": rate, "p99_ms": 5.0 if met else 90.0, "slo_met": met}


def test_a_stored_calibration_that_failed_from_a_higher_start_is_run_again() -> None:
    """Stored before calibrations started lower after failing from their first step: run again, unless it
    already started from the lowest start a calibration reaches, or descended and met a latency floor."""
    settings = LadderSettings(calibration_start_per_cpu=400.0)
    lowest = calibration_start(settings, 0.5, settings.calibration_descents)
    censored = {"ladder": {"steps": [_step(200, False), _step(300, False)]}}
    assert _rates_from_calibration(censored, settings, cores=0.5) is None
    at_the_lowest = {"ladder": {"steps": [_step(round(lowest), False), _step(round(lowest * 1.5), False)]}}
    assert _rates_from_calibration(at_the_lowest, settings, cores=0.5) == ladder_rates(
        round(lowest), settings
    )
    bracketed = {"ladder": {"steps": [_step(200, True), _step(300, False)]}}
    assert _rates_from_calibration(bracketed, settings, cores=0.5) == ladder_rates(300, settings)
    # one that descended and met a latency floor (its p99 within the SLO's) stopped there on purpose
    floor = {"ladder": {"steps": [{**_step(40, False), "p99_ms": 30.0, "kept_up": True}], "stop_p99_ms": 50}}
    assert _rates_from_calibration(floor, settings, cores=0.5) == ladder_rates(40, settings)
    not_descended = {"ladder": {**floor["ladder"], "steps": [{**floor["ladder"]["steps"][0], "rate": 200}]}}
    assert _rates_from_calibration(not_descended, settings, cores=0.5) is None


def test_each_unequal_variant_is_flagged_with_its_own_note() -> None:
    per_field, unsorted = find("rubis-6-per-field-selects"), find("rubis-3-unsorted")
    by_name = {v.name: v for v in per_field.variants}
    assert runner.is_unfair(by_name["per-field"]) and not runner.is_unfair(by_name["one-select"])
    assert runner.unfair_knobs(by_name["per-field"]) == ["BIDBENCH_UNFAIR_PER_FIELD"]
    notes = runner.notes_for(per_field)
    assert any("BIDBENCH_UNFAIR_PER_FIELD=1" in n for n in notes)
    assert not any("UNFAIR_UNSORTED" in n for n in notes)
    notes = runner.notes_for(unsorted)
    assert any("BIDBENCH_UNFAIR_UNSORTED=1" in n for n in notes)
    assert not any("UNFAIR_PER_FIELD" in n for n in notes)
