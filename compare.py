#!/usr/bin/env python3
"""compare.py: statistics, verdicts, tables and an HTML report from bidbench result folders.

    .bidbench/venv/bin/python compare.py results/ --html report.html
    .bidbench/venv/bin/python compare.py --help        (what it does, and every option)

A thin entry point: the work is done by harness.analysis (compare, render_terminal, write_html, ...).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.cli.compare import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
