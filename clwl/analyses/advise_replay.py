"""A lake's day replayed with the weights ``clwl advise`` proposes (clwl/analyses/advise.py searches them).

:func:`replayed_shares` replays a sender's day twice in-process (clwl/lake/silver.py, clwl/engine/replay.py): as
captured, and with the proposal as a what-if override of its channels' CLUSRCVR (clwl/analyses/whatif.py). The
messages the proposal did not place where the rotation freely sent them are told apart by cause
(:data:`REPLAY_CAUSES`). Pure Python; the lake is read only in :func:`replayed_shares`, lazily.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable, Mapping, Optional

from clwl.analyses.advise import SAME_SHARE, AdviseError, rounded
from clwl.engine.algorithm import Request
from clwl.engine.shares import engine_shares, steady

#: Why a replayed message did not go where the rotation with the proposed weights freely sent it, in order: the
#: first that applies is its cause (:func:`replay_counts`). The rest are the messages CLWL was free to place.
REPLAY_CAUSES: tuple[tuple[str, str], ...] = (
    ("named-qmgr", "the application named the queue manager (ObjectQMgrName): CLWL does not choose"),
    ("bind-on-open", "a later message of a handle opened with MQOO_BIND_ON_OPEN (or DEFBIND(OPEN)): it keeps the "
                     "queue manager the handle's first message was given"),
    ("bind-on-group", "a later message of a group put in logical order (MQOO_BIND_ON_GROUP): it keeps the group's "
                      "first choice"),
    ("configuration", "put while the day's configuration gave other long-run shares than the advice's: an instance "
                      "enabled or disabled for part of the day, or another change"),
    ("channel-not-running", "put while a channel of the rotation was not running (steps 6-9 chose), or re-allocated "
                            "or still waiting afterwards"),
    ("put-failed", "the put failed: no destination"),
)
CAUSE_WORDS = dict(REPLAY_CAUSES)
#: The replayed day "lands away from the target" when a destination's share is further than this from it
#: (percentage points): then the causes are printed (the JSON always has them).
AWAY_POINTS = 1.0
#: Two long-run shares (percent) are the same configuration's within this: the engine counts 1,000 messages when
#: step 12 does not decide alone, so its shares are multiples of 0.1.
SAME_LONG_RUN = 0.05


@dataclass
class Replayed:
    """A day of the sender's real traffic replayed as it was and with the proposed weights: messages to the
    queue per final destination (where each ended the day; "(error)" for a failed put). With the proposal: why
    the messages that CLWL did not place freely went where they went (``causes``, :data:`REPLAY_CAUSES`), where the
    ones it placed freely went (``free``), and the configurations of the day whose long-run shares differed from
    the advice's (``periods``: (from, shares))."""

    date: str
    sender: str
    queue: str
    before: Counter
    after: Counter
    unknown_channels: list[str] = field(default_factory=list)  # proposed channels the day's configuration lacks
    causes: Counter = field(default_factory=Counter)
    free: Counter = field(default_factory=Counter)
    periods: list[tuple[datetime, Optional[datetime], dict[str, float]]] = field(default_factory=list)
    target: dict[str, float] = field(default_factory=dict)
    expected: dict[str, float] = field(default_factory=dict)  # the advice's long-run shares with the proposal

    @property
    def messages(self) -> int:
        return sum(self.before.values())

    @staticmethod
    def shares(counts: Counter) -> dict[str, float]:
        total = sum(counts.values())
        return {q: 100.0 * n / total for q, n in sorted(counts.items())} if total else {}

    def gap(self) -> float:
        """The largest distance of the replayed shares with the proposal from the target (percentage points)."""
        after = self.shares(self.after)
        return max((abs(after.get(q, 0.0) - self.target.get(q, 0.0)) for q in set(after) | set(self.target)),
                   default=0.0)

    @property
    def away(self) -> bool:
        return bool(self.target) and self.gap() > AWAY_POINTS

    def as_dict(self) -> dict:
        return {"date": self.date, "sender": self.sender, "queue": self.queue, "messages": self.messages,
                "before": rounded(self.shares(self.before)), "after": rounded(self.shares(self.after)),
                "before_messages": dict(sorted(self.before.items())),
                "after_messages": dict(sorted(self.after.items())), "unknown_channels": self.unknown_channels,
                "gap": round(self.gap(), 4), "away": self.away,
                "causes": {k: self.causes[k] for k, _ in REPLAY_CAUSES if self.causes[k]},
                "free_messages": sum(self.free.values()), "free": rounded(self.shares(self.free)),
                "free_counts": dict(sorted(self.free.items())),
                "configurations": [{"from": t.isoformat(), "to": e.isoformat() if e is not None else None,
                                    "shares": rounded(sh)} for t, e, sh in self.periods]}


