"""Runs whose load bidbench did not send itself: the shards of a distributed load (infra/k8s, or any N
`bidbench-load run` processes with BB_SHARDS=N) each leave a summary, in a file or as the last JSON of a
pod log. `collect` merges them exactly with `bidbench-load merge` and stores ONE result folder (regime
`remote`), which says what it cannot know: the app's CPU and memory, and the shards' own CPU.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.console import UserError
from harness.engine.driver import LoadSettings
from harness.engine.remote import remote_sections
from harness.engine.sampler import Sampler
from harness.engine.session import RunOutcome, RunPlan, digest, plan_manifest
from harness.engine.validity import Check, Slo
from harness.record.folders import new_run_folder
from harness.record.index_line import IndexLine, append_line
from harness.record.manifest import write_manifest
from harness.record.metrics import Metrics, write_metrics
from harness.record.upgrade import SUMMARY as SUMMARY_FILE
from harness.record.verdict import write_verdict
from harness.tools import toolchain

DRIVER = "bidbench-load"
# Shards started by the start gate (infra/k8s/base/load-gate.sh) begin their windows within a few
# milliseconds of each other; more than this and the merged counts no longer describe one window.
MAX_START_SKEW_S = 1.0
MERGE_TIMEOUT_S = 120.0
INPUT_SUFFIXES = (".json", ".log", ".txt")


def driver_binary() -> Path:
    """The driver that `./bidbench setup` builds from loadgen/ into .bidbench/bin/ (rebuilt when its
    sources change)."""
    toolchain.ensure(["load"])
    return toolchain.driver_path()


def read_summary(path: Path) -> dict[str, Any]:
    """A bidbench-load summary from a summary file or from a pod log whose last JSON object it is (the
    driver prints it last, on lines of its own; `kubectl logs` puts diagnostics before it)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    stripped = text.lstrip()
    start = 0 if stripped.startswith("{") else text.rfind("\n{") + 1
    if start == 0 and not stripped.startswith("{"):
        raise UserError(f"{path}: no JSON summary in it (is it the log of a {DRIVER} shard?)")
    try:
        summary, _ = json.JSONDecoder().raw_decode(text[start:].lstrip())
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: the summary at its end is not complete JSON ({exc})") from exc
    if not isinstance(summary, dict) or summary.get("driver") != DRIVER:
        raise UserError(f"{path}: not a {DRIVER} summary")
    if "plan" in summary:
        raise UserError(f"{path}: a request plan (BB_PLAN), not a measurement")
    return summary


def find_inputs(sources: Sequence[Path]) -> list[Path]:
    """The summary files or pod logs named, a folder standing for its *.json, *.log and *.txt files."""
    found: list[Path] = []
    for source in sources:
        if source.is_dir():
            found += sorted(p for p in source.iterdir() if p.is_file() and p.suffix in INPUT_SUFFIXES)
        elif source.is_file():
            found.append(source)
        else:
            raise UserError(f"{source}: no such file or folder")
    if not found:
        raise UserError(f"no summary or log in {', '.join(map(str, sources))}")
    return found


@dataclass(frozen=True)
class Shard:
    path: Path
    index: int
    shards: int
    measure_start_unix: float
    requests: int
    partial: bool


def shard_of(path: Path, summary: dict[str, Any]) -> Shard:
    settings = summary.get("settings", {})
    return Shard(
        path=path,
        index=int(settings.get("shard_index", 0)),
        shards=int(settings.get("shards", 1)),
        measure_start_unix=float(summary["measure_start_unix"]),
        requests=int(summary["requests"]),
        partial=bool(summary.get("partial")),
    )


def check_shards(shards: Sequence[Shard]) -> None:
    """Exactly shards 0..N-1 of one N-shard run, once each: a missing or doubled shard would change the
    offered rate, and the merge cannot tell."""
    counts = {s.shards for s in shards}
    if len(counts) != 1:
        raise UserError(f"the inputs are shards of runs with different BB_SHARDS: {sorted(counts)}")
    (total,) = counts
    indexes = sorted(s.index for s in shards)
    if indexes != list(range(total)):
        named = ", ".join(f"{s.path.name}: shard {s.index}" for s in shards)
        raise UserError(f"expected shards 0..{total - 1} of {total}, once each; got {named}")


