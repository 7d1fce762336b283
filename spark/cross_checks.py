"""The quality gate's checks in Python (:class:`~spark.quality.ExtraCheck`), recorded beside a suite's GX results
in the same outcome: every row is of the run date, and the checks a suite cannot express on one table (counts
reconciling with silver, expected totals against the replay, the run summary against the gold tables); with the
silver tables they read. :func:`default_cross_checks` is what publish runs besides the suites.
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from clwl.days import RunDate
from clwl.lake.door import Lake
from spark.quality import FAILURE_EXAMPLES, CheckResult, ExtraCheck, count_where, local_copy_of, row_count
from spark.tables import on_date, read_table

#: silver tables that feed gold and have a suite
SILVER_TABLES = ("message_events", "quarantine", "config_history")
_BROADCAST_KEYS = 1_000_000  # check_keys_in broadcasts the checked table's keys up to this many


# ------------------------------------------------------------------------------------------------ extra checks


def check_run_date(run_date: dt.date | str) -> ExtraCheck:
    """Every row belongs to the run date being published (publish replaces only that partition)."""
    day = _as_date(run_date)
    bad_rows = f"run_date IS NULL OR run_date <> DATE'{day.isoformat()}'"

    def run(df: DataFrame) -> CheckResult:
        n = count_where(df, bad_rows)
        if not n:
            return CheckResult(True, observed=0)
        rows = df.where(bad_rows).groupBy("run_date").count().limit(FAILURE_EXAMPLES).collect()
        return CheckResult(False, f"{n} rows not of run date {day} (e.g. {[str(r.run_date) for r in rows]})", n)

    def local(pdf) -> CheckResult | None:
        if "run_date" not in pdf.columns or not all(v is None or type(v) is dt.date for v in pdf["run_date"]):
            return None  # not a date column: Spark's comparison (with its casts) decides
        bad = pdf["run_date"][[v is None or v != day for v in pdf["run_date"]]]
        if bad.empty:
            return CheckResult(True, observed=0)
        n = len(bad)
        return CheckResult(False, f"{n} rows not of run date {day} (e.g. {[str(v) for v in dict.fromkeys(bad)][:FAILURE_EXAMPLES]})",
                           n)

    return ExtraCheck("run_date_is_the_run_date", run, "run_date", f"every row has run_date = {day}", local,
                      bad_rows)


def check_row_count(other: DataFrame | None, other_name: str) -> ExtraCheck:
    """The table has as many rows as `other` (None: the other table is missing, which fails the check)."""

    def run(df: DataFrame) -> CheckResult:
        if other is None:
            return CheckResult(False, f"{other_name} not found: cannot reconcile the row count")
        mine, theirs = row_count(df), row_count(other)
        return CheckResult(mine == theirs, "" if mine == theirs else f"{mine} rows, {other_name} has {theirs}",
                           {"rows": mine, other_name: theirs})

    return ExtraCheck(f"row_count_equals_{other_name.replace('/', '_')}", run, None,
                      f"row count = rows of {other_name} for the run date")


def check_keys_in(other: DataFrame, keys: Sequence[str], other_name: str) -> ExtraCheck:
    """Every key of the table is a key of `other` (e.g. every stuck message is a replayed message)."""

    def run(df: DataFrame) -> CheckResult:
        wanted = df.select(*keys).distinct()
        known = other.select(*keys)
        if wanted.count() <= _BROADCAST_KEYS:
            # The usual case (a few thousand stuck messages against millions replayed): look the keys up in one
            # pass over `other` with the keys broadcast. A plain anti join cannot broadcast its left side, and
            # shuffled all 10M replayed keys (15 s at 10M messages).
            known = known.join(F.broadcast(wanted), list(keys), "left_semi")
        missing = wanted.join(known.distinct(), list(keys), "left_anti")
        rows = missing.limit(FAILURE_EXAMPLES).collect()
        if not rows:
            return CheckResult(True, observed=0)
        n = missing.count()
        return CheckResult(False, f"{n} keys not in {other_name}, e.g. {[tuple(r) for r in rows]}", n)

    def local(pdf) -> CheckResult | None:
        theirs = local_copy_of(other)
        if theirs is None or any(pdf[k].isna().any() or theirs[k].isna().any() for k in keys):
            return None  # a null key never joins in Spark, but equals another null in pandas: Spark decides
        known = set(theirs[list(keys)].itertuples(index=False, name=None))
        missing = [k for k in dict.fromkeys(pdf[list(keys)].itertuples(index=False, name=None)) if k not in known]
        if not missing:
            return CheckResult(True, observed=0)
        n = len(missing)
        return CheckResult(False, f"{n} keys not in {other_name}, e.g. {missing[:FAILURE_EXAMPLES]}", n)

    return ExtraCheck(f"keys_in_{other_name.replace('/', '_')}", run, "(" + ", ".join(keys) + ")",
                      f"every ({', '.join(keys)}) is in {other_name}", local)


def check_distribution_totals(replay: DataFrame) -> ExtraCheck:
    """Expected totals against the replay, per (sending_qmgr, queue, interval, source).

    source observed_destination (per sender): the comparison covers the messages whose destination was observed,
    so sum(expected) = routed routing_replay messages of that sender and queue with an observed_qmgr and
    interval_start <= put_time < interval_end, and sum(observed) = sum(expected) (each such message counts once
    on each side).
    source accounting (sending_qmgr '*', all senders): expected counts the messages delivered in the interval to
    the receivers that report accounting, by delivery time (a held message counts when it is released, or not at
    all), which routing_replay alone does not give; the check is the bound sum(expected) <= routed messages of
    the queue put before interval_end.
    source channel_statistics (per sending queue manager and channel, queue '*'): the same kind of bound, over the
    sender's routed messages put before interval_end.
    Routed = error null.
    """

    def run(dist: DataFrame) -> CheckResult:
        totals = dist.groupBy("sending_qmgr", "queue", "interval_start", "interval_end", "source").agg(
            F.sum("expected").alias("expected_total"), F.sum("observed").alias("observed_total")
        )
        routed = replay.where(F.col("error").isNull()).select(
            F.col("sending_qmgr").alias("r_sender"), F.col("queue").alias("r_queue"), "put_time",
            F.col("observed_qmgr").isNotNull().alias("r_observed"),
        )
        keys = ["sending_qmgr", "queue", "interval_start", "interval_end", "source", "expected_total",
                "observed_total"]
        bounds = totals.select(F.explode(F.array("interval_start", "interval_end")).alias("t"))
        if bounds.where(F.unix_micros("t") % 1_000_000 != 0).isEmpty():
            # Interval bounds on whole seconds (amqsmon's always are): the messages can be counted per second
            # first, exactly, which turns the joins and the running count over every replayed message (8.7 s
            # for the distribution's checks at 10M messages) into ones over at most 86,400 rows per queue. For
            # the half-open [start, end) the bucket is the second the message falls in; for "put up to the end"
            # it is the next whole second (a message at 10:00:00.000 counts for an interval ending at 10:00:00).
            from spark.detect import ceil_second, floor_second

            put_time = F.col("put_time")
            observed_per_s = (routed.where("r_observed")
                              .groupBy("r_sender", "r_queue", floor_second(put_time).alias("put_time"))
                              .agg(F.count(F.lit(1)).alias("n")))
            put_per_s = (routed.groupBy("r_sender", "r_queue", ceil_second(put_time).alias("put_time"))
                         .agg(F.count(F.lit(1)).alias("n")))
        else:
            observed_per_s = routed.where("r_observed").withColumn("n", F.lit(1))
            put_per_s = routed.select("r_sender", "r_queue", "put_time", F.lit(1).alias("n"))
        # Equi-joins on the keys, then the range condition: no OR in a join (that would be a nested loop).
        per_sender = totals.where(F.col("source") == "observed_destination").join(
            observed_per_s,
            (F.col("sending_qmgr") == F.col("r_sender")) & (F.col("queue") == F.col("r_queue"))
            & (F.col("put_time") >= F.col("interval_start")) & (F.col("put_time") < F.col("interval_end")),
            "left",
        )
        # Accounting: messages of the queue put up to each interval's end, as a running count over the queue's
        # messages and interval ends in time order (a join on put_time <= interval_end would pair every
        # interval with every earlier message).
        # The count runs per queue for accounting and per sender for channel statistics ("part").
        by_sender = F.col("source") == "channel_statistics"
        marks = totals.where(F.col("source") != "observed_destination").select(
            *keys, F.when(by_sender, F.concat(F.lit("s|"), "sending_qmgr"))
            .otherwise(F.concat(F.lit("q|"), "queue")).alias("part"),
            F.col("interval_end").alias("t"), F.lit(0).cast("long").alias("is_msg"))
        msgs = put_per_s.select(F.concat(F.lit("q|"), "r_queue").alias("part"), F.col("put_time").alias("t"),
                                F.col("n").cast("long").alias("is_msg"))
        if not totals.where(by_sender).isEmpty():
            msgs = msgs.unionByName(put_per_s.select(F.concat(F.lit("s|"), "r_sender").alias("part"),
                                                     F.col("put_time").alias("t"),
                                                     F.col("n").cast("long").alias("is_msg")))
        running = Window.partitionBy("part").orderBy("t", F.desc("is_msg")).rowsBetween(
            Window.unboundedPreceding, Window.currentRow)
        accounting = (marks.unionByName(msgs, allowMissingColumns=True)
                      .withColumn("replayed", F.sum("is_msg").over(running))
                      .where(F.col("is_msg") == 0).select(*keys, "replayed"))
        counted = (per_sender.groupBy(*keys).agg(F.coalesce(F.sum("n"), F.lit(0)).alias("replayed"))
                   .unionByName(accounting))
        exact = F.col("source") == "observed_destination"
        bad = counted.where(
            (exact & ((F.col("expected_total") != F.col("replayed")) | (F.col("observed_total") != F.col("replayed"))))
            | (~exact & (F.col("expected_total") > F.col("replayed")))
        )
        rows = bad.orderBy("queue", "sending_qmgr", "interval_start", "source").limit(FAILURE_EXAMPLES).collect()
        if not rows:
            return CheckResult(True, observed=0)
        return verdict(bad.count(), rows)

    def verdict(n: int, rows) -> CheckResult:
        ex = [f"{r.sending_qmgr}/{r.queue}/{r.source} from {r.interval_start.isoformat()}: expected "
              f"{r.expected_total}, observed {r.observed_total}, "
              + (f"replayed with an observed destination {r.replayed}" if r.source == "observed_destination"
                 else f"replayed before the interval ended {r.replayed}") for r in rows]
        return CheckResult(False, f"{n} intervals where the totals do not reconcile with the replay "
                                  f"({'; '.join(ex)})", {"intervals": n, "examples": ex})

    def local(dist) -> CheckResult | None:
        # The same definition on the pandas copies of both tables (the ~11 Spark jobs of `run` are the joins',
        # the window's and the sort's stages, for a few thousand rows). Spark decides where its nulls would
        # (no join on a null key, a null sum) and where the times are not of one type.
        copy = local_copy_of(replay)
        if copy is None:
            return None
        routed = copy[copy["error"].isna()]
        group = ["sending_qmgr", "queue", "interval_start", "interval_end", "source"]
        if (dist[group + ["expected", "observed"]].isna().any().any()
                or routed[["sending_qmgr", "queue", "put_time"]].isna().any().any()
                or not (dist["interval_start"].dtype == dist["interval_end"].dtype == routed["put_time"].dtype)
                or not all(pd.api.types.is_integer_dtype(dist[c]) for c in ("expected", "observed"))):
            return None
        totals = dist.groupby(group, sort=False).agg(expected_total=("expected", "sum"),
                                                     observed_total=("observed", "sum")).reset_index()
        put = routed["put_time"].astype("int64")
        seen = put[routed["observed_qmgr"].notna()]

        def times(by: list[str], of) -> dict:
            return {k if len(by) > 1 else k[0]: np.sort(v.to_numpy())
                    for k, v in of.groupby([routed.loc[of.index, c] for c in by], sort=False)}

        observed_by, put_by_queue, put_by_sender = (times(["sending_qmgr", "queue"], seen), times(["queue"], put),
                                                    times(["sending_qmgr"], put))
        none = np.empty(0, dtype="int64")
        start, end = totals["interval_start"].astype("int64"), totals["interval_end"].astype("int64")
        replayed = []
        for i, r in enumerate(totals.itertuples(index=False)):
            if r.source == "observed_destination":  # [start, end), destination observed
                t = observed_by.get((r.sending_qmgr, r.queue), none)
                replayed.append(int(np.searchsorted(t, end.iat[i]) - np.searchsorted(t, start.iat[i])))
            else:  # put up to the end: per sender for channel statistics, per queue otherwise
                t = (put_by_sender.get(r.sending_qmgr, none) if r.source == "channel_statistics"
                     else put_by_queue.get(r.queue, none))
                replayed.append(int(np.searchsorted(t, end.iat[i], side="right")))
        totals["replayed"] = replayed
        exact = totals["source"] == "observed_destination"
        bad = totals[(exact & ((totals["expected_total"] != totals["replayed"])
                               | (totals["observed_total"] != totals["replayed"])))
                     | (~exact & (totals["expected_total"] > totals["replayed"]))]
        if bad.empty:
            return CheckResult(True, observed=0)
        first = bad.sort_values(["queue", "sending_qmgr", "interval_start", "source"], kind="stable").head(
            FAILURE_EXAMPLES)
        # as Spark's rows read: its timestamps as naive local datetimes, its numbers as ints
        rows = [SimpleNamespace(sending_qmgr=r.sending_qmgr, queue=r.queue, source=r.source,
                                interval_start=_as_spark_datetime(r.interval_start),
                                expected_total=int(r.expected_total), observed_total=int(r.observed_total),
                                replayed=int(r.replayed)) for r in first.itertuples(index=False)]
        return verdict(int(len(bad)), rows)

    return ExtraCheck("expected_totals_reconcile_with_replay", run, "expected",
                      "observed_destination: sum(expected) = sum(observed) = replayed messages with an observed "
                      "destination in the interval; accounting (per queue) and channel statistics (per sender): "
                      "sum(expected) <= messages put before its end", local)


def _as_spark_datetime(ts) -> dt.datetime:
    """A pandas timestamp as PySpark's collect() gives a TimestampType value: a naive datetime in the local zone."""
    d = ts.to_pydatetime()
    return d.astimezone().replace(tzinfo=None) if d.tzinfo is not None else d


