"""Running the load driver (loadgen/, `bidbench-load`): its environment, its live progress and its summary.

It runs in its own resource group so its CPU is measured exactly: a saturated load generator makes a run
invalid (docs/design.md "Validity").
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness import paths
from harness.engine.instances import stop_group
from harness.engine.resources import ResourceGroup
from harness.record.upgrade import upgrade_load_summary
from harness.tools import toolchain

# The warm-up of a fixed-rate run after the pre-warm: a short one was not enough under a fractional CPU
# limit (the lab log (docs/lab/), capacity search, "The warm-up of a fixed-rate run").
FIXED_RATE_WARMUP_S = 60.0


@dataclass(frozen=True)
class LoadSettings:
    targets: list[str]
    mix: str = "browse"
    model: str = "open"
    rate: float = 100.0
    users: int = 10
    think_ms: float = 0.0
    duration_s: float = 20.0
    warmup_s: float = 10.0
    invalid_share: float = 0.0
    payload_bytes: int = 0
    scale: int = 1
    seed: int = 42
    timeout_s: float = 10.0
    stages: str = ""
    """Open model: an arrival-rate profile for the measurement, "10s:100,1s:400,60s:400" (BB_STAGES)."""
    warmup_from_rate: float | None = None
    """Open model: where the warm-up's ramp starts (BB_WARMUP_FROM); None: a tenth of the rate."""
    steps: tuple[float, ...] = ()
    """A ladder: the measurement is these rates, each held step_s (BB_STEPS); `rate` is then the first."""
    step_s: float = 5.0
    stop_p99_ms: float = 0.0
    """A ladder stops after `stop_after` consecutive steps whose p99 passed this (BB_STOP_P99_MS); 0: never early."""
    stop_after: int = 2
    """BB_STOP_AFTER: the driver's own default is 2."""
    trace: bool = False
    """One line per request in the run's trace file (BB_TRACE), for the per-second series of fault runs."""
    start_at_unix: float | None = None
    """Open model: the wall-clock time the schedule starts (BB_START_AT); None: once the driver is ready.
    Drivers loading different groups at once share one, so their schedules run on one clock."""
    phase: float = 0.0
    """Open model: how far into each arrival interval the requests fall, a share in [0, 1) (BB_PHASE)."""

    def env(self, summary_path: Path, progress_path: Path, trace_path: Path) -> dict[str, str]:
        env = {
            "BB_TARGETS": ",".join(self.targets),
            "BB_MIX": self.mix,
            "BB_MODEL": self.model,
            "BB_DURATION": f"{self.duration_s:g}s",
            "BB_WARMUP": f"{self.warmup_s:g}s",
            "BB_INVALID_SHARE": f"{self.invalid_share:g}",
            "BB_SCALE": str(self.scale),
            "BB_SEED": str(self.seed),
            "BB_SUMMARY": str(summary_path),
            "BB_TIMEOUT": f"{self.timeout_s:g}s",
            "BB_PROGRESS": str(progress_path),
        }
        if self.model == "open":
            env["BB_RATE"] = repr(float(self.rate))
        else:
            env["BB_USERS"] = str(self.users)
            env["BB_THINK_MS"] = f"{self.think_ms:g}"
        if self.payload_bytes:
            env["BB_PAYLOAD_BYTES"] = str(self.payload_bytes)
        if self.stages:
            env["BB_STAGES"] = self.stages
        if self.model == "open" and self.warmup_from_rate is not None:
            env["BB_WARMUP_FROM"] = repr(float(self.warmup_from_rate))
        if self.steps:
            env["BB_STEPS"] = ",".join(f"{rate:g}" for rate in self.steps)
            env["BB_STEP_DURATION"] = f"{self.step_s:g}s"
            env["BB_STOP_P99_MS"] = f"{self.stop_p99_ms:g}"
            env["BB_STOP_AFTER"] = str(self.stop_after)
        if self.start_at_unix is not None:
            env["BB_START_AT"] = repr(float(self.start_at_unix))
        if self.phase:
            env["BB_PHASE"] = repr(float(self.phase))
        if self.trace:
            env["BB_TRACE"] = str(trace_path)
        return env

    def as_ladder(
        self,
        rates: tuple[float, ...],
        step_s: float,
        warmup_s: float,
        stop_p99_ms: float = 0.0,
        stop_after: int | None = None,
    ) -> LoadSettings:
        """This load as a ladder: the open model at each of `rates` for `step_s`, after `warmup_s`."""
        return replace(
            self,
            model="open",
            rate=rates[0],
            steps=tuple(rates),
            step_s=step_s,
            duration_s=len(rates) * step_s,
            warmup_s=warmup_s,
            stop_p99_ms=stop_p99_ms,
            stop_after=self.stop_after if stop_after is None else stop_after,
        )

    def describe(self) -> str:
        if self.steps:
            return (
                f"{self.mix} mix, a ladder of {len(self.steps)} steps of {self.step_s:g} s from "
                f"{self.steps[0]:g} to {self.steps[-1]:g} req/s, warm-up {self.warmup_s:g} s"
            )
        load = (
            f"{self.rate:g} req/s open"
            if self.model == "open"
            else f"{self.users} users closed, think {self.think_ms:g} ms"
        )
        return f"{self.mix} mix, {load}, warm-up {self.warmup_s:g} s + {self.duration_s:g} s"


