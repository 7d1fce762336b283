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
from typing import Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, DateType, IntegerType, LongType, StringType, StructField, StructType,
                               TimestampType)

from clwl.replay import PutEvent, SenderReplay, Snapshot, timeline_from_history
from spark.config import PipelineConfig
from spark.tables import path as table_path

UTC = timezone.utc

# Everything the replay knows about a message; gold routing_replay and stuck_messages select from it.
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

ROUTING_REPLAY_COLUMNS = [
    "run_date", "sending_qmgr", "msg_id", "put_time", "queue", "target_qmgr", "bind", "length", "qmgr", "channel",
    "xmitq", "path", "decided_by", "reallocatable", "not_reallocatable_reason", "trace", "error", "reason_code",
    "config_time", "reallocations", "final_qmgr", "final_channel", "held", "observed_qmgr", "agrees", "profile",
]


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


def _replay_partitions(timelines: dict[str, list[Snapshot]], run_date: date, end: datetime, profile: str):
    import pyarrow as pa

    arrow_schema = pa.schema([
        pa.field(f.name, {"DateType": pa.date32(), "StringType": pa.string(), "TimestampType": pa.timestamp("us", "UTC"),
                          "LongType": pa.int64(), "IntegerType": pa.int32(), "BooleanType": pa.bool_()}[
            type(f.dataType).__name__], f.nullable) for f in REPLAY_SCHEMA.fields])
    names = [f.name for f in REPLAY_SCHEMA.fields]

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

    def run(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        current, rep, out = None, None, []
        no_config: list = []
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
                ev = PutEvent(c["msg_id"][i], as_utc(c["put_time"][i]), c["queue"][i], c["target_qmgr"][i] or None,
                              c["bind"][i], c["open_handle"][i] or "", c["group_id"][i] or "",
                              bool(c["logical_order"][i]), bool(c["from_cluster_channel"][i]), bool(c["pcf"][i]),
                              int(c["length"][i]), c["observed_qmgr"][i] or None)
                if rep is None:
                    no_config.append(ev)
                    out.append((run_date, qm, ev.msg_id, ev.put_time, ev.queue, ev.target_qmgr, ev.bind, ev.length,
                                None, None, None, None, None, True, None,
                                f"no configuration captured on {qm}", "NO_CONFIGURATION", None, None, 0, None,
                                None, None, False, None, None, None, None, None, None, ev.observed_qmgr, None,
                                profile))
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


def replay_messages(spark: SparkSession, config: PipelineConfig, run_date: str, profile: str = "default",
                    timelines: dict[str, list[Snapshot]] | None = None,
                    messages: DataFrame | None = None) -> DataFrame:
    """Every message event of ``run_date`` replayed (REPLAY_SCHEMA), one row per message."""
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

    def fn(batches):
        return _replay_partitions(bc.value, day, end, profile)(batches)

    return ordered.mapInArrow(fn, REPLAY_SCHEMA)
