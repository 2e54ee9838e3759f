"""compare.py end to end: --help teaches, outputs are written, numbers are reproducible, bad input exits 2."""

from __future__ import annotations

import io
import subprocess
import sys

from rich.console import Console
from synthetic import fixed_rate_groups

from harness import paths
from harness.cli.compare import main

COMPARE = paths.ROOT / "compare.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(COMPARE), *args], capture_output=True, text=True, timeout=300, cwd=paths.ROOT
    )


def test_help_teaches():
    done = _run("--help")
    assert done.returncode == 0
    for words in (
        "Welch",
        "Tukey HSD",
        "Games-Howell",
        "benchstat",
        "--include-invalid",
        "--html",
        "bootstrap",
    ):
        assert words in done.stdout


def test_compare_py_writes_every_output(tmp_path):
    fixed_rate_groups(tmp_path / "r", {"java": 1000.0, "node": 1200.0, "php": 800.0}, n=5, seed=4)
    html, md, csv = tmp_path / "out.html", tmp_path / "out.md", tmp_path / "out.csv"
    done = _run(
        str(tmp_path / "r"),
        "--html",
        str(html),
        "--markdown",
        str(md),
        "--csv",
        str(csv),
        "--resamples",
        "999",
    )
    assert done.returncode == 0, done.stderr
    assert "node vs java" in done.stdout and "php vs java" in done.stdout
    assert "Tukey HSD" in done.stdout
    for path in (html, md, csv, tmp_path / "out.pairs.csv"):
        assert path.exists() and path.stat().st_size > 0
    assert "| metric |" in md.read_text()


def test_same_folders_same_numbers(tmp_path):
    fixed_rate_groups(tmp_path / "r", {"java": 1000.0, "node": 1050.0}, n=4, seed=5)
    outputs = []
    for name in ("a.csv", "b.csv"):
        assert (
            main(
                [str(tmp_path / "r"), "--quiet", "--csv", str(tmp_path / name), "--resamples", "999"],
                Console(file=io.StringIO()),
            )
            == 0
        )
        outputs.append(
            (tmp_path / name).read_text() + (tmp_path / name.replace(".csv", ".pairs.csv")).read_text()
        )
    assert outputs[0] == outputs[1]


def test_bad_input_exits_2(tmp_path):
    done = _run(str(tmp_path / "nothing-here"))
    assert done.returncode == 2 and "does not exist" in done.stderr
    (tmp_path / "empty").mkdir()
    assert _run(str(tmp_path / "empty")).returncode == 2
    fixed_rate_groups(tmp_path / "r", {"java": 1.0}, n=3, seed=1)
    done = _run(str(tmp_path / "r"), "--metric", "speed")
    assert done.returncode == 2 and "unknown metric" in done.stderr


def test_baseline_choice(tmp_path):
    fixed_rate_groups(tmp_path / "r", {"java": 1000.0, "node": 1200.0}, n=5, seed=4)
    out = io.StringIO()
    assert (
        main(
            [str(tmp_path / "r"), "--baseline", "node", "--metric", "throughput", "--resamples", "999"],
            Console(file=out, width=200),
        )
        == 0
    )
    assert "java vs node" in out.getvalue()
