"""A run date's depth lines from the lake, and what ``clwl depth`` says about one queue (pure; no Spark, no JVM).

* :func:`day_depth`: the rebuild (clwl/analyses/depth.py) of a run date from the lake: the day's
  ``bronze.activity_operations``, started from the previous run date's published ``gold.queue_depth`` (else the
  first capture), anchored and reconciled on the day's QLOCAL captures (``bronze.mqsc_objects`` CURDEPTH) and
  checked against the day's amqsmon statistics intervals (``bronze.queue_accounting`` QueueStatistics rows,
  QMinDepth/QMaxDepth: :func:`statistics`), which name a window the trace misses as a gap. What the detect stage
  stages as ``gold.queue_depth`` (:func:`gold_rows`).
* :func:`queue_report`: for ``clwl depth``, one queue's published line on a run date per queue manager: its peak,
  the time at or above a threshold (by default the queue's QDEPTHHI percent of its MAXDEPTH, the limit of MQ's queue
  depth high event), its oldest message and who put it, the captured samples beside it, the differences from
  CURDEPTH and from each statistics interval's QMinDepth/QMaxDepth, and the evidence gap where there is no line.

amqsmon prints interval times in the queue manager's local time without a zone; they are read as UTC, as
silver.queue_accounting reads them, so a queue manager whose clock is not on UTC compares its intervals shifted.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from clwl.analyses.depth import (
    Capture,
    DepthChange,
    Difference,
    Gap,
    Rebuilt,
    StatsInterval,
    greatest_age,
    rebuild,
    reconcile,
)
from clwl.days import as_utc, day_bounds

__all__ = ["DepthError", "QueueLine", "QueueReport", "day_depth", "gold_rows", "queue_report"]

#: bronze.activity_operations' columns the rebuild reads, and the operations it needs.
OPERATION_COLUMNS = ("connection", "seq_number", "operation_index", "operation", "comp_code", "options", "qmgr",
                     "application_name", "channel_name", "channel_type", "api_environment", "object_name", "msg_id",
                     "xmitq_msg_id", "xmitq_remote_qmgr", "high_res_time", "operation_time", "fields")
OPERATIONS = ["MQPUT", "MQPUT1", "MQGET", "MQCMIT", "MQBACK", "MQDISC"]


class DepthError(Exception):
    """One line for the user: nothing published, no such queue, a bad argument."""


def _day(run_date: Any) -> date:
    return run_date if isinstance(run_date, date) else date.fromisoformat(str(run_date))


def _lake(lake: Any):
    from clwl.lake.door import Lake

    return Lake.of(lake)


def captured(lake: Any, run_date: Any) -> tuple[list[Capture], dict[tuple[str, str], tuple[int, int]]]:
    """The day's QLOCAL captures' CURDEPTH, and per queue its (MAXDEPTH, QDEPTHHI) as last captured that day."""
    lk = _lake(lake)
    if not lk.exists("bronze.mqsc_objects"):
        return [], {}
    rows = lk.rows("bronze.mqsc_objects", ["observing_qmgr", "capture_time", "object_key", "attrs"],
                   filters=[("run_date", "=", _day(run_date)), ("kind", "=", "QLOCAL")]).to_pylist()
    caps, limits = [], {}
    for r in sorted(rows, key=lambda r: r["capture_time"]):
        attrs = dict(r["attrs"] or ())
        qm, queue = r["observing_qmgr"], r["object_key"].split("|", 1)[-1]
        at = r["capture_time"] if r["capture_time"].tzinfo else r["capture_time"].replace(tzinfo=timezone.utc)
        if attrs.get("CURDEPTH") not in (None, ""):
            caps.append(Capture(qm, queue, at, int(attrs["CURDEPTH"]), r.get("source_file")))
        try:
            limits[(qm, queue)] = (int(attrs["MAXDEPTH"]), int(attrs["QDEPTHHI"]))
        except (KeyError, TypeError, ValueError):
            pass
    return caps, limits


STATS_COLUMNS = ("qmgr", "queue", "interval_start", "interval_end", "q_min_depth", "q_max_depth")


def statistics(lake: Any, run_date: Any) -> list[StatsInterval]:
    """The day's amqsmon QueueStatistics intervals that print QMinDepth and QMaxDepth (none in a lake made before
    the columns: its files give them when they are ingested again)."""
    lk = _lake(lake)
    key = "bronze.queue_accounting"
    if not lk.exists(key):
        return []
    snap = lk.snapshot(key)
    if not set(STATS_COLUMNS) <= set(snap.columns):
        return []
    rows = snap.rows(STATS_COLUMNS, filters=[("run_date", "=", _day(run_date)),
                                             ("monitoring_type", "=", "QueueStatistics")]).to_pylist()
    # amqsmon's printed times, stored naive, are read as UTC
    return sorted({StatsInterval(r["qmgr"], r["queue"], as_utc(r["interval_start"]), as_utc(r["interval_end"]),
                                 r["q_min_depth"], r["q_max_depth"])
                   for r in rows if r["q_min_depth"] is not None and r["q_max_depth"] is not None},
                  key=lambda st: (st.qmgr, st.queue, st.start))


def previous_end(lake: Any, run_date: Any) -> dict[tuple[str, str], int] | None:
    """Each queue's depth at the end of the run date before, from its published gold.queue_depth (None when that
    date is not published: the day starts from its first capture)."""
    lk = _lake(lake)
    before = _day(run_date) - timedelta(days=1)
    pub = lk.published()
    if not pub.exists or str(before) not in pub.dates or not pub.visible("queue_depth") \
            or not lk.exists("gold.queue_depth"):
        return None
    t = lk.rows("gold.queue_depth", ["qmgr", "queue", "seq", "depth"], filters=[("run_date", "=", before)],
                version=pub.version("queue_depth"))
    end: dict[tuple[str, str], tuple[int, int]] = {}
    for r in t.to_pylist():
        k = (r["qmgr"], r["queue"])
        if k not in end or r["seq"] > end[k][0]:
            end[k] = (r["seq"], r["depth"])
    return {k: d for k, (_, d) in end.items()}


def day_depth(lake: Any, run_date: Any, gold_lake: Any = None) -> tuple[Rebuilt, list[Capture]]:
    """The rebuild of ``run_date`` from ``lake``'s bronze (``gold_lake``: where the previous day is published;
    default the same lake) and the day's captures it was anchored on."""
    lk = _lake(lake)
    caps, _ = captured(lk, run_date)
    stats = statistics(lk, run_date)
    if not lk.exists("bronze.activity_operations"):
        return Rebuilt([], {}, []), caps
    ops = lk.rows("bronze.activity_operations", OPERATION_COLUMNS,
                  filters=[("run_date", "=", _day(run_date)), ("operation", "in", OPERATIONS)]).to_pylist()
    start = previous_end(gold_lake if gold_lake is not None else lk, run_date)
    return rebuild(ops, start=start, captures=caps, stats=stats), caps


