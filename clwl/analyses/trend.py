"""``clwl trend``: the days' numbers across days (gold.trend_facts), a flag for every day that departs from its
trailing window, and the cause the lake knows for it.

The rule (docs/trends.md): per metric and subject, a day's value is compared with the values of the previous
``window`` published days (default 14) of its baseline, when at least ``min_days`` of them (default 7) have a
value: z = (value - mean) / max(std, floor), flagged when |z| >= ``threshold`` (default 3). The floor keeps a
perfectly constant baseline (std 0) usable: a change from it still flags, identical days give z = 0. It is the
larger of the metric's own (:data:`FLOORS`: one percentage point of a share, one message, a minute of waiting)
and :data:`RELATIVE_FLOOR` of the mean.

Every flag names its cause, the first that applies, in this order:

- ``drift``: a configuration change of that day that moves that share (clwl drift's share effects, with the
  attribute, old and new value and MQ's ALTDATE/ALTTIME stamp); for a channel's numbers a change of that channel;
- ``incident``: an incident of that day (its number, side and window) whose senders, receivers or channels
  include the subject;
- ``application``: an application of the subject's sender and queue that changed how it opens or addresses it
  that day (bind on open, a named target queue manager, groups), from the put records or the trace;
- ``evidence_gap``: the day was partly unseen at the subject's queue managers;
- ``unexplained``: none of these.

A lasting change with a known cause (``drift``, ``application``) starts a new baseline from its day: the days
after it are compared with the new level (and, with fewer than ``min_days`` days in it, not flagged again for
the same change). A one-day event (``incident``, ``evidence_gap``) does not move the baseline: its day is left
out of the later windows. An ``unexplained`` day stays in them (a lasting change the lake cannot explain is
flagged until the window has learnt it).

Pure Python over the rows (:func:`flags_of`); :func:`trend` reads them through the lake's door at the versions
the published pointer names. No Spark, no pandas.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Iterable, Mapping, Optional

from clwl.days import RunDate
from clwl.lake.storage import Location

DEFAULT_DAYS = 30
DEFAULT_WINDOW = 14
DEFAULT_MIN_DAYS = 7
DEFAULT_THRESHOLD = 3.0

#: The metrics a day is flagged on; the others (changes, incidents, gaps, opens) are the causes.
FLAGGED_METRICS = ("share_observed", "share_configured", "stuck", "not_reallocatable", "reallocated",
                   "longest_wait_seconds", "config_findings", "trace_agreement")
SHARE_METRICS = frozenset({"share_observed", "share_configured"})
CHANNEL_METRICS = frozenset({"stuck", "not_reallocatable", "reallocated", "longest_wait_seconds"})
#: The smallest standard deviation a window is taken to have, per metric (default 1: one message, one finding).
FLOORS = {"share_observed": 0.01, "share_configured": 0.01, "trace_agreement": 0.01, "longest_wait_seconds": 60.0}
RELATIVE_FLOOR = 0.05
#: What a metric's facet is, as a label of its subject.
FACET_LABELS = {"share_observed": "source", "share_configured": "source", "config_findings": "rule",
                "incidents": "side", "evidence_gaps": "kind", "application_opens": "application"}

CAUSE_KINDS = ("drift", "incident", "application", "evidence_gap", "unexplained")
LASTING = frozenset({"drift", "application"})  # starts a new baseline
ONE_DAY = frozenset({"incident", "evidence_gap"})  # left out of later windows
#: How much of an application's messages must change their way of opening (a part 0-1) to be a change.
OPEN_CHANGE = 0.2
#: The share digits below which two shares are the same (drift's effects are rounded to 3 decimals).
SAME_SHARE = 1e-3


class TrendError(Exception):
    """The trend cannot be computed (nothing published, a bad option): one line."""


@dataclass(frozen=True)
class Subject:
    """What a series is about: its labels (None where they do not apply)."""

    mq_cluster: Optional[str] = None
    queue: Optional[str] = None
    qmgr: Optional[str] = None
    sender: Optional[str] = None
    channel: Optional[str] = None
    facet: Optional[str] = None

    def labels(self, metric: str) -> dict[str, str]:
        out = {k: v for k, v in (("mq_cluster", self.mq_cluster), ("queue", self.queue), ("qmgr", self.qmgr),
                                 ("sender", self.sender), ("channel", self.channel)) if v is not None}
        if self.facet is not None:
            out[FACET_LABELS.get(metric, "facet")] = self.facet
        return out

    def text(self, metric: str) -> str:
        if metric in SHARE_METRICS:
            who = "all senders" if self.sender == "*" else self.sender
            return f"{self.queue} from {who} to {self.qmgr} ({self.facet})"
        if metric in CHANNEL_METRICS:
            return f"{self.sender} {self.channel}"
        return " ".join(f"{k}={v}" for k, v in self.labels(metric).items()) or "the estate"


@dataclass(frozen=True)
class Cause:
    kind: str  # a CAUSE_KINDS name
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"kind": self.kind, **self.details}


@dataclass(frozen=True)
class Flag:
    date: str
    metric: str
    subject: Subject
    value: float
    baseline_mean: float
    baseline_std: float
    z: float
    cause: Cause

    def as_dict(self) -> dict:
        return {"date": self.date, "metric": self.metric, **self.subject.labels(self.metric), "value": self.value,
                "baseline_mean": round(self.baseline_mean, 6), "baseline_std": round(self.baseline_std, 6),
                "z": round(self.z, 3), "cause": self.cause.as_dict()}


@dataclass
class Series:
    metric: str
    subject: Subject
    values: dict[str, float] = field(default_factory=dict)  # run date -> value


# ------------------------------------------------------------------------------------------------- causes
def _detail(row: Mapping) -> object:
    text = row.get("detail")
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _open_parts(detail: Mapping, messages: float) -> dict[str, float]:
    """The parts (0-1) of an application's messages bound on open, to a named queue manager, in groups."""
    n = float(messages or 0) or 1.0
    bind = detail.get("bind") or {}
    return {"bind on open": bind.get("open", 0) / n, "a named target queue manager":
            sum((detail.get("target_qmgr") or {}).values()) / n, "groups": (detail.get("grouped") or 0) / n}


