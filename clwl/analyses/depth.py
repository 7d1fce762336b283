"""Every queue's depth and oldest message, rebuilt from the activity trace (pure; issue 44, docs/depth.md).

A queue's depth changes at each traced call that adds or removes a message:

* an **arrival**: an application's MQPUT/MQPUT1 that MQ resolved to a queue of the traced queue manager (the queue,
  ``Resolved_local_Q_name`` else ``Resolved_Q_Name``) or to another queue manager (the transmission queue,
  ``Resolved_local_Q_name``); a receiving channel agent's put to its target queue;
* a **removal**: a successful, non-browse MQGET, by an application (its ``Msg_id``) or by a sending channel agent
  (from its transmission queue; the message's id is the transmission header's).

A call under syncpoint counts once its connection's MQCMIT (or a normal MQDISC) follows, at the call's time; one
whose unit of work is backed out (MQBACK, a failed MQCMIT) is no change at all: a backed-out get is not a removal.
A unit the trace does not end counts, flagged ``uncommitted`` in the notes.

The oldest message: the queue's contents are followed message by message. Where the removal names a MsgId that is
on the queue, that message goes and the oldest one's age is exact (``basis`` "exact"). Where it does not (a trace at
LOW, a MsgId not seen arriving), the first message in first-in first-out order within priority goes, and from then
on the queue's oldest message is ``"fifo_assumed"``. Messages of the starting depth arrived before the day: while
one is the oldest, the basis is ``"start_depth"`` and its age is unknown (None).

The starting depth is the previous day's end (``start``), else the first capture's CURDEPTH less the traced changes
before it. Every capture (CURDEPTH) and statistics interval (QMinDepth, QMaxDepth) is then compared with the rebuilt
line (:func:`reconcile`, each statistics interval over [start, end)); each difference says its likely cause.
Evidence gaps (:class:`Gap`) get no line, not a flat or a wrong one: a queue manager expected (or sent messages by a
traced sending agent) with no trace; a queue with arrivals but no traced removal (its consumers' or its sending
agents' trace missing); a queue that more messages leave than its start and its traced arrivals hold (its putters'
trace missing); a queue whose statistics show a window of the day the trace misses (:func:`_window_gap`).
"""

from __future__ import annotations

import bisect
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Mapping

from clwl.analyses.observed import MCA_ENVIRONMENT, RECEIVING_AGENTS, SENDING_AGENTS

__all__ = ["Capture", "DepthChange", "Difference", "Gap", "Rebuilt", "StatsInterval", "greatest_age", "reconcile",
           "rebuild"]

MQGMO_SYNCPOINT, MQGMO_SYNCPOINT_IF_PERSISTENT = 0x2, 0x1000
MQGMO_BROWSE = 0x10 | 0x20 | 0x800
MQPMO_SYNCPOINT = 0x2
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

EXACT, FIFO_ASSUMED, START_DEPTH = "exact", "fifo_assumed", "start_depth"
CAUSE_UNTRACED_GET = "a get not traced (a connection or application whose trace was not collected)"
CAUSE_UNTRACED_PUT = "a put not traced (a connection or application whose trace was not collected)"
CAUSE_MID_UNIT = "the capture was taken in the middle of a unit of work"


@dataclass(frozen=True, slots=True)
class DepthChange:
    """One change of one queue's depth: the gold table's row."""

    qmgr: str
    queue: str
    at: datetime  # UTC
    depth: int  # after the change
    delta: int  # +1 arrival, -1 removal
    operation: str  # put | get | agent_put | agent_get
    msg_id: str | None
    application: str | None  # the connection that made the change (ApplName, or the channel)
    oldest_msg_id: str | None
    oldest_arrived_at: datetime | None
    oldest_age_seconds: float | None  # None: the oldest arrived before the day (start depth)
    oldest_put_by: str | None  # the application whose MQPUT made the oldest message (where the trace has it)
    basis: str | None  # exact | fifo_assumed | start_depth; None when the queue is empty


