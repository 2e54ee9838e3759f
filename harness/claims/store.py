"""Stored verdicts: every `replicate` writes its verdict, with the per-run values and run ids it rests on, to
`results/claims/`. The report's claims section reads them back, so each verdict can be re-checked from the
result folders it names.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import paths
from harness.claims.model import Claim, Size
from harness.claims.verdict import NOT_TESTABLE, ClaimVerdict, Side
from harness.record.folders import finite, run_started, utc_now

CLAIMS_SUBDIR = "claims"
METHOD = 2
"""The statistics a stored verdict was made with: 2 = t-intervals on log ratios (paired or Welch), two
questions per row, Holm across a claim's rows. Verdicts without it were made with bootstrap intervals and
direction alone, and the report says so."""


APART_H = 1.0
"""A claim's two replications are meant to run at least this many hours apart: the host moves every
process's cost between fresh starts, and two runs within the hour meet it in much the same state."""


def run_times(record: dict[str, Any]) -> list[datetime]:
    """When the fresh starts behind a verdict began; the verdict's own time when no run id gives one."""
    times = [t for t in (run_started(str(run)) for run in record.get("runs") or ()) if t is not None]
    if times:
        return times
    stored = datetime.fromisoformat(str(record.get("created_utc")))
    return [stored if stored.tzinfo else stored.replace(tzinfo=timezone.utc)]


def hours_apart(earlier: dict[str, Any], later: dict[str, Any]) -> float:
    """How far apart two replications of a claim ran: from the earlier's last fresh start to the later's
    first (0 when they interleave). Not the verdicts' own times: a claim judged on another claim's fresh
    starts stores its verdict when it is judged, which can be long after they ran."""
    return max(0.0, (min(run_times(later)) - max(run_times(earlier))).total_seconds() / 3600)


def verdicts_dir(results_dir: Path | None = None) -> Path:
    return (results_dir or paths.RESULTS) / CLAIMS_SUBDIR


# A row's results stored under their own names, after the ones the record spells its own way.
RESULT_FIELDS = "tost_p_holm p_holm rows_in_family paired direction magnitude n_needed outcome reason".split()


def verdict_record(claim: Claim, size: Size, quick: bool, verdict: ClaimVerdict) -> dict[str, Any]:
    """The JSON form of a verdict: enough to redraw the claims table and to find every run behind it."""
    observations = verdict.observations
    runs = sorted({str(r["run"]) for records in observations.values() for r in records if r.get("run")})
    return {
        "claim_id": claim.id,
        "claim": claim.claim,
        "source": claim.source_text(),
        "published": claim.source.get("published", ""),
        "metric": claim.metric,
        "design": claim.design,
        "size": "quick" if quick else "full",
        "settings": size.settings(),
        "created_utc": utc_now(),
        "outcome": verdict.outcome,
        "reason": verdict.reason,
        "notes": list(verdict.notes),
        "runs": runs,
        "scaled_down": claim.scaled_down,
        "adaptation": claim.adaptation,
        "quote": claim.quote(),
        "method": METHOD,
        "observations": [
            {"impl": impl, "variant": variant, "runs": records}
            for (impl, variant), records in observations.items()
        ],
        "comparisons": [
            {
                "impl": r.impl,
                "expected": r.comparison.expected_text(),
                "published": r.comparison.published,
                "published_ratio": r.comparison.published_ratio,
                "a": _side(r.a),
                "b": _side(r.b),
                "ratio": r.ratio,
                "ratio_ci": [r.ratio_ci.low, r.ratio_ci.high] if r.ratio_ci else None,
                **({"bound": list(r.bound), "floor": r.floor} if r.bound else {}),
                "p_value": r.p_value,
                "tost_p": r.tost.p_value if r.tost else None,
                "tost_ci90": list(r.tost.ci90) if r.tost else None,
                "tost_band": list(r.tost.band) if r.tost else None,
                **{key: getattr(r, key) for key in RESULT_FIELDS},
                **(
                    {
                        "tests_expected_effect": True,
                        "effect_p": r.effect_test.p_value,
                        "effect_p_holm": r.effect_p_holm,
                        "effect_bound": r.effect_test.bound,
                    }
                    if r.effect_test
                    else {}
                ),
            }
            for r in verdict.results
        ],
    }


