"""The published works the report's tables follow, named as a reader can find them: authors, title and
kind. The claims keep their own copies of these sources; a reader has only these names."""

from __future__ import annotations

STEP_CHAPTER = "Pardal, Pardal and Marques, “Performance Assessment of Web Services in the STEP Framework” (book chapter)"
RUBIS = "Spacco and Pugh, “RUBiS Revisited: Why J2EE Benchmarking is Hard”"
STEP_PAPER = (
    "Pardal, Pardal and Marques, “Improving Web Services performance, one STEP at a time” (conference paper)"
)
ZENG_THESIS = (
    "Zeng, “Performance Comparison between Java and Node.js in terms of Scaling in Cloud” (B.Sc. thesis)"
)
FREIRE = (
    "Freire et al., “Experimental study for evaluating the performance of Java virtual machines in application "
    "integration”"
)


def cite(source: str, where: str) -> str:
    """A source and the place in it: "Zeng, “…” (B.Sc. thesis), Table 7.1"."""
    return f"{source}, {where}"
