"""IBM MQ application activity trace as printed in JSON by IBM's sample program amqsevt (``amqsevt -o json``,
``-o json_compact``), read into the very records the amqsact parser gives (docs/activity-trace.md, "amqsevt JSON").

amqsevt (source ``amqsevta.c``, shipped with MQ since 9.1 with JSON output) prints each PCF message as one JSON
object: ``eventSource``, ``eventType``, ``eventReason``, ``eventCreation`` and ``eventData``. For an activity trace
message, ``eventData`` holds the header parameters (``queueMgrName``, ``applName``, ``connectionId``, ...) and
``activityTrace``, a list of one object per MQI call (``operationId``, ``hobj``, ``putOptions``, ...). ``-o json``
pretty-prints the objects one after another; ``-o json_compact`` prints one object a line. Both are read the same
way: ``json.JSONDecoder.raw_decode`` over the text, object after object.

How the keys are named: amqsevt looks the PCF parameter's constant up (``MQCACF_APPL_NAME``), spells a single ``Q``
as ``QUEUE``, drops the prefix and mixes the case (``Appl Name``), then joins the words in camel case
(``applName``) — :func:`amqsevt_key` is that rule. The keys read here are made by it from the constants amqsact's
own tables name beside its labels (``MQCACF_APPL_NAME`` -> ``ApplicationName``), so each key becomes the label
amqsact prints and each value the text amqsact prints (``{"name": "Ok", "value": 0}`` -> ``MQCC_OK``,
``"0x00002044"`` -> ``8260``). The unformatted constant (``amqsevt -d``) is taken as a key too.

The trace messages and operations so rebuilt go through the amqsact reader's own code
(:class:`clwl.parse.activity_trace_puts.TraceReader`): the same checks, problems, handles, put events and rows.

The objects may also come one after another on one line, separated by blanks or blank lines, with CRLF line
ends, each file behind a byte order mark (files joined by a log shipper), or as the elements of one JSON array:
the text is cut at each object start (``{`` and an envelope key, wherever it is) into pieces decoded one by one,
so the parse is linear in every layout.

Bad input: an object that is not JSON costs itself only (a problem at its first line): it is decoded up to the
next object start, so a cut object cannot take in the next ones; as does an object nested deeper than any amqsevt
prints (refused before it is read: how deep the decoder and the printing of a value can go depends on the caller's
stack, whether an object is read must not) and an object that is not an activity trace message's (counted in a
note); an operation's bad value is its operation's problem, as in amqsact output; an integer too long for
``int()`` is a bad value like any other.
"""

from __future__ import annotations

import json
import re
from datetime import tzinfo
from pathlib import Path
from typing import Callable, Iterable

from clwl.parse.activity_trace_lexer import OperationBlock, TraceMessage
from clwl.parse.activity_trace_puts import TraceReader
from clwl.parse.activity_trace_records import ActivityTraceResult, TraceChunk, TraceState
from clwl.parse.activity_trace_values import number_reason, printed_number, time_zone
from clwl.parse.common import JSON_DECODER, clip, open_input, too_deep_reason

__all__ = [
    "AMQSEVT_JSON_NAME_PATTERNS",
    "FIELDS",
    "amqsevt_key",
    "looks_like_amqsevt_trace",
    "parse_amqsevt_json_file",
    "parse_amqsevt_json_lines",
    "parse_amqsevt_json_text",
]

#: Landing-folder file names of amqsevt's JSON output of an activity trace (case-insensitive fnmatch patterns).
AMQSEVT_JSON_NAME_PATTERNS = ("*.amqsevt.json", "*.amqsevt.jsonl")

# ----------------------------------------------------------------------------------------------------------
# amqsevt's key rule (amqsevta.c: lookup(), formatConstant(), jsonFormatAttr())