def merge(inputs: Sequence[Path], out: Path, binary: Path | None = None) -> dict[str, Any]:
    """`bidbench-load merge -o out inputs...`: one summary with exact pooled percentiles."""
    argv = [str(binary or driver_binary()), "merge", "-o", str(out), *map(str, inputs)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=MERGE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise UserError(f"{DRIVER} merge took more than {MERGE_TIMEOUT_S:g} s") from exc
    if done.returncode != 0:
        raise UserError(f"{DRIVER} merge failed (exit {done.returncode}):\n{done.stderr.strip()[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


def load_settings(summary: dict[str, Any]) -> LoadSettings:
    """The load as the driver understood it, in the local runner's terms (totals over all shards)."""
    s = summary["settings"]
    return LoadSettings(
        targets=list(s.get("targets") or []),
        mix=str(s.get("mix") or "browse"),
        model=str(s.get("model") or "open"),
        rate=float(s.get("rate") or 0.0),
        users=int(s.get("users") or 0),
        think_ms=float(s.get("think_ms") or 0.0),
        duration_s=float(summary.get("window_s") or s.get("duration_s") or 0.0),
        warmup_s=float(s.get("warmup_s") or 0.0),
        invalid_share=float(s.get("invalid_share") or 0.0),
        payload_bytes=int(s.get("payload_bytes") or 0),
        scale=int(s.get("scale") or 1),
        seed=int(s.get("seed") or 42),
        timeout_s=float(s.get("timeout_s") or 10.0),
        stages=str(s.get("stages") or ""),
        warmup_from_rate=float(s["warmup_from"]) if s.get("warmup_from") is not None else None,
    )


@dataclass
class Collected(RunOutcome):
    shards: list[Shard] = field(default_factory=list)


def collect(
    sources: Sequence[Path],
    impl: str,
    *,
    instances: int = 1,
    variant: str = "default",
    slo: Slo | None = None,
    results_dir: Path | None = None,
    binary: Path | None = None,
) -> Collected:
    """Merge the shards' summaries in `sources` and store one result folder (regime `remote`)."""
    inputs = find_inputs(sources)
    shards = [shard_of(path, read_summary(path)) for path in inputs]
    check_shards(shards)
    folder = new_run_folder(impl, "remote", results_dir)
    merged = merge(inputs, folder.path / SUMMARY_FILE, binary)
    load = load_settings(merged)
    plan = RunPlan(
        impl=impl,
        load=load,
        instances=instances,
        cpus=None,
        variant=variant,
        regime="remote",
        point={"rate": load.rate} if load.model == "open" else {"users": load.users},
        scale=load.scale,
        seed=load.seed,
        slo=slo or Slo(),
        results_dir=results_dir,
        target_urls=tuple(load.targets),
        prewarm=False,
    )
    starts = [s.measure_start_unix for s in shards]
    skew = max(starts) - min(starts)
    note = (
        f"a deployment bidbench did not start, loaded by {len(shards)} {DRIVER} shards it did not start: "
        "latency, throughput and errors are their merged summary; CPU and memory are UNKNOWN, so nothing "
        "is normalized per CPU"
    )
    manifest = plan_manifest(
        folder,
        plan,
        {
            **remote_sections(list(load.targets), "none", note),
            "runtimes": {DRIVER: str(merged.get("driver_version", "?"))},
            "distributed": {
                "shards": [
                    {**asdict(s), "path": str(s.path.resolve()), "log": f"logs/{s.path.name}"} for s in shards
                ],
                "start_skew_s": skew,
                "max_start_skew_s": MAX_START_SKEW_S,
            },
        },
        status="collecting",
    )
    write_manifest(folder, manifest)
    for shard in shards:
        shutil.copy2(shard.path, folder.logs / shard.path.name)

    # A window [0, duration] on an empty sampler: nothing of this run was sampled here.
    figures, run_verdict = digest(plan, folder, Sampler({}), [], 0.0, load.duration_s)
    metrics = Metrics.of(figures)
    if metrics.window is not None:
        metrics.window.loadgen_cpu_pct = None
    metrics.sections.update(shards=len(shards), start_skew_s=skew)
    checks = dict(run_verdict.checks)
    # Replaces the check of the load driver's CPU, under the name the analysis reads: the shards' CPU is
    # not measured here, and `late_sends`, the driver's own evidence that it kept up, stays.
    checks["loadgen_cpu"] = Check(
        True, None, None, "the load shards' CPU is not measured here: late_sends stands for it"
    )
    checks["shard_start_skew"] = Check(
        ok=skew <= MAX_START_SKEW_S,
        value=skew,
        threshold=MAX_START_SKEW_S,
        detail=f"the shards' measurement windows started {skew:.3f} s apart",
    )
    partial = [s.path.name for s in shards if s.partial]
    if partial:
        checks["complete"] = Check(
            False, len(partial), 0, f"interrupted shards (partial summaries): {partial}"
        )
    reasons = [c.detail for c in checks.values() if not c.ok]
    run_verdict = replace(run_verdict, checks=checks, reasons=reasons, valid=not reasons)
    run_verdict.slo["met"] = run_verdict.valid and all(run_verdict.slo.get("parts", {}).values())
    status = "failed" if partial else "completed"
    reason = f"interrupted shards: {', '.join(partial)}" if partial else ""
    write_metrics(folder, metrics)
    write_verdict(folder, run_verdict)
    manifest.finish(status, reason)
    write_manifest(folder, manifest)
    append_line(
        IndexLine.of(folder, manifest, run_verdict.valid, bool(run_verdict.slo.get("met"))), results_dir
    )
    return Collected(folder, status, metrics.to_json(), run_verdict, reason, shards)
