"""Browses of a (cluster) transmission queue: amqsbcg output and dmpmqmsg (qload) files.

Each message becomes one :class:`XmitqMessage`, or one :class:`ParseProblem` when it cannot be accepted,
so ``len(records) + len(problems)`` is the number of messages in the file.

What is read, and from where (see docs/formats.md, "dmpmqmsg dumps"):

* The **outer** message descriptor, the one amqsbcg prints as ``****Message descriptor****`` and
  dmpmqmsg writes as ``A <code> <value>`` lines. Its AccountingToken is the one the re-allocation rule looks
  at: all zeros = the message is not eligible for re-allocation (bind on open, bind on group with logical
  order, or the target queue manager named by the application).
* The message data, which on a transmission queue starts with an MQXQH: StrucId ``'XQH '``, Version (4-byte
  integer), RemoteQName CHAR48, RemoteQMgrName CHAR48, then the original MQMD version 1 (324 bytes), so the
  application data starts at byte 428. The remote names, and the embedded MQMD's AccountingToken and
  PutDate/PutTime, are read from the bytes (never from amqsbcg's character column). When the data is too
  short for a field, or does not start with an MQXQH, that field is ``None``; that is not a problem.

Assumptions (the parts of these formats no public source fixed for us):

* amqsbcg: a message starts at `` MQGET of message number N, ...`` (N becomes ``position``); the browsed
  queue comes from the `` MQOPEN - 'QUEUE'`` line; the data length from `` length - N bytes`` or
  `` length - N of M bytes`` (M is the message length, N the bytes dumped). A dump that holds fewer bytes
  than it announces means the file was cut: that message is a problem. A label printed with no value
  (``AccountingToken :``) takes its value from the next line.
* dmpmqmsg: ``*`` lines are comments (``* Queue = NAME`` gives the queue); a message starts at an ``N`` line
  or at ``A VER`` when the current message already has attributes; ``A <code> <value>`` attributes use the
  three-letter codes of IBM's table (hex for MSI, COI, ACC, GRP). The message data, whatever ``-d`` style
  wrote it, is the concatenation in order of: ``X <hex>`` lines (``-dx``; hex may be grouped with blanks;
  ``-da`` and the other character-column styles add the bytes as characters after the hex, between ``<`` and
  ``>`` or after two or more blanks: that column is dropped), ``S "text"`` lines (``-dA``: the characters
  between the double quotes, taken as Latin-1 bytes; an ``S`` line without quotes is taken as it stands) and
  ``T text`` lines (``-dt``, text as it stands). Other one-letter line types (properties, ...) carry nothing
  used here and are ignored; a line that is not ``<letter> <text>`` makes its message a problem, and a data
  line before any message is a problem of its own.
* The byte order of the MQXQH integers is detected from its Version field (which is 1); when that is not
  conclusive the outer MD Encoding decides (``Encoding & 0x0F``: 1 = big-endian, 2 = little-endian, e.g.
  273 and 546). Character fields are ASCII/Latin-1, or EBCDIC (code page 500) when the StrucId is EBCDIC.
* PutDate/PutTime (``YYYYMMDD`` / ``HHMMSSTH``) are GMT, as MQ sets them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from clwl.parse.common import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    InputError,
    ParseProblem,
    checked_int,
    clip,
    read_input_bytes,
)

__all__ = [
    "XmitqMessage",
    "parse_amqsbcg_text",
    "parse_dmpmqmsg_text",
    "parse_xmitq_file",
    "read_xmitq_payload",
]

XQH_LENGTH = 104  # StrucId(4) Version(4) RemoteQName(48) RemoteQMgrName(48)
MD1_LENGTH = 324
# Offsets inside the MQMD version 1.
_MD_ACCOUNTING = 208
_MD_PUTDATE = 304
_MD_PUTTIME = 312


@dataclass(frozen=True, slots=True)
class XmitqMessage:
    """One message browsed on a transmission queue."""

    source: str
    line: int  # 1-based line where the message starts
    position: int  # 1-based message number in the browse
    queue: str | None  # the browsed queue, when the output names it
    msg_id: str  # hex, upper case (outer MD)
    correl_id: str  # hex; on a cluster xmitq it identifies the cluster-sender channel
    accounting_token: str  # 64 hex digits (outer MD)
    accounting_token_zero: bool  # all zeros: not eligible for re-allocation
    put_datetime: datetime  # outer PutDate + PutTime, UTC
    format: str  # outer MD Format, blanks stripped ("MQXMIT")
    persistence: int | None
    priority: int | None
    group_id: str | None  # hex (None for an MD version 1 without it)
    msg_seq_number: int | None
    length: int  # message length in bytes
    remote_q_name: str | None  # from the MQXQH
    remote_qmgr_name: str | None
    inner_accounting_token: str | None  # from the embedded MQMD, when the data holds it
    inner_put_datetime: datetime | None


# --------------------------------------------------------------------------------------------------
# shared helpers

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
# Only the AccountingToken's length is checked: the re-allocation rule reads all 32 bytes. MsgId, CorrelId
# and GroupId are kept as printed (they are keys, and constructed samples do not always hold 24 bytes).
_FIELD_LEN = {"AccountingToken": 32}


class _Reject(Exception):
    """A message cannot be accepted; the text is the problem's reason."""


