"""Claims whose variants run side by side (harness/claims/side_by_side.py): which variants become the
groups of one fresh start, the paired verdict from stored side-by-side records, and the refusal of a claim
whose variants cannot share a fresh start. No run: the records are written here as the engine stores them."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from harness import paths
from harness.claims import runner
from harness.claims import side_by_side as sbs
from harness.claims.layout import preflight
from harness.claims.model import DESIGN, ClaimError, find, load_all, load_file, load_schema
from harness.claims.verdict import REPLICATED
from harness.cli import claims as claims_cli
from harness.model.side_by_side import PRESETS
from harness.record.folders import utc_now

CLAIMS = paths.ROOT / "claims"
DRIFT = [1.0, 1.22, 0.86, 1.12, 0.94]
"""The host's factor per fresh start: every group of one fresh start shares it."""


def test_the_schema_and_the_code_name_the_same_side_by_side_metrics() -> None:
    schema = json.loads((CLAIMS / "claim.schema.json").read_text())
    [rule] = [r for r in schema["allOf"] if "design" in json.dumps(r["if"])]
    assert set(rule["then"]["properties"]["metric"]["enum"]) == set(sbs.METRIC_FIGURES)


def test_the_paired_claims_run_side_by_side_and_the_others_apart() -> None:
    side = {c.id for c in load_all() if c.design == DESIGN}
    assert {
        "step-table-7-log-level",
        "freire-jvm-builds",
        "thesis-6.4-pg-native",
        "thesis-table-7.2",
        "pereira-energy-ranking",
        "thesis-table-7.2-instances",
        "thesis-6.2-pool-library",
    } <= side
    for claim in load_all():
        if claim.design == DESIGN:
            assert claim.metric in sbs.METRIC_FIGURES and claim.quick.preset in PRESETS, claim.id
            assert "# Side by side:" in (claim.path or Path()).read_text(), claim.id
    for name in ("thesis-6.2-pool-unpooled", "rubis-3-indexes-unsorted"):
        assert find(name).design == "apart"


# --- variants to groups ---------------------------------------------------------------------------------


def test_variants_that_name_their_apps_share_one_fresh_start() -> None:
    claim = find("pereira-energy-ranking")
    (lineup,) = sbs.lineups(claim, claim.quick)
    assert lineup.labels == ["java", "node", "php"] and lineup.impl == ""
    groups = sbs.groups_of(claim.quick, lineup, None)
    assert [(g.label, g.plan.impl, g.plan.cpus, g.plan.instances) for g in groups] == [
        ("java", "java", 0.5, 1),
        ("node", "node", 0.5, 1),
        ("php", "php", 0.5, 1),
    ]
    key = sbs.key_of(claim.quick, lineup)
    assert {g.plan.group for g in groups} == {key} and key.startswith("claims-side-by-side/java+node+php/")


def test_one_apps_variants_share_a_fresh_start_per_app() -> None:
    claim = find("step-table-7-log-level")
    assert [(x.impl, x.labels) for x in sbs.lineups(claim, claim.quick)] == [
        ("node", ["log-error", "log-info", "log-debug"])
    ]
    full = sbs.lineups(claim, claim.full)
    assert [x.impl for x in full] == ["java", "node", "php"]
    java = sbs.groups_of(claim.full, full[0], None)
    assert [g.plan.knobs for g in java] == [{"LOG_LEVEL": level} for level in ("error", "info", "debug")]
    assert len({sbs.key_of(claim.full, x) for x in full}) == 3
    jvms = find("freire-jvm-builds")
    (builds,) = sbs.lineups(jvms, jvms.quick)
    assert [g.plan.jvm for g in sbs.groups_of(jvms.quick, builds, None)] == [v.jvm for v in jvms.variants]


def test_claims_that_need_the_same_groups_share_their_fresh_starts() -> None:
    table, twice = find("thesis-table-7.2"), find("thesis-7.2-twice-efficient")
    keys = [sbs.key_of(c.quick, sbs.lineups(c, c.quick)[0]) for c in (table, twice)]
    assert keys[0] == keys[1]
    # the preset is part of what a fresh start runs
    quick = replace(table.quick, preset="quick")
    assert sbs.key_of(quick, sbs.lineups(table, quick)[0]) != keys[0]
    # and a shared line-up is estimated once
    counted: set[tuple[str, int]] = set()
    first = runner.estimate(table, table.quick, Path("/nonexistent"), counted)
    again = runner.estimate(twice, twice.quick, Path("/nonexistent"), counted)
    assert first[1] == table.quick.repetitions and again == (0.0, 0, 0)


