"""A sender's amqsmon channel statistics as the second observed source of gold.distribution (issue 16 item 3).

The estate is written by hand (tests/handmade.py). QM1 puts to Q1, which has instances on QM2 and QM3 (DEFBIND
NOTFIXED, every weight 50); QM1's cluster sender channels TO.QM2 and TO.QM3 are RUNNING in the 09:00 capture.
40 puts of QM1 at 10:00:00, 10:00:40, ..., 10:26:00 (one every 40 s), none waiting.

Routing (docs/algorithm.md, step 12: lowest DestSeqFactor, then lowest DestSeqNumber, then name; each choice
adds 1000/50 = 20 to the chosen destination's factor): put 1 -> QM2 (all 0: name), put 2 -> QM3 (0 < 20), put
3 -> QM2 (20 = 20, DSN 1 < 2), put 4 -> QM3, ...: the odd puts leave by TO.QM2, the even ones by TO.QM3, so
20 messages on each channel, each delivered at its put time, all in [10:00, 10:30).

QM1's statistics.amqsmon (amqsmon's printed shape, as tests/fixtures/amqsmon/channel_statistics_qm1.txt):

  10:00-10:30  TO.QM2 ClusSdr MsgCount 20   -> expected 20, observed 20
               TO.QM3 ClusSdr MsgCount 45   -> expected 20, observed 45 (25 messages the replay has no put of)
               TO.QM1 ClusRcvr MsgCount 7   -> a receiving channel: not compared
  10:30-11:00  TO.QM2 ClusSdr MsgCount 3    -> after the replay's last put and delivery (10:26): not compared

Verdicts (clwl.analyses.distribution.judge_count: z = max(0, |o - e| - 0.5) / sqrt(max(e, 1)), p = erfc(z / sqrt 2),
unexpected below 0.01):
  TO.QM2: z = 0 -> p = 1.0 -> expected, "as the configuration predicts" (observed not above expected: no caveat)
  TO.QM3: z = 24.5 / sqrt(20) = 5.48 -> p = 4.3e-8 -> unexpected; observed 45 > 20: the explanation carries the
          caveat that MsgCount counts traffic the replay does not cover.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from tests.handmade import PUTS_HEADER, chstatus_capture, config_capture, put_row, write_day

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAY = "2026-11-20"
T10 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)


def _group(n: int, channel: str, kind: str, remote: str, msgs: int) -> str:
    return (f"ChannelStatistics: {n}\n  ChannelName: '{channel}'\n  ChannelType: {kind}\n  RemoteQMgr: '{remote}'\n"
            f"  ConnName: '{remote.lower()}.example.com(1414)'\n  MsgCount: {msgs}\n  TotalBytes: {msgs * 100}\n"
            f"  FullBatchCount: 0\n  IncmplBatchCount: {msgs}\n  AverageBatchSize: 1\n  PutRetryCount: 0\n")


def _record(start: str, end: str, groups: list[str]) -> str:
    return (f"MonitoringType: ChannelStatistics\nQueueManager: 'QM1'\nIntervalStartDate: '{DAY}'\n"
            f"IntervalStartTime: '{start}'\nIntervalEndDate: '{DAY}'\nIntervalEndTime: '{end}'\n"
            f"CommandLevel: 940\nObjectCount: {len(groups)}\n" + "".join(groups) + "\n")


STATISTICS = (
    _record("10.00.00", "10.30.00", [_group(0, "TO.QM2", "ClusSdr", "QM2", 20),
                                     _group(1, "TO.QM3", "ClusSdr", "QM3", 45),
                                     _group(2, "TO.QM1", "ClusRcvr", "QM2", 7)])
    + _record("10.30.00", "11.00.00", [_group(0, "TO.QM2", "ClusSdr", "QM2", 3)]))


def _landing(root):
    puts = [put_row(T10 + timedelta(seconds=40 * i), "QM1", "Q1", f"414D5120514D31202020202020202020{i + 1:016X}")
            for i in range(40)]
    write_day(root, DAY, "QM1", {
        "config_090000.mqsc": config_capture("QM1", {"QM2": {}, "QM3": {}}, {"Q1": {"QM2": {}, "QM3": {}}}),
        "chstatus_090000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        "puts.csv": "\n".join([PUTS_HEADER, *puts]) + "\n",
        "statistics.amqsmon": STATISTICS,
    })
    return root


def test_channel_statistics_against_the_replay(spark, tmp_path):
    from deltalake import DeltaTable

    from spark.config import PipelineConfig
    from spark.detect import CHANNEL_TRAFFIC_CAVEAT
    from spark.pipeline import run_pipeline

    config = PipelineConfig(lake=tmp_path / "lake", landing=_landing(tmp_path / "landing"))
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    (day,) = outcome.dates

    # Ingest: the four channel groups, in bronze and silver, none quarantined.
    silver = DeltaTable(str(config.lake / "silver" / "channel_statistics")).to_pandas().sort_values("position")
    assert list(zip(silver.channel, silver.channel_type, silver.msg_count)) == [
        ("TO.QM2", "ClusSdr", 20), ("TO.QM3", "ClusSdr", 45), ("TO.QM1", "ClusRcvr", 7), ("TO.QM2", "ClusSdr", 3)]
    assert set(silver.observing_qmgr) == {"QM1"}
    assert len(DeltaTable(str(config.lake / "bronze" / "channel_statistics")).to_pandas()) == 4
    assert len(DeltaTable(str(config.lake / "silver" / "quarantine")).to_pandas()) == 0

    # The replay as derived above: 20 messages on each channel.
    replay = DeltaTable(str(config.lake / "staging" / "routing_replay")).to_pandas()
    assert replay.final_channel.value_counts().to_dict() == {"TO.QM2": 20, "TO.QM3": 20}

    # Detect: the staged distribution rows of the channel statistics (staging is written before the gate).
    dist = DeltaTable(str(config.lake / "staging" / "distribution")).to_pandas()
    rows = dist[dist.source == "channel_statistics"].sort_values("channel")
    assert list(rows.channel) == ["TO.QM2", "TO.QM3"]  # no receiving channel, no interval after the replay
    assert set(rows.sending_qmgr) == {"QM1"} and set(rows.queue) == {"*"}
    assert list(rows.qmgr) == ["QM2", "QM3"]
    start = rows.interval_start.dt.tz_convert("UTC") if rows.interval_start.dt.tz else rows.interval_start
    end = rows.interval_end.dt.tz_convert("UTC") if rows.interval_end.dt.tz else rows.interval_end
    assert {str(t)[:19] for t in start} == {"2026-11-20 10:00:00"}
    assert {str(t)[:19] for t in end} == {"2026-11-20 10:30:00"}
    assert list(zip(rows.expected, rows.observed, rows.deviation)) == [(20, 20, 0.0), (20, 45, 25.0)]
    assert list(rows.verdict) == ["expected", "unexpected"]
    qm2, qm3 = rows.itertuples()
    assert qm2.p_value == 1.0
    assert qm3.p_value == pytest.approx(math.erfc(24.5 / math.sqrt(20) / math.sqrt(2)))
    assert qm2.explanation == "as the configuration predicts"
    assert qm3.explanation.startswith("observed 45 against 20.0 expected")
    assert qm3.explanation.endswith(CHANNEL_TRAFFIC_CAVEAT)
    # The other sources keep a null channel.
    assert dist[dist.source != "channel_statistics"].channel.isna().all()
    assert day.unexpected == 1
    # The quality gate reconciles channel-statistics rows per sender (sum(expected) <= messages put before the
    # interval's end): the day publishes, the unexpected row is a finding, not a failure.
    assert day.published, day.failures
    gold = DeltaTable(str(config.lake / "gold" / "distribution")).to_pandas()
    assert sorted(gold[gold.source == "channel_statistics"].channel) == ["TO.QM2", "TO.QM3"]
