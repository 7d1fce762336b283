"""What a message put record is: its columns (:data:`PUT_COLUMNS`, the documented CSV/JSONL schema) and the
typed record a parser returns (:class:`PutRecord`), shared by every reader of put records (clwl.parse.puts, the
activity trace's put events).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, make_dataclass
from datetime import datetime

__all__ = ["APPLICATION_MAX", "BINDS", "PUT_COLUMNS", "PutColumn", "PutRecord", "is_zero_token", "make_put_record"]


@dataclass(frozen=True)
class PutColumn:
    name: str
    type: str  # timestamp | string | boolean | long (Spark SQL type names)
    required: bool  # the column must be present (in a CSV header)
    nullable: bool  # the value may be empty
    description: str


PUT_COLUMNS: tuple[PutColumn, ...] = (
    PutColumn("put_time", "timestamp", True, False,
              "When the application put the message, ISO-8601 UTC, e.g. 2026-11-20T10:15:30.120Z."),
    PutColumn("sending_qmgr", "string", True, False,
              "Queue manager the putting application is connected to (where the CLWL choice is made)."),
    PutColumn("queue", "string", True, False,
              "Queue the application opened: cluster queue, alias or queue manager alias (MQ name, max 48)."),
    PutColumn("target_qmgr", "string", True, True,
              "ObjectQMgrName the application named; empty = not named, so CLWL chooses."),
    PutColumn("bind", "string", True, False,
              "Bind option in effect: notfixed, open or group (DEFBIND when the application used AS_Q_DEF)."),
    PutColumn("open_handle", "string", True, True,
              "Identifier of the MQOPEN handle the put used (bind on open: one choice per handle)."),
    PutColumn("group_id", "string", True, True,
              "GroupId (hex) of the message group the message belongs to; empty if none."),
    PutColumn("logical_order", "boolean", True, False,
              "MQPMO_LOGICAL_ORDER was used (with bind group: the whole group goes to one queue manager)."),
    PutColumn("from_cluster_channel", "boolean", True, False,
              "The message arrived over a cluster channel instead of being put by a local application."),
    PutColumn("pcf", "boolean", True, False, "The message is a cluster PCF (repository) message."),
    PutColumn("length", "long", True, False, "Message length in bytes (a non-negative integer)."),
    PutColumn("persistent", "boolean", True, False, "The message is persistent."),
    PutColumn("accounting_token", "string", True, False,
              "MQMD AccountingToken, 64 hex digits; all zeros = the message cannot be re-allocated."),
    PutColumn("msg_id", "string", True, False, "MQMD MsgId, 48 hex digits; unique within a file."),
    PutColumn("observed_qmgr", "string", False, True,
              "Queue manager the message was observed to arrive at (optional)."),
    PutColumn("observed_channel", "string", False, True,
              "Cluster-sender channel the message was observed to leave by (optional)."),
    PutColumn("observed_xmitq", "string", False, True,
              "Transmission queue the message was observed on (optional)."),
    PutColumn("application", "string", False, True,
              "Name of the application that put the message (optional; printable text, at most 128 characters). "
              "Without it, an open_handle of the form application:pid:handle names the application."),
)

#: Longest ``application`` value a put record may carry (MQ's own ApplName is 28; a deployment's name fits).
APPLICATION_MAX = 128

BINDS = ("notfixed", "open", "group")


@dataclass(frozen=True, slots=True)
class PutRecord:
    """One message put, typed."""

    source: str
    line: int
    put_time: datetime  # aware, UTC
    sending_qmgr: str
    queue: str
    target_qmgr: str | None
    bind: str  # notfixed | open | group
    open_handle: str | None
    group_id: str | None
    logical_order: bool
    from_cluster_channel: bool
    pcf: bool
    length: int
    persistent: bool
    accounting_token: str  # 64 hex digits, upper case
    accounting_token_zero: bool  # all zeros: not eligible for re-allocation
    msg_id: str  # 48 hex digits, upper case
    observed_qmgr: str | None
    observed_channel: str | None
    observed_xmitq: str | None
    # Last, with a default: a put built without it (an activity trace's) names no application of its own.
    application: str | None = None


# Building millions of frozen records through the generated __init__ costs one object.__setattr__ per
# field. Rows are built instead as a mutable slots twin with the same layout and then given the frozen
# class; the result is an ordinary PutRecord (immutable, equal to one built the normal way). Verified
# once at import, with the normal constructor as fallback.
_PutRecordRow = make_dataclass(
    "_PutRecordRow", [(f.name, f.type) for f in fields(PutRecord)], slots=True, eq=False, repr=False
)


def _make_fast(*values) -> PutRecord:
    row = _PutRecordRow(*values)
    object.__setattr__(row, "__class__", PutRecord)
    return row


def _choose_maker():
    values = range(len(fields(PutRecord)))
    try:
        probe = _make_fast(*values)
    except TypeError:  # pragma: no cover - a Python where the layouts are not compatible
        return PutRecord
    if type(probe) is PutRecord and probe == PutRecord(*values):
        return _make_fast
    return PutRecord  # pragma: no cover


#: ``PutRecord(*values)`` (source, line, then every field in order), built the fast way above when this Python
#: allows it: how the row readers (clwl.parse.put_rows) make millions of records.
make_put_record = _choose_maker()


def is_zero_token(hex_token: str | None) -> bool:
    """True when an AccountingToken (hex) is all zeros: the message is not eligible for re-allocation.

    An empty or missing token is not "all zeros" (it is unknown), and neither is text that is not hex.
    """
    if not hex_token:
        return False
    return hex_token.count("0") == len(hex_token)
