"""Claim files: loading, schema validation and the typed model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import yaml

from harness import paths
from harness.model.ladder import LadderSettings
from harness.model.side_by_side import PRESETS

SCHEMA_NAME = "claim.schema.json"
T = TypeVar("T")


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
    """A claim's ladder (harness/regimes/ladder.py LadderSettings): a pre-warm without the quota, long enough
    for a fresh JVM's JIT to settle, then the warm-up and the steps (docs/lab/, "The claims' shape").
    The shape is part of every stored ladder's group key, so it stays what docs/replication/REPORT.md was
    run with (its `--from` matches folders by that key). The demo and `ladder` run more, shorter steps for
    a steadier cost; the claims keep 6 of 2.5 s so that `replicate --all --quick` fits 120 minutes
    (tests/claims/test_replication.py)."""

    steps: int = 6
    step_s: float = 2.5
    warmup_s: float = LadderSettings.warmup_s
    prewarm_max_s: float = 40.0
    calibration_step_s: float = 1.5
    break_rps: float | None = None
    """The SLO break every cell's steps are built from (LadderSettings `low` to `high` times it), declared
    in the YAML instead of calibrated per cell: two variants of one app this close would otherwise each read
    their own grid, and a saturation read off a grid differs with it (docs/lab/2026-12-01-fig-6.2-grids-at-20.md).
    None: each cell calibrates its own."""

    def __post_init__(self) -> None:
        if self.break_rps is not None:
            # 3417 and 3417.0 in a YAML file are one break, and one key
            object.__setattr__(self, "break_rps", float(self.break_rps))

    def key(self) -> dict[str, Any]:
        """The shape as ladders and verdicts are keyed on it: a declared break only when there is one, so
        the keys of ladders that calibrate each cell, and the settings of their verdicts, stay as stored."""
        return {k: v for k, v in asdict(self).items() if not (k == "break_rps" and v is None)}


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
    preset: str = ""
    """design side-by-side: the side-by-side preset its fresh starts run (harness/model/side_by_side.py
    PRESETS), fixed in the YAML like the repetitions; the schema requires it with that design."""

    def settings(self) -> dict[str, Any]:
        """The size as a verdict stores it (harness/claims/store.py), its ladder as keyed."""
        return {**asdict(self), "ladder": self.ladder.key()}


@dataclass(frozen=True)
class Comparison:
    """One row of a claim: B/A on the claim's metric. Two questions (harness/claims/verdict.py): the
    direction (greater / less) and, where the source gives a figure, its magnitude (published_ratio within
    the tolerance fixed in the YAML). `equivalent` rows ask one question: no difference beyond the margin."""

    baseline: str
    variant: str
    relation: str
    tolerance: float | None = None
    published: str = ""
    published_ratio: float | None = None
    margin: float | None = None
    center: float = 1.0
    expected_effect: float | None = None
    tests_expected_effect: bool = False
    """A qualitative row that also asks whether the data exclude its expected effect, the smallest the
    source's wording would notice (declared before any run): excluded is contradicted while the direction
    is undecided, and direction only where the direction holds."""
    magnitude_untested: str = ""
    not_testable: str = ""

    def band(self) -> tuple[float, float]:
        """equivalent: the ratio band B/A, symmetric on the log scale around the stated ratio."""
        m = float(self.margin or 0.0)
        return self.center / (1.0 + m), self.center * (1.0 + m)

    @property
    def asks_magnitude(self) -> bool:
        return (
            self.relation in ("greater", "less")
            and self.published_ratio is not None
            and self.tolerance is not None
            and not self.magnitude_untested
        )

    def magnitude_band(self) -> tuple[float, float] | None:
        """The published ratio's band, symmetric on the log scale: the magnitude question's TOST bounds."""
        if not self.asks_magnitude:
            return None
        r, t = float(self.published_ratio or 1.0), float(self.tolerance or 0.0)
        return r / (1.0 + t), r * (1.0 + t)

    def effect(self) -> float | None:
        """The true B/A the power calculation assumes: the published figure, else the row's stated effect."""
        if self.relation == "equivalent":
            return self.center
        if self.published_ratio is not None and not self.magnitude_untested:
            return self.published_ratio
        return self.expected_effect

    def expected_text(self) -> str:
        if self.relation == "equivalent":
            low, high = self.band()
            what = "≈" if self.center == 1.0 else f"≈ {self.center:g} ×"
            return (
                f"{self.variant} {what} {self.baseline} (TOST: ratio within [{low:.3g}, {high:.3g}], "
                f"margin {self.margin:g})"
            )
        sign = ">" if self.relation == "greater" else "<"
        text = f"{self.variant} {sign} {self.baseline}"
        band = self.magnitude_band()
        if band:
            text += f"; magnitude {self.published_ratio:.3g} (TOST within [{band[0]:.3g}, {band[1]:.3g}])"
        if self.tests_expected_effect:
            text += f"; contradicted where the data exclude {self.expected_effect:g}"
        return text


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
    not_testable: str = ""
    adaptation: str = ""
    changed_after_data: str = ""
    design: str = "apart"
    path: Path | None = None

    @property
    def runnable(self) -> bool:
        return self.status == "runnable"

    @property
    def testable(self) -> bool:
        return self.status != "not-testable"

    def why_not(self) -> str:
        if self.runnable:
            return ""
        if not self.testable:
            return f"not testable here: {self.not_testable}"
        return f"needs a variant that does not exist: {self.missing}"

    def variant(self, name: str) -> Variant:
        return {v.name: v for v in self.variants}[name]

    def size(self, quick: bool) -> Size:
        return self.quick if quick else self.full

    def source_text(self) -> str:
        """The source by its full name and place (author, title, table or section): never a file name."""
        return f"{self.source['document']}, {self.source['where']}"

    def quote(self) -> str:
        return str(self.source.get("quote", ""))

    def expected_text(self) -> str:
        return "; ".join(c.expected_text() for c in self.expect)


