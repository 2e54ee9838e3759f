"""`./bidbench collect`: one result folder from the summaries of a distributed load (harness/engine/distributed.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.analysis.summary_table import print_run
from harness.cli.options import SLO_MEAN_LATENCY, SLO_P99_LATENCY
from harness.console import UserError, console
from harness.engine.distributed import collect as collect_shards
from harness.engine.validity import Slo


def register(app: typer.Typer) -> None:
    @app.command()
    def collect(
        sources: Annotated[
            list[Path] | None,
            typer.Argument(help="Summary files or pod logs of the shards (or use --from)."),
        ] = None,
        from_dir: Annotated[
            Path | None,
            typer.Option(
                "--from", help="A folder of the shards' pod logs or summaries (*.log, *.json, *.txt)."
            ),
        ] = None,
        impl: Annotated[
            str, typer.Option(help="The implementation that was measured: java, node or php.")
        ] = "java",
        instances: Annotated[
            int, typer.Option(min=1, help="App instances behind the target (replicas).")
        ] = 1,
        variant: Annotated[
            str, typer.Option(help="A name for this configuration, to group runs.")
        ] = "default",
        slo_p99: SLO_P99_LATENCY = 50.0,
        slo_mean: SLO_MEAN_LATENCY = 8.0,
    ) -> None:
        """Merge the summaries of the shards of one distributed load (the Kubernetes load Job's pod logs,
        infra/README.md) with `bidbench-load merge` and store them as one run under results/, like
        `./bidbench run --target-url` (CPU and memory unknown).

        Example: ./bidbench collect --from results/k8s/java --impl java"""
        chosen = [*(sources or []), *([from_dir] if from_dir else [])]
        if not chosen:
            raise UserError("name the shards' logs or summaries, or a folder of them with --from")
        outcome = collect_shards(
            chosen, impl, instances=instances, variant=variant, slo=Slo(p99_ms=slo_p99, mean_ms=slo_mean)
        )
        console.print(
            f"collect: {len(outcome.shards)} shards, windows {outcome.metrics['start_skew_s'] if outcome.metrics else 0:.3f} s apart"
        )
        print_run(outcome.folder.run_id, outcome.status, outcome.metrics, outcome.verdict, outcome.reason)
        console.print(f"result folder: {outcome.folder.path}")
        if outcome.status != "completed":
            raise typer.Exit(1)