@dataclass(frozen=True, slots=True)
class Capture:
    """A captured CURDEPTH (a QLOCAL or queue-status capture)."""

    qmgr: str
    queue: str
    at: datetime
    curdepth: int
    source: str | None = None


@dataclass(frozen=True, slots=True)
class StatsInterval:
    """An amqsmon QueueStatistics interval's QMinDepth / QMaxDepth."""

    qmgr: str
    queue: str
    start: datetime
    end: datetime
    min_depth: int
    max_depth: int


@dataclass(frozen=True, slots=True)
class Gap:
    """Where the trace cannot give a line: a queue manager (queue None) or one queue."""

    qmgr: str
    queue: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Difference:
    qmgr: str
    queue: str
    at: datetime  # the capture's time, or the statistics interval's end
    measure: str  # CURDEPTH | QMinDepth | QMaxDepth
    captured: int
    rebuilt: int
    cause: str


@dataclass
class Rebuilt:
    changes: list[DepthChange]
    start: dict[tuple[str, str], int]
    gaps: list[Gap]
    notes: list[str] = field(default_factory=list)
    units: dict[tuple[str, str], list[tuple[datetime, datetime]]] = field(default_factory=dict)  # call..commit

    def line(self, qmgr: str, queue: str) -> list[DepthChange]:
        return [c for c in self.changes if c.qmgr == qmgr and c.queue == queue]

    def end_depths(self) -> dict[tuple[str, str], int]:
        """Each queue's depth at the end of the day: the next day's start."""
        out = dict(self.start)
        for c in self.changes:
            out[(c.qmgr, c.queue)] = c.depth
        return out


# ----------------------------------------------------------------------------------------------------------
# reading a row (a TraceOperation or a mapping of bronze.activity_operations' columns)


def _reader(row: object) -> Callable[[str], object]:
    if isinstance(row, Mapping):
        return row.get
    return lambda name: getattr(row, name, None)


def _fields(get: Callable[[str], object]) -> Mapping[str, str]:
    f = get("fields") or {}
    return f if isinstance(f, Mapping) else dict(f)  # a map column read by pyarrow is a list of pairs


def _time(get: Callable[[str], object]) -> datetime | None:
    us = get("high_res_time")
    if us:
        return _EPOCH + timedelta(microseconds=int(us))  # type: ignore[arg-type]
    t = get("operation_time")
    if isinstance(t, datetime):
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return None


def _order(get: Callable[[str], object]) -> tuple:
    seq, index = get("seq_number"), get("operation_index")
    if index is None:
        index = get("index")
    return (seq if seq is not None else -1, index if index is not None else -1)


def _agent(get: Callable[[str], object]) -> str | None:
    """sending | receiving | None (an application)."""
    ct = get("channel_type")
    if ct in SENDING_AGENTS:
        return "sending"
    if ct in RECEIVING_AGENTS:
        return "receiving"
    if ct is None and get("api_environment") == MCA_ENVIRONMENT:
        return "receiving" if get("operation") in ("MQPUT", "MQPUT1") else "sending"
    return None


@dataclass
class _Event:
    qmgr: str
    queue: str
    at: datetime
    delta: int
    operation: str
    msg_id: str | None
    application: str | None
    priority: int
    syncpoint: bool
    put_by: str | None = None  # an application's put: itself
    conn: str = ""  # the traced connection (the trace message's Correl_id)


