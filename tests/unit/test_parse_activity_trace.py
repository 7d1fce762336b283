"""amqsact output (application activity trace) -> operation records and put events (docs/activity-trace.md).

The fixtures are in amqsact's printed form (tests/fixtures/amqsact_trace/README.md says how each was made and
which one comes from a public source). Expected values are read off the fixtures by hand; the derivation of
each is written beside it.
"""

from __future__ import annotations

import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from clwl.parse.activity_trace import (
    ORIGIN,
    TraceState,
    is_activity_trace_name,
    looks_like_amqsact,
    parse_activity_trace_file,
    parse_activity_trace_lines,
    parse_activity_trace_text,
)
from clwl.parse.common import InputError
from clwl.parse.puts import PutRecord

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "amqsact_trace"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
UNDERLINE = "=" * 77


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def _msg_id(n: int) -> str:
    # the fixtures' MsgIds: 'AMQ QM1         ' (16 bytes) + an 8-byte big-endian counter
    return ("AMQ QM1         ".encode().hex() + n.to_bytes(8, "big").hex()).upper()


def _parse(name: str, **kw):
    return parse_activity_trace_file(FIX / name, **kw)


# --------------------------------------------------------------------------------------------------------
# MEDIUM: MQOPEN with MQOO_BIND_NOT_FIXED, two MQPUTs, an MQPUT1


def test_not_fixed_handle_two_puts_each_with_mqs_answer():
    r = _parse("notfixed_medium.amqsact")
    assert r.problems == [] and r.notes == []
    assert dict(r.counts) == {"MQCONNX": 1, "MQOPEN": 1, "MQPUT": 2, "MQPUT1": 1, "MQCLOSE": 1, "MQDISC": 1}
    first, second, put1 = r.puts
    assert all(isinstance(p.put, PutRecord) and p.origin == ORIGIN == "activity_trace" for p in r.puts)
    # Open_options 40976 = 0x8000 BIND_NOT_FIXED + 0x2000 FAIL_IF_QUIESCING + 0x10 OUTPUT -> notfixed
    assert (first.put.bind, first.open_options, first.bind_source) == ("notfixed", 40976, "open_options")
    # one handle, one open: both puts carry the same open_handle (connection : Hobj : SeqNumber.operation)
    assert first.put.open_handle == second.put.open_handle
    assert first.put.open_handle.endswith(":2:0.1")
    # the put records (MEDIUM) carry Resolved_Q_mgr: QM2 for the first, QM3 for the second; both left by
    # Resolved_local_Q_name, the cluster transmission queue
    assert (first.put.observed_qmgr, first.put.observed_xmitq, first.observed_basis) == ("QM2", SCTQ, "put_record")
    assert (second.put.observed_qmgr, second.put.observed_xmitq) == ("QM3", SCTQ)
    # High Res Time 1795169730120000 us = 2026-11-20T10:15:30.120000Z (preferred to OperationTime 10:15:30)
    assert first.put.put_time == _utc("2026-11-20T10:15:30.120000")
    assert (first.put.sending_qmgr, first.put.queue, first.put.target_qmgr) == ("QM1", "CLUS.Q", None)
    assert (first.put.length, first.put.persistent, second.put.persistent) == (120, True, False)
    assert (first.put.msg_id, second.put.msg_id, put1.put.msg_id) == (_msg_id(1), _msg_id(2), _msg_id(3))
    # Put Options 8260 = 0x2000 FAIL_IF_QUIESCING + 0x40 NEW_MSG_ID + 0x4 NO_SYNCPOINT: no LOGICAL_ORDER
    assert first.put_options == 8260 and not first.put.logical_order
    # not traced below HIGH: the token is derived from the bind; notfixed, nothing named -> not all zeros
    assert not first.accounting_token_traced and not first.put.accounting_token_zero
    # MQPUT1 names Object_Q_mgr_name QM3: the named target; it chooses per message (no handle)
    assert (put1.operation, put1.put.bind, put1.bind_source, put1.put.open_handle) == ("MQPUT1", "notfixed", "put1", None)
    assert put1.put.target_qmgr == "QM3" and put1.put.accounting_token_zero  # named queue manager: zero token
    assert put1.put.observed_qmgr == "QM3"


