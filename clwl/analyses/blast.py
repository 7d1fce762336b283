"""The blast radius of a day (issue 28): for each queue manager and each cluster-sender channel, what one hour
of it not moving messages at the day's busiest hour would have done to that day's own traffic.

1. The window: the clock hour (UTC) with the most puts of the day, every sender together (:func:`busiest_hour`).
2. The cases (:func:`cases_of`): a destination queue manager (every sender's cluster-sender channels to it
   stopped), and each sender's cluster-sender channel on its own.
3. Each sender's day is replayed once as it was (the baseline) and once per set of its channels a case stops, in
   the same replay the pipeline runs (clwl/engine/replay.py, its batch path). A case's timeline is the baseline's with
   the channels STOPPED from the window's start to its end: a capture is added at both bounds (the view in force
   there, copied), in the baseline too, so the two replays see the same captures at the same moments and differ
   only in the stop. Before the window the two are the same replay: the case replays start from a copy of the
   baseline taken at the window's start, so a case costs the window's messages, not the day's.
4. Each message put in the window (and each already waiting when it began) is compared across the two replays
   (:func:`compare`): **stuck** when in the case it waited behind a channel that moved nothing and stayed there
   (docs/algorithm.md, "Binding and re-allocation"), which it did not in the baseline, with the reason it could
   not go elsewhere (:data:`STUCK_REASONS`); **went elsewhere** when the baseline delivered it over one of the
   stopped channels and the case over another one.

:func:`blast_radius` reads a lake day without Spark (clwl/lake/silver.py); :func:`blast_radius_of` is the same over
timelines and put events in memory (what the unit tests build by hand). The traffic itself (the busiest hour,
each sender's messages cut at it, from memory or from the lake) is clwl/analyses/blast_traffic.py. docs/blast.md says what it means and what
it cannot see.
"""

from __future__ import annotations

import copy
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Callable, Iterable, NamedTuple, Optional, Sequence

from clwl.analyses.blast_traffic import (
    BlastError,
    LakeDays,
    SenderDay,
    Window,
    busiest_hour,
    hour_counts,
    hours_of,
    run_dates,
    split_events,
)
from clwl.days import RunDate, day_bounds
from clwl.engine.algorithm import PROFILES, STAY_ONLY_ELIGIBLE
from clwl.engine.model import ClusterView
from clwl.engine.replay import PutEvent, ReplayRow, SenderReplay, Snapshot
from clwl.engine.router import Route, RouteError
from clwl.lake.storage import Location, lake_root

#: The state a case gives its channels: the last tier of steps 6-9, not in clwl.engine.model.MOVING_STATES: a channel that
#: moves nothing until it is started again.
STOPPED_STATE = "STOPPED"
#: Application of a put without an open handle.
UNKNOWN_APPLICATION = "(unknown)"


# -- the timelines --------------------------------------------------------------------------------------------
def with_bounds(timeline: Sequence[Snapshot], start: datetime, end: datetime) -> list[Snapshot]:
    """``timeline`` with a snapshot at ``start`` and at ``end``: the view in force there, where no capture is at
    that moment already (none before it: nothing to copy). The same captures, seen once more: the replay
    re-examines what waits at each capture, so the baseline and the cases get these two moments alike."""
    out = sorted(timeline, key=lambda s: s.time)
    for t in (start, end):
        if any(s.time == t for s in out):
            continue
        before = [i for i, s in enumerate(out) if s.time < t]
        if before:
            out.insert(before[-1] + 1, Snapshot(t, out[before[-1]].view))
    return out


def stop_view(view: ClusterView, channels: frozenset[str], state: str = STOPPED_STATE) -> ClusterView:
    """``view`` with the cluster-sender ``channels`` in ``state``."""
    return replace(view, channels=tuple(replace(c, state=state) if c.name in channels else c
                                        for c in view.channels))


