"""What one published day adds to gold.trend_facts: its numbers per metric and subject, for the trends across days.

One long table rather than a table per metric (docs/tables.md, *gold.trend_facts*): every metric has the same
shape (a day, a subject, a number), the trend reads them all the same way (clwl/analyses/trend.py), and a metric
added later is rows, not a new table in the publish. The numbers are those ``clwl metrics`` gives for the day
(clwl/analyses/metrics.py computes the shares and the stuck counts; this module reuses it), plus what the trend
needs to name a cause: the configuration changes with their share effects, the incidents with their windows, how
each application opened each queue.

Pure Python over rows the run holds (spark/trend_facts.py gathers them at detect time, before the publish):
no Spark here.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Iterable, Mapping, Optional

from clwl.days import as_utc, day_bounds

# The metrics: name -> (what the subject is, what the value is). docs/trends.md lists each (tested).
METRICS: dict[str, tuple[str, str]] = {
    "share_observed": ("sender, cluster queue, instance (qmgr); facet: the source", "part of the sender's messages "
                       "to the queue observed at the instance (0-1)"),
    "share_configured": ("sender, cluster queue, instance (qmgr); facet: the source", "part the configuration in "
                         "force gave the instance, as the replay routed the day (0-1)"),
    "stuck": ("sender (sending_qmgr), channel", "messages that waited behind the channel and stayed"),
    "not_reallocatable": ("sender, channel", "of those, messages MQ can never re-allocate (AccountingToken all "
                          "zeros, bound on open or group, a named queue manager)"),
    "reallocated": ("sender, channel", "messages that waited behind the channel and were re-allocated"),
    "longest_wait_seconds": ("sender, channel", "the longest wait of a message behind the channel"),
    "incidents": ("qmgr (the one to look at); facet: the side", "incidents of the day"),
    "config_findings": ("facet: the lint rule", "configuration findings of the rule"),
    "config_changes": ("qmgr (observing)", "configuration changes its captures showed against the day before"),
    "evidence_gaps": ("qmgr; facet: the kind of gap", "what the day's evidence lacked there"),
    "trace_agreement": ("the day", "messages whose observed destination is the replay's, over those observed"),
    "application_opens": ("sender, queue; facet: the application", "messages the application put to the queue"),
}


@dataclass(frozen=True)
class Fact:
    """One row of gold.trend_facts (its registry columns, run_date aside)."""

    metric: str
    value: float
    mq_cluster: Optional[str] = None
    queue: Optional[str] = None
    qmgr: Optional[str] = None
    sending_qmgr: Optional[str] = None
    channel: Optional[str] = None
    facet: Optional[str] = None
    messages: Optional[int] = None
    detail: Optional[str] = None


def _json(data) -> str:
    return json.dumps(data, sort_keys=True, default=str)


def share_facts(dist: list[dict], estate) -> list[Fact]:
    """Observed and configured shares per source, sender, queue and instance (clwl.analyses.metrics.share_families),
    with the messages behind them; a share with nothing behind it (NaN) is no row."""
    from clwl.analyses.metrics import share_families

    fams = {f.name: f for f in share_families(dist, estate)}
    totals: dict[tuple[str, str, str, str], float] = defaultdict(float)
    for name in ("clwl_share_observed_messages", "clwl_share_expected_messages"):
        for labels, v in fams[name].samples:
            totals[(name, labels["source"], labels["sending_qmgr"], labels["queue"])] += v
    out: list[Fact] = []
    for metric, ratio, counts in (("share_observed", "clwl_share_observed_ratio", "clwl_share_observed_messages"),
                                  ("share_configured", "clwl_share_configured_ratio",
                                   "clwl_share_expected_messages")):
        for labels, v in fams[ratio].samples:
            if math.isnan(v):
                continue
            total = totals[(counts, labels["source"], labels["sending_qmgr"], labels["queue"])]
            out.append(Fact(metric, v, labels["mq_cluster"] or None, labels["queue"], labels["qmgr"],
                            labels["sending_qmgr"], None, labels["source"], int(round(total))))
    return out


def channel_facts(stuck: list[dict], delayed: list[dict], estate, run_date: str) -> list[Fact]:
    """Per sender and cluster-sender channel of the estate (and any the rows add): stuck, not re-allocatable,
    re-allocated, and the longest wait (a stuck message's age, or a waiting message's hold to its release, the day's
    end when none)."""
    from clwl.analyses.metrics import stuck_families

    out: list[Fact] = []
    keys: set[tuple[str, str]] = set()
    for fam, metric in zip(stuck_families(stuck, estate)[:2], ("stuck", "not_reallocatable")):
        for labels, v in fam.samples:
            keys.add((labels["qmgr"], labels["channel"]))
            out.append(Fact(metric, v, sending_qmgr=labels["qmgr"], channel=labels["channel"]))
    end = day_bounds(run_date)[1]
    moved: dict[tuple[str, str], int] = defaultdict(int)
    longest: dict[tuple[str, str], float] = defaultdict(float)
    for r in stuck:
        k = (r.get("sending_qmgr") or "", r.get("channel") or "")
        longest[k] = max(longest[k], float(r.get("age_seconds") or 0))
    for r in delayed:
        k = (r.get("sending_qmgr") or "", r.get("channel") or "")
        keys.add(k)
        held = as_utc(r.get("held_from"))
        if held is not None:
            longest[k] = max(longest[k], ((as_utc(r.get("released_at")) or end) - held).total_seconds())
        if (r.get("reallocations") or 0) > 0 and r.get("stay_reason") is None:
            moved[k] += 1
    for k in sorted(keys):
        out.append(Fact("reallocated", moved.get(k, 0), sending_qmgr=k[0], channel=k[1]))
        out.append(Fact("longest_wait_seconds", max(0.0, longest.get(k, 0.0)), sending_qmgr=k[0], channel=k[1]))
    return out


def incident_facts(found: Iterable) -> list[Fact]:
    """Incidents per side and queue manager to look at, each with its number (as the report numbers them), side
    and window in ``detail``."""
    by: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for n, i in enumerate(found, 1):
        by[(i.side, i.subject)].append({
            "number": n, "side": i.side, "qmgr": i.subject, "start": i.start.isoformat(), "end": i.end.isoformat(),
            "channels": sorted({f"{w.sender}/{w.channel}" for w in i.windows}), "senders": i.senders,
            "receivers": i.receivers})
    return [Fact("incidents", len(v), qmgr=subject, facet=side, detail=_json(v))
            for (side, subject), v in sorted(by.items())]


def finding_facts(findings: Optional[Mapping[str, int]], rules: Iterable[str]) -> list[Fact]:
    """Findings per lint rule (every rule, 0 when none); no rows when the day's configuration is unknown."""
    if findings is None:
        return []
    return [Fact("config_findings", findings.get(rule, 0), facet=rule)
            for rule in sorted(set(rules) | set(findings))]


