#!/usr/bin/env python3
"""Merge the per-runner JSON summaries of a distributed k6 run (k6-operator TestRun) into one.

The k6-operator runs `parallelism` k6 runners, each on one execution segment of the test, and does not
aggregate their end-of-test summaries. Each runner of a bidbench TestRun prints its summary (the format
of loadgen-k6/bidbench.js, `schema: 1`) to its log. Collect them and merge:

    kubectl -n bidbench get pods -l k6_cr=bidbench-java,runner=true -o name \\
      | while read -r pod; do kubectl -n bidbench logs "$pod" > "runner-${pod##*/}.log"; done
    python3 infra/k8s/merge_summaries.py runner-*.log -o k6-summary.json

Each input is a summary file or a runner log that contains one (the last JSON object with a `schema`
key is taken). Only the standard library is used, so this runs anywhere Python 3.10+ does.

How values merge:
- counts add up: requests, ok, app_errors, sys_errors, dropped iterations, Server-Timing samples, VUs;
  so do rates (ok_rps, all_rps), since every runner measures over the same window;
- `max` is the maximum and `mean` the count-weighted mean: both exact;
- percentiles (p50 ... p999) CANNOT be merged from summaries: averaging them is wrong. The true
  percentile of the pooled requests lies between the smallest and the largest runner's value (the
  q-quantile of a mixture lies within its components' q-quantiles). The merged summary reports the
  LARGEST runner value (an upper bound, the safe side for a latency SLO) and lists both bounds under
  `merge.percentile_bounds`. For exact pooled percentiles, export the raw samples instead (k6
  `--out csv=...` per runner, or Prometheus remote write with native histograms) and compute them over
  all samples;
- everything else (settings, window, offered rate, k6 version) must be equal in every runner; values
  that differ are kept from the first runner and listed under `merge.conflicts`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SUM_KEYS = frozenset(
    {
        "requests",
        "ok",
        "app_errors",
        "sys_errors",
        "dropped_iterations",
        "dropped_iterations_total",
        "samples",
        "vus_max",
        "vus_peak",
        "ok_rps",
        "all_rps",
    }
)
MAX_KEYS = frozenset({"max", "test_run_duration_s"})
MIN_KEYS = frozenset({"min"})
MEAN_KEYS = frozenset({"mean"})
PERCENTILE = re.compile(r"^p\d+$")
WEIGHT_KEYS = ("requests", "samples")


class SummaryError(Exception):
    pass


def extract_summary(text: str, source: str = "input") -> dict[str, Any]:
    """The summary in a file: the whole text as JSON, or the last JSON object with a `schema` key in a log."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "schema" in whole:
        return whole
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    for match in re.finditer(r"(?m)^\s*\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.end() - 1)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "schema" in value:
            found = value
    if found is None:
        raise SummaryError(f"{source}: no bidbench k6 summary (a JSON object with a 'schema' key) found")
    return found


def _round(value: float) -> float:
    return round(value, 3)


class _Merger:
    def __init__(self) -> None:
        self.percentile_bounds: dict[str, list[float]] = {}
        self.conflicts: dict[str, list[Any]] = {}

    def merge(self, values: list[Any], path: str, weights: list[float]) -> Any:
        present = [(v, w) for v, w in zip(values, weights, strict=True) if v is not None]
        if not present:
            return None
        if all(isinstance(v, dict) for v, _ in present):
            return self._merge_dicts([v for v, _ in present], path, [w for _, w in present])
        key = path.rsplit(".", 1)[-1]
        numbers = [v for v, _ in present if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(present):
            if key in SUM_KEYS:
                total = sum(numbers)
                return _round(total) if isinstance(total, float) else total
            if key in MAX_KEYS:
                return max(numbers)
            if key in MIN_KEYS:
                return min(numbers)
            if key in MEAN_KEYS:
                weight = sum(w for _, w in present)
                if weight > 0:
                    return _round(sum(float(v) * w for v, w in present) / weight)
                return _round(sum(numbers) / len(numbers))
            if PERCENTILE.match(key):
                self.percentile_bounds[path] = [min(numbers), max(numbers)]
                return max(numbers)
        first = present[0][0]
        if any(v != first for v, _ in present[1:]):
            self.conflicts[path] = [v for v, _ in present]
        return first

    def _merge_dicts(self, dicts: list[dict[str, Any]], path: str, weights: list[float]) -> dict[str, Any]:
        own = next((k for k in WEIGHT_KEYS if all(isinstance(d.get(k), (int, float)) for d in dicts)), None)
        if own is not None:
            weights = [float(d[own]) for d in dicts]
        keys: list[str] = []
        for d in dicts:
            keys.extend(k for k in d if k not in keys)
        merged: dict[str, Any] = {}
        for key in keys:
            child = f"{path}.{key}" if path else key
            merged[key] = self.merge([d.get(key) for d in dicts], child, weights)
        return merged


def merge_summaries(summaries: list[dict[str, Any]], sources: list[str] | None = None) -> dict[str, Any]:
    if not summaries:
        raise SummaryError("no summaries to merge")
    schemas = {s.get("schema") for s in summaries}
    if schemas != {1}:
        raise SummaryError(
            f"only schema 1 summaries (loadgen-k6/bidbench.js) are supported, got {sorted(map(str, schemas))}"
        )
    merger = _Merger()
    merged = merger._merge_dicts(summaries, "", [1.0] * len(summaries))
    invalid = merged.get("invalid")
    if isinstance(invalid, dict) and isinstance(merged.get("requests"), int):
        requests = merged["requests"]
        invalid["share"] = _round(invalid.get("requests", 0) / requests) if requests else None
    merged["merge"] = {
        "runners": len(summaries),
        "sources": sources or [],
        "rules": "counts and rates added; max = max; mean = count-weighted; percentiles = max over runners "
        "(an upper bound: the pooled value lies within percentile_bounds); other fields must agree",
        "percentile_bounds": merger.percentile_bounds,
        "conflicts": merger.conflicts,
    }
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", type=Path, help="runner summaries or runner logs")
    parser.add_argument("-o", "--output", type=Path, help="write the merged summary here (default: stdout)")
    args = parser.parse_args(argv)
    try:
        summaries = [extract_summary(p.read_text(encoding="utf-8"), str(p)) for p in args.inputs]
        merged = merge_summaries(summaries, [str(p) for p in args.inputs])
    except (OSError, SummaryError) as exc:
        print(f"merge_summaries: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(merged, indent=1) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        conflicts = merged["merge"]["conflicts"]
        print(
            f"merged {len(summaries)} runners: {merged.get('requests')} requests, "
            f"{(merged.get('throughput') or {}).get('ok_rps')} ok/s -> {args.output}"
            + (f"; fields that differ between runners: {', '.join(conflicts)}" if conflicts else ""),
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