def gold_rows(rebuilt: Rebuilt) -> list[dict]:
    """gold.queue_depth's rows (but run_date) of a rebuild: ``seq`` numbers each queue's changes from 1."""
    seq: dict[tuple[str, str], int] = {}
    out = []
    for c in rebuilt.changes:
        n = seq[(c.qmgr, c.queue)] = seq.get((c.qmgr, c.queue), 0) + 1
        out.append({"qmgr": c.qmgr, "queue": c.queue, "seq": n, "at": c.at, "depth": c.depth, "delta": c.delta,
                    "operation": c.operation, "msg_id": c.msg_id, "application": c.application,
                    "oldest_msg_id": c.oldest_msg_id, "oldest_arrived_at": c.oldest_arrived_at,
                    "oldest_age_seconds": c.oldest_age_seconds, "oldest_put_by": c.oldest_put_by, "basis": c.basis})
    return out


def published_lines(lake: Any, run_date: Any, queue: str | None = None, qmgr: str | None = None
                    ) -> dict[tuple[str, str], list[DepthChange]] | None:
    """The run date's published gold.queue_depth as lines, (qmgr, queue) -> changes in order (only ``queue`` /
    ``qmgr`` when given); None when the table or the date is not published."""
    lk = _lake(lake)
    pub = lk.published()
    if not pub.exists or str(run_date) not in pub.dates or not pub.visible("queue_depth") \
            or not lk.exists("gold.queue_depth"):
        return None
    filters = [("run_date", "=", _day(run_date))] + ([("queue", "=", queue)] if queue else []) \
        + ([("qmgr", "=", qmgr)] if qmgr else [])
    rows = lk.rows("gold.queue_depth", filters=filters, version=pub.version("queue_depth")).to_pylist()
    out: dict[tuple[str, str], list[DepthChange]] = {}
    for r in sorted(rows, key=lambda r: (r["qmgr"], r["queue"], r["seq"])):
        r = {k: (v.replace(tzinfo=timezone.utc) if isinstance(v, datetime) and v.tzinfo is None else v)
             for k, v in r.items()}
        out.setdefault((r["qmgr"], r["queue"]), []).append(DepthChange(**{k: r[k] for k in DepthChange.__slots__}))
    return out


