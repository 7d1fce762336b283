"""A landing folder with an application activity trace and no puts.csv replays every traced put, and the replay
is checked per message against MQ's own answer (issue 16, items 1 and 2).

The estate is written by hand. The captures come from tests/handmade.py (runmqsc's printed shape). The trace is
in the exact layout amqsact -v prints (docs/activity-trace.md, "What amqsact prints": header block, `MQI
Operation: n` groups indented by two blanks, 16-byte hex dump lines, 77 `=` after each trace message,
`<n> Records Processed.`), at trace level MEDIUM (`Trace Detail Level: 2`), so every put carries
`Resolved_Q_mgr` and `Resolved_local_Q_name`.

QM1's view (06:00 capture): cluster CL1, CLUS.Q hosted on QM2 and QM3 (DEFBIND NOTFIXED, PUT ENABLED, rank and
priority 0), CLUSSDR TO.QM2 and TO.QM3 both RUNNING with CLWLWGHT 50, transmission queue
SYSTEM.CLUSTER.TRANSMIT.QUEUE (DEFCLXQ SCTQ).

The application `payments` on QM1 opens CLUS.Q once with MQOO_BIND_NOT_FIXED (Open_options 40976 = 0x8000
BIND_NOT_FIXED + 0x2000 FAIL_IF_QUIESCING + 0x10 OUTPUT) and puts four messages on that handle, then one
MQPUT1 that names QM3. The connection's calls are split over two trace messages (SeqNumber 0 and 1) in two
files, QM1.2026-11-20.01.amqsact and .02.amqsact: the handle opened in the first file is used in the second,
so the ingest must hand the parser's state from one file to the next.

What the algorithm picks (docs/algorithm.md, step 12 with equal weights: the lowest DestSeqFactor, then the
lowest DestSeqNumber, then the name; each choice adds 1000/CLWLWGHT = 20 to the chosen destination's factor
and gives it the next sequence number; steps 1-11 keep both instances: same rank, same priority, both
channels RUNNING):

  P1 10:00:01  factors QM2 0, QM3 0: equal, no sequence numbers yet -> QM2 by name    QM2 20 DSN 1
  P2 10:00:02  QM3 0 < QM2 20                                       -> QM3            QM3 20 DSN 2
  P3 10:00:03  QM2 20 = QM3 20, DSN QM2 1 < QM3 2                   -> QM2            QM2 40 DSN 3
  P4 10:00:04  QM3 20 < QM2 40                                      -> QM3            QM3 40 DSN 4
  P5 10:00:05  MQPUT1 naming QM3: step 2 keeps only QM3             -> QM3

MQ's answers in the trace (Resolved_Q_mgr / Resolved_local_Q_name):

  P1 QM2 / SYSTEM.CLUSTER.TRANSMIT.QUEUE       agrees
  P2 QM3 / SYSTEM.CLUSTER.TRANSMIT.QUEUE       agrees
  P3 QM3 / SYSTEM.CLUSTER.TRANSMIT.QUEUE       disagrees: the replay says QM2 (deliberate)
  P4 QM3 / SYSTEM.CLUSTER.TRANSMIT.TO.QM3      disagrees: same queue manager, but another transmission queue
                                               than the replay's SYSTEM.CLUSTER.TRANSMIT.QUEUE (both known)
  P5 QM3 / SYSTEM.CLUSTER.TRANSMIT.QUEUE       agrees

So run_summary: traced 5, agreed 3, disagreed 2, and the day publishes (a disagreement never blocks the gate).
Operations: file 1 MQCONNX, MQOPEN, MQPUT, MQPUT (4); file 2 MQPUT, MQPUT, MQPUT1, MQINQ, MQCLOSE, MQDISC (6).
Records of a trace file are its operations and its put events: file 1 reads 4 + 2, file 2 reads 6 + 3.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.handmade import chstatus_capture, config_capture, write_day

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAY = "2026-11-20"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
CONNECTION = b"AMQCQM1         " + bytes.fromhex("6B576B5420000701")


def _dump(data: bytes, indent: str = "") -> list[str]:
    """amqsact's hex dump: `%08X: `, 16 bytes a line as 4-digit groups, then the printable column in quotes."""
    lines = []
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        groups = " ".join(chunk[i:i + 2].hex().upper() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{indent}{off:08X}:  {groups:<39}  '{text:<16}'")
    return lines


def msg_id(n: int) -> bytes:
    return b"AMQ QM1         " + n.to_bytes(8, "big")


def _micros(hh: int, mm: int, ss: int) -> int:
    return int(datetime(2026, 11, 20, hh, mm, ss, tzinfo=timezone.utc).timestamp()) * 1_000_000


def _common(op_id: str, hh: int, mm: int, ss: int) -> list[str]:
    return [f"  Operation Id: {op_id}", "  ApplicationTid: 1", f"  OperationDate: '{DAY}'",
            f"  OperationTime: '{hh:02d}:{mm:02d}:{ss:02d}'"]


def _put(n: int, ss: int, resolved_qmgr: str, local_q: str, put1_target: str | None = None) -> list[str]:
    if put1_target is None:
        head = _common("MQXF_PUT", 10, 0, ss) + ["  Hobj: 2", "  Put Options: 8260"]
    else:
        head = _common("MQXF_PUT1", 10, 0, ss) + ["  Object_type: MQOT_Q", "  Object_name: 'CLUS.Q'",
                                                  f"  Object_Q_mgr_name: '{put1_target}'", "  Put Options: 8260"]
    return head + [
        "  Completion Code: MQCC_OK", "  Reason Code: 0", "  Msg length: 100", "  Known_dest_count: 0",
        "  Unknown_dest_count: 1", "  Invalid_dest_count: 0", f"  High Res Time: {_micros(10, 0, ss)}",
        "  Object_name: 'CLUS.Q'", "  Resolved_Q_Name: 'CLUS.Q'", f"  Resolved_Q_mgr: '{resolved_qmgr}'",
        f"  Resolved_local_Q_name: '{local_q}'", "  Resolved_local_Q_mgr: 'QM1'", "  Report Options: 0",
        "  Msg_type: MQMT_DATAGRAM", "  Expiry: -1", "  Format_name: 'MQSTR'", "  Priority: 0",
        "  Persistence: 1", "  Msg_id:", *_dump(msg_id(n), "  "), "  Correl_id:", *_dump(bytes(24), "  "),
        "  Reply_to_Q : ''", "  Reply_to_Q_Mgr: 'QM1'", "  Coded_char_set_id: 1208", "  Encoding: 546",
        "  Put_date: '20261120'", f"  Put_time: '1000{ss:02d}00'", "  Resolved_type: MQOT_Q",
        "  QMgr Operation Duration: 41"]


def _trace_message(seq: int, operations: list[list[str]]) -> list[str]:
    out = ["MonitoringType: MQI Activity Trace", "Correl_id:", *_dump(CONNECTION), "QueueManager: 'QM1'",
           "Host Name: 'host-qm1'", f"IntervalStartDate: '{DAY}'", "IntervalStartTime: '10:00:00'",
           f"IntervalEndDate: '{DAY}'", "IntervalEndTime: '10:00:06'", "CommandLevel: 930", f"SeqNumber: {seq}",
           "ApplicationName: 'payments'", "Application Type: MQAT_UNIX", "ApplicationPid: 4001",
           "UserId: 'app'", "API Caller Type: MQXACT_EXTERNAL", "API Environment: MQXE_OTHER",
           "Application Function: ''", "Appl Function Type: MQFUN_TYPE_UNKNOWN", "Trace Detail Level: 2",
           "Trace Data Length: 0", "Pointer size: 8", "Platform: MQPL_UNIX"]
    for n, op in enumerate(operations):
        out += [f"MQI Operation: {n}", *op]
    return out + ["=" * 77, ""]


def connect_and_open() -> list[list[str]]:
    """MQCONNX, then MQOPEN of CLUS.Q with BIND_NOT_FIXED (handle 2), at 10:00:00."""
    return [
        _common("MQXF_CONNX", 10, 0, 0) + ["  Completion Code: MQCC_OK", "  Reason Code: 0", "  Connect Options: 0",
                                           f"  High Res Time: {_micros(10, 0, 0)}"],
        _common("MQXF_OPEN", 10, 0, 0) + [
            "  Object_type: MQOT_Q", "  Object_name: 'CLUS.Q'", "  Object_Q_mgr_name: ''", "  Hobj: 2",
            "  Completion Code: MQCC_OK", "  Reason Code: 0", "  Open_options: 40976", "  Known_dest_count: 0",
            "  Unknown_dest_count: 0", "  Invalid_dest_count: 0", f"  High Res Time: {_micros(10, 0, 0) + 500}",
            "  Resolved_Q_Name: 'CLUS.Q'", "  Resolved_Q_mgr: 'QM2'", f"  Resolved_local_Q_name: '{SCTQ}'",
            "  Resolved_local_Q_mgr: 'QM1'", "  Resolved_type: MQOT_Q", "  QMgr Operation Duration: 120"],
    ]


def trace_files() -> dict[str, str]:
    first = _trace_message(0, [
        *connect_and_open(),
        _put(1, 1, "QM2", SCTQ),
        _put(2, 2, "QM3", SCTQ),
    ])
    second = _trace_message(1, [
        _put(3, 3, "QM3", SCTQ),  # the deliberate disagreement: the replay picks QM2
        _put(4, 4, "QM3", "SYSTEM.CLUSTER.TRANSMIT.TO.QM3"),  # same qmgr, another transmission queue
        _put(5, 5, "QM3", SCTQ, put1_target="QM3"),
        _common("MQXF_INQ", 10, 0, 5) + ["  Hobj: 2", "  Completion Code: MQCC_OK", "  Reason Code: 0"],
        _common("MQXF_CLOSE", 10, 0, 6) + ["  Hobj: 2", "  Completion Code: MQCC_OK", "  Reason Code: 0",
                                           "  Close Options: 0"],
        _common("MQXF_DISC", 10, 0, 6) + ["  Completion Code: MQCC_OK", "  Reason Code: 0"],
    ])
    return {"QM1.2026-11-20.01.amqsact": "\n".join(first + ["1 Records Processed.", ""]),
            "QM1.2026-11-20.02.amqsact": "\n".join(second + ["1 Records Processed.", ""])}


def test_a_traced_day_replays_every_put_and_compares_it_with_mq(spark, tmp_path):
    from clwl.lake.door import Lake
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    landing = tmp_path / "landing"
    write_day(landing, DAY, "QM1", {
        "config_060000.mqsc": config_capture("QM1", {"QM2": {}, "QM3": {}}, {"CLUS.Q": {"QM2": {}, "QM3": {}}}),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        **trace_files(),
    })
    config = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    (day,) = outcome.dates
    assert day.published, day.failures  # two disagreements, and the gate still passes

    def table(layer: str, name: str):  # through clwl.lake.door: bronze.put_records is a view
        return Lake(config.lake).rows(f"{layer}.{name}").to_pandas()

    ids = {n: msg_id(n).hex().upper() for n in range(1, 6)}

    # bronze: every operation of both files, and the five put events
    ops = table("bronze", "activity_operations")
    by_file = ops.groupby("source_file")["operation"].apply(list).to_dict()
    assert by_file == {f"{DAY}/QM1/QM1.2026-11-20.01.amqsact": ["MQCONNX", "MQOPEN", "MQPUT", "MQPUT"],
                       f"{DAY}/QM1/QM1.2026-11-20.02.amqsact": ["MQPUT", "MQPUT", "MQPUT1", "MQINQ", "MQCLOSE",
                                                                 "MQDISC"]}
    assert set(ops.format) == {"amqsact"} and set(ops.trace_level) == {"medium"}
    assert (ops.loc[ops.operation == "MQOPEN", "options"] == 40976).all()
    puts = table("bronze", "put_records")
    assert sorted(puts.msg_id) == sorted(ids.values()) and set(puts.format) == {"amqsact"}

    # silver: the events, from the trace, the handle of file 1 used in file 2
    events = table("silver", "message_events").set_index("msg_id")
    assert sorted(events.index) == sorted(ids.values())
    assert set(events.source) == {"activity_trace"}
    assert list(events.loc[[ids[n] for n in (1, 2, 3, 4)], "bind"]) == ["notfixed"] * 4
    assert events.loc[ids[3], "source_file"] == f"{DAY}/QM1/QM1.2026-11-20.02.amqsact"
    assert events.loc[ids[5], "target_qmgr"] == "QM3"

    # gold: every traced put replayed, with MQ's answer beside the replay's (derivation in the docstring)
    replay = table("gold", "routing_replay").set_index("msg_id")
    assert sorted(replay.index) == sorted(ids.values())
    order = [ids[n] for n in range(1, 6)]
    assert list(replay.loc[order, "final_qmgr"]) == ["QM2", "QM3", "QM2", "QM3", "QM3"]
    assert list(replay.loc[order, "decided_by"]) == ["12", "12", "12", "12", "2"]
    assert list(replay.loc[order, "observed_qmgr"]) == ["QM2", "QM3", "QM3", "QM3", "QM3"]
    assert list(replay.loc[order, "observed_xmitq"]) == [SCTQ, SCTQ, SCTQ, "SYSTEM.CLUSTER.TRANSMIT.TO.QM3", SCTQ]
    assert list(replay.loc[order, "final_xmitq"]) == [SCTQ] * 5
    assert list(replay.loc[order, "agrees"]) == [True, True, False, False, True]

    summary = table("gold", "run_summary").iloc[0]
    assert (summary.traced, summary.agreed, summary.disagreed) == (5, 3, 2)
    assert summary.messages_replayed == 5
    # records: captures' records + per trace file its operations and put events (4 + 2, 6 + 3); none quarantined
    assert summary.rows_read == summary.rows_accepted + summary.rows_quarantined
    assert summary.rows_quarantined == 0
    log = table("silver", "ingest_files").set_index("source_file")
    for name, n in (("QM1.2026-11-20.01.amqsact", 6), ("QM1.2026-11-20.02.amqsact", 9)):
        row = log.loc[f"{DAY}/QM1/{name}"]
        assert (row.format, row.status, row.records_read, row.records_accepted, row.records_quarantined) == (
            "amqsact", "ingested", n, n, 0)