def test_every_operation_is_a_record_with_its_printed_fields_kept():
    r = _parse("notfixed_medium.amqsact")
    ops = r.operations
    assert [o.operation for o in ops] == ["MQCONNX", "MQOPEN", "MQPUT", "MQPUT", "MQPUT1", "MQCLOSE", "MQDISC"]
    assert [o.index for o in ops] == list(range(7))
    put = ops[2]
    assert (put.operation_id, put.hobj, put.options, put.comp_code, put.reason_code) == ("MQXF_PUT", 2, 8260,
                                                                                        "MQCC_OK", 0)
    assert put.fields["Put Options"] == "8260" and put.fields["Format_name"] == "MQSTR"
    assert put.fields["Msg_id"] == _msg_id(1)  # a hex dump kept as hex
    assert (put.time_basis, put.trace_level, put.seq_number, put.qmgr) == ("high_res", "medium", 0, "QM1")
    # the connection is the trace message's Correl_id: 'AMQCQM1' + blanks + 6B576B5420000701
    assert put.connection == ("AMQCQM1".ljust(16).encode().hex() + "6b576b5420000701").upper()
    assert ops[1].options == 40976 and ops[5].options == 0  # Open_options, Close Options


# --------------------------------------------------------------------------------------------------------
# handles across trace messages, connections and threads interleaved


def test_handle_opened_in_seqnumber_1_is_used_in_seqnumber_2_and_threads_interleave():
    r = _parse("seq_interleaved.amqsact")
    assert r.problems == [] and r.trace_messages == 4
    # MQGET, MQINQ, MQCMIT are counted, never quarantined
    assert (r.counts["MQGET"], r.counts["MQINQ"], r.counts["MQCMIT"], r.counts["MQPUT"]) == (1, 1, 1, 7)
    by_line = {p.put.line: p for p in r.puts}
    a1, a2, a3 = by_line[55], by_line[267], by_line[340]  # connection A (batch)
    # A: Open_options 24592 = 0x4000 BIND_ON_OPEN + 0x2000 + 0x10 in SeqNumber 1; the put in SeqNumber 2
    # uses the same handle and open
    assert a1.put.bind == a2.put.bind == "open" and a1.put.open_handle == a2.put.open_handle
    assert a1.put.open_handle.endswith(":1:1.1")
    assert a2.put.accounting_token_zero  # bind on open: MQ never re-allocates it (token from the bind)
    # MQCLOSE ended that handle; Hobj 1 opened again (OTHER.Q, BIND_NOT_FIXED) is another open
    assert (a3.put.queue, a3.put.bind) == ("OTHER.Q", "notfixed")
    assert a3.put.open_handle.endswith(":1:2.3") and a3.put.open_handle != a1.put.open_handle
    # OTHER.Q resolved to QM1 itself: a local put, no transmission queue
    assert (a3.put.observed_qmgr, a3.put.observed_xmitq) == ("QM1", None)
    # connection B (web, a client over APP.SVRCONN): Open_options 8208 = 0x2000 + 0x10, no bind flag ->
    # MQOO_BIND_AS_Q_DEF, left for the replay to resolve from the queue's DEFBIND
    b_puts = [p for p in r.puts if p.put.queue == "CLUS.ALIAS"]
    assert len(b_puts) == 4 and {p.put.bind for p in b_puts} == {"as_q_def"}
    assert {p.bind_source for p in b_puts} == {"as_q_def"} and len({p.put.open_handle for p in b_puts}) == 1
    assert b_puts[0].connection != a1.connection
    # the threads, in the order printed: 5, 6 in SeqNumber 1 and 6, 5 in SeqNumber 2
    tids = [o.thread_id for o in r.operations if o.operation == "MQPUT" and o.connection == b_puts[0].connection]
    assert tids == [5, 6, 6, 5]
    assert {o.channel_name for o in r.operations if o.connection == b_puts[0].connection} == {"APP.SVRCONN"}
    assert not any(p.put.from_cluster_channel for p in r.puts)  # SVRCONN, not a cluster-receiver MCA


def test_a_later_seqnumber_printed_first_waits_for_its_open():
    r = _parse("out_of_order.amqsact")
    assert r.problems == []
    (put,) = r.puts
    # the MQOPEN is in SeqNumber 1, printed after SeqNumber 2's put
    assert put.put.open_handle.endswith(":5:1.0") and put.put.observed_qmgr == "QM3"


def test_handles_carry_over_to_the_next_file_when_the_state_is_passed():
    text = (FIX / "seq_interleaved.amqsact").read_text()
    messages = text.split(UNDERLINE + "\n")
    first, rest = messages[0] + UNDERLINE + "\n", UNDERLINE.join(messages[1:])
    day1 = parse_activity_trace_text(first, "day1")
    alone = parse_activity_trace_text(rest, "day2")
    carried = parse_activity_trace_text(rest, "day2", state=day1.state)
    # connection A's SeqNumber 2 put uses the handle opened in file 1: without the state it is quarantined
    assert [p.reason for p in alone.problems if "whose MQOPEN is not in the input" in p.reason]
    assert not carried.problems
    assert len(carried.puts) == len(alone.puts) + 1


# --------------------------------------------------------------------------------------------------------
# LOW and HIGH


