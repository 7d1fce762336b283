"""spark.detect.distribution on hand-built inputs: both sides of the observed-destination counts from one pass,
and receiver accounting intervals with messages on their bounds and one interval no message falls in.

Definitions (spark/detect.py, distribution step (2)): a message delivered without waiting belongs to the
accounting interval [start, end) that holds its delivered_at; a message that waited (released_at set) to the
interval (start, end] (the capture that showed its channel working again may come at the timer's moment).
"""

from __future__ import annotations

import datetime as dt

import pytest

from clwl.lake.door import Lake
from spark import detect, tables
from spark.config import PipelineConfig
from spark.replay import as_utc

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc
DAY = "2026-11-20"


def t(h: int, m: int = 0, s: int = 0, us: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, h, m, s, us, tzinfo=UTC)


# (msg, final_qmgr, delivered_at, released_at, observed_qmgr, error), all QM1's puts to APP.ORDERS at 10:xx.
MESSAGES = [
    ("m1", "QM2", t(10), None, "QM2", None),                        # [10:00, 10:30): interval 1
    ("m2", "QM2", t(10, 29, 59, 500_000), None, "QM3", None),       # [10:00, 10:30): interval 1
    ("m3", "QM2", t(10, 30), None, None, None),                     # on the bound, not waiting: interval 2
    ("m4", "QM2", t(10, 30), t(10, 30), None, None),                # on the bound, waited: (10:00, 10:30], 1
    ("m5", "QM2", t(10, 30, 0, 200_000), t(10, 30, 0, 200_000), None, None),  # waited: (10:30, 11:00], 2
    ("m6", "QM2", None, None, None, None),                          # still held at the end of the day: none
    ("m7", None, None, None, None, "MQRC_UNKNOWN_OBJECT_NAME"),     # not routed: never counted
    ("m8", "QM3", t(10, 5), None, None, None),                      # QM3 keeps no accounting: no row
]
# Accounting on QM2 for APP.ORDERS: three half-hour intervals, PutCount as printed.
INTERVALS = [(t(10), t(10, 30), 3), (t(10, 30), t(11), 2), (t(11), t(11, 30), 0)]
# From the definitions above: interval 1 holds m1, m2, m4 -> 3; interval 2 holds m3, m5 -> 2; interval 3 none -> 0.
EXPECTED_ACCOUNTING = [3, 2, 0]
# Observed destinations, QM1 / APP.ORDERS / hour 10:00: m1 replayed QM2 seen QM2, m2 replayed QM2 seen QM3.
# Expected side {QM2: 2}; observed side {QM2: 1, QM3: 1}; QM3 gets a row with expected 0.
EXPECTED_OBSERVED = {"QM2": (2, 1), "QM3": (0, 1)}


def test_distribution_counts(spark, tmp_lake):
    config = PipelineConfig(lake=tmp_lake)
    acct_table = tables.table("silver.queue_accounting")
    blank = dict.fromkeys(acct_table.columns)
    rows = [acct_table.row(**{**blank, "run_date": dt.date.fromisoformat(DAY), "observing_qmgr": "QM2",
                              "qmgr": "QM2", "monitoring_type": "QueueAccounting", "queue": "APP.ORDERS",
                              "interval_start": start, "interval_end": end, "put_count": n,
                              "source_file": "QM2/amqsmon.txt", "position": i})
            for i, (start, end, n) in enumerate(INTERVALS)]
    path = tables.ensure_table(spark, config, acct_table)
    spark.createDataFrame(rows, acct_table.schema).write.format("delta").mode("append").save(path)
    replayed = spark.createDataFrame(
        [("QM1", m, t(10), "APP.ORDERS", q, d, r, o, e) for m, q, d, r, o, e in MESSAGES],
        "sending_qmgr string, msg_id string, put_time timestamp, queue string, final_qmgr string, "
        "delivered_at timestamp, released_at timestamp, observed_qmgr string, error string")

    dist = detect.distribution(spark, Lake(config.lake), DAY, replayed, timelines={}).collect()

    acct = sorted((r for r in dist if r.source == "accounting"), key=lambda r: r.interval_start)
    assert [(r.qmgr, as_utc(r.interval_start), as_utc(r.interval_end)) for r in acct] == [("QM2", s, e) for s, e, _ in INTERVALS]
    assert [r.expected for r in acct] == EXPECTED_ACCOUNTING
    assert [r.observed for r in acct] == [n for _, _, n in INTERVALS]
    assert all(r.sending_qmgr == "*" for r in acct)
    seen = {r.qmgr: (r.expected, r.observed) for r in dist if r.source == "observed_destination"}
    assert seen == EXPECTED_OBSERVED
    assert {(as_utc(r.interval_start), as_utc(r.interval_end)) for r in dist if r.source == "observed_destination"} \
        == {(t(10), t(11))}