# formatConstant's forceUpper list: mixed-case words it spells in capitals again.
_FORCE_UPPER = ("Amqp", "Clwl", "Cpi", "Crl", "Csp", "Dns", "Dn", "Idpw", "Igq", "Ip ", "Ipv", "Ldap", "Lu62", "Mca ",
                "Mqi", "Mqsc", "Mr ", "Mru", "Pcf", "Sctq", "Ssl", "Tcp")


def _format_constant(name: str) -> str:
    """amqsevt's formatConstant: ``MQCACF_APPL_NAME`` -> ``Appl Name`` (a name without ``_`` as it is)."""
    if "_" not in name:
        return name
    out, swap, first = [], False, True
    for c in name:
        if c.isspace():
            out.append(c)
            continue
        if c.isupper() and swap:
            c = c.lower()
        if c == "_":
            swap = False
            if first:
                first = False
            else:
                c = " "
        else:
            swap = True
        out.append(c)
    s = "".join(out)
    for word in _FORCE_UPPER:
        s = s.replace(word, word.upper())
    for old, new in (("Zos", "zOS"), (" Os", " OS"), ("_Os", "_OS")):
        s = s.replace(old, new, 1)
    cut = s.find("_")
    return s if cut == len(s) - 1 else s[cut + 1:]


def amqsevt_key(constant: str) -> str:
    """The JSON key amqsevt prints for a PCF parameter: its constant as lookup() spells it (the first ``_Q_`` as
    ``_QUEUE_``, else a final ``_Q`` as ``_QUEUE``), formatConstant(), then jsonFormatAttr() (camel case, unless a
    ``_`` is left). ``MQCACF_APPL_NAME`` -> ``applName``, ``MQCA_Q_MGR_NAME`` -> ``queueMgrName``."""
    name = constant
    if "_Q_" in name:
        name = name.replace("_Q_", "_QUEUE_", 1)
    elif name.endswith("_Q"):
        name = name[:-2] + "_QUEUE"
    attr = _format_constant(name)
    if "_" in attr:
        return attr
    out, upper = [], False
    for c in attr:
        if c == " ":
            upper = True
            continue
        out.append(c.upper() if upper else c.lower())
        upper = False
    return "".join(out)


# ----------------------------------------------------------------------------------------------------------
# the fields: PCF constant -> amqsact's label (amqsact0.c's tables) and how amqsevt prints the value

_BYTES, _INT, _STR, _OPTIONS, _COMP, _REASON = "bytes", "int", "str", "options", "comp", "reason"

# value kinds of named constants: (kind, prefix amqsact prints, number -> name where amqsevt may print a number)
_MQCC = {0: "MQCC_OK", 1: "MQCC_WARNING", 2: "MQCC_FAILED", -1: "MQCC_UNKNOWN"}
_MQCHT = {1: "MQCHT_SENDER", 2: "MQCHT_SERVER", 3: "MQCHT_RECEIVER", 4: "MQCHT_REQUESTER", 6: "MQCHT_CLNTCONN",
          7: "MQCHT_SVRCONN", 8: "MQCHT_CLUSRCVR", 9: "MQCHT_CLUSSDR"}
_MQOT = {1: "MQOT_Q", 2: "MQOT_NAMELIST", 3: "MQOT_PROCESS", 4: "MQOT_STORAGE_CLASS", 5: "MQOT_Q_MGR",
         6: "MQOT_CHANNEL", 7: "MQOT_AUTH_INFO", 8: "MQOT_TOPIC"}
_MQXE = {0: "MQXE_OTHER", 1: "MQXE_MCA", 2: "MQXE_MCA_SVRCONN", 3: "MQXE_COMMAND_SERVER", 4: "MQXE_MQSC"}

