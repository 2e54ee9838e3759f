"""One shared rich console, so progress bars and log lines never interleave badly."""

from __future__ import annotations

import os
import sys

from rich.console import Console

console = Console(stderr=False, highlight=False, force_terminal=None if sys.stdout.isatty() else False)
err_console = Console(stderr=True, highlight=False)

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
LOG_WIDTH = 160


def widen_for_logs() -> None:
    """Written to a file or a CI log with no terminal anywhere, rich would wrap at 80 columns and cut the
    tables' confidence intervals to "[2,1…"; an explicit COLUMNS still wins."""
    streams = (sys.stdin, sys.stdout, sys.stderr)
    if "COLUMNS" in os.environ or any(stream is not None and stream.isatty() for stream in streams):
        return
    for shared in (console, err_console):
        shared.width = LOG_WIDTH


class UserError(Exception):
    """An error the user can fix; the CLI prints its message (which says what to do) without a traceback."""
