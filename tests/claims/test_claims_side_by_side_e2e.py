"""One side-by-side claim for real (harness/claims/side_by_side.py): STEP's log levels on node, info and
debug as two groups of every fresh start, at the `quick` preset, against a private PostgreSQL. The
assertions are on what is stored, on the pairing, and on what a recomputation from the stored folders
gives; never on how fast this shared machine was."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.analysis import claims_report
from harness.claims import runner
from harness.claims import side_by_side as sbs
from harness.claims.layout import preflight
from harness.claims.model import find, load_all
from harness.claims.store import save_verdict, verdict_record

pytestmark = pytest.mark.slow


def test_a_claim_runs_its_variants_side_by_side(
    tmp_path: Path, private_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIDBENCH_DATABASE_URL", private_db)
    full = find("step-table-7-log-level")
    claim = replace(
        full,
        variants=tuple(v for v in full.variants if v.name in ("log-info", "log-debug")),
        expect=full.expect[:1],
    )
    # one fresh start: what is checked is its pairing, storage and reuse, not the statistics
    size = replace(claim.quick, repetitions=1, preset="quick")
    claim = replace(claim, quick=size)
    preflight(claim, size)
    lines: list[str] = []
    observations = sbs.run(claim, size, tmp_path, on_run=lines.append)
    info, debug = observations[("node", "log-info")], observations[("node", "log-debug")]
    assert len(info) == len(debug) == 1
    for a, b in zip(info, debug, strict=True):
        # both groups of a fresh start come from one folder, and it is their pairing key
        assert a["run"] == b["run"] == a["block"] == b["block"]
        assert (tmp_path / a["run"] / "side-by-side.json").exists()
        # a fresh start the host made invalid is stored and excluded, never judged
        if a["valid"] and b["valid"]:
            assert a["value"] > 0 and b["value"] > 0
    verdict = runner.judge_claim(claim, size, observations)
    verdict.observations = observations
    (row,) = verdict.results
    # one fresh start is below the 3 the verdict needs: the path runs, the statistics refuse to guess
    assert "fewer than 3 valid runs" in row.reason
    record = verdict_record(claim, size, True, verdict)
    assert record["design"] == "side-by-side"
    save_verdict(record, tmp_path)
    text = claims_report.write(load_all(), tmp_path, tmp_path / "REPORT.md").read_text()
    assert all(run in text for run in record["runs"])
    # a rerun reuses the stored fresh start: nothing runs
    again: list[str] = []
    assert sbs.run(claim, size, tmp_path, on_run=again.append) == observations and again == []
    # and the observations come back from the stored folders alone
    size2, quick, recomputed = runner.from_folders(claim, [tmp_path / r for r in record["runs"]])
    assert quick and size2.repetitions == 1 and recomputed == observations