def change_facts(drift, observers: Iterable[str]) -> list[Fact]:
    """Configuration changes per observing queue manager, each change (object, attribute, old and new value, MQ's
    stamp) and what the changes did to the configured shares in ``detail``; none when they could not be compared."""
    if drift is None:
        return []
    changes: dict[str, list[dict]] = defaultdict(list)
    effects: dict[str, list[dict]] = defaultdict(list)
    for c in drift.changes:
        changes[c.qmgr].append(c.as_dict())
    for e in drift.effects:
        effects[e.qmgr].append(e.as_dict())
    out = []
    for qmgr in sorted(set(observers) | set(changes) | set(drift.qmgrs)):
        detail = {"changes": changes.get(qmgr, []), "effects": effects.get(qmgr, [])}
        out.append(Fact("config_changes", len(changes.get(qmgr, [])), qmgr=qmgr,
                        detail=_json(detail) if changes.get(qmgr) or effects.get(qmgr) else None))
    return out


def evidence_facts(evidence) -> list[Fact]:
    """The day's evidence gaps per queue manager and kind (only those it had)."""
    return [Fact("evidence_gaps", n, qmgr=qmgr, facet=kind) for (qmgr, kind), n in sorted(evidence.gaps.items()) if n]


def trace_facts(traced: Optional[int], agreed: Optional[int]) -> list[Fact]:
    """The trace agreement (agreed / traced), when anything was traced."""
    if not traced:
        return []
    return [Fact("trace_agreement", (agreed or 0) / traced, messages=int(traced))]


