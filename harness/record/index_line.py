"""One line of results/index.jsonl (results/README.md): the run, where its folder is, and how it ended.

Writers build an `IndexLine` from the run's manifest; readers get one from `IndexLine.from_json`, which
upgrades a line written by an earlier version first (harness/record/upgrade.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.record.folders import RunFolder, append_index, read_index_json
from harness.record.manifest import Manifest, text_or_none
from harness.record.schema import INDEX_LINE_VERSION
from harness.record.upgrade import index_line_to_current

SCHEMA_VERSION = INDEX_LINE_VERSION


@dataclass(frozen=True)
class IndexLine:
    run_id: str
    path: str
    created_utc: str | None
    impl: str | None
    variant: str
    regime: str
    group: str | None
    point: Any
    repetition: int | None
    status: str | None
    valid: bool
    slo_met: bool

    @classmethod
    def of(cls, folder: RunFolder, manifest: Manifest, valid: bool, slo_met: bool) -> IndexLine:
        """The line of a run whose manifest is final."""
        regime = manifest.regime
        if regime is None:
            raise ValueError(f"{folder.run_id}: a manifest without a regime cannot be indexed")
        return cls(
            run_id=folder.run_id,
            path=str(folder.path),
            created_utc=manifest.created_utc,
            impl=manifest.impl,
            variant=manifest.variant or "default",
            regime=regime.name,
            group=regime.group,
            point=regime.point,
            repetition=regime.repetition,
            status=manifest.status,
            valid=valid,
            slo_met=slo_met,
        )

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> IndexLine:
        data = index_line_to_current(data)
        repetition = data.get("repetition")
        return cls(
            run_id=str(data["run_id"]),
            path=str(data["path"]),
            created_utc=data.get("created_utc"),
            impl=text_or_none(data.get("impl")),
            variant=str(data.get("variant") or "default"),
            regime=str(data["regime"]),
            group=data.get("group"),
            point=data.get("point"),
            repetition=int(repetition) if isinstance(repetition, int | float) else None,
            status=text_or_none(data.get("status")),
            valid=data.get("valid") is True,
            slo_met=data.get("slo_met") is True,
        )


def append_line(line: IndexLine, results_dir: Path | None = None) -> None:
    append_index(line.to_json(), results_dir)


def read_lines(results_dir: Path | None = None) -> list[IndexLine]:
    return [IndexLine.from_json(entry) for entry in read_index_json(results_dir)]


def read_index(results_dir: Path | None = None) -> list[dict[str, Any]]:
    """Every index line in today's form (an older line upgraded), as JSON."""
    return [line.to_json() for line in read_lines(results_dir)]


def newest_completed(
    group: str, repetition: int, results_dir: Path | None = None, since: str | None = None
) -> dict[str, Any] | None:
    """The newest completed run of this group and repetition in the index: what resumed work reuses. With
    `since` (a UTC timestamp as the index writes them), only a run created at or after it."""
    for entry in reversed(read_index(results_dir)):
        if (
            entry.get("group") == group
            and entry.get("repetition") == repetition
            and entry.get("status") == "completed"
        ):
            return entry if since is None or str(entry.get("created_utc", "")) >= since else None
    return None
