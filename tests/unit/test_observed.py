"""The observed timeline of messages over channels, from the channel agents' activity trace (clwl/analyses/observed.py).

The traces are the fixtures tests/fixtures/amqsact_trace/mca_sender_qm1.amqsact (QM1's cluster-sender agents) and
mca_receiver_qm2.amqsact (QM2's cluster-receiver agent), parsed by the amqsact parser; the cases the fixtures do
not hold are hand-made operation rows with bronze.activity_operations' column names. Expected values are read off
the fixtures; each derivation is written in the test's docstring.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from clwl.analyses.observed import channel_events, observed_timeline
from clwl.lake.registry import spec
from clwl.parse.activity_trace import parse_activity_trace_file

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "amqsact_trace"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
T0 = datetime(2026, 11, 20, 10, 15, 30, tzinfo=timezone.utc)


def _msg_id(n: int) -> str:
    return ("AMQ QM1         ".encode().hex() + n.to_bytes(8, "big").hex()).upper()


def _traced():
    return [op for name in ("mca_sender_qm1.amqsact", "mca_receiver_qm2.amqsact")
            for op in parse_activity_trace_file(FIX / name).operations]


def _lake_rows(operations) -> list[dict]:
    """The operations as bronze.activity_operations rows (the ingest's row_from, by column name)."""
    t = spec("bronze.activity_operations")
    build = t.row_from(ingest_run_id="r", run_date=T0.date(), observing_qmgr="QM1", source_file="f", position=None,
                       format="amqsact", operation_index=None)
    rows = []
    for op in operations:
        row = dict(zip(t.columns, build(op)))
        row["position"], row["operation_index"] = op.line, op.index
        rows.append(row)
    return rows


def test_the_fixtures_give_each_message_its_departure_and_arrival():
    """QM1's agents got four messages from SYSTEM.CLUSTER.TRANSMIT.QUEUE (ids in the transmission headers):

    * msg 1 on CLUSTER1.QM2 at 10:15:30.180000, addressed QM2/CLUS.Q, committed at .19; QM2's receiver put it to
      CLUS.Q at .230000 (committed at .24): transit 50 ms;
    * msg 4 on CLUSTER1.QM2 at .181000 to QM2/ORDERS.IN; MQPUT1 to ORDERS.IN on QM2 at .231000: 50 ms;
    * msg 2 on CLUSTER1.QM3: got at .500000 and backed out (MQBACK at .6: it went back to the queue), got again at
      10:15:35.000000 and committed: it left at 10:15:35. QM3 was not traced: no arrival;
    * msg 3 on CLUSTER1.QM3 at 10:15:35.010000, no arrival.
    The failed MQGET (2033, queue empty) carries no header: no event."""
    timeline = observed_timeline(_traced())
    assert list(timeline) == [_msg_id(1), _msg_id(2), _msg_id(3), _msg_id(4)]
    one = timeline[_msg_id(1)]
    assert (one.left_xmitq_at, one.left_qmgr, one.xmitq, one.channel, one.remote_qmgr, one.remote_queue) == (
        T0 + timedelta(microseconds=180_000), "QM1", SCTQ, "CLUSTER1.QM2", "QM2", "CLUS.Q")
    assert (one.arrived_at, one.arrived_qmgr, one.arrival_channel, one.target_queue) == (
        T0 + timedelta(microseconds=230_000), "QM2", "CLUSTER1.QM2", "CLUS.Q")
    assert (one.left_committed, one.arrived_committed, one.departures, one.arrivals) == (True, True, 1, 1)
    assert one.transit == timedelta(milliseconds=50)
    four = timeline[_msg_id(4)]
    assert (four.remote_queue, four.target_queue, four.transit) == ("ORDERS.IN", "ORDERS.IN", timedelta(milliseconds=50))
    two = timeline[_msg_id(2)]
    assert (two.left_xmitq_at, two.channel, two.remote_qmgr, two.departures) == (
        T0 + timedelta(seconds=5), "CLUSTER1.QM3", "QM3", 1)
    assert (two.arrived_at, two.arrived_qmgr, two.target_queue, two.arrivals, two.transit) == (
        None, None, None, 0, None)
    assert timeline[_msg_id(3)].left_xmitq_at == T0 + timedelta(seconds=5, microseconds=10_000)


def test_lake_rows_in_any_order_give_the_same_timeline():
    """The same operations as bronze.activity_operations rows (mappings, position/operation_index/source_file as
    the registry names them), shuffled: the connection's order is SeqNumber then n, whatever the row order."""
    rows = _lake_rows(_traced())
    random.Random(7).shuffle(rows)
    assert observed_timeline(rows) == observed_timeline(_traced())


def _row(op: str, n: int, **kw) -> dict:
    """A hand-made operation row of connection C, SeqNumber 0, operation n, at T0 + n ms."""
    row = {"connection": "C", "seq_number": 0, "operation_index": n, "operation": op, "comp_code": "MQCC_OK",
           "operation_time": T0 + timedelta(milliseconds=n), "qmgr": "QM1", "channel_name": "TO.QM2",
           "channel_type": "MQCHT_SENDER", "api_environment": "MQXE_MCA", "object_name": "QM2.XMITQ",
           "options": 0x2, "msg_id": None, "xmitq_msg_id": None, "xmitq_remote_qmgr": "QM2",
           "xmitq_remote_queue": "Q"}
    row.update(kw)
    return row


def _get(n: int, msg: int, **kw) -> dict:
    return _row("MQGET", n, msg_id=_msg_id(0x1000 + msg), xmitq_msg_id=_msg_id(msg), **kw)


def _put(n: int, msg: int, **kw) -> dict:
    kw = {"msg_id": _msg_id(msg), "qmgr": "QM2", "channel_type": "MQCHT_RECEIVER", "object_name": "Q",
          "xmitq_remote_qmgr": None, "xmitq_remote_queue": None, "connection": "R", **kw}
    return _row("MQPUT", n, **kw)


def test_an_open_unit_of_work_is_kept_uncommitted_and_a_failed_commit_drops_it():
    """Connection C gets msg 1 under syncpoint (Get Options 0x2) and commits with MQCC_FAILED (2003, backed out):
    msg 1 went back to the queue, no departure. Then it gets msg 2 under syncpoint and the trace ends: msg 2
    left as far as the trace shows, committed False. Msg 3 is got outside syncpoint (options 0): it is gone at
    once, committed True, whatever follows."""
    rows = [_get(1, 1), _row("MQCMIT", 2, comp_code="MQCC_FAILED"), _get(3, 2), _get(4, 3, options=0),
            _row("MQBACK", 5)]
    timeline = observed_timeline(rows)
    assert list(timeline) == [_msg_id(3)]
    rows = rows[:4]  # the trace ends before the MQBACK: msg 2's unit of work is open
    timeline = observed_timeline(rows)
    assert {k: (v.left_committed, v.left_xmitq_at) for k, v in timeline.items()} == {
        _msg_id(2): (False, T0 + timedelta(milliseconds=3)), _msg_id(3): (True, T0 + timedelta(milliseconds=4))}


def test_a_disconnect_commits_and_a_browse_is_no_departure():
    """MQDISC ends the connection's unit of work as a normal disconnect does: committed. An MQGET with
    MQGMO_BROWSE_FIRST (0x10) leaves the message on the queue (a transmission-queue browse, as the capture kit
    takes): no departure."""
    rows = [_get(1, 1, options=0x10), _get(2, 2), _row("MQDISC", 3)]
    timeline = observed_timeline(rows)
    assert list(timeline) == [_msg_id(2)] and timeline[_msg_id(2)].left_committed is True


def test_only_receiving_agents_puts_are_arrivals():
    """A receiver-type agent's put (MQCHT_RECEIVER) is an arrival; so is an MCA's (API Environment MQXE_MCA)
    whose header names no channel type. A client application's put through a SVRCONN (MQXE_MCA_SVRCONN) and a
    sender agent's put (a report to its dead-letter queue, say) are not. A put at LOW carries no Msg_id: none."""
    rows = [_put(1, 1), _put(2, 2, channel_type=None), _put(3, 3, channel_type="MQCHT_SVRCONN",
                                                            api_environment="MQXE_MCA_SVRCONN"),
            _put(4, 4, channel_type="MQCHT_CLUSSDR"), _put(5, 5, msg_id=None)]
    assert sorted(observed_timeline(rows)) == [_msg_id(1), _msg_id(2)]
    arrival = observed_timeline(rows)[_msg_id(1)]
    assert (arrival.arrived_qmgr, arrival.target_queue, arrival.left_xmitq_at, arrival.departures) == (
        "QM2", "Q", None, 0)


def test_a_relayed_message_gives_its_first_departure_and_last_arrival():
    """Msg 1 leaves QM1 (TO.GW at +1 ms), arrives on gateway GW's transmission queue (+5 ms), leaves GW (TO.QM2,
    +7 ms) and arrives on QM2's Q (+9 ms): left QM1 at +1 ms, arrived QM2 at +9 ms, two of each."""
    rows = [_get(1, 1, channel_name="TO.GW"), _put(5, 1, qmgr="GW", object_name="QM2.XMITQ", connection="G1"),
            _get(7, 1, qmgr="GW", channel_name="TO.QM2", connection="G2"), _put(9, 1)]
    one = observed_timeline(rows)[_msg_id(1)]
    assert (one.left_qmgr, one.channel, one.arrived_qmgr, one.target_queue) == ("QM1", "TO.GW", "QM2", "Q")
    assert (one.transit, one.departures, one.arrivals) == (timedelta(milliseconds=8), 2, 2)


def test_events_name_the_operation_they_came_from():
    events = channel_events(_traced())
    assert {e.kind for e in events} == {"departure", "arrival"}
    first = next(e for e in events if e.kind == "departure")
    assert first.source.endswith("mca_sender_qm1.amqsact") and first.line > 0 and first.connection
