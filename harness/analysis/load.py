"""Find and read result folders (results/README.md) and decide which runs a comparison may use.

A run is used when its status is `completed` and its verdict says `valid: true`. Every other run is
excluded with a reason (counted and shown by every output), unless `include_invalid` is set; then runs
that have a metrics.json are used anyway and marked, and the outputs say so loudly (docs/design.md §7).

Manifests, metrics and index lines are read as records (harness/record/manifest.py, metrics.py,
index_line.py), so a folder written by an earlier version arrives upgraded. A field the manifest leaves
empty is taken from the index line, then from the folder name; a run whose records cannot be read is
excluded with the reason.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from harness.model.side_by_side import RECORD as SIDE_BY_SIDE_RECORD
from harness.record.index_line import IndexLine
from harness.record.manifest import Manifest
from harness.record.metrics import Metrics
from harness.record.schema import SchemaError
from harness.record.upgrade import verdict_to_current

RUN_FILES = ("manifest.json", "metrics.json", "verdict.json")
DEFAULT_VARIANTS = {"", "default", "base", "baseline", "none"}
COMPLETED = "completed"


class AnalysisError(Exception):
    """Bad input the user can fix (no runs found, unreadable index); the CLI prints the message."""


def _read_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, f"{path.name} unreadable ({exc.__class__.__name__}: {exc})"


def get_path(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def point_label(point: Any) -> str:
    """A stable text form of a regime point: 300, 2, "instances=2", {"users": 8} -> "users=8"."""
    if point is None or point == "" or point == {} or point == []:
        return "-"
    if isinstance(point, bool):
        return str(point).lower()
    if isinstance(point, int | float):
        number = float(point)
        return str(int(number)) if number.is_integer() else f"{number:g}"
    if isinstance(point, Mapping):
        return ",".join(f"{k}={point_label(v)}" for k, v in sorted(point.items(), key=lambda kv: str(kv[0])))
    if isinstance(point, list | tuple):
        return ",".join(point_label(p) for p in point)
    return str(point)


def point_number(point: Any) -> float | None:
    """The numeric value of a point when it has exactly one: 300, "300", "rate=300", {"users": 8}."""
    direct = as_float(point)
    if direct is not None:
        return direct
    if isinstance(point, Mapping):
        numbers = [n for n in map(as_float, point.values()) if n is not None]
        return numbers[0] if len(numbers) == 1 else None
    if isinstance(point, str):
        found = re.findall(r"-?\d+(?:\.\d+)?", point)
        return float(found[0]) if len(found) == 1 else None
    return None


# The regimes whose names hold a dash; any other regime is the name's last part before the id.
DASHED_REGIMES = ("fixed-rate", "side-by-side", "ladder-calibration", "ladder-floor")


def _name_parts(folder: Path) -> dict[str, str]:
    """`<UTC time>-<impl>-<regime>-<short id>` (results/README.md), read from the right because the time
    and the regime (`fixed-rate`) may contain dashes. The last resort when manifest and index are silent."""
    head, _, run_id = folder.name.rpartition("-")
    if not head:
        return {}
    regime = next((r for r in DASHED_REGIMES if head.endswith("-" + r)), None)
    if regime is None:
        head, _, regime = head.rpartition("-")
    else:
        head = head[: -len(regime) - 1]
    head, _, impl = head.rpartition("-")
    return {"time": head, "impl": impl, "regime": regime, "id": run_id} if head and impl else {}


@dataclass
class Run:
    """One result folder (or one index line whose folder is missing)."""

    run_id: str
    path: Path | None
    impl: str
    variant: str
    regime: str
    point_raw: Any
    repetition: int | None
    status: str
    valid: bool | None
    reasons: list[str]
    created_utc: str | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    record: Manifest | None = None
    metrics: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def point(self) -> str:
        return point_label(self.point_raw)

    @property
    def point_value(self) -> float | None:
        return point_number(self.point_raw)

    @property
    def label(self) -> str:
        return self.impl if self.variant.lower() in DEFAULT_VARIANTS else f"{self.impl}/{self.variant}"

    @property
    def is_valid(self) -> bool:
        return self.status == COMPLETED and self.valid is True

    def metric(self, *keys: str) -> float | None:
        return as_float(get_path(self.metrics or {}, *keys))

    @property
    def instances(self) -> int | None:
        """Instance count: the manifest, else metrics.json's instance list."""
        if self.record is not None and self.record.instances is not None:
            return self.record.instances
        listed = (self.metrics or {}).get("instances")
        if isinstance(listed, list) and listed:
            return len(listed)
        return None

    @property
    def cpu_limit(self) -> float | None:
        limit = self.metric("cpu_limit_cores")
        if limit is None and self.record is not None:
            limit = self.record.cpu_limit_cores
        return limit

    @property
    def users(self) -> int | None:
        if self.regime == "users" and self.point_value is not None:
            return int(self.point_value)
        load = self.record.load if self.record is not None else None
        value = as_float(load.get("users")) if load else None
        return int(value) if value is not None else None

    @property
    def reason_text(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "no reason recorded"


def _verdict_reasons(verdict: Mapping[str, Any]) -> list[str]:
    """The verdict's reasons (engine/validity.py writes them as text), else its failing checks."""
    reasons = [str(item) for item in verdict.get("reasons") or []]
    if not reasons:
        for name, check in (verdict.get("checks") or {}).items():
            if check.get("ok") is False:
                value, threshold = check.get("value"), check.get("threshold")
                reasons.append(f"{name}: {value} (threshold {threshold})" if value is not None else str(name))
    return reasons


R = TypeVar("R")


def _read_record(folder: Path, name: str, from_json: Callable[[Any], R], problems: list[str]) -> R | None:
    """A record file through its from_json (old versions upgraded); a problem noted when it cannot be read."""
    data, problem = _read_json(folder / name)
    if problem:
        problems.append(problem)
    if data is None:
        return None
    try:
        return from_json(data)
    except (SchemaError, KeyError, TypeError, ValueError) as exc:
        problems.append(f"{name} unreadable ({exc})")
        return None


def read_run(folder: Path, entry: IndexLine | None = None) -> Run:
    """Read one result folder. Never raises for a broken folder: the problem becomes an exclusion reason."""
    problems: list[str] = []
    record = _read_record(folder, "manifest.json", Manifest.from_json, problems)
    metrics_record = _read_record(folder, "metrics.json", Metrics.from_json, problems)
    # The verdict stays a dict, upgraded: an old one may lack `valid` (unknown), which the typed record cannot say.
    verdict = _read_record(folder, "verdict.json", verdict_to_current, problems)
    metrics = metrics_record.to_json() if metrics_record else None
    manifest = record or Manifest(run_id=None, impl=None, variant=None, regime=None, status=None)
    names = _name_parts(folder)
    regime = manifest.regime
    regime_name = (regime.name if regime else None) or (entry.regime if entry else None)
    repetition = regime.repetition if regime and regime.repetition is not None else None
    if repetition is None and entry:
        repetition = entry.repetition
    status = manifest.status or (entry.status if entry else None) or "unknown"
    valid: bool | None = None
    reasons: list[str] = []
    if verdict is not None:
        valid = bool(verdict.get("valid")) if verdict.get("valid") is not None else None
        if valid is False:
            reasons = _verdict_reasons(verdict) or ["invalid (the verdict gives no reason)"]
    elif entry is not None:
        valid = entry.valid
    if status == "unknown" and metrics is not None and verdict is not None and not problems:
        status = COMPLETED  # a partial manifest; the digested files are there
    if status != COMPLETED:
        detail = manifest.failure_reason
        reasons.insert(0, f"status {status}" + (f": {detail}" if detail else ""))
    if metrics is None and status == COMPLETED:
        reasons.append("no metrics.json")
    elif verdict is None and valid is None and status == COMPLETED:
        reasons.append("no verdict.json (validity unknown)")
    reasons.extend(problems)
    return Run(
        run_id=manifest.run_id or (entry.run_id if entry else None) or folder.name,
        path=folder,
        impl=manifest.impl or (entry.impl if entry else None) or names.get("impl", "unknown"),
        variant=manifest.variant or (entry.variant if entry else None) or "default",
        regime=regime_name or names.get("regime") or "unknown",
        point_raw=regime.point if regime and regime.point is not None else (entry.point if entry else None),
        repetition=repetition,
        status=status,
        valid=valid,
        reasons=reasons,
        created_utc=manifest.created_utc or (entry.created_utc if entry else None),
        manifest=record.to_json() if record else {},
        record=record,
        metrics=metrics,
        verdict=verdict,
        problems=problems,
    )


def _run_from_index_only(entry: IndexLine, why: str) -> Run:
    status = entry.status or "unknown"
    reasons = [f"status {status}"] if status != COMPLETED else []
    reasons.append(why)
    return Run(
        run_id=entry.run_id,
        path=None,
        impl=entry.impl or "unknown",
        variant=entry.variant,
        regime=entry.regime,
        point_raw=entry.point,
        repetition=entry.repetition,
        status=status,
        valid=entry.valid,
        reasons=reasons,
        created_utc=entry.created_utc,
    )


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and any((path / name).exists() for name in RUN_FILES)


def read_index(index: Path) -> list[tuple[IndexLine, Path | None]]:
    """The index lines with each run's folder resolved (None when the folder is gone)."""
    try:
        text = index.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalysisError(f"cannot read the run index {index}: {exc}") from exc
    entries: list[tuple[IndexLine, Path | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise AnalysisError(f"{index}:{number} is not JSON ({exc}); fix or remove that line") from exc
        try:
            entry = IndexLine.from_json(data)
        except SchemaError as exc:
            raise AnalysisError(f"{index}:{number}: {exc}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise AnalysisError(
                f"{index}:{number} is not an index line (missing {exc}); fix or remove it"
            ) from exc
        raw = Path(entry.path)
        candidates = (
            [raw] if raw.is_absolute() else [index.parent / raw, index.parent.parent / raw, Path.cwd() / raw]
        )
        candidates.append(index.parent / raw.name)
        folder = next((c for c in candidates if str(raw) and is_run_folder(c)), None)
        entries.append((entry, folder))
    return entries


@dataclass
class Exclusion:
    run_id: str
    path: str
    label: str
    regime: str
    point: str
    reason: str
    reasons: list[str] = field(default_factory=list)


@dataclass
class RunSet:
    """The runs a comparison uses, and the ones it left out with their reasons."""

    runs: list[Run]
    excluded: list[Exclusion]
    sources: list[str]

    @property
    def invalid_included(self) -> list[Run]:
        return [r for r in self.runs if not r.is_valid]

    def reason_counts(self) -> Counter[str]:
        """How many excluded runs gave each kind of reason. Reasons differing only in their numbers count as
        one kind ("the load driver sent N requests late"); a kind seen once keeps its own words and numbers."""
        counts: Counter[str] = Counter()
        example: dict[str, str] = {}
        for item in self.excluded:
            for reason in dict.fromkeys(item.reasons or [item.reason]):
                kind = _reason_class(reason)
                counts[kind] += 1
                example.setdefault(kind, reason)
        return Counter({(example[k] if n == 1 else k): n for k, n in counts.items()})

    def reason_text(self) -> str:
        return ", ".join(f"{reason} (x{count})" for reason, count in self.reason_counts().most_common())


def _reason_class(reason: str) -> str:
    """Group similar reasons for counting: numbers are dropped so "sent 12 requests late" and "... 30" count together."""
    head = reason.split(":")[0].strip() if reason.startswith("status ") else reason.strip()
    return re.sub(r"\s+", " ", re.sub(r"(?<![A-Za-z])[-+]?\d+(\.\d+)?", "N", head)) or reason


def discover(paths: Sequence[str | Path], index: str | Path | None = None) -> tuple[list[Run], list[str]]:
    """All runs named by `paths` (run folders, folders of run folders, or index files) and `index`."""
    runs: dict[str, Run] = {}
    sources: list[str] = []
    folders: list[Path] = []
    indexes: list[Path] = [Path(index)] if index else []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise AnalysisError(
                f"{path} does not exist; give result folders, a results/ folder or an index.jsonl"
            )
        if path.is_file():
            if path.suffix == ".jsonl":
                indexes.append(path)
            elif path.name in RUN_FILES:
                folders.append(path.parent)
            else:
                raise AnalysisError(f"{path} is a file but not an index.jsonl or a run's JSON file")
        elif is_run_folder(path):
            folders.append(path)
        else:
            children = sorted(p for p in path.iterdir() if is_run_folder(p))
            if not children and not (path / "index.jsonl").exists():
                raise AnalysisError(
                    f"{path} holds no result folders (a run folder has {', '.join(RUN_FILES)})"
                )
            folders.extend(children)
        sources.append(str(path))
    index_by_folder: dict[Path, IndexLine] = {}
    for idx in indexes:
        sources.append(str(idx))
        for entry, folder in read_index(idx):
            if folder is None:
                run = _run_from_index_only(entry, "result folder missing")
                runs.setdefault(f"index:{run.run_id}", run)
            else:
                index_by_folder[folder.resolve()] = entry
                folders.append(folder)
    for folder in folders:
        resolved = folder.resolve()
        if str(resolved) in runs or (folder / SIDE_BY_SIDE_RECORD).exists():
            # A side-by-side fresh start is a comparison of its own (harness/analysis/side_by_side.py).
            continue
        runs[str(resolved)] = read_run(folder, index_by_folder.get(resolved))
    # an index line and a folder for the same run id: keep the folder
    by_id: dict[str, Run] = {}
    for run in runs.values():
        if run.run_id in by_id and run.path is None:
            continue
        by_id[run.run_id] = run
    ordered = sorted(by_id.values(), key=lambda r: (r.created_utc or "", r.run_id))
    return ordered, sources


def select(runs: Iterable[Run], include_invalid: bool = False) -> tuple[list[Run], list[Exclusion]]:
    used: list[Run] = []
    excluded: list[Exclusion] = []
    for run in runs:
        if run.metrics is not None and (run.is_valid or include_invalid):
            used.append(run)
        else:
            reasons = run.reasons or ["validity unknown"]
            excluded.append(
                Exclusion(
                    run.run_id,
                    str(run.path or "-"),
                    run.label,
                    run.regime,
                    run.point,
                    "; ".join(reasons),
                    reasons,
                )
            )
    return used, excluded