def stopped(timeline: Sequence[Snapshot], channels: frozenset[str], start: datetime, end: datetime) -> list[Snapshot]:
    """The case's timeline: ``timeline`` (with its bounds, :func:`with_bounds`) with ``channels`` STOPPED in every
    snapshot from ``start`` to before ``end``."""
    return [Snapshot(s.time, stop_view(s.view, channels)) if start <= s.time < end else s for s in timeline]


def in_force(timeline: Sequence[Snapshot], start: datetime, end: datetime) -> list[Snapshot]:
    """The snapshots in force at some moment of [start, end)."""
    at_start = [s for s in timeline if s.time <= start]
    return at_start[-1:] + [s for s in timeline if start < s.time < end]


# -- the cases ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One thing stopped for the hour: a queue manager (``kind`` "qmgr": every sender's channels to it) or one
    sender's cluster-sender channel (``kind`` "channel", ``sender`` set). ``stops``: sender -> its channels
    stopped."""

    kind: str
    name: str
    sender: Optional[str]
    stops: tuple[tuple[str, frozenset[str]], ...]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.name, self.sender or "")


def cases_of(timelines: Mapping[str, Sequence[Snapshot]], window: Window) -> list[Case]:
    """Every queue manager a sender has a cluster-sender channel to during the window, and every such channel."""
    to_qmgr: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # qmgr -> sender -> channels
    channels: dict[tuple[str, str], str] = {}  # (sender, channel) -> its queue manager
    for sender, tl in timelines.items():
        for snap in in_force(sorted(tl, key=lambda s: s.time), window.start, window.end):
            for c in snap.view.channels:
                if c.qmgr == sender:
                    continue
                to_qmgr[c.qmgr][sender].add(c.name)
                channels.setdefault((sender, c.name), c.qmgr)
    out = [Case("qmgr", qm, None, tuple((s, frozenset(chs)) for s, chs in sorted(by.items())))
           for qm, by in sorted(to_qmgr.items())]
    out += [Case("channel", ch, s, ((s, frozenset({ch})),)) for (s, ch) in sorted(channels)]
    return out


# -- why a message stays --------------------------------------------------------------------------------------
NOT_REALLOCATABLE = "not-reallocatable"
STILL_MOST_FAVOURABLE = "still-most-favourable"
#: The steps whose decision keeps a waiting message on a stopped channel because of the queues' ranks.
_RANK_STEPS = frozenset({"4a", "4b"})
_STEP_OF_STAY = {st.stay_reason: st.id for steps in PROFILES.values() for st in steps}


@dataclass(frozen=True)
class StuckReason:
    """Why a message stayed behind a channel that moved nothing: ``key`` (the JSON's ``by_reason``), in an
    administrator's words, and whether a replayed row's (stay_reason, stay_detail) is it."""

    key: str
    words: str
    applies: Callable[[str, Optional[str]], bool]


#: In order: the first that applies is the reason. The first three are the message's own (its AccountingToken is
#: all zeros: MQ does not re-allocate it); the others are the configuration's (the re-driven algorithm chose the
#: stopped channel again).
STUCK_REASONS: tuple[StuckReason, ...] = (
    StuckReason("bind-on-open", "bound on open (MQOO_BIND_ON_OPEN): the handle keeps its queue manager",
                lambda why, detail: why == NOT_REALLOCATABLE and detail == "bind-on-open"),
    StuckReason("bind-on-group", "a message group put in logical order (MQOO_BIND_ON_GROUP)",
                lambda why, detail: why == NOT_REALLOCATABLE and detail == "bind-on-group"),
    StuckReason("named-qmgr", "the application named the target queue manager",
                lambda why, detail: why == NOT_REALLOCATABLE and detail == "named-qmgr"),
    StuckReason("single-instance", "the only instance of the queue it could go to",
                lambda why, detail: why == STILL_MOST_FAVOURABLE and detail == STAY_ONLY_ELIGIBLE),
    StuckReason("rank", "a higher CLWLRANK (rank is taken before channel state)",
                lambda why, detail: why == STILL_MOST_FAVOURABLE and _STEP_OF_STAY.get(detail) in _RANK_STEPS),
    StuckReason("no-better-destination", "no other destination was better (the others not moving either, or "
                "suspended from the cluster)", lambda why, detail: True),
)
REASON_WORDS = {r.key: r.words for r in STUCK_REASONS}


def stuck_reason(stay_reason: str, stay_detail: Optional[str]) -> str:
    """The key of the first of :data:`STUCK_REASONS` that applies."""
    return next(r.key for r in STUCK_REASONS if r.applies(stay_reason, stay_detail))


# -- one message's fate in one replay -------------------------------------------------------------------------
class Fate(NamedTuple):
    """What became of one message in one replay, as the comparison needs it."""

    channel: Optional[str]  # the channel it was delivered over in the end (None: local, or not put)
    stayed: bool  # waited behind a channel that moved nothing and stayed there (ReplayRow.stayed)
    reason: Optional[str]  # why it stayed (a key of STUCK_REASONS)
    waited: Optional[timedelta]  # from when it began to wait to its delivery (or the end of the day)
    held: bool  # still waiting when the day ended
    reallocations: int
    wait_from: Optional[datetime] = None  # when it began to wait (None: never waited)
    wait_until: Optional[datetime] = None  # when it was delivered after waiting, or the end of the day


def route_fate(res: Route | RouteError) -> Fate:
    """A message delivered at once (or not put)."""
    return Fate(res.channel if isinstance(res, Route) else None, False, None, None, False, 0)


def row_fate(row: ReplayRow, day_end: datetime) -> Fate:
    """A message whose row the replay gave (it waited, or was put by :meth:`SenderReplay.put`)."""
    waited = until = None
    if row.held_from is not None:
        until = day_end if row.held else (row.released_at or row.put_time)
        waited = until - row.held_from
    reason = stuck_reason(row.stay_reason, row.stay_detail) if row.stayed else None
    return Fate(row.final_channel if row.error is None else None, row.stayed, reason, waited, row.held,
                row.reallocations, row.held_from, until)


def split_wait(fate: Fate, window: Window) -> tuple[timedelta, timedelta]:
    """A stuck message's wait in two: the part inside the stopped hour (the stop's), and the rest (the day's own:
    its channel not moving before the hour, or still not moving, as the day's captures show it, after the hour,
    when the case is the day as it was)."""
    if fate.wait_from is None or fate.wait_until is None:
        return timedelta(0), timedelta(0)
    total = fate.wait_until - fate.wait_from
    inside = max(timedelta(0), min(fate.wait_until, window.end) - max(fate.wait_from, window.start))
    return inside, total - inside


# -- the replays ----------------------------------------------------------------------------------------------
def _clear_results(rep: SenderReplay) -> None:
    """Forget the batch path's results (each batch's codes are read before the next): a copy then carries only the
    routing state. The caches that hold result codes go with them."""
    rep.outcomes = []
    rep._code_of = {}
    rep._after_snapshot()


def fork(rep: SenderReplay, timeline: list[Snapshot]) -> SenderReplay:
    """A copy of ``rep`` (its routing state, bindings and waiting messages) that goes on with ``timeline``: the
    same snapshots at the same times, so ``rep``'s place in it holds; what is immutable (the views, the steps) is
    shared, not copied."""
    memo: dict[int, object] = {id(rep.timeline): timeline}
    for snap in rep.timeline:
        memo[id(snap)] = snap
        memo[id(snap.view)] = snap.view
    for steps in PROFILES.values():
        for st in steps:
            memo[id(st)] = st
    twin = copy.deepcopy(rep, memo)
    twin.timeline = timeline
    return twin


def _waiting_from_before(rep: SenderReplay, end: datetime) -> bool:
    return any(r.put_time < end for rows in rep.waiting.values() for r in rows)


def finish_window(rep: SenderReplay, day: SenderDay, tracked: set[str], window: Window,
                  day_end: datetime) -> dict[str, Fate]:
    """Replay the window's messages through ``rep`` (at the window's start), then the day after it until every
    message of ``tracked`` (the window's, and those waiting when it began) has its fate."""
    fates: dict[str, Fate] = {}

    def take(rows: Iterable[ReplayRow]) -> None:
        for r in rows:
            if r.msg_id in tracked:
                fates[r.msg_id] = row_fate(r, day_end)

    for ch in day.window:
        codes, rows = rep.put_batch(ch.columns, ch.event)
        take(rows)
        by_code: dict[int, Fate] = {}  # a few results, shared by many messages
        for mid, code in zip(ch.msg_ids, codes):
            if code >= 0:
                fate = by_code.get(code)
                if fate is None:
                    fate = by_code[code] = route_fate(rep.outcomes[code][0])
                fates[mid] = fate
        _clear_results(rep)
    for ch in day.after:
        if not _waiting_from_before(rep, window.end):
            break
        take(rep.put_batch(ch.columns, ch.event)[1])
        _clear_results(rep)
    if _waiting_from_before(rep, window.end):
        take(rep.finish(day_end))
    return fates


# -- the comparison -------------------------------------------------------------------------------------------
@dataclass
class CaseResult:
    case: Case
    stuck: int = 0
    reallocated: int = 0  # went elsewhere: over another channel than the stopped one(s)
    by_reason: Counter = field(default_factory=Counter)
    queues: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # queue -> stuck/reallocated
    applications: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    longest_wait: Optional[timedelta] = None  # of the stuck messages, inside the stopped hour: the stop's own
    still_waiting: int = 0  # stuck messages still waiting when the day ended
    # The stuck messages whose wait went on outside the hour, the day's own outage holding them (split_wait):
    own_outage: int = 0  # how many
    own_outage_longest: Optional[timedelta] = None  # the longest part outside the hour
    own_outage_until: Optional[datetime] = None  # the last of those waits' ends (the day's end: still waiting)

    @property
    def sort_key(self) -> tuple:
        return (-self.stuck, -self.reallocated, self.case.kind != "qmgr", self.case.name, self.case.sender or "")

    def to_json(self) -> dict:
        def counts(d: dict[str, Counter]) -> dict:
            return {k: {"stuck": c["stuck"], "reallocated": c["reallocated"]}
                    for k, c in sorted(d.items(), key=lambda kv: (-kv[1]["stuck"], -kv[1]["reallocated"], kv[0]))}

        return {"kind": self.case.kind, "name": self.case.name, "sender": self.case.sender,
                "stopped": {s: sorted(chs) for s, chs in self.case.stops},
                "stuck": self.stuck, "reallocated": self.reallocated,
                "by_reason": {r.key: self.by_reason[r.key] for r in STUCK_REASONS if self.by_reason[r.key]},
                "queues": counts(self.queues), "applications": counts(self.applications),
                "longest_wait_seconds": _seconds(self.longest_wait),
                "own_outage": {"messages": self.own_outage, "longest_seconds": _seconds(self.own_outage_longest),
                               "until": self.own_outage_until.isoformat() if self.own_outage_until else None},
                "still_waiting_at_day_end": self.still_waiting}


def _seconds(d: Optional[timedelta]) -> Optional[float]:
    return round(d.total_seconds(), 3) if d is not None else None


@dataclass(frozen=True)
class Message:
    """What the tables say of a compared message: its queue and the application that put it."""

    queue: str
    application: str


class Difference(NamedTuple):
    """A message one stop changed: ``kind`` "stuck" or "reallocated" (went elsewhere), and its fate in the case."""

    msg_id: str
    kind: str
    fate: Fate


def compare(stopped_channels: frozenset[str], base: Mapping[str, Fate], case: Mapping[str, Fate]) -> list[Difference]:
    """One sender's messages the stop changed: stuck in the case and not in the day as it was, or delivered over a
    stopped channel that day and over another one in the case."""
    out = []
    for mid, c in case.items():
        b = base.get(mid)
        if b is None:
            continue
        if c.stayed and not b.stayed:
            out.append(Difference(mid, "stuck", c))
        elif (not c.stayed and b.channel in stopped_channels and c.channel is not None
              and c.channel not in stopped_channels):
            out.append(Difference(mid, "reallocated", c))
    return out


def add_up(result: CaseResult, differences: Iterable[Difference], messages: Mapping[str, Message],
           window: Window) -> None:
    """Count one sender's differences into a case's result: a stuck message's wait split into the stop's part and
    the day's own (:func:`split_wait`), each kept apart."""
    for d in differences:
        c = d.fate
        if d.kind == "stuck":
            result.stuck += 1
            result.by_reason[c.reason] += 1
            result.still_waiting += c.held
            inside, outside = split_wait(c, window)
            if c.wait_from is not None and (result.longest_wait is None or inside > result.longest_wait):
                result.longest_wait = inside
            if outside > timedelta(0):
                result.own_outage += 1
                if result.own_outage_longest is None or outside > result.own_outage_longest:
                    result.own_outage_longest = outside
                if result.own_outage_until is None or c.wait_until > result.own_outage_until:
                    result.own_outage_until = c.wait_until
        else:
            result.reallocated += 1
        msg = messages[d.msg_id]
        result.queues[msg.queue][d.kind] += 1
        result.applications[msg.application][d.kind] += 1


# -- the whole day --------------------------------------------------------------------------------------------
@dataclass
class BlastRadius:
    run_date: str
    window: Window
    cases: list[CaseResult]
    messages: int  # put that day, every sender
    senders: tuple[str, ...]  # replayed (those with a configuration and messages)
    replays: int = 0  # case replays run (a channel set of a sender replayed once, whatever cases share it)
    profile: str = "default"
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"run_date": str(self.run_date), "busiest_hour": self.window.label,
                "window": {"start": self.window.start.isoformat(), "end": self.window.end.isoformat(),
                           "messages": self.window.messages},
                "messages": self.messages, "senders": list(self.senders), "profile": self.profile,
                "replays": self.replays, "reasons": dict(REASON_WORDS),
                "cases": [c.to_json() for c in self.cases],
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


#: Queues and applications named per case in a readable table (the JSON has them all).
TOP = 5


def duration(d: timedelta | None) -> str:
    """A wait as an administrator reads it: 55m 00s, 3h 56m."""
    if d is None:
        return "-"
    s = int(d.total_seconds())
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 60}m {s % 60:02d}s"


