"""How every ``clwl`` command prints text that came from an input or from the user: one rule, here.

A capture's object names, a landing folder's file names, a lake's rows, a ``--queue`` or ``--lake`` typed on the
command line: any of them may hold ESC, BEL or a bidi override, which a terminal acts on (set its title, move the
cursor, reorder the line) and which would make a runmqsc remedy line paste something else than it shows. Every
command prints such text through :func:`printable` (or :func:`say`, one escaped line). Standard library only:
the parsers, the engine and ``clwl generate`` may all import it.
"""

from __future__ import annotations

import sys
from typing import TextIO

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


def say(line: str = "", file: TextIO | None = None) -> None:
    """Print one line (stdout unless ``file``) with :func:`printable`: a newline inside it is shown as ``\\n``,
    so one call is always one line."""
    print(printable(line), file=sys.stdout if file is None else file)
