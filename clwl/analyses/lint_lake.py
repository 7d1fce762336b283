"""``clwl lint --lake``: the lint of a run date in the lake (each observing queue manager at its last configuration
of the day, the day's put records and replayed routes), the captures the ingest rejected, and the ``--json``
document. Pure: no Spark; the lake is read through :class:`clwl.lake.door.Lake`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import Callable, Iterable, Mapping, Optional

from clwl.analyses.lint_model import (
    BOUND_ON_OPEN,
    ChannelDefinition,
    DayMessage,
    Finding,
    LintInputError,
    Observation,
    Puts,
)
from clwl.analyses.lint_rules import lint_observations
from clwl.engine.model import ClusterView
from clwl.lake.storage import Location
from clwl.landing.formats import CAPTURE_NAME
from clwl.parse.common import MqscRecord


def lint_lake(lake: Location | str, run_date: str, notes: Optional[list[str]] = None) -> list[Finding]:
    """The findings of every queue manager observed on ``run_date``: its last configuration of the day
    (:func:`clwl.lake.silver.load_timelines`), and its DISPLAY CHANNEL records in force then (silver.config_history);
    the day's messages from silver.message_events. LintInputError when the lake holds no captures of that date.
    ``notes`` (when given) gains one line per capture of the day the ingest rejected after the one a queue
    manager is linted at: its previous capture is in force, as on a landing folder (clwl lint --mqsc)."""
    from clwl.days import as_utc, run_day
    from clwl.lake.door import Lake
    from clwl.lake.silver import load_timelines

    lk = Lake.of(lake)
    for key in ("silver.config_history", "silver.channel_status", "silver.ingest_files"):
        if not lk.exists(key):
            raise LintInputError(f"{lake}: no {key} table (ingest the landing folder first: clwl run or clwl ingest)")
    day = run_day(run_date)
    files = lk.rows("silver.ingest_files", ["run_date", "status", "observing_qmgr", "source_file", "capture_time",
                                            "reason", "ingested_at"]).to_pylist()
    dates = sorted({r["run_date"] for r in files if r["status"] in ("ingested", "unchanged")})
    if day not in dates:
        known = ", ".join(d.isoformat() for d in dates) or "none"
        raise LintInputError(f"{lake}: no captures of {run_date} in the lake (run dates ingested: {known})")
    timelines = load_timelines(lake, run_date)
    if not timelines:
        raise LintInputError(f"{lake}: no configuration of any queue manager on {run_date} in silver.config_history")
    rows = lk.rows("silver.config_history", ["observing_qmgr", "kind", "attrs", "valid_from", "valid_to"],
                   filters=[("kind", "=", "CHANNEL")]).to_pylist()
    captures = config_capture_times(files, day)
    observations = []
    for qm, timeline in timelines.items():
        last = timeline[-1]
        recs = [MqscRecord("CHANNEL", dict(r["attrs"] or ()), "silver.config_history", 0) for r in rows
                if r["observing_qmgr"] == qm and as_utc(r["valid_from"]) <= last.time
                and (r["valid_to"] is None or last.time < as_utc(r["valid_to"]))]
        channels = tuple(sorted((ChannelDefinition.from_record(r) for r in recs), key=lambda c: (c.name, c.chltype)))
        captured = any(r["observing_qmgr"] == qm for r in rows)
        observations.append(Observation(qm, last.view, channels, captured, _latest(captures.get(qm, []), None)))
    if notes is not None:
        notes.extend(_rejected_captures(files, day))
    return lint_observations(observations, igq_traffic=igq_traffic(lk, day, timelines),
                             traffic=lake_traffic(lk, day), run_date=day.isoformat(),
                             messages=day_messages(lk, day),
                             moments=day_moments(observations, timelines, captures, day))


def config_capture_times(files: list[dict], day) -> dict[str, list[datetime]]:
    """Per observing queue manager, the times of its configuration captures of ``day`` the ingest read, in order
    (silver.ingest_files)."""
    from clwl.days import as_utc

    out: dict[str, list[datetime]] = {}
    for r in files:
        m = CAPTURE_NAME.match(PurePosixPath(r["source_file"]).name)
        if (r["run_date"] == day and r["status"] in ("ingested", "unchanged") and r.get("capture_time") is not None
                and m and m.group(1).lower() == "config"):
            out.setdefault(r["observing_qmgr"] or "", []).append(as_utc(r["capture_time"]))
    return {qm: sorted(set(ts)) for qm, ts in out.items()}


def _latest(times: list[datetime], at: Optional[datetime]) -> Optional[datetime]:
    """The last of ``times`` at or before ``at`` (None: the last of all); None when there is none."""
    return max((t for t in times if at is None or t <= at), default=None)


def day_moments(observations: list[Observation], timelines: Mapping[str, list],
                captures: Mapping[str, list[datetime]], day) -> list[tuple[datetime, list]]:
    """Every moment of the day a queue manager's configuration changed or was captured, with every observation in
    force then (its view and its latest capture at that moment, its channel definitions as linted): what the
    stale-knowledge rules measure a difference's duration over."""
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)  # a configuration from before: the day's start
    times = sorted({max(snap.time, start) for tl in timelines.values() for snap in tl}
                   | {t for ts in captures.values() for t in ts})
    return [(t, [replace(o, view=_view_at(timelines[o.qmgr], t), captured_at=_latest(captures.get(o.qmgr, []), t))
                 for o in observations]) for t in times]


