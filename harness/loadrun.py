"""Running k6 with loadgen-k6/bidbench.js: its environment, its live progress and its summary.

k6 runs in its own resource group so its CPU is measured exactly (a saturated load generator makes a
run invalid, SPEC §7). Live figures come from k6's REST API on a private loopback port.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from harness import paths, toolchain
from harness.db.cluster import free_port
from harness.resources import ResourceGroup

SCRIPT = paths.LOADGEN / "bidbench.js"

# The warm-up of a fixed-rate run as `./bidbench run` and `./bidbench capacity`'s check make it, after the
# pre-warm. 10 s was not enough at 0.5 CPU: fresh-start runs at a demo's capacities (java 1,870, node
# 1,810, php 1,000 req/s) all missed the SLO after 10 s (p99 84.7, 56.4, 106 ms); after 60 s java and
# node held (35.2 and 30.7 ms), php missed by 1.7 ms and then held on its next run (28.6 ms).
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
    trace: bool = False
    """One log line per request in k6.log (BB_TRACE), for the per-second series of fault runs."""

    def env(self, summary_path: Path) -> dict[str, str]:
        env = {
            "BB_TARGETS": ",".join(self.targets),
            "BB_MIX": self.mix,
            "BB_MODEL": self.model,
            "BB_DURATION": f"{self.duration_s:g}s",
            # k6 takes a scenario start of 0s or at least 1s.
            "BB_WARMUP": f"{max(self.warmup_s, 1.0) if self.warmup_s > 0 else 0:g}s",
            "BB_INVALID_SHARE": f"{self.invalid_share:g}",
            "BB_SCALE": str(self.scale),
            "BB_SEED": str(self.seed),
            "BB_SUMMARY": str(summary_path),
            "BB_TIMEOUT": f"{self.timeout_s:g}s",
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
        if self.trace:
            env["BB_TRACE"] = "1"
            env["K6_LOG_FORMAT"] = "raw"  # the trace lines as written, without logrus decoration
        return env

    def describe(self) -> str:
        load = (
            f"{self.rate:g} req/s open"
            if self.model == "open"
            else f"{self.users} users closed, think {self.think_ms:g} ms"
        )
        return f"{self.mix} mix, {load}, warm-up {self.warmup_s:g} s + {self.duration_s:g} s"


class K6Process:
    def __init__(
        self, settings: LoadSettings, summary_path: Path, log_path: Path, group: ResourceGroup
    ) -> None:
        self.settings = settings
        self.summary_path = summary_path
        self.log_path = log_path
        self.group = group
        self.api_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at: float | None = None

    def start(self) -> None:
        argv = [
            str(toolchain.k6_path()),
            "run",
            "--quiet",
            "--no-color",
            "--no-usage-report",
            "--address",
            f"127.0.0.1:{self.api_port}",
            str(SCRIPT),
        ]
        env = dict(os.environ, **self.settings.env(self.summary_path), K6_NO_USAGE_REPORT="true")
        self.proc = self.group.spawn(argv, paths.LOADGEN, env, self.log_path)

    def _api(self, path: str) -> dict[str, object] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.api_port}{path}", timeout=0.5) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def requests_so_far(self) -> int | None:
        data = self._api("/v1/metrics/http_reqs")
        try:
            return int(data["data"]["attributes"]["sample"]["count"])  # type: ignore[index]
        except (TypeError, KeyError, ValueError):
            return None

    def test_running(self) -> bool:
        """True once k6's execution runs. It may include setup() (a few dozen requests, well under a
        second), which is the error bound on where the harness places the window; active VUs are no
        signal, since at a low arrival rate there are often none at an instant."""
        data = self._api("/v1/status")
        try:
            return bool(data["data"]["attributes"]["running"])  # type: ignore[index]
        except (TypeError, KeyError, ValueError):
            return False

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
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=5)

    def wait_until_running(self, timeout_s: float = 60) -> float:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.poll() is not None:
                raise RuntimeError(
                    f"k6 exited with code {self.poll()} before the test started; see {self.log_path}"
                )
            if self.test_running():
                return time.monotonic()
            time.sleep(0.1)
        raise RuntimeError(f"k6 did not start its scenarios within {timeout_s:.0f} s; see {self.log_path}")
