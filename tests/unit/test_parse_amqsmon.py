"""amqsmon queue accounting / statistics output."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

import pytest

from clwl.parse.amqsmon import QueueAccountingRecord, parse_amqsmon_file, parse_amqsmon_text
from clwl.parse.common import InputError

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "amqsmon"

# (rows, problems, skipped) per fixture, counted by hand from the files:
# accounting_qm2: 1 + 3 + (3 groups: 2 bad) + (1 record, bad interval) + (2 groups: 1 bad); 1 MQIAccounting
# statistics_qm3: 2 groups + 1 top-level + (ObjectCount 3, 2 groups: 1 problem); MQIStatistics, ChannelStatistics
# damaged: a stray line, a record with a malformed header line, a bad date, an unknown type, a bad integer
EXPECTED = {
    "accounting_qm2.txt": (6, 4, 1),
    "statistics_qm3.txt": (5, 1, 2),
    "damaged.txt": (0, 5, 0),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_read_equals_accepted_plus_skipped_plus_quarantined(name):
    records, problems, skipped = parse_amqsmon_file(FIX / name)
    assert (len(records), len(problems), skipped) == EXPECTED[name]
    assert all(isinstance(r, QueueAccountingRecord) for r in records)
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
    records, problems, skipped = parse_amqsmon_file(FIX / "statistics_qm3.txt")
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
    assert skipped == 2


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
           "MonitoringType: ChannelStatistics\nQueueManager: 'QM1'\n"
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
