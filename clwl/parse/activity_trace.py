"""IBM MQ application activity trace as printed by IBM's sample program amqsact (docs/activity-trace.md).

Two printed forms, both as amqsact's format strings print them:

* verbose (``amqsact -v``): per trace message a header block (``MonitoringType: MQI Activity Trace``, the
  message's ``Correl_id`` as a hex dump, ``QueueManager: 'QM1'``, ``SeqNumber: 0``, ...), then one
  ``MQI Operation: n`` block per MQI call with its fields indented by two blanks (``Operation Id: MQXF_PUT``,
  ``Put Options: 8260``, byte strings such as ``Msg_id:`` and ``MQMD Structure:`` as hex dump lines), and a
  line of 77 ``=`` closing the message;
* summary (amqsact without ``-v``): the same header block, then a table of one line per operation
  (``Tid Date Time Operation CompCode MQRC HObj (ObjName)``). It carries no options, lengths or ids, so it
  yields operation records and no put events (a note says so).

What a parse returns (:class:`ActivityTraceResult`):

* ``operations``: one :class:`TraceOperation` per MQI call (every operation, puts or not: the bronze rows),
  its printed fields kept raw in ``fields``;
* ``puts``: one :class:`TracedPut` per successful MQPUT / MQPUT1 (completion code not MQCC_FAILED): a
  :class:`~clwl.parse.puts.PutRecord` (``source`` is the file, as for every parser; ``TracedPut.origin`` is
  :data:`ORIGIN`) with MQ's own answer (``observed_qmgr`` / ``observed_xmitq``) where the trace level carries
  it, or None and ``observed_reason`` saying why;
* ``problems``: a :class:`ParseProblem` per operation block that cannot be used (truncated, a field missing,
  a bad number, a hex dump line that is not hex, a put on a handle whose MQOPEN is not in the input), per
  stray line, and per header value refused (SeqNumber, ApplicationPid, Trace Detail Level, the Correl_id dump:
  the value is then unknown, the message's operations still read); never an exception;
* ``notes``: file-level remarks (summary form, unknown operation ids, record count mismatch);
* ``counts``: operations by name (MQGET, MQINQ, MQCMIT, ... are counted, never quarantined).

Handles: a connection is the trace message's ``Correl_id`` (MQ sets the MQMD CorrelId of an activity trace
message to the traced connection's id); its open handles live in a :class:`TraceState` that spans trace
messages (SeqNumber 0, 1, ... of one connection) and, when the caller passes it on, files. MQCLOSE and
MQDISC end handles. A put whose MQOPEN has not been seen waits until the end of the input for an MQOPEN of
the same handle that comes before it in the connection's order (SeqNumber, then operation), then becomes a
problem.

Times: ``High Res Time`` (microseconds since 1970-01-01 UTC, MEDIUM and HIGH) when printed; otherwise
``OperationDate`` + ``OperationTime``, printed in the queue manager's local time without a zone, read in
``tz`` (default UTC). Linear in the input; with ``on_chunk`` the records go out in chunks.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Callable, Iterable, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clwl.parse.common import InputError, ParseProblem, clip
from clwl.parse.puts import PutRecord

__all__ = [
    "ACTIVITY_TRACE_NAME_PATTERNS",
    "ORIGIN",
    "ActivityTraceResult",
    "TraceChunk",
    "TraceNote",
    "TraceOperation",
    "TraceState",
    "TracedPut",
    "is_activity_trace_name",
    "looks_like_amqsact",
    "parse_activity_trace_file",
    "parse_activity_trace_lines",
    "parse_activity_trace_text",
]

#: ``silver.message_events.source`` value of an event that came from the activity trace.
ORIGIN = "activity_trace"

#: Landing-folder file names of amqsact output (case-insensitive fnmatch patterns); see docs/activity-trace.md.
ACTIVITY_TRACE_NAME_PATTERNS = ("*.amqsact", "*.amqsact.txt")

# MQOO_* / MQPMO_* / MQMF_* values (cmqc.h).
MQOO_BIND_ON_OPEN = 0x4000
MQOO_BIND_NOT_FIXED = 0x8000
MQOO_BIND_ON_GROUP = 0x400000
MQPMO_LOGICAL_ORDER = 0x8000
MQMF_MSG_IN_GROUP = 0x08
MQMF_LAST_MSG_IN_GROUP = 0x10
MQPER_NOT_PERSISTENT, MQPER_PERSISTENT = 0, 1

ZERO_TOKEN = "0" * 64
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_UNDERLINE_MIN = 20  # amqsact prints 77 '='; fewer than this is not its separator

# MQXF_* names amqsact prints (its OperationId table) -> the MQI verb used in records.
_OPERATIONS = {
    "MQXF_CONN": "MQCONN", "MQXF_CONNX": "MQCONNX", "MQXF_DISC": "MQDISC", "MQXF_OPEN": "MQOPEN",
    "MQXF_CLOSE": "MQCLOSE", "MQXF_PUT1": "MQPUT1", "MQXF_PUT": "MQPUT", "MQXF_GET": "MQGET",
    "MQXF_INQ": "MQINQ", "MQXF_SET": "MQSET", "MQXF_BEGIN": "MQBEGIN", "MQXF_CMIT": "MQCMIT",
    "MQXF_BACK": "MQBACK", "MQXF_STAT": "MQSTAT", "MQXF_CB": "MQCB", "MQXF_CTL": "MQCTL",
    "MQXF_CALLBACK": "MQCALLBACK", "MQXF_SUB": "MQSUB", "MQXF_SUBRQ": "MQSUBRQ",
    "MQXF_XACLOSE": "XACLOSE", "MQXF_XACOMMIT": "XACOMMIT", "MQXF_XACOMPLETE": "XACOMPLETE",
    "MQXF_XAEND": "XAEND", "MQXF_XAFORGET": "XAFORGET", "MQXF_XAOPEN": "XAOPEN", "MQXF_XAPREPARE": "XAPREPARE",
    "MQXF_XARECOVER": "XARECOVER", "MQXF_XAROLLBACK": "XAROLLBACK", "MQXF_XASTART": "XASTART",
}
_LEVELS = {1: "low", 2: "medium", 3: "high"}
_OPTION_LABELS = ("Put Options", "Open_options", "Close Options", "Get Options", "Connect Options",
                  "Callback options", "MQIACF_SUB_OPTIONS", "MQIACF_SUBRQ_OPTIONS")
# Fields an operation block must print at LOW (IBM's tables: trace level 1) to be used.
_REQUIRED = {
    "MQPUT": ("Hobj", "Put Options", "Msg length"),
    "MQPUT1": ("Object_name", "Put Options", "Msg length"),
    "MQOPEN": ("Hobj", "Open_options", "Object_name"),
    "MQCLOSE": ("Hobj",),
}
_ID_SIZES = {"Msg_id": 24, "Correl_id": 24, "GroupId": 24, "AccountingToken": 32}
_MEDIUM_HINTS = ("High Res Time", "Resolved_Q_Name", "Resolved_Q_mgr", "Msg_id", "Persistence",
                 "QMgr Operation Duration", "Resolved_type")

# "00000010:  4142 4344 ...  'ABCD'": offset, then the hex groups (each preceded by a blank); the printable
# column after them starts with a quote, which no group matches.
_DUMP = re.compile(r"\s*+([0-9A-Fa-f]{8}):((?:\s++[0-9A-Fa-f]{2}(?:[0-9A-Fa-f]{2})?)++)")
# "  001 2020-05-18 10:51:17  MQXF_PUT        MQCC_OK       0000  2 (Sample.Queue)"
_SUMMARY = re.compile(
    r"\s*+(-?\d++)\s++(\S++)\s++(\S++)\s++(\S++)\s++(\S++)\s++(-?\d++)\s++(?:(-?\d++)(?:\s++\((.*)\))?|-)\s*+")
_NAME_OK = re.compile(r"[A-Za-z0-9._/%]{1,48}")
# amqsact prints integers in decimal (%d, %u, %llu): 20 digits hold any of them. A longer run of digits is
# not a number it printed, and bounding it keeps int() away from its 4,300-digit limit.
_MAX_DIGITS = 20
_HEX_OR_BLANK = frozenset("0123456789ABCDEFabcdef \t\n\r\x0b\x0c")  # what bytes.fromhex reads
# Header values turned into numbers (a bad one is unknown, its line a problem; the messages' operations stay):
# label -> signed.
_HEADER_NUMBERS = {"SeqNumber": True, "ApplicationPid": True, "Trace Detail Level": False}


@dataclass(frozen=True, slots=True)
class TraceOperation:
    """One MQI call, as printed (a bronze row). Names/values as amqsact prints them; times aware, UTC."""

    source: str
    line: int  # line of "MQI Operation: n" (verbose) or of the summary line
    form: str  # verbose | summary
    trace_message: int  # 1-based ordinal of the trace message in the file
    connection: str  # Correl_id (hex) of the trace message, else a key built from the header
    seq_number: int | None  # SeqNumber of the trace message
    index: int  # n of "MQI Operation: n" (summary: position in the table)
    operation: str  # MQPUT, MQOPEN, ... ; "unknown:<id>" for an id amqsact printed as a number
    operation_id: str  # as printed: MQXF_PUT, or the number
    qmgr: str | None
    application_name: str | None
    application_pid: int | None
    thread_id: int | None
    user_id: str | None
    channel_name: str | None
    channel_type: str | None  # MQCHT_SVRCONN (a client), MQCHT_CLUSRCVR (a cluster channel's MCA), ...
    conn_name: str | None
    operation_time: datetime | None
    time_basis: str | None  # high_res (UTC by definition) | local (OperationDate/Time read in tz) | None
    high_res_time: int | None  # microseconds since 1970-01-01 UTC
    comp_code: str | None  # MQCC_OK, MQCC_WARNING, MQCC_FAILED (or the number)
    reason_code: int | None
    hobj: int | None
    object_name: str | None
    object_qmgr_name: str | None
    options: int | None  # the operation's options (put/open/close/get/connect), raw value
    trace_level: str  # low | medium | high (the header's Trace Detail Level, else inferred from the fields)
    fields: Mapping[str, str]  # every printed field: label -> value (quotes stripped; dumps as hex)


@dataclass(frozen=True, slots=True)
class TracedPut:
    """A put event from the trace: the PutRecord the replay reads, and MQ's own answer beside it."""

    put: PutRecord
    operation: str  # MQPUT | MQPUT1
    origin: str  # ORIGIN
    connection: str
    hobj: int | None
    trace_level: str
    comp_code: str | None
    reason_code: int | None
    put_options: int
    open_options: int | None  # of the MQOPEN the put used (None for MQPUT1)
    bind_source: str  # open_options | as_q_def (DEFBIND to be resolved from config) | put1
    observed_basis: str | None  # mqpmo (HIGH: MQPMO.ResolvedQMgrName) | put_record (MEDIUM) | open (bind on open)
    observed_reason: str | None  # why observed_qmgr is None
    accounting_token_traced: bool  # False: derived from the bind (zero when MQ never re-allocates)
    msg_id_traced: bool  # False: synthesized (LOW level prints no Msg_id)
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TraceNote:
    source: str
    line: int
    text: str