#: The timing columns' rules (issue 29 item 2), per gold table: a SQL condition that holds for a bad row and what
#: the rows must satisfy. Checks here rather than in the suites: a table written before the columns existed (an
#: old lake, a hand-built frame) has none of them and is not held to them.
TIMING_RULES: dict[str, tuple[str, str, str]] = {
    "routing_replay": (
        "timing_agrees",
        "(timing_agrees IS NOT NULL AND observed_left_at IS NULL AND observed_arrived_at IS NULL)"
        " OR (timing_agrees IS NULL AND (timing_cause IS NOT NULL OR timing_note IS NOT NULL))"
        " OR (timing_agrees = false AND timing_cause IS NULL) OR (timing_agrees = true AND timing_cause IS NOT NULL)"
        " OR (timing_agrees IS NOT NULL AND error IS NOT NULL)",
        "timing_agrees is null unless the channel agents' trace saw the message leave or arrive, and for a put "
        "that failed; a timing disagreement names its cause (timing_cause), an agreement none",
    ),
    "stuck_messages": (
        "timing_source",
        "(timing_source IS NOT NULL AND timing_source NOT IN ('channel status', 'xmitq browse', "
        "'channel agent trace')) OR ((timing_source = 'channel agent trace') <> (observed_left_at IS NOT NULL))"
        " OR (observed_left_at IS NOT NULL AND NOT (released_at <=> observed_left_at))",
        "timing_source is channel status, xmitq browse or channel agent trace; where the channel agents' trace saw "
        "the message leave, that is its release",
    ),
}


