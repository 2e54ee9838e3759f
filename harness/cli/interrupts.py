"""Ctrl-C, SIGTERM and SIGHUP stop a command the same way, and none of them can be lost.

Each becomes a KeyboardInterrupt, so every `finally` on the way out stops the instances it started. Python
drops an exception raised while it runs an at-fork callback, a `__del__` or a weakref callback ("Exception
ignored in ..."): a signal landing there would be swallowed and the run would go on as if nothing happened.
Such a swallowed interrupt is delivered again once that callback has returned.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Long enough for the callback that swallowed the interrupt to return, short enough to feel immediate.
REDELIVERY_DELAY_S = 0.05


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def _redeliver_if_swallowed(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    def hook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, Interrupted):
            timer = threading.Timer(REDELIVERY_DELAY_S, os.kill, (os.getpid(), exc.signum))
            timer.daemon = True
            timer.start()
            return
        previous(unraisable)

    return hook


def stop_on_signals() -> None:
    # SIGINT too: a process started as a background job of a non-interactive shell (a script's `cmd &`, some
    # CI runners) inherits SIGINT as ignored, and Python then installs no Ctrl-C handler of its own.
    for signum in STOPPING_SIGNALS:
        signal.signal(signum, _raise_interrupted)
    sys.unraisablehook = _redeliver_if_swallowed(sys.unraisablehook)
