"""`/ready` polled through a fault, as an orchestrator's readiness probe would: how long it takes to say
503 while the database is down, and how soon after the database's return it says 200 again.

One request at a time per instance, each on a fresh connection, every PERIOD_S; a sample records when the
request started and ended (wall-clock seconds) and its status (0: no answer within TIMEOUT_S).
"""

from __future__ import annotations

import contextlib
import http.client
import statistics
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

PERIOD_S = 0.05
TIMEOUT_S = 10.0
SETTLE_S = 1.0
"""The first /ready after the database went down may spend one pool attempt learning it (java: 500 ms);
the outage figures are taken from this long after the stop on."""


@dataclass(frozen=True)
class Sample:
    start: float
    end: float
    status: int

    @property
    def ms(self) -> float:
        return (self.end - self.start) * 1000.0


def probe_once(base_url: str, timeout_s: float = TIMEOUT_S) -> Sample:
    parts = urlsplit(base_url)
    started = time.time()
    status = 0
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout_s)
    with contextlib.closing(conn), contextlib.suppress(OSError, http.client.HTTPException):
        conn.request("GET", "/ready")
        response = conn.getresponse()
        response.read()
        status = response.status
    return Sample(started, time.time(), status)


class ReadyProbe:
    """Polls /ready of each base URL on its own thread until stop()."""

    def __init__(self, base_urls: Sequence[str]) -> None:
        self.samples: dict[str, list[Sample]] = {url: [] for url in base_urls}
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._poll, args=(url,), name="bidbench-ready-probe", daemon=True)
            for url in self.samples
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def _poll(self, url: str) -> None:
        while not self._stop.is_set():
            sample = probe_once(url)
            self.samples[url].append(sample)
            self._stop.wait(max(0.0, PERIOD_S - (sample.end - sample.start)))

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=TIMEOUT_S + 1)


def outage_figures(
    samples: Sequence[Sample], down_unix: float, up_unix: float, back_unix: float
) -> dict[str, Any]:
    """The /ready figures of one instance through an outage. down_unix: the database has stopped; up_unix:
    its start began; back_unix: it accepts connections again. `outage_*_ms`: the answer times of the probes
    that ran entirely inside [down + SETTLE_S, up], and whether they all said 503; `recovery_s`: from
    back_unix to the end of the first 200 that started after up_unix (None: never ready again)."""
    during = [s for s in samples if s.start >= down_unix + SETTLE_S and s.end <= up_unix]
    times = sorted(s.ms for s in during)
    first_ok = next((s for s in samples if s.start >= up_unix and s.status == 200), None)
    return {
        "outage_probes": len(during),
        "outage_statuses": sorted({s.status for s in during}),
        "outage_p50_ms": round(statistics.median(times), 2) if times else None,
        "outage_max_ms": round(times[-1], 2) if times else None,
        "recovery_s": round(max(0.0, first_ok.end - back_unix), 3) if first_ok else None,
    }