@dataclass
class _Handle:
    object_name: str
    object_qmgr: str | None
    options: int
    open_id: str
    resolved_qmgr: str | None
    resolved_q: str | None
    resolved_local_q: str | None
    seq: int


@dataclass
class TraceState:
    """Open handles per connection, carried across trace messages (and files, when passed on)."""

    handles: dict[tuple[str, int], _Handle] = field(default_factory=dict)


@dataclass
class TraceChunk:
    operations: list[TraceOperation]
    puts: list[TracedPut]
    problems: list[ParseProblem]


@dataclass
class ActivityTraceResult:
    source: str
    operations: list[TraceOperation] = field(default_factory=list)
    puts: list[TracedPut] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    notes: list[TraceNote] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # operations by name, over the whole input
    trace_messages: int = 0
    failed_puts: int = 0  # MQPUT/MQPUT1 with MQCC_FAILED: no message was put, no event
    forms: set[str] = field(default_factory=set)
    state: TraceState = field(default_factory=TraceState)


# ----------------------------------------------------------------------------------------------------------
# file names and sniffing


def is_activity_trace_name(name: str) -> bool:
    low = name.lower()
    return low.endswith(".amqsact") or low.endswith(".amqsact.txt")


def looks_like_amqsact(head: str) -> bool:
    """The first lines of a file are amqsact output (whatever its name): how amqsmon output is told apart."""
    return "MonitoringType: MQI Activity Trace" in head


