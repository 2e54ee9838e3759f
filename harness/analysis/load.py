"""Find and read result folders (results/README.md) and decide which runs a comparison may use.

A run is used when its status is `completed` and its verdict says `valid: true`. Every other run is
excluded with a reason (counted and shown by every output), unless `include_invalid` is set; then runs
that have a metrics.json are used anyway and marked, and the outputs say so loudly (docs/design.md §7).

The reader is defensive about fields the README does not pin down (the manifest's inner layout, the form
of `point`): it looks in metrics.json, then the manifest, then the index line, then the folder name.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.record.upgrade import (
    load_summary_path,
    upgrade_load_summary,
    upgrade_manifest,
    upgrade_metrics,
    upgrade_verdict,
)

RUN_FILES = ("manifest.json", "metrics.json", "verdict.json")
DEFAULT_VARIANTS = {"", "default", "base", "baseline", "none"}
COMPLETED = "completed"


class AnalysisError(Exception):
    """Bad input the user can fix (no runs found, unreadable index); the CLI prints the message."""


@dataclass(frozen=True, order=True)
class GroupKey:
    """The unit of grouping: runs with the same key are repetitions of one measurement."""

    impl: str
    variant: str
    regime: str
    point: str

    @property
    def label(self) -> str:
        return treatment_label(self.impl, self.variant)


def treatment_label(impl: str, variant: str) -> str:
    return impl if variant.lower() in DEFAULT_VARIANTS else f"{impl}/{variant}"


def _read_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, f"{path.name} unreadable ({exc.__class__.__name__}: {exc})"


def find_key(data: Any, *names: str, max_depth: int = 4) -> Any:
    """The value of the first key named like one of `names`, searching nested dicts breadth-first."""
    wanted = {n.lower() for n in names}
    layer: list[Any] = [data]
    for _ in range(max_depth + 1):
        nxt: list[Any] = []
        for item in layer:
            if isinstance(item, Mapping):
                for key, value in item.items():
                    if str(key).lower() in wanted and value is not None:
                        return value
                nxt.extend(v for v in item.values() if isinstance(v, Mapping))
        layer = nxt
        if not layer:
            break
    return None


def get_path(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def as_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


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
        numbers = [as_float(v) for v in point.values()]
        numbers = [n for n in numbers if n is not None]
        return numbers[0] if len(numbers) == 1 else None
    if isinstance(point, str):
        found = re.findall(r"-?\d+(?:\.\d+)?", point)
        return float(found[0]) if len(found) == 1 else None
    return None


KNOWN_REGIMES = ("capacity-probe", "scaling-probe", "fixed-rate", "capacity", "scaling", "users", "payload")
PROBE_SUFFIX = "-probe"  # the steps of a capacity search: single measurements at rates the search chose


def _name_parts(folder: Path) -> dict[str, str]:
    """`<UTC time>-<impl>-<regime>-<short id>` (results/README.md), read from the right because the time
    and the regime (`fixed-rate`) may contain dashes. The last resort when manifest and index are silent."""
    head, _, run_id = folder.name.rpartition("-")
    if not head:
        return {}
    regime = next((r for r in KNOWN_REGIMES if head.endswith("-" + r)), None)
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
    group_id: str | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    _load_summary: Any = field(default=None, repr=False)
    _load_summary_read: bool = field(default=False, repr=False)

    @property
    def point(self) -> str:
        return point_label(self.point_raw)

    @property
    def point_value(self) -> float | None:
        return point_number(self.point_raw)

    @property
    def label(self) -> str:
        return treatment_label(self.impl, self.variant)

    @property
    def key(self) -> GroupKey:
        return GroupKey(self.impl, self.variant, self.regime, self.point)

    @property
    def is_probe(self) -> bool:
        """A step of a capacity search (regime `capacity-probe`, `scaling-probe`), not a planned repetition."""
        return self.regime.endswith(PROBE_SUFFIX)

    @property
    def is_valid(self) -> bool:
        return self.status == COMPLETED and self.valid is True

    def metric(self, *keys: str) -> float | None:
        return as_float(get_path(self.metrics or {}, *keys))

    def load_summary(self) -> dict[str, Any] | None:
        if not self._load_summary_read:
            self._load_summary_read = True
            if self.path is not None:
                data, problem = _read_json(load_summary_path(self.path))
                if problem:
                    self.problems.append(problem)
                self._load_summary = upgrade_load_summary(data) if isinstance(data, dict) else None
        return self._load_summary

    @property
    def instances(self) -> int | None:
        """Instance count: the manifest, else metrics.json's instance list, else a scaling point."""
        value = find_key(self.manifest, "instances", "instance_count")
        if isinstance(value, list):
            return len(value)
        number = as_float(value)
        if number is not None:
            return int(number)
        listed = (self.metrics or {}).get("instances")
        if isinstance(listed, list) and listed:
            return len(listed)
        if self.regime == "scaling" and self.point_value is not None:
            return int(self.point_value)
        return None

    @property
    def cpu_limit(self) -> float | None:
        limit = self.metric("cpu_limit_cores")
        if limit is None:
            limit = as_float(find_key(self.manifest, "cpu_limit_cores", "cpu_limit", "cpus"))
        return limit

    @property
    def users(self) -> int | None:
        if self.regime == "users" and self.point_value is not None:
            return int(self.point_value)
        load = find_key(self.manifest, "load", "load_settings")
        value = as_float(find_key(load, "users", "vus")) if isinstance(load, Mapping) else None
        return int(value) if value is not None else None

    @property
    def reason_text(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "no reason recorded"


def _status_of(manifest: Mapping[str, Any], index_entry: Mapping[str, Any] | None) -> tuple[str, str | None]:
    raw = manifest.get("status") if isinstance(manifest, Mapping) else None
    detail = None
    if isinstance(raw, Mapping):
        detail = raw.get("reason") or raw.get("error") or raw.get("message")
        raw = raw.get("state") or raw.get("status") or raw.get("name")
    if raw is None and index_entry:
        raw = index_entry.get("status")
    if detail is None and isinstance(manifest, Mapping):
        detail = manifest.get("failure_reason") or manifest.get("reason") or manifest.get("error")
    return (str(raw) if raw is not None else "unknown"), (str(detail) if detail else None)


def _verdict_reasons(verdict: Mapping[str, Any]) -> list[str]:
    reasons: list[str] = []
    for item in verdict.get("reasons") or []:
        if isinstance(item, Mapping):
            text = (
                item.get("reason")
                or item.get("message")
                or item.get("check")
                or json.dumps(item, sort_keys=True)
            )
            reasons.append(str(text))
        else:
            reasons.append(str(item))
    if not reasons:
        checks = verdict.get("checks")
        items: Iterable[tuple[str, Any]] = []
        if isinstance(checks, Mapping):
            items = checks.items()
        elif isinstance(checks, list):
            items = [(str(c.get("name", c.get("check", "?"))), c) for c in checks if isinstance(c, Mapping)]
        for name, check in items:
            if isinstance(check, Mapping) and (check.get("ok") is False or check.get("passed") is False):
                value, threshold = check.get("value"), check.get("threshold")
                reasons.append(f"{name}: {value} (threshold {threshold})" if value is not None else str(name))
    return reasons


def read_run(folder: Path, index_entry: Mapping[str, Any] | None = None) -> Run:
    """Read one result folder. Never raises for a broken folder: the problem becomes an exclusion reason."""
    problems: list[str] = []
    manifest, problem = _read_json(folder / "manifest.json")
    if problem:
        problems.append(problem)
    metrics, problem = _read_json(folder / "metrics.json")
    if problem:
        problems.append(problem)
    verdict, problem = _read_json(folder / "verdict.json")
    if problem:
        problems.append(problem)
    manifest = upgrade_manifest(manifest) if isinstance(manifest, dict) else {}
    metrics = upgrade_metrics(metrics) if isinstance(metrics, dict) else None
    verdict = upgrade_verdict(verdict) if isinstance(verdict, dict) else None
    entry = dict(index_entry or {})
    names = _name_parts(folder)

    def pick(*keys: str, default: Any = None) -> Any:
        for key in keys:
            value = manifest.get(key)
            if isinstance(value, Mapping):
                value = value.get("name") or value.get(key)
            if value not in (None, ""):
                return value
        for key in keys:
            if entry.get(key) not in (None, ""):
                return entry[key]
        return default

    impl = pick("impl", "implementation", default=names.get("impl", "unknown"))
    variant = pick("variant", default="default")
    regime_raw = manifest.get("regime")
    point_raw: Any = manifest.get("point")
    if isinstance(regime_raw, Mapping):  # the runner's form: {"name", "group", "point", "repetition"}
        if point_raw is None:
            point_raw = regime_raw.get("point")
        for key in ("repetition", "group"):
            if regime_raw.get(key) is not None and manifest.get(key) is None:
                entry.setdefault(key, regime_raw[key])
        regime_raw = regime_raw.get("name") or regime_raw.get("regime")
    regime = regime_raw or entry.get("regime") or names.get("regime") or "unknown"
    if point_raw is None:
        point_raw = entry.get("point")
    repetition = as_float(pick("repetition", "rep"))
    status, status_detail = _status_of(manifest, entry)
    valid: bool | None = None
    reasons: list[str] = []
    if verdict is not None:
        valid = bool(verdict.get("valid")) if verdict.get("valid") is not None else None
        if valid is False:
            reasons = _verdict_reasons(verdict) or ["invalid (the verdict gives no reason)"]
    elif isinstance(entry.get("valid"), bool):
        valid = entry["valid"]
    if status == "unknown" and metrics is not None and verdict is not None:
        status = COMPLETED  # an older or partial manifest; the digested files are there
    if status != COMPLETED:
        reasons.insert(0, f"status {status}" + (f": {status_detail}" if status_detail else ""))
    if metrics is None and status == COMPLETED:
        reasons.append("no metrics.json")
    elif verdict is None and valid is None and status == COMPLETED:
        reasons.append("no verdict.json (validity unknown)")
    reasons.extend(problems)
    return Run(
        run_id=str(pick("run_id", "id", default=folder.name)),
        path=folder,
        impl=str(impl),
        variant=str(variant),
        regime=str(regime),
        point_raw=point_raw,
        repetition=int(repetition) if repetition is not None else None,
        status=status,
        valid=valid,
        reasons=reasons,
        created_utc=pick("created_utc", "date", "created"),
        group_id=pick("group"),
        manifest=manifest,
        metrics=metrics,
        verdict=verdict,
        problems=problems,
    )


def _run_from_index_only(entry: Mapping[str, Any], why: str) -> Run:
    status = str(entry.get("status", "unknown"))
    reasons = [f"status {status}"] if status != COMPLETED else []
    reasons.append(why)
    return Run(
        run_id=str(entry.get("run_id", entry.get("path", "?"))),
        path=None,
        impl=str(entry.get("impl", "unknown")),
        variant=str(entry.get("variant") or "default"),
        regime=str(entry.get("regime", "unknown")),
        point_raw=entry.get("point"),
        repetition=int(entry["repetition"]) if isinstance(entry.get("repetition"), int) else None,
        status=status,
        valid=entry.get("valid") if isinstance(entry.get("valid"), bool) else None,
        reasons=reasons,
        created_utc=entry.get("created_utc"),
        group_id=entry.get("group"),
    )


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and any((path / name).exists() for name in RUN_FILES)


def read_index(index: Path) -> list[tuple[dict[str, Any], Path | None]]:
    """The index lines with each run's folder resolved (None when the folder is gone)."""
    try:
        text = index.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalysisError(f"cannot read the run index {index}: {exc}") from exc
    entries: list[tuple[dict[str, Any], Path | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise AnalysisError(f"{index}:{number} is not JSON ({exc}); fix or remove that line") from exc
        if not isinstance(entry, dict):
            continue
        raw = Path(str(entry.get("path", "")))
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
    include_invalid: bool
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

    def banner(self) -> str | None:
        """The loud one-paragraph statement about invalid runs, or None when every run found is used."""
        parts = []
        if self.invalid_included:
            parts.append(
                f"INCLUDES {len(self.invalid_included)} INVALID OR FAILED RUN(S) (--include-invalid): "
                "figures marked ! rest partly on runs that failed the validity checks (docs/design.md §7)"
            )
        if self.excluded:
            parts.append(f"excluded {len(self.excluded)} run(s): {self.reason_text()}")
        return "; ".join(parts) if parts else None


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
    index_by_folder: dict[Path, dict[str, Any]] = {}
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
        if str(resolved) in runs:
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
        usable = run.metrics is not None and (run.is_valid or include_invalid)
        if usable:
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


def load_runs(
    paths: Sequence[str | Path], index: str | Path | None = None, include_invalid: bool = False
) -> RunSet:
    runs, sources = discover(paths, index)
    if not runs:
        raise AnalysisError("no runs found; run `./bidbench run ...` first, or point at a results/ folder")
    used, excluded = select(runs, include_invalid)
    return RunSet(used, excluded, include_invalid, sources)
