"""Operation blocks and summary lines (from :class:`~clwl.parse.activity_trace_lexer.TraceLexer`) to
:class:`~clwl.parse.activity_trace_records.TraceOperation` records: the operation's name, the fields it must print,
its time (High Res Time, else OperationDate/OperationTime in the zone), options, handle and trace level, with the
trace message's header values; a block that cannot be used becomes a problem.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import tzinfo
from typing import Mapping

from clwl.parse.activity_trace_lexer import OperationBlock, TraceLexer
from clwl.parse.activity_trace_records import ActivityTraceResult, TraceOperation, TraceState
from clwl.parse.activity_trace_values import (
    Rejected,
    high_res_time,
    int_field,
    local_time,
    mqmd_fields,
    name_or_none,
    printed_number,
)
from clwl.parse.common import clip

__all__ = ["XQH_MSG_ID", "XQH_REMOTE_QMGR", "XQH_REMOTE_QUEUE", "OperationReader"]

# The transmission queue header (MQXQH) of a message got from or put to a transmission queue, as amqsact0.c labels
# MQBACF_XQH_MSG_ID, MQCACF_XQH_REMOTE_Q_MGR and MQCACF_XQH_REMOTE_Q_NAME (docs/activity-trace.md, "Channel agents").
XQH_MSG_ID, XQH_REMOTE_QMGR, XQH_REMOTE_QUEUE = (
    "Transmit Header Msg_id", "Transmit Header RemoteQMgr", "Transmit Header RemoteQName")

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
# Byte strings of a fixed size: a dump of another size was cut (labels from amqsact0.c's byte-string table).
_ID_SIZES = {"Msg_id": 24, "Correl_id": 24, "GroupId": 24, "AccountingToken": 32, XQH_MSG_ID: 24,
             "Transmit Header Correl_id": 24}
_MEDIUM_HINTS = ("High Res Time", "Resolved_Q_Name", "Resolved_Q_mgr", "Msg_id", "Persistence",
                 "QMgr Operation Duration", "Resolved_type")


def hex_or_none(dump: bytes | None) -> str | None:
    """A byte string as upper-case hex; None when it was not printed as a hex dump (a value on the label's own line
    is not one: the id is then unknown rather than whatever text it was)."""
    return dump.hex().upper() if dump is not None else None


def message_id(dumps: Mapping[str, bytes]) -> str | None:
    """The call's MQMD MsgId: the Msg_id dump (MEDIUM), else the MQMD dump's (HIGH); None when neither."""
    traced = dumps.get("Msg_id")
    if traced is not None:
        return traced.hex().upper()
    return mqmd_fields(dumps.get("MQMD Structure", b"")).get("msg_id")


class OperationReader(TraceLexer):
    """The lexer's blocks and summary lines read into TraceOperation records; each record goes to :meth:`accept`
    (:class:`clwl.parse.activity_trace_puts.TraceReader`: the handles and the put events)."""

    def __init__(self, source: str, zone: tzinfo, state: TraceState | None, on_chunk, chunk_ops: int):
        super().__init__(source, state, on_chunk, chunk_ops)
        self.zone = zone
        self.unknown_ops: Counter = Counter()
        self.summary_puts = 0

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
            "seq": printed_number(h.get("SeqNumber")),  # (checked as they were read: a bad one is not in the header)
            "qmgr": name_or_none(h.get("QueueManager")),
            "appl": h.get("ApplicationName"),
            "pid": printed_number(h.get("ApplicationPid")),
            "user": h.get("UserId"),
            "channel": name_or_none(h.get("Channel Name")),
            "channel_type": h.get("Channel Type"),
            "conn_name": name_or_none(h.get("ConnName")),
            "environment": name_or_none(h.get("API Environment")),
            "level": h.get("Trace Detail Level"),
        }
        return values

    def operation_name(self, op_id: str, line: int) -> str:
        name = _OPERATIONS.get(op_id)
        if name is not None:
            return name
        number = op_id.rpartition(":")[2]  # amqsact prints an id it has no name for as a number
        if printed_number(number) is not None:
            self.unknown_ops[number] += 1
            return f"unknown:{number}"
        raise Rejected(f"unknown Operation Id {clip(op_id)!r}")

    def level(self, header_level: str | None, fields: Mapping[str, str], dumps: Mapping[str, bytes]) -> str:
        known = _LEVELS.get(printed_number(header_level, signed=False))
        if known is not None:
            return known
        if any(k.endswith("Structure") for k in dumps):
            return "high"
        if any(k in fields for k in _MEDIUM_HINTS):
            return "medium"
        return "low"

    def finish_verbose(self, op: OperationBlock) -> None:
        raw = "\n".join(op.raw)
        try:
            if op.bad:
                raise Rejected(op.bad)
            f = op.fields
            op_id = f.get("Operation Id")
            if op_id is None:
                raise Rejected("truncated operation block: no Operation Id")
            name = self.operation_name(op_id, op.line)
            missing = [label for label in ("Completion Code", "Reason Code") + _REQUIRED.get(name, ())
                       if label not in f]
            if missing:
                raise Rejected(f"{name} block without {', '.join(missing)} (truncated or not traced)")
            for label, size in _ID_SIZES.items():
                got = op.dumps.get(label)
                if got is not None and len(got) != size:
                    raise Rejected(f"{label} dump holds {len(got)} bytes, not {size} (truncated)")
            hv = self.header_values()
            high_res = int_field(f, "High Res Time")
            when = high_res_time(high_res)
            basis = "high_res" if when is not None else None
            if when is None:
                when = local_time(f.get("OperationDate"), f.get("OperationTime"), self.zone)
                basis = "local" if when is not None else None
            options = None
            for label in _OPTION_LABELS:
                if label in f:
                    options = int_field(f, label)
                    break
            record = TraceOperation(
                self.source, op.line, "verbose", self.msg.ordinal, hv["connection"], hv["seq"], op.index, name,
                op_id, hv["qmgr"], hv["appl"], hv["pid"], int_field(f, "ApplicationTid"), hv["user"], hv["channel"],
                hv["channel_type"], hv["conn_name"], when, basis, high_res, f.get("Completion Code"),
                int_field(f, "Reason Code"), int_field(f, "Hobj"), name_or_none(f.get("Object_name")),
                name_or_none(f.get("Object_Q_mgr_name")), options, self.level(hv["level"], f, op.dumps), f,
                hv["environment"], message_id(op.dumps), hex_or_none(op.dumps.get(XQH_MSG_ID)),
                name_or_none(f.get(XQH_REMOTE_QMGR)), name_or_none(f.get(XQH_REMOTE_QUEUE)))
        except Rejected as exc:
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
            when = local_time(date, time, self.zone)
            thread_id, reason_code, hobj_value = (int_field(fields, "ApplicationTid"),
                                                  int_field(fields, "Reason Code"), int_field(fields, "Hobj"))
        except Rejected as exc:
            self.problem(lineno, str(exc), line)
            return
        hv = self.header_values()
        record = TraceOperation(
            self.source, lineno, "summary", self.msg.ordinal, hv["connection"], hv["seq"], self.msg.ops_seen - 1,
            name, op_id, hv["qmgr"], hv["appl"], hv["pid"], thread_id, hv["user"], hv["channel"],
            hv["channel_type"], hv["conn_name"], when, "local" if when is not None else None, None, comp, reason_code,
            hobj_value, name_or_none(objname), None, None, self.level(hv["level"], {}, {}), fields, hv["environment"])
        self.result.operations.append(record)
        self.result.counts[name] += 1
        self.result.forms.add("summary")
        if name in ("MQPUT", "MQPUT1") and comp != "MQCC_FAILED":
            self.summary_puts += 1
        self.tick()

    def accept(self, rec: TraceOperation, op: OperationBlock, hv: dict) -> None:
        """A verbose operation record, read without a problem."""
        raise NotImplementedError

    def close(self) -> ActivityTraceResult:
        if self.unknown_ops:
            ids = ", ".join(f"{k} ({v})" for k, v in sorted(self.unknown_ops.items()))
            self.note(0, f"operation ids amqsact printed as numbers (kept as unknown:<id>): {ids}")
        if self.summary_puts:
            self.note(0, f"summary form: {self.summary_puts} puts carry no length, options or ids and give no put "
                         "events; run amqsact -v for them")
        return super().close()