@dataclass
class Causes:
    """What the facts say about each day that can explain a flag."""

    changes: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))  # date -> [change]
    effects: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))  # date -> [share effect]
    incidents: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))  # date -> [incident]
    gaps: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(dict))  # date -> qmgr -> kinds
    apps: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))  # date -> [application change]

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping], dates: list[str]) -> "Causes":
        c = cls()
        opens: dict[tuple[str, str, str], dict[str, tuple[dict, float]]] = defaultdict(dict)
        for r in rows:
            d, metric = str(r["run_date"]), r["metric"]
            if metric == "config_changes":
                detail = _detail(r) or {}
                c.changes[d] += detail.get("changes", [])
                c.effects[d] += detail.get("effects", [])
            elif metric == "incidents":
                c.incidents[d] += _detail(r) or []
            elif metric == "evidence_gaps":
                c.gaps[d].setdefault(r.get("qmgr") or "", []).append(r.get("facet") or "")
            elif metric == "application_opens":
                key = (r.get("sending_qmgr") or "", r.get("queue") or "", r.get("facet") or "")
                opens[key][d] = (_detail(r) or {}, float(r.get("messages") or r.get("value") or 0))
        order = {d: i for i, d in enumerate(dates)}
        for (sender, queue, app), by_day in opens.items():
            seen = sorted(by_day, key=lambda d: order.get(d, -1))
            for before, after in zip([None] + seen[:-1], seen):
                now = _open_parts(*by_day[after])
                then = _open_parts(*by_day[before]) if before else {k: 0.0 for k in now}
                moved = {k: (then[k], now[k]) for k in now if abs(now[k] - then[k]) >= OPEN_CHANGE}
                if moved:
                    c.apps[after].append({"application": app, "sender": sender, "queue": queue,
                                          "since": before, "changed": {
                                              k: {"before": round(a, 3), "after": round(b, 3)}
                                              for k, (a, b) in moved.items()}})
        return c

    def of(self, day: str, metric: str, s: Subject) -> Cause:
        for find in (self._drift, self._incident, self._application, self._gap):
            cause = find(day, metric, s)
            if cause is not None:
                return cause
        return Cause("unexplained")

    def _drift(self, day: str, metric: str, s: Subject) -> Optional[Cause]:
        changes = self.changes.get(day) or []
        if not changes:
            return None
        if metric in SHARE_METRICS:
            moved = [e for e in self.effects.get(day, ()) if e.get("queue") == s.queue
                     and (s.sender in ("*", None) or e.get("qmgr") == s.sender)
                     and abs((e.get("before") or {}).get(s.qmgr, 0.0) - (e.get("after") or {}).get(s.qmgr, 0.0))
                     >= SAME_SHARE * 100]
            if not moved:
                return None
            ats = {e.get("at") for e in moved}
            senders = {e.get("qmgr") for e in moved}
            why = [c for c in changes if c.get("at") in ats and c.get("qmgr") in senders] or \
                [c for c in changes if c.get("qmgr") in senders]
            e = moved[0]
            return Cause("drift", {"changes": [_change(c) for c in why], "percent_before":
                                   (e.get("before") or {}).get(s.qmgr, 0.0), "percent_after":
                                   (e.get("after") or {}).get(s.qmgr, 0.0), "sender": e.get("qmgr"),
                                   "at": e.get("at")})
        if metric in CHANNEL_METRICS:
            why = [c for c in changes if c.get("qmgr") == s.sender and s.channel and s.channel in str(c.get("object"))]
        elif metric == "config_findings":
            why = changes
        else:
            why = []
        return Cause("drift", {"changes": [_change(c) for c in why[:10]]}) if why else None

    def _incident(self, day: str, metric: str, s: Subject) -> Optional[Cause]:
        if metric == "config_findings":
            return None
        for i in self.incidents.get(day) or ():
            hit = (metric == "trace_agreement"
                   or (s.sender and s.sender != "*" and s.sender in i.get("senders", ()))
                   or (s.qmgr and s.qmgr in i.get("receivers", ()))
                   or (s.sender and s.channel and f"{s.sender}/{s.channel}" in i.get("channels", ())))
            if hit:
                return Cause("incident", {"number": i.get("number"), "side": i.get("side"), "qmgr": i.get("qmgr"),
                                          "start": i.get("start"), "end": i.get("end"),
                                          "channels": i.get("channels", [])})
        return None

    def _application(self, day: str, metric: str, s: Subject) -> Optional[Cause]:
        if metric not in SHARE_METRICS and metric not in CHANNEL_METRICS:
            return None
        for a in self.apps.get(day) or ():
            if (s.sender in ("*", None) or a["sender"] == s.sender) and (s.queue is None or a["queue"] == s.queue):
                return Cause("application", dict(a))
        return None

    def _gap(self, day: str, metric: str, s: Subject) -> Optional[Cause]:
        gaps = self.gaps.get(day) or {}
        where = {q for q in (s.sender, s.qmgr) if q and q != "*"}
        hit = {q: k for q, k in gaps.items() if not where or q in where}
        return Cause("evidence_gap", {"gaps": {q: sorted(k) for q, k in sorted(hit.items())}}) if hit else None


