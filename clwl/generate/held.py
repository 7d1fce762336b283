"""Messages held on a transmission queue behind a RETRYING channel (an outage): exact counters and the first
messages in full, which the browses print, and what the ground truth says about them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import clwl.generate.render as R
import clwl.generate.render_messages as RM
from clwl.generate.accounting import DayAccounting
from clwl.generate.estate import at_min, iso

# --------------------------------------------------------------------------------------------------
# What the simulation hands over: the held messages


@dataclass
class HeldMessage:
    """A message kept on a transmission queue behind a RETRYING channel (for the browses)."""

    t_ms: int
    queue: str
    target: str
    dest: str
    channel: str
    xmitq: str
    bind: str
    handle: str
    group_id: bytes
    group_seq: int
    group_last: bool
    logical: bool
    length: int
    persistent: bool
    msg_id: bytes
    app_role: str
    zero: bool
    reason: str


class HeldStore:
    """Messages held behind one outage, for one sending queue manager: exact counters, and the first
    ``cap`` messages in full (for the browse)."""

    def __init__(self, sender: str, outage: int, browse_ms: int, cap: int):
        self.sender, self.outage, self.browse_ms, self.cap = sender, outage, browse_ms, cap
        self.counts: dict[tuple[int, int, int], list[int]] = {}  # (key, queue index, persistent) -> n, bytes, min, max
        self.reasons: dict[str, int] = {}
        self.kept: list[HeldMessage] = []
        self.at_browse = 0  # held messages put before the browse
        self.total = 0

    def add(self, key: int, qi: int, pers: int, length: int, reason: str, t_ms: int, detail) -> None:
        c = self.counts.get((key, qi, pers))
        if c is None:
            self.counts[(key, qi, pers)] = [1, length, length, length]
        else:
            c[0] += 1
            c[1] += length
            c[2] = min(c[2], length)
            c[3] = max(c[3], length)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        self.total += 1
        if t_ms < self.browse_ms:
            self.at_browse += 1
            if len(self.kept) < self.cap:
                self.kept.append(detail())


class BrowseWriter:
    """The held messages of ``landing.Generator``: released or still held at the end (their truth), and the
    transmission queue browses of each outage."""

    def release(self, ev, minute: int, acct: DayAccounting) -> None:
        for s in self.est.senders:
            store = self.sd[s].end_outage(minute * 60000, acct)
            if store is not None and store.total:
                self.held_truth.append(self._held_json(store, ev, released=at_min(self.day, minute)
                                                       - timedelta(seconds=1)))

    def unresolved(self, store: HeldStore) -> None:
        ev = self.est.events[store.outage]
        sd = self.sd[store.sender]
        for (k, qi, _p), c in store.counts.items():
            key = (sd.router.dests[k].qmgr, self.est.queues[qi].name)
            self.undelivered[key] = self.undelivered.get(key, 0) + c[0]
        if store.total:
            self.held_truth.append(self._held_json(store, ev, released=None))

    def _held_json(self, store: HeldStore, ev, released: datetime | None) -> dict:
        sd = self.sd[store.sender]
        by_q: dict[str, int] = {}
        for (_k, qi, _p), c in sorted(store.counts.items()):
            by_q[self.est.queues[qi].name] = by_q.get(self.est.queues[qi].name, 0) + c[0]
        base = datetime(self.day.year, self.day.month, self.day.day)
        chl = next((d.channel for d in sd.router.dests if d.qmgr == ev.qmgr), "")
        return {"outage": ev.index, "sender": store.sender, "dest": ev.qmgr, "channel": chl,
                "xmitq": self.est.xmitq_for(store.sender, chl) if chl else "",
                "held": store.total, "by_queue": dict(sorted(by_q.items())),
                "by_reason": dict(sorted(store.reasons.items())),
                "released_at": iso(released) if released else None,
                "browse_at": iso(base + timedelta(milliseconds=store.browse_ms)),
                "on_xmitq_at_browse": store.at_browse, "in_browse_file": len(store.kept),
                "browse_msg_ids": [m.msg_id.hex().upper() for m in store.kept[:50]]}

    # -- browses ----------------------------------------------------------------------------------
    def browse(self, day: date) -> None:
        est = self.est
        base = datetime(day.year, day.month, day.day)
        for si, s in enumerate(est.senders):
            sd = self.sd[s]
            apps = est.apps[s]
            for store in sd.held_stores:
                if not store.kept:
                    continue
                at = base + timedelta(milliseconds=store.browse_ms)
                ev = est.events[store.outage]
                since = ev.start - timedelta(seconds=1)
                retries = R.retry_times(since, at)
                msgs = []
                for m in store.kept:
                    a = apps[m.app_role]
                    put_t = base + timedelta(milliseconds=m.t_ms)
                    outer_t = put_t
                    if not m.zero:  # re-allocation re-driven at each failed retry: PutDate/PutTime follow
                        tried = [r for r in retries if put_t <= r <= at]
                        if tried:
                            outer_t = tried[-1] + timedelta(milliseconds=310)
                    md = RM.outer_md(m, a.user, a.name, a.appltype, a.token, s, outer_t)
                    data = RM.payload(m.queue, a.name, m.length, m.msg_id, day.strftime("%Y%m%d"), m.group_seq)
                    msgs.append((md, RM.xmit_data(m, a.user, a.name, a.appltype, a.token, s, put_t, data)))
                xq = store.kept[0].xmitq
                hhmmss = at.strftime("%H%M%S")
                if si % 2 == 0:
                    name = f"xmitq_{hhmmss}.amqsbcg"
                    self.write(day, s, name, RM.render_amqsbcg(xq, msgs))
                else:
                    name = f"xmitq_{hhmmss}.dmpmqmsg"
                    self.write(day, s, name, RM.render_dmpmqmsg(s, xq, at, msgs))
                self.browses.append({"file": self._rel(day, s, name), "xmitq": xq, "outage": store.outage,
                                     "messages": len(msgs), "on_xmitq": store.at_browse,
                                     "zero_token": sum(1 for m in store.kept if m.zero),
                                     "truncated_to_cap": store.at_browse > len(msgs)})
