"""Planned events (``clwl generate --event DAY:KIND[:ARGS]``): a change on a chosen day, so that an estate has a known
answer across days (the trends' tests, a user trying ``clwl trend``).

    DAY:weight[:QMGR[=VALUE]]            CLWLWGHT of QMGR's cluster receivers set to VALUE from DAY on (lasting)
    DAY:outage[:QMGR[@HHMM-HHMM]]        QMGR's cluster receivers unreachable (RETRYING) for the window (one day;
                                         default 10:00-12:00)
    DAY:disable[:QUEUE@QMGR]             PUT(DISABLED) on the instance of QUEUE on QMGR from DAY on (lasting)
    DAY:bind-on-open[:APPLICATION]       the service application (<sender>-svc) opens its queues with
                                         MQOO_BIND_ON_OPEN from DAY on (lasting)

DAY is the day's number in the generated range (1 = --start-date) or its date, YYYY-MM-DD. A lasting configuration
change is made at 05:59:59 and shown by the captures at 06:00, before the day's first put; a subject left out is
chosen from the seed (``resolve``). What each becomes is an ``estate.Event`` with ``planned`` set, listed in
``_generate.json`` ``planned_events``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date, timedelta

from clwl.generate.estate import (
    CHANGE_LEAD_S,
    TRAFFIC_START_MIN,
    WEIGHTS,
    Change,
    EstateError,
    Event,
    at_min,
    iso,
)

KINDS = ("weight", "outage", "disable", "bind-on-open")
#: the event kind each planned kind becomes (as the random ones are named in _generate.json ``events``)
EVENT_KINDS = {"weight": "weight_change", "outage": "outage", "disable": "put_disabled",
               "bind-on-open": "bind_on_open"}
LASTING_AT_MIN = 6 * 60  # a lasting change is shown by the captures at 06:00: the whole day's traffic follows it
OUTAGE_WINDOW = (10 * 60, 12 * 60)
CLWLWGHT_RANGE = (1, 99)

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}|\d+")
_WINDOW = re.compile(r"(\d{2})(\d{2})-(\d{2})(\d{2})")


class PlannedEventError(EstateError):
    """An --event value that is not a planned event of this estate: one line, naming the value."""

    def __init__(self, text: str, reason: str):
        super().__init__(f"--event {text!r}: {reason}")


@dataclass(frozen=True)
class PlannedEvent:
    """One --event as given, its day resolved; ``args`` are the kind's optional arguments, unchecked."""

    text: str
    day_number: int  # 1 = the first generated day
    day: date
    kind: str
    args: str  # "" when left out