#: (PCF constant, amqsact label, value kind[, prefix, numbers]): what is read of an activity trace message.
FIELDS: tuple[tuple, ...] = (
    # header (amqsact0.c's labels; the trace message's parameters before its operations)
    ("MQCA_Q_MGR_NAME", "QueueManager", _STR),
    ("MQCACF_HOST_NAME", "Host Name", _STR),
    ("MQCAMO_START_DATE", "IntervalStartDate", _STR),
    ("MQCAMO_START_TIME", "IntervalStartTime", _STR),
    ("MQCAMO_END_DATE", "IntervalEndDate", _STR),
    ("MQCAMO_END_TIME", "IntervalEndTime", _STR),
    ("MQIA_COMMAND_LEVEL", "CommandLevel", _INT),
    ("MQIACF_SEQUENCE_NUMBER", "SeqNumber", _INT),
    ("MQCACF_APPL_NAME", "ApplicationName", _STR),
    ("MQIACF_PROCESS_ID", "ApplicationPid", _INT),
    ("MQCACF_USER_IDENTIFIER", "UserId", _STR),
    ("MQIACF_API_ENVIRONMENT", "API Environment", "const", "MQXE_", _MQXE),
    ("MQCACH_CHANNEL_NAME", "Channel Name", _STR),
    ("MQCACH_CONNECTION_NAME", "ConnName", _STR),
    ("MQIACH_CHANNEL_TYPE", "Channel Type", "const", "MQCHT_", _MQCHT),
    ("MQIACF_TRACE_DETAIL", "Trace Detail Level", _INT),
    ("MQBACF_CONNECTION_ID", "ConnectionId", _BYTES),
    # every operation
    ("MQIACF_OPERATION_ID", "Operation Id", "const", "MQXF_", {}),
    ("MQIACF_THREAD_ID", "ApplicationTid", _INT),
    ("MQCACF_OPERATION_DATE", "OperationDate", _STR),
    ("MQCACF_OPERATION_TIME", "OperationTime", _STR),
    ("MQIAMO64_HIGHRES_TIME", "High Res Time", _INT),
    ("MQIAMO64_QMGR_OP_DURATION", "QMgr Operation Duration", _INT),
    ("MQIACF_COMP_CODE", "Completion Code", _COMP),
    ("MQIACF_REASON_CODE", "Reason Code", _REASON),
    # objects and handles
    ("MQIACF_HOBJ", "Hobj", _INT),
    ("MQIACF_OBJECT_TYPE", "Object_type", "const", "MQOT_", _MQOT),
    ("MQCACF_OBJECT_NAME", "Object_name", _STR),
    ("MQCACF_OBJECT_Q_MGR_NAME", "Object_Q_mgr_name", _STR),
    ("MQCACF_RESOLVED_Q_NAME", "Resolved_Q_Name", _STR),
    ("MQCACF_RESOLVED_Q_MGR", "Resolved_Q_mgr", _STR),
    ("MQCACF_RESOLVED_LOCAL_Q_NAME", "Resolved_local_Q_name", _STR),
    ("MQCACF_RESOLVED_LOCAL_Q_MGR", "Resolved_local_Q_mgr", _STR),
    ("MQIACF_RESOLVED_TYPE", "Resolved_type", "const", "MQOT_", _MQOT),
    ("MQCACF_DYNAMIC_Q_NAME", "Dynamic_Q_name", _STR),
    # options: amqsact prints them in decimal
    ("MQIACF_OPEN_OPTIONS", "Open_options", _OPTIONS),
    ("MQIACF_CLOSE_OPTIONS", "Close Options", _OPTIONS),
    ("MQIACF_PUT_OPTIONS", "Put Options", _OPTIONS),
    ("MQIACF_GET_OPTIONS", "Get Options", _OPTIONS),
    ("MQIACF_CONNECT_OPTIONS", "Connect Options", _OPTIONS),
    ("MQIACF_MQCB_OPTIONS", "Callback options", _OPTIONS),
    # the message
    ("MQIACF_MSG_LENGTH", "Msg length", _INT),
    ("MQIACF_BUFFER_LENGTH", "Buffer Length", _INT),
    ("MQIACF_PERSISTENCE", "Persistence", _INT),
    ("MQIACF_PRIORITY", "Priority", _INT),
    ("MQIACF_EXPIRY", "Expiry", _INT),
    ("MQIACF_REPORT", "Report Options", _INT),
    ("MQIACF_KNOWN_DEST_COUNT", "Known_dest_count", _INT),
    ("MQIACF_UNKNOWN_DEST_COUNT", "Unknown_dest_count", _INT),
    ("MQIACF_INVALID_DEST_COUNT", "Invalid_dest_count", _INT),
    ("MQCACH_FORMAT_NAME", "Format_name", _STR),
    ("MQCACF_PUT_DATE", "Put_date", _STR),
    ("MQCACF_PUT_TIME", "Put_time", _STR),
    ("MQCACF_REPLY_TO_Q", "Reply_to_Q", _STR),  # amqsact0.c's label ends in a blank (the lexer strips it)
    ("MQCACF_REPLY_TO_Q_MGR", "Reply_to_Q_Mgr", _STR),
    ("MQBACF_MSG_ID", "Msg_id", _BYTES),
    ("MQBACF_CORREL_ID", "Correl_id", _BYTES),
    ("MQBACF_GROUP_ID", "GroupId", _BYTES),
    ("MQBACF_ACCOUNTING_TOKEN", "AccountingToken", _BYTES),
    ("MQBACF_MQMD_STRUCT", "MQMD Structure", _BYTES),
    ("MQBACF_MQPMO_STRUCT", "MQPMO Structure", _BYTES),
    ("MQBACF_MQGMO_STRUCT", "MQGMO Structure", _BYTES),
    ("MQBACF_MESSAGE_DATA", "Message Data", _BYTES),
    # a channel agent's message on a transmission queue: its transmission queue header (MQXQH)
    ("MQBACF_XQH_MSG_ID", "Transmit Header Msg_id", _BYTES),
    ("MQBACF_XQH_CORREL_ID", "Transmit Header Correl_id", _BYTES),
    ("MQCACF_XQH_REMOTE_Q_NAME", "Transmit Header RemoteQName", _STR),
    ("MQCACF_XQH_REMOTE_Q_MGR", "Transmit Header RemoteQMgr", _STR),
    ("MQCACF_XQH_PUT_DATE", "Transmit Header Put_date", _STR),
    ("MQCACF_XQH_PUT_TIME", "Transmit Header Put_time", _STR),
)