def _hex_field(name: str, value: str | None, required: bool) -> str | None:
    if value is None or value == "":
        if required:
            raise _Reject(f"missing {name}")
        return None
    if len(value) % 2 or not _HEX_DIGITS.issuperset(value):
        raise _Reject(f"bad hex in {name}")
    size = _FIELD_LEN.get(name)
    if size is not None and len(value) != 2 * size:
        raise _Reject(f"{name} is not {size} bytes ({len(value) // 2} bytes)")
    return value.upper()


def _int_field(name: str, value: str | None) -> int | None:
    """An MQMD integer (an MQLONG: 32 bits, signed)."""
    if value is None or value == "":
        return None
    try:
        return checked_int(value, INT32_MIN, INT32_MAX)
    except ValueError as exc:
        if "out of range" in str(exc):
            raise _Reject(f"{name} {exc}: not an MQLONG") from None
        raise _Reject(f"bad integer in {name}: {clip(value)!r}") from None


def _count(what: str, digits: str, hi: int) -> int:
    """A number amqsbcg prints (message number, lengths): 0..hi, else _Reject."""
    try:
        return checked_int(digits, 0, hi)
    except ValueError as exc:
        raise _Reject(f"{what} {exc}") from None


def _put_datetime(date: str | None, time: str | None) -> datetime:
    if date is None:
        raise _Reject("missing PutDate")
    if time is None:
        raise _Reject("missing PutTime")
    result = _mq_datetime(date, time)
    if result is None:
        if _mq_datetime(date, "00000000") is None:
            raise _Reject(f"bad PutDate {date!r}")
        raise _Reject(f"bad PutTime {time!r}")
    return result


def _mq_datetime(date: str, time: str) -> datetime | None:
    """``YYYYMMDD`` + ``HHMMSSTH`` (GMT) -> aware UTC datetime, or None when either is not valid."""
    if len(date) != 8 or len(time) != 8 or not date.isdigit() or not time.isdigit():
        return None
    try:
        return datetime(
            int(date[0:4]), int(date[4:6]), int(date[6:8]),
            int(time[0:2]), int(time[2:4]), int(time[4:6]), int(time[6:8]) * 10_000,
            tzinfo=timezone.utc,
        )
    except ValueError:
        return None


def _byte_order(data: bytes, encoding: int | None) -> str:
    """Byte order of the MQXQH integers: from its Version field (1), else the MD Encoding."""
    if len(data) >= 8:
        if data[4:8] == b"\x00\x00\x00\x01":
            return "big"
        if data[4:8] == b"\x01\x00\x00\x00":
            return "little"
    if encoding is not None and encoding & 0x0F == 2:
        return "little"
    return "big"


