"""Measure the k6 CPU cost per request of bidbench.js against a bare k6 GET loop (bare.js).

Both scripts run in turn against the same target at the same rate; each k6 process's CPU time (user +
system, from the kernel's rusage of the exited child) is divided by the requests it sent. Two figures:
- whole run: CPU of a --duration run / its requests (includes start-up: VU init, setup, summary);
- marginal: (CPU of the --duration run - CPU of a --short run) / (difference in requests): the steady-state
  cost of one more request, with start-up and shutdown cancelled out.
Without --target, a fake service (tests/loadgen/fake_service.py) is started on 127.0.0.1.

    .bidbench/venv/bin/python loadgen-k6/overhead.py --rate 300 --duration 20s --short 5s --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
K6 = ROOT / ".bidbench" / "bin" / "k6"
FAKE = ROOT / "tests" / "loadgen" / "fake_service.py"


@dataclass
class Sample:
    script: str
    requests: int
    cpu_s: float
    wall_s: float

    @property
    def cpu_us_per_request(self) -> float:
        return self.cpu_s / self.requests * 1e6 if self.requests else float("nan")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_k6(script: str, env: dict[str, str]) -> Sample:
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        full_env = {**os.environ, **env, "BB_SUMMARY": str(summary)}
        started = time.monotonic()
        proc = subprocess.Popen(
            [str(K6), "run", "-q", "--no-usage-report", str(HERE / script)],
            env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            raise RuntimeError(
                f"k6 {script} exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}"
            )
        data = json.loads(summary.read_text())
    return Sample(script, int(data["requests"]), usage.ru_utime + usage.ru_stime, wall)


def marginal(long: Sample, short: Sample) -> float:
    extra = long.requests - short.requests
    return (long.cpu_s - short.cpu_s) / extra * 1e6 if extra > 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", help="base URL of a running service; default: start the fake service")
    parser.add_argument("--rate", type=int, default=300)
    parser.add_argument("--duration", default="20s")
    parser.add_argument("--short", default="5s", help="duration of the short run for the marginal cost")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mix", default="browse")
    args = parser.parse_args()

    fake: subprocess.Popen[bytes] | None = None
    target = args.target
    if target is None:
        port = free_port()
        fake = subprocess.Popen([sys.executable, str(FAKE), "--port", str(port)], stdout=subprocess.DEVNULL)
        target = f"http://127.0.0.1:{port}"
        time.sleep(1.0)
    scripts = {
        "bare.js": {"BB_TARGETS": target, "BB_RATE": str(args.rate)},
        "bidbench.js": {
            "BB_TARGETS": target,
            "BB_RATE": str(args.rate),
            "BB_MIX": args.mix,
            "BB_WARMUP": "0s",
        },
    }
    runs: dict[str, list[tuple[Sample, Sample]]] = {name: [] for name in scripts}
    try:
        for _ in range(args.repeat):
            for name, env in scripts.items():  # interleaved, so drifting machine load hits both alike
                long = run_k6(name, {**env, "BB_DURATION": args.duration})
                short = run_k6(name, {**env, "BB_DURATION": args.short})
                runs[name].append((long, short))
    finally:
        if fake is not None:
            fake.terminate()
            fake.wait(timeout=10)

    result: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
        "target": args.target or "fake service (tests/loadgen/fake_service.py)",
        "rate": args.rate, "duration": args.duration, "short": args.short, "mix": args.mix,
    }  # fmt: skip
    medians: dict[str, tuple[float, float]] = {}
    for name, pairs in runs.items():
        whole = statistics.median(long.cpu_us_per_request for long, _ in pairs)
        extra = statistics.median(marginal(long, short) for long, short in pairs)
        medians[name] = (whole, extra)
        result[name] = {
            "cpu_us_per_request_whole_run": round(whole, 1),
            "cpu_us_per_request_marginal": round(extra, 1),
            "runs": [{"long": asdict(long), "short": asdict(short)} for long, short in pairs],
        }
    result["ratio_whole_run"] = round(medians["bidbench.js"][0] / medians["bare.js"][0], 2)
    result["ratio_marginal"] = round(medians["bidbench.js"][1] / medians["bare.js"][1], 2)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
