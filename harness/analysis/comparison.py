"""The orchestration: result folders -> groups -> statistics per metric -> tables and fits.

Groups are keyed by (impl, variant, regime, point). A comparison set is every group at one (regime, point):
those are the treatments compared with each other (java vs node vs php, or a variant vs its base).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import paths
from harness.analysis.load import AnalysisError, Run, RunSet, discover, get_path, select
from harness.analysis.metrics import resolve_metrics
from harness.model.stats import DEFAULT_RESAMPLES, MetricResult, analyse

REGIMES = ("ladder", "capacity", "fixed-rate", "users", "payload")
REGIME_ORDER = {name: rank for rank, name in enumerate(REGIMES)}
CALIBRATION_REGIME = "ladder-calibration"
FLOOR_REGIME = "ladder-floor"
# Never compared as treatments: a calibration only sizes the ladders; the floor is the driver against a
# static responder, the reference the apps' latencies are read against.
NOT_COMPARED = (CALIBRATION_REGIME, FLOOR_REGIME)

# Shares of a whole: their intervals stop at 100 %.
SHARE_MAX = {"utilized_cpu": 100.0, "app_errors": 100.0, "sys_errors": 100.0}


@dataclass(frozen=True)
class LowerBound:
    """A group whose value is only "at least X" in some runs: never averaged, never tested."""

    value: float
    bounded: int
    runs: int

    def text(self) -> str:
        return f">= {self.value:,.0f} ({self.bounded} of {self.runs} never failed)"


@dataclass
class ComparisonSet:
    """All groups at one (regime, point): what is compared with what."""

    regime: str
    point: str
    point_value: float | None
    labels: list[str]
    runs: list[Run]
    results: list[MetricResult] = field(default_factory=list)
    bounds: dict[str, dict[str, LowerBound]] = field(default_factory=dict)
    """metric -> label -> the group's lower bound, for groups left out of that metric's tests."""

    @property
    def title(self) -> str:
        return self.regime if self.point == "-" else f"{self.regime} @ {self.point}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")

    def result(self, metric: str) -> MetricResult | None:
        return next((r for r in self.results if r.metric == metric), None)

    def runs_of(self, label: str) -> list[Run]:
        return [r for r in self.runs if r.label == label]


@dataclass
class Comparison:
    runset: RunSet
    sets: list[ComparisonSet]
    alpha: float
    confidence: float
    test: str
    baseline: str | None
    seed: int
    n_resamples: int
    warnings: list[str]
    floors: list[Run] = field(default_factory=list)
    """The noise floor's ladders (regime ladder-floor): the driver against a static responder."""

    @property
    def runs(self) -> list[Run]:
        return self.runset.runs

    @property
    def labels(self) -> list[str]:
        return sorted({r.label for r in self.runs}, key=lambda lb: (lb != self.baseline, lb))


def _sort_point(run: Run) -> tuple[int, float, str]:
    value = run.point_value
    rank = REGIME_ORDER.get(run.regime, len(REGIME_ORDER))
    return (rank, value if value is not None else float("inf"), run.point)


def group_sets(runs: Sequence[Run]) -> list[ComparisonSet]:
    """One set per (regime, point)."""
    by_set: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in sorted((r for r in runs if r.regime not in NOT_COMPARED), key=_sort_point):
        by_set[(run.regime, run.point)].append(run)
    return [
        ComparisonSet(regime, point, members[0].point_value, sorted({r.label for r in members}), members)
        for (regime, point), members in by_set.items()
    ]


def _through_idle(run: Run) -> bool | None:
    cost = get_path(run.metrics or {}, "ladder", "cpu_cost")
    return bool(cost.get("idle_measured")) if isinstance(cost, dict) else None


def intercept_mix(runs: Sequence[Run]) -> str | None:
    """Says so when some ladders' cost fits went through the idle CPU they read and others fitted the
    intercept (older ladders, and the claims' before method 3): the two put the fixed share of a loaded
    app's CPU in different places, so their costs differ by method (docs/method.md, "The intercept is the
    idle CPU")."""
    ways = [(run.label, _through_idle(run)) for run in runs]
    if len({way for _, way in ways if way is not None}) < 2:
        return None
    fitted = sorted({label for label, way in ways if way is False})
    return (
        "CPU µs per request mixes methods: some ladders' fits went through the idle CPU they read, others "
        f"fitted the intercept ({', '.join(fitted)}); those costs are not comparable"
    )