_XQH_ASCII = b"XQH "
_XQH_EBCDIC = b"\xe7\xd8\xc8\x40"
_MD_ASCII = b"MD  "
_MD_EBCDIC = b"\xd4\xc4\x40\x40"


def read_xmitq_payload(data: bytes, encoding: int | None = None) -> dict:
    """What the MQXQH (and the MQMD v1 inside it) at the start of ``data`` says.

    Returns ``remote_q_name``, ``remote_qmgr_name``, ``inner_accounting_token``, ``inner_put_datetime``,
    ``xqh_version`` and ``byte_order``; a value is ``None`` when the data is too short for it or does not
    start with an MQXQH.
    """
    out = {
        "remote_q_name": None,
        "remote_qmgr_name": None,
        "inner_accounting_token": None,
        "inner_put_datetime": None,
        "xqh_version": None,
        "byte_order": None,
    }
    head = data[:4]
    if head == _XQH_ASCII:
        codec, md_id = "latin-1", _MD_ASCII
    elif head == _XQH_EBCDIC:
        codec, md_id = "cp500", _MD_EBCDIC
    else:
        return out
    order = _byte_order(data, encoding)
    out["byte_order"] = order
    if len(data) >= 8:
        out["xqh_version"] = int.from_bytes(data[4:8], order, signed=True)
    if len(data) >= 56:
        out["remote_q_name"] = data[8:56].decode(codec).rstrip(" \x00") or None
    if len(data) >= XQH_LENGTH:
        out["remote_qmgr_name"] = data[56:104].decode(codec).rstrip(" \x00") or None
    md = data[XQH_LENGTH:]
    if md[:4] != md_id:
        return out
    if len(md) >= _MD_ACCOUNTING + 32:
        out["inner_accounting_token"] = md[_MD_ACCOUNTING:_MD_ACCOUNTING + 32].hex().upper()
    if len(md) >= _MD_PUTTIME + 8:
        out["inner_put_datetime"] = _mq_datetime(
            md[_MD_PUTDATE:_MD_PUTDATE + 8].decode(codec),
            md[_MD_PUTTIME:_MD_PUTTIME + 8].decode(codec),
        )
    return out


def _build(
    source: str,
    line: int,
    position: int,
    queue: str | None,
    md: dict[str, str],
    data: bytes,
    length: int,
) -> XmitqMessage:
    """Validate one message's fields (raises _Reject) and build the record."""
    msg_id = _hex_field("MsgId", md.get("MsgId"), True)
    correl_id = _hex_field("CorrelId", md.get("CorrelId"), True)
    token = _hex_field("AccountingToken", md.get("AccountingToken"), True)
    group_id = _hex_field("GroupId", md.get("GroupId"), False)
    put_dt = _put_datetime(md.get("PutDate"), md.get("PutTime"))
    encoding = _int_field("Encoding", md.get("Encoding"))
    priority = _int_field("Priority", md.get("Priority"))
    persistence = _int_field("Persistence", md.get("Persistence"))
    seq = _int_field("MsgSeqNumber", md.get("MsgSeqNumber"))
    inner = read_xmitq_payload(data, encoding)
    return XmitqMessage(
        source=source,
        line=line,
        position=position,
        queue=queue,
        msg_id=msg_id,
        correl_id=correl_id,
        accounting_token=token,
        accounting_token_zero=token.count("0") == len(token),
        put_datetime=put_dt,
        format=(md.get("Format") or "").strip(),
        persistence=persistence,
        priority=priority,
        group_id=group_id,
        msg_seq_number=seq,
        length=length,
        remote_q_name=inner["remote_q_name"],
        remote_qmgr_name=inner["remote_qmgr_name"],
        inner_accounting_token=inner["inner_accounting_token"],
        inner_put_datetime=inner["inner_put_datetime"],
    )


