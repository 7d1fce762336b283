"""runmqsc text output -> :class:`ParsedCapture` (standard library only).

What a capture looks like (docs/formats.md, "runmqsc captures")::

    5724-H72 (C) Copyright IBM Corp. 1994, 2025.
    Starting MQSC for queue manager QM1.


         1 : DISPLAY CLUSQMGR(*) ALL
    AMQ8441I: Display Cluster Queue Manager details.
       CLUSQMGR(QM1)                           CHANNEL(TO.QM1)
       CONNAME(host1(1414))                    DESCR( )
    AMQ8441I: Display Cluster Queue Manager details.
       ...
    One MQSC command read.
    No commands have a syntax error.
    All valid MQSC commands were processed.

How the text is read:

* A record starts at a line ``^\\s*AMQnnnn[IEWS]?:`` (any text after the colon, in any language) and owns the
  lines that follow until the next record, an echoed command (``     2 : DISPLAY ...``, ``       : ALL``), a closing
  line (``One MQSC command read.`` ...) or a line at column 0 that is not clean ``KEY(value)`` text (this is how
  translated closing lines such as ``MQSC コマンドを 1 つ読み取りました。`` end a record). Blank lines inside a record
  are skipped.
* Attribute lines are tokenised with a balanced-parenthesis scanner, never by columns: ``KEY(value)`` and bare
  keywords (``CURRENT``) at any column, any number per line; nested parentheses (``CONNAME(a(1414),b(1414))``),
  empty values (``DESCR( )`` -> ``""``), values with blanks (``DESCR(Auto-defined by)``), quoted values
  (``DESCR('a b')`` -> ``a b``, ``''`` inside quotes is one quote; a quote is only special as the first non-blank
  character of a value). Keys are upper-cased; values keep their text, surrounding blanks stripped (inside quotes
  too: MQ blank-pads its fields). Unknown attribute names are kept.
* A value may continue on the next line when a parenthesis (or quote) is still open at the end of a line and the
  record continues: the two pieces are joined with one blank, or with nothing after ``(``, before ``)`` or ``,``,
  and after ``,`` when the value so far has no blank (a list: ``CONNAME(a(1414),`` + ``b(1414))``). If the
  record ends instead (next record, echoed command, closing line, blank line, end of file) it is a problem.
* Messages without attributes (``AMQ8147E: IBM MQ object X not found.``, ``AMQ8420I: Channel Status not found.``,
  ``AMQ8405I`` syntax errors, ...) yield neither a record nor a problem: a "not found" answer is a normal
  outcome. The lines following ``AMQ8405``/``AMQ8427`` (the echoed bad command, the syntax help) are skipped.
  Exception: the header of a DISPLAY kind this project reads (AMQ8441, 8409, 8408, 8417, 8414, 8550) followed by no
  attribute at all is a problem (the record was cut).
* Banner queue manager (``ParsedCapture.banner_qmgr``), looked for in the banner part (the lines before the first
  echoed command or record, copyright lines excluded); rules 1-3 are tried line by line, the first hit wins:
  1. ``Starting MQSC for queue manager NAME.``;
  2. a line that ends with ``<words> NAME.`` or ``NAME。`` where NAME is a valid MQ name (``A-Za-z0-9._/%``, at
     most 48), not ``MQSC``/``IBM``/``MQ``, with no lower-case letter (French ``... files d'attente QM1.``);
  3. a line that mentions ``MQSC`` and holds exactly one blank-separated token that is a valid MQ name, has no
     lower-case letter and is not ``MQSC``/``IBM``/``MQ`` (translations that put the name mid-sentence:
     ``キュー・マネージャー QM1 の MQSC を開始しています。``, German ``... QM1 wird gestartet.``);
  4. failing all that, the first line ending as in 2 whose NAME has lower-case letters (``... QM qm1.``).
  ``None`` when nothing matches.
* The record kind comes from the attributes (see :func:`classify`); the message id only breaks ties.
* Typed input (runmqsc copied from an interactive terminal): each command typed at column 0 is followed by
  runmqsc's echo ``     N : <same text>`` (continuation lines ``       : <text>``). Lines at column 0 that the
  echo right after them repeats, word for word and line for line, are the typed command: skipped (they would
  otherwise be read as attributes of the record before them). A column-0 line that no echo repeats is read as
  before.
* z/OS command output (CSQxnnns messages, no AMQnnnn message at the start of a line) is handed to
  :func:`clwl.parse.zos.parse_zos_text` (``fmt == "zos"``): it lands under the same file names.

Malformed records become :class:`ParseProblem` (line = the record's AMQ line, raw = the record's text) and are
not emitted. Reason prefixes: ``unbalanced parenthesis:``, ``unclosed quote:``, ``not KEY(value) or a keyword:``,
``record truncated at end of file:``, ``missing key attribute:``, ``duplicate attribute:``, ``attributes outside a
record:`` (attribute lines with no AMQ header before them), ``control character in a name:`` (an object name
holding ESC, BEL, a tab or another unprintable character: not a valid MQ name,
:func:`clwl.parse.record_kinds.bad_name_reason`; the z/OS and REST readers refuse it the same way).
"""