def _event(get: Callable[[str], object]) -> _Event | None:
    op, qmgr = get("operation"), get("qmgr")
    if get("comp_code") == "MQCC_FAILED" or not qmgr or op not in ("MQPUT", "MQPUT1", "MQGET"):
        return None
    at = _time(get)
    if at is None:
        return None
    fields = _fields(get)
    options = int(get("options") or 0)
    agent = _agent(get)
    who = get("channel_name") if agent else get("application_name")
    priority = int(fields.get("Priority") or 0)
    if op == "MQGET":
        if options & MQGMO_BROWSE:
            return None
        mid = get("xmitq_msg_id") if agent == "sending" else get("msg_id")
        return _Event(qmgr, get("object_name") or fields.get("Resolved_Q_Name") or "", at, -1,
                      "agent_get" if agent else "get", (mid or "").upper() or None, who, priority,
                      bool(options & (MQGMO_SYNCPOINT | MQGMO_SYNCPOINT_IF_PERSISTENT)))
    mid = (get("msg_id") or "").upper() or None
    sync = bool(options & MQPMO_SYNCPOINT)
    if agent == "receiving":
        queue = fields.get("Resolved_local_Q_name") or fields.get("Resolved_Q_Name") or get("object_name")
        return _Event(qmgr, queue or "", at, 1, "agent_put", mid, who, priority, sync)
    if agent == "sending":
        return None
    resolved = fields.get("Resolved_Q_mgr")
    if not resolved:
        return _Event(qmgr, "", at, 1, "put", mid, who, priority, sync)  # at LOW: where it went is unknown
    queue = fields.get("Resolved_local_Q_name") or (fields.get("Resolved_Q_Name") if resolved == qmgr else None)
    return _Event(qmgr, queue or "", at, 1, "put", mid, who, priority, sync, put_by=who)


# ----------------------------------------------------------------------------------------------------------
# the rebuild


@dataclass
class _Activity:
    """When the trace saw each connection and each queue manager do anything (every traced call, in time order):
    a window with none is where the trace may be missing."""

    by_conn: dict[str, list[datetime]] = field(default_factory=lambda: defaultdict(list))
    by_qmgr: dict[str, list[datetime]] = field(default_factory=lambda: defaultdict(list))

    @staticmethod
    def silent(times: list[datetime], start: datetime, end: datetime) -> bool:
        i = bisect.bisect_left(times, start)
        return i == len(times) or times[i] >= end


def _committed(operations: Iterable[object], notes: list[str],
               activity: _Activity | None = None) -> tuple[list[_Event], list, set[str], set[str]]:
    """The events of committed units (call time), the units' spans per queue, the traced queue managers and the
    queue managers traced messages were sent to (an application's put resolved elsewhere, a sending agent's get);
    ``activity``: filled with every traced call's time."""
    by_conn: dict[str, list] = defaultdict(list)
    qmgrs: set[str] = set()
    sent_to: set[str] = set()
    for row in operations:
        get = _reader(row)
        if get("qmgr"):
            qmgrs.add(get("qmgr"))  # type: ignore[arg-type]
        if get("xmitq_remote_qmgr"):
            sent_to.add(get("xmitq_remote_qmgr"))  # type: ignore[arg-type]
        by_conn[get("connection") or ""].append(get)
        at = _time(get) if activity is not None else None
        if at is not None:
            activity.by_conn[get("connection") or ""].append(at)  # type: ignore[union-attr]
            activity.by_qmgr[get("qmgr") or ""].append(at)  # type: ignore[union-attr]
    if activity is not None:
        for times in list(activity.by_conn.values()) + list(activity.by_qmgr.values()):
            times.sort()
    kept: list[_Event] = []
    spans: list[tuple[_Event, datetime]] = []
    open_units = 0
    for conn in sorted(by_conn):
        pending: list[_Event] = []
        for get in sorted(by_conn[conn], key=_order):
            op = get("operation")
            if op in ("MQCMIT", "MQBACK", "MQDISC"):
                ok = get("comp_code") != "MQCC_FAILED"
                if (op == "MQCMIT" and ok) or (op == "MQDISC" and ok):
                    kept.extend(pending)
                    end = _time(get)
                    spans.extend((e, end) for e in pending if end is not None)
                if op != "MQDISC" or ok:
                    pending = []
                continue
            e = _event(get)
            if e is None:
                continue
            e.conn = conn
            (pending if e.syncpoint else kept).append(e)
        if pending:
            open_units += len(pending)
            kept.extend(pending)
    if open_units:
        notes.append(f"{open_units} change(s) in units of work the trace does not end: counted as committed")
    return kept, spans, qmgrs, sent_to


