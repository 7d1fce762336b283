"""The landing folder's layout, pure Python: ``<landing>/<YYYY-MM-DD>/<QM>/<file>`` (docs/landing.md).

What the command line checks before Spark starts and what `clwl check` walks; the ingest's discovery
(spark/ingest/landing.py) takes the same run date folders.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path


def run_date_folders(landing: Path | str) -> list[str]:
    """The run dates of the landing folder, sorted: real folders (not links), not hidden, named by a valid
    ISO date."""
    dates = []
    for entry in Path(landing).iterdir():
        if entry.name.startswith(".") or entry.is_symlink() or not entry.is_dir() or len(entry.name) != 10:
            continue
        try:
            date.fromisoformat(entry.name)
        except ValueError:
            continue
        dates.append(entry.name)
    return sorted(dates)
