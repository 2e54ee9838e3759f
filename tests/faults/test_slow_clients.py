"""The slow-clients scenario, quick version, against the real apps (issue #31, item 1): with 200
connections holding half-sent uploads, every ordinary request is still answered with a 2xx, no held
upload ever gets a 5xx, and each app is alive afterwards. Timings are recorded, not asserted (the
machine is shared): the p99 ratio goes to the scenario's report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from faults_helpers import instance_processes

from harness.apps import IMPLS
from harness.faults import slowclients

# Fewer ordinary requests than the CLI's quick version: a few seconds per app.
TEST_PLAN = dataclasses.replace(slowclients.QUICK, warmup_requests=60, requests=150, phase_limit_s=15.0)


@pytest.mark.parametrize("impl", IMPLS)
def test_held_slow_uploads_do_not_starve_other_clients(impl: str, database_url: str, tmp_path: Path) -> None:
    before = instance_processes()
    result = slowclients.run_app(impl, database_url, TEST_PLAN, cpus=None)

    # Other clients were served: every ordinary request of both phases, a 2xx.
    assert result.baseline["failures"] == {}, result.baseline
    assert result.under_attack["failures"] == {}, result.under_attack
    assert result.under_attack["ok_2xx"] == TEST_PLAN.requests
    assert result.under_attack["p99_ms"] is not None
    # Every held connection was opened and got an answer; never a 5xx. Released with a body the
    # contract refuses at step 7, each gets the 400 (the quick version ends before the 30 s stall).
    assert sum(result.slow_answers.values()) == TEST_PLAN.connections
    assert slowclients.server_errors(result.slow_answers) == 0, result.slow_answers
    assert result.slow_answers == {"status 400": TEST_PLAN.connections}, result.slow_answers
    assert result.alive_after
    assert result.passed
    assert instance_processes() <= before, "the app's processes outlived the scenario"

    written = slowclients.write_results([result], TEST_PLAN, tmp_path)
    doc = json.loads(written.read_text())
    assert doc["apps"][0]["impl"] == impl and doc["apps"][0]["passed"] is True
    assert doc["apps"][0]["ratio"] == result.ratio


def test_percentile_is_nearest_rank() -> None:
    assert slowclients.percentile([], 99) is None
    assert slowclients.percentile([float(i) for i in range(1, 101)], 99) == 99.0
    assert slowclients.percentile([5.0, 1.0, 3.0], 50) == 3.0


def test_slow_answers_are_classified() -> None:
    ok = slowclients.SlowConnection(None, True, received=b"HTTP/1.1 400 Bad Request\r\n\r\n")
    boom = slowclients.SlowConnection(None, True, received=b"HTTP/1.1 500 Server Error\r\n\r\n")
    closed = slowclients.SlowConnection(None, False, closed_by_server=True)
    refused = slowclients.SlowConnection(None, False, error="connect: ConnectionRefusedError")
    answers = slowclients.slow_answers([ok, boom, closed, refused])
    assert answers == {
        "status 400": 1,
        "status 500": 1,
        "closed, no answer": 1,
        "connect: ConnectionRefusedError": 1,
    }
    assert slowclients.server_errors(answers) == 1
