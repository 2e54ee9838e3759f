"""One claim end to end against the real apps, at the smallest valid size (#29): the Pereira ordering on node
and php, run apart, 2 ladders each of 4 steps of 2 s at given rates (no calibration), interleaved; the verdict, the
stored record, the generated report and the recomputation from the stored folders alone. About 1-2 minutes,
so the replicate path cannot rot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.analysis import claims_report
from harness.claims import ladders, runner
from harness.claims.layout import preflight
from harness.claims.model import LadderShape, find, load_all
from harness.claims.store import save_verdict, verdict_record
from harness.claims.verdict import INCONCLUSIVE

pytestmark = pytest.mark.slow


def test_one_claim_end_to_end_on_real_ladders(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A disturbed ladder stays invalid here instead of running again (test_replication.py tests the
    # reruns): on a busy host the reruns tripled this test's time, and two ladders a side never decide.
    monkeypatch.setattr(ladders, "DISTURBED_REDOS", 0)
    full = find("pereira-energy-ranking")
    claim = replace(
        full,
        variants=tuple(v for v in full.variants if v.impl in ("node", "php")),
        expect=(replace(full.expect[1]),),  # node < php: the pair that needs no JVM start
        impls=("node", "php"),
        # The claim itself runs side by side (test_claims_side_by_side_e2e.py); this test keeps the
        # ladders' path, which the claims that cannot run side by side take.
        design="apart",
    )
    size = replace(
        claim.quick,
        repetitions=2,
        ladder=LadderShape(steps=4, step_s=2.0, warmup_s=1.0, prewarm_max_s=4.0),
    )
    claim = replace(claim, quick=size)
    preflight(claim, size)
    todo = runner.cells(claim, size)
    rates = {"node": (100.0, 150.0, 220.0, 330.0), "php": (100.0, 150.0, 220.0, 330.0)}
    lines: list[str] = []
    observations = ladders.run(claim, size, todo, tmp_path, rates=rates, on_run=lines.append)
    assert [line.split(" ladder")[0] for line in lines] == ["node/node", "php/php", "node/node", "php/php"]
    assert not any(r.get("run_again") for records in observations.values() for r in records)
    for key in (("node", "node"), ("php", "php")):
        assert len(observations[key]) == 2
        for record in observations[key]:
            assert record["run"] and (tmp_path / record["run"] / "metrics.json").exists()
            # on a busy shared host a ladder may be invalid (host saturated): then it is stored and
            # excluded, never judged; a valid one always carries its cost per request
            if record["valid"]:
                assert record["value"] is not None and record["value"] > 0, record
    verdict = runner.judge_claim(claim, size, observations)
    verdict.observations = observations
    # two ladders a side is below the 3 the verdict needs: the path runs, the statistics refuse to guess
    assert verdict.outcome == INCONCLUSIVE and "fewer than 3 valid runs" in verdict.results[0].reason
    record = verdict_record(claim, size, True, verdict)
    save_verdict(record, tmp_path)
    # the report shows verdicts of the design a claim runs: here this apart version of Pereira's
    claims = [claim if c.id == claim.id else c for c in load_all()]
    text = claims_report.write(claims, tmp_path, tmp_path / "REPORT.md").read_text()
    assert "`pereira-energy-ranking` (quick, cpu_us_per_request)" in text
    assert all(run in text for run in record["runs"])
    # a rerun reuses every stored ladder, the last of each repetition: nothing runs
    again: list[str] = []
    assert ladders.run(claim, size, todo, tmp_path, rates=rates, on_run=again.append) == observations
    assert again == []
    # the verdict is recomputed from the stored folders alone
    size2, quick, recomputed = runner.from_folders(claim, [tmp_path / r for r in record["runs"]])
    assert quick and size2.repetitions == 2
    assert {k: [(r["valid"], r["value"]) for r in v] for k, v in recomputed.items()} == {
        k: [(r["valid"], r["value"]) for r in v] for k, v in observations.items()
    }