# key (amqsevt's, or the constant as ``amqsevt -d`` prints it) -> the field
_BY_KEY: dict[str, tuple] = {}
for _field in FIELDS:
    _BY_KEY[amqsevt_key(_field[0])] = _field
    _BY_KEY[_field[0]] = _field
del _field

#: The key of the list of operations in ``eventData`` (the group MQGACF_ACTIVITY_TRACE), and its -d spelling.
TRACE_GROUP_KEYS = (amqsevt_key("MQGACF_ACTIVITY_TRACE"), "MQGACF_ACTIVITY_TRACE")
# amqsact's header numbers checked as the header is read (a bad one is unknown, its message still read): signed?
_HEADER_NUMBERS = {"SeqNumber": True, "ApplicationPid": True, "Trace Detail Level": False}
# Where a top-level object starts: a "{" and an envelope key (pretty-printed: on the next line; compact: right after
# it), wherever it is, so that objects on one line are cut apart too. In JSON text a '{' followed by '"' is never
# inside a string (a string's '"' is escaped): a match is an object opening with that key.
_OBJECT_START = re.compile(
    r'\{[ \t\r\n]*"(?:eventSource|eventType|eventReason|eventCreation|eventData|callbackReason)"')
# Between two top-level values: blanks and byte order marks (a shipper joining files keeps each one's); in a JSON
# array of the objects (the text opens with "["), also its commas and its "]" (with the "[" of a next array).
_BETWEEN = re.compile(r"[\s\ufeff]*")
_BETWEEN_IN_ARRAY = re.compile(r"(?:[\s\ufeff,]|\](?:[\s\ufeff]*\[)?)*")
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})*")
_UNKNOWN = re.compile(r"Unknown \[(-?\d+)\]")  # lookup() of a number it has no name for
_RAW_LIMIT = 4_000  # characters of a broken object kept as a problem's raw text