def rebuild(operations: Iterable[object], *, start: Mapping[tuple[str, str], int] | None = None,
            captures: Iterable[Capture] = (), expected_qmgrs: Iterable[str] = (),
            stats: Iterable[StatsInterval] = ()) -> Rebuilt:
    """One day's depth line per queue from its trace rows (every queue manager's, any order). ``start``: the
    previous day's end depths; ``captures``: CURDEPTH samples (a queue without a start depth is anchored on its first
    one); ``expected_qmgrs``: queue managers that should have been traced (with no row at all: a gap); ``stats``:
    amqsmon statistics intervals, which name a window the trace misses (:func:`_window_gap`) as a gap."""
    notes: list[str] = []
    activity = _Activity()
    events, spans, traced, sent_to = _committed(operations, notes, activity)
    stats_of: dict[tuple[str, str], list[StatsInterval]] = defaultdict(list)
    for st in sorted(stats, key=lambda st: st.start):
        stats_of[(st.qmgr, st.queue)].append(st)
    expected_qmgrs = set(expected_qmgrs) | sent_to  # where traced messages went: its trace should be there
    gaps = [Gap(qm, None, "no activity trace from this queue manager on the day: its queues have no depth line")
            for qm in sorted(set(expected_qmgrs) - traced)]
    unknown = [e for e in events if not e.queue]
    if unknown:
        notes.append(f"{len(unknown)} put(s) traced without the queue they resolved to (trace level LOW): not counted")
    events = sorted((e for e in events if e.queue), key=lambda e: (e.at, -e.delta, e.msg_id or ""))
    put_by = {e.msg_id: (e.put_by, e.at) for e in events if e.put_by and e.msg_id}
    by_queue: dict[tuple[str, str], list[_Event]] = defaultdict(list)
    for e in events:
        by_queue[(e.qmgr, e.queue)].append(e)
    first_capture: dict[tuple[str, str], Capture] = {}
    for c in sorted(captures, key=lambda c: c.at):
        first_capture.setdefault((c.qmgr, c.queue), c)
    starts: dict[tuple[str, str], int] = {}
    changes: list[DepthChange] = []
    for key in sorted(by_queue):
        evs = by_queue[key]
        if not any(e.delta < 0 for e in evs):
            gaps.append(Gap(key[0], key[1], f"{len(evs)} arrival(s) and no traced removal: the trace of its "
                                            "consumers (or its sending channel agents) is missing"))
            continue
        if start is not None and key in start:
            s = start[key]
        elif key in first_capture:
            c = first_capture[key]
            s = c.curdepth - sum(e.delta for e in evs if e.at <= c.at)
        else:
            s = 0
        if s < 0:  # the capture shows fewer messages than the trace put before it: reconcile lists it
            notes.append(f"{key[0]}/{key[1]}: the first capture's CURDEPTH is below the traced changes before it: "
                         "started at 0")
            s = 0
        line = _line(key, evs, s, put_by)
        if not isinstance(line, Gap) and stats_of.get(key):
            line = _window_gap(key, line, s, evs, stats_of[key], activity) or line
        if isinstance(line, Gap):
            gaps.append(line)
            continue
        starts[key] = s
        changes += line
    for (qm, queue), sts in sorted(stats_of.items()):  # MQ saw it move, the trace has nothing of it all day
        moved = [st for st in sts if st.min_depth < st.max_depth]
        if (qm, queue) in by_queue or not moved or (qm not in traced and qm in expected_qmgrs):
            continue
        why = ("no activity trace from this queue manager on the day" if qm not in traced else
               "the trace holds no put or get of the queue all day: the trace of the applications (or channel "
               "agents) that use it is missing")
        gaps.append(Gap(qm, queue, f"MQ's statistics show the depth moving in {len(moved)} interval(s) (the first "
                                   f"{moved[0].start:%H:%M:%S}-{moved[0].end:%H:%M:%S}) but {why}"))
    units: dict[tuple[str, str], list[tuple[datetime, datetime]]] = defaultdict(list)
    for e, end in spans:
        units[(e.qmgr, e.queue)].append((e.at, end))
    return Rebuilt(changes, starts, gaps, notes, dict(units))


