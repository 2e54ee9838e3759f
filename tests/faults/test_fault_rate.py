"""The fault scenarios' rate: a share of the newest stored capacity at one instance and the same CPU
limit, read from a CRUD ladder (or a capacity search an older bidbench stored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.faults.runner import fault_rate, measured_capacity
from harness.record.folders import append_index, new_run_folder


def stored(
    results: Path, regime: str, metrics: dict[str, Any], variant: str = "default", **manifest: Any
) -> str:
    folder = new_run_folder("node", regime, results)
    folder.write_json(
        "manifest.json",
        {
            "run_id": folder.run_id,
            "created_utc": "2026-11-28T10:00:00Z",
            "impl": "node",
            "variant": variant,
            "instances": 1,
            "cpu_limit_cores": 0.5,
            **manifest,
        },
    )
    folder.write_json("metrics.json", metrics)
    folder.write_json("verdict.json", {"valid": True, "reasons": []})
    append_index(
        {
            "run_id": folder.run_id,
            "path": str(folder.path),
            "regime": regime,
            "impl": "node",
            "variant": variant,
            "valid": True,
        },
        results,
    )
    return folder.run_id


def ladder(rps: float, bracketed: bool = True) -> dict[str, Any]:
    return {
        "ladder": {"rates": [], "step_s": 2.0, "steps": [], "capacity": {"rps": rps, "bracketed": bracketed}}
    }


def test_the_newest_ladder_at_the_same_limit_gives_the_capacity(tmp_path: Path) -> None:
    stored(tmp_path, "capacity", {"capacity_rps": 500.0})
    newest = stored(tmp_path, "ladder", ladder(800.0))
    stored(tmp_path, "ladder", ladder(2000.0), cpu_limit_cores=1.0)  # another CPU limit
    stored(tmp_path, "ladder", ladder(3000.0), variant="health")  # the runtime floor, no database work
    stored(tmp_path, "ladder", ladder(1600.0), instances=2)
    assert measured_capacity("node", 0.5, tmp_path) == (800.0, newest)
    choice = fault_rate("node", 0.5, 0.5, None, tmp_path)
    assert (choice.rate, choice.capacity) == (400.0, 800.0) and newest in choice.source


def test_a_capacity_search_stored_earlier_still_counts(tmp_path: Path) -> None:
    older = stored(tmp_path, "capacity", {"capacity_rps": 500.0})
    assert measured_capacity("node", 0.5, tmp_path) == (500.0, older)


def test_without_a_stored_capacity_the_default_rate_says_how_to_measure_one(tmp_path: Path) -> None:
    stored(tmp_path, "ladder", ladder(0.0, bracketed=False))
    assert measured_capacity("node", 0.5, tmp_path) is None
    assert "./bidbench ladder --impl node --cpus 0.5" in fault_rate("node", 0.5, 0.5, None, tmp_path).source