#: The columns of silver.message_events a replayed put record needs (clwl.lake.silver.put_event), and its application.
_MESSAGE_COLUMNS = ("msg_id", "put_time", "queue", "target_qmgr", "bind", "open_handle", "group_id", "logical_order",
                    "from_cluster_channel", "pcf", "length", "observed_qmgr", "observed_xmitq", "source", "application")


def day_messages(lk, day) -> Optional[Callable[[str, frozenset[str]], list[DayMessage]]]:
    """The day's put records of one sender on some queue names, in put order (silver.message_events; the ones that
    arrived over a cluster channel left out: MQ does not route them again); None when the lake has no such table.
    Read when a finding asks, for its sender and queues only."""
    if not lk.exists("silver.message_events"):
        return None

    def read(sender: str, queues: frozenset[str]) -> list[DayMessage]:
        from clwl.lake.silver import put_event

        tab = lk.rows("silver.message_events", list(_MESSAGE_COLUMNS),
                      filters=[("run_date", "=", day), ("sending_qmgr", "=", sender), ("queue", "in", sorted(queues))])
        c = tab.to_pydict()
        out = [DayMessage(put_event(c, i), c["application"][i] or "") for i in range(tab.num_rows)
               if not c["from_cluster_channel"][i]]
        return sorted(out, key=lambda m: (m.event.put_time, m.event.msg_id))

    return read


def _rejected_captures(files: list[dict], day) -> list[str]:
    """One line per capture of ``day`` (silver.ingest_files) that the ingest rejected and no later capture of the
    same kind and queue manager replaced: the capture before it stays in force, and the lint reads that one."""
    from datetime import datetime, timezone

    from clwl.days import as_utc

    def kind(r: dict) -> str:
        m = CAPTURE_NAME.match(PurePosixPath(r["source_file"]).name)
        return m.group(1).lower() if m else ""

    read: dict[str, dict] = {}  # a file's last reading (an "unchanged" row says it was not read again)
    never = datetime.min.replace(tzinfo=timezone.utc)
    for r in sorted(files, key=lambda r: as_utc(r["ingested_at"]) if r.get("ingested_at") else never):
        if r["status"] != "unchanged" or r["source_file"] not in read:
            read[r["source_file"]] = r
    files = [r for r in read.values() if r["status"] != "removed"]
    usable: dict[tuple[str, str], list] = {}  # (qmgr, kind) -> capture times read, every date up to ``day``
    for r in files:
        if r["status"] in ("ingested", "unchanged") and r.get("capture_time") is not None and r["run_date"] <= day:
            usable.setdefault((r["observing_qmgr"] or "", kind(r)), []).append(as_utc(r["capture_time"]))
    out = []
    for r in sorted(files, key=lambda r: r["source_file"]):
        t, qm, k = r.get("capture_time"), r["observing_qmgr"] or "", kind(r)
        if r["run_date"] != day or r["status"] != "rejected" or t is None or not k:
            continue
        t = as_utc(t)
        times = usable.get((qm, k), [])
        if any(u > t for u in times):
            continue  # a later capture replaced it
        before = max((u for u in times if u < t), default=None)
        instead = f"its {k} capture of {before:%Y-%m-%d %H:%M:%S} UTC is used instead" if before else \
            f"no earlier {k} capture of {qm} is in the lake"
        out.append(f"{qm}: {r['source_file']} was rejected by the ingest ({r.get('reason') or 'unreadable'}): "
                   f"{instead}")
    return out