class _BadValue(Exception):
    """A value amqsevt cannot have printed for its field: the reason of its operation's problem."""


def _number_text(value: object) -> str:
    """A number as amqsact prints it (decimal); anything else as its JSON text, for the checks to refuse."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value)


def _options_text(value: object) -> str:
    """Options in decimal: amqsevt prints them as ``"0x00002044"`` (put, get, connect), as
    ``{"options": 16, "optionsString": [...]}`` (open, close) or, in other versions, as a number."""
    if isinstance(value, dict):
        inner = value.get("options", value.get("value"))
        return _number_text(inner) if not isinstance(inner, (dict, list)) else json.dumps(value)
    if isinstance(value, str):
        text = value.strip()
        if text[:2].lower() == "0x" and 2 < len(text) <= 10 and _HEX.fullmatch(text[2:].zfill(8)):
            number = int(text[2:], 16)
            return str(number - (1 << 32) if number >= 1 << 31 else number)  # MQLONG printed with %08X
    return _number_text(value)


def _constant_text(value: object, prefix: str, numbers: dict) -> str:
    """A named constant as amqsact prints it: ``Clusrcvr`` -> ``MQCHT_CLUSRCVR``; a number amqsact has no name
    for stays a number (as amqsact prints it)."""
    if isinstance(value, dict):  # {"name": ..., "value": ...}
        value = value.get("value", value.get("name"))
    if isinstance(value, int) and not isinstance(value, bool):
        return numbers.get(value, str(value))
    if not isinstance(value, str):
        return json.dumps(value)
    text = value.strip()
    unknown = _UNKNOWN.fullmatch(text)
    if unknown:
        return unknown.group(1)
    if not text or text.startswith("MQ") or printed_number(text) is not None:
        return text
    name = prefix + text.upper().replace(" ", "_")
    # lookup() spelled a single Q as QUEUE (MQOT_Q_MGR -> "Queue Mgr"): no such constant holds QUEUE itself
    if "_QUEUE_" in name:
        return name.replace("_QUEUE_", "_Q_", 1)
    return name[:-6] + "_Q" if name.endswith("_QUEUE") else name


def _bytes_of(label: str, value: object) -> bytes:
    # formatHex prints upper-case hex; a run of decimal digits without a leading zero is printed bare (a number)
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or len(text) % 2 or not _HEX.fullmatch(text):
        raise _BadValue(f"{label} {clip(json.dumps(value))} is not a byte string printed in hex")
    return bytes.fromhex(text)


def _read_value(field: tuple, value: object) -> str | bytes:
    """One value as amqsact prints it (str), or its bytes for a byte string."""
    label, kind = field[1], field[2]
    if kind == _BYTES:
        return _bytes_of(label, value)
    if kind == _STR:
        return value.rstrip() if isinstance(value, str) else _number_text(value)
    if kind == _OPTIONS:
        return _options_text(value)
    if kind == _COMP:
        return _constant_text(value, "MQCC_", _MQCC)
    if kind == _REASON:
        return _number_text(value.get("value") if isinstance(value, dict) else value)
    if kind == "const":
        return _constant_text(value, field[3], field[4])
    return _number_text(value)


class AmqsevtTraceReader(TraceReader):
    """amqsevt's JSON objects read into the amqsact reader's trace messages and operation blocks."""

    def __init__(self, source: str, zone: tzinfo, state: TraceState | None, on_chunk, chunk_ops: int):
        super().__init__(source, zone, state, on_chunk, chunk_ops)
        self.other_events = 0
        self._line_at = (0, 1)  # (offset, its line): lines are counted forward only, once

    def line_of(self, offset: int, text: str) -> int:
        at, line = self._line_at
        line += text.count("\n", at, offset)
        self._line_at = (offset, line)
        return line

    def feed_text(self, text: str) -> None:
        # The text is cut at every object start into pieces, each sliced once and decoded alone: a cut object
        # whose open list or object would take in the next ones (and those the next) costs its own text only,
        # and no piece is copied or searched twice, whatever the layout.
        first = _BETWEEN.match(text).end()
        array = text.startswith("[", first)
        between = _BETWEEN_IN_ARRAY if array else _BETWEEN
        cut = first + 1 if array else 0
        for found in _OBJECT_START.finditer(text, first + 1):
            self.feed_piece(text, cut, found.start(), between)
            cut = found.start()
        self.feed_piece(text, cut, len(text), between)

    def feed_piece(self, text: str, start: int, stop: int, between: re.Pattern) -> None:
        """The top-level values of ``text[start:stop]``, a piece that holds at most one object start (its own)."""
        piece = text[start:stop]
        decode = JSON_DECODER.raw_decode
        at = between.match(piece).end()
        while at < len(piece):
            line = self.line_of(start + at, text)
            try:
                obj, used = decode(piece, at)
            except (ValueError, RecursionError) as exc:
                if isinstance(exc, json.JSONDecodeError):
                    reason = f"{exc.msg} (line {line + piece.count(chr(10), at, exc.pos)})"
                else:  # the decoder's own recursion limit (ints too long for int() are strings: JSON_DECODER)
                    reason = too_deep_reason(piece[at:]) or type(exc).__name__
                self.problem(line, f"not a JSON object as amqsevt prints it: {reason}", piece[at:at + _RAW_LIMIT])
                return  # the rest of the piece is the broken object's
            too_deep = too_deep_reason(piece[at:used])
            if too_deep:  # an amqsevt object nests 6 deep; deeper would cost more than itself when printed
                self.problem(line, f"not a JSON object as amqsevt prints it: {too_deep}",
                             piece[at:min(used, at + _RAW_LIMIT)])
            else:
                self.event(obj, line, piece, at, used)
            at = between.match(piece, used).end()

    def event(self, obj: object, line: int, text: str, start: int, after: int) -> None:
        data = obj.get("eventData") if isinstance(obj, dict) else None
        operations = next((data[k] for k in TRACE_GROUP_KEYS if k in data), None) if isinstance(data, dict) else None
        if not isinstance(operations, list):
            if isinstance(obj, dict) and ("eventType" in obj or "eventSource" in obj) and (
                    not isinstance(data, dict) or not any(k in data for k in TRACE_GROUP_KEYS)):
                self.other_events += 1  # another event's (or a message amqsevt could not format): not a trace
                return
            self.problem(line, "not an amqsevt activity trace object: no eventData.activityTrace list",
                         text[start:min(after, start + _RAW_LIMIT)])
            return
        self.result.trace_messages += 1
        self.msg = msg = TraceMessage(line, self.result.trace_messages)
        msg.form = "verbose"  # amqsevt prints every field: the verbose form's
        self.header(msg, data, obj, line)
        for index, group in enumerate(operations):
            msg.ops_seen += 1
            self.operation(index, group, line)
        self.msg = None

    def header(self, msg: TraceMessage, data: dict, obj: dict, line: int) -> None:
        for key, value in data.items():
            if key in TRACE_GROUP_KEYS:
                continue
            field = _BY_KEY.get(key)
            if field is None:
                msg.header[key] = value if isinstance(value, str) else json.dumps(value)
                continue
            label = field[1]
            try:
                got = _read_value(field, value)
            except _BadValue as exc:
                self.problem(line, f"{exc}: taken as not printed", f"{key}: {json.dumps(value)}")
                continue
            if isinstance(got, bytes):
                msg.dumps[label] = got
                got = got.hex().upper()
            signed = _HEADER_NUMBERS.get(label)
            if signed is not None and printed_number(got, signed) is None:
                self.problem(line, f"{number_reason(label, got, signed)}: taken as not printed",
                             f"{key}: {json.dumps(value)}")
                continue
            msg.header[label] = got
        # amqsact's connection key is the MQMD CorrelId; amqsevt prints the MQMD's only for some events
        # ("correlationID"), and the trace's own ConnectionId parameter carries the same connection id
        correl = obj.get("correlationID")
        if isinstance(correl, str) and correl and len(correl) % 2 == 0 and _HEX.fullmatch(correl):
            msg.header["Correl_id"] = correl.upper()
        elif "ConnectionId" in msg.header:
            msg.header["Correl_id"] = msg.header["ConnectionId"]

    def operation(self, index: int, group: object, line: int) -> None:
        raw = json.dumps(group, ensure_ascii=False)
        op = OperationBlock(line, index, raw)
        if not isinstance(group, dict):
            op.bad = f"operation {index} of the trace message is not a JSON object"
        else:
            for key, value in group.items():
                field = _BY_KEY.get(key)
                if field is None:  # kept as printed, as amqsact keeps every field
                    op.fields[key] = value if isinstance(value, str) else json.dumps(value)
                    continue
                try:
                    got = _read_value(field, value)
                except _BadValue as exc:
                    op.bad = op.bad or str(exc)
                    continue
                if isinstance(got, bytes):
                    op.dumps[field[1]] = got
                    got = got.hex().upper()
                op.fields[field[1]] = got
        self.finish_verbose(op)

    def close(self) -> ActivityTraceResult:
        if self.other_events:
            self.note(0, f"{self.other_events} amqsevt objects that are not activity trace messages skipped")
        return super().close()


# ----------------------------------------------------------------------------------------------------------
# file names, sniffing, entry points


def looks_like_amqsevt_trace(head: str) -> bool:
    """The first 4 KiB of a file are amqsevt's JSON of an activity trace (whatever its name)."""
    return '"eventData"' in head and any(f'"{k}"' in head for k in TRACE_GROUP_KEYS)