def case_label(result: CaseResult) -> str:
    c = result.case
    return f"queue manager {c.name}" if c.kind == "qmgr" else f"channel {c.name}"


def top(counts: dict, kind: str, n: int = TOP) -> str:
    """The ``n`` names with the most messages of ``kind`` (stuck, reallocated), most first: `APP.ORDERS 16, APP.AUDIT 2`."""
    items = sorted(((k, v[kind]) for k, v in counts.items() if v[kind]), key=lambda kv: (-kv[1], kv[0]))
    more = f", +{len(items) - n} more" if len(items) > n else ""
    return ", ".join(f"{k} {c}" for k, c in items[:n]) + more


#: The table's header (the readable output's and the report's).
TABLE_HEADER = ("stopped for the hour", "sender", "stuck", "went elsewhere", "stuck because", "longest wait in the stop",
                "then the day's own outage")


def own_outage_text(result: CaseResult, day_end: Optional[datetime] = None) -> str:
    """The stuck messages the day's own outage then held, kept apart from the stop: "18 held until 17:00, the longest
    3h 00m more" ("until day end" for those still waiting at midnight); "-" for none."""
    if not result.own_outage or result.own_outage_until is None:
        return "-"
    until = ("day end" if result.still_waiting or (day_end is not None and result.own_outage_until >= day_end)
             else f"{result.own_outage_until:%H:%M}")
    return f"{result.own_outage} held until {until}, the longest {duration(result.own_outage_longest)} more"