def _differ(a: Mapping[str, float], b: Mapping[str, float], tolerance: float = SAME_LONG_RUN) -> bool:
    return any(abs(a.get(q, 0.0) - b.get(q, 0.0)) > tolerance for q in set(a) | set(b))


def replay_counts(sender: str, timeline: list, events: Callable[[], Iterable], queue: str, profile: str = "default",
                  until: Optional[datetime] = None, expected: Optional[Mapping[str, float]] = None,
                  ) -> tuple[Counter, Counter, Counter, list[tuple[datetime, Optional[datetime], dict[str, float]]]]:
    """Replay ``sender``'s day (``events()``: its PutEvents in put order, every queue: they share the rotation)
    over ``timeline`` and count ``queue``'s messages by final destination. With ``expected`` (the advice's
    long-run shares), each of them also gets the first of :data:`REPLAY_CAUSES` that applies, from the put and
    the engine: a named queue manager; a later message of a binding (the router's own key,
    :func:`clwl.engine.router.binding_key`); a configuration in force whose long-run shares (every channel running)
    are not ``expected``; a configuration whose channel states change the long-run shares (steps 6-9), or a
    message re-allocated or still waiting at the end. The others CLWL placed freely: counted by destination.
    Returns (by destination, causes, free by destination, the differing configurations: (from, to or None for the
    end of the day, their long-run shares), consecutive snapshots of the same shares as one)."""
    from bisect import bisect_right

    from clwl.engine.candidates import queue_defbind
    from clwl.engine.replay import replay
    from clwl.engine.router import AS_Q_DEF, binding_key

    times = [snap.time for snap in timeline]
    judged: dict[int, Optional[str]] = {}
    long_run: dict[int, dict[str, float]] = {}

    def running_shares(snap) -> dict[str, float]:
        if id(snap) not in long_run:
            long_run[id(snap)] = engine_shares(steady(snap.view), queue, profile)
        return long_run[id(snap)]

    def judge(snap) -> Optional[str]:
        """The cause a configuration gives every message put under it (None: CLWL free to follow the weights)."""
        if id(snap) not in judged:
            running = running_shares(snap)
            if expected is not None and _differ(running, expected):
                judged[id(snap)] = "configuration"
            elif _differ(engine_shares(snap.view, queue, profile), running):
                judged[id(snap)] = "channel-not-running"
            else:
                judged[id(snap)] = None
        return judged[id(snap)]

    cause_of: dict[str, Optional[str]] = {}
    bound: set[tuple] = set()

    def classified():
        for ev in events():
            if expected is not None and ev.queue == queue:
                i = bisect_right(times, ev.put_time) - 1
                snap = timeline[i] if i >= 0 else None
                cause = "named-qmgr" if ev.target_qmgr else None
                if cause is None:
                    bind = ev.bind
                    if bind == AS_Q_DEF and snap is not None:
                        bind = queue_defbind(snap.view, ev.queue)
                    key = binding_key(Request(ev.queue, None), bind, ev.open_handle, ev.group_id, ev.logical_order)
                    if key is not None:
                        if key in bound:
                            cause = "bind-on-open" if key[0] == "open" else "bind-on-group"
                        bound.add(key)
                if cause is None and snap is not None:
                    cause = judge(snap)
                cause_of[ev.msg_id] = cause
            yield ev

    counts: Counter = Counter()
    causes: Counter = Counter()
    free: Counter = Counter()
    for row in replay(sender, timeline, classified(), profile, until=until):
        if row.queue != queue:
            continue
        dest = row.final_qmgr or "(error)"
        counts[dest] += 1
        if expected is None:
            continue
        cause = cause_of.pop(row.msg_id, None)
        if cause is None and row.error is not None:
            cause = "put-failed"
        elif cause is None and (row.reallocations or row.held):
            cause = "channel-not-running"
        if cause is None:
            free[dest] += 1
        else:
            causes[cause] += 1
    # The configurations that gave other long-run shares, as intervals: consecutive snapshots with the same
    # shares are one; an interval is told when a message of the queue was put in it.
    periods: list[tuple[datetime, Optional[datetime], dict[str, float]]] = []
    if expected is not None:
        run: list = []  # [start, shares, any message put]
        for snap in timeline:
            shares = running_shares(snap)
            differs = _differ(shares, expected)
            if run and (not differs or _differ(shares, run[1], SAME_SHARE)):
                if run[2]:
                    periods.append((run[0], snap.time, run[1]))
                run = []
            if differs:
                if not run:
                    run = [snap.time, shares, False]
                run[2] = run[2] or judged.get(id(snap)) == "configuration"
        if run and run[2]:
            periods.append((run[0], None, run[1]))
    return counts, causes, free, periods