def test_the_capacity_rounds_key_a_line_up_only_where_they_change_what_runs() -> None:
    """`capacity_rounds` came after the claims' fresh starts were stored: a preset without capacity rungs
    (the claims' `cost-only`), or with one round, keeps the key it had; a preset that searches twice does not
    share fresh starts with one that searched once."""
    table = find("thesis-table-7.2")
    for name, keyed in (("cost-only", False), ("quick", False), ("standard", True)):
        size = replace(table.quick, preset=name)
        assert ("capacity_rounds" in sbs.fingerprint(size, sbs.lineups(table, size)[0])["spec"]) is keyed, (
            name
        )


# --- the paired verdict from stored records ---------------------------------------------------------------


def _record(
    labels: list[str], costs: dict[str, float], valid: bool = True, version: int = sbs.RECORD_VERSION
) -> dict[str, Any]:
    """A side-by-side record as harness/engine/side_by_side.py stores it, reduced to what a claim reads."""
    return {
        "version": version,
        "groups": labels,
        "status": "completed",
        "reason": "" if valid else "no cost for node: 2 of 8 steps paired",
        "valid": valid,
        "cost": {
            "groups": {
                label: {"app_us": costs.get(label), "db_us": 40.0, "stack_us": None, "pss_mb": 120.0}
                for label in labels
            }
        },
    }


def _store(results: Path, key: str, repetition: int, record: dict[str, Any], tag: str = "") -> str:
    run_id = f"2026T{repetition}{tag}-{key.replace('/', '-')}"
    folder = results / run_id
    folder.mkdir(parents=True)
    manifest = {
        "status": "completed",
        "impl": "+".join(record["groups"]),
        "regime": {"name": "side-by-side", "group": key, "repetition": repetition},
        "host": {"cpu_model": "Test CPU", "cores": 2},
        "git": {"commit": "abc123", "dirty": False},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "side-by-side.json").write_text(json.dumps(record))
    return run_id


def _table_72_folders(
    results: Path, ratio: float, invalid: int | None = None, version: int = sbs.RECORD_VERSION
) -> list[str]:
    claim = find("thesis-table-7.2")
    key = sbs.key_of(claim.quick, sbs.lineups(claim, claim.quick)[0], version)
    ids = []
    for k, drift in enumerate(DRIFT):
        costs = {"java": 200.0 * drift, "node": 200.0 * ratio * drift * (1 + 0.004 * (-1) ** k)}
        record = _record(["java", "node"], costs, valid=k != invalid, version=version)
        ids.append(_store(results, key, k, record, tag=f"v{version}"))
    return ids


def test_records_of_an_earlier_version_keep_their_key_and_are_never_paired_with_newer(tmp_path: Path) -> None:
    claim = find("thesis-table-7.2")
    old = _table_72_folders(tmp_path, 1.25, version=1)
    size, quick, observations = runner.from_folders(claim, [tmp_path / i for i in old])
    assert quick and len(observations[("node", "node")]) == len(old)
    assert sbs.key_of(size, sbs.lineups(claim, size)[0], 1) != sbs.key_of(size, sbs.lineups(claim, size)[0])
    new = _table_72_folders(tmp_path, 1.25)
    with pytest.raises(ValueError, match=f"record versions 1, {sbs.RECORD_VERSION}"):
        runner.from_folders(claim, [tmp_path / i for i in old + new])


def test_a_side_by_side_verdict_is_paired_by_fresh_start(tmp_path: Path) -> None:
    claim = find("thesis-table-7.2")
    ids = _table_72_folders(tmp_path, 1.25, invalid=4)
    size, quick, observations = runner.from_folders(claim, [tmp_path / i for i in ids])
    assert quick and size.repetitions == 5
    java, node = observations[("java", "java")], observations[("node", "node")]
    # one block per fresh start, the same for every group of it; the invalid one gives no value to any
    assert [r["block"] for r in java] == [r["block"] for r in node] == ids
    assert [r["valid"] for r in node] == [True] * 4 + [False]
    verdict = runner.judge_claim(claim, size, observations)
    (row,) = verdict.results
    assert row.paired and row.a.n == 4 and row.ratio == pytest.approx(1.25, rel=0.01)
    # the host's drift of ±20 % cancels: the per-fresh-start ratios scatter by under 1 %
    assert row.ratio_ci is not None and row.ratio_ci.half_width_pct is not None
    assert row.ratio_ci.half_width_pct < 2 and row.outcome == REPLICATED
    # the same values compared apart see the drift and cannot place the ratio
    unpaired = {k: [{**r, "block": None} for r in v] for k, v in observations.items()}
    (apart,) = runner.judge_claim(claim, size, unpaired).results
    assert not apart.paired and apart.ratio_ci is not None
    assert (apart.ratio_ci.half_width_pct or 0) > 10 * row.ratio_ci.half_width_pct