# ----------------------------------------------------------------------------------------------------------
# values


class _Reject(Exception):
    pass


def _zone(tz: tzinfo | str | None) -> tzinfo:
    if tz is None:
        return timezone.utc
    if isinstance(tz, str):
        try:
            return timezone.utc if tz.upper() == "UTC" else ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {tz!r}") from None
    return tz


def _number(text: str | None, signed: bool = True) -> int | None:
    """``text`` as amqsact prints an integer: 1 to 20 ASCII digits, after an optional minus where the field is signed;
    None for anything else. (``str.isdigit`` takes '²' and other scripts' digits, which ``int()`` then refuses
    or reads; ``int()`` also takes blanks, '+' and '_', and raises beyond 4,300 digits.)"""
    if text is None:
        return None
    digits = text[1:] if signed and text[:1] == "-" else text
    if 0 < len(digits) <= _MAX_DIGITS and digits.isascii() and digits.isdigit():
        return int(text)
    return None


def _number_reason(label: str, text: str, signed: bool = True) -> str:
    sign = ", optionally after a minus" if signed else ""
    return f"{label} {clip(text)!r} is not an integer (at most {_MAX_DIGITS} ASCII digits{sign})"


def _int(fields: Mapping[str, str], label: str) -> int | None:
    text = fields.get(label)
    if text is None:
        return None
    value = _number(text)
    if value is None:
        raise _Reject(_number_reason(label, text))
    return value


