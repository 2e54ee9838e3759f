"""The warm-up of a window inside a session (harness/regimes/campaign.py): long after a fresh start's
pre-warm, short and ramped from the previous rate on warm instances."""

from __future__ import annotations

from harness.engine.driver import LoadSettings
from harness.regimes.campaign import FRESH_WARMUP_S, SESSION_REWARM_S, session_window_load


def probe(rate: float = 900.0, warmup_s: float = 3.0) -> LoadSettings:
    return LoadSettings(targets=[], rate=rate, warmup_s=warmup_s, duration_s=3.0)


def test_a_fresh_start_warms_up_at_its_rate_for_at_least_the_fresh_minimum() -> None:
    load = session_window_load(probe(warmup_s=3.0), fresh=True, last_rate=None)
    assert load.warmup_s == FRESH_WARMUP_S > 3.0
    assert load.warmup_from_rate is None and load.rate == 900.0 and load.duration_s == 3.0
    # A longer warm-up asked for is kept.
    assert session_window_load(probe(warmup_s=30.0), fresh=True, last_rate=None).warmup_s == 30.0


def test_warm_instances_ramp_from_the_previous_rate_within_the_rewarm_limit() -> None:
    up = session_window_load(probe(rate=900.0, warmup_s=10.0), fresh=False, last_rate=600.0)
    assert up.warmup_s == SESSION_REWARM_S and up.warmup_from_rate == 600.0
    down = session_window_load(probe(rate=500.0, warmup_s=3.0), fresh=False, last_rate=900.0)
    assert down.warmup_s == 3.0 and down.warmup_from_rate == 500.0  # never ramps from above the rate


def test_a_warm_session_without_an_open_model_rate_keeps_the_plan() -> None:
    load = probe()
    assert session_window_load(load, fresh=False, last_rate=None) == load


def test_a_fixed_rate_check_keeps_its_own_warm_up_on_warm_instances() -> None:
    # The confirmation's windows of one session (ConfirmSettings.after_search) pass their warm-up as rewarm_s.
    check = session_window_load(
        probe(rate=800.0, warmup_s=15.0), fresh=False, last_rate=1000.0, rewarm_s=15.0
    )
    assert check.warmup_s == 15.0 and check.warmup_from_rate == 800.0