# The driver's exit codes (loadgen/cmd/bidbench-load): what each says to the person reading the run.
EXIT_MEANINGS = {
    1: "an internal error",
    2: "a bad setting",
    3: "the target was unreachable at start",
    4: "it was interrupted (its summary is partial)",
    5: "it was ready only after its start time had passed (the host was too busy to set it up in time)",
}


class DriverProcess:
    """One `bidbench-load run`: started in its resource group, followed through its progress file."""

    def __init__(
        self, settings: LoadSettings, summary_path: Path, log_path: Path, group: ResourceGroup
    ) -> None:
        self.settings = settings
        self.summary_path = summary_path
        self.log_path = log_path
        self.progress_path = log_path.with_name(log_path.stem + "-progress.jsonl")
        self.trace_path = log_path.with_name("trace.log")
        self.group = group
        self.proc: subprocess.Popen[bytes] | None = None
        self._last: dict[str, object] | None = None
        self.steps: list[dict[str, object]] = []
        self._offset = 0

    def start(self) -> None:
        self.progress_path.unlink(missing_ok=True)
        env = dict(os.environ, **self.settings.env(self.summary_path, self.progress_path, self.trace_path))
        self.proc = self.group.spawn([str(toolchain.driver_path()), "run"], paths.LOADGEN, env, self.log_path)

    def progress(self) -> dict[str, object] | None:
        """The newest progress line (None before the first)."""
        try:
            with self.progress_path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except OSError:
            return self._last
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            # A ladder's step verdicts share the file with the once-a-second lines.
            if isinstance(record, dict) and "step" in record:
                self.steps.append(record)
            elif isinstance(record, dict):
                self._last = record
        return self._last

    def requests_so_far(self) -> int | None:
        last = self.progress()
        value = last.get("completed") if last else None
        return int(value) if isinstance(value, (int, float)) else None

    def poll(self) -> int | None:
        return self.proc.poll() if self.proc else None

    def wait(self, timeout_s: float) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        """SIGINT first: the driver then writes what it measured so far, marked partial."""
        if self.proc:
            stop_group(self.proc, signal.SIGINT)

    def failure(self, code: int) -> str:
        meaning = EXIT_MEANINGS.get(code, "an unexpected exit")
        tail = ""
        with contextlib.suppress(OSError):
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
            tail = f": {lines[-1]}" if lines else ""
        return f"the load driver exited with code {code}, {meaning}{tail}"

    def wait_until_running(self, timeout_s: float = 90) -> float:
        """The monotonic time at which the driver's schedule started (its first progress line says when,
        in wall-clock time; setup, such as fetching the open items, comes before it)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            last = self.progress()
            if last is not None and isinstance(last.get("started_at_unix"), (int, float)):
                started = float(last["started_at_unix"])  # type: ignore[arg-type]
                return time.monotonic() - (time.time() - started)
            code = self.poll()
            if code is not None:
                raise RuntimeError(self.failure(code) + f"; see {self.log_path}")
            time.sleep(0.05)
        raise RuntimeError(
            f"the load driver did not start its schedule within {timeout_s:.0f} s; see {self.log_path}"
        )


SUMMARY_COUNTS = ("requests", "ok", "app_errors", "sys_errors", "late_sends")
SUMMARY_OPTIONAL = ("offered_rps", "latency_sent_ms", "measure_start_unix", "steps", "ladder", "max_inflight")


def digest_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The driver's JSON summary, checked (its fields are documented in loadgen/README.md)."""
    summary = upgrade_load_summary(summary)
    missing = [key for key in (*SUMMARY_COUNTS, "latency_ms") if key not in summary]
    if missing:
        raise ValueError(
            f"the load summary lacks {', '.join(missing)}; was it written by loadgen/ (bidbench-load)?"
        )
    if summary.get("partial"):
        raise ValueError("the load driver was interrupted: its summary is partial")
    return {
        **{key: int(summary[key]) for key in SUMMARY_COUNTS},
        "latency_ms": summary["latency_ms"],
        "over_1s": int(summary.get("over_1s") or 0),
        **{key: summary.get(key, {}) for key in ("per_type", "server_timing_ms", "statuses")},
        **{key: summary.get(key) for key in SUMMARY_OPTIONAL},
        "max_conns": (summary.get("settings") or {}).get("max_conns"),
    }
