"""Replay every message of a run date through the CLWL engine, per sending queue manager, in Spark.

Layout: one Spark task per sending queue manager (the routing state is per sender). silver.message_events is
partitioned by run date and sender, so the task reads exactly its sender's files (their list comes from the
Delta log, at one table version), sorts them into put order and streams them through
``clwl.engine.replay.SenderReplay`` with ``mapInArrow``, the routing state carried across Arrow batches (a per-key
state machine: much faster than groupBy().applyInPandas). The output goes straight to the Delta write. This
replaced `repartition` by sender + `sortWithinPartitions` + `mapInArrow`, which gave the same rows in the same
order but spent more CPU in the JVM's read, shuffle, sort and Arrow conversion than in the routing itself
(BENCHMARKS.md). The configuration timelines (small: a few rows per object and capture) are built once on the
driver from silver history and shipped in the tasks' function (DataFrame functions only, no RDD: the same code
runs attached to a Spark Connect server). Reading the inputs needs no Spark: clwl/lake/silver.py (the timelines, each
sender's files and its batches in put order), which `clwl explain` and the report use too.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Collection, Iterable, Iterator, NamedTuple, Optional

from pyspark.sql import DataFrame, SparkSession

from clwl.analyses.observed import ObservedMessage, timing_agreement
from clwl.days import RunDate, as_utc, day_bounds  # noqa: F401 - as_utc: tests take it from here
from clwl.engine.replay import PutEvent, SenderReplay, Snapshot
from clwl.lake import silver
from clwl.lake.silver import (  # noqa: F401 - INPUT_COLUMNS, PUT_ORDER, timelines_from_rows: this module's readers' names
    BATCH_ROWS,
    INPUT_COLUMNS,
    PUT_ORDER,
    SenderInput,
    sender_batches,
    timelines_from_rows,
)
from clwl.lake.silver import put_event as _event
from spark.config import PipelineConfig
from spark.tables import TABLES

if TYPE_CHECKING:
    import pyarrow as pa

# Everything the replay knows about a message: gold routing_replay (stuck_messages and the distribution are
# computed from it). Written with the table's Delta statistics columns (spark/tables.py says why those).
ROUTING_REPLAY = TABLES["gold.routing_replay"]
REPLAY_SCHEMA = ROUTING_REPLAY.schema
ROUTING_REPLAY_OPTIONS = {"delta.dataSkippingStatsColumns": ",".join(ROUTING_REPLAY.stats_columns)}
#: The columns the channel agents' trace fills (:func:`with_timing`); null in every row the replay builds.
TIMING_COLUMNS = ("observed_left_at", "observed_arrived_at", "observed_arrived_qmgr", "timing_agrees", "timing_cause",
                  "timing_note")


def load_timelines(config: PipelineConfig, run_date: str, overrides=None) -> dict[str, list[Snapshot]]:
    """:func:`clwl.lake.silver.load_timelines` of the configuration's lake: built once on the driver, shipped to the tasks."""
    return silver.load_timelines(config.lake, run_date, overrides)


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
            build = builders[qm] = ROUTING_REPLAY.row_from(run_date=run_date, sending_qmgr=qm, profile=profile,
                                                           **dict.fromkeys(TIMING_COLUMNS))
        return build(r)

    return to_batch, out_row


def _no_config_row(run_date: date, qm: str, ev: PutEvent, profile: str) -> tuple:
    columns = dict.fromkeys(ROUTING_REPLAY.columns)  # null unless said below
    columns.update(run_date=run_date, sending_qmgr=qm, msg_id=ev.msg_id, put_time=ev.put_time, queue=ev.queue,
                   target_qmgr=ev.target_qmgr, bind=ev.bind, length=ev.length,
                   trace=f"no configuration captured on {qm}", error="NO_CONFIGURATION", reallocations=0,
                   held=False, observed_qmgr=ev.observed_qmgr, observed_xmitq=ev.observed_xmitq, profile=profile)
    return ROUTING_REPLAY.row(**columns)


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
        # The replay loop's columns and its waiting messages' events as the in-process replay takes them (one
        # conversion, clwl.lake.silver), so the pipeline and `clwl explain` route the same inputs.
        codes, rows = rep.put_batch(silver.put_columns(sub), silver.batch_event(sub))
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
            **{c: pa.nulls(n, schema.field(c).type) for c in TIMING_COLUMNS},
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


