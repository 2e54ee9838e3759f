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


@dataclass(frozen=True)
class Size:
    repetitions: int
    duration_s: float
    warmup_s: float
    cpus: float
    mix: str
    rate: float = 100.0
    impls: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Comparison:
    baseline: str
    variant: str
    relation: str
    bound: float | None = None
    tolerance: float | None = None
    published: str = ""
    published_ratio: float | None = None

    def expected_text(self) -> str:
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
        return f"{self.source['document']}, {self.source['where']} ({self.source['seed']})"

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
        duration_s=float(data["duration_s"]),
        warmup_s=float(data["warmup_s"]),
        cpus=float(data["cpus"]),
        mix=str(data["mix"]),
        rate=float(data.get("rate", 100.0)),
        impls=tuple(data["impls"]) if "impls" in data else None,
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
            )
            for v in experiment["variants"]
        ),
        quick=_size(experiment["quick"]),
        full=_size(experiment["full"]),
        metric=data["metric"],
        expect=tuple(Comparison(**c) for c in data["expect"]),
        missing=data.get("missing", ""),
        notes=data.get("notes", ""),
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