def asked_effects(record: dict[str, Any]) -> bool:
    """Whether a stored verdict's rows asked whether the data exclude their expected effect."""
    return any(c.get("tests_expected_effect") for c in record.get("comparisons") or ())


def as_asked(claim: Claim, record: dict[str, Any]) -> Claim:
    """The claim with the questions a stored verdict asked: a row that tests its expected effect today did
    not in a verdict made before that was declared, and that verdict is judged again as it was made."""
    if asked_effects(record) or not any(c.tests_expected_effect for c in claim.expect):
        return claim
    return replace(claim, expect=tuple(replace(c, tests_expected_effect=False) for c in claim.expect))


def _side(side: Side) -> dict[str, Any]:
    return {
        "label": side.label,
        "values": side.values,
        "invalid": side.invalid,
        "unbracketed": side.unbracketed,
        **({"below": side.below} if side.below else {}),
    }


def verdict_file_name(record: dict[str, Any]) -> str:
    """A stored verdict's file name: claim, size and the time it was made, so no verdict replaces another."""
    stamp = str(record.get("created_utc", "")).replace(":", "").replace("-", "")
    return f"{record['claim_id']}-{record.get('size', '')}-{stamp}.json"


def save_verdict(record: dict[str, Any], results_dir: Path | None = None) -> Path:
    """Write one verdict; earlier verdicts of the same claim are kept (the file name carries the time)."""
    directory = verdicts_dir(results_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / verdict_file_name(record)
    path.write_text(json.dumps(finite(record), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return path


def load_verdicts(directory: Path) -> list[dict[str, Any]]:
    """Every stored verdict in `directory`, oldest first; unreadable files are skipped with their name kept."""
    records = []
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(record, dict) and "claim_id" in record:
            record["_path"] = str(path)
            records.append(record)
    return sorted(records, key=lambda r: str(r.get("created_utc", "")))


def measured(record: dict[str, Any]) -> bool:
    """Whether a verdict measured its claim: some row not declared not testable has a ratio or a bound. One
    without (every side short of valid fresh starts: the host disturbed them, or a calibration failed) is
    kept and listed, but it is neither the claim's verdict nor one of its two replications: it neither
    agrees nor disagrees with anything."""
    rows = [r for r in record.get("comparisons") or [] if r.get("outcome") != NOT_TESTABLE]
    return not rows or any(r.get("ratio") is not None or r.get("bound") for r in rows)


def judged_before(records: list[dict[str, Any]], record: dict[str, Any]) -> dict[str, Any] | None:
    """The newest stored verdict of the same claim that already judged every fresh start `record` judges, or
    None. A verdict on nothing new (a `--quick` after the full size reuses the first fresh starts of the
    full size's key, or the same size run twice) measured nothing: stored, it would stand in the report as
    a replication of its own, or as a quick size that came before the full one."""
    runs = set(record.get("runs") or ())
    if not runs:
        return None
    return next(
        (
            earlier
            for earlier in reversed(records)
            if earlier.get("claim_id") == record["claim_id"] and runs <= set(earlier.get("runs") or ())
        ),
        None,
    )


def latest_per_claim(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest verdict of each (claim, size), ordered by claim id."""
    newest = {(record["claim_id"], record.get("size", "")): record for record in records}
    return [newest[key] for key in sorted(newest)]


def too_recent(records: list[dict[str, Any]], claim_id: str, size: str, now: str) -> float | None:
    """Hours since the last fresh start behind this claim's newest verdict of this size began, when that is
    less than APART_H before `now`: a replication run now would sit beside it within the hour. None
    otherwise."""
    for newest in latest_per_claim(records):
        if (newest["claim_id"], newest.get("size")) == (claim_id, size):
            hours = hours_apart(newest, {"created_utc": now})
            return hours if hours < APART_H else None
    return None
