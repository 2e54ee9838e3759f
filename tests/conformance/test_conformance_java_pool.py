"""The Java pool-library variants (JAVA_POOL, thesis §6.2) do the contract's work: the golden cases and the
database-work parity, against the real java app on the suite's private database, with `driver` (pgjdbc's
PGSimpleDataSource, a new connection per request) and `dbcp2` (commons-dbcp2). The default, `hikari`, is
what every other conformance run checks. Also: `./bidbench conformance --knob` reaches the targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.conformance.cases import Session
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.results import failed
from harness.conformance.runner import run_targets, target_label
from harness.conformance.targets import AppTarget


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["driver", "dbcp2"])
def test_java_pool_variant_passes_golden_and_dbwork(
    db: ConformanceDb, sessions: list[Session], pool: str
) -> None:
    knobs = {"JAVA_POOL": pool}
    target = AppTarget("java", target_label("java", knobs), knobs)
    code, results = run_targets([target], ["golden", "dbwork"], db=db, sessions=sessions, quiet=True)
    problems = [f"{r.part} {r.check}: {'; '.join(r.problems)}" for r in failed(results)]
    assert code == 0 and not problems, "\n".join(problems)
    assert {r.part for r in results} == {"golden", "dbwork"}
    assert all(r.target == f"java+JAVA_POOL={pool}" for r in results if r.part == "golden")
    # The knob reached the app: its start-up line records the library it runs with.
    tail = target.log_tail()
    assert f'"java_pool":"{pool}"' in tail, tail


def test_target_label_names_the_variant() -> None:
    assert target_label("java", None) == "java"
    assert target_label("java", {}) == "java"
    assert target_label("java", {"JAVA_POOL": "driver"}) == "java+JAVA_POOL=driver"
    assert target_label("node", {"PG_NATIVE": "1", "DB_POOL_SIZE": "4"}) == "node+DB_POOL_SIZE=4+PG_NATIVE=1"


def test_cli_knob_option_reaches_run_conformance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the plumbing: the database and the toolchain are stubbed, the real suite runs above."""
    import harness.cli.main as cli
    import harness.conformance.runner as runner
    import harness.db.ready as ready

    seen: dict[str, Any] = {}

    def fake_run(
        impls: list[str], parts: list[str] | None, json_path: Path | None, knobs: dict[str, str] | None = None
    ) -> int:
        seen.update(impls=impls, parts=parts, knobs=knobs)
        return 0

    monkeypatch.setattr(ready, "ensure_up", lambda: None)
    monkeypatch.setattr(cli.toolchain, "ensure", lambda impls: None)
    monkeypatch.setattr(runner, "run_conformance", fake_run)
    result = CliRunner().invoke(
        cli.app,
        [
            "conformance",
            "--impl",
            "java",
            "--part",
            "golden",
            "--knob",
            "JAVA_POOL=dbcp2",
            "--knob",
            "LOG_LEVEL=error",
        ],
    )
    assert result.exit_code == 0, result.output
    assert seen == {
        "impls": ["java"],
        "parts": ["golden"],
        "knobs": {"JAVA_POOL": "dbcp2", "LOG_LEVEL": "error"},
    }

    bad = CliRunner().invoke(cli.app, ["conformance", "--impl", "java", "--knob", "JAVA_POOL"])
    assert bad.exit_code != 0
