"""Replay one sending queue manager's messages, in time order, through the engine.

For every message the configuration and channel state in force are the latest captures at or before its put
time (a timeline of ClusterViews). The routing state (DestSeqFactor/DestSeqNumber, their resets, bindings)
is carried across the whole replay, as the queue manager carries it.

Re-allocation (docs/algorithm.md, "Binding and re-allocation"): a message routed over a channel that is
RETRYING, STOPPED (or in any other state of the last two tiers) waits on the transmission queue. Each time the
replay sees that channel in such a state again (a capture: the channel stopped, or a retry failed), every
waiting message is examined:
not eligible (all-zero AccountingToken: bind-on-open, bind-on-group in logical order, named queue manager) ->
it stays; eligible -> the algorithm is driven again and the message moves, unless its destination is still the
most favourable one. When the channel is seen INACTIVE/RUNNING/STARTING again, the waiting messages are
delivered. Pure Python: Spark calls this per sending queue manager (spark/replay.py).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Iterator, NamedTuple, Optional

from clwl.engine.algorithm import Request, Step
from clwl.engine.model import ClusterView, state_tier
from clwl.engine.qsg import GroupMembership
from clwl.engine.router import Route, RouteError, Router
from clwl.engine.view import build_view
from clwl.parse.common import MqscRecord

# Tiers 2 and 3 of steps 6-9: the channel is not moving messages.
HOLDING_TIER = 2

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def micros(t: datetime) -> int:
    """Microseconds since the epoch (exact; timestamps in Arrow are these, and put_batch takes them)."""
    return (t - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True)
class PutEvent:
    msg_id: str
    put_time: datetime
    queue: str
    target_qmgr: Optional[str] = None
    bind: str = "notfixed"
    open_handle: str = ""
    group_id: str = ""
    logical_order: bool = False
    from_cluster_channel: bool = False
    pcf: bool = False
    length: int = 0
    observed_qmgr: Optional[str] = None
    observed_xmitq: Optional[str] = None  # the transmission queue MQ put it on (activity trace), if known
    # The observed answer is MQ's choice at the put (an activity-traced MQPUT), not where the message arrived
    # (a put record's observed destination): a message re-allocated later is compared with its first destination.
    observed_at_put: bool = False


@dataclass
class ReplayRow:
    msg_id: str
    put_time: datetime
    queue: str
    target_qmgr: Optional[str]
    bind: str
    length: int
    qmgr: Optional[str]
    channel: Optional[str]
    xmitq: Optional[str]
    path: Optional[str]
    decided_by: Optional[str]
    reallocatable: Optional[bool]  # None when the put failed (no message was put)
    not_reallocatable_reason: Optional[str]
    trace: str
    error: Optional[str]
    reason_code: Optional[int]
    config_time: Optional[datetime]
    observed_qmgr: Optional[str]
    reallocations: int = 0
    final_qmgr: Optional[str] = None
    final_channel: Optional[str] = None
    final_xmitq: Optional[str] = None
    held: bool = False  # still waiting on a transmission queue when the replay ended
    held_from: Optional[datetime] = None  # when it started waiting (None: never waited)
    released_at: Optional[datetime] = None  # when the channel delivered it after waiting
    hold_state: Optional[str] = None  # the channel's state while it waited
    stay_reason: Optional[str] = None  # not-reallocatable | still-most-favourable
    stay_detail: Optional[str] = None
    observed_xmitq: Optional[str] = None
    observed_at_put: bool = False  # PutEvent.observed_at_put

    @property
    def delivered_at(self) -> Optional[datetime]:
        if self.error or self.held:
            return None
        return self.released_at or self.put_time

    @property
    def stayed(self) -> bool:
        """It waited behind a channel that moved nothing and stayed there (not eligible for re-allocation, or
        that channel still its most favourable destination): what stuck_messages lists. A message re-allocated
        away to a working channel waited too, but did not stay."""
        return self.held_from is not None and self.stay_reason is not None

    @property
    def agrees(self) -> Optional[bool]:
        """MQ's answer (observed) is the replay's: the queue manager, and the transmission queue too when both are
        known. Where the message arrived is compared with the final destination; MQ's choice at the put (the
        activity trace: ``observed_at_put``) with the first, since a re-allocation happens after the traced
        MQPUT. None without an observed queue manager."""
        if not self.observed_qmgr:
            return None
        qmgr, xmitq = (self.qmgr, self.xmitq) if self.observed_at_put else (self.final_qmgr, self.final_xmitq)
        if self.observed_xmitq and xmitq and self.observed_xmitq != xmitq:
            return False
        return self.observed_qmgr == qmgr


@dataclass
class Snapshot:
    """The configuration of the sending queue manager from ``time`` on."""

    time: datetime
    view: ClusterView


def timeline_from_captures(qmgr: str, captures: Iterable[tuple[datetime, set[str], list[MqscRecord]]],
                           qsg_members: Iterable[str] = ()) -> list[Snapshot]:
    """Snapshots from capture files: (capture time, kinds the capture replaces, its records).

    A capture replaces every earlier record of the kinds it covers (a DISPLAY CHSTATUS capture without a
    record for a channel means the channel is inactive now; a DISPLAY QCLUSTER capture without an instance
    means it is gone).
    """
    by_time: dict[datetime, list[tuple[set[str], list[MqscRecord]]]] = {}
    for t, kinds, recs in captures:
        by_time.setdefault(t, []).append((set(kinds), recs))
    current: dict[str, list[MqscRecord]] = {}
    out: list[Snapshot] = []
    members = tuple(qsg_members)
    for t in sorted(by_time):
        for kinds, recs in by_time[t]:
            for k in kinds | {r.kind for r in recs}:
                current[k] = []
            for r in recs:
                current[r.kind].append(r)
        records = [r for rs in current.values() for r in rs]
        view, _ = build_view(records, qmgr, members)
        out.append(Snapshot(t, view))
    return out


class PutColumns(NamedTuple):
    """A batch of put messages as columns, one list each, in time order (:meth:`SenderReplay.put_batch`):
    ``times_us`` put times in microseconds since the epoch; the rest as :class:`PutEvent` names them."""

    times_us: list[int]
    queues: list[str]
    targets: list[Optional[str]]
    binds: list[str]
    handles: list[str]
    groups: list[str]
    logical: list[bool]
    from_channel: list[bool]
    pcf: list[bool]
    lengths: list[int]


class SenderReplay:
    """The replay of one sending queue manager."""

    def __init__(self, qmgr: str, timeline: list[Snapshot], profile: str = "default"):
        if not timeline:
            raise ValueError(f"no configuration captured for {qmgr}: nothing to replay against")
        self.qmgr = qmgr
        self.timeline = sorted(timeline, key=lambda s: s.time)
        self._times = [s.time for s in self.timeline]
        self.profile = profile
        self.router: Optional[Router] = None
        self._applied = -1
        self.waiting: dict[str, list[ReplayRow]] = {}  # channel -> messages on its transmission queue
        self.resets = 0
        self.reallocation_events = 0
        self._states: dict[str, str] = {}  # channel -> state in the configuration in force
        # The batch path (put_batch): results by index, and caches valid while one snapshot is in force.
        self.outcomes: list[tuple[object, Optional[datetime]]] = []
        self._code_of: dict[tuple[int, int], int] = {}
        self._no_config = RouteError("", "NO_CONFIGURATION", 0, "no capture of the configuration before this message")
        self._times_us = [micros(t) for t in self._times]
        self._after_snapshot()

    # -- configuration in force --------------------------------------------------------------------------
    def _advance(self, t: datetime) -> Iterator[ReplayRow]:
        """Apply every snapshot at or before ``t``; yields the rows that became final (delivered)."""
        last = bisect.bisect_right(self._times, t) - 1
        while self._applied < last:
            self._applied += 1
            snap = self.timeline[self._applied]
            if self.router is None:
                self.router = Router(snap.view, self.profile)
            elif self.router.set_view(snap.view):
                self.resets += 1
            self._states = {c.name: c.state for c in snap.view.channels}
            yield from self._channel_events(snap)

    def _channel_events(self, snap: Snapshot) -> Iterator[ReplayRow]:
        states = {c.name: c.state for c in snap.view.channels}
        for channel in sorted(self.waiting):
            rows = self.waiting[channel]
            if not rows:
                continue
            state = states.get(channel, "INACTIVE")
            if state_tier(state) < HOLDING_TIER:
                # The channel moves messages again: everything waiting is delivered now.
                for row in rows:
                    row.released_at = snap.time
                self.waiting[channel] = []
                yield from rows
            else:
                self.reallocation_events += 1
                yield from self._reallocate(channel, state, snap.time)

    def _reallocate(self, channel: str, state: str, at: datetime) -> Iterator[ReplayRow]:
        stay: list[ReplayRow] = []
        for row in self.waiting[channel]:
            row.hold_state = state
            if not row.reallocatable:
                row.stay_reason, row.stay_detail = "not-reallocatable", row.not_reallocatable_reason
                stay.append(row)
                continue
            req = Request(row.queue, row.target_qmgr, False, False, row.length)
            res = self.router.peek(req)
            if isinstance(res, RouteError) or res.channel == channel:
                row.stay_reason = "still-most-favourable"
                row.stay_detail = (res.decided_step.stay_reason if isinstance(res, Route)
                                   else f"{res.error} ({res.reason})")
                stay.append(row)
                continue
            row.reallocations += 1
            row.final_qmgr, row.final_channel, row.final_xmitq = res.qmgr, res.channel, res.xmitq
            if res.channel is not None and self._holding(res.channel):
                # Re-allocated to a channel that is not moving messages either (the best left is in the same
                # tier): it now waits there, and stays for the reason the re-driven algorithm chose it.
                row.held_from = at
                row.hold_state = self._states.get(res.channel)
                row.stay_reason = "still-most-favourable"
                row.stay_detail = res.decided_step.stay_reason
                self.waiting.setdefault(res.channel, []).append(row)
            else:
                # Re-allocated away (002): it left the transmission queue for a working channel, so it did
                # not stay and is not stuck; held_from / released_at keep when it waited and when it moved.
                row.stay_reason = row.stay_detail = None
                row.released_at = at
                yield row
        self.waiting[channel] = stay

    def _holding(self, channel: str) -> bool:
        return state_tier(self._states.get(channel, "INACTIVE")) >= HOLDING_TIER

    # -- messages ------------------------------------------------------------------------------------------
    def put(self, ev: PutEvent) -> Iterator[ReplayRow]:
        """Route one message; yields every row that became final (earlier ones included)."""
        yield from self._advance(ev.put_time)
        if self.router is None:
            config_time = None
            res: Route | RouteError = RouteError(ev.queue, "NO_CONFIGURATION", 0,
                                                 "no capture of the configuration before this message")
        else:
            config_time = self.timeline[self._applied].time
            req = Request(ev.queue, ev.target_qmgr or None, ev.from_cluster_channel, ev.pcf, ev.length)
            res = self.router.route(req, bind=ev.bind, handle=ev.open_handle, group_id=ev.group_id,
                                    logical_order=ev.logical_order)
        if isinstance(res, RouteError):
            # A put that failed put no message anywhere: whether it could be re-allocated is not a question
            # (reallocatable None, not True).
            yield ReplayRow(ev.msg_id, ev.put_time, ev.queue, ev.target_qmgr, ev.bind, ev.length, None, None,
                            None, None, None, None, None, res.detail, res.error, res.reason, config_time,
                            ev.observed_qmgr, observed_xmitq=ev.observed_xmitq, observed_at_put=ev.observed_at_put)
            return
        row = self._routed_row(ev, res, config_time)
        if res.channel is not None and res.path == "cluster" and self._holding(res.channel):
            self._wait(row, res.decided_step)
            return
        yield row

    # -- the batch path (spark/replay.py): put()'s decisions without an object per message ----------------
    def put_batch(self, columns: PutColumns, event: Callable[[int], PutEvent]) -> tuple[list[int], list[ReplayRow]]:
        """Route a batch of messages given as columns, in time order, exactly as :meth:`put` would.

        ``columns``: a :class:`PutColumns` (or a tuple of its ten lists, in its order). Returns ``(codes, rows)``: ``codes[i]`` is the
        index in :attr:`outcomes` of message i's result ``(Route or RouteError, config_time)`` when that was its
        fate at once (delivered at its put time, or an error); -1 when it waits on a transmission queue (its
        row comes later, from this or a later batch or from :meth:`finish`). ``rows``: the rows that became
        final during the batch. ``event(i)`` builds message i's PutEvent; it is called only for messages that
        wait, so the common case costs no object per message."""
        times_us, queues, targets, binds, handles, groups, logical, from_channel, pcf, lengths = columns
        codes: list[int] = []
        append = codes.append
        rows: list[ReplayRow] = []
        code_of = self._code_of
        requests = self._requests
        plain = self._plain
        next_us = self._next_us
        igq_max = self._igq_max
        for i, t in enumerate(times_us):
            if t >= next_us:
                rows.extend(self._advance(self.timeline[bisect.bisect_right(self._times_us, t) - 1].time))
                self._after_snapshot()
                requests, plain, next_us, igq_max = self._requests, self._plain, self._next_us, self._igq_max
            router = self.router
            if router is None:
                append(self._code(self._no_config, None))
                continue
            size = lengths[i]
            rk = (queues[i], targets[i], from_channel[i], pcf[i], size <= igq_max)
            if binds[i] == "notfixed":
                # The common case in one place: what route() does for a not-fixed message whose choice is the
                # plain least-recently-used one, without route()'s calls per message.
                entry = plain.get(rk)
                if entry is None:
                    entry = plain[rk] = self._plain_entry(rk, size)
                if entry:
                    prep, by_idx = entry
                    idx = router.choose_lru(prep)
                    code = by_idx[idx]
                    if code is None:
                        code = by_idx[idx] = self._plain_code(rk, prep, idx)
                    if code < 0:  # waits behind its channel: its row is built now, as in put()
                        res = router.lru_route(prep, idx, requests[rk])
                        self._wait(self._routed_row(event(i), res, self.timeline[self._applied].time),
                                   res.decided_step)
                    append(code)
                    continue
            res = router.route(self._request(rk, size), bind=binds[i], handle=handles[i], group_id=groups[i],
                               logical_order=logical[i])
            if res.error is None and self._waits(res):
                self._wait(self._routed_row(event(i), res, self.timeline[self._applied].time), res.decided_step)
                append(-1)
                continue
            code = code_of.get((id(res), self._applied))
            append(code if code is not None else self._code(res, self.timeline[self._applied].time))
        return codes, rows

    def _after_snapshot(self) -> None:
        """Caches of the batch path that hold while the configuration in force does not change."""
        nxt = self._applied + 1
        self._next_us = self._times_us[nxt] if nxt < len(self._times_us) else float("inf")
        self._requests: dict[tuple, Request] = {}
        # Request key -> (prepared request, result code per candidate), or False where the choice is not the
        # plain least-recently-used one (a bound message, a decision before step 12, MRUC, PCF).
        self._plain: dict[tuple, object] = {}
        self._igq_max = self.router.view.igq_max_message if self.router is not None else 0
        self._holding_now = frozenset(ch for ch, st in self._states.items() if state_tier(st) >= HOLDING_TIER)

    def _request(self, rk: tuple, size: int) -> Request:
        req = self._requests.get(rk)
        if req is None:
            # Only the side of the IGQ limit matters to a result (the steps never read the size).
            req = self._requests[rk] = Request(rk[0], rk[1], rk[2], rk[3], size)
        return req

    def _waits(self, res: Route) -> bool:
        """A route over a channel that is not moving messages now: the message waits on its transmission queue."""
        return res.channel in self._holding_now and res.path == "cluster"

    def _plain_entry(self, rk: tuple, size: int):
        prep = self.router.lru_prepared(self._request(rk, size))
        return (prep, [None] * len(prep.cands)) if prep is not None else False

    def _plain_code(self, rk: tuple, prep, idx: int) -> int:
        """The result code of candidate ``idx`` for request ``rk`` while this snapshot holds; -1 when the message
        waits behind its channel."""
        res = self.router.lru_route(prep, idx, self._requests[rk])
        if self._waits(res):
            return -1
        return self._code(res, self.timeline[self._applied].time)

    def _code(self, res, config_time: Optional[datetime]) -> int:
        key = (id(res), self._applied)
        code = self._code_of.get(key)
        if code is None:
            # The result object is kept in outcomes, so its id cannot be reused by another one.
            code = self._code_of[key] = len(self.outcomes)
            self.outcomes.append((res, config_time))
        return code

    @staticmethod
    def _routed_row(ev: PutEvent, res: Route, config_time: Optional[datetime]) -> ReplayRow:
        return ReplayRow(ev.msg_id, ev.put_time, ev.queue, ev.target_qmgr, ev.bind, ev.length, res.qmgr,
                         res.channel, res.xmitq, res.path, res.decided_by, res.reallocatable,
                         res.not_reallocatable_reason, res.summary, None, None, config_time, ev.observed_qmgr,
                         final_qmgr=res.qmgr, final_channel=res.channel, final_xmitq=res.xmitq,
                         observed_xmitq=ev.observed_xmitq, observed_at_put=ev.observed_at_put)

    def _wait(self, row: ReplayRow, decided: Step) -> None:
        """A message routed over a channel that is not moving messages waits on its transmission queue;
        ``decided``: the step that chose that channel (why an eligible message would stay)."""
        row.held_from = row.put_time
        row.hold_state = self._states.get(row.channel)
        if not row.reallocatable:
            row.stay_reason, row.stay_detail = "not-reallocatable", row.not_reallocatable_reason
        else:
            row.stay_reason = "still-most-favourable"
            row.stay_detail = decided.stay_reason
        self.waiting.setdefault(row.channel, []).append(row)

    def finish(self, until: Optional[datetime] = None) -> Iterator[ReplayRow]:
        """Apply the captures up to ``until`` (default: all), then yield what still waits, held."""
        if until is not None:
            yield from self._advance(until)
        else:
            yield from self._advance(self._times[-1])
        for channel in sorted(self.waiting):
            for row in self.waiting[channel]:
                row.held = True
                yield row
            self.waiting[channel] = []


def replay(qmgr: str, timeline: list[Snapshot], events: Iterable[PutEvent], profile: str = "default",
           until: Optional[datetime] = None) -> Iterator[ReplayRow]:
    """Every message of ``events`` (sorted by put time) once, when its fate is known."""
    r = SenderReplay(qmgr, timeline, profile)
    for ev in events:
        yield from r.put(ev)
    yield from r.finish(until)


def timeline_from_history(qmgr: str, rows: Iterable[tuple[str, dict, datetime, Optional[datetime], str]],
                          start: datetime, end: datetime, qsg_members: Iterable[str] = (),
                          groups: Optional[GroupMembership] = None) -> list[Snapshot]:
    """Snapshots from history rows (kind, attrs, valid_from, valid_to or None, source) of one queue manager.

    The first snapshot is the configuration in force at ``start`` (the latest change at or before it); then
    one per change before ``end``, and one where the members of its queue-sharing group change (``groups``: the
    group as every queue manager's captures show it over the day, clwl.engine.qsg).
    """
    rows = list(rows)
    points = sorted({r[2] for r in rows} | {r[3] for r in rows if r[3] is not None})
    before = [t for t in points if t <= start]
    times = ([before[-1]] if before else []) + [t for t in points if start < t < end]
    if groups is not None and times:
        own = {(r[1].get("QSGNAME") or "").strip() for r in rows if r[0] == "QMGR"} - {""}
        moves = {p for g in sorted(own) for p in groups.change_points(g, max(start, times[0]), end)}
        times = sorted(set(times) | moves)
    members = tuple(qsg_members)
    out: list[Snapshot] = []
    for t in times:
        recs = [MqscRecord(kind, attrs, src, 0) for kind, attrs, vf, vt, src in rows
                if vf <= t and (vt is None or t < vt)]
        group = members
        if groups is not None:
            own_group = next(((r.attrs.get("QSGNAME") or "").strip() for r in recs if r.kind == "QMGR"), "")
            group = members + tuple(sorted(groups.members_at(own_group, t)))
        view, _ = build_view(recs, qmgr, group)
        out.append(Snapshot(t, view))
    return out
