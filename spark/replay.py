"""Replay every message of a run date through the CLWL engine, per sending queue manager, in Spark.

Layout: the messages are repartitioned by sending queue manager and sorted by put time within each partition;
``mapInArrow`` then streams each partition through ``clwl.replay.SenderReplay`` with the routing state
carried across Arrow batches (a per-key state machine: much faster than groupBy().applyInPandas, and never
holds a queue manager's day in memory). The configuration timelines (small: a few rows per object and
capture) are built once on the driver from silver history and broadcast.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, DateType, IntegerType, LongType, StringType, StructField, StructType,
                               TimestampType)

from clwl.replay import PutEvent, SenderReplay, Snapshot, timeline_from_history
from spark.config import PipelineConfig
from spark.tables import path as table_path

if TYPE_CHECKING:
    import pyarrow as pa

UTC = timezone.utc

# Everything the replay knows about a message: the columns of gold routing_replay (stuck_messages and the
# distribution are computed from it).
REPLAY_SCHEMA = StructType([
    StructField("run_date", DateType(), False),
    StructField("sending_qmgr", StringType(), False),
    StructField("msg_id", StringType(), False),
    StructField("put_time", TimestampType(), False),
    StructField("queue", StringType(), False),
    StructField("target_qmgr", StringType()),
    StructField("bind", StringType(), False),
    StructField("length", LongType(), False),
    StructField("qmgr", StringType()),
    StructField("channel", StringType()),
    StructField("xmitq", StringType()),
    StructField("path", StringType()),
    StructField("decided_by", StringType()),
    StructField("reallocatable", BooleanType(), False),
    StructField("not_reallocatable_reason", StringType()),
    StructField("trace", StringType()),
    StructField("error", StringType()),
    StructField("reason_code", IntegerType()),
    StructField("config_time", TimestampType()),
    StructField("reallocations", IntegerType(), False),
    StructField("final_qmgr", StringType()),
    StructField("final_channel", StringType()),
    StructField("final_xmitq", StringType()),
    StructField("held", BooleanType(), False),
    StructField("held_from", TimestampType()),
    StructField("released_at", TimestampType()),
    StructField("delivered_at", TimestampType()),
    StructField("hold_state", StringType()),
    StructField("stay_reason", StringType()),
    StructField("stay_detail", StringType()),
    StructField("observed_qmgr", StringType()),
    StructField("agrees", BooleanType()),
    StructField("profile", StringType(), False),
])



# Written with the table when it is created (staging and gold): Delta statistics only on the columns readers
# filter on; the default (the first 32 columns) made the statistics a third of the write.
ROUTING_REPLAY_OPTIONS = {"delta.dataSkippingStatsColumns":
                          "sending_qmgr,msg_id,put_time,queue,qmgr,final_qmgr,final_channel,error"}


def as_utc(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def day_bounds(run_date: str | date) -> tuple[datetime, datetime]:
    d = date.fromisoformat(run_date) if isinstance(run_date, str) else run_date
    start = datetime.combine(d, time(0), UTC)
    return start, start + timedelta(days=1)


def load_timelines(spark: SparkSession, config: PipelineConfig, run_date: str,
                   overrides=None) -> dict[str, list[Snapshot]]:
    """The configuration timeline of every observing queue manager for ``run_date``, from silver history.

    ``overrides`` (optional) is a callable (qmgr, kind, attrs, valid_from) -> attrs used by what-if runs.
    """
    start, end = day_bounds(run_date)
    hist = (spark.read.format("delta").load(table_path(config, "silver.config_history"))
            .where(F.col("valid_from") < F.lit(end))
            .where(F.col("kind") != "CHSTATUS")
            .select("observing_qmgr", "kind", "attrs", "valid_from", "valid_to", "source_file").collect())
    status = (spark.read.format("delta").load(table_path(config, "silver.channel_status"))
              .where(F.col("valid_from") < F.lit(end))
              .select("observing_qmgr", "channel", "chltype", "status", "xmitq", "substate", "valid_from",
                      "valid_to", "source_file").collect())
    rows: dict[str, list] = defaultdict(list)
    for r in hist:
        attrs = dict(r.attrs)
        if overrides is not None:
            attrs = overrides(r.observing_qmgr, r.kind, attrs, as_utc(r.valid_from))
        rows[r.observing_qmgr].append((r.kind, attrs, as_utc(r.valid_from), as_utc(r.valid_to), r.source_file))
    for r in status:
        if (r.chltype or "CLUSSDR") not in ("CLUSSDR", ""):
            continue
        attrs = {"CHANNEL": r.channel, "CHLTYPE": r.chltype or "CLUSSDR", "STATUS": r.status,
                 "XMITQ": r.xmitq or "", "SUBSTATE": r.substate or ""}
        if overrides is not None:
            attrs = overrides(r.observing_qmgr, "CHSTATUS", attrs, as_utc(r.valid_from))
        rows[r.observing_qmgr].append(("CHSTATUS", attrs, as_utc(r.valid_from), as_utc(r.valid_to), r.source_file))
    return {qm: tl for qm, rs in rows.items() if (tl := timeline_from_history(qm, rs, start, end))}


def _arrow_schema():
    import pyarrow as pa

    types = {"DateType": pa.date32(), "StringType": pa.string(), "TimestampType": pa.timestamp("us", "UTC"),
             "LongType": pa.int64(), "IntegerType": pa.int32(), "BooleanType": pa.bool_()}
    return pa.schema([pa.field(f.name, types[type(f.dataType).__name__], f.nullable) for f in REPLAY_SCHEMA.fields])


def _row_batches(run_date: date, profile: str):
    """(to_batch, out_row): REPLAY_SCHEMA rows from ReplayRows, for the rows built one by one."""
    import pyarrow as pa

    arrow_schema = _arrow_schema()
    names = arrow_schema.names

    def to_batch(rows: list[tuple]) -> "pa.RecordBatch":
        cols = list(zip(*rows)) if rows else [[] for _ in names]
        return pa.RecordBatch.from_arrays([pa.array(c, type=arrow_schema.field(i).type)
                                           for i, c in enumerate(cols)], schema=arrow_schema)

    def out_row(qm: str, r) -> tuple:
        return (run_date, qm, r.msg_id, r.put_time, r.queue, r.target_qmgr, r.bind, r.length, r.qmgr, r.channel,
                r.xmitq, r.path, r.decided_by, r.reallocatable, r.not_reallocatable_reason, r.trace, r.error,
                r.reason_code, r.config_time, r.reallocations, r.final_qmgr, r.final_channel, r.final_xmitq,
                r.held, r.held_from, r.released_at, r.delivered_at, r.hold_state, r.stay_reason, r.stay_detail,
                r.observed_qmgr, r.agrees, profile)

    return to_batch, out_row


def _no_config_row(run_date: date, qm: str, ev: PutEvent, profile: str) -> tuple:
    return (run_date, qm, ev.msg_id, ev.put_time, ev.queue, ev.target_qmgr, ev.bind, ev.length,
            None, None, None, None, None, True, None, f"no configuration captured on {qm}", "NO_CONFIGURATION",
            None, None, 0, None, None, None, False, None, None, None, None, None, None, ev.observed_qmgr, None,
            profile)


def _event(c: dict, i: int) -> PutEvent:
    return PutEvent(c["msg_id"][i], as_utc(c["put_time"][i]), c["queue"][i], c["target_qmgr"][i] or None,
                    c["bind"][i], c["open_handle"][i] or "", c["group_id"][i] or "", bool(c["logical_order"][i]),
                    bool(c["from_cluster_channel"][i]), bool(c["pcf"][i]), int(c["length"][i]),
                    c["observed_qmgr"][i] or None)


def _replay_partitions_reference(timelines: dict[str, list[Snapshot]], run_date: date, end: datetime,
                                 profile: str):
    """The reference path: one PutEvent and one ReplayRow per message (SenderReplay.put). Slow; the fast path
    (:func:`_replay_partitions`) must give the same rows, which a test checks on a generated estate."""
    to_batch, out_row = _row_batches(run_date, profile)

    def run(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        current, rep, out = None, None, []
        for batch in batches:
            c = batch.to_pydict()
            for i in range(batch.num_rows):
                qm = c["sending_qmgr"][i]
                if qm != current:
                    if rep is not None:
                        out.extend(out_row(current, r) for r in rep.finish(end))
                    current = qm
                    tl = timelines.get(qm)
                    rep = SenderReplay(qm, tl, profile) if tl else None
                ev = _event(c, i)
                if rep is None:
                    out.append(_no_config_row(run_date, qm, ev, profile))
                else:
                    out.extend(out_row(qm, r) for r in rep.put(ev))
                if len(out) >= 8192:
                    yield to_batch(out)
                    out = []
        if rep is not None:
            out.extend(out_row(current, r) for r in rep.finish(end))
        if out:
            yield to_batch(out)

    return run


def _replay_partitions(timelines: dict[str, list[Snapshot]], run_date: date, end: datetime, profile: str):
    """The fast path: columns in, columns out. Per message only the routing decision runs in Python
    (SenderReplay.put_batch gives each message the index of its result); the output columns are the input
    columns passed through plus the results' columns taken by that index. Messages that wait on a transmission
    queue come out later as rows, as in the reference path."""
    import itertools

    import pyarrow as pa
    import pyarrow.compute as pc

    to_batch, out_row = _row_batches(run_date, profile)
    schema = _arrow_schema()
    ts = pa.timestamp("us", "UTC")

    def blank(s: "pa.Array") -> "pa.Array":  # "" -> null, as the reference path's `or None`
        return pc.if_else(pc.equal(s, ""), pa.scalar(None, pa.string()), s)

    def outcome_columns(rep: SenderReplay) -> dict[str, "pa.Array"]:
        cols: dict[str, list] = {k: [] for k in ("qmgr", "channel", "xmitq", "path", "decided_by", "reallocatable",
                                                 "not_reallocatable_reason", "trace", "error", "reason_code",
                                                 "config_time", "delivered")}
        for res, config_time in rep.outcomes:
            ok = res.error is None
            cols["qmgr"].append(res.qmgr if ok else None)
            cols["channel"].append(res.channel if ok else None)
            cols["xmitq"].append(res.xmitq if ok else None)
            cols["path"].append(res.path if ok else None)
            cols["decided_by"].append(res.decided_by if ok else None)
            cols["reallocatable"].append(res.reallocatable if ok else True)
            cols["not_reallocatable_reason"].append(res.not_reallocatable_reason if ok else None)
            cols["trace"].append(res.summary if ok else res.detail)
            cols["error"].append(None if ok else res.error)
            cols["reason_code"].append(None if ok else res.reason)
            cols["config_time"].append(config_time)
            cols["delivered"].append(ok)
        return {k: pa.array(v, type=pa.bool_() if k == "delivered" else schema.field(k).type)
                for k, v in cols.items()}

    def segment(qm: str, rep: SenderReplay, sub: "pa.RecordBatch", cache: dict) -> Iterator["pa.RecordBatch"]:
        put_time = sub.column("put_time").cast(ts)
        targets, observed = blank(sub.column("target_qmgr")), blank(sub.column("observed_qmgr"))
        columns = None

        def event(i: int) -> PutEvent:  # only for the few messages that wait: their rows are built one by one
            nonlocal columns
            if columns is None:
                columns = sub.to_pydict()
            return _event(columns, i)

        codes, rows = rep.put_batch(
            put_time.cast(pa.int64()).to_pylist(), sub.column("queue").to_pylist(), targets.to_pylist(),
            sub.column("bind").to_pylist(), pc.fill_null(sub.column("open_handle"), "").to_pylist(),
            pc.fill_null(sub.column("group_id"), "").to_pylist(),
            pc.fill_null(sub.column("logical_order"), False).to_pylist(),
            pc.fill_null(sub.column("from_cluster_channel"), False).to_pylist(),
            pc.fill_null(sub.column("pcf"), False).to_pylist(), sub.column("length").to_pylist(), event)
        if rows:
            yield to_batch([out_row(qm, r) for r in rows])
        idx = pa.array(codes, pa.int32())
        keep = None
        if -1 in codes:
            keep = pc.greater_equal(idx, 0)
            idx = idx.filter(keep)
        n = len(idx)
        if not n:
            return
        if cache.get("n") != len(rep.outcomes):
            cache.update(outcome_columns(rep), n=len(rep.outcomes))

        def col(a: "pa.Array") -> "pa.Array":
            return a.filter(keep) if keep is not None else a

        def taken(name: str) -> "pa.Array":
            return cache[name].take(idx)

        put_time, observed = col(put_time), col(observed)
        final_qmgr = taken("qmgr")
        none = {t: pa.nulls(n, t) for t in (pa.string(), ts)}
        out = {
            "run_date": pa.repeat(pa.scalar(run_date, pa.date32()), n),
            "sending_qmgr": col(sub.column("sending_qmgr")), "msg_id": col(sub.column("msg_id")),
            "put_time": put_time, "queue": col(sub.column("queue")), "target_qmgr": col(targets),
            "bind": col(sub.column("bind")), "length": col(sub.column("length")).cast(pa.int64()),
            **{k: taken(k) for k in ("qmgr", "channel", "xmitq", "path", "decided_by", "reallocatable",
                                     "not_reallocatable_reason", "trace", "error", "reason_code", "config_time")},
            "reallocations": pa.repeat(pa.scalar(0, pa.int32()), n),
            "final_qmgr": final_qmgr, "final_channel": taken("channel"), "final_xmitq": taken("xmitq"),
            "held": pa.repeat(pa.scalar(False), n), "held_from": none[ts], "released_at": none[ts],
            "delivered_at": pc.if_else(taken("delivered"), put_time, pa.scalar(None, ts)),
            "hold_state": none[pa.string()], "stay_reason": none[pa.string()], "stay_detail": none[pa.string()],
            "observed_qmgr": observed,
            "agrees": pc.if_else(pc.is_null(observed), pa.scalar(None, pa.bool_()),
                                 pc.fill_null(pc.equal(observed, final_qmgr), False)),
            "profile": pa.repeat(pa.scalar(profile), n),
        }
        yield pa.RecordBatch.from_arrays([out[f.name] for f in schema], schema=schema)

    def run(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        current, rep, cache = None, None, {}
        for batch in batches:
            pos = 0
            for qm, group in itertools.groupby(batch.column("sending_qmgr").to_pylist()):
                n = sum(1 for _ in group)
                sub = batch.slice(pos, n)
                pos += n
                if qm != current:
                    if rep is not None:
                        yield to_batch([out_row(current, r) for r in rep.finish(end)])
                    current, cache = qm, {}
                    tl = timelines.get(qm)
                    rep = SenderReplay(qm, tl, profile) if tl else None
                if rep is None:
                    c = sub.to_pydict()
                    yield to_batch([_no_config_row(run_date, qm, _event(c, i), profile) for i in range(n)])
                else:
                    yield from segment(qm, rep, sub, cache)
        if rep is not None:
            yield to_batch([out_row(current, r) for r in rep.finish(end)])

    return run


def replay_messages(spark: SparkSession, config: PipelineConfig, run_date: str, profile: str = "default",
                    timelines: dict[str, list[Snapshot]] | None = None,
                    messages: DataFrame | None = None, reference: bool = False) -> DataFrame:
    """Every message event of ``run_date`` replayed (REPLAY_SCHEMA), one row per message.

    ``reference``: take the reference path (a PutEvent and a ReplayRow per message) instead of the fast one."""
    start, end = day_bounds(run_date)
    if timelines is None:
        timelines = load_timelines(spark, config, run_date)
    if messages is None:
        messages = (spark.read.format("delta").load(table_path(config, "silver.message_events"))
                    .where(F.col("run_date") == F.lit(run_date).cast("date")))
    cols = ["sending_qmgr", "msg_id", "put_time", "queue", "target_qmgr", "bind", "open_handle", "group_id",
            "logical_order", "from_cluster_channel", "pcf", "length", "observed_qmgr", "source_file", "position"]
    parts = max(1, min(config.shuffle_partitions, len(timelines) or 1))
    ordered = (messages.select(*cols)
               .repartition(parts, "sending_qmgr")
               .sortWithinPartitions("sending_qmgr", "put_time", "source_file", "position"))
    bc = spark.sparkContext.broadcast(timelines)
    day = date.fromisoformat(run_date)

    partitions = _replay_partitions_reference if reference else _replay_partitions

    def fn(batches):
        return partitions(bc.value, day, end, profile)(batches)

    return ordered.mapInArrow(fn, REPLAY_SCHEMA)
