"""Before a claim runs anything: is its layout valid on this machine, and does the machine have what its
variants name (a JVM build, a tool)? Every refusal names the claim file's field.

The CPU budget lives here, once: a claim must leave the load driver and PostgreSQL one whole core,
instances x cpus <= cores - 1 (docs/method.md, "5. Leaving CPU for the driver and the database"). The
run-time check (harness/engine/session.py check_fits) only stops plans that cannot run at all; a claim
needs runs that are valid, not merely possible.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from harness.claims.model import Claim, ClaimError, Size, cells, group_problems, is_side_by_side
from harness.claims.side_by_side import fit_problems
from harness.engine.sizing import machine_cores
from harness.tools import toolchain

DRIVER_AND_DATABASE_CORES = 1.0
"""CPU left to the load driver, PostgreSQL and the sampler by every claim (see the module doc)."""


def size_name(claim: Claim, size: Size) -> str:
    """Which of the claim file's sizes this is (a --repetitions override keeps the rest of it)."""
    return "quick" if replace(size, repetitions=claim.quick.repetitions) == claim.quick else "full"


def layout_problems(claim: Claim, size: Size, cores: int) -> list[str]:
    """Each variant's instances x cpus against the budget; the field named is the one that sets it."""
    which = size_name(claim, size)
    allowed = cores - DRIVER_AND_DATABASE_CORES
    problems = []
    for v in {cell.variant.name: cell.variant for cell in cells(claim, size)}.values():
        index = claim.variants.index(v)
        cpus = v.cpus or size.cpus
        instances = v.instances or size.instances
        if instances * cpus > allowed + 1e-9:
            field = (f"experiment/variants/{index}/cpus" if v.cpus else f"experiment/{which}/cpus") + (
                f" (with experiment/variants/{index}/instances = {instances})" if v.instances else ""
            )
            problems.append(
                f"{field}: variant {v.name!r} runs {instances} instance(s) x {cpus:g} CPU = "
                f"{instances * cpus:g} CPU, but this machine has {cores} cores and a claim must leave "
                f"{DRIVER_AND_DATABASE_CORES:g} core to the load driver and PostgreSQL "
                f"(instances x cpus <= {allowed:g}; harness/claims/layout.py says why). Scale it down and "
                "say how in the claim's scaled_down field"
            )
    return problems


def availability_problems(claim: Claim, size: Size) -> list[str]:
    """A variant's JVM build must be installed; a tool it names must be on the machine (never installed
    here: a claim names a tool precisely because the apps' own setup does not provide it)."""
    problems = []
    used = {cell.variant.name for cell in cells(claim, size)}
    for index, v in enumerate(claim.variants):
        if v.name not in used:
            continue
        if v.jvm is not None:
            java = Path(v.jvm) / "bin" / "java"
            if not (java.is_file() and os.access(java, os.X_OK)):
                problems.append(
                    f"experiment/variants/{index}/jvm: {v.jvm!r} (variant {v.name!r}) is not a JVM on this "
                    f"machine: no executable {java}"
                )
        for k, tool in enumerate(v.tools):
            if tool not in toolchain.TOOLS:
                problems.append(
                    f"experiment/variants/{index}/tools/{k}: {tool!r} is not a tool bidbench knows "
                    f"({', '.join(sorted(toolchain.TOOLS))})"
                )
            elif not toolchain.TOOLS[tool].probe().found:
                problems.append(
                    f"experiment/variants/{index}/tools/{k}: {tool!r} (variant {v.name!r}) is missing from "
                    "this machine (./bidbench setup installs it)"
                )
    return problems


def preflight(claim: Claim, size: Size, cores: int | None = None) -> None:
    """Raise ClaimError naming every field that stops this claim from running validly here; runs nothing."""
    if not claim.runnable:
        return
    cores = cores or machine_cores()
    problems = layout_problems(claim, size, cores) + availability_problems(claim, size)
    if is_side_by_side(claim):
        problems += group_problems(claim) + fit_problems(claim, size, size_name(claim, size), cores)
    if problems:
        origin = claim.path or claim.id
        raise ClaimError(f"{origin}: cannot run here, nothing was run:\n  - " + "\n  - ".join(problems))