def lake_traffic(lk, day) -> Optional[dict[tuple[str, str], Puts]]:
    """The day's put records per sender and queue (silver.message_events, the rows the replay takes); None when
    the lake has no such table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not lk.exists("silver.message_events"):
        return None
    t = lk.rows("silver.message_events", ["sending_qmgr", "queue", "bind", "from_cluster_channel"],
                filters=[("run_date", "=", day)])
    # count_puts's rule, counted by Arrow: a day of millions of messages is never turned into Python rows.
    t = t.filter(pc.invert(pc.fill_null(t["from_cluster_channel"], False)))
    bound = pc.is_in(pc.utf8_lower(pc.fill_null(t["bind"], "")), value_set=pa.array(sorted(BOUND_ON_OPEN)))
    t = t.append_column("bound", pc.cast(bound, pa.int64()))
    counts = t.group_by(["sending_qmgr", "queue"]).aggregate([("bound", "count"), ("bound", "sum")]).to_pylist()
    return {(r["sending_qmgr"], r["queue"]): Puts(r["bound_count"], r["bound_sum"] or 0) for r in counts}


def igq_traffic(lk, day, timelines: Mapping[str, list]) -> dict[str, tuple[int, int]]:
    """Per sender with IGQ(ENABLED): the day's replayed messages to another member of its group, and how many of
    them were too large for intra-group queuing (gold.routing_replay, as published; empty when not published)."""
    from clwl.engine.xmitq import igq_applies

    senders = {qm for qm, tl in timelines.items() if any(s.view.qmgr.igq and s.view.qmgr.qsgname for s in tl)}
    if not senders or not lk.exists("gold.routing_replay"):
        return {}
    rows = lk.rows("gold.routing_replay", ["sending_qmgr", "qmgr", "length", "path", "config_time"],
                   filters=[("run_date", "=", day)]).to_pylist()
    out: dict[str, tuple[int, int]] = {}
    for r in rows:
        tl = timelines.get(r["sending_qmgr"])
        if r["sending_qmgr"] not in senders or not tl or r["path"] not in ("igq", "cluster") or not r["qmgr"]:
            continue
        view = _view_at(tl, r["config_time"])
        if not igq_applies(view, r["qmgr"]):
            continue
        n, big = out.get(r["sending_qmgr"], (0, 0))
        out[r["sending_qmgr"]] = (n + 1, big + (r["length"] > view.igq_max_message))
    return out


def _view_at(timeline: list, t) -> ClusterView:
    """The view in force at ``t`` (the first when ``t`` is before it or unknown)."""
    from clwl.days import as_utc

    if t is None:
        return timeline[0].view
    t = as_utc(t)
    current = timeline[0].view
    for snap in timeline:
        if snap.time <= t:
            current = snap.view
    return current


def findings_json(findings: Iterable[Finding]) -> dict:
    """The ``--json`` document: ``{"findings": [{"rule", "qmgr", "object", "detail", "remedy"}, ...]}``."""
    return {"findings": [f.as_dict() for f in findings]}
