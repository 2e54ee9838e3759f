"""One driver per implementation. A driver knows how to build its app and how to launch one instance."""

from __future__ import annotations

from harness.apps.base import AppDriver

IMPLS = ("java", "node", "php")


def driver(impl: str) -> AppDriver:
    if impl == "java":
        from harness.apps.java import JavaDriver

        return JavaDriver()
    if impl == "node":
        from harness.apps.node import NodeDriver

        return NodeDriver()
    if impl == "php":
        from harness.apps.php import PhpDriver

        return PhpDriver()
    raise ValueError(f"unknown implementation {impl!r}; choose from {', '.join(IMPLS)}")
