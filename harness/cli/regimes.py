"""CLI commands of the sweeping regimes (docs/design.md §6): users and payload."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from harness.analysis.regime_tables import mean_ci_text, users_cells
from harness.cli import options
from harness.console import console
from harness.regimes import sweeps
from harness.regimes.campaign import Campaign, campaign_name


def _payload_timing(metrics: dict[str, Any], layer: str) -> float | None:
    """Mean Server-Timing of the payload requests for one layer (db or app), in ms."""
    timing = (metrics.get("per_type", {}).get("payload") or {}).get("server_timing_ms") or {}
    value = timing.get(layer)
    if isinstance(value, dict):
        value = value.get("mean")
    return float(value) if isinstance(value, (int, float)) else None


def register(app: typer.Typer) -> None:
    @app.command()
    def users(
        impl: options.IMPLS = "java,node,php",
        users_list: Annotated[
            str, typer.Option("--users", help="Comma-separated user counts.")
        ] = "1,2,4,8,16,32",
        think: Annotated[str, typer.Option(help="Think time per user between requests.")] = "0",
        repetitions: options.REPETITIONS_PER_POINT = None,
        quick: Annotated[bool, typer.Option(help="3 repetitions, 8 s windows.")] = False,
        mix: Annotated[str, typer.Option()] = "browse",
        cpus: options.CPUS = None,
        invalid_share: Annotated[float, typer.Option(help="Share of invalid requests (STEP: 0.125).")] = 0.0,
        duration: options.WINDOW = None,
        warmup: options.WARMUP = None,
        campaign: options.CAMPAIGN = None,
    ) -> None:
        """The closed model at 1, 2, 4, ... users: throughput, the RUBiS QoS table (max, mean, median, % over 1 s)
        and application exceptions vs system errors (STEP Table 6)."""
        impls = options.parse_impls(impl)
        cpus = options.instance_cpus(cpus)
        counts = [int(u) for u in users_list.split(",") if u.strip()]
        reps = repetitions or (3 if quick else 5)
        dur, warm = options.parse_windows(duration, warmup, (8.0, 4.0) if quick else (15.0, 5.0))
        base = options.base_run_plan(
            mix, dur, warm, cpus, think_ms=options.parse_duration(think) * 1000, invalid_share=invalid_share
        )
        name = campaign or campaign_name(
            "users", {"impls": impls, "users": counts, "reps": reps, "base": repr(base)}
        )
        console.print(f"users campaign {name} (resume with --campaign {name})")
        results = sweeps.run_users(Campaign(name), impls, base, counts, reps)
        table = Table(title="closed model: QoS per user count (RUBiS) and errors (STEP Table 6)")
        for column in (
            "impl",
            "users",
            "req/s",
            "max ms",
            "mean ms",
            "median ms",
            "% over 1 s",
            "app exc.",
            "sys err.",
            "valid",
        ):
            table.add_column(column, justify="right")
        rows: dict[tuple[str, int], list[Any]] = {}
        for result in results:
            if result.metrics:
                manifest = result.folder.read_json("manifest.json")
                rows.setdefault((manifest["impl"], manifest["load"]["users"]), []).append(result)
        for (impl_name, count), group in sorted(rows.items()):
            table.add_row(
                impl_name, str(count), *users_cells([r.metrics for r in group], sum(r.valid for r in group))
            )
        table.caption = (
            "max: the slowest request of all the runs; % over 1 s: of all their requests; "
            "the other figures: mean over the runs [95 % CI]"
        )
        console.print(table)

    @app.command()
    def payload(
        impl: options.IMPLS = "java,node,php",
        sizes: Annotated[
            str, typer.Option(help="Comma-separated body sizes in bytes.")
        ] = "256,1024,4096,16384,32768,65535,65536,65537,131072",
        rate: Annotated[float, typer.Option(help="Requests per second at each size.")] = 20.0,
        repetitions: Annotated[
            int | None, options.repetitions_option("Repetitions per size (default 5; --quick: 3).")
        ] = None,
        quick: Annotated[bool, typer.Option(help="3 repetitions, 4 s windows.")] = False,
        cpus: options.CPUS = None,
        duration: options.WINDOW = None,
        warmup: options.WARMUP = None,
        campaign: options.CAMPAIGN = None,
    ) -> None:
        """Growing request bodies up to and past the contract's 65536-byte limit: the outcome of each size
        (ok, 413, error) and the latency breakdown into db and app time (STEP Table 4). Each size is run R
        times from a fresh start; the table gives means with 95 % intervals."""
        impls = options.parse_impls(impl)
        cpus = options.instance_cpus(cpus)
        size_list = [int(s) for s in sizes.split(",") if s.strip()]
        reps = repetitions or (3 if quick else 5)
        dur, warm = options.parse_windows(duration, warmup, (4.0, 2.0) if quick else (6.0, 3.0))
        base = options.base_run_plan("payload", dur, warm, cpus, rate=rate)
        name = campaign or campaign_name(
            "payload", {"impls": impls, "sizes": size_list, "rate": rate, "reps": reps, "base": repr(base)}
        )
        console.print(f"payload campaign {name} (resume with --campaign {name})")
        results = sweeps.run_payload(Campaign(name), impls, base, size_list, reps)
        table = Table(title="payload size (STEP Table 4): means [95 % CI] over repetitions")
        for column in ("impl", "bytes", "outcome", "mean ms", "p99 ms", "db ms", "app ms", "valid"):
            table.add_column(column, justify="right")
        grouped: dict[tuple[str, int], list[Any]] = {}
        for impl_name, size, result in results:
            grouped.setdefault((impl_name, size), []).append(result)
        for (impl_name, size), group in grouped.items():
            measured = [r.metrics for r in group if r.metrics]
            outcomes = sorted({sweeps.payload_outcome(r) for r in group})
            table.add_row(
                impl_name,
                str(size),
                "/".join(outcomes),
                mean_ci_text([m["latency_ms"]["mean"] for m in measured], 2),
                mean_ci_text([m["latency_ms"]["p99"] for m in measured], 2),
                mean_ci_text([v for m in measured if (v := _payload_timing(m, "db")) is not None], 3),
                mean_ci_text([v for m in measured if (v := _payload_timing(m, "app")) is not None], 3),
                f"{sum(r.valid for r in group)}/{len(group)}",
            )
        console.print(table)
