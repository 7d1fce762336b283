"""QMinDepth / QMaxDepth through the pipeline: amqsmon queue statistics ingested into bronze.queue_accounting and
compared with the published depth line by `clwl depth` (issue 44). No JVM after the run: `clwl depth` reads the lake
with pyarrow.

The estate is tests/handmade.timing_landing (its docstring) plus QM2's statistics.amqsmon. The trace gives QM2/Q1
one arrival and one removal: TO.QM2's receiving agent puts M1 at 06:10:02 (under syncpoint, committed then) and
ORDERS gets it at 06:11:00; no capture prints CURDEPTH, so the day starts at 0 and the line is 1, 0.

QM2's statistics (printed local time, read as UTC):

  06:00-06:30  Q1         QMinDepth 0, QMaxDepth 2 -> rebuilt least 0 (the start), greatest 1: QMaxDepth differs,
                          rebuilt lower, so a put the trace does not have. Not a window gap: the trace has Q1's
                          changes in the interval, and no connection changed Q1 both before 06:00 and after 06:30.
  06:30-07:00  Q1         0 and 0 -> the rebuilt 0 all along: agrees.
  07:00-07:30  APP.AUDIT  0 and 3 -> MQ saw it move; QM2 is traced but holds no put or get of APP.AUDIT all day:
                          an evidence gap, no line.
  07:00-07:30  APP.IDLE   QMinDepth [0, 1] -> not a whole number: that queue row is quarantined, the others kept.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from clwl.analyses.depth import CAUSE_UNTRACED_PUT
from tests.handmade import DAY, timing_landing, write_day

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _record(start: str, end: str, groups: list[tuple[str, str, str]]) -> str:
    body = "".join(f"QueueStatistics: {i}\n  QueueName: '{q}'\n  QueueType: Local\n  QueueDefinitionType: Predefined\n"
                   f"  QMinDepth: {lo}\n  QMaxDepth: {hi}\n  PutCount: [0, 0]\n" for i, (q, lo, hi) in enumerate(groups))
    return (f"MonitoringType: QueueStatistics\nQueueManager: 'QM2'\nIntervalStartDate: '{DAY}'\n"
            f"IntervalStartTime: '{start}'\nIntervalEndDate: '{DAY}'\nIntervalEndTime: '{end}'\nCommandLevel: 940\n"
            f"ObjectCount: {len(groups)}\n{body}\n")


STATISTICS = (_record("06.00.00", "06.30.00", [("Q1", "0", "2")]) + _record("06.30.00", "07.00.00", [("Q1", "0", "0")])
              + _record("07.00.00", "07.30.00", [("APP.AUDIT", "0", "3"), ("APP.IDLE", "[0, 1]", "1")]))


@pytest.fixture(scope="module")
def published(spark, tmp_path_factory):
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("depth-stats")
    landing = timing_landing(root / "landing")
    write_day(landing, DAY, "QM2", {"statistics.amqsmon": STATISTICS})
    config = PipelineConfig(lake=root / "lake", landing=landing)
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    (day,) = outcome.dates
    assert day.published, day.failures
    return config


def _depth(lake, *args: str) -> tuple[int, str]:
    from clwl.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["depth", "--lake", str(lake), "--date", DAY, *args])
    return code, out.getvalue()


def test_the_statistics_land_in_bronze_and_a_malformed_depth_is_quarantined(published):
    from deltalake import DeltaTable

    bronze = DeltaTable(str(published.lake / "bronze" / "queue_accounting")).to_pandas()
    stats = bronze[bronze.monitoring_type == "QueueStatistics"].sort_values("position")
    assert list(zip(stats.queue, stats.q_min_depth, stats.q_max_depth)) == [("Q1", 0, 2), ("Q1", 0, 0),
                                                                              ("APP.AUDIT", 0, 3)]
    quarantine = DeltaTable(str(published.lake / "silver" / "quarantine")).to_pandas()
    reasons = list(quarantine[quarantine.source_file.str.endswith("statistics.amqsmon")].reason)
    assert reasons == ["QMinDepth is not an integer: '[0, 1]'"]


def test_clwl_depth_lists_the_interval_difference_beside_the_line(published):
    code, out = _depth(published.lake, "--queue", "Q1", "--qmgr", "QM2", "--json")
    assert code == 0
    (line,) = json.loads(out)["lines"]
    assert (line["start"], line["peak"], line["end"]) == (0, 1, 0)
    assert [(d["at"], d["measure"], d["captured"], d["rebuilt"], d["cause"]) for d in line["differences"]] == [
        ("2026-11-20T06:30:00+00:00", "QMaxDepth", 2, 1, CAUSE_UNTRACED_PUT)]
    code, text = _depth(published.lake, "--queue", "Q1", "--qmgr", "QM2")
    assert code == 0 and "! 06:30:00 QMaxDepth captured 2, rebuilt 1: " + CAUSE_UNTRACED_PUT in text


def test_a_queue_moving_in_the_statistics_with_no_trace_is_named_as_a_gap(published):
    from deltalake import DeltaTable

    gold = DeltaTable(str(published.lake / "gold" / "queue_depth")).to_pandas()
    assert "APP.AUDIT" not in set(gold.queue) and list(gold[gold.queue == "Q1"].depth) == [1, 0]
    code, out = _depth(published.lake, "--queue", "APP.AUDIT", "--qmgr", "QM2", "--json")
    assert code == 0
    found = json.loads(out)
    assert found["lines"] == [] and [(g["qmgr"], g["queue"]) for g in found["gaps"]] == [("QM2", "APP.AUDIT")]
    assert found["gaps"][0]["reason"].startswith("MQ's statistics show the depth moving in 1 interval(s) (the "
                                                 "first 07:00:00-07:30:00) but the trace holds no put or get")
