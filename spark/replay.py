"""Replay every message of a run date through the CLWL engine, per sending queue manager, in Spark.

Layout: one Spark task per sending queue manager (the routing state is per sender). silver.message_events is
partitioned by run date and sender, so the task reads exactly its sender's files (their list comes from the
Delta log, at one table version), sorts them into put order and streams them through
``clwl.replay.SenderReplay`` with ``mapInArrow``, the routing state carried across Arrow batches (a per-key
state machine: much faster than groupBy().applyInPandas). The output goes straight to the Delta write. This
replaced `repartition` by sender + `sortWithinPartitions` + `mapInArrow`, which gave the same rows in the same
order but spent more CPU in the JVM's read, shuffle, sort and Arrow conversion than in the routing itself
(BENCHMARKS.md). The configuration timelines (small: a few rows per object and capture) are built once on the
driver from silver history and broadcast.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Collection, Iterable, Iterator, Optional
from urllib.parse import unquote

from pyspark.sql import DataFrame, SparkSession

from clwl.days import as_utc, day_bounds
from clwl.replay import PutEvent, SenderReplay, Snapshot, timeline_from_history
from spark.config import PipelineConfig
from spark.tables import TABLES, check_partitioning
from spark.tables import path as table_path

if TYPE_CHECKING:
    import pyarrow as pa

# Everything the replay knows about a message: gold routing_replay (stuck_messages and the distribution are
# computed from it). Written with the table's Delta statistics columns (spark/tables.py says why those).
ROUTING_REPLAY = TABLES["gold.routing_replay"]
REPLAY_SCHEMA = ROUTING_REPLAY.schema
ROUTING_REPLAY_OPTIONS = {"delta.dataSkippingStatsColumns": ",".join(ROUTING_REPLAY.stats_columns)}


def load_timelines(config: PipelineConfig, run_date: str, overrides=None) -> dict[str, list[Snapshot]]:
    """The configuration timeline of every observing queue manager for ``run_date``, from silver history.

    ``overrides`` (optional) is a callable (qmgr, kind, attrs, valid_from) -> attrs used by what-if runs.
    The history tables are small (a few rows per object and capture), so they are read on the driver without
    the JVM: two Spark jobs cost 0.6 s warm and several seconds in a fresh session.
    """
    start, end = day_bounds(run_date)
    hist = _history_rows(config, "silver.config_history", ("observing_qmgr", "kind", "attrs", "valid_from",
                                                           "valid_to", "source_file"), end)
    status = _history_rows(config, "silver.channel_status", ("observing_qmgr", "channel", "chltype", "status",
                                                             "xmitq", "substate", "valid_from", "valid_to",
                                                             "source_file"), end)
    return timelines_from_rows(hist, status, start, end, overrides)


def timelines_from_rows(hist: Iterable[dict], status: Iterable[dict], start: datetime, end: datetime,
                        overrides=None) -> dict[str, list[Snapshot]]:
    """:func:`load_timelines` once the rows are read: ``hist`` rows of silver.config_history and ``status`` rows
    of silver.channel_status (as dicts of their columns), each record's attributes through ``overrides``, then
    each queue manager's snapshots. Pure Python: what a what-if's overrides become in the replay."""
    rows: dict[str, list] = defaultdict(list)
    for r in hist:
        if r["kind"] == "CHSTATUS":
            continue
        attrs = dict(r["attrs"] or ())
        if overrides is not None:
            attrs = overrides(r["observing_qmgr"], r["kind"], attrs, as_utc(r["valid_from"]))
        rows[r["observing_qmgr"]].append((r["kind"], attrs, as_utc(r["valid_from"]), as_utc(r["valid_to"]),
                                          r["source_file"]))
    for r in status:
        if (r["chltype"] or "CLUSSDR") not in ("CLUSSDR", ""):
            continue
        attrs = {"CHANNEL": r["channel"], "CHLTYPE": r["chltype"] or "CLUSSDR", "STATUS": r["status"],
                 "XMITQ": r["xmitq"] or "", "SUBSTATE": r["substate"] or ""}
        if overrides is not None:
            attrs = overrides(r["observing_qmgr"], "CHSTATUS", attrs, as_utc(r["valid_from"]))
        rows[r["observing_qmgr"]].append(("CHSTATUS", attrs, as_utc(r["valid_from"]), as_utc(r["valid_to"]),
                                          r["source_file"]))
    return {qm: tl for qm, rs in rows.items() if (tl := timeline_from_history(qm, rs, start, end))}


def _history_rows(config: PipelineConfig, key: str, columns: tuple[str, ...], end: datetime) -> list[dict]:
    """Rows of a silver history table that begin before ``end``, in a fixed order (whatever order the files
    come in, the same rows give the same timeline)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from clwl.lake import open_delta

    tab = open_delta(table_path(config, key)).to_pyarrow_table(columns=list(columns))
    tab = tab.filter(pc.less(tab.column("valid_from"), pa.scalar(end, tab.schema.field("valid_from").type)))
    rows = tab.to_pylist()
    rows.sort(key=lambda r: tuple("" if r[c] is None else str(r[c]) for c in columns))
    return rows


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

    builders: dict[str, object] = {}

    def out_row(qm: str, r) -> tuple:
        build = builders.get(qm)
        if build is None:  # one per sender: the constant columns, the rest from the ReplayRow by column name
            build = builders[qm] = ROUTING_REPLAY.row_from(run_date=run_date, sending_qmgr=qm, profile=profile)
        return build(r)

    return to_batch, out_row


