"""The evidence committed beside docs/replication/REPORT.md (harness/claims/evidence.py): written with the
report from stored verdicts and their result folders, it regenerates the same report, byte for byte,
without results/; a checksum that does not match or a missing member is refused with the file's name.
The records are synthetic, shaped as the engine stores them: one side-by-side claim, one apart."""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from claims.test_claims_side_by_side import _table_72_folders
from claims.test_replication import _fake_folder
from harness import paths
from harness.analysis import claims_report
from harness.claims import evidence, runner
from harness.claims.model import Claim, find, load_all
from harness.claims.store import measured, save_verdict, verdict_record
from harness.claims.verdict import NOT_TESTABLE
from harness.cli import claims as claims_cli

INSTANCES = "thesis-table-7.2-instances"


def _instances() -> Claim:
    """The Java instances claim as it ran before it moved side by side, apart: these tests build its
    verdicts from ladder folders."""
    return replace(find(INSTANCES), design="apart")


def _claims() -> list[Claim]:
    return [_instances() if claim.id == INSTANCES else claim for claim in load_all()]


def _table_72_verdict(results: Path) -> tuple[Any, Any, bool, Any]:
    """Table 7.2's side-by-side folders under `results`, and (claim, size, quick, verdict) judged from them."""
    table = find("thesis-table-7.2")
    ids = _table_72_folders(results, 1.25, invalid=4)
    size, quick, observations = runner.from_folders(table, [results / i for i in ids])
    verdict = runner.judge_claim(table, size, observations)
    verdict.observations = observations
    return table, size, quick, verdict


def _verdicts(results: Path) -> None:
    """Two stored verdicts and their folders under `results`: Table 7.2 side by side, and the Java
    instances claim, apart."""
    table, size, quick, verdict = _table_72_verdict(results)
    save_verdict(verdict_record(table, size, quick, verdict), results)
    instances = _instances()
    costs = {"java": [300.0, 306.0, 297.0], "java-x2": [303.0, 299.0, 301.0]}
    ids = []
    for cell in runner.cells(instances, instances.quick):
        for rep, cost in enumerate(costs[cell.variant.name]):
            ids.append(_fake_folder(results, instances, cell, rep, cost))
    size, quick, observations = runner.from_folders(instances, [results / i for i in ids])
    verdict = runner.judge_claim(instances, size, observations)
    verdict.observations = observations
    save_verdict(verdict_record(instances, size, quick, verdict), results)


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, Path]:
    """(the report, its evidence directory), written from stored verdicts; results/ then removed, as on
    a fresh clone."""
    results = tmp_path / "results"
    _verdicts(results)
    report = claims_report.write(_claims(), results, tmp_path / "docs" / "REPORT.md")
    shutil.rmtree(results)
    return report, report.parent / "evidence"


def _member(names: list[str], prefix: str) -> str:
    [name] = [n for n in names if n.startswith("verdicts/" + prefix)]
    return name


def test_the_report_is_regenerated_from_the_evidence_alone_byte_for_byte(written: tuple[Path, Path]) -> None:
    report, where = written
    assert {p.name for p in where.iterdir()} == {evidence.ARCHIVE, evidence.CHECKSUMS}
    content = evidence.read(where)
    names = sorted(content)
    verdicts = [n for n in names if n.startswith("verdicts/")]
    assert len(verdicts) == 2
    table = _member(verdicts, "thesis-table-7.2-quick-")
    assert _member(verdicts, "thesis-table-7.2-instances-quick-")
    runs = {n.split("/")[1] for n in names if n.startswith("runs/")}
    assert len(runs) == 5 + 6
    # records only: no logs, no time series
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("runs/")} <= set(evidence.FOLDER_RECORDS)
    stored = json.loads(content[table])
    assert [r["block"] for r in stored["observations"][0]["runs"]] == sorted(runs & set(stored["runs"]))
    result = claims_report.from_evidence(_claims(), content)
    assert result.differences == []
    assert [r["outcome"] for r in result.records] == ["replicated", "replicated"]
    assert result.report == report.read_text(encoding="utf-8")
    assert "docs/replication/evidence/" in result.report