def _change(c: Mapping) -> dict:
    """A change as a cause names it: the queue manager, object, attribute, old and new value, MQ's stamp."""
    return {k: c.get(k) for k in ("qmgr", "object", "attribute", "old", "new", "stamp", "at")}


# ------------------------------------------------------------------------------------------------- the rule
def floor_of(metric: str, mean: float) -> float:
    return max(FLOORS.get(metric, 1.0), RELATIVE_FLOOR * abs(mean))


def mean_and_std(values: list[float]) -> tuple[float, float]:
    """The mean and the sample standard deviation (n - 1), in floats: statistics.stdev computes in exact
    fractions, which was half of `clwl trend`'s time over 30 days of an estate's series."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))


def flag_series(series: Series, dates: list[str], causes: Causes, *, window: int = DEFAULT_WINDOW,
                min_days: int = DEFAULT_MIN_DAYS, threshold: float = DEFAULT_THRESHOLD) -> list[Flag]:
    """The flags of one series over the published ``dates`` (oldest first), by the module's rule."""
    flags: list[Flag] = []
    start = 0  # the baseline's first day (an index into dates)
    left_out: set[str] = set()  # one-day events: not part of a later window
    for i, d in enumerate(dates):
        if d not in series.values:
            continue
        days = [x for x in dates[max(start, i - window):i] if x in series.values and x not in left_out]
        if len(days) < min_days:
            continue
        mean, std = mean_and_std([series.values[x] for x in days])
        z = (series.values[d] - mean) / max(std, floor_of(series.metric, mean))
        if abs(z) < threshold:
            continue
        cause = causes.of(d, series.metric, series.subject)
        flags.append(Flag(d, series.metric, series.subject, series.values[d], mean, std, z, cause))
        if cause.kind in LASTING:
            start = i
        elif cause.kind in ONE_DAY:
            left_out.add(d)
    return flags