def _where(error: jsonschema.ValidationError) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def _effect_test_problems(i: int, comparison: dict[str, Any]) -> list[str]:
    """A row that tests its expected effect needs one on the side of 1 its relation expects, and no
    published figure (that is the magnitude question's)."""
    if not comparison.get("tests_expected_effect"):
        return []
    effect, relation = comparison.get("expected_effect"), comparison["relation"]
    where = f"expect/{i}/tests_expected_effect"
    if relation not in ("greater", "less"):
        return [f"{where}: only a greater or less row has an expected effect to exclude"]
    if effect is None:
        return [f"{where}: needs expected_effect, the effect the data would exclude"]
    if (effect > 1) != (relation == "greater") or effect == 1:
        return [f"{where}: expected_effect {effect:g} is not on the side of 1 that {relation!r} expects"]
    if comparison.get("published_ratio") is not None:
        return [f"{where}: a row with a published_ratio asks its magnitude instead"]
    return []


def validate(data: Any, schema: dict[str, Any], origin: str) -> None:
    """Schema validation plus the cross-references a schema cannot express. Raises ClaimError listing every problem."""
    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{_where(e)}: {e.message}" for e in sorted(validator.iter_errors(data), key=lambda e: list(e.path))
    ]
    if not problems and isinstance(data, dict) and "experiment" in data:
        names = [v["name"] for v in data["experiment"]["variants"]]
        if len(set(names)) != len(names):
            problems.append("experiment/variants: variant names must be unique")
        for i, comparison in enumerate(data.get("expect", [])):
            for key in ("baseline", "variant"):
                if comparison[key] not in names:
                    problems.append(
                        f"expect/{i}/{key}: {comparison[key]!r} is not one of the variants {names}"
                    )
            problems += _effect_test_problems(i, comparison)
        if data["status"] == "runnable" and any(
            v.get("available") is False for v in data["experiment"]["variants"]
        ):
            problems.append(
                "status: a variant is marked available: false, so the status must be needs-variant"
            )
    if not problems and isinstance(data, dict):
        if Path(origin).stem != data["id"] and origin.endswith((".yaml", ".yml")):
            problems.append(f"id: {data['id']!r} must equal the file name {Path(origin).stem!r}")
    if problems:
        raise ClaimError(f"{origin}: invalid claim file:\n  - " + "\n  - ".join(problems))


