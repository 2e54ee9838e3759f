"""`./bidbench aa`: the same app against itself, side by side (`./bidbench side-by-side --aa`)."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli import options
from harness.cli.side_by_side import run_and_print
from harness.console import UserError
from harness.model.side_by_side import PRESETS

AA_HELP = """A/A: the same app against itself, to check that the comparison is fair and its statistics honest.

Two groups of the app (A and B) in every fresh start, each started first in turn, pre-warmed together
and measured in the same seconds (`./bidbench side-by-side --aa`). Their paired ratio B/A must come out
1 within its 95 % interval; an interval that excludes 1, or one wider than [0.97, 1.03], says the
set-up favours a group or the machine is too noisy for the comparisons.

Example:
  ./bidbench aa --impl node --repetitions 5    5 fresh starts side by side (about 25 minutes)"""


def register(app: typer.Typer) -> None:
    @app.command(help=AA_HELP)
    def aa(
        impl: Annotated[str, typer.Option(help="One implementation: java, node or php.")],
        repetitions: Annotated[int, options.repetitions_option("Fresh starts.")] = 5,
        cpus: options.CPUS = None,
        mix: options.LADDER_MIX = "browse",
        slo_p99: options.SLO_P99 = 50.0,
        slo_mean: options.SLO_MEAN = 8.0,
        preset: Annotated[
            str,
            typer.Option(help=f"The experiment's settings ({', '.join(PRESETS)})."),
        ] = "standard",
    ) -> None:
        chosen = options.parse_impls(impl)
        if len(chosen) != 1:
            raise UserError(f"--impl takes one implementation for an A/A run; got {impl!r}")
        run_and_print(chosen, True, preset, repetitions, cpus, mix, slo_p99, slo_mean)