def _name(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


def _local_time(date: str | None, time: str | None, zone: tzinfo) -> datetime | None:
    if not date or not time:
        return None
    bad = f"bad OperationDate/OperationTime {clip(date)!r} {clip(time)!r}"
    if not (date.isascii() and time.isascii()):  # strptime would read other scripts' digits
        raise _Reject(bad)
    try:
        naive = datetime.strptime(f"{date} {time.replace('.', ':')}", "%Y-%m-%d %H:%M:%S")
        # year 1 east of UTC (9999 west of it) is beyond what a datetime holds once in UTC
        return naive.replace(tzinfo=zone).astimezone(timezone.utc)
    except ValueError:
        raise _Reject(bad) from None
    except OverflowError:
        raise _Reject(f"OperationDate/OperationTime {clip(date)!r} {clip(time)!r} is out of range in UTC") from None


def _high_res(micros: int | None) -> datetime | None:
    if micros is None:
        return None
    try:
        return _EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        raise _Reject(f"High Res Time {micros} is out of range") from None


def _chars(raw: bytes, codec: str) -> str:
    return raw.decode(codec, "replace").rstrip(" \x00")


def _codec(strucid: bytes, name: str) -> str | None:
    """How the character fields of a structure dump are encoded, told by its StrucId: ASCII on the
    distributed platforms, EBCDIC on IBM i; None when the dump is not that structure."""
    if strucid == name.encode("ascii"):
        return "ascii"
    if strucid == name.encode("cp500"):
        return "cp500"
    return None


def _long(raw: bytes, big: bool) -> int:
    return int.from_bytes(raw, "big" if big else "little", signed=True)


def _big_endian(version: bytes) -> bool:
    """Byte order of a dump, from its Version field (1..4): the traced queue manager's native order."""
    return version[:1] == b"\x00"


def _mqmd(dump: bytes) -> dict:
    """The fields of an MQMD dump the put event needs (offsets from cmqc.h); {} when it is not an MQMD."""
    if len(dump) < 240 or _codec(dump[:4], "MD  ") is None:
        return {}
    big = _big_endian(dump[4:8])
    out = {"persistence": _long(dump[44:48], big), "msg_id": dump[48:72].hex().upper(),
           "accounting_token": dump[208:240].hex().upper()}
    if _long(dump[4:8], big) >= 2 and len(dump) >= 360:
        out["group_id"] = dump[324:348].hex().upper()
        out["msg_flags"] = _long(dump[356:360], big)
    return out


def _mqpmo(dump: bytes) -> dict:
    """ResolvedQName / ResolvedQMgrName (output fields of the call) from an MQPMO dump; {} otherwise."""
    codec = _codec(dump[:4], "PMO ") if len(dump) >= 128 else None
    if codec is None:
        return {}
    return {"resolved_q": _chars(dump[32:80], codec) or None, "resolved_qmgr": _chars(dump[80:128], codec) or None}


def _synth_id(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:48].upper()


# ----------------------------------------------------------------------------------------------------------
# the reader


class _Message:
    __slots__ = ("line", "ordinal", "header", "form", "ops_seen", "dumps", "values")

    def __init__(self, line: int, ordinal: int):
        self.line = line
        self.ordinal = ordinal
        self.header: dict[str, str] = {}
        self.form = ""
        self.ops_seen = 0
        self.dumps: dict[str, bytes] = {}
        self.values: dict | None = None  # header_values(), once the operations start


class _Op:
    __slots__ = ("line", "index", "fields", "dumps", "raw", "bad")

    def __init__(self, line: int, index: int, first: str):
        self.line = line
        self.index = index
        self.fields: dict[str, str] = {}
        self.dumps: dict[str, bytes] = {}
        self.raw = [first]
        self.bad: str | None = None


class _Reader:
    def __init__(self, source: str, zone: tzinfo, state: TraceState | None, on_chunk, chunk_ops: int):
        self.source = source
        self.zone = zone
        self.result = ActivityTraceResult(source, state=state or TraceState())
        self.on_chunk = on_chunk if chunk_ops > 0 else None
        self.chunk_ops = chunk_ops
        self.msg: _Message | None = None
        self.op: _Op | None = None
        self.dump_label: str | None = None
        self.dump_target: dict[str, bytes] | None = None
        self.dump_bytes = bytearray()
        self.dump_line = 0
        self.dump_bad = False  # a header dump with a line that is not hex: its value is unknown
        self.in_table = False
        # puts whose MQOPEN has not been seen, by (connection, Hobj): (SeqNumber, block, record)
        self.pending: dict[tuple[str, int], list[tuple[int, _Op, TraceOperation]]] = {}
        self.records_processed: int | None = None
        self.unknown_ops: Counter = Counter()
        self.summary_puts = 0
        self.since_flush = 0

    # --- helpers -----------------------------------------------------------------------------------------

    def problem(self, line: int, reason: str, raw: str) -> None:
        self.result.problems.append(ParseProblem(self.source, line, reason, raw))

    def note(self, line: int, text: str) -> None:
        self.result.notes.append(TraceNote(self.source, line, text))

    def flush(self) -> None:
        if self.on_chunk is None:
            return
        r = self.result
        if r.operations or r.puts or r.problems:
            self.on_chunk(TraceChunk(r.operations[:], r.puts[:], r.problems[:]))
            r.operations.clear()
            r.puts.clear()
            r.problems.clear()
        self.since_flush = 0

    def end_dump(self) -> None:
        if self.dump_label is not None and self.dump_target is not None and not self.dump_bad:
            self.dump_target[self.dump_label] = bytes(self.dump_bytes)
            if self.op is not None:
                self.op.fields[self.dump_label] = self.dump_bytes.hex().upper()
            elif self.msg is not None:
                self.msg.header[self.dump_label] = self.dump_bytes.hex().upper()
        self.dump_label = None
        self.dump_target = None
        self.dump_bad = False

    def end_op(self) -> None:
        self.end_dump()
        op, self.op = self.op, None
        if op is not None and self.msg is not None:
            self.finish_verbose(op)

    def end_message(self) -> None:
        self.end_op()
        self.msg = None
        self.in_table = False

    # --- lines ---------------------------------------------------------------------------------------------

    def feed(self, lines: Iterable[str]) -> None:
        dump_match = _DUMP.match
        for lineno, raw in enumerate(lines, 1):
            line = raw.rstrip("\r\n")
            op = self.op
            if op is not None and self.dump_label is None and line[:2] == "  " and line[2:3] != " ":
                # the common line, "  Label: value" inside an operation block: taken here without the checks below
                label, sep, value = line.partition(":")
                if sep and len(label) != 10 and value[:1] == " ":
                    value = value.strip()
                    if value:
                        if value[0] == "'" and value[-1] == "'" and len(value) >= 2:
                            value = value[1:-1].rstrip()
                        op.fields[label.strip()] = value
                        op.raw.append(line)
                        continue
            stripped = line.strip()
            if not stripped:
                continue
            if self.dump_label is not None:
                m = dump_match(line)
                if m is not None:
                    offset = int(m.group(1), 16)
                    if offset != len(self.dump_bytes) and self.op is not None:
                        self.op.bad = self.op.bad or (
                            f"hex dump of {self.dump_label} jumps to offset {m.group(1)} after "
                            f"{len(self.dump_bytes)} bytes (line {lineno})")
                    try:
                        self.dump_bytes += bytes.fromhex(m.group(2))
                    except ValueError:  # the pattern's blanks are Unicode's (a no-break space), fromhex's ASCII
                        self.bad_dump_line(lineno, line, m.group(2))
                    if self.op is not None:
                        self.op.raw.append(line)
                    continue
                self.end_dump()
            if stripped.startswith("MonitoringType:"):
                self.end_message()
                value = stripped.partition(":")[2].strip()
                self.result.trace_messages += 1
                self.msg = _Message(lineno, self.result.trace_messages)
                if value != "MQI Activity Trace":
                    self.problem(lineno, f"not an activity trace record (MonitoringType: {clip(value)})", line)
                    self.msg = None
                continue
            if stripped[0] == "=" and len(stripped) >= _UNDERLINE_MIN and stripped.count("=") == len(stripped):
                self.end_op()  # closes the message's last operation; the message itself ends at the next one
                continue
            if stripped.endswith("Records Processed."):  # amqsact's last line
                self.end_message()
                head = stripped.split()[0]
                self.records_processed = _number(head, signed=False)
                if self.records_processed is None:
                    self.note(lineno, f"{clip(stripped)!r}: the count is not a number, not compared with the file")
                continue
            if self.msg is None:
                self.outside(lineno, line, stripped)
                continue
            if self.in_table or stripped.startswith("Tid "):
                if stripped.split()[:3] == ["Tid", "Date", "Time"]:
                    self.end_op()
                    self.in_table = True
                    self.msg.form = "summary"
                    continue
                m = _SUMMARY.fullmatch(line)
                if m is not None:
                    self.summary_line(lineno, line, m)
                elif self.in_table:
                    self.problem(lineno, "summary line not in amqsact's Tid/Date/Time/Operation/CompCode/MQRC/HObj "
                                 "columns (cut?)", line)
                continue
            if stripped[8:9] == ":" and dump_match(line) is not None:
                self.stray(lineno, line, "hex dump line without a byte-string label before it")
                continue
            label_part, sep, value = line.partition(":")
            if not sep:
                self.stray(lineno, line, "not a 'Label: value' line")
                continue
            label = label_part.strip()
            indent = len(label_part) - len(label_part.lstrip())
            value = value.strip()
            if label == "MQI Operation" and indent == 0:
                self.end_op()
                self.msg.form = "verbose"
                index = _number(value, signed=False)
                if index is None:
                    index = self.msg.ops_seen
                self.msg.ops_seen += 1
                self.op = _Op(lineno, index, line)
                continue
            if self.op is not None and indent == 0:
                self.end_op()  # a header-level line after the operations: the block is over
            if value == "":  # a byte string: its hex dump follows
                self.dump_label = label
                self.dump_bytes = bytearray()
                self.dump_line = lineno
                if self.op is not None:
                    self.dump_target = self.op.dumps
                    self.op.raw.append(line)
                else:
                    self.dump_target = self.msg.dumps
                continue
            if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
                value = value[1:-1].rstrip()
            if self.op is not None:
                self.op.fields[label] = value
                self.op.raw.append(line)
                continue
            signed = _HEADER_NUMBERS.get(label)
            if signed is not None and _number(value, signed) is None:
                # the value is unknown, not the message: its operations are still read
                self.msg.header.pop(label, None)
                self.problem(lineno, f"{_number_reason(label, value, signed)}: taken as not printed", line)
                continue
            self.msg.header[label] = value
        self.end_message()

    def bad_dump_line(self, lineno: int, line: str, groups: str) -> None:
        odd = next((c for c in groups if c not in _HEX_OR_BLANK), "?")
        reason = (f"hex dump line of {self.dump_label} holds U+{ord(odd):04X}, neither a hex digit nor an ASCII "
                  f"blank (line {lineno})")
        if self.op is not None:
            self.op.bad = self.op.bad or reason
            return
        # a header dump (the message's Correl_id): its value is unknown, the message's operations are read
        self.dump_bad = True
        self.problem(lineno, f"{reason}: {self.dump_label} taken as not printed", line)

    def outside(self, lineno: int, line: str, stripped: str) -> None:
        if stripped.split()[:3] == ["Tid", "Date", "Time"]:
            # a summary table without its header block (output cut or pasted): its lines are still operations
            self.result.trace_messages += 1
            self.msg = _Message(lineno, self.result.trace_messages)
            self.msg.form = "summary"
            self.in_table = True
            self.note(lineno, "summary table without a header block: queue manager and connection unknown")
            return
        if stripped.startswith("Subscribing to the activity trace topic") or stripped.startswith("'$SYS/"):
            return
        self.stray(lineno, line, "line outside any trace message")

    def stray(self, lineno: int, line: str, why: str) -> None:
        if self.op is not None:
            self.op.bad = self.op.bad or f"{why}: {clip(line.strip())!r} (line {lineno})"
            self.op.raw.append(line)
            return
        self.problem(lineno, why, line)

    # --- operations ----------------------------------------------------------------------------------------

    def header_values(self) -> dict:
        cached = self.msg.values
        if cached is not None:
            return cached
        h = self.msg.header
        key = h.get("Correl_id")
        if not key:  # no Correl_id printed: the connection is what the header says about it
            key = "|".join((h.get("QueueManager", ""), h.get("ApplicationPid", ""), h.get("ApplicationName", ""),
                            h.get("ConnName", ""), h.get("Channel Name", "")))
        self.msg.values = values = {
            "connection": key,
            "seq": _number(h.get("SeqNumber")),  # (checked as they were read: a bad one is not in the header)
            "qmgr": _name(h.get("QueueManager")),
            "appl": h.get("ApplicationName"),
            "pid": _number(h.get("ApplicationPid")),
            "user": h.get("UserId"),
            "channel": _name(h.get("Channel Name")),
            "channel_type": h.get("Channel Type"),
            "conn_name": _name(h.get("ConnName")),
            "level": h.get("Trace Detail Level"),
        }
        return values

    def operation_name(self, op_id: str, line: int) -> str:
        name = _OPERATIONS.get(op_id)
        if name is not None:
            return name
        number = op_id.rpartition(":")[2]  # amqsact prints an id it has no name for as a number
        if _number(number) is not None:
            self.unknown_ops[number] += 1
            return f"unknown:{number}"
        raise _Reject(f"unknown Operation Id {clip(op_id)!r}")

    def level(self, header_level: str | None, fields: Mapping[str, str], dumps: Mapping[str, bytes]) -> str:
        known = _LEVELS.get(_number(header_level, signed=False))
        if known is not None:
            return known
        if any(k.endswith("Structure") for k in dumps):
            return "high"
        if any(k in fields for k in _MEDIUM_HINTS):
            return "medium"
        return "low"

    def finish_verbose(self, op: _Op) -> None:
        raw = "\n".join(op.raw)
        try:
            if op.bad:
                raise _Reject(op.bad)
            f = op.fields
            op_id = f.get("Operation Id")
            if op_id is None:
                raise _Reject("truncated operation block: no Operation Id")
            name = self.operation_name(op_id, op.line)
            missing = [label for label in ("Completion Code", "Reason Code") + _REQUIRED.get(name, ())
                       if label not in f]
            if missing:
                raise _Reject(f"{name} block without {', '.join(missing)} (truncated or not traced)")
            for label, size in _ID_SIZES.items():
                got = op.dumps.get(label)
                if got is not None and len(got) != size:
                    raise _Reject(f"{label} dump holds {len(got)} bytes, not {size} (truncated)")
            hv = self.header_values()
            high_res = _int(f, "High Res Time")
            when = _high_res(high_res)
            basis = "high_res" if when is not None else None
            if when is None:
                when = _local_time(f.get("OperationDate"), f.get("OperationTime"), self.zone)
                basis = "local" if when is not None else None
            options = None
            for label in _OPTION_LABELS:
                if label in f:
                    options = _int(f, label)
                    break
            record = TraceOperation(
                self.source, op.line, "verbose", self.msg.ordinal, hv["connection"], hv["seq"], op.index, name,
                op_id, hv["qmgr"], hv["appl"], hv["pid"], _int(f, "ApplicationTid"), hv["user"], hv["channel"],
                hv["channel_type"], hv["conn_name"], when, basis, high_res, f.get("Completion Code"), _int(f, "Reason Code"),
                _int(f, "Hobj"), _name(f.get("Object_name")), _name(f.get("Object_Q_mgr_name")), options,
                self.level(hv["level"], f, op.dumps), f)
        except _Reject as exc:
            self.problem(op.line, str(exc), raw)
            return
        self.accept(record, op, hv)

    def summary_line(self, lineno: int, line: str, m: re.Match) -> None:
        self.msg.form = "summary"
        self.msg.ops_seen += 1
        tid, date, time, op_id, comp, reason, hobj, objname = m.groups()
        fields = {"ApplicationTid": tid, "OperationDate": date, "OperationTime": time, "Operation Id": op_id,
                  "Completion Code": comp, "Reason Code": reason}
        if hobj is not None:
            fields["Hobj"] = hobj
        if objname:
            fields["Object_name"] = objname.strip()
        try:
            name = self.operation_name(op_id, lineno)
            when = _local_time(date, time, self.zone)
            thread_id, reason_code, hobj_value = (_int(fields, "ApplicationTid"), _int(fields, "Reason Code"),
                                                  _int(fields, "Hobj"))
        except _Reject as exc:
            self.problem(lineno, str(exc), line)
            return
        hv = self.header_values()
        record = TraceOperation(
            self.source, lineno, "summary", self.msg.ordinal, hv["connection"], hv["seq"], self.msg.ops_seen - 1,
            name, op_id, hv["qmgr"], hv["appl"], hv["pid"], thread_id, hv["user"], hv["channel"],
            hv["channel_type"], hv["conn_name"], when, "local" if when is not None else None, None, comp, reason_code,
            hobj_value, _name(objname), None, None, self.level(hv["level"], {}, {}), fields)
        self.result.operations.append(record)
        self.result.counts[name] += 1
        self.result.forms.add("summary")
        if name in ("MQPUT", "MQPUT1") and comp != "MQCC_FAILED":
            self.summary_puts += 1
        self.tick()

    def tick(self) -> None:
        self.since_flush += 1
        if self.on_chunk is not None and self.since_flush >= self.chunk_ops:
            self.flush()

    # --- what an operation does to the handles, and the put events -------------------------------------------

    def accept(self, rec: TraceOperation, op: _Op, hv: dict) -> None:
        r = self.result
        r.operations.append(rec)
        r.counts[rec.operation] += 1
        r.forms.add("verbose")
        handles = r.state.handles
        failed = rec.comp_code == "MQCC_FAILED"
        name = rec.operation
        if name == "MQOPEN" and not failed:
            f = rec.fields
            key = (rec.connection, rec.hobj)
            handles[key] = _Handle(rec.object_name or "", rec.object_qmgr_name, rec.options or 0,
                                   f"{rec.connection}:{rec.hobj}:{rec.seq_number}.{rec.index}",
                                   _name(f.get("Resolved_Q_mgr")), _name(f.get("Resolved_Q_Name")),
                                   _name(f.get("Resolved_local_Q_name")), rec.seq_number or 0)
            waiting = self.pending.get(key)
            if waiting:
                keep = []
                opened_at = (rec.seq_number or 0, rec.index)
                for seq, wop, wrec in waiting:
                    if (seq, wrec.index) > opened_at:  # only a put after this open, in the connection's order
                        self.put_event(wrec, wop, handles[key])
                    else:
                        keep.append((seq, wop, wrec))
                self.pending[key] = keep
        elif name == "MQCLOSE" and not failed:
            handles.pop((rec.connection, rec.hobj), None)
        elif name == "MQDISC":
            for key in [k for k in handles if k[0] == rec.connection]:
                del handles[key]
        elif name in ("MQPUT", "MQPUT1"):
            if failed:
                r.failed_puts += 1
            elif name == "MQPUT1":
                self.put_event(rec, op, None)
            else:
                handle = handles.get((rec.connection, rec.hobj))
                if handle is None:
                    self.pending.setdefault((rec.connection, rec.hobj), []).append((rec.seq_number or 0, op, rec))
                else:
                    self.put_event(rec, op, handle)
        self.tick()

    def put_event(self, rec: TraceOperation, op: _Op, handle: _Handle | None) -> None:
        f = rec.fields
        notes: list[str] = []
        try:
            if rec.qmgr is None:
                raise _Reject("trace message without QueueManager: the sending queue manager is unknown")
            if rec.operation_time is None:
                raise _Reject("put without OperationDate/OperationTime or High Res Time")
            put_options = rec.options or 0
            length = _int(f, "Msg length")
            if length is None or length < 0:
                raise _Reject(f"bad Msg length {f.get('Msg length')!r}")
            if handle is None:  # MQPUT1: its own open, one choice per message
                queue, target, bind, bind_source, open_options, open_id = (
                    rec.object_name, rec.object_qmgr_name, "notfixed", "put1", None, None)
            else:
                queue, target, open_options, open_id = (handle.object_name, handle.object_qmgr, handle.options,
                                                        handle.open_id)
                if open_options & MQOO_BIND_NOT_FIXED:
                    bind, bind_source = "notfixed", "open_options"
                elif open_options & MQOO_BIND_ON_GROUP:
                    bind, bind_source = "group", "open_options"
                elif open_options & MQOO_BIND_ON_OPEN:
                    bind, bind_source = "open", "open_options"
                else:
                    bind, bind_source = "as_q_def", "as_q_def"
                    notes.append("MQOO_BIND_AS_Q_DEF: bind is the queue's DEFBIND at put time (resolve from config)")
            if not queue or not _NAME_OK.fullmatch(queue):
                raise _Reject(f"bad or missing queue name {clip(queue or '')!r}")
            if target is not None and not _NAME_OK.fullmatch(target):
                raise _Reject(f"bad Object_Q_mgr_name {clip(target)!r}")
            logical = bool(put_options & MQPMO_LOGICAL_ORDER)
            md = _mqmd(op.dumps.get("MQMD Structure", b""))
            pmo = _mqpmo(op.dumps.get("MQPMO Structure", b""))
            if "MQMD Structure" in op.dumps and not md:
                notes.append("MQMD Structure dump is not a readable MQMD (cut or not 'MD  ')")
            # message id: the put record's Msg_id (MEDIUM), the MQMD (HIGH), else synthesized
            msg_id = f.get("Msg_id") or md.get("msg_id")
            msg_id_traced = bool(msg_id) and len(msg_id) == 48
            if not msg_id_traced:
                msg_id = _synth_id(rec.source, rec.connection, rec.seq_number, rec.index)
                notes.append("Msg_id not traced (LOW): synthesized from connection, SeqNumber and operation")
            # persistence: Persistence field (MEDIUM) or the MQMD
            pers = _int(f, "Persistence")
            if pers is None:
                pers = md.get("persistence")
            if pers not in (MQPER_NOT_PERSISTENT, MQPER_PERSISTENT):
                notes.append("persistence not known (not traced or MQPER_PERSISTENCE_AS_Q_DEF): read as false")
            persistent = pers == MQPER_PERSISTENT
            # group id: a GroupId field, else the MQMD when the message is in a group
            group_id = f.get("GroupId")
            if not group_id and md.get("msg_flags", 0) & (MQMF_MSG_IN_GROUP | MQMF_LAST_MSG_IN_GROUP):
                group_id = md.get("group_id")
            if group_id and group_id.count("0") == len(group_id):
                group_id = None
            if logical and bind == "group" and not group_id:
                notes.append("logical order on a bind-on-group handle but no GroupId traced (needs HIGH)")
            # accounting token: traced (AccountingToken field or MQMD), else from the bind as the replay reads it
            token = f.get("AccountingToken") or md.get("accounting_token")
            token_traced = bool(token) and len(token) == 64
            if not token_traced:
                never_moves = bind == "open" or target is not None or (bind == "group" and logical)
                token = ZERO_TOKEN if never_moves else _synth_id("token", rec.connection)[:48].ljust(64, "F")
                notes.append("AccountingToken not traced: derived from the bind")
            observed_qmgr, observed_q, basis, reason = self.observed(rec, handle, bind, pmo)
            xmitq = None
            if observed_qmgr is not None and observed_qmgr != rec.qmgr:
                local_q = _name(f.get("Resolved_local_Q_name")) or (handle.resolved_local_q if basis == "open"
                                                                   and handle is not None else None)
                if local_q is not None and local_q != observed_q:
                    xmitq = local_q
                else:
                    notes.append("remote destination but no Resolved_local_Q_name: transmission queue not traced")
            from_channel = rec.channel_type == "MQCHT_CLUSRCVR"  # the put is a cluster-receiver MCA's
            put = PutRecord(
                rec.source, rec.line, rec.operation_time, rec.qmgr, queue, target, bind, open_id, group_id,
                logical, from_channel, queue.startswith("SYSTEM.CLUSTER.COMMAND.QUEUE"), length, persistent,
                token.upper(), token.count("0") == 64, msg_id.upper(), observed_qmgr, None, xmitq)
        except _Reject as exc:
            self.problem(rec.line, str(exc), "\n".join(op.raw))
            return
        self.result.puts.append(TracedPut(
            put, rec.operation, ORIGIN, rec.connection, rec.hobj, rec.trace_level, rec.comp_code, rec.reason_code,
            put_options, open_options, bind_source, basis, reason, token_traced, msg_id_traced, tuple(notes)))

    @staticmethod
    def observed(rec: TraceOperation, handle: _Handle | None, bind: str, pmo: dict):
        """MQ's answer for this message: (qmgr, queue, basis, reason-when-None)."""
        if pmo.get("resolved_qmgr"):
            return pmo["resolved_qmgr"], pmo.get("resolved_q"), "mqpmo", None
        qmgr = _name(rec.fields.get("Resolved_Q_mgr"))
        if qmgr is not None:
            return qmgr, _name(rec.fields.get("Resolved_Q_Name")), "put_record", None
        if handle is not None and bind == "open" and handle.resolved_qmgr:
            return handle.resolved_qmgr, handle.resolved_q, "open", None
        if rec.trace_level == "low":
            return None, None, None, "trace level LOW: the put record carries no resolved queue manager"
        return None, None, None, f"{rec.operation} record at {rec.trace_level.upper()} without Resolved_Q_mgr"

    def close(self) -> ActivityTraceResult:
        for (connection, hobj), waiting in self.pending.items():
            for _, op, rec in waiting:
                self.problem(rec.line, f"MQPUT on handle {hobj} of connection {clip(connection, 60)} whose MQOPEN "
                             "is not in the input (opened before the trace started or in an earlier file)",
                             "\n".join(op.raw))
        self.pending.clear()
        r = self.result
        if self.unknown_ops:
            ids = ", ".join(f"{k} ({v})" for k, v in sorted(self.unknown_ops.items()))
            self.note(0, f"operation ids amqsact printed as numbers (kept as unknown:<id>): {ids}")
        if self.summary_puts:
            self.note(0, f"summary form: {self.summary_puts} puts carry no length, options or ids and give no put "
                         "events; run amqsact -v for them")
        if self.records_processed is not None and self.records_processed != r.trace_messages:
            self.note(0, f"amqsact reported {self.records_processed} records, the file holds {r.trace_messages} "
                         "(cut or concatenated output)")
        self.flush()
        return r


# ----------------------------------------------------------------------------------------------------------
# entry points


def parse_activity_trace_lines(
    lines: Iterable[str], source: str, *, tz: tzinfo | str | None = None, state: TraceState | None = None,
    on_chunk: Callable[[TraceChunk], None] | None = None, chunk_ops: int = 0,
) -> ActivityTraceResult:
    """amqsact output, line by line.

    tz: the zone OperationDate/OperationTime are read in (the queue manager's local time; default UTC); a
    tzinfo or an IANA name. state: handles carried from the previous file of the same queue managers.
    on_chunk / chunk_ops: called with the operations, puts and problems so far every ``chunk_ops`` operations,
    after which they are dropped here; the result holds those after the last chunk (and the notes, counts)."""
    reader = _Reader(source, _zone(tz), state, on_chunk, chunk_ops)
    reader.feed(lines)
    return reader.close()


def parse_activity_trace_text(text: str, source: str, *, tz: tzinfo | str | None = None,
                              state: TraceState | None = None) -> ActivityTraceResult:
    return parse_activity_trace_lines(text.splitlines(), source, tz=tz, state=state)


def parse_activity_trace_file(
    path: str | Path, *, tz: tzinfo | str | None = None, state: TraceState | None = None,
    on_chunk: Callable[[TraceChunk], None] | None = None, chunk_ops: int = 0,
) -> ActivityTraceResult:
    """An amqsact output file (streamed). Undecodable bytes become U+FFFD (amqsact prints names in the queue
    manager's code page): the line that holds them is then refused by its own checks, not the file."""
    source = str(path)
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            return parse_activity_trace_lines(handle, source, tz=tz, state=state, on_chunk=on_chunk,
                                              chunk_ops=chunk_ops)
    except FileNotFoundError:
        raise InputError(source, "file not found") from None
    except IsADirectoryError:
        raise InputError(source, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(source, f"cannot read: {exc.strerror or exc}") from None
