"""The landing folder's layout, pure Python: ``<landing>/<YYYY-MM-DD>/<QM>/<file>`` (docs/landing.md).

What the command line checks before Spark starts and what `clwl check` walks; the ingest's discovery
(clwl/landing/discovery.py) takes the same run date folders and the same queue manager names
(:func:`is_mq_name`). How every command prints a name found in the file system is :func:`clwl.terminal.printable`.
"""

from __future__ import annotations

import re
from pathlib import Path

from clwl.days import RUN_DATE_NAME as RUN_DATE_NAME
from clwl.days import RunDate
from clwl.terminal import printable as printable  # its home is clwl.terminal; named here for older callers

#: An MQ object name (queue manager, queue, cluster): 1-48 of A-Z a-z 0-9 . _ / %, ASCII only (a lookalike such
#: as a fullwidth letter or another script's digit is another name to MQ). Also a JSON Schema ``pattern``.
MQ_NAME_PATTERN = r"\A[A-Za-z0-9._/%]{1,48}\Z"
#: What :data:`MQ_NAME_PATTERN` allows, in words (for the reasons that quote it).
MQ_NAME_RULE = "1-48 characters of A-Z, a-z, 0-9, '.', '_', '/', '%'"
_MQ_NAME = re.compile(MQ_NAME_PATTERN)


def is_run_date(text: str) -> bool:
    """``text`` names a run date: YYYY-MM-DD, and a real date (clwl.days.RunDate)."""
    try:
        RunDate(text)
    except ValueError:
        return False
    return True


def run_date_folders(landing: Path | str) -> list[str]:
    """The run dates of the landing folder, sorted: real folders (not links), not hidden, named by a valid
    ISO date."""
    return sorted(entry.name for entry in Path(landing).iterdir()
                  if not entry.name.startswith(".") and not entry.is_symlink() and entry.is_dir()
                  and is_run_date(entry.name))


def is_mq_name(text: str) -> bool:
    """``text`` is a valid MQ queue manager (object) name: :data:`MQ_NAME_RULE`."""
    return _MQ_NAME.fullmatch(text) is not None