def replayed_shares(lake, date: str, sender: str, queue: str, weights: Mapping[str, int],
                    profile: str = "default", target: Optional[Mapping[str, float]] = None,
                    expected: Optional[Mapping[str, float]] = None) -> Replayed:
    """``sender``'s day ``date`` of ``lake`` replayed twice in-process: as captured, and with ``weights``
    (channel -> CLWLWGHT) as a what-if override of those channels' CLUSRCVR (clwl.analyses.whatif). Every message of the
    sender is replayed (the rotation is per channel, shared by every queue); those to ``queue`` are counted, and
    in the replay with the proposal, told apart by why they went where they went (:func:`replay_counts`, against
    ``expected``: the advice's achieved shares). AdviseError when the lake has no configuration or no message of
    ``sender`` that day."""
    from clwl.analyses.whatif import WhatIf
    from clwl.days import day_bounds
    from clwl.lake.silver import load_timelines, put_event, sender_batches, sender_inputs

    whatif = WhatIf("advise", channel_attrs={ch: {"CLWLWGHT": str(w)} for ch, w in sorted(weights.items())})
    before_tl = load_timelines(lake, date).get(sender)
    if not before_tl:
        raise AdviseError(f"--lake: {lake} holds no configuration of {sender} on {date} (silver.config_history)")
    after_tl = load_timelines(lake, date, whatif.apply)[sender]
    known = {c.name for snap in before_tl for c in (*snap.view.channels, *snap.view.local_receivers)}
    _, inputs = sender_inputs(lake, date, [sender])
    if not inputs:
        raise AdviseError(f"--date: {lake} holds no messages of {sender} on {date} (silver.message_events)")
    start, end = day_bounds(date)

    def events():
        for batch in sender_batches(inputs[0]):
            cols = batch.to_pydict()
            for i in range(batch.num_rows):
                yield put_event(cols, i)

    before, *_ = replay_counts(sender, before_tl, events, queue, profile, end)
    after, causes, free, periods = replay_counts(sender, after_tl, events, queue, profile, end, expected)
    periods = [(max(t, start), e, sh) for t, e, sh in periods]  # a configuration carried from the day before
    return Replayed(date, sender, queue, before, after, sorted(ch for ch in weights if ch not in known),
                    causes, free, periods, dict(target or {}), dict(expected or {}))
