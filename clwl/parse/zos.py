"""IBM MQ for z/OS command output -> :class:`ParsedCapture` (standard library only).

Only z/OS has the queue-sharing group attributes of DISPLAY QMGR (``QSGNAME``, ``IGQ``) that the intra-group
queuing delivery path needs, so a z/OS capture must be readable. It comes from CSQUTIL COMMAND (SYSPRINT), from
the console, or from the REST ``runCommand`` plain-text answer of a z/OS queue manager, and lands under the same
file names as a runmqsc capture (:func:`clwl.parse.mqsc.parse_mqsc_text` hands it over when the text holds z/OS
messages and no AMQnnnn message). What it looks like::

    DISPLAY QMGR QMNAME QSGNAME IGQ CLWLUSEQ
    CSQN205I   COUNT=       3, RETURN=00000000, REASON=00000000
    CSQM409I  +MQ1A QMNAME(MQ1A                                            )
    QSGNAME(QSG1)
    IGQ(ENABLED)
    CSQ9022I  +MQ1A CSQMDRTS ' DISPLAY QMGR' NORMAL COMPLETION
    DISPLAY CHSTATUS(*) ALL
    CSQM201I  +MQ1A CSQMDRTC  DISPLAY CHSTATUS DETAILS
    CHSTATUS(TO.MQ2A)
    CHLDISP(PRIVATE)
    ...
    END CHSTATUS DETAILS

How the text is read:

* A message is a line starting (after blanks) with a z/OS message id ``CSQxnnns`` (``CSQM409I``, ``CSQN205I``,
  ``CSQ9022I``, ...). A message of the command server or channel initiator (``CSQM``, ``CSQX``) is a record when
  it carries attributes: the ``KEY(value)`` text after the command prefix on its own line (``CSQM409I +MQ1A
  QMNAME(MQ1A)``), and the lines that follow it until the next message, an ``END <kind> DETAILS`` line, a blank
  line after attributes, or a line at column 0 that is not clean ``KEY(value)`` text (the next command
  CSQUTIL echoes, ``-MQ1A DIS QMGR`` on the console). Its ``message_id`` is the z/OS id.
* CSQM201I announces a multi-line answer: ``CSQM201I +MQ1A CSQMDRTC  DISPLAY CHSTATUS DETAILS`` -- the kind
  named before ``DETAILS`` (CHSTATUS, CLUSQMGR, QCLUSTER, QUEUE, CHANNEL, NAMELIST, QMGR) is the record's kind
  when its attributes alone do not tell (a record that then misses its key attribute is a problem).
  CSQM409I is DISPLAY QMGR.
* Attributes are tokenised by the runmqsc scanner (:mod:`clwl.parse.runmqsc_lexer`): values are blank-padded on z/OS
  (``QMNAME(MQ1A      )`` -> ``MQ1A``), any number per line, at any column. z/OS names DISPLAY CHSTATUS's
  channel ``CHSTATUS(name)``: it is given as ``CHANNEL``, as runmqsc prints it.
* Messages without attributes (``CSQN205I`` counts, ``CSQ9022I ... NORMAL COMPLETION``, ``CSQM297I ... NO
  CHSTATUS FOUND``, CSQUTIL's ``CSQU...`` progress lines, errors such as ``CSQ9023E``) yield neither a record
  nor a problem, except a DISPLAY QMGR message (CSQM409I) or a CSQM201I block with no attribute at all (the
  record was cut). Lines outside messages (echoed commands, banners) are skipped; an indented clean
  ``KEY(value)`` line outside any message is a problem (``attributes outside a record:``).
* DISPLAY GROUP's answer (CSQ5102I ``Queue managers in group QSG1`` and its table, up to ``End of queue managers
  report``) gives one ``QSGMEMBER`` record per member line (``QSGNAME``, ``QSGMEMBER``, ``QMNUM``, ``QMSTATUS``);
  a line of the table that is none of header, rule or member is a problem (``not a DISPLAY GROUP member line:``).
  DISPLAY CFSTRUCT's CSQM201I blocks give ``CFSTRUCT`` records (``CFSTRUCT``, ``CFLEVEL``, ``OFFLOAD``, ...).
* ``banner_qmgr``: the queue manager CSQUTIL connected to (``CSQU121I Connected to queue manager MQ1A``), else
  ``None`` (DISPLAY QMGR's QMNAME names it then).

Problems have the runmqsc reason prefixes (``unbalanced parenthesis:``, ``unclosed quote:``, ``not KEY(value)
or a keyword:``, ``record truncated at end of file:``, ``missing key attribute:``, ``duplicate attribute:``,
``attributes outside a record:``). ``ParsedCapture.fmt`` is ``"zos"``.
"""

