"""harness/db/ready.py: the template is seeded only when it holds another data set (no database needed)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.db import ready
from harness.db import seed as seeding


class _Seeded:
    checksum = "abc"
    seconds = 1.0


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The template holds scale 1, seed 42 with indexes until something seeds it again."""
    held = {"scale": "1", "seed": "42", "indexes": "True", "checksum": "abc"}
    made: list[str] = []

    def seed(server: Any, scale: int, seed_value: int, with_indexes: bool = True) -> _Seeded:
        made.append(f"seed {scale} {seed_value} {with_indexes}")
        held.update(scale=str(scale), seed=str(seed_value), indexes=str(with_indexes))
        return _Seeded()

    monkeypatch.setattr(seeding, "template_info", lambda server: dict(held))
    monkeypatch.setattr(seeding, "seed", seed)
    monkeypatch.setattr(seeding, "reset", lambda server: made.append("reset") or 0.1)
    return made


def test_the_template_is_held_only_with_the_same_scale_seed_and_indexes() -> None:
    info = {"scale": "1", "seed": "42", "indexes": "True"}
    assert ready.template_holds(info, 1, 42)
    assert not ready.template_holds(info, 2, 42)
    assert not ready.template_holds(info, 1, 7)
    assert not ready.template_holds(info, 1, 42, with_indexes=False)
    assert not ready.template_holds(None, 1, 42)


def test_a_held_template_is_not_seeded_again_and_restores_only_when_asked(calls: list[str]) -> None:
    assert ready.ensure_template(object(), 1, 42)["checksum"] == "abc"
    assert calls == []  # the working data stays as it is (serve without --reset, the conformance suite)
    ready.ensure_template(object(), 1, 42, restore=True)
    assert calls == ["reset"]


def test_another_data_set_is_seeded_and_announced(
    calls: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    info = ready.ensure_template(object(), 2, 42, with_indexes=False, restore=True, announce=True)
    assert calls == ["seed 2 42 False"]  # seeding clones a fresh working database itself
    assert info["scale"] == "2" and info["indexes"] == "False"
    assert "db: seeded scale=2 seed=42 checksum=abc" in capsys.readouterr().out