def _line(key: tuple[str, str], evs: list[_Event], start: int, put_by: dict) -> list[DepthChange] | Gap:
    """One queue's changes, following its contents: (priority, arrival order) -> message. A gap instead when more
    messages leave than the start depth and the traced arrivals hold: some arrivals were not traced."""
    qm, queue = key
    # msg key -> (-priority, order, arrived), in arrival order: the first is the oldest
    contents: OrderedDict[str, tuple[int, int, datetime | None]] = OrderedDict()
    order = 0
    for i in range(start):
        contents[f"start:{i}"] = (0, order, None)
        order += 1
    depth = start
    assumed = False
    prioritised = any(e.priority for e in evs)
    out = []
    for e in evs:
        if e.delta > 0:
            k = e.msg_id or f"anon:{order}"
            contents[k] = (-e.priority, order, e.at)
            order += 1
        else:
            if e.msg_id and e.msg_id in contents:
                del contents[e.msg_id]
            elif contents:
                first = min(contents, key=lambda k: contents[k][:2]) if prioritised else next(iter(contents))
                del contents[first]
                assumed = True
            else:
                return Gap(qm, queue, f"a removal at {e.at.isoformat()} from an empty queue (start depth {start}): "
                                      "the trace of its putting applications (or receiving channel agents) is "
                                      "missing")
        depth += e.delta
        oldest = next(iter(contents), None)
        arrived = contents[oldest][2] if oldest else None
        basis = None if oldest is None else START_DEPTH if arrived is None else FIFO_ASSUMED if assumed else EXACT
        who = put_by.get(oldest, (None, None))[0] if oldest else None
        out.append(DepthChange(qm, queue, e.at, depth, e.delta, e.operation, e.msg_id, e.application,
                               oldest if oldest and not oldest.startswith(("start:", "anon:")) else None, arrived,
                               (e.at - arrived).total_seconds() if arrived else None, who, basis))
    return out


def _window_gap(key: tuple[str, str], line: list[DepthChange], start: int, evs: list[_Event],
                stats: list[StatsInterval], activity: _Activity) -> Gap | None:
    """A window of the day the trace misses, named from the statistics intervals (docs/depth.md, "Evidence gaps").
    An interval is in such a window when either

    * MQ saw the depth move (QMinDepth below QMaxDepth) and the trace holds no change of the queue in it (the queue
      manager's trace stopped, or every connection that used the queue then went untraced); or
    * MQ saw the depth move, something the trace lacks happened in this very interval (the rebuilt minimum and
      maximum are off MQ's by different amounts, or by another amount than in the interval before when that one
      was not in a window: right after a window the offset it left is only settling), and a connection that
      changed the queue both before the interval and after it has no traced call at all inside it (its trace
      stopped and started again).

    Any other disagreement is a difference with its likely cause (:func:`reconcile`), the line kept: an offset
    carried over from an earlier interval, or a get or put by a connection that was never traced. An interval in
    which MQ saw no movement misses nothing, whatever the trace did then."""
    qm, queue = key
    ats = [c.at for c in line]
    windows: list[list] = []  # [start, end, intervals, why]
    offset, flagged = (0, 0), False
    for st in stats:
        lo, hi = _range(line, ats, start, st)
        was, offset = offset, (lo - st.min_depth, hi - st.max_depth)
        here = offset[0] != offset[1] or (offset != was and not flagged)  # an untraced change in this interval
        why = None
        if st.min_depth == st.max_depth:  # MQ saw no movement: nothing to miss
            pass
        elif bisect.bisect_left(ats, st.start) == bisect.bisect_left(ats, st.end):
            silent = _Activity.silent(activity.by_qmgr.get(qm, []), st.start, st.end)
            why = "the depth moved but the trace holds no put or get of the queue" + (
                ": the queue manager's trace is silent" if silent else "")
        elif here and any(
                _Activity.silent(activity.by_conn.get(c, []), st.start, st.end)
                for c in {e.conn for e in evs if e.at < st.start} & {e.conn for e in evs if e.at >= st.end}):
            why = "a connection that changes the queue before and after it has no traced call"
        flagged = why is not None
        if why is None:
            continue
        if windows and windows[-1][1] >= st.start and windows[-1][3] == why:
            windows[-1][1], windows[-1][2] = max(windows[-1][1], st.end), windows[-1][2] + 1
        else:
            windows.append([st.start, st.end, 1, why])
    if not windows:
        return None
    spans = "; ".join(f"{a:%H:%M:%S}-{b:%H:%M:%S} ({n} statistics interval(s): {why})" for a, b, n, why in windows)
    return Gap(qm, queue, f"no trace for part of the day: {spans}; the rebuilt line would be wrong from there, so "
                          "the day has no line for this queue")


