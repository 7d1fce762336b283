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
  :class:`~clwl.parse.put_record.PutRecord` (``source`` is the file, as for every parser; ``TracedPut.origin`` is
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

The parts, each reading what the one before hands it: :mod:`clwl.parse.activity_trace_lexer` (lines to trace
messages and operation blocks), :mod:`clwl.parse.activity_trace_operations` (blocks to operation records, with
:mod:`clwl.parse.activity_trace_values` reading the printed numbers and times), :mod:`clwl.parse.activity_trace_puts`
(handles and put events); what they return is :mod:`clwl.parse.activity_trace_records`.
"""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path
from typing import Callable, Iterable

from clwl.parse.activity_trace_puts import TraceReader
from clwl.parse.activity_trace_records import ORIGIN, ActivityTraceResult, TraceChunk, TraceState
from clwl.parse.activity_trace_values import time_zone
from clwl.parse.common import open_input

__all__ = [
    "ACTIVITY_TRACE_NAME_PATTERNS",
    "ORIGIN",  # clwl.parse.activity_trace_records's; imported from here by spark.ingest.message_events
    "TraceState",  # clwl.parse.activity_trace_records's; imported from here by clwl.analyses.check and spark.ingest
    "is_activity_trace_name",
    "looks_like_amqsact",
    "parse_activity_trace_file",
    "parse_activity_trace_lines",
    "parse_activity_trace_text",
]

#: Landing-folder file names of amqsact output (case-insensitive fnmatch patterns); see docs/activity-trace.md.
ACTIVITY_TRACE_NAME_PATTERNS = ("*.amqsact", "*.amqsact.txt")

# ----------------------------------------------------------------------------------------------------------
# file names and sniffing


def is_activity_trace_name(name: str) -> bool:
    low = name.lower()
    return low.endswith(".amqsact") or low.endswith(".amqsact.txt")


def looks_like_amqsact(head: str) -> bool:
    """The first lines of a file are amqsact output (whatever its name): how amqsmon output is told apart."""
    return "MonitoringType: MQI Activity Trace" in head

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
    reader = TraceReader(source, time_zone(tz), state, on_chunk, chunk_ops)
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
    with open_input(path, encoding="utf-8", errors="replace", newline="") as handle:
        return parse_activity_trace_lines(handle, source, tz=tz, state=state, on_chunk=on_chunk, chunk_ops=chunk_ops)
