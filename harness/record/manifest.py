"""manifest.json (results/README.md): who, what, where of one run, as one typed record.

`Manifest.from_json` upgrades an older folder first (harness/record/upgrade.py), so no reader sees an old
spelling. What only some regimes or sessions add (knobs, runtimes, prewarm, faults, ...) is kept by its key in
`sections`, in the order it was added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness import __version__
from harness.record.folders import RunFolder, git_state, host_info, utc_now
from harness.record.schema import MANIFEST_VERSION, SchemaError
from harness.record.upgrade import manifest_to_current

SCHEMA_VERSION = MANIFEST_VERSION
FILE = "manifest.json"

# The manifest's fields read as text (None stays None).
_TEXT_FIELDS = "run_id impl variant status bidbench_version created_utc failure_reason finished_utc".split()


@dataclass
class RegimeRef:
    """Which measurement a run belongs to: the regime, the group of its repetitions, its point and repetition."""

    name: str
    group: str | None = None
    point: Any = None
    repetition: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "point": self.point, "repetition": self.repetition}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RegimeRef:
        repetition = data.get("repetition")
        return cls(
            name=str(data["name"]),
            group=data.get("group"),
            point=data.get("point"),
            repetition=int(repetition) if isinstance(repetition, int | float) else None,
        )


@dataclass
class Manifest:
    run_id: str | None
    impl: str | None
    variant: str | None
    regime: RegimeRef | None
    status: str | None = "running"
    bidbench_version: str | None = __version__
    git: dict[str, Any] = field(default_factory=dict)
    created_utc: str | None = None
    host: dict[str, Any] = field(default_factory=dict)
    load: dict[str, Any] | None = None
    instances: int | None = None
    cpu_limit_cores: float | None = None
    slo: dict[str, Any] | None = None
    sections: dict[str, Any] = field(default_factory=dict)
    failure_reason: str | None = None
    finished_utc: str | None = None

    @classmethod
    def new(cls, run_id: str, impl: str, variant: str, regime: RegimeRef, **fields: Any) -> Manifest:
        """A manifest for a run starting now, on this host, from this checkout."""
        return cls(
            run_id=run_id,
            impl=impl,
            variant=variant,
            regime=regime,
            git=git_state(),
            created_utc=utc_now(),
            host=host_info(),
            **fields,
        )

    def finish(self, status: str, reason: str | None) -> None:
        self.status = status
        self.failure_reason = reason or None
        self.finished_utc = utc_now()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "bidbench_version": self.bidbench_version,
            "git": self.git,
            "created_utc": self.created_utc,
            "host": self.host,
            "run_id": self.run_id,
            "status": self.status,
            "impl": self.impl,
            "variant": self.variant,
            "regime": self.regime.to_json() if self.regime else None,
            "load": self.load,
            "instances": self.instances,
            "cpu_limit_cores": self.cpu_limit_cores,
            "slo": self.slo,
            **self.sections,
            "failure_reason": self.failure_reason,
            "finished_utc": self.finished_utc,
        }

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        data = dict(manifest_to_current(data))
        data.pop("schema_version")
        regime = data.pop("regime", None)
        instances = data.pop("instances", None)
        cpus = data.pop("cpu_limit_cores", None)
        if regime is not None and not isinstance(regime, dict):
            raise SchemaError(f"a manifest's regime must be an object, not {regime!r}")
        texts = {key: text_or_none(data.pop(key, None)) for key in _TEXT_FIELDS}
        return cls(
            regime=RegimeRef.from_json(regime) if regime else None,
            git=data.pop("git", None) or {},
            host=data.pop("host", None) or {},
            load=data.pop("load", None),
            instances=int(instances) if isinstance(instances, int | float) else None,
            cpu_limit_cores=float(cpus) if isinstance(cpus, int | float) else None,
            slo=data.pop("slo", None),
            sections=data,
            **texts,
        )


def text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def write_manifest(folder: RunFolder, manifest: Manifest) -> None:
    folder.write_json(FILE, manifest.to_json())


def read_manifest(folder: RunFolder) -> Manifest:
    return Manifest.from_json(folder.read_json(FILE))
