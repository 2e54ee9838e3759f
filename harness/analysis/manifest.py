"""What the runs were run on and with: versions, knobs, host, from every manifest.json (docs/design.md §9).

Every field counts, whatever the regime added (harness/record/manifest.py), so each manifest is
flattened to dotted keys, and each key lands in one of three tables: the same for every run (host,
versions, data scale), the same within each implementation but different between them (knobs, runtimes),
or different from run to run (ids, times). Secrets never reach the report.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from harness.analysis.load import Run
from harness.analysis.tables import Table

MAX_VALUE = 160
SECRET_KEY = re.compile(r"pass(word)?|secret|token|credential|api[_-]?key", re.IGNORECASE)
URL_PASSWORD = re.compile(r"(\w+://[^:/@\s]+:)[^@\s]+@")
ORDER = (
    "bidbench",
    "version",
    "git",
    "commit",
    "host",
    "cpu",
    "kernel",
    "memory",
    "runtime",
    "jdk",
    "java",
    "node",
    "php",
    "nginx",
    "postgres",
    "load_driver",
    "backend",
    "knob",
    "impl",
    "variant",
    "instances",
    "limit",
    "load",
    "scale",
    "seed",
    "checksum",
)


def _mask(key: str, value: str) -> str:
    if SECRET_KEY.search(key.split(".")[-1]):
        return "***"
    return URL_PASSWORD.sub(r"\1***@", value)


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(data, Mapping):
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(data, list):
        if all(not isinstance(v, Mapping | list) for v in data):
            out[prefix] = ", ".join(str(v) for v in data)
        elif len(data) <= 8:
            for i, value in enumerate(data):
                out.update(flatten(value, f"{prefix}[{i}]"))
        else:
            out[prefix] = f"{len(data)} entries"
    else:
        text = "null" if data is None else str(data)
        out[prefix] = text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"
    return {k: _mask(k, v) for k, v in out.items()}


def _rank(key: str) -> tuple[int, str]:
    lowered = key.lower()
    return next((i for i, word in enumerate(ORDER) if word in lowered), len(ORDER)), key


def manifest_tables(runs: Sequence[Run]) -> list[Table]:
    flat = [(run.label, flatten(run.manifest)) for run in runs if run.manifest]
    labels = sorted({label for label, _ in flat})
    keys = sorted({k for _, f in flat for k in f}, key=_rank)
    common_rows: list[list[str]] = []
    per_label_rows: list[list[str]] = []
    varying: list[str] = []
    for key in keys:
        values = [f.get(key) for _, f in flat]
        present = {v for v in values if v is not None}
        if len(present) == 1 and len(values) == len(flat) and None not in values:
            common_rows.append([key, next(iter(present))])
            continue
        by_label: dict[str, set[str]] = defaultdict(set)
        for label, f in flat:
            by_label[label].add(f.get(key, "-"))
        if all(len(v) == 1 for v in by_label.values()):
            per_label_rows.append(
                [key, *[next(iter(by_label[lb])) if lb in by_label else "-" for lb in labels]]
            )
        else:
            varying.append(key)
    common = Table(
        "manifest-common",
        "The same for every run",
        ["field", "value"],
        common_rows,
        "Host, versions, data and load settings shared by all runs used here.",
        "manifest.json",
        empty="no manifests",
    )
    per_label = Table(
        "manifest-per-implementation",
        "Per implementation (knobs and runtimes)",
        ["field", *labels],
        per_label_rows,
        "Fields that differ between implementations but are constant within each: the stated knobs (docs/design.md §3.3).",
        "manifest.json",
        empty="no field differs between implementations",
    )
    if varying:
        per_label.notes.append(
            "Different from run to run (ids, times, points): "
            + ", ".join(varying[:40])
            + (" …" if len(varying) > 40 else "")
        )
    return [common, per_label]