from __future__ import annotations

import codecs
import os
import re

from clwl.parse.common import InputError, MqscRecord, ParsedCapture, ParseProblem, ReadWords, read_input_bytes
from clwl.parse.record_kinds import (  # the kinds: their home is clwl.parse.record_kinds, named here too
    KINDS,
    MESSAGE_KINDS,
    QUEUE_KINDS,
    REQUIRED_ATTRIBUTES,
    bad_name_reason,
    classify,
    missing_key_reason,
    record_reason,
)
from clwl.parse.runmqsc_lexer import Scanner, attribute_map, clean_attribute_line, clip_line
from clwl.parse.zos import looks_like_zos, parse_zos_text

__all__ = [
    "KINDS",
    "QUEUE_KINDS",
    "REQUIRED_ATTRIBUTES",
    "classify",
    "decode_bytes",
    "missing_key_reason",
    "parse_mqsc_file",
    "parse_mqsc_text",
    "read_text_file",
]

# --------------------------------------------------------------------------------------------------------------
# Reading files


def decode_bytes(data: bytes) -> str:
    """Bytes of a capture -> text: BOM (UTF-8, UTF-16) honoured, else UTF-8, else latin-1 (never fails)."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


#: How a capture that cannot be read is said (``clwl route`` and the ingest have always said it so).
CAPTURE_READ_WORDS = ReadWords(missing="no such file", denied="permission denied", unreadable="cannot be read")


def read_text_file(path: str | os.PathLike[str]) -> tuple[str, str]:
    """``(source, text)`` of a file; :class:`InputError` when it is missing or unreadable."""
    source = os.fspath(path)
    return source, decode_bytes(read_input_bytes(source, words=CAPTURE_READ_WORDS))


# --------------------------------------------------------------------------------------------------------------
# Lexical patterns (precompiled). The common record costs one findall of _FAST_PAIRS plus one dict
# comprehension: keys in upper case, values without quotes, newlines or more than one level of nested
# parentheses, nothing else on the lines. Anything else (a "junk" match, group 4, which gives the key "") sends
# the record to the exact, slower scanner (clwl.parse.runmqsc_lexer.Scanner).

_FAST_INNER = r"[^()'\n]*+(?:\([^()'\n]*+\)[^()'\n]*+)*+"
# A key never starts inside a word (the lookbehind): retried at every letter of a long word, the key's scan
# made a line quadratic.
_FAST_PAIRS = re.compile(
    r"[ \t\n]*+(?:(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]*+)(?:(\()(" + _FAST_INNER + r")\)|(?=[ \t\n]|\Z))|(.))"
)
_HEADER = re.compile(r"(AMQ\d{4}[IEWS]?):")
_NOT_BLANK = re.compile(r"[^ \t]")
_ECHO = re.compile(r"[ \t]*(?:\d+[ \t]*)?:(?:[ \t]|$)")
_CLOSING = re.compile(
    r"[ \t]*(?:(?:One|No|All|\d+)[ \t]+(?:valid[ \t]+)?(?:MQSC[ \t]+)?commands?\b|MQSC[ \t]+commands?\b)"
)
_COPYRIGHT = re.compile(r"5724-H72|Copyright|\(C\)", re.IGNORECASE)
_STARTING = re.compile(r"Starting MQSC for queue manager[ \t]+(\S+?)\.?[ \t]*$")
_MQ_NAME = re.compile(r"[A-Za-z0-9._/%]{1,48}")
_ENDS_WITH_NAME = re.compile(r"(?<![A-Za-z0-9._/%])([A-Za-z0-9._/%]{1,49})[ \t]*[.。][ \t]*$")
_LETTER = re.compile(r"[^\W\d_]")
_LOWER = re.compile(r"[a-z]")
_NOT_NAME_WORDS = frozenset({"MQSC", "IBM", "MQ"})

# AMQ8405 (syntax error) and AMQ8427 (valid syntax) are followed by command text, not attributes.
_SKIP_BODY = frozenset(f"AMQ{n}{s}" for n in ("8405", "8427") for s in ("", "I", "E", "W", "S"))


def _is_end_line(line: str) -> bool:
    """An echoed command or an English closing line: ends any record, even one with an open value."""
    return _ECHO.match(line) is not None or _CLOSING.match(line) is not None


# --------------------------------------------------------------------------------------------------------------
# Banner


def _banner_qmgr(lines: list[str]) -> str | None:
    ending_lower: str | None = None
    for line in lines:
        text = line.strip()
        if not text or _COPYRIGHT.search(text):
            continue
        m = _STARTING.search(text)
        if m and _MQ_NAME.fullmatch(m.group(1)):
            return m.group(1)
        m = _ENDS_WITH_NAME.search(text)
        if (
            m
            and m.group(1) not in _NOT_NAME_WORDS
            and _MQ_NAME.fullmatch(m.group(1))
            and _LETTER.search(text, 0, m.start())
        ):
            name = m.group(1)
            if not _LOWER.search(name):
                return name
            if ending_lower is None:
                ending_lower = name
        if "MQSC" in text:
            candidates = [
                token.rstrip(".。")
                for token in text.split()
                if token.rstrip(".。") not in _NOT_NAME_WORDS
                and _MQ_NAME.fullmatch(token.rstrip(".。"))
                and not _LOWER.search(token)
            ]
            if len(candidates) == 1:
                return candidates[0]
    return ending_lower


# --------------------------------------------------------------------------------------------------------------
# The parser


def parse_mqsc_file(path: str | os.PathLike[str]) -> ParsedCapture:
    """Parse one runmqsc capture file. :class:`InputError` if it is missing, unreadable or not runmqsc output."""
    source, text = read_text_file(path)
    return parse_mqsc_text(text, source)


def parse_mqsc_text(text: str, source: str) -> ParsedCapture:
    """Parse runmqsc output held in ``text`` (``source`` names it in records and problems).

    Raises :class:`InputError` when the text is not runmqsc output at all (no banner line, no echoed command and
    no AMQnnnn message).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _looks_like_zos(text):
        return parse_zos_text(text, source)  # z/OS command output lands under the same file names
    capture = ParsedCapture(source=source, fmt="mqsc")
    parser = _Parser(text, source, capture, _typed_input(text))
    parser.run()
    if not (parser.headers or parser.saw_echo or parser.saw_banner):
        if not text.strip():
            raise InputError(source, "empty file")
        raise InputError(source, "not runmqsc output (no banner, echoed command or AMQnnnn message)")
    capture.banner_qmgr = _banner_qmgr(parser.banner_lines)
    return capture