def test_a_record_of_other_groups_is_named_never_used(tmp_path: Path) -> None:
    claim = find("thesis-table-7.2")
    ids = _table_72_folders(tmp_path, 1.25)
    stray = _store(
        tmp_path / "other", "claims-side-by-side/java+php/0000000000", 0, _record(["java", "php"], {})
    )
    with pytest.raises(ValueError, match=re.escape(stray)):
        runner.from_folders(claim, [tmp_path / "other" / stray, *(tmp_path / i for i in ids)])


def test_the_cli_recomputes_a_side_by_side_claim_from_its_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _table_72_folders(tmp_path, 1.25)
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    app = typer.Typer()
    claims_cli.register(app)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(
        app, ["replicate", "thesis-table-7.2", "--from", ",".join(ids)], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert "nothing was run" in result.output and "paired" in result.output
    assert "replicated" in result.output


def _latency_record(sorted_ms: float, unsorted_ms: float) -> dict[str, Any]:
    """A rubis-3-unsorted fresh start: three cost steps, the first left out for every group (a busy host)."""
    record = _record(["indexed-sorted", "unsorted"], {"indexed-sorted": 300.0, "unsorted": 290.0})

    def steps(mean_ms: float) -> list[dict[str, Any]]:
        return [{"index": k, "completed": 400, "mean_ms": mean_ms * (9 if k == 0 else 1)} for k in range(3)]

    record["cost"].update(
        paired_steps=[1, 2], steps={"indexed-sorted": steps(sorted_ms), "unsorted": steps(unsorted_ms)}
    )
    return record


def test_a_latency_claim_pairs_each_apps_mean_latency_and_reports_each_line_up_in_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rubis-3-unsorted runs a line-up per app; its value is each group's mean latency over the paired cost
    steps, and `replicate` writes one HTML file per line-up (one file holds one side-by-side comparison)."""
    claim = find("rubis-3-unsorted")
    ids = []
    for lineup in sbs.lineups(claim, claim.full):
        key = sbs.key_of(claim.full, lineup)
        for k, drift in enumerate(DRIFT):
            ids.append(_store(tmp_path, key, k, _latency_record(2.0 * drift, 1.8 * drift), tag=lineup.impl))
    size, quick, observations = runner.from_folders(claim, [tmp_path / i for i in ids])
    assert not quick and [r["value"] for r in observations[("php", "unsorted")]] == pytest.approx(
        [1.8 * d for d in DRIFT]
    )
    verdict = runner.judge_claim(claim, size, observations)
    assert [(r.impl, r.paired, round(r.ratio or 0, 3), r.outcome) for r in verdict.results] == [
        (impl, True, 0.9, REPLICATED) for impl in ("php", "java", "node")
    ]
    verdict.observations = observations
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    claims_cli.write_report([(claim, verdict)], tmp_path / "report.html")
    written = {p.name.split("-")[-2]: p.read_text() for p in tmp_path.glob("report-*.html")}
    assert sorted(written) == ["java", "node", "php"]
    assert all("indexed-sorted" in text for text in written.values())


def _fake_regime_run(results: Path, asked: list[tuple[str, int]]) -> Any:
    """The side-by-side regime's run as the claims runner calls it, one repetition at a time: it stores a
    folder and an index line per fresh start (each its own run id) and notes what it was asked."""

    def fake_run(groups: list[Any], spec: Any, repetitions: int, **kw: Any) -> list[dict[str, Any]]:
        (repetition,) = kw["only"]
        asked.append((groups[0].plan.impl, repetition))
        labels = [g.label for g in groups]
        record = _record(labels, {label: 100.0 + k for k, label in enumerate(labels)})
        run_id = _store(results, kw["comparison"], repetition, record, tag=f"-{len(asked)}")
        line = {
            "schema_version": 1,
            "run_id": run_id,
            "path": str(results / run_id),
            "created_utc": utc_now(),
            "impl": "+".join(labels),
            "variant": "default",
            "regime": "side-by-side",
            "group": kw["comparison"],
            "repetition": repetition,
            "status": "completed",
            "valid": True,
            "slo_met": True,
        }
        with (results / "index.jsonl").open("a") as index:
            index.write(json.dumps(line) + "\n")
        return [dict(record, folder=str(results / run_id))]

    return fake_run


def test_a_side_by_side_run_reuses_its_stored_fresh_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner asks the regime only for the repetitions it has not stored, one at a time, interleaved
    across line-ups; a rerun asks for none."""
    from harness.regimes import side_by_side as regime

    claim = find("step-table-7-log-level")
    size = replace(claim.full, repetitions=2)
    asked: list[tuple[str, int]] = []

    monkeypatch.setattr(regime, "run", _fake_regime_run(tmp_path, asked))
    first = sbs.run(claim, size, tmp_path)
    assert asked == [("java", 0), ("node", 0), ("php", 0), ("java", 1), ("node", 1), ("php", 1)]
    assert [r["value"] for r in first[("php", "log-debug")]] == [102.0, 102.0]
    asked.clear()
    assert sbs.run(claim, size, tmp_path) == first and asked == []


def test_again_runs_every_fresh_start_anew_and_then_reuses_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`replicate --again`: the stored fresh starts of an earlier replication are not reused; the ones the
    new replication stores are (an interrupted second run resumes from its own)."""
    from harness.claims import ladders
    from harness.regimes import side_by_side as regime

    claim = find("step-table-7-log-level")
    size = replace(claim.quick, repetitions=2)
    asked: list[tuple[str, int]] = []

    monkeypatch.setattr(regime, "run", _fake_regime_run(tmp_path, asked))
    first = sbs.run(claim, size, tmp_path)
    assert asked == [("node", 0), ("node", 1)]
    with ladders.again():
        second = sbs.run(claim, size, tmp_path)
        assert asked == [("node", 0), ("node", 1)] * 2
        runs = {r["run"] for records in second.values() for r in records}
        assert not runs & {r["run"] for records in first.values() for r in records}
        assert sbs.run(claim, size, tmp_path) == second and len(asked) == 4


# --- refusals ---------------------------------------------------------------------------------------------


def _edited(tmp_path: Path, base: str, edit: Any) -> Path:
    data = yaml.safe_load((CLAIMS / f"{base}.yaml").read_text())
    edit(data)
    (tmp_path / "claim.schema.json").write_text((CLAIMS / "claim.schema.json").read_text())
    path = tmp_path / f"{base}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _side_by_side(data: dict[str, Any]) -> None:
    data["experiment"]["design"] = "side-by-side"
    for size in ("quick", "full"):
        data["experiment"][size]["preset"] = "cost-only"


@pytest.mark.parametrize(
    ("base", "message"),
    [
        ("rubis-3-indexes-unsorted", "experiment/regime: 'ladder' was expected"),
        ("thesis-fig-6.2-pool-size", "metric: 'saturation_rps' is not one of"),
    ],
)
def test_variants_that_cannot_be_groups_are_refused_naming_the_field(
    tmp_path: Path, base: str, message: str
) -> None:
    path = _edited(tmp_path, base, _side_by_side)
    with pytest.raises(ClaimError) as err:
        load_file(path, load_schema(tmp_path))
    assert message in str(err.value)


def test_groups_may_differ_in_instances_but_not_in_the_limit_of_each(tmp_path: Path) -> None:
    claim = find("thesis-table-7.2-instances")
    assert [(v.name, v.instances) for v in claim.variants] == [("java", 1), ("java-x2", 2)]
    preflight(claim, claim.quick, cores=2)

    def edit(data: dict[str, Any]) -> None:
        data["experiment"]["variants"][1]["cpus"] = 0.25

    with pytest.raises(ClaimError, match="experiment/variants/1/cpus: the variants differ in cpus"):
        load_file(_edited(tmp_path, "thesis-table-7.2-instances", edit), load_schema(tmp_path))


def test_indexes_are_the_databases_so_they_cannot_differ_between_groups(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        _side_by_side(data)
        data["experiment"]["variants"][1]["with_indexes"] = False

    with pytest.raises(ClaimError, match="experiment/variants/1/with_indexes: the variants differ"):
        load_file(_edited(tmp_path, "thesis-6.4-pg-native", edit), load_schema(tmp_path))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["experiment"]["quick"].pop("preset"),
            "experiment/quick: 'preset' is a required property",
        ),
        (
            lambda d: d["experiment"]["full"].update(preset="fastest"),
            "experiment/full/preset: 'fastest' is not a side-by-side preset",
        ),
    ],
)
def test_a_side_by_side_size_names_its_preset(tmp_path: Path, edit: Any, message: str) -> None:
    with pytest.raises(ClaimError) as err:
        load_file(_edited(tmp_path, "thesis-table-7.2", edit), load_schema(tmp_path))
    assert message in str(err.value)


def test_groups_that_do_not_fit_the_machine_are_refused_before_anything_runs() -> None:
    claim = find("pereira-energy-ranking")
    size = replace(claim.quick, cpus=0.6)
    claim = replace(claim, quick=size)
    with pytest.raises(ClaimError) as err:
        preflight(claim, size, cores=2)
    assert "experiment/quick/cpus" in str(err.value) and "java, node, php side by side" in str(err.value)
    assert "nothing was run" in str(err.value)
    preflight(find("pereira-energy-ranking"), find("pereira-energy-ranking").quick, cores=2)