def parse_amqsevt_json_text(
    text: str, source: str, *, tz: tzinfo | str | None = None, state: TraceState | None = None,
    on_chunk: Callable[[TraceChunk], None] | None = None, chunk_ops: int = 0,
) -> ActivityTraceResult:
    """amqsevt's JSON output (``-o json`` or ``-o json_compact``) of activity trace messages: the same result as
    :func:`clwl.parse.activity_trace.parse_activity_trace_lines` gives for amqsact's output of them."""
    reader = AmqsevtTraceReader(source, time_zone(tz), state, on_chunk, chunk_ops)
    reader.feed_text(text)
    return reader.close()


def parse_amqsevt_json_lines(
    lines: Iterable[str], source: str, *, tz: tzinfo | str | None = None, state: TraceState | None = None,
    on_chunk: Callable[[TraceChunk], None] | None = None, chunk_ops: int = 0,
) -> ActivityTraceResult:
    """The same on lines (an open file): they are joined, a JSON object may span many."""
    return parse_amqsevt_json_text("".join(lines), source, tz=tz, state=state, on_chunk=on_chunk,
                                   chunk_ops=chunk_ops)


def parse_amqsevt_json_file(
    path: str | Path, *, tz: tzinfo | str | None = None, state: TraceState | None = None,
    on_chunk: Callable[[TraceChunk], None] | None = None, chunk_ops: int = 0,
) -> ActivityTraceResult:
    """An amqsevt JSON output file. Undecodable bytes become U+FFFD (the values they are in are then refused by
    their own checks)."""
    source = str(path)
    with open_input(path, encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    return parse_amqsevt_json_text(text, source, tz=tz, state=state, on_chunk=on_chunk, chunk_ops=chunk_ops)