def table_rows(radius: BlastRadius) -> list[tuple[str, ...]]:
    """The table of the readable output and of a report, header first: one row per case that stuck or moved
    something, in the order of ``radius.cases`` (messages stuck, then went elsewhere). The stop's wait (inside the
    hour) and the day's own outage after it (:func:`split_wait`) are two columns, never one sum."""
    day_end = day_bounds(radius.run_date)[1]
    rows = [TABLE_HEADER]
    for r in radius.cases:
        if not (r.stuck or r.reallocated):
            continue
        why = ", ".join(f"{x.key} {r.by_reason[x.key]}" for x in STUCK_REASONS if r.by_reason[x.key])
        rows.append((case_label(r), r.case.sender or "all", str(r.stuck), str(r.reallocated), why or "-",
                     duration(r.longest_wait) if r.stuck else "-", own_outage_text(r, day_end) if r.stuck else "-"))
    return rows


def case_counts(radius: BlastRadius) -> str:
    """How many cases, and what they did, in the one sentence the readable output and the report both print:
    "12 cases stopped (5 queue managers, 7 channels): 2 left messages stuck, 3 only sent messages elsewhere, 7
    changed nothing; 10 replays"."""
    cases = radius.cases
    qmgrs = sum(1 for r in cases if r.case.kind == "qmgr")
    stuck = sum(1 for r in cases if r.stuck)
    moved = sum(1 for r in cases if r.reallocated and not r.stuck)
    quiet = len(cases) - stuck - moved

    def n(k: int, one: str, many: str) -> str:
        return f"{k} {one if k == 1 else many}"

    return (f"{n(len(cases), 'case', 'cases')} stopped ({n(qmgrs, 'queue manager', 'queue managers')}, "
            f"{n(len(cases) - qmgrs, 'channel', 'channels')}): {stuck} left messages stuck, {moved} only sent "
            f"messages elsewhere, {quiet} changed nothing; {n(radius.replays, 'replay', 'replays')} (a sender's "
            "channels stopped together are replayed once, whatever cases share them)")


