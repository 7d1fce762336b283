"""Types shared by every parser, and the one way they open their input (:func:`open_input`)."""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate
from typing import IO, Any, Iterator, Mapping, Optional


class InputError(Exception):
    """A whole input cannot be used (missing, unreadable, not in any known format).

    ``str()`` is one line naming the file and the reason, for the command line's stderr.
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class ReadWords:
    """How a parser says that a file cannot be read, in :class:`InputError`'s reason: the file is not there,
    is a folder, may not be read (None: said as any other error), or another error (``unreadable: <strerror>``)."""

    missing: str = "file not found"
    directory: str = "is a directory, not a file"
    denied: Optional[str] = None
    unreadable: str = "cannot read"


#: The words of the parsers of put files, activity traces (amqsact, amqsevt JSON), amqsmon and transmission queue
#: browses.
READ_WORDS = ReadWords()


@contextmanager
def open_input(path: str | os.PathLike[str], mode: str = "r", *, source: Optional[str] = None,
               words: ReadWords = READ_WORDS, **open_args: Any) -> Iterator[IO[Any]]:
    """The one way a parser opens its input: ``open(path, mode, **open_args)``, every OSError (opening it, or
    reading it inside the ``with`` block: a parser that streams its file reads as it parses) an
    :class:`InputError` naming ``source`` (default: ``str(path)``) in ``words``."""
    source = str(path) if source is None else source
    try:
        with open(path, mode, **open_args) as handle:
            yield handle
    except FileNotFoundError:
        raise InputError(source, words.missing) from None
    except IsADirectoryError:
        raise InputError(source, words.directory) from None
    except PermissionError as exc:
        if words.denied is None:
            raise InputError(source, f"{words.unreadable}: {exc.strerror or exc}") from None
        raise InputError(source, words.denied) from None
    except OSError as exc:
        raise InputError(source, f"{words.unreadable}: {exc.strerror or exc}") from None


def read_input_bytes(path: str | os.PathLike[str], *, source: Optional[str] = None,
                     words: ReadWords = READ_WORDS) -> bytes:
    """The bytes of a parser's input file (:func:`open_input`'s errors)."""
    with open_input(path, "rb", source=source, words=words) as handle:
        return handle.read()


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
    fmt: str = "mqsc"  # "mqsc", "rest", or "zos" (z/OS command output, clwl.parse.zos)


# ----------------------------------------------------------------------------------------------------------
# Limits shared by the parsers: what one bad value may cost is that value's record, never the file or the run.

#: MQLONG (MQMD Priority, Persistence, MsgSeqNumber, Encoding, ...) and the 32-bit integer columns.
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
#: 64-bit integer columns (message lengths, accounting counts).
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

#: JSON nested deeper than this is refused before it is decoded (the decoder recurses once per level; a real
#: MQ REST response or put record is nested at most about 8 levels).
MAX_JSON_DEPTH = 64


def clip(text: str, limit: int = 40) -> str:
    """``text`` cut for a reason: at most ``limit`` characters, with its length when cut."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


_ASCII_INT = re.compile(r"\s*[+-]?([0-9]+)\s*")


def checked_int(text: str, lo: int, hi: int) -> int:
    """``int(text)`` within ``lo..hi``; :class:`ValueError` with the reason otherwise ("not an integer", "out of
    range"). Never slower than linear: a number too long for ``int()`` is out of range, not a crash."""
    m = _ASCII_INT.fullmatch(text)
    if m is None:  # int() alone also takes other scripts' digits ("١٢", "²" fails later) and "1_000": MQ writes neither
        raise ValueError(f"{clip(text)!r} is not an integer")
    if len(m.group(1)) > 40:  # far past any bound here, and int() refuses more than 4,300 digits
        raise ValueError(f"{clip(text.strip())} is out of range ({lo}..{hi})")
    value = int(m.group(0))
    if not lo <= value <= hi:
        raise ValueError(f"{clip(str(value))} is out of range ({lo}..{hi})")
    return value


def has_surrogate(text: str) -> bool:
    """``text`` holds a lone surrogate (``"\\ud800"`` from a JSON escape): it cannot be written as UTF-8."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``), so that it can be stored."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if has_surrogate(text) else text


_JSON_NOT_BRACKETS = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|[^\[\]{}"]++', re.S)
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """How deep the arrays and objects of JSON ``text`` nest (brackets inside strings do not count); linear."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return text.count("[") + text.count("{")  # an upper bound, enough to say "not too deep"
    brackets = _JSON_NOT_BRACKETS.sub("", text)
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def too_deep_reason(text: str) -> str | None:
    """The reason JSON ``text`` is refused for its nesting, or None."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels ({depth})"
    return None


class _BigInt(str):
    """A JSON integer too long for ``int()`` (over 4,000 digits), kept as its digits."""


def _json_int(digits: str):
    return int(digits) if len(digits) <= 4000 else _BigInt(digits)


#: The JSON decoder of the parsers: an integer too long for ``int()`` comes back as its text (a ``str``), for
#: the value checks to refuse or keep, instead of a ValueError that would cost the whole document.
JSON_DECODER = json.JSONDecoder(parse_int=_json_int)


_JSON_TOKENS = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{},"]', re.S)


def json_array_elements(text: str, start: int) -> Iterator[tuple[int, int, int]]:
    """``(start, end, depth)`` of each element of the JSON array whose ``[`` is at ``start`` (depth: how deep the
    element nests), found without decoding anything: how an array too deep to decode is cut into its records.
    Linear. Ends at the array's ``]``, or at the end of the text (or of an unclosed string), the last element
    cut there."""
    depth, deepest, sep = 0, 1, start + 1
    for m in _JSON_TOKENS.finditer(text, start):
        token = m.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif token == "]" or token == "}":
            depth -= 1
            if depth == 0:
                if text[sep:m.start()].strip():
                    yield sep, m.start(), deepest - 1
                return
        elif token == ",":
            if depth == 1:
                yield sep, m.start(), deepest - 1
                sep, deepest = m.end(), 1
        elif token == '"':  # a string that is never closed
            break
    if text[sep:].strip():
        yield sep, len(text), deepest - 1
