"""Detection on the replay: messages stuck behind a channel, and distributions that differ from the prediction.

stuck_messages: every message that waited on a transmission queue behind a RETRYING/STOPPED channel in the
replay and stayed there (a message re-allocated away to a working channel is not stuck), with why it stayed
(not eligible for re-allocation, and which bind / named-queue-manager reason; or still the most favourable
destination, and which attribute decided), plus messages a transmission queue browse shows sitting there
although the replay had them delivered (the channel failed between captures), and messages the channel agents'
trace has leave well after the replay delivered them; where the trace saw a message leave, that is its release.

distribution: per sending queue manager, queue, interval and destination, the replay's expected count against
the observation: the observed destinations of the put records (per sender, hourly), the receivers'
amqsmon queue accounting (all senders together, sending_qmgr "*", each receiver's own interval), and the
senders' amqsmon channel statistics (per sender, sending channel and statistics interval, queue "*"). For the
observed destinations a chi-square goodness-of-fit test per (sender, queue, hour) gives the p-value; a
destination is "unexpected" when the group is significant (p < ALPHA) and its standardised residual is beyond
RESIDUAL. For accounting and channel statistics the replay predicts each count exactly, so each interval is
tested on its own (Poisson, normal approximation). Too few messages to test: "insufficient data". The explanation names what the configuration
and events say about the skew (weights, priority, rank, suspend, outages, local preference, CLWLMRUC).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Iterable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from clwl.analyses.distribution import explain, judge_count, judge_group
from clwl.days import RunDate, as_utc, day_bounds
from clwl.engine.replay import Snapshot
from clwl.lake.door import Lake
from spark.tables import TABLES, on_date, read_table

DISTRIBUTION = TABLES["gold.distribution"]
DISTRIBUTION_SCHEMA = DISTRIBUTION.schema

#: amqsmon's ChannelType values of the channels that send (the channel statistics compared with the replay);
#: a receiving channel's MsgCount is what came in.
SENDING_CHANNEL_TYPES = ("CLUSSDR", "SENDER", "SERVER")
#: The caveat of a channel statistics row whose MsgCount exceeds the replay's count.
CHANNEL_TRAFFIC_CAVEAT = ("MsgCount counts every message the channel sent, the replayed puts and any other "
                          "traffic (other queues, replies, cluster commands, puts the landing folder has no "
                          "record of): an excess may be traffic the replay does not cover")


def floor_second(t):
    """The timestamp column `t` rounded down to its second: for whole-second bounds, start <= t < end exactly
    when start <= floor_second(t) < end."""
    return F.date_trunc("second", t)


def ceil_second(t):
    """`t` rounded up to a whole second: for whole-second bounds, start < t <= end exactly when
    start < ceil_second(t) <= end."""
    down = F.date_trunc("second", t)
    return F.when(down < t, down + F.expr("INTERVAL 1 SECOND")).otherwise(down)


#: stuck_messages.timing_source: what says when a message waited and left.
SOURCE_STATUS, SOURCE_BROWSE, SOURCE_TRACE = "channel status", "xmitq browse", "channel agent trace"


def stuck_messages(spark: SparkSession, lake: Lake, run_date: str, replayed: DataFrame) -> DataFrame:
    """The messages that waited behind a channel that moved nothing and stayed there, as the replay has them from
    the channel status captures; and the messages the replay delivered at once that a transmission queue browse
    or the channel agents' trace shows waiting (the channel failed between captures). Where the trace saw the
    message leave (routing_replay.observed_left_at, set where timing_agrees is not null), that is when it was
    released, and timing_source says so; the channel status inference remains for messages nobody traced."""
    _, end = day_bounds(run_date)
    browsed = (on_date(read_table(spark, lake, "silver.xmitq_contents"), run_date)
               .groupBy(F.upper("msg_id").alias("b_msg_id"))
               .agg(F.min("capture_time").alias("seen_at"), F.first("xmitq").alias("seen_xmitq")))
    # The browses are small (the messages on transmission queues at capture times): broadcast them.
    r = replayed.join(F.broadcast(browsed), F.upper(replayed.msg_id) == browsed.b_msg_id, "left")
    # The trace's departure, where its timing was compared with this row (clwl.analyses.observed.timing_agreement).
    left = F.when(F.col("timing_agrees").isNotNull(), F.col("observed_left_at"))
    # Stuck: it waited behind a channel that moved nothing and stayed there (stay_reason says why). A message
    # re-allocated away to a working channel waited too, but left the transmission queue (002): not stuck.
    waited = F.col("held_from").isNotNull() & F.col("stay_reason").isNotNull()
    # The replay delivered it at once, but the channel failed between captures: a browse saw it on the
    # transmission queue, or the trace has it leave well after its put (timing_agrees false).
    at_once = F.col("held_from").isNull() & F.col("error").isNull()
    traced_late = at_once & (F.col("timing_agrees") == F.lit(False)) & left.isNotNull()
    missed = at_once & (F.col("seen_at").isNotNull() | traced_late)
    end_ts = F.lit(end).cast("timestamp")

    def pick(held, seen, name: str):
        """One pass over the replay: a waited message's value, or a missed one's."""
        return F.when(waited, held).otherwise(seen).alias(name)

    trace_said = F.concat(F.lit("; the channel agents' trace has it leave the transmission queue at "),
                          F.date_format(left, "HH:mm:ss"))
    missed_detail = F.concat_ws(
        "", F.coalesce("not_reallocatable_reason", F.lit("eligible")),
        F.when(F.col("seen_at").isNotNull(),
               F.concat(F.lit("; on the transmission queue at "), F.date_format("seen_at", "HH:mm"))),
        F.when(left.isNotNull(), trace_said),
        F.lit(" although the last capture before its put showed the channel working: it failed between captures"))
    waited_detail = F.when(left.isNotNull(), F.concat_ws("", F.col("stay_detail"), trace_said)).otherwise(
        F.col("stay_detail"))
    # The trace's departure ends the wait; without it, the replay's release (or the browse, for a missed one).
    released = F.coalesce(left, F.col("released_at"))
    return r.where(waited | missed).select(
        "run_date", "sending_qmgr", "msg_id", "queue", F.col("final_qmgr").alias("qmgr"),
        F.col("final_channel").alias("channel"),
        pick(F.col("final_xmitq"), F.coalesce("seen_xmitq", "final_xmitq"), "xmitq"),
        pick(F.col("hold_state"), F.lit(None).cast("string"), "channel_state"),
        pick(F.col("held_from"), F.col("put_time"), "held_from"),
        pick(released, left, "released_at"),
        pick(F.coalesce(released, end_ts).cast("long") - F.col("held_from").cast("long"),
             F.coalesce(left, F.col("seen_at")).cast("long") - F.col("put_time").cast("long"), "age_seconds"),
        pick(F.col("stay_reason"), F.when(F.col("reallocatable"), F.lit("still-most-favourable"))
             .otherwise(F.lit("not-reallocatable")), "why"),
        pick(waited_detail, missed_detail, "detail"),
        pick(F.col("seen_at").isNotNull(), F.col("seen_at").isNotNull(), "observed_on_xmitq"),
        left.alias("observed_left_at"),
        F.when(left.isNotNull(), F.lit(SOURCE_TRACE))
        .when(~waited, F.lit(SOURCE_BROWSE)).otherwise(F.lit(SOURCE_STATUS)).alias("timing_source"),
        F.col("seen_at").cast("timestamp").alias("seen_at"))


# -- distribution ----------------------------------------------------------------------------------------------
def _delivered_per_second(ok: DataFrame, keys: list[str], whole_seconds: bool) -> DataFrame:
    """The routed messages delivered, counted per ``keys``, waited-or-not (``late``) and delivery time, rounded
    to whole seconds when every interval bound is one (rounded down, or up for a message that waited): an
    interval [start, end) holds a message delivered without waiting, (start, end] one that waited (it is known
    delivered by the capture that showed its channel working again, which may come at the timer's moment)."""
    t = F.col("delivered_at")
    late = F.col("released_at").isNotNull()
    at = F.when(late, ceil_second(t)).otherwise(floor_second(t)) if whole_seconds else t
    return ok.where(t.isNotNull()).groupBy(*keys, late.alias("late"), at.alias("delivered_at")).count()


def _in_interval(d: str, a: str):
    """The join condition of :func:`_delivered_per_second`'s counts (alias ``d``) and intervals (alias ``a``)."""
    at, start, end = F.col(f"{d}.delivered_at"), F.col(f"{a}.interval_start"), F.col(f"{a}.interval_end")
    return F.when(F.col(f"{d}.late"), (at > start) & (at <= end)).otherwise((at >= start) & (at < end))


def distribution(spark: SparkSession, lake: Lake, run_date: str, replayed: DataFrame,
                 timelines: dict[str, list[Snapshot]]) -> DataFrame:
    rd = RunDate(run_date).day
    ok = replayed.where(F.col("error").isNull())
    rows: list[tuple] = []

    # (1) Observed destinations in the put records: per sender, queue and hour, the replay's destinations
    # (expected) and the observed ones, counted in Spark (a few rows per group reach the driver).
    seen = (ok.where(F.col("observed_qmgr").isNotNull())
            .select("sending_qmgr", "queue", F.date_trunc("hour", "put_time").alias("interval_start"),
                    "final_qmgr", "observed_qmgr"))
    # One pass: the counts per (replayed, observed) destination pair give both sides.
    counted = seen.groupBy("sending_qmgr", "queue", "interval_start", "final_qmgr", "observed_qmgr").count().collect()
    groups: dict[tuple, tuple[dict, dict]] = defaultdict(lambda: (defaultdict(float), defaultdict(int)))
    for c in counted:
        exp, got = groups[(c.sending_qmgr, c.queue, c.interval_start)]
        exp[c.final_qmgr] += c["count"]
        got[c.observed_qmgr] += c["count"]
    for (sender, queue, interval_start), (exp, got) in sorted(groups.items(), key=lambda kv: kv[0]):
        start = as_utc(interval_start)
        rows += _judge_rows(rd, sender, queue, start, exp, got, timelines.get(sender, []))

    # (2) Receiver accounting: all senders together, per accounting interval.
    acct = (on_date(read_table(spark, lake, "silver.queue_accounting"), run_date)
            .where(F.col("monitoring_type") == "QueueAccounting")
            # One record per connection (each sender's channel agent, each local application) and interval:
            # the connections' intervals end together at the accounting timer, and start when each connection
            # started, so one receiver interval is all records that end at the same moment.
            .groupBy("qmgr", "queue", "interval_end")
            .agg(F.min("interval_start").alias("interval_start"),
                 F.sum(F.coalesce("put_count", F.lit(0))).alias("observed")))
    acct_rows = acct.collect()
    if acct_rows:
        # amqsmon times are whole seconds, so the messages are counted per second first, which keeps the
        # interval test exact and the join small.
        whole_seconds = all(r.interval_start.microsecond == 0 and r.interval_end.microsecond == 0
                            for r in acct_rows)
        delivered = _delivered_per_second(ok, ["final_qmgr", "queue"], whole_seconds)
        # The intervals from the rows collected above, not `acct` again (a second read and aggregate: 3 jobs).
        a = spark.createDataFrame([(r.qmgr, r.queue, r.interval_start, r.interval_end) for r in acct_rows],
                                  "qmgr string, queue string, interval_start timestamp, "
                                  "interval_end timestamp").alias("a")
        d = delivered.alias("d")
        # The per-second counts stream past the broadcast intervals (a few hundred rows); an interval no
        # message falls in expects 0. (A left join from the intervals would broadcast the per-second counts.)
        sums = (d.join(F.broadcast(a), (F.col("a.qmgr") == F.col("d.final_qmgr"))
                       & (F.col("a.queue") == F.col("d.queue")) & _in_interval("d", "a"))
                .groupBy("a.qmgr", "a.queue", "a.interval_end").agg(F.sum("d.count").alias("expected"))
                .collect())
        expected = {(r.qmgr, r.queue, r.interval_end): r.expected for r in sums}
        # The configuration that explains a queue's accounting: the first sender (by name) that knows it.
        queue_timeline: dict[str, list[Snapshot]] = {}
        for sender in sorted(timelines, reverse=True):
            for snap in timelines[sender]:
                for i in snap.view.instances:
                    queue_timeline[i.queue] = timelines[sender]
        # Receivers keep their own accounting intervals (they need not line up), and the replay predicts
        # each receiver's count exactly: judge every receiver interval on its own.
        for j in sorted(acct_rows, key=lambda j: (j.queue, j.interval_start, j.qmgr)):
            start, stop = as_utc(j.interval_start), as_utc(j.interval_end)
            tl = queue_timeline.get(j.queue, [])
            e, o = float(expected.get((j.qmgr, j.queue, j.interval_end), 0)), int(j.observed)
            p, verdict = judge_count(e, o)
            rows.append(DISTRIBUTION.row(
                run_date=rd, sending_qmgr="*", queue=j.queue, interval_start=start, interval_end=stop, qmgr=j.qmgr,
                expected=int(e), observed=o, deviation=float(o - e), p_value=p, verdict=verdict,
                explanation=explain(tl, j.queue, j.qmgr, start, stop, verdict, e, o), source="accounting",
                channel=None))

    # (3) Channel statistics on the senders: per sender, sending channel and statistics interval.
    rows += _channel_statistics_rows(spark, lake, run_date, rd, replayed, ok, timelines)
    return spark.createDataFrame(rows, DISTRIBUTION_SCHEMA)


def _channel_statistics_rows(spark: SparkSession, lake: Lake, run_date: str, rd, replayed: DataFrame,
                             ok: DataFrame, timelines: dict[str, list[Snapshot]]) -> list[tuple]:
    """The sending side's observation: the MsgCount of each sending channel of a sender in each of its amqsmon
    statistics intervals, against the replay's messages of that sender that left by that channel
    (final_channel) in the interval, by delivered_at as for accounting. Compared only where the replay covers
    the sender's puts: the sender has replayed messages that day, and the interval overlaps the time from its
    first put to its last put or delivery. MsgCount counts every message the channel sent, the replay's and any
    other traffic, so a count above the replay's carries that caveat in its explanation."""
    if not lake.exists("silver.channel_statistics"):
        return []
    stats = on_date(read_table(spark, lake, "silver.channel_statistics"), run_date).where(F.col("msg_count").isNotNull())
    if stats.limit(1).count() == 0:  # the usual day: no channel statistics at all, the replay is not read
        return []
    spans = {r.sending_qmgr: (r.first, r.last) for r in replayed.groupBy("sending_qmgr").agg(
        F.min("put_time").alias("first"),
        F.max(F.greatest("put_time", F.coalesce("delivered_at", "put_time"))).alias("last")).collect()}
    kind = F.upper(F.col("channel_type"))
    # One record per channel instance and interval; a channel's intervals on one queue manager end together at
    # the statistics timer, so one interval is all records of the channel that end at the same moment.
    intervals = (stats.where(F.col("observing_qmgr").isin(sorted(spans))
                             & (kind.isNull() | kind.isin(*SENDING_CHANNEL_TYPES)))
                 .groupBy("observing_qmgr", "channel", "interval_end")
                 .agg(F.min("interval_start").alias("interval_start"), F.sum("msg_count").alias("observed"),
                      F.max("remote_qmgr").alias("remote_qmgr")))
    chl_rows = [r for r in intervals.collect()
                if r.interval_end > spans[r.observing_qmgr][0] and r.interval_start <= spans[r.observing_qmgr][1]]
    if not chl_rows:
        return []
    whole_seconds = all(r.interval_start.microsecond == 0 and r.interval_end.microsecond == 0 for r in chl_rows)
    delivered = _delivered_per_second(ok.where(F.col("final_channel").isNotNull()),
                                      ["sending_qmgr", "final_channel", "final_qmgr"], whole_seconds)
    a = spark.createDataFrame([(r.observing_qmgr, r.channel, r.interval_start, r.interval_end) for r in chl_rows],
                              "observing_qmgr string, channel string, interval_start timestamp, "
                              "interval_end timestamp").alias("a")
    d = delivered.alias("d")
    sums = (d.join(F.broadcast(a), (F.col("a.observing_qmgr") == F.col("d.sending_qmgr"))
                   & (F.col("a.channel") == F.col("d.final_channel")) & _in_interval("d", "a"))
            .groupBy("a.observing_qmgr", "a.channel", "a.interval_end")
            .agg(F.sum("d.count").alias("expected"), F.max("d.final_qmgr").alias("final_qmgr"))
            .collect())
    expected = {(r.observing_qmgr, r.channel, r.interval_end): (r.expected, r.final_qmgr) for r in sums}
    # Where each channel leads when the interval has no replayed message on it: the replay's other intervals.
    led_to = {(r.sending_qmgr, r.final_channel): r.final_qmgr
              for r in delivered.groupBy("sending_qmgr", "final_channel").agg(
                  F.max("final_qmgr").alias("final_qmgr")).collect()}
    out = []
    for j in sorted(chl_rows, key=lambda j: (j.observing_qmgr, j.channel, j.interval_start)):
        start, stop = as_utc(j.interval_start), as_utc(j.interval_end)
        tl = timelines.get(j.observing_qmgr, [])
        n, replay_dest = expected.get((j.observing_qmgr, j.channel, j.interval_end), (0, None))
        dest = (_channel_destination(tl, j.channel, start) or j.remote_qmgr or replay_dest
                or led_to.get((j.observing_qmgr, j.channel)) or "?")
        e, o = float(n), int(j.observed)
        p, verdict = judge_count(e, o)
        text = explain(tl, "*", dest, start, stop, verdict, e, o)
        if dest == "?":
            text += "; the channel's destination is unknown (no CLUSSDR of that name, no RemoteQMgr printed)"
        if o > e:
            text += "; " + CHANNEL_TRAFFIC_CAVEAT
        out.append(DISTRIBUTION.row(
            run_date=rd, sending_qmgr=j.observing_qmgr, queue="*", interval_start=start, interval_end=stop,
            qmgr=dest, expected=int(e), observed=o, deviation=float(o - e), p_value=p, verdict=verdict,
            explanation=text, source="channel_statistics", channel=j.channel))
    return out


def _channel_destination(timeline: list[Snapshot], channel: str, at: datetime) -> str | None:
    """The queue manager the sender's cluster sender channel ``channel`` leads to in the configuration in force
    at ``at`` (or the first capture's, for an interval before it)."""
    in_force = [s for s in timeline if s.time <= at][-1:] or timeline[:1]
    for s in in_force:
        for c in s.view.channels:
            if c.name == channel:
                return c.qmgr
    return None


def _judge_rows(rd, sender: str, queue: str, start: datetime, exp: dict, obs: dict,
                timeline: list[Snapshot]) -> Iterable[tuple]:
    """The sender's hour from ``start`` to a queue, judged by observed destination (expected ``exp`` against
    observed ``obs`` per destination)."""
    end, source = start + timedelta(hours=1), "observed_destination"
    p, verdicts = judge_group(exp, obs)
    for dest in sorted(verdicts):
        e, o = exp.get(dest, 0.0), obs.get(dest, 0)
        yield DISTRIBUTION.row(
            run_date=rd, sending_qmgr=sender, queue=queue, interval_start=start, interval_end=end, qmgr=dest,
            expected=int(round(e)), observed=int(o), deviation=float(o - e), p_value=p, verdict=verdicts[dest],
            explanation=explain(timeline, queue, dest, start, end, verdicts[dest], e, o), source=source,
            channel=None)