_ECHO_NUMBERED = re.compile(r"[ \t]*\d+[ \t]*:(?:[ \t]|$)")
_AMQ_AT_LINE_START = re.compile(r"^[ \t]*AMQ\d{4}[IEWS]?:", re.M)


def _looks_like_zos(text: str) -> bool:
    """z/OS command output (CSQUTIL COMMAND, the console, the REST plain-text answer): CSQxnnns messages and
    no AMQnnnn message at the start of a line."""
    return looks_like_zos(text) and _AMQ_AT_LINE_START.search(text) is None


def _typed_input(text: str) -> frozenset[int]:
    """Offsets of the lines typed at an interactive runmqsc: a run of lines at column 0 right before the echoed
    command ``N : <same text>`` (and its ``   : <text>`` continuation echoes) that repeats them line for line.
    Copied from a terminal, they stand where a record's attribute lines would (issue 17). Linear: each echo
    block looks back over as many lines as it has."""
    if ":" not in text:
        return frozenset()
    lines = text.split("\n")
    starts = [0] * len(lines)
    at = 0
    for i, line in enumerate(lines):
        starts[i] = at
        at += len(line) + 1
    typed: set[int] = set()
    i, n = 0, len(lines)
    while i < n:
        if not _ECHO_NUMBERED.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < n and _ECHO.match(lines[j]) and not _ECHO_NUMBERED.match(lines[j]):
            j += 1
        count = j - i
        if count <= i:
            candidates = lines[i - count:i]
            if all(
                line[:1] not in ("", " ", "\t") and not _ECHO.match(line)
                and line.split() == echo.split(":", 1)[1].split()
                for line, echo in zip(candidates, lines[i:j])
            ):
                typed.update(starts[i - count:i])
        i = j
    return frozenset(typed)


