"""Every figure a side-by-side comparison prints is possible, and every source is named in full (#46).

The input is a committed fixture: four stored fresh starts of java, node and php shaped like a real demo's
(fixtures/side-by-side-spread: the records the readers use, no logs), one of them invalid, the other three
spread so far apart that a symmetric t-interval on n = 3 would run below zero for every cost, capacity,
memory and ratio. Each output format is produced the way a user gets it, through `./bidbench`: the
terminal and the --json and --html files of `side-by-side --from` (the demo's closing summary is the same
print_summary, with phase times after it), and the terminal, Markdown, CSV, JSON and HTML of `compare`.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import paths

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "side-by-side-spread"

# A minus sign right before a digit, not inside a word, a number or a date ("side-by-side-3c91d2",
# "2026-11-27"): a negative figure, which nothing a comparison prints can be.
NEGATIVE = re.compile(r"(?<![\w.\-/])[-−]\s?\d")
# A positive quantity's interval that starts at zero: on the log scale it cannot.
ZERO_LOW = re.compile(r"\[\s*0(?:\.0*)?\s*,")
PERCENT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s?%")
# "76.69 [51.45, 101.9] %": an interval of a share, its unit after the bracket.
SHARE_INTERVAL = re.compile(r"\[([^\[\]]*)\]\s?%")
# The claims' internal source files ("seed 003", "000_26b71ff629cc30fc.txt"): a reader has neither.
SEED_ID = re.compile(r"\bseeds?[\s_-]*0\d\d\b|\b0\d\d_[0-9a-f]{16}\b", re.IGNORECASE)


def _bidbench(tmp: Path, *args: str) -> str:
    env = dict(os.environ, BIDBENCH_RESULTS=str(tmp / "results"), COLUMNS="250")
    done = subprocess.run(
        [str(paths.ROOT / "bidbench"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=paths.ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every output format of the fixture's comparison, by name, as text."""
    tmp = tmp_path_factory.mktemp("outputs")
    folders = sorted(str(p) for p in FIXTURE.iterdir() if p.is_dir())
    assert len(folders) == 4
    found: dict[str, str] = {}
    found["side-by-side terminal"] = _bidbench(
        tmp,
        "side-by-side",
        *[arg for folder in folders for arg in ("--from", folder)],
        "--json",
        str(tmp / "sbs.json"),
        "--html",
        str(tmp / "sbs.html"),
    )
    found["compare terminal"] = _bidbench(
        tmp,
        "compare",
        *folders,
        "--markdown",
        str(tmp / "cmp.md"),
        "--csv",
        str(tmp / "cmp.csv"),
        "--json",
        str(tmp / "cmp.json"),
        "--html",
        str(tmp / "cmp.html"),
    )
    for name in ("sbs.json", "sbs.html", "cmp.md", "cmp.csv", "cmp.json", "cmp.html"):
        path = tmp / name
        assert path.exists(), f"{name} was asked for and not written"
        found[name] = path.read_text(encoding="utf-8")
    return found


def _readable(text: str) -> str:
    """What a reader sees: an HTML page without its markup, style and embedded images."""
    text = re.sub(r"<style.*?</style>", " ", text, flags=re.DOTALL)
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", " ", text)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def impossible_in_text(text: str) -> list[str]:
    problems = []
    for pattern, what in (
        (NEGATIVE, "negative figure"),
        (ZERO_LOW, "interval from zero"),
        (SEED_ID, "seed id"),
    ):
        problems += [
            f"{what}: …{text[max(0, m.start() - 60) : m.end() + 20]}…" for m in pattern.finditer(text)
        ]
    for match in PERCENT.finditer(text):
        before = text[max(0, match.start() - 4) : match.start()]
        after = text[match.end() : match.end() + 5]
        # A CV, or how much more one group needs, may pass 100 %; a share of anything may not.
        if before.endswith("CV ") or after.startswith(" more"):
            continue
        if float(match.group(1).replace(",", "")) > 100:
            problems.append(f"share above 100 %: …{text[max(0, match.start() - 60) : match.end()]}…")
    for match in SHARE_INTERVAL.finditer(text):
        bounds = [float(b.replace(",", "")) for b in re.findall(r"\d[\d,]*(?:\.\d+)?", match.group(1))]
        if any(b > 100 for b in bounds):
            problems.append(f"share above 100 %: …{text[max(0, match.start() - 60) : match.end()]}…")
    return problems