def test_the_archive_is_the_same_bytes_for_the_same_evidence(written: tuple[Path, Path]) -> None:
    _, where = written
    before = (where / evidence.ARCHIVE).read_bytes()
    evidence.write(evidence.read(where), where)
    assert (where / evidence.ARCHIVE).read_bytes() == before


def _rewrite(where: Path, change: dict[str, bytes | None]) -> None:
    """The archive rewritten with members changed (None: removed), its checksum file left as it was."""
    with tarfile.open(where / evidence.ARCHIVE, "r:gz") as tar:
        content = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    for name, data in change.items():
        if data is None:
            content.pop(name)
        else:
            content[name] = data
    (where / evidence.ARCHIVE).write_bytes(evidence.archive_bytes(content))


def test_a_changed_member_is_refused_naming_it(written: tuple[Path, Path]) -> None:
    _, where = written
    content = evidence.read(where)
    [name] = [n for n in content if n.startswith("runs/") and n.endswith("side-by-side.json")][:1]
    record = json.loads(content[name])
    record["cost"]["groups"]["node"]["app_us"] *= 0.5
    _rewrite(where, {name: json.dumps(record).encode()})
    with pytest.raises(evidence.EvidenceError, match=f"checksum mismatch .*{re.escape(name)}"):
        evidence.read(where)


