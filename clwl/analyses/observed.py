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

__all__ = ["RECEIVING_AGENTS", "SENDING_AGENTS", "TIMING_CAUSES", "TIMING_TOLERANCE", "ChannelEvent", "FlowStep",
           "ObservedMessage", "TimingVerdict", "channel_events", "concerns", "message_flow",
           "observed_timeline", "timing_agreement"]

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


# ----------------------------------------------------------------------------------------------------------
# timing agreement (issue 29 item 2): the replay's wait against the observed departure

#: How far an observed moment may lie outside the replay's window and still agree: a channel agent gets a
#: message within its batch interval of the put (or of the capture that showed the channel moving again), and
#: the queue managers' clocks differ by seconds. A departure a minute or more outside the window is another
#: story: the channel did something no status capture showed.
TIMING_TOLERANCE = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class TimingVerdict:
    """The replay's wait against the channel agents' trace: ``agrees``, the ``cause`` of a disagreement (a key of
    :data:`TIMING_CAUSES`; None when it agrees) and a sentence saying both times."""

    agrees: bool
    cause: str | None
    note: str


#: The likely cause of each kind of disagreement, in words (the report and ``clwl explain`` say these).
TIMING_CAUSES: dict[str, str] = {
    "stopped-between-captures": "the channel stopped between two status captures: the last capture before the "
                                "put showed it moving messages, so the replay delivered the message at once",
    "left-after-release": "the message left well after the status capture that showed its channel moving "
                          "messages again: the channel stopped again after that capture, or worked through a "
                          "backlog",
    "capture-gap": "the channel moved messages again after the last status capture that showed it stopped, and no "
                   "later capture saw it (a capture gap): the replay kept the message waiting to the end of the day",
    "before-put": "the trace has the message leave before the replay's window began: the queue managers' clocks "
                  "differ, or the put time is not the queue manager's",
}


def _t(at: datetime) -> str:
    return at.strftime("%H:%M:%S")


def _span(a: datetime, b: datetime) -> str:
    seconds = int(abs((b - a).total_seconds()))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else (f"{m}m{s:02d}s" if m else f"{s}s")


def _at_once(get: Callable[[str], object]) -> tuple[datetime, datetime | None, str] | None:
    """Delivered at once: the replay has it leave at its put."""
    if get("held_from") is not None:
        return None
    put = get("put_time")
    return put, put, f"the replay delivered it at once at {_t(put)}"


def _released(get: Callable[[str], object]) -> tuple[datetime, datetime | None, str] | None:
    """Waited, then released when a capture showed its channel moving messages: it left within the wait."""
    if get("held_from") is None or get("held") or get("released_at") is None:
        return None
    return (get("held_from"), get("released_at"),
            f"the replay held it from {_t(get('held_from'))} and released it at {_t(get('released_at'))}")


def _held(get: Callable[[str], object]) -> tuple[datetime, datetime | None, str] | None:
    """Still waiting at the end of the day: no departure that day (the window never closes; any traced
    departure of the day is outside it)."""
    if get("held_from") is None or not get("held"):
        return None
    return get("held_from"), None, f"the replay held it from {_t(get('held_from'))} to the end of the day"


#: The replay's window for the departure, by what became of the message (the first rule that applies):
#: (name, rule(get) -> (window start, window end or None: no departure expected, how the replay has it)).
REPLAY_WINDOWS: tuple[tuple[str, Callable[[Callable[[str], object]], tuple | None]], ...] = (
    ("at-once", _at_once),
    ("released", _released),
    ("held", _held),
)


def concerns(row: object, seen: ObservedMessage) -> bool:
    """Whether the observation ``seen`` is of the replay row's message leaving its sender: the departure was
    traced on the row's sending queue manager, or (only the arrival traced) it arrived on another queue manager.
    A put that failed put no message (no timing); a receiving queue manager's own row of the same message id (a
    receiving agent's traced put is a put event there too) is not its departure."""
    get = _reader(row)
    if get("error"):
        return False
    if seen.left_qmgr is not None:
        return seen.left_qmgr == get("sending_qmgr")
    return seen.arrived_qmgr is not None and seen.arrived_qmgr != get("sending_qmgr")


