"""The per-request trace of a fault run as per-second series, error classes and recovery times.

Each traced request is one line in logs/trace.log (loadgen/, `BB_TRACE`):
`bbt <w|m> <end ms since epoch> <duration ms> <status> <error class or -> <type> <target index> <bid id or ->`.
The duration runs from the intended send time, so a backlog shows; the error class (timeout, refused, reset,
other) is for no response. Times are seconds from the measurement window's start, by request start.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.record.upgrade import trace_error_class

# The order of the error classes in tables and CSV columns.
CLASSES = ("ok", "client_4xx", "unavailable_503", "server_5xx", "connection", "timeout")

# Recovery: p99 of successes back within this factor of the pre-fault baseline (plus a small absolute slack,
# so a 3 ms baseline on a shared 2-core machine does not demand 4.5 ms), over a rolling window, error-free.
P99_FACTOR = 1.5
P99_SLACK_MS = 5.0
ROLLING_S = 3
MIN_WINDOW_REQUESTS = 5


@dataclass(frozen=True)
class Request:
    phase: str
    end_ms: float
    duration_ms: float
    status: int
    error: str
    kind: str
    target: int
    bid_id: int | None

    @property
    def start_ms(self) -> float:
        return self.end_ms - self.duration_ms

    @property
    def klass(self) -> str:
        return classify(self.status, self.error)


def classify(status: int, error: str = "-") -> str:
    """ok (2xx), client_4xx (the contract's 4xx, e.g. 409 on an overtaken bid), unavailable_503 (the
    contract's database-unavailable), server_5xx (any other 5xx: a bug), connection (no response: refused,
    reset) and timeout (no response within the driver's request timeout)."""
    if 200 <= status < 300:
        return "ok"
    if 400 <= status < 500:
        return "client_4xx"
    if status == 503:
        return "unavailable_503"
    if status >= 500 or 100 <= status < 200 or 300 <= status < 400:
        return "server_5xx"
    return "timeout" if error == "timeout" else "connection"


def parse_line(line: str) -> Request | None:
    parts = line.strip().split()
    if len(parts) != 9 or parts[0] != "bbt":
        return None
    try:
        return Request(
            phase=parts[1],
            end_ms=float(parts[2]),
            duration_ms=float(parts[3]),
            status=int(parts[4]),
            error=trace_error_class(parts[5]),
            kind=parts[6],
            target=int(parts[7]),
            bid_id=int(parts[8]) if parts[8] != "-" else None,
        )
    except ValueError:
        return None


def parse_trace(lines: Iterable[str]) -> list[Request]:
    return [r for r in (parse_line(line) for line in lines) if r is not None]


def read_trace(path: Path) -> list[Request]:
    with path.open(errors="replace") as handle:
        return parse_trace(line for line in handle if line.startswith("bbt "))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None without values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True)
class Second:
    t: int
    counts: dict[str, int]
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None

    @property
    def requests(self) -> int:
        return sum(self.counts.values())


def relative_s(request: Request, t0_unix: float) -> float:
    return request.start_ms / 1000 - t0_unix


def per_second(requests: Sequence[Request], t0_unix: float) -> list[Second]:
    """One row per second (by request start) from the first to the last; p50/p99 over its successes."""
    if not requests:
        return []
    buckets: dict[int, list[Request]] = {}
    for request in requests:
        buckets.setdefault(math.floor(relative_s(request, t0_unix)), []).append(request)
    rows = []
    for t in range(min(buckets), max(buckets) + 1):
        group = buckets.get(t, [])
        ok = [r.duration_ms for r in group if r.klass == "ok"]
        rows.append(
            Second(t, class_counts(group), percentile(ok, 50), percentile(ok, 99), max(ok) if ok else None)
        )
    return rows


def write_csv(rows: Sequence[Second], path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["t_s", "requests", *CLASSES, "p50_ms", "p99_ms", "max_ms"])
        for row in rows:
            writer.writerow(
                [
                    row.t,
                    row.requests,
                    *(row.counts[name] for name in CLASSES),
                    *("" if v is None else f"{v:.3f}" for v in (row.p50_ms, row.p99_ms, row.max_ms)),
                ]
            )


def read_csv(path: Path) -> list[dict[str, float | None]]:
    """The stored timeline.csv, numbers as floats (empty cells as None), for the analysis."""
    with path.open(newline="") as handle:
        return [
            {k: (float(v) if v not in ("", None) else None) for k, v in row.items()}
            for row in csv.DictReader(handle)
        ]


def between(requests: Sequence[Request], t0_unix: float, start_s: float, end_s: float) -> list[Request]:
    return [r for r in requests if start_s <= relative_s(r, t0_unix) < end_s]


def class_counts(requests: Iterable[Request]) -> dict[str, int]:
    counts = {name: 0 for name in CLASSES}
    for request in requests:
        counts[request.klass] += 1
    return counts


def baseline_p99(requests: Sequence[Request], t0_unix: float, until_s: float) -> float | None:
    """p99 of the successes of the measurement window before the first fault."""
    return percentile(
        [r.duration_ms for r in between(requests, t0_unix, 0.0, until_s) if r.klass == "ok"], 99
    )


def first_success_after(requests: Sequence[Request], t0_unix: float, at_s: float) -> float | None:
    """Seconds from at_s to the first success completing at or after it (None: no success after it)."""
    ends = [
        r.end_ms / 1000 - t0_unix for r in requests if r.klass == "ok" and r.end_ms / 1000 - t0_unix >= at_s
    ]
    return min(ends) - at_s if ends else None


def p99_bound(baseline_ms: float) -> float:
    return max(P99_FACTOR * baseline_ms, baseline_ms + P99_SLACK_MS)


def time_to_baseline(
    requests: Sequence[Request], t0_unix: float, from_s: float, baseline_ms: float | None
) -> float | None:
    """Seconds from from_s to the start of the first rolling window (ROLLING_S long, stepped by 1 s) whose
    requests are error-free (4xx allowed) and whose success p99 is within p99_bound(baseline); None if no
    window before the end of the trace qualifies."""
    if baseline_ms is None or not requests:
        return None
    end = max(relative_s(r, t0_unix) for r in requests)
    start = from_s
    bound = p99_bound(baseline_ms)
    while start + ROLLING_S <= end + 1e-9:
        window = between(requests, t0_unix, start, start + ROLLING_S)
        ok = [r.duration_ms for r in window if r.klass == "ok"]
        errors = sum(1 for r in window if r.klass not in ("ok", "client_4xx"))
        p99 = percentile(ok, 99)
        if len(ok) >= MIN_WINDOW_REQUESTS and errors == 0 and p99 is not None and p99 <= bound:
            return start - from_s
        start += 1.0
    return None