def check_timing_columns(table: str) -> ExtraCheck:
    """The table's timing columns are consistent (:data:`TIMING_RULES`); passes when it has none of them."""
    column, bad_rows, description = TIMING_RULES[table]

    def run(df: DataFrame) -> CheckResult:
        if column not in df.columns:
            return CheckResult(True, observed=0)
        n = count_where(df, bad_rows)
        if not n:
            return CheckResult(True, observed=0)
        rows = df.where(F.expr(bad_rows)).limit(FAILURE_EXAMPLES).collect()
        return CheckResult(False, f"{n} rows break the rule: {description} (e.g. "
                                  f"{[r['msg_id'] for r in rows]})", n)

    return ExtraCheck(f"{table}_timing_columns", run, column, description, bad_rows=bad_rows)


def timing_counts(replay: DataFrame) -> dict[str, int]:
    """timing_observed / timing_agreed / timing_disagreed as routing_replay's timing_agrees counts them."""
    t = F.col("timing_agrees")
    row = replay.agg(F.count(t).alias("timing_observed"), F.count(F.when(t, 1)).alias("timing_agreed"),
                     F.count(F.when(~t, 1)).alias("timing_disagreed")).collect()[0]
    return {k: int(row[k]) for k in ("timing_observed", "timing_agreed", "timing_disagreed")}


