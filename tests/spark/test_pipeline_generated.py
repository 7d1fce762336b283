"""The whole pipeline against an estate whose truth is known: `clwl generate` routes every message with its
own, independently written simulation of the algorithm and records what it did in `_generate.json`; the
pipeline (ingest -> replay -> detect -> validate -> publish) must reconstruct it from the exported files alone.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from clwl.cli import main as generate_main
from spark.config import PipelineConfig
from spark.pipeline import run_pipeline

pytestmark = [pytest.mark.spark, pytest.mark.slow]
DAY = "2026-11-19"


@pytest.fixture(scope="module")
def generated_run(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("generated")
    landing, lake = root / "landing", root / "lake"
    code = generate_main(["generate", "--out", str(landing), "--days", "1", "--messages-per-day", "6000",
                          "--skew", "1", "--broken-records", "3", "--seed", "7", "--quiet"])
    assert code == 0
    truth = json.loads((landing / "_generate.json").read_text())
    config = PipelineConfig.from_env(lake=lake, landing=landing)
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    return truth, lake, outcome


def _gold(lake: Path, table: str):
    from deltalake import DeltaTable

    return DeltaTable(str(lake / "gold" / table)).to_pandas()


def test_run_publishes(generated_run):
    _, _, outcome = generated_run
    assert outcome.published and outcome.dates[0].published


def test_replay_reconstructs_every_destination(generated_run):
    truth, lake, _ = generated_run
    rr = _gold(lake, "routing_replay")
    got = Counter(zip(rr.sending_qmgr, rr.queue, rr.final_qmgr))
    want = Counter({(t["sender"], q, d): n for t in truth["traffic"] if t["day"] == DAY
                    for q, per in t["by_queue_and_destination"].items() for d, n in per.items()})
    assert got == want
    # Where the put records carry the observed destination, the replay agrees with every one of them.
    assert rr.agrees.dropna().all() and rr.agrees.notna().sum() > 0


def test_only_the_injected_skew_is_unexpected(generated_run):
    """The generator halves (or inflates) one receiver's accounting for one queue and interval; nothing else
    differs from what the simulation delivered. So exactly those rows are 'unexpected', and every other
    accounting interval matches the replay within one message (an interval boundary)."""
    truth, lake, _ = generated_run
    dist = _gold(lake, "distribution")
    acct = dist[dist.source == "accounting"]
    unexpected = {(r.qmgr, r.queue, r.interval_start.strftime("%H:%M")) for r in acct.itertuples()
                  if r.verdict == "unexpected"}
    skews = {(s["receiver"], s["queue"], datetime.fromisoformat(s["interval_start"].replace("Z", "+00:00"))
              .strftime("%H:%M")) for s in truth["skews"] if s["day"] == DAY}
    assert skews and unexpected == skews
    others = acct[~acct.apply(lambda r: (r.qmgr, r.queue, r.interval_start.strftime("%H:%M")) in skews, axis=1)]
    assert (others.deviation.abs() <= 1).all()


def test_held_messages_are_stuck_with_their_reason(generated_run):
    truth, lake, _ = generated_run
    stuck = _gold(lake, "stuck_messages")
    browsed = {m for h in truth["held"] for m in h.get("browse_msg_ids", [])}
    assert browsed and browsed <= set(stuck.msg_id)
    assert set(stuck.why) <= {"not-reallocatable", "still-most-favourable"}


def test_quarantine_holds_the_broken_records(generated_run, spark):
    truth, lake, _ = generated_run
    q = spark.read.format("delta").load(str(lake / "silver" / "quarantine")).collect()
    # The generator's ground truth, _generate.json in the landing root, is no export: it is skipped, not read,
    # and recorded as such (every skipped item is); everything else quarantined is an injected broken record.
    skipped = [r for r in q if r.reason.startswith("skipped, not read")]
    assert [r.source_file for r in skipped] == ["_generate.json"] and skipped[0].raw is None
    assert len(q) - len(skipped) == len(truth["broken_records"])
    assert {r.source_file for r in q if r not in skipped} == {b["file"] for b in truth["broken_records"]}
    files = spark.read.format("delta").load(str(lake / "silver" / "ingest_files")).collect()
    assert all(f.records_read == f.records_accepted + f.records_quarantined for f in files)


def test_each_senders_input_is_its_messages_in_put_order(generated_run, spark):
    """The replay's task for a sending queue manager reads that sender's files of silver.message_events
    directly (spark/replay.py: no shuffle). What it streams must be exactly what Spark's own read of the table
    gives for that sender, sorted by put time, then source file and position (the layout this replaced:
    repartition by sender + sortWithinPartitions), with the same values and types."""
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import functions as F

    from spark.replay import INPUT_COLUMNS, PUT_ORDER, sender_batches, sender_inputs

    _, lake, _ = generated_run
    config = PipelineConfig.from_env(lake=lake)
    version, inputs = sender_inputs(config, DAY)
    events = (spark.read.format("delta").option("versionAsOf", version).load(str(lake / "silver" / "message_events"))
              .where(F.col("run_date") == F.lit(DAY).cast("date")))
    per_sender = {r.sending_qmgr: r["count"] for r in events.groupBy("sending_qmgr").count().collect()}
    # Every sender with messages that day, largest first, with its message count from the Delta log.
    assert [s.sending_qmgr for s in inputs] == sorted(per_sender, key=lambda q: (-per_sender[q], q))
    assert {s.sending_qmgr: s.messages for s in inputs} == per_sender and len(per_sender) > 1
    # The Arrow types mapInArrow gets from Spark for these columns.
    spark_types = {f.name: f.dataType.simpleString() for f in events.schema.fields}
    arrow_for = {"string": pa.string(), "timestamp": pa.timestamp("us", "UTC"), "int": pa.int32(),
                 "bigint": pa.int64(), "boolean": pa.bool_()}
    for s in inputs:
        batches = list(sender_batches(s, batch_rows=997))
        assert max(b.num_rows for b in batches) == 997
        assert all(b.schema.field(c).type == arrow_for[spark_types[c]] for b in batches for c in INPUT_COLUMNS)
        got = pd.concat([b.to_pandas() for b in batches], ignore_index=True)
        want = (events.where(F.col("sending_qmgr") == s.sending_qmgr).select(*INPUT_COLUMNS)
                .orderBy(*PUT_ORDER).toPandas())
        for df in (got, want):
            t = df["put_time"]
            df["put_time"] = (t.dt.tz_convert(None) if t.dt.tz is not None else t).astype("datetime64[ns]")
        assert list(got.columns) == list(INPUT_COLUMNS)
        assert got.equals(want), got.compare(want).head()
    # Narrowed to some queues: only their messages, still in put order.
    queue = events.select("queue").first().queue
    only = pd.concat([b.to_pandas() for b in sender_batches(inputs[0], queues=[queue])], ignore_index=True)
    assert len(only) and set(only.queue) == {queue} and only.put_time.is_monotonic_increasing
    assert sender_inputs(config, DAY, senders=[inputs[-1].sending_qmgr])[1] == [inputs[-1]]


def test_fast_replay_equals_the_reference_path_in_spark(generated_run, spark):
    """The Spark replay's fast path (columns in and out, mapInArrow) against its reference path (a PutEvent and a
    ReplayRow per message) on the generated estate's silver tables: every column of every message is equal.
    tests/unit/test_replay_batch.py compares the two engines' decisions; this compares what reaches the table."""
    from spark.replay import REPLAY_SCHEMA, replay_messages

    _, lake, _ = generated_run
    config = PipelineConfig.from_env(lake=lake)
    columns = [f.name for f in REPLAY_SCHEMA.fields]
    fast = replay_messages(spark, config, DAY).toPandas()
    reference = replay_messages(spark, config, DAY, reference=True).toPandas()
    assert len(fast) == len(reference) == 6000
    fast = fast[columns].sort_values("msg_id").reset_index(drop=True)
    reference = reference[columns].sort_values("msg_id").reset_index(drop=True)
    assert fast.equals(reference), fast.compare(reference).head()
    assert fast.held_from.notna().sum() > 0  # the estate has messages that waited behind a channel