def _numbers(node: Any, key: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _numbers(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _numbers(v, key)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield key, float(node)


def impossible_in_json(data: Any) -> list[str]:
    problems = []
    for key, value in _numbers(data):
        if value < 0 or (key == "low" and value <= 0):
            problems.append(f"{key} = {value}")
        if key.endswith("_pct") and key != "cv_pct" and value > 100:
            problems.append(f"{key} = {value} %")
    return problems


@pytest.mark.parametrize(
    "name",
    [
        "side-by-side terminal",
        "compare terminal",
        "sbs.html",
        "cmp.html",
        "cmp.md",
        "cmp.csv",
        "sbs.json",
        "cmp.json",
    ],
)
def test_no_impossible_figure_or_seed_id(outputs: dict[str, str], name: str) -> None:
    text = outputs[name]
    problems = impossible_in_text(_readable(text) if name.endswith(".html") else text)
    if name.endswith(".json"):
        problems += impossible_in_json(json.loads(text))
    if name.endswith(".csv"):
        for row in csv.DictReader(text.splitlines()):
            low = row["ci_low"]
            if low and float(low) <= 0:
                problems.append(f"{row['group_or_ratio']} {row['metric']}: interval from {low}")
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_the_fixture_is_spread_past_a_symmetric_interval() -> None:
    """The fixture earns its place only if a naive interval would have printed a negative bound."""
    from statistics import mean, stdev

    from scipy import stats

    from harness.analysis.side_by_side import load_records
    from harness.model.side_by_side_math import summarize

    summary = summarize(load_records([FIXTURE]))
    values = summary["groups"]["java"]["app_us"]["values"]
    half = float(stats.t.ppf(0.975, len(values) - 1)) * stdev(values) / len(values) ** 0.5
    assert mean(values) - half < 0
    assert summary["valid"] == 3 and summary["fresh_starts"] == 4


def test_the_scan_sees_what_it_looks_for() -> None:
    assert impossible_in_text("capacity 1,074 [-346, 2,493]")
    assert impossible_in_text("ratio 1.531 [0.000, 9.1]")
    assert impossible_in_text("utilized CPU 76.69 [51.45, 101.9] %")
    assert impossible_in_text("the notation of seed 004") and impossible_in_text("(seed 003 Table 7.2)")
    assert not impossible_in_text("java 504 [19, 13,481], CV 106.9 %; side-by-side-3c91d2 on 2026-11-27")
    assert impossible_in_json({"interval": {"low": -3.8, "high": 27.0, "cv_pct": 150.0}})
    assert not impossible_in_json({"interval": {"low": 3.8, "high": 27.0, "cv_pct": 150.0}})


def test_no_source_is_cited_by_its_seed_id() -> None:
    """What the harness prints and the documentation says names every source in full (author, title,
    table); the claims keep their source files' ids in a field of their own, which stays theirs."""
    roots = [paths.ROOT / "harness", paths.ROOT / "docs", paths.ROOT / "infra"]
    files = [paths.ROOT / "README.md", paths.ROOT / "compare.py"]
    for root in roots:
        files += [
            p
            for p in root.rglob("*")
            if p.suffix in {".py", ".md", ".yaml", ".yml", ".html", ".j2"}
            and "claims" not in p.relative_to(root).parts
        ]
    found = [
        f"{path.relative_to(paths.ROOT)}: {match.group(0)}"
        for path in files
        for match in SEED_ID.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, "\n".join(found)