def _timing_counts_local(copy) -> dict[str, int]:
    """timing_counts on routing_replay's pandas copy (timing_agrees: True, False or None/NA)."""
    t = copy["timing_agrees"]
    return {"timing_observed": int(t.notna().sum()), "timing_agreed": int((t == True).sum()),  # noqa: E712
            "timing_disagreed": int((t == False).sum())}  # noqa: E712


def check_run_summary(run_id: str, replay: DataFrame | None, stuck: DataFrame | None,
                      distribution: DataFrame | None) -> ExtraCheck:
    """The run summary row of `run_id` exists, and its counts match the gold tables published with it:
    messages_replayed = routing_replay rows, messages_stuck = stuck_messages rows,
    distribution_unexpected = distribution rows with verdict 'unexpected'; timing_observed, timing_agreed,
    timing_disagreed = routing_replay's timing_agrees not null, true, false (a summary row without them, written
    before they were, is not held to them)."""

    def run(df: DataFrame) -> CheckResult:
        rows = df.where(F.col("run_id") == run_id).collect()
        if len(rows) != 1:
            return CheckResult(False, f"{len(rows)} rows for run_id {run_id!r}, want 1", len(rows))
        return compare(rows[0], "timing_observed" in df.columns, timing_counts)

    def compare(r, has_timing: bool, count_timing) -> CheckResult:
        actual = {}
        if replay is not None:
            actual["messages_replayed"] = row_count(replay)
            if "timing_agrees" in replay.columns and has_timing and r["timing_observed"] is not None:
                actual.update(count_timing(replay))
        if stuck is not None:
            actual["messages_stuck"] = row_count(stuck)
        if distribution is not None:
            copy = local_copy_of(distribution)
            actual["distribution_unexpected"] = (
                int((copy["verdict"] == "unexpected").sum()) if copy is not None
                else distribution.where(F.col("verdict") == "unexpected").count())
        wrong = {k: {"summary": r[k], "table": v} for k, v in actual.items() if r[k] != v}
        return CheckResult(not wrong, "" if not wrong else "; ".join(
            f"{k} = {w['summary']}, the table says {w['table']}" for k, w in wrong.items()), actual)

    def local(pdf) -> CheckResult | None:
        # The summary row from run_summary's pandas copy, the timing counts from routing_replay's: no Spark job.
        # Spark decides where a count column is not all integers in the copy (a null there is NaN in pandas, and
        # a reason would read nan or 5.0 where Spark's reads None or 5), and when the replay has no copy.
        replay_copy = local_copy_of(replay) if replay is not None else None
        counts = ["messages_replayed", "messages_stuck", "distribution_unexpected"] + [
            c for c in ("timing_observed", "timing_agreed", "timing_disagreed") if c in pdf.columns]
        if (replay is not None and replay_copy is None) or not {"run_id", *counts[:3]} <= set(pdf.columns) \
                or not all(pd.api.types.is_integer_dtype(pdf[c]) for c in counts if c in pdf.columns):
            return None
        rows = pdf[pdf["run_id"] == run_id]
        if len(rows) != 1:
            return CheckResult(False, f"{len(rows)} rows for run_id {run_id!r}, want 1", len(rows))
        row = {c: int(v) for c, v in rows.iloc[0][counts].items()}
        return compare(row, "timing_observed" in pdf.columns, lambda _: _timing_counts_local(replay_copy))

    return ExtraCheck("run_summary_counts_match_gold", run, None,
                      "messages_replayed, messages_stuck, distribution_unexpected and the timing counts match the "
                      "gold tables", local)