CASTS: dict[str, Callable[[Any], Any]] = {
    "knobs": lambda knobs: {str(k): str(v) for k, v in knobs.items()},
    "with_indexes": bool,
    "unfair": bool,
    "available": bool,
    "tools": tuple,
    "repetitions": int,
    "instances": int,
    "cpus": float,
    "duration_s": float,
    "warmup_s": float,
    "rate": float,
    "mix": str,
    "preset": str,
    "impls": tuple,
    "ladder": lambda shape: LadderShape(**shape),
}
"""How a claim file's variant and size fields are read; a field the file leaves out takes its default."""


def _typed(cls: Callable[..., T], data: Mapping[str, Any]) -> T:
    return cls(**{key: CASTS.get(key, lambda value: value)(value) for key, value in data.items()})


NO_EXPERIMENT: dict[str, Any] = {
    "regime": "",
    "impls": [],
    "variants": [],
    "quick": {"repetitions": 0, "cpus": 0.0, "mix": "browse"},
    "full": {"repetitions": 0, "cpus": 0.0, "mix": "browse"},
}
"""What a not-testable claim, which declares no experiment, stands on: nothing that could run."""


def from_dict(data: dict[str, Any], path: Path | None = None) -> Claim:
    experiment = data.get("experiment") or NO_EXPERIMENT
    texts = {
        key: value for key, value in data.items() if key not in ("experiment", "source", "metric", "expect")
    }
    return Claim(
        **texts,
        source=dict(data["source"]),
        regime=experiment["regime"],
        impls=tuple(experiment["impls"]),
        variants=tuple(_typed(Variant, v) for v in experiment["variants"]),
        quick=_typed(Size, experiment["quick"]),
        full=_typed(Size, experiment["full"]),
        metric=data.get("metric", ""),
        expect=tuple(Comparison(**c) for c in data.get("expect", [])),
        design=experiment.get("design", "apart"),
        path=path,
    )


# The experiment's cells and design: what the runners of both designs and the layout share.
@dataclass(frozen=True)
class Cell:
    impl: str
    variant: Variant


def metric_value(metrics: dict[str, Any] | None, path: str) -> float | None:
    """A dotted path into metrics.json (e.g. latency_ms.p99); None when absent."""
    node: Any = metrics
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def cells(claim: Claim, size: Size) -> list[Cell]:
    """What the claim runs: each variant that a testable row compares, on each app of the size. A variant
    that only rows declared not testable name is not run: no verdict would read its runs."""
    compared = {name for c in claim.expect if not c.not_testable for name in (c.baseline, c.variant)}
    variants = [v for v in claim.variants if v.name in compared]
    out = [Cell(impl, v) for impl in size.impls or claim.impls for v in variants if v.impl in (None, impl)]
    # impl-pinned variants whose impl is not in the list still run (impl-vs-impl claims)
    for variant in variants:
        if variant.impl is not None and all(c.variant.name != variant.name for c in out):
            out.append(Cell(variant.impl, variant))
    return out


def row_impls(claim: Claim, size: Size, comparison: Comparison) -> list[tuple[str, str]]:
    """The (baseline's impl, variant's impl) of each row a comparison makes at a size: one row when a
    variant is pinned to an impl, else one per implementation the size runs."""
    va, vb = claim.variant(comparison.baseline), claim.variant(comparison.variant)
    if va.impl or vb.impl:
        return [(va.impl or vb.impl or "", vb.impl or va.impl or "")]
    return [(impl, impl) for impl in dict.fromkeys(c.impl for c in cells(claim, size))]