# --------------------------------------------------------------------------------------------------
# amqsbcg

_MQGET = re.compile(r"^\s*MQGET of message number (\d+)")
_MQOPEN = re.compile(r"^\s*MQOPEN - '([^']*)'")
_MD_HEADER = "****Message descriptor****"
_DATA_HEADER = re.compile(r"^\s*\*{4}\s*Message\s*\*{4}\s*$")
_LENGTH = re.compile(r"^\s*length - (\d+)(?: of (\d+))? bytes")
# "Label : value" pairs, up to two on a line; a value is X'hex', 'text' or a bare word.
# A label starts where a word starts (leading digits skipped): retried at each letter of a long word, the label
# made a line quadratic. Finds what the pattern without the lookbehind found.
_PAIR = re.compile(r"(?<![A-Za-z0-9])[0-9]*+([A-Za-z][A-Za-z0-9]*+)\s*+:\s*+(X'[^']*'|'[^']*'|[^\s']+)?")
_DUMP = re.compile(r"^\s*([0-9A-Fa-f]{8}):(.*)$")


def _md_value(raw: str) -> str:
    if raw.startswith("X'") and raw.endswith("'"):
        return raw[2:-1]
    if raw.startswith("'") and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1]
    return raw


_STRIPPED = frozenset({"Format", "PutApplType", "MsgSeqNumber", "Offset", "MsgFlags", "OriginalLength"})


class _Bcg:
    """State of one amqsbcg message while its lines are read."""

    __slots__ = ("line", "position", "md", "pending", "in_data", "shown", "total", "data", "error", "lines")

    def __init__(self, line: int, position: int):
        self.line = line
        self.position = position
        self.md: dict[str, str] = {}
        self.pending: str | None = None  # label printed without a value, waiting for the next line
        self.in_data = False
        self.shown: int | None = None  # bytes the dump announces
        self.total: int | None = None  # message length
        self.data = bytearray()
        self.error: str | None = None
        self.lines: list[str] = []


def parse_amqsbcg_text(text: str, source: str) -> tuple[list[XmitqMessage], list[ParseProblem]]:
    """Messages of amqsbcg (amqsbcgc) output."""
    records: list[XmitqMessage] = []
    problems: list[ParseProblem] = []
    queue: str | None = None
    cur: _Bcg | None = None

    def finish(m: _Bcg) -> None:
        raw = "\n".join(m.lines).rstrip("\n")
        try:
            if m.error:
                raise _Reject(m.error)
            if not m.in_data:
                raise _Reject("message cut off before its data")
            shown = m.shown if m.shown is not None else len(m.data)
            if len(m.data) < shown:
                raise _Reject(f"message data cut off: {len(m.data)} of {shown} bytes")
            total = m.total if m.total is not None else shown
            records.append(_build(source, m.line, m.position, queue, m.md, bytes(m.data), total))
        except _Reject as exc:
            problems.append(ParseProblem(source, m.line, str(exc), raw))

    for lineno, line in enumerate(text.splitlines(), 1):
        match = _MQGET.match(line)
        if match:
            if cur is not None:
                finish(cur)
            try:
                cur = _Bcg(lineno, _count("message number", match.group(1), INT32_MAX))
            except _Reject as exc:
                cur = _Bcg(lineno, 0)
                cur.error = str(exc)
            cur.lines.append(line)
            continue
        if cur is None:
            match = _MQOPEN.match(line)
            if match:
                queue = match.group(1).strip() or None
            continue  # banner lines before the first message
        if cur.in_data:
            match = _DUMP.match(line)
            if match:
                cur.lines.append(line)
                if cur.error:
                    continue
                body = match.group(2)
                quote = body.find("'")
                if quote >= 0:
                    body = body[:quote]
                try:
                    for group in body.split():
                        if len(group) % 2:
                            raise ValueError
                        cur.data += bytes.fromhex(group)
                except ValueError:
                    cur.error = f"bad hex in message data at offset {match.group(1)}"
                continue
            match = _LENGTH.match(line)
            if match and cur.shown is None:
                cur.lines.append(line)
                try:
                    cur.shown = _count("length", match.group(1), INT64_MAX)
                    cur.total = _count("length", match.group(2) or match.group(1), INT64_MAX)
                except _Reject as exc:
                    cur.shown = cur.total = 0
                    cur.error = cur.error or str(exc)
                continue
            if line.strip():
                # the end of this message's output: "No more messages", MQCLOSE, MQDISC, ...
                finish(cur)
                cur = None
                match = _MQOPEN.match(line)
                if match:
                    queue = match.group(1).strip() or None
            continue
        cur.lines.append(line)
        stripped = line.strip()
        if not stripped:
            continue
        if _DATA_HEADER.match(line):
            cur.in_data = True
            continue
        if stripped.startswith("**"):  # "****Message descriptor****", "** Identity Context", properties
            continue
        pairs = _PAIR.findall(line)
        if cur.pending is not None and not pairs:
            cur.md[cur.pending] = _md_value(stripped.split()[0])
            cur.pending = None
            continue
        if cur.pending is not None and pairs and stripped.startswith("X'"):
            cur.md[cur.pending] = _md_value(stripped.split()[0])
            cur.pending = None
            continue
        cur.pending = None
        for label, value in pairs:
            if value == "":
                cur.pending = label
            else:
                value = _md_value(value)
                cur.md[label] = value.strip() if label in _STRIPPED else value
    if cur is not None:
        finish(cur)
    return records, problems


