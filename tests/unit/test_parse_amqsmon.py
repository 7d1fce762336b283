"""amqsmon queue accounting / statistics and channel statistics output."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

import pytest

from clwl.parse.amqsmon import (
    ChannelStatisticsRecord,
    QueueAccountingRecord,
    parse_amqsmon_file,
    parse_amqsmon_text,
)
from clwl.parse.common import InputError

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "amqsmon"

# (rows, problems, skipped) per fixture, counted by hand from the files:
# accounting_qm2: 1 + 3 + (3 groups: 2 bad) + (1 record, bad interval) + (2 groups: 1 bad); 1 MQIAccounting
# statistics_qm3: 2 groups + 1 top-level + (ObjectCount 3, 2 groups: 1 problem) + 1 channel group; MQIStatistics
# damaged: a stray line, a record with a malformed header line, a bad date, an unknown type, a bad integer
# channel_statistics_qm1: 3 channel groups + (ObjectCount 3: 1 good group, 1 without ChannelName, 1 missing);
#   MQIStatistics
EXPECTED = {
    "accounting_qm2.txt": (6, 4, 1),
    "statistics_qm3.txt": (6, 1, 1),
    "damaged.txt": (0, 5, 0),
    "channel_statistics_qm1.txt": (4, 2, 1),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_read_equals_accepted_plus_skipped_plus_quarantined(name):
    records, problems, skipped = parse_amqsmon_file(FIX / name)
    assert (len(records), len(problems), skipped) == EXPECTED[name]
    assert all(isinstance(r, (QueueAccountingRecord, ChannelStatisticsRecord)) for r in records)
    assert all(p.source == str(FIX / name) and p.raw for p in problems)


def test_queue_accounting_as_in_the_domain_notes():
    records, _, _ = parse_amqsmon_file(FIX / "accounting_qm2.txt")
    first = records[0]
    assert first == QueueAccountingRecord(
        source=str(FIX / "accounting_qm2.txt"),
        line=15,
        monitoring_type="QueueAccounting",
        qmgr="QM1",
        interval_start=datetime(2025, 5, 1, 10, 0, 0),
        interval_end=datetime(2025, 5, 1, 10, 30, 0),
        queue="SYSTEM.CLUSTER.TRANSMIT.QUEUE",
        queue_type="Local",
        put_count_nonpersistent=0,
        put_count_persistent=120,
        put1_count_nonpersistent=0,
        put1_count_persistent=0,
        put_fail_count=0,
        put_bytes_nonpersistent=0,
        put_bytes_persistent=122880,
        application_name="orders-producer",
        connection_id="414D5143514D312020202020202020205A45396A02290040",
    )


def test_object_count_three_gives_three_rows():
    records, _, _ = parse_amqsmon_file(FIX / "accounting_qm2.txt")
    group = [r for r in records if r.qmgr == "QM2" and r.interval_start == datetime(2025, 5, 1, 10, 0)]
    assert [(r.line, r.queue) for r in group] == [
        (66, "APP.ORDERS"), (82, "APP.PAYMENTS"), (94, "SYSTEM.CLUSTER.COMMAND.QUEUE")]
    payments = group[1]
    assert (payments.put_count_nonpersistent, payments.put_count_persistent) == (2, 36)
    assert (payments.put_bytes_nonpersistent, payments.put_bytes_persistent) == (400, 36864)
    assert payments.put_fail_count == 1
    assert group[2].put1_count_persistent == 2
    assert {r.application_name for r in group} == {"amqrmppa"}


def test_accounting_problems():
    _, problems, _ = parse_amqsmon_file(FIX / "accounting_qm2.txt")
    assert [(p.line, p.reason) for p in problems] == [
        (121, "missing QueueName in QueueAccounting group"),
        (129, "PutCount is not an int list [a, b]: '[0, 12, 3]'"),
        (144, "bad IntervalEndTime '11.61.00'"),
        (174, "malformed line (no 'Label: value'): 'PutCount [0, 66]'"),
    ]
    # a group problem carries the group's lines, a record problem the whole record
    assert problems[1].raw.startswith("QueueAccounting: 1\n  QueueName: 'APP.PAYMENTS'")
    assert problems[2].raw.startswith("MonitoringType: QueueAccounting\n")


def test_statistics_grouped_and_top_level():
    rows, problems, skipped = parse_amqsmon_file(FIX / "statistics_qm3.txt")
    records = [r for r in rows if isinstance(r, QueueAccountingRecord)]
    assert {r.monitoring_type for r in records} == {"QueueStatistics"}
    assert all(r.application_name is None and r.connection_id is None for r in records)
    assert [(r.line, r.queue, r.put_count_persistent) for r in records] == [
        (9, "APP.ORDERS", 81), (32, "APP.PAYMENTS", 33), (49, "APP.ORDERS", 77),
        (112, "APP.ORDERS", 70), (119, "APP.PAYMENTS", 29)]
    # HH:MM:SS accepted as well as HH.MM.SS
    assert records[2].interval_start == datetime(2025, 5, 1, 10, 30)
    assert records[2].interval_end == datetime(2025, 5, 1, 11, 0)
    assert records[0].queue_type == "Predefined"
    assert [(p.line, p.reason) for p in problems] == [(104, "ObjectCount 3 but only 2 queue groups")]
    assert skipped == 1  # the MQIStatistics record
    # the receiver's channel record (line 96): its incoming cluster receiver channel
    (channel,) = [r for r in rows if isinstance(r, ChannelStatisticsRecord)]
    assert (channel.line, channel.qmgr, channel.channel, channel.channel_type, channel.remote_qmgr,
            channel.connection_name, channel.msg_count, channel.total_bytes) == (
        96, "QM3", "TO.QM3", "ClusRcvr", "QM1", "10.1.2.10", 114, 116936)


def test_statistics_qmin_and_qmax_depth():
    """The fixture's groups print QMinDepth / QMaxDepth as amqsmon does (plain integers): 0/14 and 0/3 in the
    first record, 0/9 at the top level of the second; the third record prints none (None). Accounting records
    never carry them."""
    rows, _, _ = parse_amqsmon_file(FIX / "statistics_qm3.txt")
    queues = [r for r in rows if isinstance(r, QueueAccountingRecord)]
    assert [(r.queue, r.q_min_depth, r.q_max_depth) for r in queues] == [
        ("APP.ORDERS", 0, 14), ("APP.PAYMENTS", 0, 3), ("APP.ORDERS", 0, 9), ("APP.ORDERS", None, None),
        ("APP.PAYMENTS", None, None)]
    acct, _, _ = parse_amqsmon_file(FIX / "accounting_qm2.txt")
    assert all(r.q_min_depth is None and r.q_max_depth is None for r in acct)


STATS_RECORD = ("MonitoringType: QueueStatistics\nQueueManager: 'QM3'\nIntervalStartDate: '2025-05-01'\n"
                "IntervalStartTime: '10.00.00'\nIntervalEndDate: '2025-05-01'\nIntervalEndTime: '10.30.00'\n"
                "ObjectCount: 2\nQueueStatistics: 0\n  QueueName: 'A'\n  QMinDepth: {lo}\n  QMaxDepth: {hi}\n"
                "QueueStatistics: 1\n  QueueName: 'B'\n  QMinDepth: 1\n  QMaxDepth: 2\n")


@pytest.mark.parametrize("lo,hi,reason", [
    ("none", "3", "QMinDepth is not an integer: 'none'"),
    ("0", "[0, 3]", "QMaxDepth is not an integer: '[0, 3]'"),
    ("-1", "3", "QMinDepth is negative: -1"),
    ("5", "3", "QMinDepth 5 is above QMaxDepth 3"),
])
def test_a_malformed_depth_costs_its_queue_row_only(lo, hi, reason):
    records, problems, _ = parse_amqsmon_text(STATS_RECORD.format(lo=lo, hi=hi), "t")
    assert [(r.queue, r.q_min_depth, r.q_max_depth) for r in records] == [("B", 1, 2)]
    assert [(p.line, p.reason) for p in problems] == [(8, reason)]


def test_damaged_file():
    _, problems, _ = parse_amqsmon_file(FIX / "damaged.txt")
    assert [(p.line, p.reason) for p in problems] == [
        (1, "line outside any record"),
        (2, "malformed line (no 'Label: value'): 'ObjectCount 1'"),
        (19, "bad IntervalStartDate '2025-02-30'"),
        (33, "unknown MonitoringType 'QueueEvents'"),
        (44, "PutFailCount is not an integer: 'none'"),
    ]
    assert problems[0].raw == "amqsmon output captured on qm2host 2025-05-01"


RECORD = """\
MonitoringType: QueueAccounting
QueueManager: 'QM9'
IntervalStartDate: '{date}'
IntervalStartTime: '{time}'
IntervalEndDate: '2025-05-01'
IntervalEndTime: '10.30.00'
ApplicationName: 'app'
ObjectCount: 1
QueueAccounting: 0
  QueueName: 'Q1'
  PutCount: {puts}