def _as_date(d: dt.date | str) -> dt.date:
    return RunDate(d).day


# ------------------------------------------------------------------------------------------------ silver


def read_delta_if_exists(spark: SparkSession, lake: Lake, key: str) -> DataFrame | None:
    """The table ``key`` of the lake (``"silver.quarantine"``) as a DataFrame; None when it is not there."""
    return read_table(spark, lake, key) if lake.exists(key) else None


def events_for_run_date(events: DataFrame, run_date: dt.date | str) -> DataFrame:
    """silver/message_events rows of one run date: by its `run_date` column when it has one, else by the UTC
    date of put_time (the session time zone is UTC)."""
    day = _as_date(run_date)
    if "run_date" in events.columns:
        return on_date(events, day)
    return events.where(F.to_date("put_time") == F.lit(day))


def silver_tables(spark: SparkSession, lake: Lake, run_date: dt.date | str,
                  skip: Iterable[str] = ()) -> dict[str, DataFrame]:
    """The silver tables that have a suite and exist in the lake, message_events narrowed to the run date."""
    out = {}
    for name in SILVER_TABLES:
        if name in skip:
            continue
        df = read_delta_if_exists(spark, lake, f"silver.{name}")
        if df is not None:
            out[name] = events_for_run_date(df, run_date) if name == "message_events" else df
    return out


