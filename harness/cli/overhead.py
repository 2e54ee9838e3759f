"""`./bidbench overhead`: the load generators' own CPU cost per request, and the driver's accuracy (#27)."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli.options import instance_cpus
from harness.regimes.overhead import Options, benchmark

# One line per paragraph: rich keeps a help string's line breaks, and the terminal wraps it again.
HELP = "\n\n".join(
    [
        "How much CPU each load generator spends per request, so you can tell whether the load driver takes CPU the apps under test would otherwise get (on 2 cores, every µs the driver spends is shared with the app and PostgreSQL).",
        "Against one target at one rate, four generators take turns, in --repetitions interleaved rounds whose order rotates (the machine is shared: no generator always runs first):",
        "[bold]driver[/] bidbench-load on the browse mix, as measured runs use it.",
        "[bold]bare[/] bidbench-load with BB_MIX=bare: GET /health only, no Server-Timing read. The driver's engine alone.",
        "[bold]wrk[/] Debian's wrk (C, closed loop, --wrk-connections connections, as fast as the target answers): a floor for what one HTTP request costs a client on this machine.",
        "[bold]vegeta[/] vegeta's CLI at the same rate (the pacing model our driver follows).",
        "How to read it: [bold]CPU µs/request[/] is the generator process's user + system CPU time, from the kernel's rusage when it exits (start-up included), divided by the requests it completed; the median of the repetitions, then the min-max range. At 1000 req/s, 100 µs/request is a tenth of one core. [bold]wake-ups/request[/] counts voluntary context switches: an open-model generator needs about two (its send time, its response), and each wake from idle is expensive on a VM. [bold]late sends[/] (our driver only) are requests sent more than 50 ms after their scheduled time: above 0, the driver could not keep the rate and the latencies it reports understate the target's. wrk's figure is at its own, much higher, rate and is cheaper per request for that reason; compare driver and bare with vegeta.",
        "Everything goes to results/overhead/<time>/: overhead.json has every repetition's raw rusage, request count and late sends (each printed number is recomputable from it), plus each driver run's summary.",
        "[bold]--accuracy[/] instead checks the driver's latency figures against a fake target on 127.0.0.1 (harness/tools/fake_target.py): the p50 against a fixed 5 ms answer at 500 req/s (it should be within a few tenths of a ms), and a target that freezes once for 1 s while the driver may hold 2 connections: the p99 from each request's intended start shows the freeze, the p99 from its actual send hides it (coordinated omission).",
        "Examples: ./bidbench overhead   (java, 1000 req/s, 20 s x 5 repetitions, about 8 minutes)",
        "./bidbench overhead --rate 5000 --generators bare   (can the driver keep 5000 req/s? see late sends)",
        "./bidbench overhead --target-url http://127.0.0.1:8080 --seconds 5 --repetitions 3",
        "./bidbench overhead --accuracy",
    ]
)


def register(app: typer.Typer) -> None:
    @app.command(help=HELP)
    def overhead(
        impl: Annotated[
            str, typer.Option(help="The app to start as the target: java, node or php.")
        ] = "java",
        target_url: Annotated[
            str | None,
            typer.Option(
                help="Measure against this running server instead (loopback only), e.g. http://127.0.0.1:8080."
            ),
        ] = None,
        rate: Annotated[
            float, typer.Option(min=1, help="Requests per second (driver, bare, vegeta).")
        ] = 1000.0,
        seconds: Annotated[float, typer.Option(min=1, help="Length of each generator's run.")] = 20.0,
        repetitions: Annotated[
            int, typer.Option(min=1, max=50, help="Interleaved rounds of all generators.")
        ] = 5,
        warmup: Annotated[
            float, typer.Option(min=0, help="Seconds of unmeasured browse load first (a cold JIT is slow).")
        ] = 10.0,
        generators: Annotated[
            str, typer.Option(help="Comma-separated subset of driver,bare,wrk,vegeta.")
        ] = "driver,bare,wrk,vegeta",
        wrk_connections: Annotated[
            int, typer.Option(min=1, max=1000, help="wrk's connections (its closed-loop concurrency).")
        ] = 2,
        cpus: Annotated[
            float, typer.Option(help="CPU limit of the started app in cores; 0 (the default): no limit.")
        ] = 0.0,
        accuracy: Annotated[
            bool,
            typer.Option(
                "--accuracy", help="Check the driver's latency figures against a fake target instead."
            ),
        ] = False,
    ) -> None:
        options = Options(
            impl=impl,
            target_url=target_url,
            rate=rate,
            seconds=seconds,
            repetitions=repetitions,
            warmup_s=warmup,
            generators=tuple(g.strip() for g in generators.split(",") if g.strip()),
            wrk_connections=wrk_connections,
            cpus=instance_cpus(cpus),
            accuracy=accuracy,
        )
        raise typer.Exit(benchmark(options))