def series_of(rows: Iterable[Mapping], metrics: Iterable[str] = FLAGGED_METRICS) -> list[Series]:
    wanted = set(metrics)
    out: dict[tuple[str, Subject], Series] = {}
    for r in rows:
        if r["metric"] not in wanted or r.get("value") is None or math.isnan(float(r["value"])):
            continue
        s = Subject(r.get("mq_cluster"), r.get("queue"), r.get("qmgr"), r.get("sending_qmgr"), r.get("channel"),
                    r.get("facet"))
        out.setdefault((r["metric"], s), Series(r["metric"], s)).values[str(r["run_date"])] = float(r["value"])
    return [out[k] for k in sorted(out, key=lambda k: (FLAGGED_METRICS.index(k[0]) if k[0] in FLAGGED_METRICS
                                                       else 99, k[0], _sort_key(k[1])))]


def _sort_key(s: Subject) -> tuple:
    return tuple(v or "" for v in (s.queue, s.sender, s.qmgr, s.channel, s.facet, s.mq_cluster))


@dataclass
class Trend:
    """What :func:`trend` found: the dates shown (oldest first), every series over them, and the flags."""

    dates: list[str]
    series: list[Series]
    flags: list[Flag]
    window: int = DEFAULT_WINDOW
    min_days: int = DEFAULT_MIN_DAYS
    threshold: float = DEFAULT_THRESHOLD


def flags_of(rows: Iterable[Mapping], dates: list[str], shown: Optional[list[str]] = None, *,
             window: int = DEFAULT_WINDOW, min_days: int = DEFAULT_MIN_DAYS,
             threshold: float = DEFAULT_THRESHOLD) -> Trend:
    """The trend of ``rows`` (gold.trend_facts rows as dicts, ``run_date`` a date or its text) over the published
    ``dates`` (oldest first; the earlier ones only feed the windows); flags on the ``shown`` dates (default:
    all)."""
    rows = [dict(r, run_date=str(r["run_date"])) for r in rows]
    dates = sorted(dates)
    shown_set = set(shown if shown is not None else dates)
    causes = Causes.from_rows(rows, dates)
    series = series_of(rows)
    flags = [f for s in series for f in flag_series(s, dates, causes, window=window, min_days=min_days,
                                                     threshold=threshold) if f.date in shown_set]
    flags.sort(key=lambda f: (f.date, FLAGGED_METRICS.index(f.metric), _sort_key(f.subject)))
    return Trend(sorted(shown_set), series, flags, window, min_days, threshold)


# ------------------------------------------------------------------------------------------------- the lake
def trend(lake: Location | str, days: int = DEFAULT_DAYS, until: Optional[str] = None, *,
          window: int = DEFAULT_WINDOW, min_days: int = DEFAULT_MIN_DAYS,
          threshold: float = DEFAULT_THRESHOLD) -> Trend:
    """The last ``days`` published run dates up to ``until`` (default: the latest), each flagged against its
    trailing window (read too: ``window`` published dates before the first shown). gold.trend_facts at the
    version gold/_published.json names. TrendError, one line, when nothing is published or the table is not."""
    from clwl.lake.door import Lake

    if days < 1:
        raise TrendError(f"--days {days}: at least 1")
    if window < 1 or min_days < 1 or min_days > window:
        raise TrendError(f"--window {window} --min-days {min_days}: both at least 1, --min-days at most --window")
    if not threshold > 0:
        raise TrendError(f"--threshold {threshold}: a number above 0")
    lk = Lake.of(lake)
    pub = lk.published()
    dates = sorted(pub.dates) if pub.exists else []
    if until is not None:
        until = str(RunDate(until))
        dates = [d for d in dates if d <= until]
    if not dates:
        raise TrendError(f"{lake}: no run date published" + (f" up to {until}" if until else "")
                         + ": run clwl run first")
    if not pub.visible("trend_facts") or not lk.exists("gold.trend_facts"):
        raise TrendError(f"{lake}: gold.trend_facts is not published yet (a lake made before it: the next "
                         f"clwl run publishes it; clwl run --force to add the days already published)")
    shown = dates[-days:]
    read = dates[-(days + window):]
    t = lk.rows("gold.trend_facts", filters=[("run_date", ">=", date.fromisoformat(read[0])),
                                             ("run_date", "<=", date.fromisoformat(read[-1]))],
                version=pub.version("trend_facts"))
    published = set(read)
    rows = [r for r in t.to_pylist() if str(r["run_date"]) in published]
    return flags_of(rows, read, shown, window=window, min_days=min_days, threshold=threshold)


