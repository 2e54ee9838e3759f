"""Claim files: loading, schema validation and the typed model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from harness import paths

SCHEMA_NAME = "claim.schema.json"


class ClaimError(Exception):
    """A claim file that does not load or does not validate; the message says which file and where."""


def claims_dir() -> Path:
    return Path(paths.ROOT) / "claims"


def load_schema(directory: Path | None = None) -> dict[str, Any]:
    path = (directory or claims_dir()) / SCHEMA_NAME
    return json.loads(path.read_text())


@dataclass(frozen=True)
class Variant:
    name: str
    impl: str | None = None
    knobs: dict[str, str] = field(default_factory=dict)
    with_indexes: bool = True
    jvm: str | None = None
    cpus: float | None = None
    unfair: bool = False
    available: bool = True
    instances: int | None = None
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class LadderShape:
    """A claim's ladder (harness/regimes/ladder.py LadderSettings): 6 steps of 2.5 s after a pre-warm of
    at most 40 s (a fresh JVM's JIT needs it; node and php settle much sooner) and a 3 s warm-up
    (docs/lab/2026-11-26-demo-shape-and-calibration.md, "The claims' shape"). The shape is part of every stored
    ladder's group key, so it stays what docs/replication/REPORT.md was run with (its `--from` recomputes
    match folders by that key). The demo and `ladder` run more, shorter steps (harness/regimes/demo.py):
    more steps below saturation give a steadier cost; the claims keep 6 of 2.5 s so that
    `replicate --all --quick` fits 120 minutes (tests/claims/test_replication.py)."""

    steps: int = 6
    step_s: float = 2.5
    warmup_s: float = 3.0
    prewarm_max_s: float = 40.0
    calibration_step_s: float = 1.5


@dataclass(frozen=True)
class Size:
    repetitions: int
    cpus: float
    mix: str
    duration_s: float = 0.0
    warmup_s: float = 0.0
    rate: float = 100.0
    impls: tuple[str, ...] | None = None
    instances: int = 1
    ladder: LadderShape = field(default_factory=LadderShape)


@dataclass(frozen=True)
class Comparison:
    baseline: str
    variant: str
    relation: str
    bound: float | None = None
    tolerance: float | None = None
    published: str = ""
    published_ratio: float | None = None
    margin: float | None = None
    center: float = 1.0

    def band(self) -> tuple[float, float]:
        """equivalent: the ratio band B/A, symmetric on the log scale around the stated ratio."""
        m = float(self.margin or 0.0)
        return self.center / (1.0 + m), self.center * (1.0 + m)

    def expected_text(self) -> str:
        if self.relation == "equivalent":
            low, high = self.band()
            what = "≈" if self.center == 1.0 else f"≈ {self.center:g} ×"
            return (
                f"{self.variant} {what} {self.baseline} (TOST: ratio within [{low:.3g}, {high:.3g}], "
                f"margin {self.margin:g})"
            )
        if self.relation == "greater":
            return f"{self.variant} > {self.baseline}"
        if self.relation == "less":
            return f"{self.variant} < {self.baseline}"
        if self.relation == "similar":
            return f"{self.variant} ≈ {self.baseline} (ratio within 1 ± {self.tolerance:g})"
        if self.relation == "ratio_at_least":
            return f"{self.variant} / {self.baseline} ≥ {self.bound:g}"
        return f"{self.variant} / {self.baseline} ≤ {self.bound:g}"


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    status: str
    source: dict[str, Any]
    regime: str
    impls: tuple[str, ...]
    variants: tuple[Variant, ...]
    quick: Size
    full: Size
    metric: str
    expect: tuple[Comparison, ...]
    missing: str = ""
    notes: str = ""
    scaled_down: str = ""
    path: Path | None = None

    @property
    def runnable(self) -> bool:
        return self.status == "runnable"

    def why_not(self) -> str:
        return "" if self.runnable else f"needs a variant that does not exist: {self.missing}"

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    def size(self, quick: bool) -> Size:
        return self.quick if quick else self.full

    def source_text(self) -> str:
        origin = self.source.get("seed") or self.source.get("url") or "outside the seed texts"
        return f"{self.source['document']}, {self.source['where']} ({origin})"

    def expected_text(self) -> str:
        return "; ".join(c.expected_text() for c in self.expect)


def _where(error: jsonschema.ValidationError) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def validate(data: Any, schema: dict[str, Any], origin: str) -> None:
    """Schema validation plus the cross-references a schema cannot express. Raises ClaimError listing every problem."""
    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{_where(e)}: {e.message}" for e in sorted(validator.iter_errors(data), key=lambda e: list(e.path))
    ]
    if not problems and isinstance(data, dict):
        names = [v["name"] for v in data["experiment"]["variants"]]
        if len(set(names)) != len(names):
            problems.append("experiment/variants: variant names must be unique")
        for i, comparison in enumerate(data["expect"]):
            for key in ("baseline", "variant"):
                if comparison[key] not in names:
                    problems.append(
                        f"expect/{i}/{key}: {comparison[key]!r} is not one of the variants {names}"
                    )
        if data["status"] == "runnable" and any(
            v.get("available") is False for v in data["experiment"]["variants"]
        ):
            problems.append(
                "status: a variant is marked available: false, so the status must be needs-variant"
            )
        if Path(origin).stem != data["id"] and origin.endswith((".yaml", ".yml")):
            problems.append(f"id: {data['id']!r} must equal the file name {Path(origin).stem!r}")
    if problems:
        raise ClaimError(f"{origin}: invalid claim file:\n  - " + "\n  - ".join(problems))


def _size(data: dict[str, Any]) -> Size:
    return Size(
        repetitions=int(data["repetitions"]),
        duration_s=float(data.get("duration_s", 0.0)),
        warmup_s=float(data.get("warmup_s", 0.0)),
        cpus=float(data["cpus"]),
        mix=str(data["mix"]),
        rate=float(data.get("rate", 100.0)),
        impls=tuple(data["impls"]) if "impls" in data else None,
        instances=int(data.get("instances", 1)),
        ladder=LadderShape(**data.get("ladder", {})),
    )


def from_dict(data: dict[str, Any], path: Path | None = None) -> Claim:
    experiment = data["experiment"]
    return Claim(
        id=data["id"],
        claim=data["claim"],
        status=data["status"],
        source=dict(data["source"]),
        regime=experiment["regime"],
        impls=tuple(experiment["impls"]),
        variants=tuple(
            Variant(
                name=v["name"],
                impl=v.get("impl"),
                knobs={str(k): str(val) for k, val in v.get("knobs", {}).items()},
                with_indexes=bool(v.get("with_indexes", True)),
                jvm=v.get("jvm"),
                cpus=float(v["cpus"]) if "cpus" in v else None,
                unfair=bool(v.get("unfair", False)),
                available=bool(v.get("available", True)),
                instances=int(v["instances"]) if "instances" in v else None,
                tools=tuple(v.get("tools", ())),
            )
            for v in experiment["variants"]
        ),
        quick=_size(experiment["quick"]),
        full=_size(experiment["full"]),
        metric=data["metric"],
        expect=tuple(Comparison(**c) for c in data["expect"]),
        missing=data.get("missing", ""),
        notes=data.get("notes", ""),
        scaled_down=data.get("scaled_down", ""),
        path=path,
    )


def load_file(path: Path, schema: dict[str, Any] | None = None) -> Claim:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ClaimError(f"{path}: not valid YAML: {exc}") from exc
    validate(data, schema or load_schema(path.parent), str(path))
    return from_dict(data, path)


def load_all(directory: Path | None = None) -> list[Claim]:
    directory = directory or claims_dir()
    schema = load_schema(directory)
    return [load_file(p, schema) for p in sorted(directory.glob("*.yaml"))]


def find(claim_id: str, directory: Path | None = None) -> Claim:
    claims = load_all(directory)
    for claim in claims:
        if claim.id == claim_id:
            return claim
    known = ", ".join(c.id for c in claims)
    raise ClaimError(f"no claim {claim_id!r}; known claims: {known}")