def test_low_level_no_resolved_names_the_put_is_still_an_event_with_the_reason():
    r = _parse("low_level.amqsact", tz="Europe/London")
    assert r.problems == []
    assert len(r.puts) == 2 and {p.trace_level for p in r.puts} == {"low"}
    p = r.puts[0]
    assert p.put.observed_qmgr is None and p.put.observed_xmitq is None and p.observed_basis is None
    assert "LOW" in p.observed_reason
    # OperationTime '11:15:30' on 2026-07-01 in Europe/London (BST, UTC+1) = 10:15:30Z
    assert p.put.put_time == _utc("2026-07-01T10:15:30")
    assert r.operations[2].time_basis == "local"
    # no Msg_id at LOW: a synthesized, distinct one, flagged
    assert not p.msg_id_traced and len(p.put.msg_id) == 48 and p.put.msg_id != r.puts[1].put.msg_id
    # default zone: UTC
    assert _parse("low_level.amqsact").puts[0].put.put_time == _utc("2026-07-01T11:15:30")


def test_high_level_mqmd_dump_gives_the_zero_accounting_token_and_the_group():
    r = _parse("high_mqmd.amqsact")
    assert r.problems == []
    assert r.failed_puts == 1 and r.counts["MQPUT"] == 3 and len(r.puts) == 2  # MQCC_FAILED 2053: no message
    p = r.puts[0]
    # Open_options 4202512 = 0x400000 BIND_ON_GROUP + 0x2000 + 0x10; Put Options 40964 = 0x8000 LOGICAL_ORDER
    # + 0x2000 + 0x4
    assert (p.put.bind, p.put.logical_order, p.trace_level) == ("group", True, "high")
    # MQMD AccountingToken (offset 208, 32 bytes) all zeros, traced
    assert p.accounting_token_traced and p.put.accounting_token == "0" * 64 and p.put.accounting_token_zero
    # MQMD v2 MsgFlags 0x08 MSG_IN_GROUP: GroupId (offset 324) 'AMQ QM1' + blanks + 0x77
    assert p.put.group_id == ("AMQ QM1".ljust(16).encode().hex() + (0x77).to_bytes(8, "big").hex()).upper()
    assert r.puts[1].put.group_id == p.put.group_id  # the last message of the group (MsgFlags 0x18)
    # MQPMO ResolvedQMgrName (offset 80): the call's own output field
    assert (p.put.observed_qmgr, p.observed_basis, p.put.observed_xmitq) == ("QM3", "mqpmo", SCTQ)


def test_high_level_the_mqpmo_answer_wins_over_the_put_records_field():
    text = (FIX / "high_mqmd.amqsact").read_text()
    # the first put's Resolved_Q_mgr made to say QM2; its MQPMO dump still says QM3
    changed = text.replace("  Resolved_Q_mgr: 'QM3'", "  Resolved_Q_mgr: 'QM2'", 2).replace(
        "  Resolved_Q_mgr: 'QM2'", "  Resolved_Q_mgr: 'QM3'", 1)
    assert changed != text
    r = parse_activity_trace_text(changed, "x")
    assert [p.put.observed_qmgr for p in r.puts] == ["QM3", "QM3"]
    assert {p.observed_basis for p in r.puts} == {"mqpmo"}


# --------------------------------------------------------------------------------------------------------
# the summary form


def test_summary_form_gives_operations_and_no_put_events():
    r = _parse("summary_form.amqsact")
    assert r.problems == [] and r.puts == [] and r.forms == {"summary"}
    assert [o.operation for o in r.operations] == ["MQCONNX", "MQOPEN", "MQPUT", "MQPUT", "MQPUT1", "MQCLOSE",
                                                  "MQDISC"]
    put = r.operations[2]
    assert (put.thread_id, put.hobj, put.object_name, put.qmgr, put.options) == (1, 2, "CLUS.Q", "QM1", None)
    assert put.operation_time == _utc("2026-11-20T10:15:30")
    assert r.operations[0].hobj is None  # printed '-'
    assert len(r.notes) == 1 and "3 puts" in r.notes[0].text and "amqsact -v" in r.notes[0].text


def test_the_summary_lines_published_by_nastel():
    r = _parse("nastel_article_summary.amqsact")
    assert r.problems == []
    assert [(o.operation, o.comp_code, o.reason_code) for o in r.operations] == [
        ("MQCONNX", "MQCC_OK", 0), ("MQOPEN", "MQCC_OK", 0), ("MQPUT", "MQCC_OK", 0), ("MQPUT", "MQCC_OK", 0),
        ("MQPUT", "MQCC_FAILED", 2053), ("MQCLOSE", "MQCC_OK", 0), ("MQDISC", "MQCC_OK", 0)]
    assert r.operations[1].object_name == "Sample.Queue" and r.operations[4].hobj == 2
    assert any("without a header block" in n.text for n in r.notes)
    assert any("2 puts" in n.text for n in r.notes)  # the failed one put nothing


