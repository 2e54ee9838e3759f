"""The Universal Scalability Law fit recovers planted parameters and fails gracefully."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.analysis.usl import fit_usl, peak_n, usl


def test_usl_recovers_planted_sigma_and_kappa():
    """sigma=0.05, kappa=0.01 (peak at N=9.7), 1..10 instances, 5 runs each with 1 % noise."""
    rng = np.random.default_rng(3)
    ns = np.repeat(np.arange(1, 11), 5)
    caps = usl(ns, 1000.0, 0.05, 0.01) * (1 + rng.normal(0, 0.01, ns.size))
    fit = fit_usl("planted", ns, caps, seed=1)
    assert fit.ok
    assert fit.sigma == pytest.approx(0.05, abs=0.015)
    assert fit.kappa == pytest.approx(0.01, abs=0.002)
    assert fit.lam == pytest.approx(1000.0, rel=0.03)
    assert fit.sigma_ci.contains(0.05) and fit.kappa_ci.contains(0.01)
    assert fit.peak == pytest.approx(math.sqrt(0.95 / 0.01), rel=0.1)
    assert fit.peak_ci.low < fit.peak < fit.peak_ci.high
    assert fit.r2 > 0.98


def test_usl_with_no_coherency_has_no_peak():
    ns = np.repeat(np.arange(1, 6), 3)
    caps = usl(ns, 500.0, 0.1, 0.0) * (1 + np.random.default_rng(1).normal(0, 0.01, ns.size))
    fit = fit_usl("linearish", ns, caps, seed=1)
    assert fit.ok and fit.kappa < 0.002
    assert fit.peak is None or fit.peak > 20


def test_usl_with_too_few_points_says_why():
    fit = fit_usl("two", [1, 1, 2, 2], [100.0, 101.0, 190.0, 188.0])
    assert not fit.ok and "too few instance counts" in fit.message
    assert fit_usl("none", [], []).ok is False


def test_peak_formula():
    assert peak_n(0.0, 0.01) == pytest.approx(10.0)
    assert peak_n(0.2, 0.0) is None


def test_study_fits_per_implementation(study_comparison, study):
    fits = {f.label: f for f in study_comparison.usl_fits}
    assert set(fits) == {"java", "node", "php"}
    java = fits["java"]
    assert java.ok and java.lam == pytest.approx(study.truth["java"].lam * 1.0, rel=0.05)
    assert study_comparison.usl_source == "capacity_rps"
