"""Filing a stored capacity search under another regime point (the demo's 1-instance scaling point)."""

from __future__ import annotations

from pathlib import Path

from harness.engine.session import RunPlan
from harness.record.folders import RunFolder, append_index, new_run_folder, read_index
from harness.regimes.campaign import Campaign
from harness.regimes.capacity import CapacityPlan, SearchSettings, refile_capacity


def stored_search(results: Path) -> dict[str, object]:
    folder = new_run_folder("java", "capacity", results)
    folder.write_json(
        "manifest.json", {"run_id": folder.run_id, "created_utc": "2026-11-21T20:00:00Z", "instances": 1}
    )
    folder.write_json("metrics.json", {"capacity_rps": 360.0, "cpu_percent": 31.0})
    folder.write_json("verdict.json", {"valid": True, "reasons": []})
    append_index(
        {"run_id": folder.run_id, "path": str(folder.path), "regime": "capacity", "valid": True}, results
    )
    return {"impl": "java", "repetition": 0, "capacity_rps": 360.0, "run_id": folder.run_id}


def test_refiled_search_is_a_new_folder_that_names_its_source(tmp_path: Path) -> None:
    record = stored_search(tmp_path)
    campaign = Campaign("demo-test", tmp_path)
    plan = CapacityPlan(
        ["java"], RunPlan(impl="java"), 1, SearchSettings(), regime="scaling", point={"instances": 1}
    )

    refiled = refile_capacity(campaign, plan, "java", 0, record)

    assert refiled["run_id"] != record["run_id"] and refiled["capacity_rps"] == 360.0
    entry = read_index(tmp_path)[-1]
    assert entry["regime"] == "scaling" and entry["point"] == {"instances": 1} and entry["valid"]
    folder = RunFolder(Path(entry["path"]))
    assert folder.read_json("manifest.json")["refiled_from"] == record["run_id"]
    assert folder.read_json("metrics.json") == {"capacity_rps": 360.0, "cpu_percent": 31.0}
    # A resumed campaign finds the refiled folder instead of filing it twice.
    again = refile_capacity(campaign, plan, "java", 0, record)
    assert again["run_id"] == refiled["run_id"] and len(read_index(tmp_path)) == 2


def test_a_search_that_found_nothing_is_stored_and_indexed_as_invalid(tmp_path: Path) -> None:
    from harness.regimes.capacity import SearchState, _store_capacity

    campaign = Campaign("capacity-test", tmp_path)
    plan = CapacityPlan(["php"], RunPlan(impl="php"), 1, SearchSettings())
    record = _store_capacity(campaign, plan, "php", 0, SearchState(capacity=0.0))
    entry = read_index(tmp_path)[-1]
    assert entry["run_id"] == record["run_id"] and entry["regime"] == "capacity"
    assert (
        entry["group"] == "capacity-test/capacity/php/default" and not entry["valid"] and not entry["slo_met"]
    )
    assert RunFolder(Path(entry["path"])).read_json("verdict.json")["reasons"] == ["no rate met the SLO"]