# --------------------------------------------------------------------------------------------------------
# bad input


def test_damaged_input_is_quarantined_per_block_and_the_good_put_survives():
    r = _parse("damaged.amqsact")
    reasons = sorted((p.line, p.reason) for p in r.problems)
    assert reasons == [
        (1, "line outside any trace message"),
        (48, "MQPUT block without Msg length (truncated or not traced)"),
        (93, "unknown Operation Id 'MQXF_FROB'"),
        # the connection: Correl_id 'AMQCQM1' + blanks + 0x6666, 48 hex digits, under the 60 of the clip
        (100, "MQPUT on handle 9 of connection 414D5143514D312020202020202020200000000000006666 "
              "whose MQOPEN is not in the input (opened before the trace started or in an earlier file)"),
        (139, "Msg_id dump holds 16 bytes, not 24 (truncated)"),
        (242, "MQPUT block without Completion Code, Reason Code, Hobj, Put Options, Msg length "
              "(truncated or not traced)"),
    ]
    assert all(p.source == str(FIX / "damaged.amqsact") and p.raw for p in r.problems)
    # an id amqsact printed as a number is kept and noted, not quarantined
    assert r.counts["unknown:77"] == 1 and any("77 (1)" in n.text for n in r.notes)
    (good,) = r.puts
    assert good.put.line == 177 and good.put.observed_qmgr == "QM3"


def test_every_cut_of_a_file_parses_without_raising_and_accounts_for_its_blocks():
    lines = (FIX / "notfixed_medium.amqsact").read_text().splitlines()
    for cut in range(len(lines)):
        r = parse_activity_trace_lines(lines[:cut], "cut")
        started = sum(1 for line in lines[:cut] if line.startswith("MQI Operation:"))
        # every operation block started is either a record or one problem
        assert len(r.operations) + sum(1 for p in r.problems if "block" in p.reason or "dump" in p.reason
                                       or "Operation Id" in p.reason) == started


def test_missing_file_is_an_input_error():
    with pytest.raises(InputError):
        parse_activity_trace_file(FIX / "no_such.amqsact")


def test_unknown_time_zone_is_refused_before_reading():
    with pytest.raises(ValueError):
        parse_activity_trace_text("", "x", tz="Mars/Olympus")


# --------------------------------------------------------------------------------------------------------
# interface: chunks, names


def test_chunks_deliver_every_record_once():
    text = (FIX / "seq_interleaved.amqsact").read_text()
    whole = parse_activity_trace_text(text, "x")
    chunks = []
    rest = parse_activity_trace_lines(text.splitlines(), "x", on_chunk=chunks.append, chunk_ops=4)
    assert len(chunks) >= 4 and max(len(c.operations) for c in chunks) <= 4
    assert sum(len(c.operations) for c in chunks) + len(rest.operations) == len(whole.operations)
    assert [p.put for c in chunks for p in c.puts] + [p.put for p in rest.puts] == [p.put for p in whole.puts]
    assert rest.counts == whole.counts


def test_file_names_and_sniffing():
    assert is_activity_trace_name("QM1.2026-11-20.amqsact") and is_activity_trace_name("x.AMQSACT.txt")
    assert not is_activity_trace_name("accounting.txt") and not is_activity_trace_name("puts.csv")
    assert looks_like_amqsact((FIX / "low_level.amqsact").read_text()[:200])
    assert not looks_like_amqsact("MonitoringType: QueueAccounting\nQueueManager: 'QM1'\n")


def test_a_state_object_starts_empty():
    assert TraceState().handles == {}


# --------------------------------------------------------------------------------------------------------
# linear in the input

FACTOR = 8
MAX_RATIO = 20  # linear ~8, quadratic ~64


def _cpu(text: str) -> float:
    runs, start = 0, time.process_time()
    while True:
        parse_activity_trace_text(text, "x")
        runs += 1
        spent = time.process_time() - start
        if spent > 0.2:
            return spent / runs


def test_parse_time_grows_linearly_with_the_input():
    # whole trace messages repeated: each repeat is a new open, three puts, a close (and a run of puts on
    # one never-opened handle, the case that waits for an MQOPEN until the end)
    base = (FIX / "notfixed_medium.amqsact").read_text().replace("1 Records Processed.\n", "")
    orphan = (FIX / "out_of_order.amqsact").read_text().split(UNDERLINE)[0] + UNDERLINE + "\n"
    small, big = (base + orphan) * 40, (base + orphan) * 40 * FACTOR
    ratio = statistics.median(_cpu(big) for _ in range(3)) / statistics.median(_cpu(small) for _ in range(3))
    assert ratio < MAX_RATIO