def application_of(handle: Optional[str], names: Mapping[str, str]) -> str:
    """The application of a put by the one rule (:func:`clwl.analyses.incidents.application_of`): a traced put's handle
    begins with its connection, named by the trace's ApplName where ``names`` (connection -> name) has it; else
    the first field of an open handle ``application:pid:handle``."""
    from clwl.analyses.incidents import application_of as the_rule

    return the_rule(handle, names.get((handle or "").split(":", 1)[0])) or UNKNOWN_APPLICATION


def examine_sender(day: SenderDay, timeline: Sequence[Snapshot], cases: Sequence[Case], window: Window,
                   day_end: datetime, results: Mapping[tuple, CaseResult], names: Mapping[str, str],
                   profile: str = "default") -> int:
    """Replay one sender's day as it was and once per set of its channels the cases stop; add each case's share to
    ``results`` (by case key). Returns the case replays run."""
    base_tl = with_bounds(timeline, window.start, window.end)
    rep = SenderReplay(day.sender, base_tl, profile)
    messages: dict[str, Message] = {}
    for ch in day.before:
        codes, _ = rep.put_batch(ch.columns, ch.event)
        for i, code in enumerate(codes):
            if code < 0:  # waits: it may still wait when the window begins
                messages[ch.msg_ids[i]] = Message(ch.queues[i], application_of(ch.handles[i], names))
        _clear_results(rep)
    waiting = {r.msg_id for rows in rep.waiting.values() for r in rows}
    messages = {m: v for m, v in messages.items() if m in waiting}
    for ch in day.window:
        for mid, queue, handle in zip(ch.msg_ids, ch.queues, ch.handles):
            messages[mid] = Message(queue, application_of(handle, names))
    if not messages:
        return 0  # nothing put in the window nor waiting at its start: no case changes anything
    tracked = set(messages)
    start = fork(rep, base_tl)  # the routing state at the window's start, shared by every case
    base = finish_window(rep, day, tracked, window, day_end)
    runs: dict[frozenset[str], list[Difference]] = {}
    for case in cases:
        chans = dict(case.stops).get(day.sender)
        if not chans:
            continue
        if chans not in runs:
            fates = finish_window(fork(start, stopped(base_tl, chans, window.start, window.end)), day, tracked,
                                  window, day_end)
            runs[chans] = compare(chans, base, fates)
        add_up(results[case.key], runs[chans], messages, window)
    return len(runs)