def _no_config_row(run_date: date, qm: str, ev: PutEvent, profile: str) -> tuple:
    columns = dict.fromkeys(ROUTING_REPLAY.columns)  # null unless said below
    columns.update(run_date=run_date, sending_qmgr=qm, msg_id=ev.msg_id, put_time=ev.put_time, queue=ev.queue,
                   target_qmgr=ev.target_qmgr, bind=ev.bind, length=ev.length,
                   trace=f"no configuration captured on {qm}", error="NO_CONFIGURATION", reallocations=0,
                   held=False, observed_qmgr=ev.observed_qmgr, observed_xmitq=ev.observed_xmitq, profile=profile)
    return ROUTING_REPLAY.row(**columns)


def _event(c: dict, i: int) -> PutEvent:
    return PutEvent(c["msg_id"][i], as_utc(c["put_time"][i]), c["queue"][i], c["target_qmgr"][i] or None,
                    c["bind"][i], c["open_handle"][i] or "", c["group_id"][i] or "", bool(c["logical_order"][i]),
                    bool(c["from_cluster_channel"][i]), bool(c["pcf"][i]), int(c["length"][i]),
                    c["observed_qmgr"][i] or None, c["observed_xmitq"][i] or None,
                    c["source"][i] == OBSERVED_AT_PUT)


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
            cols["reallocatable"].append(res.reallocatable if ok else None)
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

        def event(i: int) -> PutEvent:  # only for the few messages that wait: their rows are built one by one
            return _event(sub.slice(i, 1).to_pydict(), 0)

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

        put_time, observed, observed_xmitq = col(put_time), col(observed), col(blank(sub.column("observed_xmitq")))
        final_qmgr, final_xmitq = taken("qmgr"), taken("xmitq")
        # agrees (ReplayRow.agrees): the observed queue manager is the final one, and so is the observed
        # transmission queue when both are known; null without an observed queue manager.
        same_xmitq = pc.fill_null(pc.equal(observed_xmitq, final_xmitq), True)
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
            "observed_qmgr": observed, "observed_xmitq": observed_xmitq,
            "agrees": pc.if_else(pc.is_null(observed), pa.scalar(None, pa.bool_()),
                                 pc.and_(pc.fill_null(pc.equal(observed, final_qmgr), False), same_xmitq)),
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


#: The columns of silver.message_events that the replay reads, in the order the replay loop takes them.
INPUT_COLUMNS = ("sending_qmgr", "msg_id", "put_time", "queue", "target_qmgr", "bind", "open_handle", "group_id",
                 "logical_order", "from_cluster_channel", "pcf", "length", "observed_qmgr", "observed_xmitq",
                 "source", "source_file", "position")
#: silver.message_events.source of a put whose observed answer is MQ's choice at the put (the activity trace), not
#: where the message arrived: it is compared with the replay's first destination, not its final one.
OBSERVED_AT_PUT = "activity_trace"
#: Put order within a sending queue manager (source file and position break ties in put time).
PUT_ORDER = ("put_time", "source_file", "position")
#: Messages per Arrow batch handed to the replay loop (64k against 10k: 12% less Python CPU at 1M messages).
BATCH_ROWS = 65_536


@dataclass(frozen=True)
class SenderInput:
    """One sending queue manager's share of a run date in silver.message_events: its data files (absolute
    paths, at one table version) and how many messages they hold."""

    sending_qmgr: str
    messages: int
    files: tuple[str, ...]