def match_size(
    claim: Claim, runs: Sequence[tuple[str, str, int]], keyed: Callable[[Size], Mapping[str, Any]], what: str
) -> tuple[Size, bool, Mapping[str, Any]]:
    """The size (quick or full) whose keys (`keyed`) the stored runs, (run id, key, repetition) each, match
    most, with the repetitions the runs reach, and its keys. Raises ValueError naming the runs that belong
    to no `what` of this claim."""

    def matched(quick: bool) -> int:
        keys = keyed(claim.size(quick))
        return sum(1 for _, key, _ in runs if key in keys)

    quick = max((True, False), key=matched)
    by_key = keyed(claim.size(quick))
    strays = [run_id for run_id, key, _ in runs if key not in by_key]
    if strays:
        raise ValueError(
            f"{len(strays)} folder(s) belong to no {what} of {claim.id} (quick or full size): {', '.join(strays)}"
        )
    reps = max((r for *_, r in runs), default=-1) + 1
    return replace(claim.size(quick), repetitions=max(reps, 1)), quick, by_key


DESIGN = "side-by-side"


def is_side_by_side(claim: Claim) -> bool:
    return claim.design == DESIGN


def group_problems(claim: Claim) -> list[str]:
    """Why this claim's variants cannot be the groups of one fresh start, each naming its field; empty
    when they can (or when the claim runs apart). Machine-independent: the fit on this machine's cores is
    layout_problems' (harness/claims/layout.py)."""
    if not is_side_by_side(claim) or not claim.runnable:
        return []
    problems = []
    pinned = [v.impl is not None for v in claim.variants]
    if any(pinned) and not all(pinned):
        problems.append(
            "experiment/variants: side by side needs every variant to name its app (one fresh start holds "
            "them all) or none to (one fresh start per app); these mix both"
        )
    # The groups share one database and one limit per instance: indexes and CPUs must not differ between them.
    for name, what in (
        ("with_indexes", "the indexes belong to the one database every group of a fresh start shares"),
        ("cpus", "every group of a fresh start runs under the same CPU limit"),
    ):
        values = {getattr(v, name) for v in claim.variants}
        if len(values) > 1:
            first = getattr(claim.variants[0], name)
            index = next(k for k, v in enumerate(claim.variants) if getattr(v, name) != first)
            problems.append(
                f"experiment/variants/{index}/{name}: the variants differ in {name} ({sorted(map(str, values))}), "
                f"so they cannot run side by side: {what}. Run this claim apart (design: apart)"
            )
    for which, size in (("quick", claim.quick), ("full", claim.full)):
        if size.preset not in PRESETS:
            problems.append(
                f"experiment/{which}/preset: {size.preset!r} is not a side-by-side preset "
                f"({', '.join(PRESETS)})"
            )
        elif claim.metric == "capacity_rps" and not PRESETS[size.preset].capacity:
            problems.append(
                f"experiment/{which}/preset: {size.preset!r} runs no capacity rungs, and the metric is capacity_rps"
            )
    return problems


def load_file(path: Path, schema: dict[str, Any] | None = None) -> Claim:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ClaimError(f"{path}: not valid YAML: {exc}") from exc
    validate(data, schema or load_schema(path.parent), str(path))
    claim = from_dict(data, path)
    problems = group_problems(claim)
    if problems:
        raise ClaimError(f"{path}: invalid claim file:\n  - " + "\n  - ".join(problems))
    return claim


def load_all(directory: Path | None = None) -> list[Claim]:
    directory = directory or claims_dir()
    schema = load_schema(directory)
    return [load_file(p, schema) for p in sorted(directory.glob("*.yaml"))]


def find(claim_id: str, directory: Path | None = None) -> Claim:
    claims = {claim.id: claim for claim in load_all(directory)}
    if claim_id not in claims:
        raise ClaimError(f"no claim {claim_id!r}; known claims: {', '.join(claims)}")
    return claims[claim_id]