def compare(
    run_dirs: Sequence[str | Path] = (),
    *,
    index: str | Path | None = None,
    include_invalid: bool = False,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    test: str = "welch",
    baseline: str | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Read result folders (or a results/ folder, or an index) and compute every statistic.

    run_dirs: run folders, folders holding run folders, or index.jsonl files; empty means results/.
    include_invalid: use runs that failed validity (marked `!` everywhere, with a banner).
    metrics: names from harness.analysis.metrics (default: docs/design.md §8's and the ladder's, each set
        getting those that apply to its regime: a ladder set its cost, capacity and memory figures).
    alpha: significance level; the confidence of every interval is 1 - alpha.
    test: "welch" or "mannwhitney" for two groups (three or more always use ANOVA + post hoc).
    baseline: the label others are compared with in the verdict columns (default: the first by name).
    seed: seeds every bootstrap, so the same folders always print the same numbers.
    """
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be between 0 and 0.5, got {alpha}")
    if test not in ("welch", "mannwhitney"):
        raise ValueError(f"test must be welch or mannwhitney, got {test!r}")
    if not run_dirs and index is None:
        run_dirs = [paths.RESULTS]
    chosen = resolve_metrics(metrics)
    found, sources = discover(run_dirs, index)
    if not found:
        raise AnalysisError("no runs found; run `./bidbench run ...` first, or point at a results/ folder")
    floors = [r for r in found if r.regime == FLOOR_REGIME and floor_usable(r)]
    calibrations = sum(1 for r in found if r.regime == CALIBRATION_REGIME)
    compared = [r for r in found if r.regime not in NOT_COMPARED]
    if not compared:
        raise AnalysisError(
            "only calibration or noise-floor ladders found; run `./bidbench ladder` (or another regime) first"
        )
    used, excluded = select(compared, include_invalid)
    runset = RunSet(used, excluded, sources)
    confidence = 1.0 - alpha
    notes: list[str] = []
    if calibrations:
        notes.append(f"{calibrations} calibration ladder(s) left out: they only size the ladders' steps")
    labels_all = {r.label for r in runset.runs}
    if baseline is not None and baseline not in labels_all:
        raise ValueError(
            f"baseline {baseline!r} is not among the runs' labels: {', '.join(sorted(labels_all))}"
        )
    sets = group_sets(runset.runs)
    for cset in sets:
        mixed = intercept_mix(cset.runs)
        if mixed:
            notes.append(f"{cset.title}: {mixed}")
        for metric in chosen:
            if not metrics and not metric.applies_to(cset.regime):
                continue
            samples: dict[str, list[float]] = {}
            invalid: dict[str, int] = {}
            for label in cset.labels:
                members = cset.runs_of(label)
                bounds = [b for b in (metric.bound(r) for r in members) if b is not None]
                if bounds:
                    # Averaging "at least" figures with real ones would understate the group; the
                    # smallest bound is all the runs support (harness/analysis/ladder_tables.py ladder_row).
                    cset.bounds.setdefault(metric.key, {})[label] = LowerBound(
                        min(bounds), len(bounds), len(members)
                    )
                    notes.append(
                        f"{cset.title}, {metric.title}: {label} is left out of the tests: "
                        f"{len(bounds)} of {len(members)} run(s) never failed, so it is only "
                        f">= {min(bounds):,.0f}"
                    )
                    continue
                valued = [(run, value) for run in members if (value := metric.value(run)) is not None]
                if valued:
                    samples[label] = [value for _, value in valued]
                    invalid[label] = sum(1 for run, _ in valued if not run.is_valid)
            if not samples:
                continue
            result = analyse(
                metric.key,
                samples,
                alpha=alpha,
                confidence=confidence,
                test=test,
                baseline=baseline if baseline in samples else None,
                seed=seed,
                n_resamples=n_resamples,
                context=cset.title,
                invalid_counts=invalid,
                upper=SHARE_MAX.get(metric.key),
            )
            cset.results.append(result)
            notes.extend(f"{cset.title}, {metric.title}: {w}" for w in result.warnings)
    for run in runset.runs:
        notes.extend(f"{run.run_id}: {p}" for p in run.problems)
    return Comparison(
        runset=runset,
        sets=[s for s in sets if s.results],
        alpha=alpha,
        confidence=confidence,
        test=test,
        baseline=baseline,
        seed=seed,
        n_resamples=n_resamples,
        warnings=list(dict.fromkeys(notes)),
        floors=floors,
    )


def floor_usable(run: Run) -> bool:
    """A floor ladder is usable when it completed with every step valid. Its verdict fails the cost fit
    by construction (the static responder's CPU is not measured), so that check alone does not count."""
    if run.status != "completed" or not (run.metrics or {}).get("ladder"):
        return False
    checks = (run.verdict or {}).get("checks") or {}
    failed = [name for name, c in checks.items() if isinstance(c, dict) and c.get("ok") is False]
    return all(name == "cost_fit" for name in failed)