def test_a_changed_archive_is_refused_naming_it(written: tuple[Path, Path]) -> None:
    _, where = written
    data = bytearray((where / evidence.ARCHIVE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (where / evidence.ARCHIVE).write_bytes(bytes(data))
    with pytest.raises(evidence.EvidenceError, match=evidence.ARCHIVE):
        evidence.read(where)


def test_part_of_the_evidence_is_never_used(written: tuple[Path, Path]) -> None:
    _, where = written
    content = evidence.read(where)
    name = next(n for n in sorted(content) if n.endswith("/manifest.json"))
    _rewrite(where, {name: None})
    with pytest.raises(
        evidence.EvidenceError, match=re.escape(f"not in the archive: {evidence.ARCHIVE}:{name}")
    ):
        evidence.read(where)
    # consistent checksums over a partial archive: the verdict that cites the folder is refused
    partial = {n: d for n, d in content.items() if not n.startswith(name.rsplit("/", 1)[0] + "/")}
    with pytest.raises(evidence.EvidenceError, match="lacks the records of"):
        claims_report.from_evidence(_claims(), partial)


def test_a_report_whose_folders_are_gone_keeps_no_evidence(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _verdicts(results)
    target = tmp_path / "docs" / "REPORT.md"
    for folder in results.iterdir():
        if folder.name != "claims":
            shutil.rmtree(folder)
    claims_report.write(_claims(), results, target)
    assert not (target.parent / "evidence" / evidence.ARCHIVE).exists()


def test_on_a_fresh_clone_a_new_verdict_extends_the_committed_report(
    written: tuple[Path, Path], tmp_path: Path
) -> None:
    """results/ is not in the repository: a clone's first verdict is written beside the committed ones,
    restored from the evidence (records only, nothing replaced, no index line), and its second replication
    finds the first."""
    report, where = written
    results = tmp_path / "clone-results"
    _instances_verdict(results, {"java": [300.0, 302.0, 298.0], "java-x2": [340.0, 345.0, 338.0]})
    own = {p.relative_to(results): p.read_bytes() for p in results.rglob("*") if p.is_file()}
    claims_report.write(_claims(), results, report)
    content = evidence.read(where)
    assert len([n for n in content if n.startswith("verdicts/")]) == 3
    text = report.read_text(encoding="utf-8")
    section = text.split("## Two runs", 1)[1].split("\n## ", 1)[0]
    assert "The labels agree on 0 of 1 rows (0 %)." in section
    assert "One run so far (1): `thesis-table-7.2`." in section
    assert all((results / name).read_bytes() == data for name, data in own.items())
    restored = [p for p in results.iterdir() if p.is_dir() and p.name != "claims"]
    assert len(restored) == 5 + 6 + 6
    assert not (results / "index.jsonl").exists()
    assert evidence.restore(results, where) == (0, 0)


def test_evidence_that_cannot_be_trusted_is_not_restored(
    written: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, where = written
    _rewrite(where, {"report-git.json": b"{}\n"})
    results = tmp_path / "clone-results"
    with pytest.raises(evidence.EvidenceError, match="checksum mismatch"):
        evidence.restore(results, where)
    claims_report.restore_evidence(where, results)
    said = " ".join(capsys.readouterr().out.split())
    assert "not restored (checksum mismatch" in said and "the report holds only the verdicts" in said
    assert not results.exists()


def test_the_cli_recomputes_from_the_evidence(
    written: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, where = written
    expected = report.read_text(encoding="utf-8")
    report.write_text("stale\n", encoding="utf-8")
    monkeypatch.setattr(evidence, "DIRECTORY", where)
    monkeypatch.setattr(claims_report, "REPORT", report)
    monkeypatch.setattr(claims_cli, "load_all", _claims)
    app = typer.Typer()
    claims_cli.register(app)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["replicate", "--from-evidence"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "2 verdict(s) recomputed" in result.output and "nothing was run" in result.output
    assert report.read_text(encoding="utf-8") == expected
    # The first digest's first hex digit changed (a name must stay as it is: that is another refusal).
    sums = (where / evidence.CHECKSUMS).read_text()
    (where / evidence.CHECKSUMS).write_text("0f"[sums[0] == "0"] + sums[1:], encoding="utf-8")
    refused = CliRunner().invoke(app, ["replicate", "--from-evidence"], env={"COLUMNS": "250"})
    assert refused.exit_code != 0 and "checksum mismatch" in str(refused.exception)


def _instances_verdict(results: Path, costs: dict[str, list[float]]) -> None:
    """One more verdict of the Java instances claim, from fresh starts of its own."""
    instances = _instances()
    ids = []
    for cell in runner.cells(instances, instances.quick):
        for rep, cost in enumerate(costs[cell.variant.name]):
            ids.append(_fake_folder(results, instances, cell, rep, cost, year=2027))
    size, quick, observations = runner.from_folders(instances, [results / i for i in ids])
    verdict = runner.judge_claim(instances, size, observations)
    verdict.observations = observations
    save_verdict(verdict_record(instances, size, quick, verdict), results)


def test_a_second_replication_is_shown_beside_the_first_and_kept_in_the_evidence(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _verdicts(results)
    # the second run, hours later on fresh starts of its own, finds a difference the first did not
    _instances_verdict(results, {"java": [300.0, 302.0, 298.0], "java-x2": [340.0, 345.0, 338.0]})
    report = claims_report.write(_claims(), results, tmp_path / "docs" / "REPORT.md")
    text = report.read_text(encoding="utf-8")
    section = text.split("## Two runs", 1)[1].split("\n## ", 1)[0]
    instance_rows = [
        line for line in section.splitlines() if line.startswith("| `thesis-table-7.2-instances`")
    ]
    assert len(instance_rows) == 1 and "**no**" in instance_rows[0]
    first, second = instance_rows[0].split(" | ")[2], instance_rows[0].split(" | ")[4]
    assert first.startswith("replicated") and not second.startswith("replicated")
    assert "The labels agree on 0 of 1 rows (0 %)." in section
    assert "One run so far (1): `thesis-table-7.2`." in section
    content = evidence.read(report.parent / "evidence")
    assert len([n for n in content if n.startswith("verdicts/thesis-table-7.2-instances-quick-")]) == 2
    shutil.rmtree(results)
    result = claims_report.from_evidence(_claims(), content)
    assert result.differences == []
    assert result.report == text


def test_a_rerun_that_reused_the_first_runs_is_not_a_second_replication(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _verdicts(results)
    # the same claim judged again from the very same folders (a resumed run): no second replication
    [first] = [p for p in (results / "claims").glob("thesis-table-7.2-instances-*.json")]
    again = json.loads(first.read_text())
    again["created_utc"] = "2999-01-01T00:00:00.000000Z"
    save_verdict(again, results)
    text = claims_report.write(_claims(), results, tmp_path / "REPORT.md").read_text(encoding="utf-8")
    section = text.split("## Two runs", 1)[1].split("\n## ", 1)[0]
    assert "agree on" not in section
    assert "One run so far (2)" in section


def test_a_verdict_of_other_settings_is_not_a_second_replication(tmp_path: Path) -> None:
    """A claim run again after its ladder's shape changed replicated another experiment: its earlier
    verdict is not the second run of the newest."""
    results = tmp_path / "results"
    _verdicts(results)
    [first] = [p for p in (results / "claims").glob("thesis-table-7.2-instances-*.json")]
    older = json.loads(first.read_text())
    older["settings"]["ladder"]["warmup_s"] = 3.0
    first.write_text(json.dumps(older))
    _instances_verdict(results, {"java": [300.0, 302.0, 298.0], "java-x2": [340.0, 345.0, 338.0]})
    text = claims_report.write(_claims(), results, tmp_path / "REPORT.md").read_text(encoding="utf-8")
    section = text.split("## Two runs", 1)[1].split("\n## ", 1)[0]
    assert "agree on" not in section
    assert "One run so far (2)" in section and "`thesis-table-7.2-instances`" in section


def test_the_committed_report_is_the_committed_evidences_byte_for_byte() -> None:
    """docs/replication/REPORT.md as committed is what its committed evidence regenerates: a verdict, a claim
    or a report change that was not rerun (`./bidbench replicate --from-evidence`) fails here."""
    content = evidence.read()
    result = claims_report.from_evidence(load_all(), content)
    assert result.differences == [], "recomputed labels differ from the stored ones"
    committed = paths.REPLICATION_REPORT.read_text(encoding="utf-8")
    assert result.report == committed, (
        "docs/replication/REPORT.md differs from what its evidence regenerates: run "
        "`./bidbench replicate --from-evidence` and review the diff"
    )


def test_a_full_size_verdict_keeps_the_quick_ones_it_superseded_and_says_how_it_ran(tmp_path: Path) -> None:
    """The full size run after the quick one: the report shows the full verdict, says what the quick size
    said, and calls a full size that reused the quick size's fresh starts an extension after seeing data.
    Regenerated from the evidence, the full verdict stays full (side-by-side folders cannot tell the sizes
    apart) and the report is the same, byte for byte."""
    results = tmp_path / "results"
    table, size, _, verdict = _table_72_verdict(results)
    save_verdict(verdict_record(table, size, True, verdict), results)
    save_verdict(verdict_record(table, size, False, verdict), results)
    report = claims_report.write(_claims(), results, tmp_path / "docs" / "REPORT.md")
    text = report.read_text(encoding="utf-8")
    assert "`thesis-table-7.2` (full, " in text
    assert "- before the full size, the quick size" in text and "an extension after seeing data" in text
    shutil.rmtree(results)
    result = claims_report.from_evidence(_claims(), evidence.read(report.parent / "evidence"))
    assert [r["size"] for r in result.records] == ["quick", "full"]
    assert result.differences == [] and result.report == text


def test_a_quick_verdict_on_another_ladder_shape_is_not_shown_before_the_full_size(tmp_path: Path) -> None:
    """A quick verdict whose ladders had another grid (a declared break against calibrated ones) was
    another experiment: the full verdict does not cite it as what its quick size said."""
    results = tmp_path / "results"
    table, size, _, verdict = _table_72_verdict(results)
    other = replace(size, ladder=replace(size.ladder, break_rps=3000.0))
    save_verdict(verdict_record(table, other, True, verdict), results)
    save_verdict(verdict_record(table, size, False, verdict), results)
    text = claims_report.write(_claims(), results, tmp_path / "docs" / "REPORT.md").read_text(
        encoding="utf-8"
    )
    assert "`thesis-table-7.2` (full, " in text
    assert "- before the full size" not in text


def test_a_verdict_of_a_design_the_claim_no_longer_runs_is_not_shown(tmp_path: Path) -> None:
    """The Java instances claim ran apart and now runs side by side: its apart verdicts are another
    experiment, which its YAML's notes describe, and the report and the evidence leave them out."""
    results = tmp_path / "results"
    _verdicts(results)
    text = claims_report.write(load_all(), results, tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert f"### `{INSTANCES}`: NOT YET RUN ON THIS MACHINE" in text
    assert "- changed after seeing data: The claim first ran apart" in text
    assert "### `thesis-table-7.2`: " in text
    content = evidence.read(tmp_path / "evidence")
    assert [n for n in content if n.startswith("verdicts/")] == [
        _member(list(content), "thesis-table-7.2-quick")
    ]
    apart = claims_report.write(_claims(), results, tmp_path / "apart" / "REPORT.md").read_text(
        encoding="utf-8"
    )
    assert f"### `{INSTANCES}`: " in apart


def test_rows_not_testable_here_are_listed_but_not_counted_in_the_agreement() -> None:
    """Both runs of a declared not-testable row say so by declaration: counting them would inflate the
    agreement of the runs."""
    claim = find("thesis-fig-6.2-pool-size")
    expected = [c.expected_text() for c in claim.expect]
    assert any(c.not_testable for c in claim.expect)

    def record(created: str, runs: list[str], outcome: str) -> dict[str, Any]:
        rows = [
            {"expected": text, "outcome": NOT_TESTABLE}
            if c.not_testable
            else {"expected": text, "outcome": outcome, "ratio": 1.1}
            for text, c in zip(expected, claim.expect, strict=True)
        ]
        settings = {"repetitions": 3}
        return {
            "claim_id": claim.id,
            "size": "quick",
            "settings": settings,
            "method": 3,
            "created_utc": created,
            "runs": runs,
            "comparisons": rows,
        }

    lines = claims_report.two_runs_section(
        [claim],
        [record("2026-01-01T00:00", ["a"], "inconclusive"), record("2026-01-02T00:00", ["b"], "replicated")],
    )
    text = "\n".join(lines)
    assert "The labels agree on 0 of 1 rows (0 %)." in text
    assert text.count("| not counted |") == 1
    assert (
        "The two replications of 1 of 1 claims ran at least 1 h apart, from the first's last fresh start to "
        "the second's first; the closest pair, 24.0 hours." in text
    )


def test_a_verdict_that_measured_nothing_is_listed_but_neither_shown_nor_paired() -> None:
    """A replication whose every side was short of valid fresh starts has no ratio: it cannot agree or
    disagree with another. The report pairs the replications that measured, shows the newest of them, and
    lists the other by its time; the evidence keeps it."""
    claim = find("thesis-fig-7.5")
    (expected,) = [c.expected_text() for c in claim.expect]

    def record(created: str, run: str, ratio: float | None, outcome: str) -> dict[str, Any]:
        return {
            "claim_id": claim.id,
            "size": "quick",
            "settings": {"repetitions": 3},
            "method": 3,
            "created_utc": created,
            "runs": [run],
            "comparisons": [{"expected": expected, "outcome": outcome, "ratio": ratio}],
        }

    first = record("2026-01-01T00:00:00Z", "20260101T000000Z-a", 0.35, "replicated")
    nothing = record("2026-01-01T02:00:00Z", "20260101T020000Z-b", None, "inconclusive")
    second = record("2026-01-01T04:00:00Z", "20260101T040000Z-c", 0.36, "replicated")
    records = [first, nothing, second]
    assert not measured(nothing) and measured(first)
    assert claims_report.newest(records)[claim.id] is second
    assert claims_report.earlier_run(records, second) is first
    assert claims_report.shown([claim], records) == [first, second, nothing]
    text = "\n".join(claims_report.two_runs_section([claim], records))
    assert "The labels agree on 1 of 1 rows (100 %)." in text
    assert "Measured nothing (1; kept, and in the evidence, but not paired" in text
    assert f"`{claim.id}` (quick, 2026-01-01 02:00 UTC)" in text
    # the newest measured nothing: the report still shows the newest that measured
    assert claims_report.newest([first, nothing])[claim.id] is first
    assert claims_report.newest([nothing])[claim.id] is nothing


def test_rows_of_several_implementations_are_matched_by_implementation_and_named_by_it(
    tmp_path: Path,
) -> None:
    """A claim whose variants are not pinned to one implementation asks each expectation once per
    implementation: the second run's java row is compared with the first run's java row, never with
    another implementation's row of the same expectation."""
    claim = find("rubis-3-indexes-unsorted")
    expected = [c.expected_text() for c in claim.expect]
    outcomes = {"php": "replicated", "java": "inconclusive", "node": "replicated"}

    def record(created: str, run: str, impls: list[str]) -> dict[str, Any]:
        rows = [
            {"impl": impl, "expected": text, "outcome": outcomes[impl], "ratio": 1.5}
            for text in expected
            for impl in impls
        ]
        return {
            "claim_id": claim.id,
            "size": "full",
            "outcome": "inconclusive",
            "settings": {"repetitions": 5},
            "method": 3,
            "created_utc": created,
            "runs": [run],
            "comparisons": rows,
        }

    first = record("2026-01-01T00:00:00Z", "20260101T000000Z-a", ["php", "java", "node"])
    second = record("2026-01-01T04:00:00Z", "20260101T040000Z-b", ["node", "php", "java"])
    text = "\n".join(claims_report.two_runs_section([claim], [first, second]))
    rows = 3 * len(expected)
    assert f"The labels agree on {rows} of {rows} rows (100 %)." in text
    for k, impl in enumerate(["node", "php", "java"] * len(expected)):
        assert f"| `{claim.id}` row {k + 1} ({impl}) |" in text
    # the claim's details name each expectation once; the claims table has a row per implementation
    report = claims_report.render([claim], [first, second], tmp_path, report_git={"commit": "0" * 40})
    assert f"- expected: {'; '.join(expected)}\n" in report


def test_the_report_judges_the_stored_verdicts_again_with_todays_code(tmp_path: Path) -> None:
    """A reason an older version stored is not what the report shows: the report judges the stored runs
    again, as --from-evidence does; a verdict whose folders are gone is shown as stored."""
    results = tmp_path / "results"
    _verdicts(results)
    [path] = list((results / "claims").glob("thesis-table-7.2-quick-*.json"))
    stale = json.loads(path.read_text())
    today = stale["comparisons"][0]["reason"]
    stale["comparisons"][0]["reason"] = "a reason an older version wrote"
    stale["observations"][0]["runs"][0]["run_again"] = True  # known to the run, not to its folder
    path.write_text(json.dumps(stale))
    report = claims_report.write(_claims(), results, tmp_path / "docs" / "REPORT.md").read_text()
    assert today in report and "a reason an older version wrote" not in report
    content = evidence.read(tmp_path / "docs" / "evidence")
    archived = json.loads(content[_member(sorted(content), "thesis-table-7.2-quick-")])
    assert archived["comparisons"][0]["reason"] == today
    assert [r.get("run_again", False) for r in archived["observations"][0]["runs"]][:2] == [True, False]
    gone = dict(stale, created_utc="2026-01-01T00:00:00Z", runs=["no-such-folder"])
    assert claims_report.judged_now(_claims(), [gone], results) == [gone]
