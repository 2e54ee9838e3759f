"""CLI commands of the regimes (docs/design.md §6): capacity, scaling, users, payload, and the demo."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.table import Table

from harness.analysis.regime_tables import (
    mean_ci_text,
    print_capacity_table,
    print_confirmation_table,
    users_cells,
)
from harness.cli.options import (
    CAMPAIGN,
    IMPLS,
    KNOBS,
    REPETITIONS_PER_POINT,
    SIZED_CPUS,
    SLO_MEAN,
    SLO_P99,
    WARMUP,
    WINDOW,
    base_run_plan,
    parse_duration,
    parse_impls,
    parse_knobs,
    parse_windows,
    sized_cpus,
)
from harness.console import console


def _payload_timing(metrics: dict[str, Any], layer: str) -> float | None:
    """Mean Server-Timing of the payload requests for one layer (db or app), in ms."""
    timing = (metrics.get("per_type", {}).get("payload") or {}).get("server_timing_ms") or {}
    value = timing.get(layer)
    if isinstance(value, dict):
        value = value.get("mean")
    return float(value) if isinstance(value, (int, float)) else None


def register(app: typer.Typer) -> None:  # noqa: C901 - one place that declares every regime command
    @app.command()
    def capacity(
        impl: IMPLS = "java,node,php",
        repetitions: Annotated[
            int | None,
            typer.Option(
                "--repetitions",
                "-r",
                min=1,
                help="Independent searches per implementation (default 5; --quick: 3).",
            ),
        ] = None,
        quick: Annotated[
            bool, typer.Option(help="3 repetitions and short probes (5 s warm-up, 8 s window).")
        ] = False,
        mix: Annotated[str, typer.Option(help="Request mix.")] = "browse",
        cpus: Annotated[float, typer.Option(help="CPU limit per instance (the thesis: 1 CPU).")] = 1.0,
        duration: Annotated[str, typer.Option(help="Measurement window of each probe.")] = "15s",
        warmup: Annotated[str, typer.Option(help="Warm-up of each probe.")] = "10s",
        start_rate: Annotated[
            float, typer.Option(help="First rate probed (req/s); the search doubles from there.")
        ] = 100.0,
        knob: KNOBS = None,
        variant: Annotated[str, typer.Option(help="Configuration name for grouping.")] = "default",
        slo_p99: SLO_P99 = 50.0,
        slo_mean: SLO_MEAN = 8.0,
        scale: Annotated[int, typer.Option(min=1)] = 1,
        seed: Annotated[int, typer.Option()] = 42,
        campaign: CAMPAIGN = None,
        confirm: Annotated[
            bool,
            typer.Option(
                help="Afterwards, check each capacity with fixed-rate runs as `./bidbench run` makes them: "
                "it must hold there, and 1.2x of it must break the SLO (stepping down or up, at most 4 runs)."
            ),
        ] = True,
    ) -> None:
        """Find each implementation's capacity: the highest arrival rate with p99 <= 50 ms, mean <= 8 ms,
        system errors < 0.1 % and a valid run, each instance capped at one CPU (thesis 7.2). Doubles, then
        bisects, then re-tries the boundary; implementations are interleaved A B C A B C."""
        from harness.regimes.campaign import Campaign, campaign_name
        from harness.regimes.capacity import CapacityPlan, SearchSettings, run_capacity

        impls = parse_impls(impl)
        reps = repetitions or (3 if quick else 5)
        dur, warm = (8.0, 5.0) if quick else (parse_duration(duration), parse_duration(warmup))
        base = base_run_plan(mix, dur, warm, cpus, parse_knobs(knob), variant, scale, seed, slo_p99, slo_mean)
        name = campaign or campaign_name(
            "capacity", {"impls": impls, "reps": reps, "base": repr(base), "start": start_rate}
        )
        console.print(
            f"capacity campaign {name}: {', '.join(impls)}, {reps} searches each (resume with --campaign {name})"
        )
        chosen = Campaign(name)
        plan = CapacityPlan(impls, base, reps, SearchSettings(start_rate=start_rate))
        records = run_capacity(chosen, plan)
        print_capacity_table("capacity under the SLO", records)
        if confirm:
            from harness.regimes.confirm import ConfirmSettings, confirm_capacity

            settings = ConfirmSettings()
            print_confirmation_table(confirm_capacity(chosen, plan, records, settings), settings)

    @app.command()
    def scaling(
        impl: IMPLS = "java,node,php",
        instances: Annotated[
            int | None, typer.Option(help="Largest instance count (default: what fits this machine).")
        ] = None,
        cpus: SIZED_CPUS = None,
        repetitions: REPETITIONS_PER_POINT = None,
        quick: Annotated[bool, typer.Option(help="3 repetitions and short probes.")] = False,
        mix: Annotated[str, typer.Option()] = "browse",
        knob: KNOBS = None,
        variant: Annotated[str, typer.Option()] = "default",
        duration: WINDOW = None,
        warmup: WARMUP = None,
        start_rate: Annotated[
            float,
            typer.Option(
                min=1, help="First rate probed at 1 instance (req/s); the search doubles from there."
            ),
        ] = 100.0,
        max_probes: Annotated[
            int | None,
            typer.Option(
                min=1,
                help="Probes per search at most (default: until it converges); a search cut short answers with "
                "the highest rate it held, and the table notes it.",
            ),
        ] = None,
        campaign: CAMPAIGN = None,
    ) -> None:
        """Capacity, CPU %, utilized CPU, normalized throughput and memory per instance for 1..N instances
        (thesis Tables 7.1 and 7.2). Sizing rule: each instance gets a quarter of the cores (at most 1) unless
        --cpus says otherwise, and instances x cpus must leave 1 core (2 on machines with more than 4) for the load driver and
        PostgreSQL; larger sweeps are cut with a warning. `python compare.py` fits the USL."""
        from harness.regimes.campaign import Campaign, campaign_name
        from harness.regimes.capacity import SearchSettings
        from harness.regimes.sweeps import run_scaling

        impls = parse_impls(impl)
        cpus = sized_cpus(cpus)
        reps = repetitions or (3 if quick else 5)
        dur, warm = parse_windows(duration, warmup, (8.0, 5.0) if quick else (15.0, 10.0))
        base = base_run_plan(mix, dur, warm, cpus, parse_knobs(knob), variant, 1, 42, 50.0, 8.0)
        settings = SearchSettings(start_rate=start_rate, max_probes=max_probes, max_hinted_probes=max_probes)
        name = campaign or campaign_name(
            "scaling",
            {"impls": impls, "n": instances, "reps": reps, "base": repr(base), "search": repr(settings)},
        )
        console.print(f"scaling campaign {name} (resume with --campaign {name})")
        results = run_scaling(Campaign(name), impls, base, instances, reps, settings)
        for count, records in results.items():
            print_capacity_table(f"{count} instance(s) x {cpus:g} CPU", records)

    @app.command()
    def users(
        impl: IMPLS = "java,node,php",
        users_list: Annotated[
            str, typer.Option("--users", help="Comma-separated user counts.")
        ] = "1,2,4,8,16,32",
        think: Annotated[str, typer.Option(help="Think time per user between requests.")] = "0",
        repetitions: REPETITIONS_PER_POINT = None,
        quick: Annotated[bool, typer.Option(help="3 repetitions, 8 s windows.")] = False,
        mix: Annotated[str, typer.Option()] = "browse",
        cpus: SIZED_CPUS = None,
        invalid_share: Annotated[float, typer.Option(help="Share of invalid requests (STEP: 0.125).")] = 0.0,
        duration: WINDOW = None,
        warmup: WARMUP = None,
        campaign: CAMPAIGN = None,
    ) -> None:
        """The closed model at 1, 2, 4, ... users: throughput, the RUBiS QoS table (max, mean, median, % over 1 s)
        and application exceptions vs system errors (STEP Table 6)."""
        from harness.regimes.campaign import Campaign, campaign_name
        from harness.regimes.sweeps import run_users

        impls = parse_impls(impl)
        cpus = sized_cpus(cpus)
        counts = [int(u) for u in users_list.split(",") if u.strip()]
        reps = repetitions or (3 if quick else 5)
        dur, warm = parse_windows(duration, warmup, (8.0, 4.0) if quick else (15.0, 5.0))
        base = base_run_plan(mix, dur, warm, cpus, {}, "default", 1, 42, 50.0, 8.0)
        base = replace(
            base, load=replace(base.load, think_ms=parse_duration(think) * 1000, invalid_share=invalid_share)
        )
        name = campaign or campaign_name(
            "users", {"impls": impls, "users": counts, "reps": reps, "base": repr(base)}
        )
        console.print(f"users campaign {name} (resume with --campaign {name})")
        results = run_users(Campaign(name), impls, base, counts, reps)
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
        impl: IMPLS = "java,node,php",
        sizes: Annotated[
            str, typer.Option(help="Comma-separated body sizes in bytes.")
        ] = "256,1024,4096,16384,32768,65535,65536,65537,131072",
        rate: Annotated[float, typer.Option(help="Requests per second at each size.")] = 20.0,
        repetitions: Annotated[
            int | None,
            typer.Option("--repetitions", "-r", min=1, help="Repetitions per size (default 5; --quick: 3)."),
        ] = None,
        quick: Annotated[bool, typer.Option(help="3 repetitions, 4 s windows.")] = False,
        cpus: SIZED_CPUS = None,
        duration: WINDOW = None,
        warmup: WARMUP = None,
        campaign: CAMPAIGN = None,
    ) -> None:
        """Growing request bodies up to and past the contract's 65536-byte limit: the outcome of each size
        (ok, 413, error) and the latency breakdown into db and app time (STEP Table 4). Each size is run R
        times from a fresh start; the table gives means with 95 % intervals."""
        from harness.regimes.campaign import Campaign, campaign_name
        from harness.regimes.sweeps import payload_outcome, run_payload

        impls = parse_impls(impl)
        cpus = sized_cpus(cpus)
        size_list = [int(s) for s in sizes.split(",") if s.strip()]
        reps = repetitions or (3 if quick else 5)
        dur, warm = parse_windows(duration, warmup, (4.0, 2.0) if quick else (6.0, 3.0))
        base = base_run_plan("payload", dur, warm, cpus, {}, "default", 1, 42, 50.0, 8.0)
        base = replace(base, load=replace(base.load, rate=rate))
        name = campaign or campaign_name(
            "payload", {"impls": impls, "sizes": size_list, "rate": rate, "reps": reps, "base": repr(base)}
        )
        console.print(f"payload campaign {name} (resume with --campaign {name})")
        results = run_payload(Campaign(name), impls, base, size_list, reps)
        table = Table(title="payload size (STEP Table 4): means [95 % CI] over repetitions")
        for column in ("impl", "bytes", "outcome", "mean ms", "p99 ms", "db ms", "app ms", "valid"):
            table.add_column(column, justify="right")
        grouped: dict[tuple[str, int], list[Any]] = {}
        for impl_name, size, result in results:
            grouped.setdefault((impl_name, size), []).append(result)
        for (impl_name, size), group in grouped.items():
            measured = [r.metrics for r in group if r.metrics]
            outcomes = sorted({payload_outcome(r) for r in group})
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
