"""Each message's observed journey over the channels, from the channel agents' activity trace (pure; issue 29).

A sending queue manager's sender agent (cluster-sender, sender or server channel) gets each message from the
transmission queue: its traced MQGET carries the transmission queue header (``Transmit Header Msg_id``,
``RemoteQMgr``, ``RemoteQName``). That MQGET's time is when the message left the transmission queue. The
receiving queue manager's receiver agent (cluster-receiver, receiver or requester channel) then puts it to its
target queue with the message's own MsgId: that MQPUT (or MQPUT1) is its arrival. Both are rows of
``bronze.activity_operations`` (:class:`clwl.parse.activity_trace_records.TraceOperation`, or the same columns as
a mapping, as read from the lake); docs/activity-trace.md ("Channel agents") says where each value comes from.

Two steps, each a function:

* :func:`channel_events`: the departures and arrivals the rows hold. A channel agent works in units of work (a
  batch): what it got or put under syncpoint counts once the connection's MQCMIT follows, and not at all when an
  MQBACK (or a failed MQCMIT) follows: the message went back to the transmission queue, or never reached the
  target queue. An event whose unit of work is still open where the trace ends is kept, ``committed`` False.
  A browse is not a departure (the message stays).
* :func:`observed_timeline`: per message id, one :class:`ObservedMessage`: when it left which queue manager over
  which channel (its first departure) and when it arrived where, on which queue (its last arrival). A message
  relayed by a gateway queue manager leaves twice and arrives twice: the counts say so.

The message id is the application's MsgId, which the message keeps end to end: on the sending side the one in
the transmission queue header (the MQGET's own ``Msg_id`` is the descriptor the queue manager made for the
transmission queue, another id), on the receiving side the put's ``Msg_id``. Rows traced at LOW carry neither:
they give no event.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Callable, Iterable, Mapping

__all__ = ["RECEIVING_AGENTS", "SENDING_AGENTS", "ChannelEvent", "ObservedMessage", "channel_events",
           "observed_timeline"]

#: Channel types (the trace header's ``Channel Type``) whose agent gets from a transmission queue and sends.
SENDING_AGENTS = frozenset({"MQCHT_CLUSSDR", "MQCHT_SENDER", "MQCHT_SERVER"})
#: Channel types whose agent receives and puts to the target queue.
RECEIVING_AGENTS = frozenset({"MQCHT_CLUSRCVR", "MQCHT_RECEIVER", "MQCHT_REQUESTER"})
#: The header's ``API Environment`` of a queue manager-to-queue manager channel agent (a client's is
#: MQXE_MCA_SVRCONN): what tells a receiving agent when the header names no channel type.
MCA_ENVIRONMENT = "MQXE_MCA"

# MQGMO_* / MQPMO_* values (cmqc.h).
MQGMO_SYNCPOINT, MQGMO_SYNCPOINT_IF_PERSISTENT = 0x2, 0x1000
MQGMO_BROWSE = 0x10 | 0x20 | 0x800  # BROWSE_FIRST, BROWSE_NEXT, BROWSE_MSG_UNDER_CURSOR
MQPMO_SYNCPOINT = 0x2

DEPARTURE, ARRIVAL = "departure", "arrival"


@dataclass(frozen=True, slots=True)
class ChannelEvent:
    """A message leaving a transmission queue (departure) or reaching its target queue (arrival)."""

    kind: str  # departure | arrival
    msg_id: str  # the application's MsgId (hex)
    at: datetime | None  # the operation's time (UTC)
    qmgr: str | None  # the traced queue manager
    channel: str | None  # the agent's channel (header Channel Name)
    queue: str | None  # departure: the transmission queue got from; arrival: the queue put to
    remote_qmgr: str | None  # departure: the transmission header's RemoteQMgr (where it is addressed)
    remote_queue: str | None  # departure: the transmission header's RemoteQName
    committed: bool  # False: its unit of work is still open where the trace ends
    connection: str
    source: str | None  # the file and line of the operation, for a reader to find it
    line: int | None


@dataclass(frozen=True, slots=True)
class ObservedMessage:
    """One message's observed journey: the first departure and the last arrival the trace holds (None where
    that end was not traced)."""

    msg_id: str
    left_xmitq_at: datetime | None
    left_qmgr: str | None
    xmitq: str | None
    channel: str | None  # the sending agent's channel
    remote_qmgr: str | None
    remote_queue: str | None
    left_committed: bool | None
    arrived_at: datetime | None
    arrived_qmgr: str | None
    arrival_channel: str | None  # the receiving agent's channel
    target_queue: str | None
    arrived_committed: bool | None
    departures: int  # how many departures of this id the trace holds (a relay: one per hop)
    arrivals: int

    @property
    def transit(self) -> timedelta | None:
        """From leaving the transmission queue to arriving; None unless both were traced."""
        if self.left_xmitq_at is None or self.arrived_at is None:
            return None
        return self.arrived_at - self.left_xmitq_at


# ----------------------------------------------------------------------------------------------------------
# reading a row (a TraceOperation or a mapping of bronze.activity_operations' columns)


def _reader(row: object) -> Callable[[str], object]:
    if isinstance(row, Mapping):
        return row.get
    return lambda name: getattr(row, name, None)


def _succeeded(get: Callable[[str], object]) -> bool:
    return get("comp_code") != "MQCC_FAILED"


# ----------------------------------------------------------------------------------------------------------
# the events, one rule each (kind, rule(get) -> event fields or None, under syncpoint(options))


def _departure(get: Callable[[str], object]) -> dict | None:
    """A successful MQGET that carries a transmission queue header and removed the message (not a browse)."""
    options = get("options") or 0
    if get("operation") != "MQGET" or not _succeeded(get) or not get("xmitq_msg_id") or options & MQGMO_BROWSE:
        return None
    return {"msg_id": get("xmitq_msg_id"), "queue": get("object_name"), "remote_qmgr": get("xmitq_remote_qmgr"),
            "remote_queue": get("xmitq_remote_queue"),
            "syncpoint": bool(options & (MQGMO_SYNCPOINT | MQGMO_SYNCPOINT_IF_PERSISTENT))}


def _arrival(get: Callable[[str], object]) -> dict | None:
    """A successful MQPUT/MQPUT1 with a traced MsgId by a receiving channel agent."""
    if get("operation") not in ("MQPUT", "MQPUT1") or not _succeeded(get) or not get("msg_id"):
        return None
    channel_type = get("channel_type")
    receiving = channel_type in RECEIVING_AGENTS or (channel_type is None and get("api_environment") == MCA_ENVIRONMENT)
    if not receiving:
        return None
    return {"msg_id": get("msg_id"), "queue": get("object_name"), "remote_qmgr": None, "remote_queue": None,
            "syncpoint": bool((get("options") or 0) & MQPMO_SYNCPOINT)}


#: Which operation is which event, in order (the first rule that gives fields wins).
EVENT_RULES: tuple[tuple[str, Callable[[Callable[[str], object]], dict | None]], ...] = (
    (DEPARTURE, _departure),
    (ARRIVAL, _arrival),
)


def _event(get: Callable[[str], object]) -> ChannelEvent | None:
    for kind, rule in EVENT_RULES:
        found = rule(get)
        if found is not None:
            syncpoint = found.pop("syncpoint")
            return ChannelEvent(kind=kind, at=get("operation_time"), qmgr=get("qmgr"), channel=get("channel_name"),
                                committed=not syncpoint, connection=get("connection") or "",
                                source=get("source") or get("source_file"), line=get("line") or get("position"),
                                **found)
    return None


# ----------------------------------------------------------------------------------------------------------
# units of work: what MQCMIT, MQBACK and MQDISC do to the events of the connection since its last one


def _on_commit(pending: list[ChannelEvent], kept: list[ChannelEvent], succeeded: bool) -> None:
    if succeeded:  # a failed MQCMIT (MQRC_BACKED_OUT, ...) committed nothing
        kept.extend(replace(e, committed=True) for e in pending)
    pending.clear()


def _on_back_out(pending: list[ChannelEvent], kept: list[ChannelEvent], succeeded: bool) -> None:
    pending.clear()


def _on_disconnect(pending: list[ChannelEvent], kept: list[ChannelEvent], succeeded: bool) -> None:
    if succeeded:  # a normal disconnect commits the open unit of work
        kept.extend(replace(e, committed=True) for e in pending)
        pending.clear()


#: operation -> what it does to the connection's open unit of work (pending events, kept events, succeeded).
UNIT_OF_WORK_ENDS: dict[str, Callable[[list, list, bool], None]] = {
    "MQCMIT": _on_commit,
    "MQBACK": _on_back_out,
    "MQDISC": _on_disconnect,
}


def _order(get: Callable[[str], object]) -> tuple:
    """The connection's order: its trace messages (SeqNumber), then the operations within one."""
    seq, index = get("seq_number"), get("operation_index")
    if index is None:
        index = get("index")
    return (seq if seq is not None else -1, index if index is not None else -1)