class _Parser:
    def __init__(self, text: str, source: str, capture: ParsedCapture, typed: frozenset[int] = frozenset()) -> None:
        self.typed = typed  # offsets of lines typed at an interactive runmqsc: skipped
        self.text = text
        self.source = source
        self.records = capture.records
        self.problems = capture.problems
        self.headers = 0
        self.saw_echo = False
        self.saw_banner = False
        self.in_banner = True
        self.banner_lines: list[str] = []

    # -- driver ------------------------------------------------------------------------------------------------
    def run(self) -> None:
        text = self.text
        end = len(text)
        rfind = text.rfind
        previous: tuple[int, int, str] | None = None  # (line start, end of "AMQnnnnX:", message id)
        lineno = 1
        # Where the line of the match starts, and its first character that is not a blank: found from the text
        # since the last match only (never the whole line again per match: linear on a long line).
        line_start = scanned = 0
        first_text = _NOT_BLANK.search(text, 0)
        text_at = first_text.start() if first_text else end
        for m in _HEADER.finditer(text):
            at = m.start()
            nl = rfind("\n", scanned, at)
            if nl >= 0:
                line_start = nl + 1
                text_at = _NOT_BLANK.search(text, line_start, at + 1).start()
            scanned = at
            if text_at < at:
                continue  # "AMQnnnn:" inside other text
            self.headers += 1
            if previous is None:
                self._loose(0, line_start, 1)
                self.in_banner = False
                lineno = 1 + text.count("\n", 0, line_start)
            else:
                lineno = self._one(previous, line_start, lineno)
            previous = (line_start, m.end(), m.group(1))
        if previous is None:
            self._loose(0, end, 1)
        else:
            self._one(previous, end, lineno)

    def _one(self, header: tuple[int, int, str], body_end: int, lineno: int) -> int:
        """Read the record whose header is ``header`` and whose text ends at ``body_end``; next line number."""
        text = self.text
        line_start, header_end, message_id = header
        nl = text.find("\n", header_end, body_end)
        body_start = body_end if nl < 0 else nl + 1
        pairs = _FAST_PAIRS.findall(text, body_start, body_end)
        attrs = {k: (v.strip() if p else None) for k, p, v, _junk in pairs}
        if attrs and "" not in attrs and len(attrs) == len(pairs) and message_id not in _SKIP_BODY:
            kind = classify(attrs, message_id)
            for key in REQUIRED_ATTRIBUTES.get(kind, ()):
                if not attrs.get(key):
                    error = missing_key_reason(kind, attrs) or ""
                    break
            else:
                error = bad_name_reason(attrs)
            if error is None:
                self.records.append(MqscRecord(kind, attrs, self.source, lineno, message_id))
            else:
                self.problems.append(ParseProblem(self.source, lineno, error, text[line_start:body_end].rstrip("\n")))
        else:
            self._record(message_id, line_start, body_start, body_end, lineno)
        return lineno + text.count("\n", line_start, body_end)

    # -- lines outside records ------------------------------------------------------------------------------------
    def _loose(self, start: int, stop: int, lineno: int) -> None:
        if start >= stop:
            return
        segment = self.text[start:stop]
        if segment.endswith("\n"):
            segment = segment[:-1]
        orphan_line = 0
        orphan: list[str] = []
        typed = self.typed
        at = start - 1
        for offset, line in enumerate(segment.split("\n")):
            at += 1
            line_at, at = at, at + len(line)
            if typed and line_at in typed:
                pass  # a command typed at an interactive runmqsc (its echo follows)
            elif _ECHO.match(line):
                self.saw_echo = True
                self.in_banner = False
            elif line.strip() and not _CLOSING.match(line) and clean_attribute_line(line) is not None:
                if not orphan:
                    orphan_line = lineno + offset
                orphan.append(line)
                continue
            elif self.in_banner and line.strip():
                self.banner_lines.append(line)
                if _COPYRIGHT.search(line) or "MQSC" in line:
                    self.saw_banner = True
            if orphan:
                self._orphan(orphan_line, orphan)
                orphan = []
        if orphan:
            self._orphan(orphan_line, orphan)

    def _orphan(self, lineno: int, lines: list[str]) -> None:
        self.problems.append(
            ParseProblem(
                self.source,
                lineno,
                f"attributes outside a record: no AMQnnnn message before {clip_line(lines[0])!r}",
                "\n".join(lines),
            )
        )

    # -- one record, the exact way --------------------------------------------------------------------------------
    def _record(self, message_id: str, line_start: int, body_start: int, body_end: int, lineno: int) -> None:
        text = self.text
        if message_id in _SKIP_BODY:
            return  # the bad command / the syntax help follow: no attributes
        error, record_end, pairs = self._scan(body_start, body_end, lineno + 1)
        self._loose(record_end, body_end, lineno + 1 + text.count("\n", body_start, record_end))
        attrs: dict[str, str | None] = {}
        if error is None:
            attrs, error = attribute_map(pairs)
        if error is None and not attrs:
            kind = MESSAGE_KINDS.get(message_id[3:7])
            if kind is None:
                return  # "object not found", "Channel Status not found", ...: a message, not a record
            if body_end == len(text) and not text[body_start:body_end].strip():
                error = f"record truncated at end of file: {message_id} message without attributes"
            else:
                error = f"missing key attribute: {message_id} message without attributes"
        if error is None:
            kind = classify(attrs, message_id)
            error = record_reason(kind, attrs)
            if error is None:
                self.records.append(MqscRecord(kind, attrs, self.source, lineno, message_id))
                return
        raw = text[line_start:record_end].rstrip("\n")
        self.problems.append(ParseProblem(self.source, lineno, error, raw))

    def _scan(self, pos: int, stop: int, lineno: int) -> tuple[str | None, int, list[tuple[str, str | None]]]:
        """Scan a record's lines from ``pos``: (first error, end of the record's text, pairs)."""
        text = self.text
        scanner = Scanner()
        error: str | None = None
        at_eof = stop == len(text)
        while pos < stop:
            nl = text.find("\n", pos, stop)
            line_end = stop if nl < 0 else nl
            next_pos = stop if nl < 0 else nl + 1
            line = text[pos:line_end]
            stripped = line.strip()
            if scanner.open:
                if not stripped or _is_end_line(line) or pos in self.typed:
                    return scanner.unclosed_reason(), pos, scanner.pairs
                scanner.feed(line, lineno)
            elif not stripped:
                pass
            elif _is_end_line(line) or pos in self.typed:
                break  # an echoed command, a closing line, or a command typed at an interactive runmqsc
            elif line[0] not in " \t":
                pairs = clean_attribute_line(line)
                if pairs is None:
                    break  # a translated closing line or other text: the record ends here
                scanner.pairs.extend(pairs)
            elif error is None:
                scanner.feed(line, lineno)
            if error is None and scanner.error:
                error = scanner.error
                scanner = Scanner()  # go on consuming the bad record's lines, without reading them
            pos = next_pos
            lineno += 1
        if error is None and scanner.open:
            reason = scanner.truncated_reason() if at_eof and pos >= stop else scanner.unclosed_reason()
            return reason, pos, scanner.pairs
        return error, pos, scanner.pairs

