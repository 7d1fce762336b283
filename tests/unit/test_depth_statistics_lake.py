"""clwl.analyses.depth_day with amqsmon statistics in the lake (no Spark: the bronze tables written with deltalake
in the columns the rebuild reads).

QM1/Q on 2026-11-20: an application puts M1 at 10:00:00 and M2 at 10:10:00; the consumer gets M1 at 10:05:00 and M2
at 10:15:00 (start 0: the line 1, 0, 1, 0). The queue statistics of [10:00, 10:30) (printed as local time, read as
UTC) say QMinDepth 0 and QMaxDepth 1: the rebuilt least (0, the start) and greatest (1) agree. A second interval
[10:30, 11:00) says 0 and 2 although the trace holds no change then: MQ saw the depth move and the trace has
nothing, a window the trace misses, so the queue is a gap naming 10:30:00-11:00:00 and has no line. A QueueAccounting
row and a statistics row without the two fields are not intervals."""

from __future__ import annotations

import datetime as dt

import deltalake
import pyarrow as pa

from clwl.analyses.depth_day import day_depth, statistics
from clwl.lake.door import Lake

DAY = dt.date(2026, 11, 20)
UTC = dt.timezone.utc
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def _us(hms: str) -> int:
    h, m, s = (int(x) for x in hms.split(":"))
    return (dt.datetime(2026, 11, 20, h, m, s, tzinfo=UTC) - _EPOCH) // dt.timedelta(microseconds=1)


def _operations(lake: Lake) -> None:
    rows = [("QM1/app", 0, "MQPUT", "M1", "10:00:00"), ("QM1/app", 1, "MQPUT", "M2", "10:10:00"),
            ("QM1/consumer", 0, "MQGET", "M1", "10:05:00"), ("QM1/consumer", 1, "MQGET", "M2", "10:15:00")]
    n = len(rows)
    fields = pa.array([[("Resolved_Q_mgr", "QM1"), ("Resolved_Q_Name", "Q")] if r[2] == "MQPUT" else [] for r in rows],
                      pa.map_(pa.string(), pa.string()))
    deltalake.write_deltalake(lake.table("bronze.activity_operations"), pa.table({
        "run_date": pa.array([DAY] * n, pa.date32()), "connection": [r[0] for r in rows],
        "seq_number": pa.array([0] * n, pa.int32()), "operation_index": pa.array([r[1] for r in rows], pa.int32()),
        "operation": [r[2] for r in rows], "comp_code": ["MQCC_OK"] * n, "options": pa.array([0x4] * n, pa.int64()),
        "qmgr": ["QM1"] * n, "application_name": [r[0].split("/")[1] for r in rows],
        "channel_name": pa.array([None] * n, pa.string()), "channel_type": pa.array([None] * n, pa.string()),
        "api_environment": ["MQXE_OTHER"] * n, "object_name": ["Q"] * n, "msg_id": [r[3] for r in rows],
        "xmitq_msg_id": pa.array([None] * n, pa.string()), "xmitq_remote_qmgr": pa.array([None] * n, pa.string()),
        "high_res_time": pa.array([_us(r[4]) for r in rows], pa.int64()),
        "operation_time": pa.array([None] * n, pa.timestamp("us", "UTC")), "fields": fields,
    }), partition_by=["run_date"])


def _statistics(lake: Lake, with_depths: bool = True) -> None:
    t = dt.datetime(2026, 11, 20, 10, 0)
    rows = [("QueueStatistics", t, t + dt.timedelta(minutes=30), 0, 1),
            ("QueueStatistics", t + dt.timedelta(minutes=30), t + dt.timedelta(hours=1), 0, 2),
            ("QueueStatistics", t + dt.timedelta(hours=1), t + dt.timedelta(hours=2), None, None),
            ("QueueAccounting", t, t + dt.timedelta(minutes=30), None, None)]
    n = len(rows)
    cols = {"run_date": pa.array([DAY] * n, pa.date32()), "monitoring_type": [r[0] for r in rows],
            "qmgr": ["QM1"] * n, "queue": ["Q"] * n,
            "interval_start": pa.array([r[1] for r in rows], pa.timestamp("us")),
            "interval_end": pa.array([r[2] for r in rows], pa.timestamp("us"))}
    if with_depths:
        cols |= {"q_min_depth": pa.array([r[3] for r in rows], pa.int64()),
                 "q_max_depth": pa.array([r[4] for r in rows], pa.int64())}
    deltalake.write_deltalake(lake.table("bronze.queue_accounting"), pa.table(cols), partition_by=["run_date"])


def test_the_statistics_intervals_are_read_as_utc_and_a_moved_interval_without_trace_is_a_gap(tmp_path):
    lake = Lake.of(tmp_path / "lake")
    _operations(lake)
    _statistics(lake)
    stats = statistics(lake, DAY)
    assert [(s.start.isoformat(), s.end.isoformat(), s.min_depth, s.max_depth) for s in stats] == [
        ("2026-11-20T10:00:00+00:00", "2026-11-20T10:30:00+00:00", 0, 1),
        ("2026-11-20T10:30:00+00:00", "2026-11-20T11:00:00+00:00", 0, 2)]
    rebuilt, _ = day_depth(lake, DAY)
    assert rebuilt.changes == [] and [(g.qmgr, g.queue) for g in rebuilt.gaps] == [("QM1", "Q")]
    assert "10:30:00-11:00:00 (1 statistics interval(s): the depth moved but the trace holds no put or get" \
        in rebuilt.gaps[0].reason


def test_a_lake_made_before_the_two_columns_has_no_intervals_and_keeps_its_line(tmp_path):
    lake = Lake.of(tmp_path / "lake")
    _operations(lake)
    _statistics(lake, with_depths=False)
    assert statistics(lake, DAY) == []
    rebuilt, _ = day_depth(lake, DAY)
    assert rebuilt.gaps == [] and [c.depth for c in rebuilt.line("QM1", "Q")] == [1, 0, 1, 0]
