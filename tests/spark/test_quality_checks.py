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
    assert check.func(dist).success

    # One more expected message in either interval is caught, and only that interval.
    for more_observed, more_put in ((1, 0), (0, 1)):
        replay, dist = frames(spark, observed + more_observed, put + more_put, end)
        result = check.func(dist)
        if more_put:  # accounting is a bound: expected may not exceed the messages put by the end
            assert not result.success and result.observed["intervals"] == 1
            assert "accounting" in result.reason
        else:
            assert not result.success and result.observed["intervals"] == 1
            assert "observed_destination" in result.reason
    # Fewer accounted messages than put is allowed (a bound), fewer observed ones is not (exact).
    replay, dist = frames(spark, observed, put - 1, end)
    assert check.func(dist).success
    replay, dist = frames(spark, observed - 1, put, end)
    assert not check.func(dist).success


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
