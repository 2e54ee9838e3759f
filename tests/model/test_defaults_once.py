"""Every experiment default is defined once, on the ground floor (harness/model), and the CLI shows that
one: the help a user reads and the settings a run uses cannot drift apart."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from harness import paths
from harness.engine.sizing import default_instance_cpus
from harness.model.ladder import LadderSettings
from harness.model.side_by_side import PRESETS


def _help(*command: str) -> str:
    env = dict(os.environ, COLUMNS="400", NO_COLOR="1", TERM="dumb")
    done = subprocess.run(
        [sys.executable, "-m", "harness", *command, "--help"],
        cwd=paths.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return re.sub(r"[│╭╮╰╯─]", " ", done.stdout)


def _default(text: str, option: str) -> str:
    found = re.search(re.escape(option) + r"\s.*?\[default: ([^\]]+)\]", text)
    assert found, f"{option} shows no default"
    return found.group(1).strip()


def test_the_ladder_options_show_the_ladders_one_definition() -> None:
    text = _help("ladder")
    settings = LadderSettings()
    assert _default(text, "--steps") == str(settings.steps)
    assert _default(text, "--step ") == f"{settings.step_s:g}s"
    assert _default(text, "--cost-passes") == str(settings.cost_passes)


def test_side_by_side_offers_exactly_the_presets_defined() -> None:
    for command in ("side-by-side", "aa"):
        text = _help(command)
        assert _default(text, "--preset") == "standard"
        for name in PRESETS:
            assert name in text


def test_an_unknown_preset_is_refused_with_the_valid_names() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "side-by-side", "--preset", "fastest", "-r", "1"],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "unknown preset 'fastest'" in done.stdout + done.stderr
    assert all(name in done.stdout + done.stderr for name in PRESETS)


def test_the_cpu_limit_default_is_the_sizing_rule_in_the_help() -> None:
    assert f"(here {default_instance_cpus():g})" in _help("run") or "sizing rule" in _help("run")
