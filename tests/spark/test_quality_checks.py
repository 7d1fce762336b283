"""The gate's cross-table checks on hand-built frames, with messages exactly on interval bounds: each fast path
(per-second counts, broadcast key look-up) must give what the plain definition gives."""

from __future__ import annotations

import datetime as dt

import pytest

from spark import cross_checks

UTC = dt.timezone.utc
DAY = dt.date(2026, 11, 20)


def t(h: int, m: int = 0, s: int = 0, us: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, h, m, s, us, tzinfo=UTC)


# QM1's routed messages of APP.ORDERS, and whether their destination was observed.
MESSAGES = [
    (t(9, 59, 59, 999_999), True),   # before the interval
    (t(10), True),                   # exactly at its start: in [10:00, 11:00)
    (t(10, 0, 0, 500_000), True),
    (t(10, 30), False),              # destination not observed: not in observed_destination's count
    (t(10, 59, 59, 999_999), True),
    (t(11), True),                   # exactly at its end: not in [10:00, 11:00), but put "up to" 11:00
    (t(11, 0, 0, 1), True),          # one microsecond later: in neither
]
# Definitions (check_distribution_totals' docstring):
# observed_destination [10:00, 11:00): routed messages with an observed destination and 10:00 <= put < 11:00:
#   10:00:00.000000, 10:00:00.5, 10:59:59.999999 -> 3
# accounting interval ending 11:00: routed messages of the queue put at or before 11:00 -> all but the last -> 6
OBSERVED_IN_HOUR = 3
PUT_BY_END = 6


def frames(spark, expected_observed: int, expected_accounting: int, end: dt.datetime):
    replay = spark.createDataFrame(
        [("QM1", f"m{i}", put, "APP.ORDERS", "QM2" if seen else None, None) for i, (put, seen) in enumerate(MESSAGES)]
        + [("QM1", "err", t(10, 15), "APP.ORDERS", "QM2", "MQRC_UNKNOWN_OBJECT_NAME")],  # not routed: never counted
        "sending_qmgr string, msg_id string, put_time timestamp, queue string, observed_qmgr string, error string")
    dist = spark.createDataFrame(
        [("QM1", "APP.ORDERS", t(10), end, "observed_destination", "QM2", expected_observed, expected_observed),
         ("*", "APP.ORDERS", t(10), end, "accounting", "QM2", expected_accounting, expected_accounting)],
        "sending_qmgr string, queue string, interval_start timestamp, interval_end timestamp, source string, "
        "qmgr string, expected long, observed long")
    return replay, dist


@pytest.mark.parametrize("end, observed, put", [
    (t(11), OBSERVED_IN_HOUR, PUT_BY_END),  # whole-second bounds: the per-second path
    # An end off the whole second (11:00:00.000001) takes the per-message path; the message at 11:00:00.000001
    # is then inside both intervals: 4 observed, 7 put.
    (t(11, 0, 0, 1), OBSERVED_IN_HOUR + 1, PUT_BY_END + 1),
])
def test_distribution_totals_count_messages_on_the_bounds_exactly(spark, end, observed, put):
    replay, dist = frames(spark, observed, put, end)
    check = cross_checks.check_distribution_totals(replay)
    assert both_paths(check, replay, dist).success

    # One more expected message in either interval is caught, and only that interval.
    for more_observed, more_put in ((1, 0), (0, 1)):
        _, dist = frames(spark, observed + more_observed, put + more_put, end)
        result = both_paths(check, replay, dist)
        if more_put:  # accounting is a bound: expected may not exceed the messages put by the end
            assert not result.success and result.observed["intervals"] == 1
            assert "accounting" in result.reason
        else:
            assert not result.success and result.observed["intervals"] == 1
            assert "observed_destination" in result.reason
    # Fewer accounted messages than put is allowed (a bound), fewer observed ones is not (exact).
    _, dist = frames(spark, observed, put - 1, end)
    assert both_paths(check, replay, dist).success
    _, dist = frames(spark, observed - 1, put, end)
    assert not both_paths(check, replay, dist).success


def both_paths(check, replay, dist):
    """The check in Spark (`func`) and on the pandas copies validate_table makes of small tables (`local`): the
    same result, reason and examples included; the Spark one returned."""
    from spark import quality

    quality.forget_frames()
    quality._fact(replay)["local"] = replay.toArrow().to_pandas()  # as validate_table's _local_copy makes it
    try:
        local = check.local(dist.toArrow().to_pandas())
    finally:
        quality.forget_frames()
    remote = check.func(dist)
    assert local == remote
    return remote