# --------------------------------------------------------------------------------------------------
# dmpmqmsg

_DMP_CODES = {
    "VER": "Version", "RPT": "Report", "MST": "MsgType", "EXP": "Expiry", "FDB": "Feedback",
    "ENC": "Encoding", "CCS": "CodedCharSetId", "FMT": "Format", "PRI": "Priority",
    "PER": "Persistence", "MSI": "MsgId", "COI": "CorrelId", "BOC": "BackoutCount",
    "RTQ": "ReplyToQ", "RTM": "ReplyToQMgr", "USR": "UserIdentifier", "ACC": "AccountingToken",
    "AIX": "ApplIdentityData", "PAT": "PutApplType", "PAN": "PutApplName", "PTD": "PutDate",
    "PTT": "PutTime", "AOX": "ApplOriginData", "GRP": "GroupId", "MSQ": "MsgSeqNumber",
    "OFF": "Offset", "MSF": "MsgFlags", "ORL": "OriginalLength",
}
_DMP_QUEUE = re.compile(r"^\*\s*Queue\s*[=:]\s*(\S+)")


class _Dmp:
    __slots__ = ("line", "position", "md", "data", "has_data", "error", "lines")

    def __init__(self, line: int, position: int):
        self.line = line
        self.position = position
        self.md: dict[str, str] = {}
        self.data = bytearray()
        self.has_data = False
        self.error: str | None = None
        self.lines: list[str] = []


def _dmp_hex(text: str) -> str | None:
    """The hex digits of an ``X`` line, or None when they are not hex.

    ``-dx`` writes the bytes as one run of hex digits; ``-da`` (and the other character-column styles) add the
    bytes as characters after it, between ``<`` and ``>`` (``X 58514820 <XQH >``), or after a run of two or more
    blanks. The column repeats the bytes: it is dropped, never read."""
    column = text.find("<")
    if column >= 0:
        text = text[:column]
    else:
        text = text.strip()
        gap = _COLUMN_GAP.search(text)
        if gap is not None:
            text = text[:gap.start()]
    digits = text.replace(" ", "").replace("\t", "")
    if len(digits) % 2 or not _HEX_DIGITS.issuperset(digits):
        return None
    return digits


