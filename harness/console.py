"""One shared rich console, so progress bars and log lines never interleave badly."""

from __future__ import annotations

import os
import sys

from rich.console import Console

console = Console(stderr=False, highlight=False, force_terminal=None if sys.stdout.isatty() else False)
err_console = Console(stderr=True, highlight=False)

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


class UserError(Exception):
    """An error the user can fix; the CLI prints its message (which says what to do) without a traceback."""
