"""verdict.json (results/README.md): a run's validity (docs/design.md §7) and SLO outcome (§6), as one
typed record.

The validity rules (harness/engine/validity.py, ladder_digest.py) build a `Verdict`; readers get one from
`Verdict.from_json`, which upgrades a file written by an earlier version first (harness/record/upgrade.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from harness.record.folders import RunFolder
from harness.record.schema import VERDICT_VERSION
from harness.record.upgrade import verdict_to_current

SCHEMA_VERSION = VERDICT_VERSION
FILE = "verdict.json"


@dataclass
class Check:
    ok: bool
    value: float | None
    threshold: float | None
    detail: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Check:
        return cls(
            ok=data.get("ok") is True,
            value=data.get("value"),
            threshold=data.get("threshold"),
            detail=str(data.get("detail") or ""),
        )


@dataclass
class Verdict:
    valid: bool
    reasons: list[str]
    checks: dict[str, Check] = field(default_factory=dict)
    slo: dict[str, Any] = field(default_factory=dict)
    # Why a figure is to be read with care, though the run is valid (a capacity that is a lower bound).
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "valid": self.valid,
            "reasons": self.reasons,
            "checks": {name: asdict(check) for name, check in self.checks.items()},
            "slo": self.slo,
            **({"notes": self.notes} if self.notes else {}),
        }

    @classmethod
    def from_json(cls, data: Any) -> Verdict:
        data = verdict_to_current(data)
        checks = data.get("checks") or {}
        return cls(
            valid=data.get("valid") is True,
            reasons=[str(reason) for reason in data.get("reasons") or []],
            checks={str(name): Check.from_json(check) for name, check in checks.items()},
            slo=dict(data.get("slo") or {}),
            notes=[str(note) for note in data.get("notes") or []],
        )


def write_verdict(folder: RunFolder, verdict: Verdict) -> None:
    folder.write_json(FILE, verdict.to_json())


def read_verdict_json(folder: RunFolder) -> dict[str, Any]:
    """The folder's verdict in the current format ({} without verdict.json). A dict, not the record: an old
    verdict may lack `valid` (validity unknown), which the record cannot say."""
    return verdict_to_current(folder.read_json(FILE)) if folder.has(FILE) else {}