def blast_radius_of(run_date: str, timelines: Mapping[str, Sequence[Snapshot]], days: Mapping[str, SenderDay],
                    window: Window, messages: int, names: Optional[Mapping[str, str]] = None,
                    profile: str = "default") -> BlastRadius:
    """The blast radius over timelines (sending queue manager -> snapshots) and each sender's day already cut at
    ``window`` (:func:`split_events`, :func:`split_table`). ``names``: connection -> traced ApplName."""
    t0 = time.perf_counter()
    run_date = RunDate(run_date)
    day_end = day_bounds(run_date)[1]
    senders = tuple(sorted(s for s in days if timelines.get(s)))
    cases = cases_of({s: timelines[s] for s in senders}, window)
    results = {c.key: CaseResult(c) for c in cases}
    replays = 0
    for s in senders:
        replays += examine_sender(days[s], timelines[s], cases, window, day_end, results, names or {}, profile)
    ordered = sorted(results.values(), key=lambda r: r.sort_key)
    return BlastRadius(run_date, window, ordered, messages, senders, replays, profile,
                       {"replay": time.perf_counter() - t0})


def blast_radius_of_events(run_date: str, timelines: Mapping[str, Sequence[Snapshot]],
                           events: Mapping[str, Sequence[PutEvent]], profile: str = "default",
                           names: Optional[Mapping[str, str]] = None) -> BlastRadius:
    """The blast radius of PutEvents in memory (each sender's in put order): the busiest hour from their put
    times, then :func:`blast_radius_of`."""
    counts = hour_counts(e.put_time for evs in events.values() for e in evs)
    window = busiest_hour(run_date, counts)
    days = {s: split_events(s, evs, window) for s, evs in events.items()}
    return blast_radius_of(run_date, timelines, days, window, sum(counts.values()), names, profile)