def channel_events(operations: Iterable[object]) -> list[ChannelEvent]:
    """Every departure and arrival the operation rows hold, with what their units of work became: backed-out
    events dropped, the others kept (``committed`` False for those whose unit of work the trace does not end).
    Rows of any order and of any number of connections and files."""
    by_connection: dict[str, list[tuple[tuple, int, Callable[[str], object]]]] = defaultdict(list)
    for n, row in enumerate(operations):
        get = _reader(row)
        by_connection[get("connection") or ""].append((_order(get), n, get))
    events: list[ChannelEvent] = []
    for rows in by_connection.values():
        rows.sort(key=lambda r: (r[0], r[1]))
        pending: list[ChannelEvent] = []
        for _, _, get in rows:
            end = UNIT_OF_WORK_ENDS.get(get("operation"))
            if end is not None:
                end(pending, events, _succeeded(get))
                continue
            event = _event(get)
            if event is None:
                continue
            (events if event.committed else pending).append(event)
        events.extend(pending)  # still open where the trace ends: kept, committed False
    return events


def _first(events: list[ChannelEvent]) -> ChannelEvent | None:
    timed = [e for e in events if e.at is not None]
    return min(timed, key=lambda e: e.at) if timed else (events[0] if events else None)


def _last(events: list[ChannelEvent]) -> ChannelEvent | None:
    timed = [e for e in events if e.at is not None]
    return max(timed, key=lambda e: e.at) if timed else (events[-1] if events else None)


