"""What the commands share: parsers of option values, and the options several commands declare alike.

An alias such as `SLO_P99` carries the option's help; each command still gives its default, so
`def ladder(slo_p99: SLO_P99 = 50.0)` declares `--slo-p99` (typer names the option after the parameter).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any, TypeVar

import typer

from harness.console import UserError
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan
from harness.engine.sizing import cpu_limit, default_instance_cpus
from harness.engine.validity import Slo
from harness.model.ladder import LadderSettings

N = TypeVar("N", int, float)


def parse_duration(text: str) -> float:
    """Seconds from "20s", "100ms", "2m" or a bare number of seconds."""
    text = text.strip().lower()
    for unit, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


def parse_knobs(pairs: list[str] | None) -> dict[str, str]:
    """--knob KEY=VALUE options as a dict; a later KEY wins."""
    knobs: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise UserError(f"--knob expects KEY=VALUE, got {pair!r} (for example --knob DB_POOL_SIZE=30)")
        key, value = pair.split("=", 1)
        knobs[key.strip()] = value.strip()
    return knobs


def parse_impls(text: str) -> list[str]:
    """`java,node` -> ["java", "node"], in the order given, each once; an unknown name is a UserError that
    lists the known ones (registered adapters included, hence the registry read at each call)."""
    from harness.apps import IMPLS

    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in IMPLS]
    if unknown or not names:
        raise UserError(
            f"unknown implementation {', '.join(repr(n) for n in unknown) or repr(text)}: "
            f"--impl takes a comma-separated list of {', '.join(IMPLS)} (for example --impl java,node)"
        )
    return list(dict.fromkeys(names))


def parse_windows(
    duration: str | None, warmup: str | None, default: tuple[float, float]
) -> tuple[float, float]:
    """A regime's (window, warm-up) in seconds: the explicit options where given, else `default` (the
    regime's own, or its --quick values)."""
    dur = parse_duration(duration) if duration else default[0]
    warm = parse_duration(warmup) if warmup else default[1]
    if dur <= 0 or warm < 0:
        raise UserError(f"--duration must be above 0 and --warmup at least 0; got {duration!r}, {warmup!r}")
    return dur, warm


def _numbers(text: str, option: str, kind: Callable[[str], N], example: str) -> list[N]:
    try:
        return [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"{option} takes {example}; got {text!r}") from None


def parse_positive_ints(text: str, option: str) -> list[int]:
    values = _numbers(text, option, int, "whole numbers like 1,2")
    if not values or min(values) < 1:
        raise UserError(f"{option} takes whole numbers of at least 1; got {text!r}")
    return values


def parse_rates(text: str, option: str) -> list[float]:
    """A ladder's rates: at least 3, above 0, increasing."""
    values = _numbers(text, option, float, "rates like 200,300,450")
    if len(values) < 3 or min(values) <= 0 or values != sorted(values):
        raise UserError(f"{option} takes at least 3 increasing rates above 0; got {text!r}")
    return values


def instance_cpus(given: float | None) -> float | None:
    """--cpus as every command reads it (harness/engine/sizing.py cpu_limit): cores per instance, None for
    no limit. Applied once, where a command reads its options; below it, None means no limit everywhere."""
    try:
        return cpu_limit(given)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def cpus_label(cpus: float | None) -> str:
    return f"{cpus:g} CPU" if cpus else "no CPU limit"


def base_run_plan(
    mix: str,
    duration: float,
    warmup: float,
    cpus: float | None,
    variant: str = "default",
    slo_p99: float = 50.0,
    slo_mean: float = 8.0,
    **load_settings: Any,
) -> RunPlan:
    """The run plan a regime varies (impl, rate, users, instances) from the options it was given."""
    load = LoadSettings(targets=[], mix=mix, duration_s=duration, warmup_s=warmup, **load_settings)
    return RunPlan(
        impl="node", load=load, cpus=cpus, variant=variant, slo=Slo(p99_ms=slo_p99, mean_ms=slo_mean)
    )


def ladder_settings(given: tuple[float, ...], steps: int, step: str, cost_passes: int) -> LadderSettings:
    """The ladder shape `ladder` and `aa` run: the defaults with --steps, --step and --cost-passes, or the
    rates given by --rates as one grid, whose lower half the cost passes repeat."""
    settings = replace(
        LadderSettings(), steps=len(given) or steps, step_s=parse_duration(step), cost_passes=cost_passes
    )
    return replace(settings, middle=None) if given else settings


IMPLS = Annotated[str, typer.Option(help="Comma-separated implementations: java,node,php.")]

CPUS = Annotated[
    float | None,
    typer.Option(
        help="CPU limit per instance in cores. Default: the sizing rule, a quarter of this machine's cores and "
        f"at most 1 (here {default_instance_cpus():g}), so the load driver and PostgreSQL keep enough CPU for "
        "valid runs. 0: no limit."
    ),
]


def repetitions_option(help_text: str) -> typer.models.OptionInfo:
    return typer.Option("--repetitions", "-r", min=1, help=help_text)


REPETITIONS_PER_POINT = Annotated[
    int | None, repetitions_option("Repetitions per point (default 5; --quick: 3).")
]

WINDOW = Annotated[
    str | None,
    typer.Option(help="Measurement window of each run (e.g. 3s); overrides the default and --quick's."),
]
WARMUP = Annotated[
    str | None, typer.Option(help="Warm-up of each run (e.g. 2s); overrides the default and --quick's.")
]
CAMPAIGN = Annotated[str | None, typer.Option(help="Campaign name; rerun with the same name to resume.")]

# The SLO as the regimes word it, and as `run` and `collect` word it.
SLO_P99 = Annotated[float, typer.Option(help="SLO p99 bound (ms).")]
SLO_MEAN = Annotated[float, typer.Option(help="SLO mean bound (ms).")]
SLO_P99_LATENCY = Annotated[float, typer.Option(help="SLO: p99 latency bound in ms.")]
SLO_MEAN_LATENCY = Annotated[float, typer.Option(help="SLO: mean latency bound in ms.")]

# The load ladders' shape (`ladder`), from its one definition.
LADDER = LadderSettings()
LADDER_STEP = f"{LADDER.step_s:g}s"
LADDER_MIX = Annotated[str, typer.Option(help="Request mix: browse, bid, mixed.")]
STEPS = Annotated[
    int,
    typer.Option(
        min=5,
        help="Steps per ladder: 3 from a quarter to half the calibration's break, for the CPU cost's fit, and "
        "the rest from there to twice the break, finer where the capacity is bracketed "
        '(docs/method.md, "The grid and the stop rule"). '
        "A ladder stops three steps past its break, so the steps above those are not run.",
    ),
]
STEP = Annotated[str, typer.Option(help="Length of each step.")]
COST_PASSES = Annotated[
    int,
    typer.Option(
        min=1,
        help="How many times the ladder's steps below its middle run in all: the extra passes come before "
        "the whole ladder and add steps to the CPU cost's fit, and steady it "
        '(docs/method.md, "Cost passes"). 1: the ladder alone.',
    ),
]
RATES = Annotated[
    str | None, typer.Option(help="The steps' rates, e.g. 200,300,450 (skips the calibration).")
]