# -- from the lake --------------------------------------------------------------------------------------------
def blast_radius(lake: Location | str, run_date: str, profile: str = "default") -> BlastRadius:
    """The blast radius of ``run_date`` in the lake's silver tables, read without Spark."""
    from clwl.lake.door import LakeFileError, is_delta_table
    from clwl.lake.silver import BATCH_ROWS, load_timelines, sender_inputs, table_path, trace_applications

    t0 = time.perf_counter()
    run_date = RunDate(run_date)
    lake = lake_root(lake)  # a folder, or s3:// (clwl.lake.storage)
    for key in ("silver.message_events", "silver.config_history", "silver.channel_status"):
        if not is_delta_table(table_path(lake, key)):
            raise BlastError(f"no {key} in {lake} (run `clwl run` first, or name the lake with --lake)")
    try:
        timelines = load_timelines(lake, run_date)
        _, inputs = sender_inputs(lake, run_date)
        names = trace_applications(lake, run_date)
    except LakeFileError as e:
        raise BlastError(str(e)) from None
    if not inputs:
        dates = run_dates(lake)
        raise BlastError(f"no messages of {run_date} in silver.message_events of {lake} (its run dates: "
                         f"{', '.join(dates) if dates else 'none'})")
    counts: Counter = Counter()
    for inp in inputs:
        counts.update(hours_of(inp.files))
    window = busiest_hour(run_date, counts)
    read = time.perf_counter() - t0
    out = blast_radius_of(run_date, timelines, LakeDays(inputs, window, BATCH_ROWS), window, sum(counts.values()),
                          names, profile)
    out.seconds = {"read": read, **out.seconds, "total": time.perf_counter() - t0}
    return out