def sender_inputs(config: PipelineConfig, run_date: str, senders: Optional[Iterable[str]] = None
                  ) -> tuple[int, list[SenderInput]]:
    """The Delta version of silver.message_events and ``run_date``'s files per sending queue manager, largest
    first. From the Delta log alone (the table is partitioned by run date and sender): no data is read."""
    import pyarrow as pa

    from clwl.lake import open_delta

    root = table_path(config, "silver.message_events")
    table = open_delta(root)  # its log checked before check_partitioning's deltalake reads it too
    check_partitioning(TABLES["silver.message_events"], root)
    actions = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    day = date.fromisoformat(run_date)
    wanted = set(senders) if senders else None
    files: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for rel, n, d, qm in zip(actions["path"], actions["num_records"], actions["partition.run_date"],
                             actions["partition.sending_qmgr"]):
        if d != day or (wanted is not None and qm not in wanted):
            continue
        # Add-action paths are relative URIs: partition values are percent-encoded in them.
        files[qm].append(os.path.join(root, unquote(rel)))
        counts[qm] += int(n or 0)
    inputs = [SenderInput(qm, counts[qm], tuple(sorted(fs))) for qm, fs in files.items()]
    # Largest first: Spark starts the tasks in this order, so the longest replays do not start last.
    inputs.sort(key=lambda s: (-s.messages, s.sending_qmgr))
    return table.version(), inputs


def sender_batches(sender: SenderInput, queues: Optional[Collection[str]] = None,
                   batch_rows: int = BATCH_ROWS) -> Iterator["pa.RecordBatch"]:
    """One sending queue manager's messages, in put order, as Arrow batches of INPUT_COLUMNS typed as Spark
    would hand them to mapInArrow. Holds the sender's day of these columns in memory (about 150 bytes a
    message) to sort it; the files are read directly, so no shuffle brings a sender's messages together."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    dataset = ds.dataset(list(sender.files), format="parquet")
    # sending_qmgr is a partition column (in the path); a lake from before the source column has none (one
    # rebuild writes a sender's day, so its files agree on it)
    columns = [c for c in INPUT_COLUMNS if c != "sending_qmgr" and (c != "source" or c in dataset.schema.names)]
    where = ds.field("queue").isin(list(queues)) if queues is not None else None
    tab = dataset.to_table(columns=columns, filter=where)
    if "source" not in columns:  # in its place: the batches have INPUT_COLUMNS in order
        tab = tab.add_column(INPUT_COLUMNS.index("source") - 1, "source", pa.nulls(tab.num_rows, pa.string()))
    tab = tab.sort_by([(c, "ascending") for c in PUT_ORDER])
    # Spark's Parquet timestamps (INT96) read as naive nanoseconds; the replay takes UTC microseconds.
    tab = tab.set_column(tab.schema.get_field_index("put_time"), "put_time",
                         tab.column("put_time").cast(pa.timestamp("us", "UTC")))
    tab = tab.add_column(0, "sending_qmgr", pa.repeat(pa.scalar(sender.sending_qmgr, pa.string()), tab.num_rows))
    yield from tab.to_batches(max_chunksize=batch_rows)


def replay_messages(spark: SparkSession, config: PipelineConfig, run_date: str, profile: str = "default",
                    timelines: dict[str, list[Snapshot]] | None = None, senders: Optional[Iterable[str]] = None,
                    queues: Optional[Collection[str]] = None, reference: bool = False,
                    batch_rows: int = BATCH_ROWS) -> DataFrame:
    """Every message event of ``run_date`` replayed (REPLAY_SCHEMA), one row per message.

    One Spark task per sending queue manager (the routing state is per sender): it reads that sender's files
    of silver.message_events, in put order, and streams them through the replay loop (mapInArrow; the state
    is carried across Arrow batches). ``senders`` / ``queues`` narrow the replay to some senders / queues.
    ``reference``: take the reference path (a PutEvent and a ReplayRow per message) instead of the fast one."""
    start, end = day_bounds(run_date)
    if timelines is None:
        timelines = load_timelines(config, run_date)
    _, inputs = sender_inputs(config, run_date, senders)
    if not inputs:
        return spark.createDataFrame([], REPLAY_SCHEMA)
    queues = sorted(queues) if queues is not None else None
    bc = spark.sparkContext.broadcast((timelines, {s.sending_qmgr: s for s in inputs}))
    day = date.fromisoformat(run_date)
    partitions = _replay_partitions_reference if reference else _replay_partitions

    def fn(batches):
        timelines, by_sender = bc.value
        for batch in batches:
            for qm in batch.column("sending_qmgr").to_pylist():
                yield from partitions(timelines, day, end, profile)(sender_batches(by_sender[qm], queues, batch_rows))

    work = spark.sparkContext.parallelize([(s.sending_qmgr,) for s in inputs], len(inputs))
    return spark.createDataFrame(work, "sending_qmgr string").mapInArrow(fn, REPLAY_SCHEMA)