# ----------------------------------------------------------------------------------------------------------
# clwl depth


@dataclass
class QueueLine:
    """One queue manager's instance of the queue on the day."""

    qmgr: str
    queue: str
    changes: int
    start: int
    end: int
    peak: int
    peak_at: datetime | None
    threshold: int | None
    threshold_source: str  # "--threshold", "QDEPTHHI 80% of MAXDEPTH 50000", or why there is none
    seconds_at_or_above: float | None
    oldest_age_seconds: float | None
    oldest_at: datetime | None
    oldest_msg_id: str | None
    oldest_put_by: str | None
    basis: list[str]  # the bases of the line's oldest messages (exact, fifo_assumed, start_depth)
    samples: list[tuple[datetime, int]]  # the captured CURDEPTH
    differences: list[Difference] = field(default_factory=list)

    def as_dict(self) -> dict:
        iso = lambda t: t.isoformat() if t else None  # noqa: E731
        return {"qmgr": self.qmgr, "queue": self.queue, "changes": self.changes, "start": self.start,
                "end": self.end, "peak": self.peak, "peak_at": iso(self.peak_at), "threshold": self.threshold,
                "threshold_source": self.threshold_source, "seconds_at_or_above": self.seconds_at_or_above,
                "oldest_age_seconds": self.oldest_age_seconds, "oldest_at": iso(self.oldest_at),
                "oldest_msg_id": self.oldest_msg_id, "oldest_put_by": self.oldest_put_by, "basis": self.basis,
                "captured_max": max((n for _, n in self.samples), default=None),
                "samples": [{"at": iso(t), "curdepth": n} for t, n in self.samples],
                "differences": [{"at": iso(d.at), "measure": d.measure, "captured": d.captured,
                                 "rebuilt": d.rebuilt, "cause": d.cause} for d in self.differences]}


@dataclass
class QueueReport:
    date: str
    queue: str
    lines: list[QueueLine]
    gaps: list[Gap]


