"""Types shared by every parser."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


class InputError(Exception):
    """A whole input cannot be used (missing, unreadable, not in any known format).

    ``str()`` is one line naming the file and the reason, for the command line's stderr.
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class ParseProblem:
    """One record that could not be accepted. It goes to quarantine, never away."""

    source: str  # file path
    line: int  # 1-based line where the bad record starts (0 when not line-oriented)
    reason: str  # short, specific: "unbalanced parenthesis in 'CONNAME(host(1414)'"
    raw: str  # the raw text of the record (or JSON fragment)


@dataclass(frozen=True)
class MqscRecord:
    """One object of runmqsc or MQ REST output: ``kind`` and its attributes.

    kind: CLUSQMGR, QCLUSTER, QMGR, QLOCAL, QALIAS, QREMOTE, QMODEL, CHSTATUS, NAMELIST, CHANNEL, or
    OTHER for a well-formed record of a type the project does not use.
    attrs: upper-case MQSC keywords -> value as text, surrounding blanks and quotes stripped; an empty
    value ``DESCR( )`` is ``""``; a bare keyword (``CURRENT``, ``SYNCPT``) is ``None``.
    """

    kind: str
    attrs: Mapping[str, str | None]
    source: str
    line: int
    message_id: str = ""  # e.g. "AMQ8441I" ("" for REST)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.attrs.get(key, default)


@dataclass
class ParsedCapture:
    """What one file yielded."""

    source: str
    records: list[MqscRecord] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    banner_qmgr: str | None = None  # from "Starting MQSC for queue manager NAME." (any language)
    fmt: str = "mqsc"  # "mqsc" or "rest"
