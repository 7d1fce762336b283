"""What a parse of amqsact output returns (:mod:`clwl.parse.activity_trace`): one :class:`TraceOperation` per MQI
call, one :class:`TracedPut` per put event, the file's notes, and the open handles carried from one trace message
(and file) to the next (:class:`TraceState`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Mapping

from clwl.parse.common import ParseProblem
from clwl.parse.put_record import PutRecord

__all__ = [
    "ORIGIN",
    "ActivityTraceResult",
    "OpenHandle",
    "TraceChunk",
    "TraceNote",
    "TraceOperation",
    "TraceState",
    "TracedPut",
]

#: ``silver.message_events.source`` value of an event that came from the activity trace.
ORIGIN = "activity_trace"


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
    # Read for the channel agents' trace (docs/activity-trace.md, "Channel agents"); None where not printed.
    api_environment: str | None = None  # header API Environment: MQXE_MCA (a channel agent), MQXE_OTHER, ...
    msg_id: str | None = None  # the call's MQMD MsgId, hex (Msg_id at MEDIUM, the MQMD dump at HIGH)
    xmitq_msg_id: str | None = None  # Transmit Header Msg_id: the message's own MsgId, inside the MQXQH
    xmitq_remote_qmgr: str | None = None  # Transmit Header RemoteQMgr
    xmitq_remote_queue: str | None = None  # Transmit Header RemoteQName


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
class OpenHandle:
    """An MQOPEN's handle, as the puts on it need it (the values of :attr:`TraceState.handles`)."""

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

    handles: dict[tuple[str, int], OpenHandle] = field(default_factory=dict)


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
    agent_puts: int = 0  # MQPUT/MQPUT1 of a channel agent (MQXE_MCA): an arrival, not a put event
    forms: set[str] = field(default_factory=set)
    state: TraceState = field(default_factory=TraceState)
