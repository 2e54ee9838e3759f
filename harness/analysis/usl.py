"""The Universal Scalability Law (Gunther): C(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)).

sigma is contention (the serial share: scaling flattens), kappa is coherency (crosstalk: scaling turns
down), lambda is the capacity of one instance without either. Past N* = sqrt((1 - sigma) / kappa) adding
instances lowers capacity. The fit is a bounded least-squares fit (scipy.optimize.curve_fit) on every run,
not on means; the intervals come from a seeded bootstrap that resamples the runs within each N.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import curve_fit

from harness.model.stats import Interval

MIN_LEVELS = 3  # three parameters need at least three distinct N
BOOTSTRAP_FITS = 200


def usl(n: np.ndarray | float, lam: float, sigma: float, kappa: float) -> np.ndarray | float:
    n = np.asarray(n, dtype=float)
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def peak_n(sigma: float, kappa: float) -> float | None:
    """Where capacity peaks; None when kappa is (numerically) zero: no peak, scaling only flattens."""
    if kappa <= 1e-12 or sigma >= 1.0:
        return None
    return math.sqrt((1.0 - sigma) / kappa)


@dataclass
class UslFit:
    label: str
    ok: bool
    message: str
    n_points: int
    n_levels: int
    lam: float | None = None
    sigma: float | None = None
    kappa: float | None = None
    lam_ci: Interval | None = None
    sigma_ci: Interval | None = None
    kappa_ci: Interval | None = None
    peak: float | None = None
    peak_ci: Interval | None = None
    peak_capacity: float | None = None
    r2: float | None = None
    ns: list[float] = field(default_factory=list)
    capacities: list[float] = field(default_factory=list)

    def predict(self, n: np.ndarray | float) -> np.ndarray | float:
        if not self.ok or self.lam is None or self.sigma is None or self.kappa is None:
            raise ValueError("no fit")
        return usl(n, self.lam, self.sigma, self.kappa)


STARTS = ((0.05, 0.001), (0.3, 0.01), (0.01, 0.0), (0.6, 0.05))


def _fit_once(
    n: np.ndarray, c: np.ndarray, start: tuple[float, float, float] | None = None
) -> tuple[float, float, float] | None:
    """Least squares from several starting points (or one, for bootstrap refits); the best SSE wins."""
    base = c[n == n.min()].mean() / n.min()
    best: tuple[float, tuple[float, float, float]] | None = None
    starts = [start] if start else [(base, s0, k0) for s0, k0 in STARTS]
    for p0 in starts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                params, _ = curve_fit(
                    usl, n, c, p0=p0, bounds=([0.0, 0.0, 0.0], [np.inf, 1.0, 1.0]), maxfev=20000
                )
            except (RuntimeError, ValueError):
                continue
        sse = float(((c - usl(n, *params)) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, (float(params[0]), float(params[1]), float(params[2])))
    return best[1] if best else None


def fit_usl(
    label: str, ns: Sequence[float], capacities: Sequence[float], confidence: float = 0.95, seed: int = 0
) -> UslFit:
    n = np.asarray(ns, dtype=float)
    c = np.asarray(capacities, dtype=float)
    keep = np.isfinite(n) & np.isfinite(c) & (n > 0)
    n, c = n[keep], c[keep]
    levels = np.unique(n)
    fit = UslFit(label, False, "", int(n.size), int(levels.size), ns=n.tolist(), capacities=c.tolist())
    if levels.size < MIN_LEVELS:
        fit.message = (
            f"too few instance counts to fit ({levels.size}; the USL has three parameters and needs "
            f"at least {MIN_LEVELS} distinct N, e.g. 1, 2 and 3 instances)"
        )
        return fit
    params = _fit_once(n, c)
    if params is None:
        fit.message = "the fit did not converge"
        return fit
    lam, sigma, kappa = params
    residual = c - usl(n, lam, sigma, kappa)
    total = float(((c - c.mean()) ** 2).sum())
    fit.ok = True
    fit.lam, fit.sigma, fit.kappa = lam, sigma, kappa
    fit.r2 = 1.0 - float((residual**2).sum()) / total if total > 0 else None
    fit.peak = peak_n(sigma, kappa)
    fit.peak_capacity = float(usl(fit.peak, lam, sigma, kappa)) if fit.peak else None
    # bootstrap: resample runs within each N (cases), or residuals when each N has one run
    rng = np.random.default_rng(seed)
    by_level = [np.flatnonzero(n == level) for level in levels]
    replicated = all(idx.size >= 2 for idx in by_level)
    fitted = np.asarray(usl(n, lam, sigma, kappa))
    draws: list[tuple[float, float, float, float]] = []
    for _ in range(BOOTSTRAP_FITS):
        if replicated:
            pick = np.concatenate([rng.choice(idx, idx.size, replace=True) for idx in by_level])
            bn, bc = n[pick], c[pick]
        else:
            bn, bc = n, fitted + rng.choice(residual, residual.size, replace=True)
        got = _fit_once(bn, bc, (lam, max(sigma, 1e-4), max(kappa, 1e-6)))
        if got is not None:
            pk = peak_n(got[1], got[2])
            draws.append((got[0], got[1], got[2], pk if pk is not None else math.inf))
    if len(draws) >= max(50, BOOTSTRAP_FITS // 4):
        arr = np.asarray(draws)
        tail = (1.0 - confidence) / 2.0 * 100.0
        method = "bootstrap percentile" + ("" if replicated else " (residuals)")

        def interval(column: int) -> Interval:
            # may hold inf (no peak in that resample): order statistics, not interpolated
            low = np.quantile(arr[:, column], tail / 100.0, method="lower")
            high = np.quantile(arr[:, column], 1.0 - tail / 100.0, method="higher")
            return Interval(float(low), float(high), method)

        fit.lam_ci, fit.sigma_ci, fit.kappa_ci = interval(0), interval(1), interval(2)
        fit.peak_ci = interval(3)
    fit.message = f"fitted on {n.size} runs at {levels.size} instance counts"
    if fit.peak is None:
        fit.message += "; kappa ~ 0: no peak, scaling only flattens"
    elif fit.peak > levels.max() * 2:
        fit.message += f"; the peak N={fit.peak:.1f} lies far beyond the measured range: an extrapolation"
    if levels.size == MIN_LEVELS and not replicated:
        fit.message += "; three points for three parameters: a perfect fit that proves nothing"
    return fit
