"""Fixtures for the analysis tests: synthetic result folders with known truth (synthetic.py).

These tests need no database, no apps and no network; they run in a few seconds each."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Study, full_study  # noqa: E402

from harness.analysis.comparison import Comparison, compare  # noqa: E402

# A smaller study than the default (fewer points per regime) keeps the suite quick on a 2-core machine.
STUDY_SHAPE = {"rates": (100, 500, 900, 1050), "user_counts": (1, 4, 16), "sizes": (1024, 65536)}


@pytest.fixture(scope="session")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    """Every regime for java, node and php, 5 repetitions, plus 2 invalid runs and 1 failed run."""
    return full_study(tmp_path_factory.mktemp("study") / "results", **STUDY_SHAPE)


@pytest.fixture(scope="session")
def study_comparison(study: Study) -> Iterator[Comparison]:
    yield compare([study.root], n_resamples=1999)