def observed_timeline(operations: Iterable[object]) -> dict[str, ObservedMessage]:
    """Per message id (the application's MsgId, hex), its observed journey: when it left the transmission queue
    of which queue manager over which channel (the first departure traced) and when it arrived on which queue of
    which queue manager (the last arrival traced). Sorted by message id."""
    departures: dict[str, list[ChannelEvent]] = defaultdict(list)
    arrivals: dict[str, list[ChannelEvent]] = defaultdict(list)
    for event in channel_events(operations):
        (departures if event.kind == DEPARTURE else arrivals)[event.msg_id].append(event)
    timeline: dict[str, ObservedMessage] = {}
    for msg_id in sorted(set(departures) | set(arrivals)):
        gone, came = _first(departures.get(msg_id, [])), _last(arrivals.get(msg_id, []))
        timeline[msg_id] = ObservedMessage(
            msg_id=msg_id,
            left_xmitq_at=gone.at if gone else None, left_qmgr=gone.qmgr if gone else None,
            xmitq=gone.queue if gone else None, channel=gone.channel if gone else None,
            remote_qmgr=gone.remote_qmgr if gone else None, remote_queue=gone.remote_queue if gone else None,
            left_committed=gone.committed if gone else None,
            arrived_at=came.at if came else None, arrived_qmgr=came.qmgr if came else None,
            arrival_channel=came.channel if came else None, target_queue=came.queue if came else None,
            arrived_committed=came.committed if came else None,
            departures=len(departures.get(msg_id, ())), arrivals=len(arrivals.get(msg_id, ())))
    return timeline