def parse(texts, start: date, days: int) -> list[PlannedEvent]:
    """The --event values, in the order given; raises PlannedEventError on the first bad one."""
    out = []
    for text in texts:
        parts = text.split(":", 2)
        if len(parts) < 2 or not parts[1]:
            raise PlannedEventError(text, "expected DAY:KIND[:ARGS], KIND one of " + ", ".join(KINDS))
        day_text, kind = parts[0], parts[1]
        args = parts[2] if len(parts) == 3 else ""
        if not _DAY.fullmatch(day_text):
            raise PlannedEventError(text, f"day {day_text!r} is neither a day number (1-{days}) nor a date "
                                          "YYYY-MM-DD")
        if "-" in day_text:
            try:
                day = date.fromisoformat(day_text)
            except ValueError:
                raise PlannedEventError(text, f"{day_text} is not a date") from None
            n = (day - start).days + 1
        else:
            n = int(day_text)
            day = start + timedelta(days=n - 1)
        if not 1 <= n <= days:
            last = start + timedelta(days=days - 1)
            raise PlannedEventError(text, f"day {day_text} is outside the {days} generated day(s) (1-{days}: "
                                          f"{start.isoformat()} to {last.isoformat()})")
        if kind not in KINDS:
            raise PlannedEventError(text, f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
        out.append(PlannedEvent(text, n, day, kind, args))
    return out


@dataclass
class Resolved:
    """A planned event with its subject: chosen from the seed where the arguments leave it out."""

    given: PlannedEvent
    qmgr: str = ""  # weight, outage: the receiver; disable: the instance's host; bind-on-open: the sender
    queue: str = ""
    value: int | None = None  # weight: CLWLWGHT; None: chosen from the seed once the weight in force is known
    window: tuple[int, int] = (0, 0)  # outage: minutes of the day
    application: str = ""
    rng: random.Random | None = None

    @property
    def day(self) -> date:
        return self.given.day

    @property
    def kind(self) -> str:
        return self.given.kind


def resolve(planned: list[PlannedEvent], est, seed: int) -> list[Resolved]:
    """Check each planned event's subject against the estate and choose the ones left out (each from its own seeded
    stream, so adding an event changes no other's choice). Raises PlannedEventError."""
    hosts = sorted({i.host for i in est.instances if est.qmgrs[i.host].role == "backend"})
    instances = sorted((i.queue, i.host) for i in est.instances if est.qmgrs[i.host].role == "backend")
    svc = {a.name: s for s in est.senders for role, a in est.apps[s].items() if role == "svc"}
    others = {a.name for s in est.senders for role, a in est.apps[s].items() if role != "svc"}
    out = []
    for n, p in enumerate(planned):
        rng = random.Random(f"clwl-generate/{seed}/planned/{n}/{p.text}")
        r = Resolved(p, rng=rng)
        subject, _, extra = p.args.partition("=" if p.kind == "weight" else "@")
        if p.kind in ("weight", "outage"):
            if subject and subject not in hosts:
                raise PlannedEventError(p.text, f"no back end {subject} hosts a cluster queue instance (one of "
                                                f"{', '.join(hosts)})")
            r.qmgr = subject or rng.choice(hosts)
            if p.kind == "weight" and extra:
                if not extra.isdigit() or not CLWLWGHT_RANGE[0] <= int(extra) <= CLWLWGHT_RANGE[1]:
                    raise PlannedEventError(p.text, f"CLWLWGHT {extra!r} is not a whole number from "
                                                    f"{CLWLWGHT_RANGE[0]} to {CLWLWGHT_RANGE[1]}")
                r.value = int(extra)
            elif p.kind == "weight" and "=" in p.args:
                raise PlannedEventError(p.text, "no CLWLWGHT after '='")
            if p.kind == "outage":
                r.window = _window(p, extra) if "@" in p.args else OUTAGE_WINDOW
        elif p.kind == "disable":
            if p.args:
                queue, _, host = p.args.partition("@")
                if (queue, host) not in instances:
                    raise PlannedEventError(p.text, f"no instance {queue}@{host} on a back end (QUEUE@QMGR, one of "
                                                    f"{', '.join(f'{q}@{h}' for q, h in instances)})")
                r.queue, r.qmgr = queue, host
            else:
                r.queue, r.qmgr = rng.choice(instances)
        else:  # bind-on-open
            if p.args in others:
                raise PlannedEventError(p.text, f"{p.args} binds or names its queue manager already; only a service "
                                                f"application puts not fixed (one of {', '.join(sorted(svc))})")
            if p.args and p.args not in svc:
                raise PlannedEventError(p.text, f"no application {p.args} (one of {', '.join(sorted(svc))})")
            r.application = p.args or sorted(svc)[rng.randrange(len(svc))]
            r.qmgr = svc[r.application]
        out.append(r)
    _check_together(out, est)
    return out


def _window(p: PlannedEvent, text: str) -> tuple[int, int]:
    m = _WINDOW.fullmatch(text)
    if m:
        h1, m1, h2, m2 = map(int, m.groups())
        a, b = h1 * 60 + m1, h2 * 60 + m2
        if a % 30 == 0 and b % 30 == 0 and 6 * 60 + 30 <= a < b <= 21 * 60 + 30:
            return a, b
    raise PlannedEventError(p.text, f"outage window {text!r}: HHMM-HHMM on half-hour marks, from 0630 to 2130, "
                                    "start before end")


def _check_together(events: list[Resolved], est) -> None:
    """What the schedule cannot hold: two planned events of one subject on one day, outages that overlap (one
    outage at a time: what is held behind it is counted per outage), every instance of a queue disabled."""
    seen: dict[tuple, str] = {}
    for r in events:
        key = (r.day, r.kind, r.qmgr, r.queue)
        if key in seen:
            raise PlannedEventError(r.given.text, f"{seen[key]!r} plans the same on that day")
        seen[key] = r.given.text
    outages = sorted((r.day, r.window, r.given.text) for r in events if r.kind == "outage")
    for (d1, w1, t1), (d2, w2, _t2) in zip(outages, outages[1:]):
        if d1 == d2 and w2[0] < w1[1] + 30:
            raise PlannedEventError(_t2, f"overlaps {t1!r} (one outage at a time, half an hour apart)")
    disabled: dict[str, set[str]] = {}
    for r in sorted((r for r in events if r.kind == "disable"), key=lambda r: r.day):
        disabled.setdefault(r.queue, set()).add(r.qmgr)
        if disabled[r.queue] >= set(est.queue(r.queue).hosts):
            raise PlannedEventError(r.given.text, f"would disable the last enabled instance of {r.queue}")


def scheduled(r: Resolved) -> tuple[Event, list[Change]]:
    """The event a planned one is, and the changes that make it (none for an application's way of opening)."""
    day = r.day
    planned = {"day": r.given.day_number, "given": r.given.text}
    lasting = at_min(day, LASTING_AT_MIN)
    if r.kind == "weight":
        return (Event(0, "weight_change", r.qmgr, lasting, None, attribute="CLUSRCVR CLWLWGHT", planned=planned),
                [Change(lasting, "weight", r.qmgr, value=r.value)])
    if r.kind == "outage":
        start, end = at_min(day, r.window[0]), at_min(day, r.window[1])
        return (Event(0, "outage", r.qmgr, start, end, planned=planned),
                [Change(start, "retrying", r.qmgr, value=True), Change(end, "retrying", r.qmgr, value=False, order=0)])
    if r.kind == "disable":
        return (Event(0, "put_disabled", r.qmgr, lasting, None, queue=r.queue, attribute="PUT", old="ENABLED",
                      new="DISABLED", planned=planned),
                [Change(lasting, "put", r.qmgr, r.queue, "DISABLED")])
    return (Event(0, "bind_on_open", r.qmgr, at_min(day, TRAFFIC_START_MIN), None, attribute="open options",
                  old="MQOO_BIND_NOT_FIXED", new="MQOO_BIND_ON_OPEN", detail={"application": r.application},
                  planned=planned), [])


def planned_weight(c: Change, ev: Event, in_force: int, seed: int) -> Change:
    """A planned CLWLWGHT change with its value: the one given, or one of the estate's weights other than the one in
    force, chosen from the seed. A value given that is the one in force is no change: PlannedEventError."""
    assert ev.planned is not None
    if c.value is None:
        rng = random.Random(f"clwl-generate/{seed}/planned-weight/{ev.planned['given']}")
        value = rng.choice([w for w in WEIGHTS if w != in_force])
    elif c.value == in_force:
        raise PlannedEventError(ev.planned["given"], f"CLWLWGHT of {ev.qmgr} is {in_force} on that day already")
    else:
        value = int(c.value)  # type: ignore[arg-type]
    return Change(c.at, c.kind, c.qmgr, c.queue, value, c.event, c.order)


def truth(est, events: list[Event]) -> list[dict]:
    """``_generate.json`` ``planned_events``: each planned event with its day, kind, subject (labelled as the lake's
    tables label them), and for a lasting change the old and new value and when MQ shows it altered."""
    out = []
    for e in events:
        if not e.planned:
            continue
        d = {"day": e.planned["day"], "date": e.start.date().isoformat(), "given": e.planned["given"],
             "kind": e.kind, "event": e.index, "lasting": e.kind != "outage",
             "start": iso(e.start), "end": iso(e.end) if e.end else None}
        q = est.qmgrs[e.qmgr]
        if e.kind == "bind_on_open":
            d["subject"] = {"sender": e.qmgr, "application": (e.detail or {})["application"]}
        elif e.kind == "put_disabled":
            d["subject"] = {"mq_cluster": est.queue(e.queue).cluster, "queue": e.queue, "qmgr": e.qmgr}
        else:
            d["subject"] = {"mq_clusters": list(q.clusters), "qmgr": e.qmgr,
                            "channels": [c for c, _ in est.channels_of(e.qmgr)]}
        if e.kind != "outage":
            d["attribute"], d["old"], d["new"] = e.attribute, e.old, e.new
        if e.kind in ("weight_change", "put_disabled"):
            altered = e.start - timedelta(seconds=CHANGE_LEAD_S)
            d["altdate"], d["alttime"] = altered.strftime("%Y-%m-%d"), altered.strftime("%H.%M.%S")
        out.append(d)
    return out


def describe(d: dict) -> str:
    """One line for the progress output: a ``truth`` entry in words."""
    subject = ", ".join(f"{k} {'/'.join(v) if isinstance(v, list) else v}" for k, v in d["subject"].items())
    change = f": {d['attribute']} {d['old']} -> {d['new']}" if "attribute" in d else ""
    when = f" {d['start'][11:16]}-{d['end'][11:16]}" if d["kind"] == "outage" else ""
    return f"planned: day {d['day']} ({d['date']}{when}) {d['kind']} of {subject}{change}"
