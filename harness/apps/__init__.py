"""The registry of implementations: one AppAdapter per language, declared in its own module. IMPLS is the
ordered tuple of registered names, the order (java, node, php) of every listing and table. A new language
registers its adapter here (docs/adding-an-implementation.md).
"""

from __future__ import annotations

from harness.apps import java, node, php
from harness.apps.base import AppAdapter, AppDriver
from harness.tools import toolchain

_REGISTERED: dict[str, AppAdapter] = {}
IMPLS: tuple[str, ...] = ()


def register(app: AppAdapter) -> None:
    global IMPLS
    if app.name in _REGISTERED:
        raise ValueError(f"implementation {app.name!r} is registered already")
    _REGISTERED[app.name] = app
    IMPLS = tuple(_REGISTERED)
    toolchain.register_app_tools(app.name, app.tools)


def unregister(name: str) -> None:
    """Removes an implementation (a test's throwaway adapter)."""
    global IMPLS
    del _REGISTERED[name]
    IMPLS = tuple(_REGISTERED)
    toolchain.unregister_app_tools(name)


def adapters() -> tuple[AppAdapter, ...]:
    return tuple(_REGISTERED.values())


def adapter(impl: str) -> AppAdapter:
    found = _REGISTERED.get(impl)
    if found is None:
        raise ValueError(f"unknown implementation {impl!r}; choose from {', '.join(IMPLS)}")
    return found


def driver(impl: str) -> AppDriver:
    return adapter(impl).driver()


for _module in (java, node, php):
    register(_module.ADAPTER)