def open_facts(opens: Iterable[Mapping]) -> list[Fact]:
    """How each application opened each queue: ``opens`` rows (sending_qmgr, queue, application, bind, target_qmgr,
    grouped, messages), one per combination, summed per (sender, queue, application) with the counts per bind,
    per named target queue manager and in groups in ``detail``."""
    acc: dict[tuple[str, str, str], dict] = {}
    for r in opens:
        k = (r["sending_qmgr"], r["queue"], r.get("application") or "(unknown)")
        a = acc.setdefault(k, {"messages": 0, "bind": defaultdict(int), "target_qmgr": defaultdict(int), "grouped": 0})
        n = int(r["messages"])
        a["messages"] += n
        a["bind"][str(r.get("bind") or "").lower() or "(unknown)"] += n
        if r.get("target_qmgr"):
            a["target_qmgr"][r["target_qmgr"]] += n
        if r.get("grouped"):
            a["grouped"] += n
    return [Fact("application_opens", a["messages"], queue=q, sending_qmgr=s, facet=app, messages=a["messages"],
                 detail=_json({"bind": dict(a["bind"]), "target_qmgr": dict(a["target_qmgr"]),
                               "grouped": a["grouped"]}))
            for (s, q, app), a in sorted(acc.items())]


@dataclass(frozen=True)
class DayInputs:
    """What one day's facts are made from: the gold rows (distribution, stuck and delayed messages), the estate,
    and what the other analyses said of the day (incidents, lint findings of ``rules``, drift, evidence, the
    trace's traced and agreed messages, the applications' opens)."""

    distribution: list[dict]
    stuck: list[dict]
    delayed: list[dict]
    estate: object
    incidents: Iterable = ()
    findings: Optional[Mapping[str, int]] = None
    rules: Iterable[str] = ()
    drift: object = None
    evidence: object = None
    traced: Optional[int] = None
    agreed: Optional[int] = None
    opens: Iterable[Mapping] = ()


def day_facts(run_date: str, day: DayInputs) -> list[Fact]:
    """Every fact of one day, in a stable order."""
    estate = day.estate
    facts = (share_facts(day.distribution, estate) + channel_facts(day.stuck, day.delayed, estate, run_date)
             + incident_facts(day.incidents) + finding_facts(day.findings, day.rules)
             + change_facts(day.drift, estate.observers)
             + (evidence_facts(day.evidence) if day.evidence is not None else []) + trace_facts(day.traced, day.agreed)
             + open_facts(day.opens))
    unknown = {f.metric for f in facts} - set(METRICS)
    if unknown:  # a metric the docs and the trend do not know
        raise ValueError(f"trend facts of unknown metrics {sorted(unknown)}")
    # the table's types: value a double, messages a whole number (counts above come as ints)
    return [replace(f, value=float(f.value), messages=None if f.messages is None else int(f.messages))
            for f in facts]


def put_spans(rows: Iterable[Mapping]) -> dict[str, tuple[datetime, datetime]]:
    """Each sender's first and last put, from (sending_qmgr, first, last) rows."""
    return {r["sending_qmgr"]: (as_utc(r["first"]), as_utc(r["last"])) for r in rows}
