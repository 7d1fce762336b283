"""The landing folder's layout, pure Python: ``<landing>/<YYYY-MM-DD>/<QM>/<file>`` (docs/landing.md).

What the command line checks before Spark starts and what `clwl check` walks; the ingest's discovery
(spark/ingest/landing.py) takes the same run date folders.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

#: A run date folder's name: YYYY-MM-DD (date.fromisoformat alone also takes 20261120 and 2026-W47-5).
RUN_DATE_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def is_run_date(text: str) -> bool:
    """``text`` names a run date: YYYY-MM-DD, and a real date."""
    if not RUN_DATE_NAME.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def run_date_folders(landing: Path | str) -> list[str]:
    """The run dates of the landing folder, sorted: real folders (not links), not hidden, named by a valid
    ISO date."""
    return sorted(entry.name for entry in Path(landing).iterdir()
                  if not entry.name.startswith(".") and not entry.is_symlink() and entry.is_dir()
                  and is_run_date(entry.name))