def timing_agreement(row: object, seen: ObservedMessage,
                     tolerance: timedelta = TIMING_TOLERANCE) -> TimingVerdict | None:
    """The replay row's wait (``put_time``, ``held``, ``held_from``, ``released_at``, as gold.routing_replay has
    them) against when the trace has the message leave its transmission queue. It agrees when the departure falls
    inside the replay's window, widened by ``tolerance`` at both ends: at its put for a message delivered at once;
    from when it started waiting to its release for one that waited; never, that day, for one held to the end of
    the day. Only the arrival traced: the arrival stands for the departure (it cannot come before it; a transit
    is well under the tolerance). None when the observation is not of this row (:func:`concerns`) or has no time."""
    if not concerns(row, seen):
        return None
    get = _reader(row)
    moment, what = seen.left_xmitq_at, f"leave {seen.xmitq or 'the transmission queue'}"
    if moment is None:
        moment, what = seen.arrived_at, f"arrive on {seen.arrived_qmgr} (its departure was not traced)"
    if moment is None:
        return None
    for _, rule in REPLAY_WINDOWS:
        window = rule(get)
        if window is None:
            continue
        start, end, replay = window
        told = f"{replay}; the channel agents' trace has it {what} at {_t(moment)}"
        if moment < start - tolerance:
            return TimingVerdict(False, "before-put", f"{told}, {_span(moment, start)} before")
        if end is None:
            return TimingVerdict(False, "capture-gap", told)
        if moment > end + tolerance:
            cause = "stopped-between-captures" if get("held_from") is None else "left-after-release"
            return TimingVerdict(False, cause, f"{told}, {_span(end, moment)} later")
        return TimingVerdict(True, None, f"{told}: within {int(tolerance.total_seconds())} s of the replay's "
                                         + ("time" if start == end else "wait"))
    return None


# ----------------------------------------------------------------------------------------------------------
# one message followed across queue managers (issue 29 item 3)

PUT, LEFT, ARRIVED, GOT = "put", "left", "arrived", "got"


@dataclass(frozen=True, slots=True)
class FlowStep:
    """One record of a message's journey: the application's put on the sender, the sending agent's get from the
    transmission queue, the receiving agent's put to the target queue, an application's get there."""

    kind: str  # put | left | arrived | got
    at: datetime | None
    qmgr: str | None
    queue: str | None
    channel: str | None  # the agent's channel (left, arrived)
    application: str | None  # the traced application (put, got)
    remote: str | None  # left: "<RemoteQMgr>/<RemoteQName>" the transmission header addresses
    committed: bool | None  # left/arrived: its unit of work committed (None: not under syncpoint known)
    source: str | None
    line: int | None

    def to_json(self) -> dict:
        return {"kind": self.kind, "at": self.at.isoformat() if self.at else None, "qmgr": self.qmgr,
                "queue": self.queue, "channel": self.channel, "application": self.application,
                "remote": self.remote, "committed": self.committed, "source": self.source, "line": self.line}


def _by_agent(get: Callable[[str], object]) -> bool:
    return (get("channel_type") in SENDING_AGENTS | RECEIVING_AGENTS
            or (get("channel_type") is None and get("api_environment") == MCA_ENVIRONMENT))


def _application_step(get: Callable[[str], object], msg_id: str) -> FlowStep | None:
    """An application's (not a channel agent's) successful put or get (not a browse) of ``msg_id``."""
    if not _succeeded(get) or _by_agent(get) or (get("msg_id") or "").upper() != msg_id:
        return None
    op = get("operation")
    if op in ("MQPUT", "MQPUT1"):
        kind = PUT
    elif op == "MQGET" and not (get("options") or 0) & MQGMO_BROWSE and not get("xmitq_msg_id"):
        kind = GOT
    else:
        return None
    return FlowStep(kind, get("operation_time"), get("qmgr"), get("object_name"), None, get("application_name"),
                    None, None, get("source") or get("source_file"), get("line") or get("position"))


