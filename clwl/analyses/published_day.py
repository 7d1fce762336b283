"""The readers of one published day: the estate the configuration shows, the day's incidents and evidence gaps.

What ``clwl metrics`` (clwl/analyses/metrics.py) labels its gauges with and counts, and what the publish's trend
facts (spark/trend_facts.py) keep per day: gold read at the versions the published pointer names, silver and
bronze read with the day's filter pushed down to the files. Pure Python over the lake's one door
(clwl/lake/door.py) and the engine: no Spark, no pandas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Mapping, Optional

from clwl.days import as_utc, day_bounds


@dataclass
class Estate:
    """The objects of the estate on a day, from the configuration in force (the senders' timelines): what the
    series are labelled with, whatever the day's messages did."""

    qmgrs: set[str] = field(default_factory=set)
    observers: set[str] = field(default_factory=set)
    channels: set[tuple[str, str]] = field(default_factory=set)  # (sender, cluster-sender channel)
    receivers: dict[tuple[str, str], str] = field(default_factory=dict)  # (sender, channel) -> its queue manager
    shares: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (sender, queue, host) -> cluster(s)
    hosts: dict[str, set[str]] = field(default_factory=dict)  # host -> the cluster queues it hosts
    seen_by: dict[str, set[str]] = field(default_factory=dict)  # host -> who shows it
    workload: dict[str, set[str]] = field(default_factory=dict)  # sender -> channels to hosts of its queues
    igq_gap: set[str] = field(default_factory=set)  # senders with IGQ(ENABLED) and no known group member

    def cluster_of(self, queue: str, host: str) -> str:
        found = {c for (_, q, h), c in self.shares.items() if q == queue and h == host}
        return sorted(found)[-1] if found else ""


def estate_of(timelines: Mapping[str, list], run_date: str) -> Estate:
    """The estate of ``run_date`` from the configuration timelines (clwl.lake.silver.load_timelines): the snapshot
    in force at the start of the day and those of the day."""
    from clwl.engine.xmitq import igq_evidence_gap

    start, end = day_bounds(run_date)
    e = Estate()
    for sender, snaps in sorted(timelines.items()):
        ordered = sorted(snaps, key=lambda s: s.time)
        before = [s for s in ordered if s.time <= start]
        day = before[-1:] + [s for s in ordered if start < s.time < end]
        e.observers.add(sender)
        e.qmgrs.add(sender)
        for snap in day:
            view = snap.view
            hosts_here = set()
            for inst in view.instances:
                if inst.qmgr_alias:
                    continue
                host = view.local_name if inst.local else inst.qmgr
                e.qmgrs.add(host)
                e.shares[(sender, inst.queue, host)] = ",".join(sorted(inst.clusters))
                e.hosts.setdefault(host, set()).add(inst.queue)
                e.seen_by.setdefault(host, set()).add(sender)
                if not inst.local:
                    hosts_here.add(inst.qmgr)
            for c in view.channels:
                e.qmgrs.add(c.qmgr)
                e.channels.add((sender, c.name))
                e.receivers.setdefault((sender, c.name), c.qmgr)
                if c.qmgr in hosts_here:
                    e.workload.setdefault(sender, set()).add(c.name)
            if igq_evidence_gap(view):
                e.igq_gap.add(sender)
    return e


def published_state(lk) -> tuple[Any, list[str]]:
    """(the published pointer of ``lk``, a clwl.lake.door.Lake, and its published run dates, oldest first)."""
    pub = lk.published()
    if pub.exists:
        return pub, sorted(pub.dates)
    if not lk.exists("gold.run_summary"):  # a lake from before the pointer: its run_summary says
        return pub, []
    rows = lk.rows("gold.run_summary", ["run_date"]).column("run_date").to_pylist()
    return pub, sorted({d.isoformat() for d in rows if d is not None})


def gold_rows(lk, pub, name: str, day: date, columns: Optional[list[str]] = None) -> list[dict]:
    """The day's rows of gold.<name> at the version the pointer ``pub`` names; none while it is not visible."""
    if not pub.visible(name) or not lk.exists(f"gold.{name}"):
        return []
    return lk.rows(f"gold.{name}", columns, filters=[("run_date", "=", day)], version=pub.version(name)).to_pylist()


def _dataset_rows(lk, key: str, day: date, columns: list[str], *, version: Optional[int] = None,
                  not_null: Optional[str] = None, equal: Optional[tuple[str, Any]] = None) -> Optional[list[dict]]:
    """The day's rows of a table that match a filter pushed down to the files (a column not null, a column equal to
    a value), only ``columns`` of those it has; None when there is no such table."""
    import pyarrow.dataset as pads

    if not lk.exists(key):
        return None
    t = lk.open(key, version)
    present = {f.name for f in t.schema().fields}
    expr = pads.field("run_date") == pads.scalar(day)
    if not_null is not None:
        expr &= pads.field(not_null).is_valid()
    if equal is not None:
        if equal[0] not in present:
            return None
        expr &= pads.field(equal[0]) == pads.scalar(equal[1])
    return t.to_pyarrow_dataset().to_table(columns=[c for c in columns if c in present], filter=expr).to_pylist()


def _put_spans(lk, pub, day: date) -> dict[str, tuple[datetime, datetime]]:
    """Each sender's first and last put of the day (gold.routing_replay, as the report reads them)."""
    if not pub.visible("routing_replay") or not lk.exists("gold.routing_replay"):
        return {}
    t = lk.rows("gold.routing_replay", ["sending_qmgr", "put_time"], filters=[("run_date", "=", day)],
                version=pub.version("routing_replay"))
    if t.num_rows == 0:
        return {}
    g = t.group_by("sending_qmgr").aggregate([("put_time", "min"), ("put_time", "max")])
    return {s: (as_utc(a), as_utc(b)) for s, a, b in zip(g["sending_qmgr"].to_pylist(), g["put_time_min"].to_pylist(),
                                                        g["put_time_max"].to_pylist())}


# ----------------------------------------------------------------------------------------------- the day
HEALTHY_STATES = frozenset({"RUNNING", "INACTIVE"})  # nothing waits behind these (clwl.report.channels)
DELAYED_COLUMNS = ["sending_qmgr", "msg_id", "queue", "qmgr", "channel", "final_qmgr", "final_channel", "held_from",
                   "released_at", "reallocations", "stay_reason"]


def _guess_receiver(channel: str) -> str:
    return channel[3:] if channel.upper().startswith("TO.") else channel


def day_incidents(lk, pub, day: date, estate: Estate, stuck: list[dict],
                  delayed: Optional[list[dict]] = None) -> list:
    """The day's incidents (clwl.analyses.incidents), from the same trouble windows the report groups
    (clwl/report/incidents.py): the cluster-sender channels' states that messages wait behind
    (silver.channel_status), the spans the replay's messages waited (gold.routing_replay held_from) and the
    stuck messages. ``delayed``: the day's DELAYED_COLUMNS rows of the messages that waited, when the caller holds
    them (the publish's trend facts, before gold has them); else read from gold."""
    from clwl.analyses.incidents import Delay, Trouble, incidents

    start, end = day_bounds(day.isoformat())
    troubles: list[Trouble] = []
    if lk.exists("silver.channel_status"):
        rows = lk.rows("silver.channel_status", ["observing_qmgr", "channel", "chltype", "status", "valid_from",
                                                 "valid_to"]).to_pylist()
        if any("SDR" in str(r["chltype"] or "").upper() for r in rows):
            rows = [r for r in rows if "SDR" in str(r["chltype"] or "").upper()]
        for r in rows:
            a, b = as_utc(r["valid_from"]), as_utc(r["valid_to"]) or end
            if a is None or not (b > start and a < end) or str(r["status"]).upper() in HEALTHY_STATES:
                continue
            s, c = str(r["observing_qmgr"]), str(r["channel"])
            troubles.append(Trouble(s, c, estate.receivers.get((s, c), _guess_receiver(c)), max(a, start),
                                    min(b, end)))
    delays: dict[tuple[str, str], Delay] = {}
    if delayed is None:
        delayed = (_dataset_rows(lk, "gold.routing_replay", day, DELAYED_COLUMNS,
                                 version=pub.version("routing_replay"), not_null="held_from")
                   if pub.visible("routing_replay") else None) or []
    for r in delayed:
        a = as_utc(r["held_from"])
        b = as_utc(r["released_at"]) or end
        stayed = r.get("stay_reason") is not None
        final = r.get("final_channel")
        channel = str(final) if stayed and final is not None else str(r["channel"])
        qmgr = str(r["final_qmgr"] if channel == final and r.get("final_qmgr") is not None else r["qmgr"])
        troubles.append(Trouble(r["sending_qmgr"], channel, qmgr, a, b))
        delays[(r["sending_qmgr"], r["msg_id"])] = Delay(
            r["sending_qmgr"], channel, r["msg_id"], r["queue"], a, (b - a).total_seconds(), stuck=stayed,
            reallocated=bool(r.get("reallocations") or 0) and not stayed)
    for r in stuck:
        a = as_utc(r["held_from"])
        if a is None:
            continue
        age = r.get("age_seconds")
        b = a + timedelta(seconds=float(age)) if age is not None else end
        troubles.append(Trouble(r["sending_qmgr"], r["channel"], r["qmgr"], a, b))
        delays[(r["sending_qmgr"], r["msg_id"])] = Delay(
            r["sending_qmgr"], r["channel"], r["msg_id"], r["queue"], a, None if age is None else float(age),
            stuck=True)
    return incidents(troubles, estate.workload, list(delays.values()))


@dataclass
class Evidence:
    """The day's evidence gaps: (qmgr, kind) -> how many, and each queue manager's unseen channel status seconds."""

    gaps: dict[tuple[str, str], int] = field(default_factory=dict)
    unseen: dict[str, float] = field(default_factory=dict)


def day_evidence(lk, pub, day: date, estate: Estate, stuck: list[dict],
                 put_spans: Optional[dict[str, tuple[datetime, datetime]]] = None) -> Evidence:
    """The gaps the report's evidence section names (clwl/report/channels.py), by clwl.landing.evidence's rules:
    channel status captures (bronze.capture_files) against each sender's puts, receivers without queue accounting
    (silver.queue_accounting), IGQ without a known group member, and browses that found messages the channel
    status captures had moving (gold.stuck_messages). ``put_spans``: each sender's first and last put, when the
    caller holds them; else read from gold."""
    from clwl.landing.evidence import CHSTATUS_INTERVAL, accounting_gaps, chstatus_gaps

    d = day.isoformat()
    ev = Evidence()
    captures: dict[str, list[datetime]] = {}
    for r in _dataset_rows(lk, "bronze.capture_files", day, ["observing_qmgr", "capture_time"],
                           equal=("capture_type", "chstatus")) or []:
        captures.setdefault(str(r["observing_qmgr"]), []).append(as_utc(r["capture_time"]))
    spans = _put_spans(lk, pub, day) if put_spans is None else put_spans
    for g in chstatus_gaps(d, captures, spans, CHSTATUS_INTERVAL, day=day_bounds(d)):
        ev.gaps[(g.qmgr, g.kind)] = ev.gaps.get((g.qmgr, g.kind), 0) + 1
        ev.unseen[g.qmgr] = ev.unseen.get(g.qmgr, 0.0) + sum((u.end - u.start).total_seconds() for u in g.unseen)
    accounting = _dataset_rows(lk, "silver.queue_accounting", day, ["qmgr"],
                               equal=("monitoring_type", "QueueAccounting"))
    if accounting is not None:
        for g in accounting_gaps(d, estate.hosts, estate.seen_by, {str(r["qmgr"]) for r in accounting}):
            ev.gaps[(g.qmgr, g.kind)] = ev.gaps.get((g.qmgr, g.kind), 0) + 1
    for sender in estate.igq_gap:
        ev.gaps[(sender, "igq_no_member")] = 1
    missed = {(r["sending_qmgr"], r["channel"]) for r in stuck
              if r.get("observed_on_xmitq") and not r.get("channel_state")}
    for sender, _channel in missed:
        ev.gaps[(sender, "missed_failure")] = ev.gaps.get((sender, "missed_failure"), 0) + 1
    return ev