from __future__ import annotations

import re

from clwl.parse.common import InputError, MqscRecord, ParsedCapture, ParseProblem
from clwl.parse.record_kinds import MESSAGE_KINDS, QUEUE_KINDS, classify, record_reason
from clwl.parse.runmqsc_lexer import Scanner, attribute_map, clean_attribute_line, clip_line

__all__ = ["looks_like_zos", "parse_zos_text"]

_MESSAGE = re.compile(r"[ \t]*(CSQ[0-9A-Z]\d{3}[IEWAD])(?=[ \t]|$)")
_ZOS_AT_LINE_START = re.compile(r"^[ \t]*CSQ[0-9A-Z]\d{3}[IEWAD](?:[ \t]|$)", re.M)
_FIRST_KEY = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_]*\(")
_DETAILS = re.compile(r"\b([A-Z]+)[ \t]+DETAILS[ \t]*$", re.I)
_END_DETAILS = re.compile(r"[ \t]*END[ \t]+[A-Z]+[ \t]+DETAILS[ \t]*$", re.I)
_CONNECTED = re.compile(r"CSQU121I\s+Connected to queue manager\s+([A-Za-z0-9._/%@#$]{1,48})")

# The kind a CSQM201I block announces ("DISPLAY <word> DETAILS") -> an AMQ message id that stands for it, so that
# clwl.parse.record_kinds.classify breaks ties as it does for runmqsc (a record missing its key is then a problem):
# the AMQ header of each kind, and the queue header (AMQ8409I) for each type of queue.
_WORD_HINT = {**{kind: "AMQ8409I" for kind in QUEUE_KINDS},
              **{kind: f"AMQ{number}I" for number, kind in MESSAGE_KINDS.items()}}
# DISPLAY CFSTRUCT has no runmqsc counterpart: any hint not in MESSAGE_KINDS lets classify read the kind from the
# CFSTRUCT attribute, and makes a CSQM201I block without attributes a cut record.
_WORD_HINT["CFSTRUCT"] = "CSQCFSTR"
# z/OS message numbers with a fixed kind: CSQM409I is DISPLAY QMGR's answer.
_MESSAGE_HINT = {"CSQM409": "AMQ8408I"}
# DISPLAY GROUP (CSQ5100I ... CSQ5102I): the members of the queue-sharing group as a table, one line each,
# ``MQ1A   1 +MQ1A    ACTIVE    930 DB2A ACTIVE`` (name, number, command prefix, status, ...), until "End of
# queue managers report". z/OS queue manager names are 1-4 characters.
_GROUP_HEADER = re.compile(r"\bQueue managers in group\s+([A-Z@#$][A-Z0-9@#$]{0,3})\b", re.I)
_GROUP_MEMBER = re.compile(r"[ \t]*([A-Z@#$][A-Z0-9@#$]{0,3})[ \t]+(\d+)[ \t]+(\S+)[ \t]+([A-Z]+)\b")
_GROUP_SKIP = re.compile(r"[ \t]*(?:Name[ \t]+Num\b.*|[- \t]+)$")
_GROUP_END = re.compile(r"[ \t]*End of queue managers report", re.I)


def looks_like_zos(text: str) -> bool:
    """Whether ``text`` holds z/OS command output (a CSQxnnns message at the start of a line)."""
    return _ZOS_AT_LINE_START.search(text) is not None


def parse_zos_text(text: str, source: str) -> ParsedCapture:
    """Parse z/OS command output held in ``text``; :class:`InputError` when it holds no z/OS message at all."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not looks_like_zos(text):
        if not text.strip():
            raise InputError(source, "empty file")
        raise InputError(source, "not z/OS command output (no CSQxnnns message)")
    capture = ParsedCapture(source=source, fmt="zos")
    connected = _CONNECTED.search(text)
    if connected:
        capture.banner_qmgr = connected.group(1)
    _Reader(source, capture).run(text)
    return capture


def _readable(line: str) -> bool:
    """``line`` is KEY(value) text and bare keywords (``CURRENT``), as CSQUTIL prints a record's lines."""
    scanner = Scanner()
    scanner.feed(line, 0)
    return scanner.error is None and bool(scanner.pairs or scanner.open)


class _Block:
    """One message being read: its header and the attribute lines that follow."""

    __slots__ = ("line", "message_id", "hint", "scanner", "error", "lines", "wants_attributes", "ended")

    def __init__(self, line: int, message_id: str, hint: str) -> None:
        self.line = line
        self.message_id = message_id
        self.hint = hint  # AMQ id standing for the announced kind, or ""
        self.scanner = Scanner()
        self.error: str | None = None
        self.lines: list[str] = []
        self.wants_attributes = bool(hint) and message_id.startswith("CSQM")
        self.ended = False


class _Reader:
    def __init__(self, source: str, capture: ParsedCapture) -> None:
        self.source = source
        self.capture = capture
        self.group: str | None = None  # inside DISPLAY GROUP's member table: the group's name

    def _group_line(self, line: str, lineno: int) -> bool:
        """A line of DISPLAY GROUP's member table taken (member, header, rule, end); False when the table is over."""
        if _GROUP_END.match(line):
            self.group = None
            return True
        if not line.strip() or _GROUP_SKIP.match(line):
            return True
        m = _GROUP_MEMBER.match(line)
        if m is None:
            self.capture.problems.append(ParseProblem(
                self.source, lineno, f"not a DISPLAY GROUP member line: {clip_line(line)!r}", line))
            return True
        self.capture.records.append(MqscRecord(
            "QSGMEMBER", {"QSGNAME": self.group, "QSGMEMBER": m.group(1).upper(), "QMNUM": m.group(2),
                          "QMSTATUS": m.group(4).upper()}, self.source, lineno, "CSQ5102I"))
        return True

    def run(self, text: str) -> None:
        block: _Block | None = None
        orphan: list[str] = []
        orphan_line = 0
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for lineno, line in enumerate(lines, 1):
            m = _MESSAGE.match(line)
            if m is None and self.group is not None and self._group_line(line, lineno):
                continue
            if m:
                self.group = None
                if orphan:
                    self._orphan(orphan_line, orphan)
                    orphan = []
                if block is not None:
                    self._finish(block, at_eof=False)
                block = self._start(m.group(1), line, m.end(), lineno)
                continue
            if block is not None and not block.ended:
                if self._feed(block, line, lineno):
                    continue
                self._finish(block, at_eof=False)
                block = None
            elif block is not None:
                self._finish(block, at_eof=False)
                block = None
            # outside any message: echoed commands, CSQUTIL text, banners are skipped
            if line[:1] in (" ", "\t") and line.strip() and clean_attribute_line(line) is not None:
                if not orphan:
                    orphan_line = lineno
                orphan.append(line)
            elif orphan:
                self._orphan(orphan_line, orphan)
                orphan = []
        if block is not None:
            self._finish(block, at_eof=True)
        if orphan:
            self._orphan(orphan_line, orphan)

    def _start(self, message_id: str, line: str, after_id: int, lineno: int) -> _Block:
        rest = line[after_id:]
        hint = _MESSAGE_HINT.get(message_id[:7], "")
        if message_id.startswith("CSQM201"):
            details = _DETAILS.search(rest)
            if details:
                hint = _WORD_HINT.get(details.group(1).upper(), "")
        block = _Block(lineno, message_id, hint)
        block.lines.append(line)
        if message_id.startswith("CSQ5102"):
            header = _GROUP_HEADER.search(rest)
            self.group = header.group(1).upper() if header else None
        if not message_id.startswith(("CSQM", "CSQX")):
            block.ended = True  # CSQN, CSQ9, CSQU, ... messages carry no attributes; their text is skipped
            return block
        key = _FIRST_KEY.search(rest)
        if key is not None:
            # The command prefix (+MQ1A) and message text come before the first KEY( on the header line.
            block.wants_attributes = True
            self._scan(block, rest[key.start():], lineno)
        return block

    def _feed(self, block: _Block, line: str, lineno: int) -> bool:
        """Take ``line`` into ``block``; False when the line is not the block's (the block ends before it)."""
        stripped = line.strip()
        if block.scanner.open:
            if not stripped or _END_DETAILS.match(line):
                return False
            block.lines.append(line)
            self._scan(block, line, lineno)
            return True
        if not stripped:
            # A blank line ends a message that has its attributes (or announces none).
            if block.scanner.pairs or not block.wants_attributes:
                return False
            block.lines.append(line)
            return True
        if _END_DETAILS.match(line):
            block.lines.append(line)
            block.ended = True
            return True
        if not block.wants_attributes and not block.message_id.startswith("CSQM201"):
            return False  # a message without attributes (CSQM297I ...): what follows is not its
        if line[0] not in " \t" and not block.message_id.startswith("CSQM201") and not _readable(line):
            return False  # an echoed command or other text at column 0 (a CSQM201I block goes on to its END)
        block.wants_attributes = True
        block.lines.append(line)
        self._scan(block, line, lineno)
        return True

    def _scan(self, block: _Block, line: str, lineno: int) -> None:
        if block.error is not None:
            return
        block.scanner.feed(line, lineno)
        if block.scanner.error:
            block.error = block.scanner.error

    def _finish(self, block: _Block, at_eof: bool) -> None:
        scanner = block.scanner
        raw = "\n".join(block.lines).rstrip("\n")
        error = block.error
        if error is None and scanner.open:
            error = scanner.truncated_reason() if at_eof else scanner.unclosed_reason()
        attrs: dict[str, str | None] = {}
        if error is None:
            attrs, error = attribute_map(scanner.pairs)
        if error is None and not attrs:
            if not block.hint or not block.message_id.startswith("CSQM"):
                return  # a message, not a record
            if at_eof and not block.ended:
                error = f"record truncated at end of file: {block.message_id} message without attributes"
            else:
                error = f"missing key attribute: {block.message_id} message without attributes"
        if error is None:
            if "CHSTATUS" in attrs and "CHANNEL" not in attrs:
                # z/OS DISPLAY CHSTATUS names the channel CHSTATUS(name); runmqsc prints CHANNEL(name).
                attrs = {("CHANNEL" if k == "CHSTATUS" else k): v for k, v in attrs.items()}
            kind = classify(attrs, block.hint)
            error = record_reason(kind, attrs)
            if error is None:
                self.capture.records.append(MqscRecord(kind, attrs, self.source, block.line, block.message_id))
                return
        self.capture.problems.append(ParseProblem(self.source, block.line, error, raw))

    def _orphan(self, lineno: int, lines: list[str]) -> None:
        self.capture.problems.append(ParseProblem(
            self.source, lineno,
            f"attributes outside a record: no CSQxnnns message before {clip_line(lines[0])!r}", "\n".join(lines)))