def default_cross_checks(
    spark: SparkSession,
    lake: Lake,
    run_date: dt.date | str,
    run_id: str,
    tables: Mapping[str, DataFrame],
    silver: Mapping[str, DataFrame] | None = None,
) -> dict[str, list[ExtraCheck]]:
    """The checks publish runs besides the suites, per gold table."""
    if silver is None:
        silver = silver_tables(spark, lake, run_date)
    if "message_events" in silver:
        silver = {**silver, "message_events": events_for_run_date(silver["message_events"], run_date)}
    replay = tables.get("routing_replay")
    checks: dict[str, list[ExtraCheck]] = {name: [check_run_date(run_date)] for name in tables}
    if replay is not None:
        checks["routing_replay"].append(check_row_count(silver.get("message_events"), "silver/message_events"))
        if "stuck_messages" in tables:
            checks["stuck_messages"].append(
                check_keys_in(replay, ["sending_qmgr", "msg_id"], "gold/routing_replay"))
        if "distribution" in tables:
            checks["distribution"].append(check_distribution_totals(replay))
    for name in TIMING_RULES:
        if name in tables:
            checks[name].append(check_timing_columns(name))
    if "run_summary" in tables:
        checks["run_summary"].append(check_run_summary(
            run_id, replay, tables.get("stuck_messages"), tables.get("distribution")))
    return checks
