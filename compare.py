#!/usr/bin/env python3
"""compare.py: statistics, verdicts, tables and an HTML report from bidbench result folders.

    .bidbench/venv/bin/python compare.py results/ --html report.html    (--help: every option)

The same command as `./bidbench compare` (harness/cli/compare.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.cli.compare import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