def with_timing(batch: "pa.RecordBatch", observed: dict[str, ObservedMessage]) -> "pa.RecordBatch":
    """The replay's rows with the channel agents' trace: for each message the trace saw (by message id; few next
    to the puts), when it left and arrived and :func:`clwl.analyses.observed.timing_agreement`'s verdict, the one rule
    (never restated as Spark columns). Rows it did not see keep their nulls; a batch with none is returned as
    it is. The lookup is a dict's, per row of the batch (a value set of the day's traced ids built per batch cost
    more than the replay itself at 1M traced messages); only the matched rows become Python objects."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not observed or batch.num_rows == 0:
        return batch
    get = observed.get
    hits = [(i, obs) for i, obs in enumerate(map(get, pc.utf8_upper(batch.column("msg_id")).to_pylist()))
            if obs is not None]
    if not hits:
        return batch
    rows = batch.take(pa.array([i for i, _ in hits], pa.int64())).select(
        ["sending_qmgr", "put_time", "error", "held", "held_from", "released_at"]).to_pylist()
    columns = {c: [None] * batch.num_rows for c in TIMING_COLUMNS}
    for (i, obs), row in zip(hits, rows):
        verdict = timing_agreement(row, obs)
        if verdict is None:  # another queue manager's row of the id, or a put that failed
            continue
        columns["observed_left_at"][i] = obs.left_xmitq_at
        columns["observed_arrived_at"][i] = obs.arrived_at
        columns["observed_arrived_qmgr"][i] = obs.arrived_qmgr
        columns["timing_agrees"][i] = verdict.agrees
        columns["timing_cause"][i] = verdict.cause
        columns["timing_note"][i] = verdict.note
    schema = batch.schema
    arrays = [pa.array(columns[f.name], f.type) if f.name in columns else batch.column(j)
              for j, f in enumerate(schema)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def sender_inputs(config: PipelineConfig, run_date: str, senders: Optional[Iterable[str]] = None
                  ) -> tuple[int, list[SenderInput]]:
    """:func:`clwl.lake.silver.sender_inputs` of the configuration's lake: each sender's files, from the Delta log."""
    return silver.sender_inputs(config.lake, run_date, senders)


class ReplayScope(NamedTuple):
    """What narrows a replay (a what-if run's senders or cluster): the sending queue managers, the queues; None,
    all of them."""

    senders: Optional[Iterable[str]] = None
    queues: Optional[Collection[str]] = None


def replay_messages(spark: SparkSession, config: PipelineConfig, run_date: str, profile: str = "default",
                    timelines: dict[str, list[Snapshot]] | None = None, scope: Optional[ReplayScope] = None,
                    reference: bool = False, observed: dict[str, ObservedMessage] | None = None) -> DataFrame:
    """Every message event of ``run_date`` replayed (REPLAY_SCHEMA), one row per message.

    One Spark task per sending queue manager (the routing state is per sender): it reads that sender's files
    of silver.message_events, in put order, and streams them through the replay loop (mapInArrow; the state
    is carried across Arrow batches of BATCH_ROWS). ``scope``: narrowed to some senders / queues.
    ``reference``: take the reference path (a PutEvent and a ReplayRow per message) instead of the fast one.
    ``observed``: the day's channel agents' timeline (:func:`clwl.analyses.observed_columns.observed_day`, computed once on the
    driver and shipped with the timelines): the rows it saw get the timing columns (:func:`with_timing`)."""
    start, end = day_bounds(run_date)
    if timelines is None:
        timelines = load_timelines(config, run_date)
    senders, queues = scope or ReplayScope()
    _, inputs = sender_inputs(config, run_date, senders)
    if not inputs:
        return spark.createDataFrame([], REPLAY_SCHEMA)
    queues = sorted(queues) if queues is not None else None
    # Small driver-side inputs, in the task function's closure (no broadcast: a Spark Connect session has no
    # SparkContext; a classic one ships a large closure as a broadcast by itself).
    shipped = (timelines, {s.sending_qmgr: s for s in inputs}, observed or {})
    order = [s.sending_qmgr for s in inputs]
    day = RunDate(run_date).day
    partitions = _replay_partitions_reference if reference else _replay_partitions

    def fn(batches):
        timelines, by_sender, seen = shipped
        for batch in batches:
            for qm in (order[i] for i in batch.column("id").to_pylist()):
                for out in partitions(timelines, day, end, profile)(sender_batches(by_sender[qm], queues, BATCH_ROWS)):
                    yield with_timing(out, seen)

    # One task per sender: spark.range with as many partitions as rows puts one id (an index into order) in each.
    return spark.range(0, len(inputs), 1, len(inputs)).mapInArrow(fn, REPLAY_SCHEMA)