def _dmp_text(text: str) -> str:
    """The characters of an ``S`` (or ``-dt`` ``T``) line: ``-dA`` writes them between double quotes
    (``S "XQH "``), which are not data; an unquoted line is taken as it stands."""
    quoted = text.rstrip(" \t\r")
    if len(quoted) >= 2 and quoted[0] == '"' and quoted[-1] == '"':
        return quoted[1:-1]
    return text


_COLUMN_GAP = re.compile(r"[ \t]{2,}")


def parse_dmpmqmsg_text(text: str, source: str) -> tuple[list[XmitqMessage], list[ParseProblem]]:
    """Messages of a dmpmqmsg (qload) output file."""
    records: list[XmitqMessage] = []
    problems: list[ParseProblem] = []
    queue: str | None = None
    cur: _Dmp | None = None
    count = 0

    def finish(m: _Dmp) -> None:
        raw = "\n".join(m.lines)
        try:
            if m.error:
                raise _Reject(m.error)
            if not m.has_data:
                raise _Reject("message cut off before its data")
            records.append(_build(source, m.line, m.position, queue, m.md, bytes(m.data), len(m.data)))
        except _Reject as exc:
            problems.append(ParseProblem(source, m.line, str(exc), raw))

    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        kind = line[0]
        if kind == "*":
            match = _DMP_QUEUE.match(line)
            if match:
                queue = match.group(1)
            continue
        if len(line) > 1 and line[1] != " ":
            kind = "?"
        if kind == "N":
            if cur is not None:
                finish(cur)
            count += 1
            cur = _Dmp(lineno, count)
            cur.lines.append(line)
            continue
        if kind == "A" and cur is not None and line[2:5] == "VER" and (cur.md or cur.has_data):
            finish(cur)
            cur = None
        if cur is None:
            if kind != "A":
                problems.append(ParseProblem(source, lineno, "line outside any message", line))
                continue
            count += 1  # a file without N lines: each "A VER" starts a message
            cur = _Dmp(lineno, count)
        cur.lines.append(line)
        if cur.error:
            continue
        if kind == "A":
            code, _, value = line[2:].partition(" ")
            name = _DMP_CODES.get(code.strip())
            if name is not None:
                cur.md[name] = value.strip()
        elif kind == "X":
            value = _dmp_hex(line[2:])
            cur.has_data = True
            if value is None:
                cur.error = f"bad hex in message data at line {lineno}"
            else:
                cur.data += bytes.fromhex(value)
        elif kind == "S" or kind == "T":
            cur.has_data = True
            cur.data += _dmp_text(line[2:]).encode("latin-1", "replace")
        elif kind == "?" or not ("A" <= kind <= "Z"):
            cur.error = f"unrecognised line {line.strip()[:60]!r}"
        # other one-letter line types (properties, ...) carry nothing used here
    if cur is not None:
        finish(cur)
    return records, problems


# --------------------------------------------------------------------------------------------------
# files

_IS_AMQSBCG = re.compile(r"MQGET of message number \d+|\*{4}Message descriptor\*{4}|AMQSBCG0")
_IS_DMPMQMSG = re.compile(r"^A VER ", re.M)
_IS_DMP_HEADER = re.compile(r"^\* (Dumper|QLOAD) Version", re.M)


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, else Latin-1); InputError when it cannot be read."""
    data = read_input_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_xmitq_file(path: str | Path) -> tuple[list[XmitqMessage], list[ParseProblem]]:
    """A transmission-queue browse file: amqsbcg or dmpmqmsg output, chosen by content."""
    text = read_text(path)
    source = str(path)
    bcg = _IS_AMQSBCG.search(text)
    dmp = _IS_DMP_HEADER.search(text) or _IS_DMPMQMSG.search(text)
    if bcg and (not dmp or bcg.start() < dmp.start()):
        return parse_amqsbcg_text(text, source)
    if dmp:
        return parse_dmpmqmsg_text(text, source)
    raise InputError(source, "not amqsbcg or dmpmqmsg output")