def message_flow(operations: Iterable[object], msg_id: str) -> list[FlowStep]:
    """Every traced record of one message, by its message id, in time order: the application's put, each
    sending agent's get from a transmission queue (a relay: one per hop), each receiving agent's put, and an
    application's get. The agents' units of work are those of :func:`channel_events` (a backed-out get is no
    departure)."""
    want = msg_id.upper()
    rows = list(operations)
    steps: list[FlowStep] = []
    for row in rows:
        step = _application_step(_reader(row), want)
        if step is not None:
            steps.append(step)
    for e in channel_events(rows):
        if e.msg_id.upper() != want:
            continue
        remote = "/".join(p for p in (e.remote_qmgr, e.remote_queue) if p) or None
        steps.append(FlowStep(LEFT if e.kind == DEPARTURE else ARRIVED, e.at, e.qmgr, e.queue, e.channel, None,
                              remote, e.committed, e.source, e.line))
    order = {PUT: 0, LEFT: 1, ARRIVED: 2, GOT: 3}
    far = datetime.max.replace(tzinfo=None)
    steps.sort(key=lambda s: ((s.at.replace(tzinfo=None) if s.at else far), order[s.kind]))
    return steps


# ----------------------------------------------------------------------------------------------------------
# reading the lake (pyarrow through clwl.lake.door; no Spark)

#: bronze.activity_operations' columns the timeline and the flow read.
OPERATION_COLUMNS = ("connection", "seq_number", "operation_index", "operation", "comp_code", "options",
                     "operation_time", "qmgr", "channel_name", "channel_type", "api_environment", "object_name",
                     "msg_id", "xmitq_msg_id", "xmitq_remote_qmgr", "xmitq_remote_queue", "application_name",
                     "source_file", "position")


def agent_filters(day) -> list:
    """The channel agents' rows of the run date (the header fields are on every row of a trace message, the
    MQCMIT/MQBACK/MQDISC of a unit of work included)."""
    return [[("run_date", "=", day), ("channel_type", "in", sorted(SENDING_AGENTS | RECEIVING_AGENTS))],
            [("run_date", "=", day), ("api_environment", "=", MCA_ENVIRONMENT)]]


def agent_operations(lake, run_date) -> list[dict]:
    """The run date's channel agents' rows of bronze.activity_operations (none when the table is not there)."""
    from clwl.days import run_day
    from clwl.lake.door import Lake

    lake = Lake.of(lake)
    if not lake.exists("bronze.activity_operations"):
        return []
    return lake.rows("bronze.activity_operations", OPERATION_COLUMNS, agent_filters(run_day(run_date))).to_pylist()


def message_operations(lake, run_date, msg_id: str) -> list[dict]:
    """The run date's rows that name ``msg_id`` (its MsgId or a transmission header's), with the unit-of-work
    ends of the agents' connections among them: what :func:`message_flow` needs, read without the rest."""
    from clwl.days import run_day
    from clwl.lake.door import Lake

    lake = Lake.of(lake)
    if not lake.exists("bronze.activity_operations"):
        return []
    day, ids = run_day(run_date), sorted({msg_id, msg_id.upper()})
    rows = lake.rows("bronze.activity_operations", OPERATION_COLUMNS,
                     [[("run_date", "=", day), ("msg_id", "in", ids)],
                      [("run_date", "=", day), ("xmitq_msg_id", "in", ids)]]).to_pylist()
    connections = sorted({r["connection"] for r in rows if r.get("connection") and _by_agent(_reader(r))})
    if connections:
        rows += lake.rows("bronze.activity_operations", OPERATION_COLUMNS,
                          [("run_date", "=", day), ("connection", "in", connections),
                           ("operation", "in", sorted(UNIT_OF_WORK_ENDS))]).to_pylist()
    return rows