def test_distribution_totals_by_sender_and_by_queue_the_same_on_pandas_copies(spark):
    """Several senders and queues, channel statistics (per sender, over its queues), more failing intervals than
    the reason quotes: the pandas path gives Spark's verdict, count and examples (in Spark's order)."""
    msgs = [("QM1", "APP.A", t(10, m), "QM2" if m % 3 else None) for m in range(0, 60, 7)]
    msgs += [("QM3", "APP.A", t(10, m, 30), "QM2") for m in range(0, 60, 11)]
    msgs += [("QM1", "APP.B", t(10, m, 15), "QM4") for m in range(5, 60, 13)]
    replay = spark.createDataFrame(
        [(s, f"m{i}", put, q, o, None) for i, (s, q, put, o) in enumerate(msgs)]
        + [("QM3", "bad", t(10, 1), "APP.A", None, "MQRC_Q_FULL")],
        "sending_qmgr string, msg_id string, put_time timestamp, queue string, observed_qmgr string, error string")
    check = cross_checks.check_distribution_totals(replay)
    schema = ("sending_qmgr string, queue string, interval_start timestamp, interval_end timestamp, source string, "
              "qmgr string, expected long, observed long")

    def dist(rows):
        return spark.createDataFrame(rows, schema)

    def od(sender, queue, start, end, n):  # split over two receivers, as the distribution's rows are
        return [(sender, queue, start, end, "observed_destination", "QM2", n // 2, n // 2),
                (sender, queue, start, end, "observed_destination", "QM4", n - n // 2, n - n // 2)]

    # the true totals: QM1/APP.A observed [10:00, 10:30) m=7,14,28 -> 3; QM3/APP.A [10:00, 10:30) 0,11,22 -> 3;
    # QM1/APP.B [10:00, 11:00) 5,18,31,44,57 -> 5; accounting APP.A up to 10:30: 5 + 3 = 8 (m=0..28, 0..22);
    # channel statistics QM1 up to 11:00: 9 + 5 = 14
    good = (od("QM1", "APP.A", t(10), t(10, 30), 3) + od("QM3", "APP.A", t(10), t(10, 30), 3)
            + od("QM1", "APP.B", t(10), t(11), 5)
            + [("*", "APP.A", t(10), t(10, 30), "accounting", "QM2", 8, 8),
               ("QM1", "*", t(10), t(11), "channel_statistics", "QM2", 14, 14)])
    assert both_paths(check, replay, dist(good)) == cross_checks.CheckResult(True, observed=0)
    wrong = (od("QM1", "APP.A", t(10), t(10, 30), 4) + od("QM3", "APP.A", t(10), t(10, 30), 2)
             + od("QM1", "APP.B", t(10), t(11), 6)
             + [("*", "APP.A", t(10), t(10, 30), "accounting", "QM2", 9, 9),
                ("QM1", "*", t(10), t(11), "channel_statistics", "QM2", 15, 15)])
    result = both_paths(check, replay, dist(wrong))
    assert result.observed["intervals"] == 5 and len(result.observed["examples"]) == 3
    assert result.observed["examples"][0].startswith("QM1/*/channel_statistics from ")

    # a null key: Spark's join decides (the pandas path declines)
    replay_copy = replay.toArrow().to_pandas()
    from spark import quality

    quality.forget_frames()
    quality._fact(replay)["local"] = replay_copy
    nulls = dist([(None, "APP.A", t(10), t(10, 30), "accounting", "QM2", 1, 1)]).toArrow().to_pandas()
    assert check.local(nulls) is None
    quality.forget_frames()


@pytest.mark.parametrize("broadcast_up_to", [cross_checks._BROADCAST_KEYS, 0])
def test_keys_in_finds_the_missing_key_by_either_path(spark, monkeypatch, broadcast_up_to):
    monkeypatch.setattr(cross_checks, "_BROADCAST_KEYS", broadcast_up_to)
    replayed = spark.createDataFrame([("QM1", f"m{i}") for i in range(50)] + [("QM2", "m0")],
                                     "sending_qmgr string, msg_id string")
    check = cross_checks.check_keys_in(replayed, ["sending_qmgr", "msg_id"], "gold/routing_replay")
    stuck = spark.createDataFrame([("QM1", "m3"), ("QM2", "m0"), ("QM1", "m3")], "sending_qmgr string, msg_id string")
    assert check.func(stuck).success
    stuck = spark.createDataFrame([("QM1", "m3"), ("QM2", "m1"), ("QM3", "m0")], "sending_qmgr string, msg_id string")
    result = check.func(stuck)
    assert not result.success and result.observed == 2  # QM2/m1 and QM3/m0 were never replayed
    assert "('QM2', 'm1')" in result.reason and "('QM3', 'm0')" in result.reason


def test_run_summary_check_the_same_on_pandas_copies(spark):
    """The run summary against the gold tables, in Spark and on the pandas copies validate_table makes of small
    tables: the same verdict and reason, passing, with wrong counts, and with no row for the run."""
    from spark import quality

    replay = spark.createDataFrame(
        [("QM1", f"m{i}", agrees) for i, agrees in enumerate([True, True, False, None, None])],
        "sending_qmgr string, msg_id string, timing_agrees boolean")
    stuck = spark.createDataFrame([("QM1", "m3")], "sending_qmgr string, msg_id string")
    dist = spark.createDataFrame([("unexpected",), ("expected",), ("unexpected",)], "verdict string")
    check = cross_checks.check_run_summary("run-1", replay, stuck, dist)
    schema = ("run_id string, messages_replayed long, messages_stuck long, distribution_unexpected long, "
              "timing_observed long, timing_agreed long, timing_disagreed long")

    def both(rows):
        summary = spark.createDataFrame(rows, schema)
        quality.forget_frames()
        for df in (replay, stuck, dist):
            quality._fact(df)["local"] = df.toArrow().to_pandas()
        try:
            local = check.local(summary.toArrow().to_pandas())
        finally:
            quality.forget_frames()
        remote = check.func(summary)
        assert local == remote
        return remote

    assert both([("run-1", 5, 1, 2, 3, 2, 1), ("run-0", 9, 9, 9, 9, 9, 9)]).success
    wrong = both([("run-1", 5, 1, 1, 3, 1, 1)])
    assert not wrong.success and wrong.reason == (
        "timing_agreed = 1, the table says 2; distribution_unexpected = 1, the table says 2")
    assert both([("run-0", 5, 1, 2, 3, 2, 1)]).reason == "0 rows for run_id 'run-1', want 1"
