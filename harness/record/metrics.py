"""metrics.json (results/README.md): a run digested to one number per metric, as one typed record.

`Metrics.from_json` upgrades an older file first (harness/record/upgrade.py). The whole-window figures are a
`MeasuredWindow`, a ladder a `LadderSection` of `LadderWindow`s; what only some regimes add is kept by its key
in `sections`, in the order it was added.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from harness.record.folders import RunFolder
from harness.record.schema import METRICS_VERSION
from harness.record.upgrade import metrics_to_current

SCHEMA_VERSION = METRICS_VERSION
FILE = "metrics.json"


def _take(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    return {f.name: data.pop(f.name, None) for f in fields(cls) if f.name != "extra"}


@dataclass
class MeasuredWindow:
    """The measurement window's whole-run figures (docs/design.md §4, §7): load, latency, CPU and memory."""

    window_s: float | None
    requests: int | None = None
    ok: int | None = None
    app_errors: int | None = None
    sys_errors: int | None = None
    late_sends: int | None = None
    throughput_rps: float | None = None
    offered_rps: float | None = None
    latency_ms: dict[str, Any] | None = None
    latency_sent_ms: dict[str, Any] | None = None
    over_1s_pct: float | None = None
    statuses: dict[str, Any] | None = None
    per_type: dict[str, Any] | None = None
    server_timing_ms: dict[str, Any] | None = None
    instances: list[dict[str, Any]] | None = None
    resources_known: bool | None = None
    # NaN in memory when no resource was sampled; the folder writes it as null.
    cpu_pct_total: float | None = None
    cpu_limit_cores: float | None = None
    utilized_cpu: float | None = None
    normalized_throughput: float | None = None
    memory_per_instance_mb: float | None = None
    loadgen_cpu_pct: float | None = None
    db_cpu_pct: float | None = None
    host_busy_pct: float | None = None
    unaccounted_pct: float | None = None
    """The machine's busy share that no measured process explains: another tenant's work."""
    steal_pct: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class LadderWindow:
    """One ladder step (harness/engine/ladder_digest.py): the driver's and sampler's figures, its validity."""

    index: int
    rate: float
    step_s: float | None = None
    requests: int | None = None
    completed: int | None = None
    ok: int | None = None
    app_errors: int | None = None
    sys_errors: int | None = None
    late_sends: int | None = None
    throughput_rps: float | None = None
    finished_in_window: int | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    mean_ms: float | None = None
    latency_ms: dict[str, Any] | None = None
    latency_sent_ms: dict[str, Any] | None = None
    server_timing_ms: dict[str, Any] | None = None
    instance_cpu_s: float | None = None
    instance_cpu_pct: float | None = None
    db_cpu_s: float | None = None
    db_cpu_pct: float | None = None
    loadgen_cpu_pct: float | None = None
    host_busy_pct: float | None = None
    pss_mb: float | None = None
    rss_mb: float | None = None
    kept_up: bool | None = None
    slo_met: bool | None = None
    throttling: list[dict[str, Any] | None] | None = None
    throttled_share: float | None = None
    valid: bool | None = None
    problems: list[str] | None = None
    # Keys this version does not type, kept as written.
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}, **self.extra}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderWindow:
        rest = dict(data)
        return cls(**_take(cls, rest), extra=rest)


@dataclass
class LadderSection:
    """A ladder's section: its plan and stop, the steps, the yield (harness/model/ladder_math.py)."""

    rates: list[float] | None
    step_s: float | None
    stopped: str | None
    steps: list[LadderWindow] = field(default_factory=list)
    cpu_cost: dict[str, Any] | None = None
    db_cost: dict[str, Any] | None = None
    capacity: dict[str, Any] | None = None
    saturation_rps: float | None = None
    # The driver's other ladder settings (completed_steps, stop_p99_ms, stop_after, ...), as it wrote them.
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "rates": self.rates,
            "step_s": self.step_s,
            **self.extra,
            "stopped": self.stopped,
            "steps": [step.to_json() for step in self.steps],
            "cpu_cost": self.cpu_cost,
            "db_cost": self.db_cost,
            "capacity": self.capacity,
            "saturation_rps": self.saturation_rps,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderSection:
        rest = dict(data)
        taken = _take(cls, rest)
        steps = taken.pop("steps") or []
        return cls(**taken, steps=[LadderWindow.from_json(step) for step in steps], extra=rest)


@dataclass
class Metrics:
    """metrics.json. `window` is None for a record without a measurement of its own (a capacity search
    that found no capacity holds only its `capacity_*` sections)."""

    window: MeasuredWindow | None
    ladder: LadderSection | None = None
    sections: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            **(self.window.to_json() if self.window else {}),
            **({"ladder": self.ladder.to_json()} if self.ladder else {}),
            **self.sections,
        }

    @classmethod
    def of(cls, figures: dict[str, Any]) -> Metrics:
        """The record of figures in today's form (a writer's digest, or `to_json()` plus new sections)."""
        rest = dict(figures)
        rest.pop("schema_version", None)
        window = MeasuredWindow(**_take(MeasuredWindow, rest)) if "window_s" in rest else None
        ladder = LadderSection.from_json(rest.pop("ladder")) if isinstance(rest.get("ladder"), dict) else None
        return cls(window=window, ladder=ladder, sections=rest)

    @classmethod
    def from_json(cls, data: Any) -> Metrics:
        return cls.of(metrics_to_current(data))


def write_metrics(folder: RunFolder, metrics: Metrics) -> None:
    folder.write_json(FILE, metrics.to_json())


def read_metrics(folder: RunFolder) -> Metrics:
    return Metrics.from_json(folder.read_json(FILE))


def read_metrics_json(folder: RunFolder) -> dict[str, Any] | None:
    """The folder's metrics in the current format, as the dict readers index (None without metrics.json):
    through the record, so an old folder is upgraded and a newer one refused."""
    return read_metrics(folder).to_json() if folder.has(FILE) else None
