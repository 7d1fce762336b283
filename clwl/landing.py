"""The landing folder's layout, pure Python: ``<landing>/<YYYY-MM-DD>/<QM>/<file>`` (docs/landing.md).

What the command line checks before Spark starts and what `clwl check` walks; the ingest's discovery
(spark/ingest/landing.py) takes the same run date folders and the same queue manager names
(:func:`is_mq_name`). :func:`printable` is how every command prints a name found in the file system.
"""

from __future__ import annotations

import re
from pathlib import Path

from clwl.days import RUN_DATE_NAME as RUN_DATE_NAME
from clwl.days import RunDate

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


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: every character that is not printable (C0 and C1 controls such as
    ESC, BEL, a newline or tab, written ``\\n``, ``\\t``; bidi and other format characters such as U+202E;
    unpaired surrogates from a file name that is not UTF-8) as a ``repr``-style escape (``\\x1b``, ``\\u202e``,
    ``\\udcff``), the rest unchanged. A file name must not move the cursor, set the terminal's title, reorder the
    line or break the print. Applying it twice changes nothing (backslashes are kept as they are)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)