def _limit(limits: dict, key: tuple[str, str], given: int | None) -> tuple[int | None, str]:
    if given is not None:
        return given, "--threshold"
    if key not in limits:
        return None, "no QLOCAL capture of the queue that day gives MAXDEPTH and QDEPTHHI: give --threshold"
    maxdepth, hi = limits[key]
    # MQ's queue depth high event: the depth reaches QDEPTHHI percent of MAXDEPTH (rounded up to a whole message)
    return -(-maxdepth * hi // 100), f"QDEPTHHI {hi}% of MAXDEPTH {maxdepth}"


def summarise(line: list[DepthChange], start: int, day: date, threshold: int | None) -> dict:
    """Peak, time at or above ``threshold`` over the day (a depth holds from its change to the next, the last to
    the day's end; the start depth from midnight), and the oldest message's greatest age (:func:`greatest_age`)."""
    begin = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    end_of_day = begin + timedelta(days=1)
    peak, peak_at = start, None
    above = 0.0
    held_from, depth = begin, start
    for c in line:
        if threshold is not None and depth >= threshold:
            above += (c.at - held_from).total_seconds()
        held_from, depth = c.at, c.depth
        if c.depth > peak:
            peak, peak_at = c.depth, c.at
    if threshold is not None and depth >= threshold:
        above += (end_of_day - held_from).total_seconds()
    return {"peak": peak, "peak_at": peak_at, "above": above if threshold is not None else None,
            "oldest": greatest_age(line, end_of_day)}


def queue_report(lake: Any, queue: str, qmgr: str | None = None, run_date: Any = None,
                 threshold: int | None = None) -> QueueReport:
    """``clwl depth``: the published line of ``queue`` (every queue manager's, or ``qmgr``'s) on ``run_date``
    (default the latest published), summarised, beside the captured samples; DepthError for one line."""
    lk = _lake(lake)
    pub = lk.published()
    dates = sorted(pub.dates) if pub.exists else []
    if not dates:
        raise DepthError(f"{lake}: no run date published: run clwl run first")
    day = str(run_date) if run_date is not None else dates[-1]
    if day not in dates:
        raise DepthError(f"--date {day}: not published in {lake} (published: {dates[0]} to {dates[-1]})")
    if not pub.visible("queue_depth") or not lk.exists("gold.queue_depth"):
        raise DepthError(f"{lake}: gold.queue_depth is not published yet (a lake made before it: clwl run --force "
                         f"--date {day} adds it)")
    by_queue = published_lines(lk, day, queue, qmgr) or {}
    caps, limits = captured(lk, day)
    stats = [st for st in statistics(lk, day) if st.queue == queue]
    lines = []
    for (qm, _), line in sorted(by_queue.items()):
        start = line[0].depth - line[0].delta
        key = (qm, queue)
        limit, source = _limit(limits, key, threshold)
        s = summarise(line, start, _day(day), limit)
        mine = [c for c in caps if (c.qmgr, c.queue) == key]
        rb = Rebuilt(line, {key: start}, [])
        age, when, old = s["oldest"] or (None, None, None)
        lines.append(QueueLine(
            qm, queue, len(line), start, line[-1].depth, s["peak"], s["peak_at"], limit, source, s["above"],
            age, when, old.oldest_msg_id if old else None, old.oldest_put_by if old else None,
            sorted({c.basis for c in line if c.basis}),
            [(c.at, c.curdepth) for c in mine], reconcile(rb, mine, [st for st in stats if st.qmgr == qm])))
    gaps: list[Gap] = []
    if not lines:
        gaps = _gaps(lk, day, queue, qmgr, caps, stats)
        if not gaps:
            known = {c.queue for c in caps}
            raise DepthError(f"--queue {queue}: no depth change traced on {day}"
                             + ("" if queue in known else " and no capture of it that day (a typo?)"))
    return QueueReport(day, queue, lines, gaps)


def _gaps(lk: Any, day: str, queue: str, qmgr: str | None, caps: list[Capture], stats: list[StatsInterval]
          ) -> list[Gap]:
    """Why the queue has no line: the rebuild of its own operations (and their units' ends) names the gap. Of a
    queue manager with statistics of the queue, every operation of the day is read: whether its trace is silent
    in a window depends on its other connections too."""
    if not lk.exists("bronze.activity_operations"):
        return [Gap(qmgr or "*", queue, "no activity trace in the lake")]
    base = [("run_date", "=", _day(day))]
    whole_qms = sorted({st.qmgr for st in stats if qmgr is None or st.qmgr == qmgr})
    whole = lk.rows("bronze.activity_operations", OPERATION_COLUMNS,
                    filters=base + [("operation", "in", OPERATIONS), ("qmgr", "in", whole_qms)]
                    ).to_pylist() if whole_qms else []
    mine = [r for r in lk.rows("bronze.activity_operations", OPERATION_COLUMNS,
                               filters=base + [("object_name", "=", queue)]).to_pylist()
            if r["qmgr"] not in whole_qms]
    conns = sorted({r["connection"] for r in mine})
    ends = lk.rows("bronze.activity_operations", OPERATION_COLUMNS,
                   filters=base + [("operation", "in", ["MQCMIT", "MQBACK", "MQDISC"]),
                                   ("connection", "in", conns)]).to_pylist() if conns else []
    rb = rebuild(whole + mine + ends, captures=[c for c in caps if c.queue == queue], stats=stats)
    gaps = [g for g in rb.gaps if g.queue == queue and (qmgr is None or g.qmgr == qmgr)]
    # a queue manager that holds the queue (its captures show it) and has no trace at all that day
    for qm in sorted({c.qmgr for c in caps if c.queue == queue and (qmgr is None or c.qmgr == qmgr)}
                     - {g.qmgr for g in gaps}):
        if not lk.rows("bronze.activity_operations", ["qmgr"], filters=base + [("qmgr", "=", qm)]).num_rows:
            gaps.append(Gap(qm, queue, "no activity trace from this queue manager on the day: its queues have no "
                                       "depth line"))
    return gaps


def depth_maxima(rows: list[dict], day: date) -> list[tuple[str, str, int, float]]:
    """(qmgr, queue, the greatest depth, the oldest message's greatest age in seconds) of each queue with a line in
    gold.queue_depth ``rows`` (none for a lake or a day without the trace). The age as ``clwl depth`` gives it: the
    oldest message ages until the next change (clwl.analyses.depth.greatest_age)."""
    from types import SimpleNamespace

    lines: dict[tuple[str, str], list] = defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["qmgr"], r["queue"], r["seq"])):
        lines[(r["qmgr"], r["queue"])].append(SimpleNamespace(
            at=as_utc(r["at"]), depth=r["depth"], oldest_arrived_at=as_utc(r["oldest_arrived_at"])))
    end = day_bounds(day)[1]
    return [(qmgr, queue, max(c.depth for c in line), (greatest_age(line, end) or (0.0,))[0])  # type: ignore[arg-type]
            for (qmgr, queue), line in sorted(lines.items())]
