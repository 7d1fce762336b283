"""Building the estate from the options (``build_estate``): its queue managers, clusters, queues, instances and
applications, then the schedule of its events and the capture times (``estate`` holds the model and the time
rules they keep). Everything is decided up front from the seed, each kind of event from its own seeded stream."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import date, datetime, timedelta

import clwl.generate.planned as P
import clwl.generate.qsg as Q
from clwl.generate.estate import (
    BASE_CAPTURE_MIN,
    FR_NAMES,
    QUEUE_WORDS,
    REGULAR_SENDER_CAPTURES,
    SENDER_WEIGHT,
    SLOT_MIN,
    TRAFFIC_END_MIN,
    TRAFFIC_START_MIN,
    VERSIONS,
    WEIGHTS,
    App,
    Change,
    Estate,
    EstateError,
    Event,
    Instance,
    QMgr,
    Queue,
    at_min,
    iso,
)


def build_estate(o) -> Estate:
    """``o``: the generate options (see ``clwl.generate.GenerateOptions``)."""
    rng = random.Random(f"clwl-generate/{o.seed}/estate")
    n_backends = o.qmgrs - 2 - o.senders
    if o.senders < 1:
        raise EstateError("--senders must be at least 1")
    if o.clusters < 1 or o.queues < 1 or o.instances < 1 or o.days < 1:
        raise EstateError("--clusters, --queues, --instances and --days must be at least 1")
    if n_backends < o.clusters * o.instances:
        raise EstateError(
            f"--qmgrs {o.qmgrs} leaves {n_backends} back-end queue managers after 2 full repositories and "
            f"{o.senders} senders; {o.clusters} cluster(s) x {o.instances} instances need at least "
            f"{o.clusters * o.instances} (use --qmgrs {2 + o.senders + o.clusters * o.instances} or more)")
    width = max(2, len(str(o.qmgrs)))
    clusters = [f"CL{i + 1}" for i in range(o.clusters)]
    first = datetime(o.start_date.year, o.start_date.month, o.start_date.day)
    days = [o.start_date + timedelta(days=i) for i in range(o.days)]

    names: list[tuple[str, str]] = [(n, "repos") for n in FR_NAMES]
    names += [(f"QM{i + 1:0{width}d}", "sender") for i in range(o.senders)]
    names += [(f"QM{o.senders + i + 1:0{width}d}", "backend") for i in range(n_backends)]
    qmgrs: dict[str, QMgr] = {}
    backend_cluster: dict[str, str] = {}
    for idx, (name, role) in enumerate(names):
        created = first - timedelta(days=400 + rng.randint(0, 900), seconds=rng.randint(0, 86399))
        ip = f"10.{40 + idx // 250}.{1 + (idx // 250) % 200}.{10 + idx % 240}"
        host = ip if idx % 5 == 4 else f"{name.lower()}.mq.example.com"
        if role == "repos":
            cl = tuple(clusters)
            version, defclxq, manual = "09040200", ("SCTQ" if name == "FR1" else "CHANNEL"), ()
            descr = f"Full repository {name[-1]} for {', '.join(clusters)}"
        elif role == "sender":
            si = idx - 2
            cl = tuple(clusters)
            version = "09040200"
            defclxq = "CHANNEL" if si % 3 == 1 else "SCTQ"
            manual = ()
            descr = f"Front end {si + 1} - sends to the cluster queues"
        else:
            bi = idx - 2 - o.senders
            c = clusters[bi % len(clusters)]
            backend_cluster[name] = c
            cl = (c,)
            version = VERSIONS[bi % len(VERSIONS)]
            defclxq, manual = "SCTQ", ()
            descr = f"Back end {bi + 1} in {c}"
        qmgrs[name] = QMgr(name, role, idx, cl, version, defclxq, host, ip, created, descr, manual)
    senders = [n for n, r in names if r == "sender"]
    backends = [n for n, r in names if r == "backend"]

    # queues and instances
    queues: list[Queue] = []
    instances: list[Instance] = []
    for j in range(o.queues):
        word = QUEUE_WORDS[j % len(QUEUE_WORDS)]
        qname = f"APP.{word}" if j < len(QUEUE_WORDS) else f"APP.{word}.{j // len(QUEUE_WORDS) + 1}"
        c = clusters[j % len(clusters)]
        pool = [b for b in backends if backend_cluster[b] == c]
        hosts = sorted(rng.sample(pool, o.instances))
        local_sender = None
        if j % 3 == 2 and o.instances >= 2:
            # one instance on a sending queue manager: its local instance competes (or wins, step 3)
            local_sender = senders[(j // 3) % len(senders)]
            hosts = sorted(hosts[:-1] + [local_sender])
        qcreated = first - timedelta(days=30 + rng.randint(0, 300), seconds=rng.randint(0, 86399))
        lo = rng.choice((160, 200, 240, 300))
        queues.append(Queue(qname, j, c, tuple(hosts), f"{word.title()} events - clustered in {c}", qcreated,
                            rng.choice((0.6, 0.8, 0.9, 1.0)), lo, lo + rng.choice((200, 400, 600))))
        for k, h in enumerate(hosts):
            if h == local_sender:
                useq = "ANY" if (j // 3) % 2 == 0 else "QMGR"
            else:
                useq = "QMGR"
            instances.append(Instance(qname, h, c, useq, qcreated + timedelta(seconds=70 * k + rng.randint(0, 60))))

    # sending queue managers with manual cluster transmission queues (CLCHNAME)
    for si, s in enumerate(senders):
        if si % 3 == 2:
            remote_hosts = sorted({i.host for i in instances if i.host != s})
            exact = qmgrs[remote_hosts[0]].name if remote_hosts else None
            manual = [("CLUS.XMITQ.APP", "TO.QM*")]
            if exact:
                chl = f"TO.{exact}" if len(clusters) == 1 else f"TO.{exact}.{qmgrs[exact].clusters[0]}"
                manual.append((f"CLUS.XMITQ.{exact}"[:48], chl))
            q = qmgrs[s]
            qmgrs[s] = QMgr(q.name, q.role, q.index, q.clusters, q.version, q.defclxq, q.host, q.ip, q.created,
                            q.descr, tuple(manual))

    hosts_all = sorted({i.host for i in instances})
    knows: dict[str, list[str]] = {}
    for name, role in names:
        if role == "repos":
            knows[name] = sorted(qmgrs)
        elif role == "sender":
            knows[name] = sorted(set(FR_NAMES) | {name} | set(hosts_all))
        else:
            knows[name] = sorted(set(FR_NAMES) | {name})

    initial_weight = {}
    for name, role in names:
        if role == "backend":
            initial_weight[name] = rng.choice((50, 50, 50, 25, 75, 40))
        else:
            initial_weight[name] = SENDER_WEIGHT

    apps: dict[str, dict[str, App]] = {}
    for si, s in enumerate(senders):
        low = s.lower()
        base = 1000 + 10 * si
        apps[s] = {
            "svc": App(f"{low}-svc", f"{low}svc"[:12], str(base + 1), 28, rng.randint(2000, 30000)),
            "batch": App(f"{low}-batch", f"{low}bat"[:12], str(base + 2), 6, rng.randint(2000, 30000)),
            "recon": App(f"{low}-recon", "recon", str(base + 3), 6, rng.randint(2000, 30000)),
        }
    queue_weights = {s: [rng.randint(1, 4) for _ in queues] for s in senders}
    sender_share = {s: 10 - min(6, si) for si, s in enumerate(senders)}
    group = None
    if getattr(o, "qsg", 0):
        try:
            group = Q.plan(o, senders, backends, {i.host for i in instances})
        except Q.QsgError as e:
            raise EstateError(str(e)) from None
        for m in group.members:
            qmgrs[m] = replace(qmgrs[m], platform="MVS", version=Q.ZOS_VERSION)
    rest = [b for b in backends if any(i.host == b for i in instances)
            and not (group and b in group.members)][: max(0, o.rest_qmgrs)]

    est = Estate(o.seed, days, qmgrs, clusters, queues, instances, senders, backends, rest, knows,
                 initial_weight, apps, queue_weights, sender_share, qsg=group)
    _schedule(est, o)
    return est


# --------------------------------------------------------------------------------------------------
# Events


def _count(rng: random.Random, rate: float) -> int:
    whole = int(rate)
    return whole + (1 if rng.random() < rate - whole else 0)


def _schedule(est: Estate, o) -> None:
    instants = list(range(TRAFFIC_START_MIN + SLOT_MIN, TRAFFIC_END_MIN, SLOT_MIN))  # 06:30 .. 21:30
    hosting_backends = sorted({i.host for i in est.instances if est.qmgrs[i.host].role == "backend"})
    backend_instances = [(i.queue, i.host) for i in est.instances if est.qmgrs[i.host].role == "backend"]
    n_inst = {q.name: len(q.hosts) for q in est.queues}
    events: list[Event] = []
    changes: list[Change] = []
    igq_state = dict(est.qsg.igq) if est.qsg else {}
    # --event: planned events, scheduled first on their day; a random event that day concerning the same queue
    # manager (the receiver, the instance's host, the sender) is left out, so as not to blur it
    plan = P.resolve(P.parse(getattr(o, "events", ()), est.days[0], len(est.days)), est, o.seed)
    lasting_off: dict[str, set[str]] = {}  # queue -> hosts PUT(DISABLED) by a planned event, from its day on

    def add_event(ev: Event, chs: list[Change]) -> None:
        ev.index = len(events)
        events.append(ev)
        for c in chs:
            changes.append(Change(c.at, c.kind, c.qmgr, c.queue, c.value, ev.index, c.order))

    for di, day in enumerate(est.days):
        rng = random.Random(f"clwl-generate/{o.seed}/events/{day.isoformat()}")
        last_day = di == len(est.days) - 1
        outages: list[tuple[int, int]] = []  # minutes [start, end]; end = 24*60 for an unresolved one
        todays = [r for r in plan if r.day == day]
        planned_qmgrs = {r.qmgr for r in todays}
        placed: list[tuple[int, int, str]] = []  # random outages avoid the planned ones and the planned changes
        for r in todays:
            ev, chs = P.scheduled(r)
            add_event(ev, chs)
            if r.kind == "outage":
                outages.append(r.window)
            if chs:
                placed.append((*(r.window if r.kind == "outage" else (P.LASTING_AT_MIN, P.LASTING_AT_MIN)), ""))
            if r.kind == "disable":
                lasting_off.setdefault(r.queue, set()).add(r.qmgr)
            if r.kind == "bind-on-open":
                est.bind_on_open_from.setdefault(r.qmgr, day)
        after_planned = max((b for a, b, _ in placed), default=0)
        wanted = _count(rng, o.outages) if hosting_backends else 0
        for _ in range(wanted):
            for _attempt in range(40):
                dur = rng.randint(1, 4) * SLOT_MIN
                s = rng.choice(instants)
                e = s + dur
                if e > instants[-1]:
                    continue
                if any(not (e + SLOT_MIN <= a or s >= b + SLOT_MIN) for a, b, _ in placed):
                    continue
                placed.append((s, e, rng.choice(hosting_backends)))
                break
        placed = sorted(x for x in placed if x[2] and x[2] not in planned_qmgrs)
        for k, (s, e, qm) in enumerate(placed):
            unresolved = last_day and k == len(placed) - 1 and o.unresolved_outage and s >= after_planned
            outages.append((s, 24 * 60 if unresolved else e))
            ev = Event(0, "outage", qm, at_min(day, s), None if unresolved else at_min(day, e), unresolved=unresolved)
            chs = [Change(at_min(day, s), "retrying", qm, value=True)]
            if not unresolved:
                chs.append(Change(at_min(day, e), "retrying", qm, value=False, order=0))
            add_event(ev, chs)

        def free(minute: int) -> bool:
            """No change may happen while a channel is retrying (an unresolved outage lasts till midnight)."""
            return all(not (a < minute < b) for a, b in outages)

        def period(max_slots: int) -> tuple[int, int] | None:
            for _attempt in range(40):
                s = rng.choice(instants)
                e = s + rng.randint(1, max_slots) * SLOT_MIN
                if e <= instants[-1] and free(s) and free(e):
                    return s, e
            return None

        busy: dict[tuple, list[tuple[int, int]]] = {}

        def overlaps(key: tuple, s: int, e: int) -> bool:
            return any(not (e < a or s > b) for a, b in busy.get(key, []))

        # suspends
        for _ in range(_count(rng, o.suspends) if hosting_backends else 0):
            p = period(8)
            if p is None:
                continue
            qm = rng.choice(hosting_backends)
            if qm in planned_qmgrs or overlaps(("suspend", qm), *p):
                continue
            busy.setdefault(("suspend", qm), []).append(p)
            add_event(Event(0, "suspend", qm, at_min(day, p[0]), at_min(day, p[1])),
                      [Change(at_min(day, p[0]), "suspend", qm, value=True),
                       Change(at_min(day, p[1]), "suspend", qm, value=False, order=0)])
        # PUT(DISABLED) on one instance, never the last enabled instance of its queue
        for _ in range(_count(rng, o.put_disabled) if backend_instances else 0):
            p = period(6)
            if p is None:
                continue
            queue, host = rng.choice(backend_instances)
            same_q = [iv for key, ivs in busy.items() if key[0] == "put" and key[1] == queue for iv in ivs]
            concurrent = sum(1 for a, b in same_q if not (p[1] < a or p[0] > b))
            off = lasting_off.get(queue, set())  # disabled by a planned event: not enabled again
            if overlaps(("put", queue, host), *p) or concurrent + 1 + len(off) >= n_inst[queue] \
                    or host in off or host in planned_qmgrs:
                continue
            busy.setdefault(("put", queue, host), []).append(p)
            add_event(Event(0, "put_disabled", host, at_min(day, p[0]), at_min(day, p[1]), queue=queue,
                            attribute="PUT", old="ENABLED", new="DISABLED"),
                      [Change(at_min(day, p[0]), "put", host, queue, "DISABLED"),
                       Change(at_min(day, p[1]), "put", host, queue, "ENABLED", order=0)])
        # priority changes: a cluster receiver's CLWLPRTY, or a queue instance's CLWLPRTY, raised then restored
        for _ in range(_count(rng, o.priority_changes) if backend_instances else 0):
            p = period(4)
            if p is None:
                continue
            value = rng.randint(1, 3)
            if rng.random() < 0.5:
                qm = rng.choice(hosting_backends)
                if qm in planned_qmgrs or overlaps(("chl_prty", qm), *p):
                    continue
                busy.setdefault(("chl_prty", qm), []).append(p)
                add_event(Event(0, "priority_change", qm, at_min(day, p[0]), at_min(day, p[1]),
                                attribute="CLUSRCVR CLWLPRTY", old=0, new=value),
                          [Change(at_min(day, p[0]), "chl_prty", qm, value=value),
                           Change(at_min(day, p[1]), "chl_prty", qm, value=0, order=0)])
            else:
                queue, host = rng.choice(backend_instances)
                if host in planned_qmgrs or overlaps(("q_prty", queue, host), *p):
                    continue
                busy.setdefault(("q_prty", queue, host), []).append(p)
                add_event(Event(0, "priority_change", host, at_min(day, p[0]), at_min(day, p[1]), queue=queue,
                                attribute="QLOCAL CLWLPRTY", old=0, new=value),
                          [Change(at_min(day, p[0]), "q_prty", host, queue, value),
                           Change(at_min(day, p[1]), "q_prty", host, queue, 0, order=0)])
        # weight changes (instantaneous; they stay)
        for _ in range(_count(rng, o.weight_changes) if hosting_backends else 0):
            for _attempt in range(40):
                s = rng.choice(instants)
                if free(s):
                    qm = rng.choice(hosting_backends)
                    if qm in planned_qmgrs:
                        break
                    add_event(Event(0, "weight_change", qm, at_min(day, s), None, attribute="CLUSRCVR CLWLWGHT"),
                              [Change(at_min(day, s), "weight", qm, value=rng.choice(WEIGHTS))])
                    break
        # IGQ switched on a sending member (own random stream, as partitions)
        if est.qsg is not None and getattr(o, "qsg_igq_changes", 0) > 0:
            _schedule_igq_changes(est, o, day, free, add_event, igq_state, avoid=planned_qmgrs)
        # partitions (own random stream: estates without them are unchanged)
        if getattr(o, "partitions", 0) > 0:
            _schedule_partitions(est, o, day, events, add_event, outages, avoid=planned_qmgrs,
                                 closed=set(lasting_off))

    # apply in time order to fill in old/new weights, and drop weight "changes" to the same value
    changes.sort(key=lambda c: (c.at, c.order, c.event, c.kind, c.qmgr, c.queue))
    weight = dict(est.initial_weight)
    kept: list[Change] = []
    for c in changes:
        if c.kind == "weight":
            ev = events[c.event]
            if ev.planned is not None:
                c = P.planned_weight(c, ev, weight[c.qmgr], o.seed)
            elif c.value == weight[c.qmgr]:
                c = Change(c.at, c.kind, c.qmgr, c.queue, next(w for w in WEIGHTS if w != weight[c.qmgr]),
                           c.event, c.order)
            ev.old, ev.new = weight[c.qmgr], c.value
            weight[c.qmgr] = int(c.value)  # type: ignore[arg-type]
        kept.append(c)
    events.sort(key=lambda e: (e.start, e.index))
    renum = {e.index: n for n, e in enumerate(events)}
    for n, e in enumerate(events):
        e.index = n
    est.events = events
    est.changes = [Change(c.at, c.kind, c.qmgr, c.queue, c.value, renum[c.event], c.order) for c in kept]

    # capture schedule
    for day in est.days:
        caps: dict[int, set[str]] = {BASE_CAPTURE_MIN: set(est.qmgrs)}
        for m in REGULAR_SENDER_CAPTURES:
            caps.setdefault(m, set()).update(est.senders)
        for c in est.changes:
            if c.at.date() != day:
                continue
            m = c.at.hour * 60 + c.at.minute
            caps.setdefault(m, set()).update(est.senders)
            if c.kind not in ("retrying", "partition"):
                caps[m].add(c.qmgr)  # the queue manager that changed shows it in its own capture
        est.captures[day] = {m: sorted(v) for m, v in sorted(caps.items())}


# --------------------------------------------------------------------------------------------------
# Partitions: the only events during which eligible messages wait (and are re-allocated)


def _schedule_partitions(est: Estate, o, day: date, events: list[Event], add_event, outages, *,
                         avoid: set[str] = frozenset(), closed: set[str] = frozenset()) -> None:
    """``--partitions``: the channels from one sending queue manager to every host of one of its queues go
    RETRYING together (step 12 still rotates among them, so messages for that queue wait); at a capture one
    host comes back while the others still retry (their next failed retry re-drives the eligible waiting
    messages to it: re-allocation); later the others come back. Nothing else changes from a slot before to a
    slot after, no sender capture falls inside, and no period event (suspend, PUT(DISABLED), CLWLPRTY) is in
    force: the recovered host is then the only destination of the first tier for the re-driven messages. Not
    of a queue with an instance disabled by a planned event (``closed``), nor of a sending queue manager or host
    of a planned event that day (``avoid``)."""
    rng = random.Random(f"clwl-generate/{o.seed}/partitions/{day.isoformat()}")
    instants = list(range(TRAFFIC_START_MIN + SLOT_MIN, TRAFFIC_END_MIN, SLOT_MIN))
    candidates = [q for q in est.queues if len(q.hosts) >= 2
                  and all(est.qmgrs[h].role == "backend" and not est.qmgrs[h].zos for h in q.hosts)
                  and q.name not in closed]
    if not candidates:
        return

    def minute(t: datetime) -> int:
        return t.hour * 60 + t.minute

    for _ in range(_count(rng, o.partitions)):
        for _attempt in range(60):
            p1, p2 = rng.randint(1, 3), rng.randint(1, 2)
            s = rng.choice(instants)
            r1, r2 = s + p1 * SLOT_MIN, s + (p1 + p2) * SLOT_MIN
            if r2 > instants[-1]:
                continue
            blocked = [(a - SLOT_MIN, b + SLOT_MIN) for a, b in outages]
            for e in events:
                if e.start.date() != day or e.kind == "outage":
                    continue
                a = minute(e.start)
                b = minute(e.end) if e.end else a
                blocked.append((a - SLOT_MIN, b + SLOT_MIN) if e.kind == "partition" else (a, b))
            blocked += [(m, m) for m in REGULAR_SENDER_CAPTURES]
            if any(not (r2 < a or s > b) for a, b in blocked):
                continue
            sender = rng.choice(est.senders)
            q = rng.choice(candidates)
            first = rng.choice(q.hosts)
            if sender in avoid or avoid & set(q.hosts):
                continue
            rest = [h for h in q.hosts if h != first]
            detail = {"hosts": list(q.hosts), "first_back": first, "first_back_at": iso(at_min(day, r1)),
                      "channels": [est.channel(h, q.cluster) for h in q.hosts]}
            chs = [Change(at_min(day, s), "partition", h, sender, True) for h in q.hosts]
            chs.append(Change(at_min(day, r1), "partition", first, sender, False, order=0))
            chs += [Change(at_min(day, r2), "partition", h, sender, False, order=0) for h in rest]
            add_event(Event(0, "partition", sender, at_min(day, s), at_min(day, r2), queue=q.name, detail=detail),
                      chs)
            break


# --------------------------------------------------------------------------------------------------
# IGQ changes (--qsg-igq-changes): a sending member's IGQ switched, effective from the capture that shows it


def _schedule_igq_changes(est: Estate, o, day: date, free, add_event, state: dict[str, bool], *,
                          avoid: set[str] = frozenset()) -> None:
    """Each change switches one sending member's IGQ (ENABLED <-> DISABLED) one second before a slot boundary
    that no channel outage spans; ``state`` carries the settings from day to day."""
    rng = random.Random(f"clwl-generate/{o.seed}/igq/{day.isoformat()}")
    sending = [m for m in est.qsg.members if m in est.senders]  # type: ignore[union-attr]
    instants = [m for m in range(TRAFFIC_START_MIN + SLOT_MIN, TRAFFIC_END_MIN, SLOT_MIN) if free(m)]
    if not sending or not instants:
        return
    picks = sorted({(rng.choice(instants), rng.choice(sending)) for _ in range(_count(rng, o.qsg_igq_changes))})
    for minute, qm in picks:
        if qm in avoid:  # a planned event's sending queue manager that day
            continue
        old = state[qm]
        state[qm] = not old
        add_event(Event(0, "igq_change", qm, at_min(day, minute), None, attribute="QMGR IGQ",
                        old="ENABLED" if old else "DISABLED", new="DISABLED" if old else "ENABLED"),
                  [Change(at_min(day, minute), "igq", qm, value=not old)])