"""


@pytest.mark.parametrize(
    "date,time,puts,reason",
    [
        ("2025-05-01", "10.00.00", "[0, 5]", None),
        ("2025-05-01", "10:00:00", "[ 0 ,5 ]", None),
        ("01/05/2025", "10.00.00", "[0, 5]", "bad IntervalStartDate '01/05/2025'"),
        ("2025-05-01", "10.0.00", "[0, 5]", "bad IntervalStartTime '10.0.00'"),
        ("2025-05-01", "24.00.00", "[0, 5]", "bad IntervalStartTime '24.00.00'"),
        ("2025-05-01", "10.00.00", "5", "PutCount is not an int list [a, b]: '5'"),
        ("2025-05-01", "10.00.00", "[0, five]", "PutCount is not an int list [a, b]: '[0, five]'"),
        ("2025-05-01", "10.00.00", "[0]", "PutCount is not an int list [a, b]: '[0]'"),
    ],
)
def test_values(date, time, puts, reason):
    records, problems, _ = parse_amqsmon_text(RECORD.format(date=date, time=time, puts=puts), "t")
    if reason is None:
        assert problems == [] and records[0].put_count_persistent == 5
        assert records[0].put1_count_persistent is None  # absent, not invented
    else:
        assert records == [] and [p.reason for p in problems] == [reason]


def test_missing_header_fields():
    text = RECORD.format(date="2025-05-01", time="10.00.00", puts="[0, 1]")
    _, p1, _ = parse_amqsmon_text(text.replace("IntervalStartDate: '2025-05-01'\n", ""), "t")
    _, p2, _ = parse_amqsmon_text(text.replace("QueueManager: 'QM9'\n", ""), "t")
    _, p3, _ = parse_amqsmon_text(text.replace("QueueAccounting: 0\n  QueueName: 'Q1'\n  PutCount: [0, 1]\n", ""), "t")
    assert [p.reason for p in p1 + p2 + p3] == [
        "missing IntervalStartDate", "missing QueueManager",
        "no queue in record (no QueueName and no queue groups)"]


def test_skipped_types_are_counted_not_reported():
    text = "MonitoringType: MQIAccounting\nQueueManager: 'QM1'\nPutCount: [0, 3]\n\n" \
           "MonitoringType: MQIStatistics\nQueueManager: 'QM1'\n"
    assert parse_amqsmon_text(text, "t") == ([], [], 2)


def test_unusable_files(tmp_path):
    with pytest.raises(InputError, match="not amqsmon output"):
        parse_amqsmon_file(FIX / "not_amqsmon.txt")
    with pytest.raises(InputError, match="file not found"):
        parse_amqsmon_file(tmp_path / "nope.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    assert parse_amqsmon_file(empty) == ([], [], 0)


def test_records_are_frozen():
    records, _, _ = parse_amqsmon_file(FIX / "statistics_qm3.txt")
    with pytest.raises(dataclasses.FrozenInstanceError):
        records[0].queue = "X"  # type: ignore[misc]


# Issue 17 item 4: fields amqsmon prints by number (a parameter missing from its name table)


def test_fields_printed_by_number_are_kept_not_quarantined():
    records, problems, skipped = parse_amqsmon_file(FIX / "accounting_numbered_fields.txt")
    # before: "1505: 7" was a malformed line and the whole SCTQ group (PutCount [0, 120] included) quarantined
    assert (len(records), problems, skipped) == (2, [], 0)
    sctq, orders = records
    assert (sctq.queue, sctq.put_count_persistent, sctq.put_bytes_persistent) == (
        "SYSTEM.CLUSTER.TRANSMIT.QUEUE", 120, 122880)
    # the record's own numbered field, then the group's, as printed
    assert sctq.unknown_fields == (("1443", "'orders-producer-7f9c'"), ("1505", "7"), ("1506", "[0, 3]"))
    assert (orders.queue, orders.put_count_nonpersistent, orders.unknown_fields) == (
        "APP.ORDERS", 4, (("1443", "'orders-producer-7f9c'"),))


# Issue 16 item 3: ChannelStatistics records (amqsmon -t statistics), as amqsmon prints them (fixture README)


def test_channel_statistics_as_amqsmon_prints_them():
    path = FIX / "channel_statistics_qm1.txt"
    records, problems, skipped = parse_amqsmon_file(path)
    assert skipped == 1  # the MQIStatistics record between the two channel records
    assert all(isinstance(r, ChannelStatisticsRecord) for r in records)
    # the first group, every field as printed (lines 9-25 of the fixture)
    assert records[0] == ChannelStatisticsRecord(
        source=str(path), line=9, qmgr="QM1",
        interval_start=datetime(2025, 5, 1, 10, 0), interval_end=datetime(2025, 5, 1, 10, 30),
        channel="TO.QM2", channel_type="ClusSdr", remote_qmgr="QM2", connection_name="10.1.2.11(1414)",
        msg_count=118, total_bytes=120832, net_time_min=412, net_time_avg=655, net_time_max=2390,
        exit_time_min=0, exit_time_avg=0, exit_time_max=0, full_batch_count=0, incomplete_batch_count=96,
        average_batch_size=1, put_retry_count=0)
    assert [(r.line, r.channel, r.channel_type, r.remote_qmgr, r.msg_count, r.interval_start.time().isoformat())
            for r in records] == [
        (9, "TO.QM2", "ClusSdr", "QM2", 118, "10:00:00"),
        (26, "TO.QM3", "ClusSdr", "QM3", 114, "10:00:00"),
        (43, "TO.QM1", "ClusRcvr", "QM2", 7, "10:00:00"),
        (76, "TO.QM2", "ClusSdr", "QM2", 97, "10:30:00"),
    ]
    receiver = records[2]
    # a receiver prints no net or exit times: absent, not invented
    assert (receiver.net_time_avg, receiver.exit_time_max, receiver.total_bytes) == (None, None, 2240)
    # a parameter printed by number is kept with its row
    assert records[3].unknown_fields == (("1677", "3"),)
    assert [(p.line, p.reason) for p in problems] == [
        (94, "missing ChannelName in ChannelStatistics group"),
        (68, "ObjectCount 3 but only 2 channel groups"),
    ]
    assert problems[0].raw.startswith("ChannelStatistics: 1\n  ChannelType: ClusSdr")


CHANNEL_RECORD = """\
MonitoringType: ChannelStatistics
QueueManager: 'QM1'
IntervalStartDate: '2025-05-01'
IntervalStartTime: '10.00.00'
IntervalEndDate: '2025-05-01'
IntervalEndTime: '10.30.00'
ObjectCount: 1
{body}"""


def test_channel_fields_by_the_pcf_reference_names_and_at_the_top_level():
    # The PCF reference's spellings (another formatter, or another amqsmon build) read the same fields.
    grouped = CHANNEL_RECORD.format(body="ChannelStatistics: 0\n  ChannelName: 'TO.QM2'\n  ChannelType: ClusSdr\n"
                                         "  RemoteQmgr: 'QM2'\n  ConnectionName: 'h(1414)'\n  MsgCount: 5\n"
                                         "  NetTimeMin: 1\n  NetTimeAvg: 2\n  NetTimeMax: 3\n  ExitTimeAvg: 4\n")
    (r,), problems, _ = parse_amqsmon_text(grouped, "t")
    assert problems == []
    assert (r.remote_qmgr, r.connection_name, r.msg_count, r.net_time_min, r.net_time_avg, r.net_time_max,
            r.exit_time_avg) == ("QM2", "h(1414)", 5, 1, 2, 3, 4)
    # channel fields printed without a group (as a QueueStatistics record may print its queue): one row
    top = CHANNEL_RECORD.format(body="ChannelName: 'TO.QM3'\nChannelType: ClusSdr\nMsgCount: 9\n")
    (r,), problems, _ = parse_amqsmon_text(top, "t")
    assert (problems, r.line, r.channel, r.msg_count, r.remote_qmgr) == ([], 1, "TO.QM3", 9, None)


@pytest.mark.parametrize("body,reason", [
    ("", "no channel in record (no ChannelName and no channel groups)"),
    ("ChannelStatistics: 0\n  ChannelName: 'C'\n  MsgCount: [0, 1]\n", "MsgCount is not an integer: '[0, 1]'"),
    ("ChannelStatistics: 0\n  ChannelName: 'C'\n  MsgCount: 99999999999999999999\n",
     "MsgCount 99999999999999999999 is out of range (-9223372036854775808..9223372036854775807)"),
    ("ChannelStatistics: 0\n  ChannelName: 'C'\n  MsgCount 3\n", "malformed line (no 'Label: value'): 'MsgCount 3'"),
])
def test_channel_problems(body, reason):
    records, problems, _ = parse_amqsmon_text(CHANNEL_RECORD.format(body=body), "t")
    assert records == [] and [p.reason for p in problems] == [reason]