# ------------------------------------------------------------------------------------------------- words
SPARKS = " ▁▂▃▄▅▆▇█"  # blank: no value that day


def sparkline(values: Iterable[Optional[float]]) -> str:
    """One character per day, its height between the lowest and the highest value shown (the middle one when
    they are all equal); a blank for a day without a value."""
    values = list(values)
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    lo, hi = min(present), max(present)
    return "".join(" " if v is None else SPARKS[1 + round((v - lo) / (hi - lo) * 7) if hi > lo else 4]
                   for v in values)


def _pct(v: float) -> str:
    return f"{100 * v:.0f} %"


def value_text(metric: str, v: float) -> str:
    if metric in SHARE_METRICS or metric == "trace_agreement":
        return _pct(v)
    if metric == "longest_wait_seconds":
        return f"{v / 60:.0f} min" if v >= 60 else f"{v:.0f} s"
    return f"{v:g}"


def cause_text(c: Cause) -> str:
    """The cause in words."""
    d = c.details
    if c.kind == "drift":
        parts = []
        for ch in d.get("changes", [])[:3]:
            stamp = f" ({ch['stamp']})" if ch.get("stamp") else ""
            parts.append(f"{ch.get('attribute')} {ch.get('old')} -> {ch.get('new')} on {ch.get('object')} "
                         f"at {ch.get('qmgr')}{stamp}")
        more = len(d.get("changes", [])) - 3
        return "after " + "; ".join(parts) + (f" and {more} more" if more > 0 else "") if parts else \
            "after a configuration change"
    if c.kind == "incident":
        return (f"during incident {d.get('number')} ({d.get('side')} {d.get('qmgr')}, "
                f"{str(d.get('start'))[11:16]}-{str(d.get('end'))[11:16]})")
    if c.kind == "application":
        what = ", ".join(f"{k} {_pct(v['before'])} -> {_pct(v['after'])}" for k, v in d.get("changed", {}).items())
        return f"application {d.get('application')} changed how it opens {d.get('queue')}: {what}"
    if c.kind == "evidence_gap":
        return "the day was partly unseen (" + "; ".join(f"{q}: {', '.join(k)}" for q, k in
                                                         d.get("gaps", {}).items()) + ")"
    return "unexplained: no configuration change, incident, application change or evidence gap that day"


def flag_text(f: Flag) -> str:
    """One flag in words: "QM2's share of APP.ORDERS from QM1 rose from 33 % to 50 % on 11-18 after ..."."""
    rose = "rose" if f.value > f.baseline_mean else "fell"
    if f.metric in SHARE_METRICS:
        who = "all senders" if f.subject.sender == "*" else f.subject.sender
        what = (f"{f.subject.qmgr}'s {'configured ' if f.metric == 'share_configured' else ''}share of "
                f"{f.subject.queue} from {who}")
    elif f.metric in CHANNEL_METRICS:
        what = f"{f.metric.replace('_', ' ')} behind {f.subject.sender} {f.subject.channel}"
    else:
        what = f"{f.metric.replace('_', ' ')} {f.subject.text(f.metric)}".strip()
    return (f"{what} {rose} from {value_text(f.metric, f.baseline_mean)} to {value_text(f.metric, f.value)} on "
            f"{f.date[5:]} {cause_text(f.cause)} (z {f.z:+.1f})")