def _range(line: list[DepthChange], ats: list[datetime], start: int, st: StatsInterval) -> tuple[int, int]:
    """The rebuilt least and greatest depth over a statistics interval [start, end): the depth it began with and
    every depth after a change inside it."""
    i, j = bisect.bisect_left(ats, st.start), bisect.bisect_left(ats, st.end)
    depths = [line[i - 1].depth if i else start] + [c.depth for c in line[i:j]]
    return min(depths), max(depths)


def greatest_age(line: list[DepthChange], until: datetime) -> tuple[float, datetime, DepthChange] | None:
    """The oldest message's greatest age over a queue's line: after each change the oldest message ages until the
    next change (after the last, until ``until``, the day's end); (seconds, when, the change after which it was the
    oldest). None when no oldest message's arrival is known."""
    best = None
    for c, nxt in zip(line, line[1:] + [None]):  # type: ignore[operator]
        if c.oldest_arrived_at is None:
            continue
        when = nxt.at if nxt is not None else until
        age = (when - c.oldest_arrived_at).total_seconds()
        if best is None or age > best[0]:
            best = (age, when, c)
    return best


# ----------------------------------------------------------------------------------------------------------
# reconciling with what MQ sampled


def depth_at(line: list[DepthChange], start: int, at: datetime) -> int:
    """The rebuilt depth at ``at`` (every change at or before it counted)."""
    i = bisect.bisect_right([c.at for c in line], at)
    return line[i - 1].depth if i else start


def reconcile(rebuilt: Rebuilt, captures: Iterable[Capture] = (),
              stats: Iterable[StatsInterval] = ()) -> list[Difference]:
    """Every capture and statistics interval the rebuilt line disagrees with, with its likely cause. Queues in a
    gap are not compared (they have no line)."""
    lines: dict[tuple[str, str], list[DepthChange]] = defaultdict(list)
    for c in rebuilt.changes:
        lines[(c.qmgr, c.queue)].append(c)
    out: list[Difference] = []
    for cap in sorted(captures, key=lambda c: (c.qmgr, c.queue, c.at)):
        key = (cap.qmgr, cap.queue)
        if key not in rebuilt.start:
            continue
        got = depth_at(lines[key], rebuilt.start[key], cap.at)
        if got == cap.curdepth:
            continue
        mid = any(a <= cap.at < b for a, b in rebuilt.units.get(key, ()))
        cause = CAUSE_MID_UNIT if mid else CAUSE_UNTRACED_GET if got > cap.curdepth else CAUSE_UNTRACED_PUT
        out.append(Difference(cap.qmgr, cap.queue, cap.at, "CURDEPTH", cap.curdepth, got, cause))
    for st in sorted(stats, key=lambda s: (s.qmgr, s.queue, s.start)):
        key = (st.qmgr, st.queue)
        if key not in rebuilt.start:
            continue
        line = lines[key]
        lo, hi = _range(line, [c.at for c in line], rebuilt.start[key], st)
        for measure, captured, got in (("QMinDepth", st.min_depth, lo), ("QMaxDepth", st.max_depth, hi)):
            if captured != got:
                out.append(Difference(st.qmgr, st.queue, st.end, measure, captured, got,
                                      CAUSE_UNTRACED_GET if got > captured else CAUSE_UNTRACED_PUT))
    return out
