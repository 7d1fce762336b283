"""Parse time is linear in the input (issue 13, item 8).

Each case builds an input of size n and of size 8n of a shape that used to make a parser quadratic (a run of
blanks inside an amqsmon value, long runmqsc lines full of keys and parentheses, a long word in an amqsbcg
descriptor, a REST ``objects`` array of non-objects, a value continued over many lines, ...) and checks the
time of the 8n parse against the time of the n parse as a RATIO (median of a few runs): a linear parser gives
about 8, a quadratic one about 64. Never an absolute number of seconds: the machine may be slow or busy (the
times are CPU times of this process, each the median of a few measurements).
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from typing import Callable

import pytest

from clwl.analyses.observed import observed_timeline
from clwl.parse.activity_trace import parse_activity_trace_text
from clwl.parse.activity_trace_json import parse_amqsevt_json_text
from clwl.parse.amqsmon import parse_amqsmon_text
from clwl.parse.mqsc import parse_mqsc_text
from clwl.parse.puts import parse_puts_csv_text, parse_puts_jsonl_text
from clwl.parse.rest import parse_rest_text
from clwl.parse.xmitq import parse_amqsbcg_text, parse_dmpmqmsg_text

#: time(8n) / time(n) above this is not linear (linear: ~8; quadratic: ~64).
MAX_RATIO = 20
FACTOR = 8

_MQSC_HEAD = "Starting MQSC for queue manager QM1.\n     1 : DISPLAY QLOCAL(*)\nAMQ8409I: Display Queue details.\n"
_AMQSMON_HEAD = "MonitoringType: QueueAccounting\nQueueManager: 'QM1'\n"
_CHANNEL_HEAD = ("MonitoringType: ChannelStatistics\nQueueManager: 'QM1'\nIntervalStartDate: '2025-05-01'\n"
                 "IntervalStartTime: '10.00.00'\nIntervalEndDate: '2025-05-01'\nIntervalEndTime: '10.30.00'\n")
_BCG_HEAD = (" MQOPEN - 'SYSTEM.CLUSTER.TRANSMIT.QUEUE'\n\n\n MQGET of message number 1, CompCode:0 Reason:0\n"
             "****Message descriptor****\n\n  StrucId  : 'MD  '  Version : 2\n")
_PUTS_HEADER = ("put_time,sending_qmgr,queue,target_qmgr,bind,open_handle,group_id,logical_order,"
                "from_cluster_channel,pcf,length,persistent,accounting_token,msg_id\n")


# One activity trace message as amqsevt prints it (pretty and compact), for the amqsevt JSON cases.
_EVT = {"eventSource": {"objectName": "SYSTEM.ADMIN.TRACE.ACTIVITY.QUEUE", "objectType": "Queue"},
        "eventType": {"name": "Activity Trace", "value": 209},
        "eventData": {"queueMgrName": "QM1", "connectionId": "414D5143514D3120" * 3, "activityTrace": [
            {"operationId": "Open", "threadId": 1, "operationDate": "2026-11-20", "operationTime": "10:15:30",
             "compCode": {"name": "Ok", "value": 0}, "reasonCode": {"name": "None", "value": 0}, "hobj": 2,
             "objectName": "CLUS.Q", "openOptions": {"options": 40976, "optionsString": ["out"]}}]}}
_EVT_PRETTY = json.dumps(_EVT, indent=2, separators=(",", " : ")) + "\n"
_EVT_COMPACT = json.dumps(_EVT, separators=(",", ":")) + "\n"


def _evts(n: int, layout: str) -> str:
    """About ``n`` characters of amqsevt objects in a layout amqsevt or a log shipper writes (issue 40 item 2): the
    next object's start must be found once, not searched for from every object to the end of the line."""
    one = _EVT_COMPACT.rstrip("\n")
    k = max(1, n // len(one))
    if layout == "one line":
        return one * k
    if layout == "one line, blanks between":
        return (one + " ") * k
    if layout == "one line, a JSON array":
        return "[" + ",".join([one] * k) + "]"
    if layout == "pretty, a JSON array":
        return "[\n" + ",\n".join([_EVT_PRETTY.rstrip("\n")] * (n // len(_EVT_PRETTY) or 1)) + "\n]\n"
    if layout == "pretty, blank lines between, CRLF":
        return (_EVT_PRETTY + "\n").replace("\n", "\r\n") * (n // len(_EVT_PRETTY) or 1)
    if layout == "one line, each object cut":
        return one[: len(one) * 2 // 3] * k
    if layout == "one line, each behind a byte order mark":
        return ("\ufeff" + one) * k
    if layout == "one line of values that are not objects":
        return "[1] " * (n // 4)
    raise AssertionError(layout)

# A channel agent's trace message (issue 29): a cluster-sender agent's MQGETs, each with a transmission header.
_MCA_HEAD = ("MonitoringType: MQI Activity Trace\nQueueManager: 'QM1'\nSeqNumber: 0\nApplicationName: 'amqrmppa'\n"
             "API Environment: MQXE_MCA\nTrace Detail Level: 2\nChannel Name: 'CLUSTER1.QM2'\n"
             "Channel Type: MQCHT_CLUSSDR\n")


def _mca_get(i: int) -> str:
    return (f"MQI Operation: {i}\n  Operation Id: MQXF_GET\n  ApplicationTid: 21\n  Hobj: 1\n  Get Options: 8194\n"
            f"  Completion Code: MQCC_OK\n  Reason Code: 0\n  Msg length: 548\n  High Res Time: {1795169730000000 + i}\n"
            "  Object_name: 'SYSTEM.CLUSTER.TRANSMIT.QUEUE'\n  Transmit Header Msg_id:\n"
            "  00000000:  414D 5120 514D 3120 2020 2020 2020 2020  'AMQ QM1         '\n"
            f"  00000010:  0000 0000 {i >> 16:04X} {i & 0xFFFF:04X}                      '........        '\n"
            "  Transmit Header RemoteQName: 'CLUS.Q'\n  Transmit Header RemoteQMgr: 'QM2'\n")


def _mca_gets(n: int) -> str:
    return _MCA_HEAD + "".join(_mca_get(i) for i in range(n // 520))


def _rest_objects(n: int) -> str:
    # Every non-object entry of "objects" is one problem; its raw text must not be the whole array each time.
    params = {"queue": "Q", "type": "QLOCAL", "objects": [1] * (n // 2)}
    return json.dumps({"commandResponse": [{"completionCode": 0, "reasonCode": 0, "parameters": params}],
                       "overallCompletionCode": 0, "overallReasonCode": 0})


# name -> (parse(text), make(n) -> text, n): n is where the size calibration starts.
CASES: dict[str, tuple[Callable[[str], object], Callable[[int], str], int]] = {
    "amqsmon: a run of blanks inside a value": (
        lambda t: parse_amqsmon_text(t, "x"), lambda n: _AMQSMON_HEAD + "ApplicationName: 'a" + " " * n + "b'\n",
        20_000),
    "amqsmon: many lines with blank runs": (
        lambda t: parse_amqsmon_text(t, "x"),
        lambda n: _AMQSMON_HEAD + ("UserId: 'a" + " " * 200 + "b'\n") * (n // 200), 50_000),
    "runmqsc: a long key-like word inside a value before '(('": (
        lambda t: parse_mqsc_text(t, "x"), lambda n: _MQSC_HEAD + "   DESCR(" + "X" * n + "((\n", 5_000),
    "runmqsc: many KEY(value) pairs on one indented line": (
        lambda t: parse_mqsc_text(t, "x"), lambda n: _MQSC_HEAD + "   " + "A(x) " * (n // 5) + "\n", 50_000),
    "runmqsc: many KEY(value) pairs on one line at column 0": (
        lambda t: parse_mqsc_text(t, "x"), lambda n: _MQSC_HEAD + "A(x)" * (n // 4) + "(\n", 50_000),
    "runmqsc: many open values on one line": (
        lambda t: parse_mqsc_text(t, "x"), lambda n: _MQSC_HEAD + "   " + "A(" * (n // 2) + "\n", 50_000),
    "runmqsc: nested parentheses": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: _MQSC_HEAD + "   DESCR(" + "(" * (n // 2) + ")" * (n // 2) + ")\n", 50_000),
    "runmqsc: AMQnnnn: repeated inside one line": (
        lambda t: parse_mqsc_text(t, "x"), lambda n: _MQSC_HEAD + "x" + " AMQ1234:" * (n // 9) + "\n", 50_000),
    "runmqsc: one value continued over many lines": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: _MQSC_HEAD + "   QUEUE(Q) TYPE(QLOCAL) DESCR(a b,\n" + "   b,\n" * (n // 6) + "   c)\n", 50_000),
    "runmqsc: one list value continued over many lines": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: _MQSC_HEAD + "   QUEUE(Q) TYPE(QLOCAL) DESCR(a,\n" + "   b(1),\n" * (n // 10) + "   c)\n",
        50_000),
    "runmqsc: one quoted value continued over many lines": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: _MQSC_HEAD + "   QUEUE(Q) TYPE(QLOCAL) DESCR('a\n" + "   b  \n" * (n // 8) + "   c')\n",
        50_000),
    "amqsbcg: a long word in the message descriptor": (
        lambda t: parse_amqsbcg_text(t, "x"), lambda n: _BCG_HEAD + "A" * n + "\n", 2_000),
    "amqsbcg: a long line of labels without values": (
        lambda t: parse_amqsbcg_text(t, "x"), lambda n: _BCG_HEAD + "A: X'" * (n // 5) + "\n", 50_000),
    "dmpmqmsg: many messages with long data lines": (
        lambda t: parse_dmpmqmsg_text(t, "x"), lambda n: ("N\nA VER 2\nX " + "00" * 500 + "\n") * (n // 1000), 10_000),
    "REST: an objects array of non-objects": (lambda t: parse_rest_text(t, "x"), _rest_objects, 20_000),
    "REST: deeply nested JSON": (
        lambda t: _no_raise(parse_rest_text, t), lambda n: "[" * (n // 2) + "]" * (n // 2), 50_000),
    "capture: echoed DISPLAY commands with an unclosed parenthesis (covered kinds)": (
        lambda t: _covered_kinds(t, "config", []), lambda n: "     1 : DISPLAY QLOCAL(\n" * (n // 24), 20_000),
    "runmqsc: many typed commands each followed by its echo (interactive copy)": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: _MQSC_HEAD + "   QUEUE(Q) TYPE(QLOCAL)\n" + "".join(
            f"DIS QC(*) CLUSQMGR\n{i:6d} : DIS QC(*) CLUSQMGR\nAMQ8409I: Display Queue details.\n"
            f"   QUEUE(Q{i}) TYPE(QCLUSTER) CLUSQMGR(QM2)\n" for i in range(n // 110)), 20_000),
    "runmqsc: many column-0 lines before one echo that repeats none of them": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: _MQSC_HEAD + "   QUEUE(Q) TYPE(QLOCAL)\n" + "DIS QC(*) CLUSQMGR\n" * (n // 19)
        + "     2 : DIS QC(*) CLUSQMGR\n       : ALL\n", 20_000),
    "z/OS: many CSQM201I blocks with padded values": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: "".join(
            f"CSQM201I +MQ1A CSQMDRTC  DISPLAY CLUSQMGR DETAILS\nCLUSQMGR(QM{i}{' ' * 40})\nCLUSTER(CL1)\n"
            f"CHANNEL(TO.QM{i})\nCURRENT\nEND CLUSQMGR DETAILS\n" for i in range(n // 130)), 20_000),
    "z/OS: many KEY(value) pairs on one line of a block": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: "CSQM409I +MQ1A QMNAME(MQ1A)\n" + "A(x) " * (n // 5) + "\n", 50_000),
    "z/OS: one value continued over many lines": (
        lambda t: parse_mqsc_text(t, "x"),
        lambda n: "CSQM409I +MQ1A QMNAME(MQ1A) DESCR(a b,\n" + "   b,\n" * (n // 6) + "   c)\n", 50_000),
    "REST: a queue resource GET with many objects": (
        lambda t: parse_rest_text(t, "x"),
        lambda n: json.dumps({"queue": [{"name": f"Q{i}", "type": "local", "cluster": {"name": "CL1",
                              "workloadQueueUse": "any"}, "general": {"inhibitPut": False}}
                             for i in range(n // 110)]}), 20_000),
    "dmpmqmsg: many -da lines with an ASCII column": (
        lambda t: parse_dmpmqmsg_text(t, "x"),
        lambda n: "N\nA VER 2\n" + "X 58514820000000014150502E4F524445  <XQH ....APP.ORDE>\n" * (n // 52), 20_000),
    "dmpmqmsg: many -dA quoted text lines": (
        lambda t: parse_dmpmqmsg_text(t, "x"),
        lambda n: "N\nA VER 2\n" + ('S "' + "A" * 60 + '"\nX 0100\n') * (n // 72), 20_000),
    "amqsmon: many fields printed by number": (
        lambda t: parse_amqsmon_text(t, "x"),
        lambda n: _AMQSMON_HEAD + "QueueAccounting: 0\n  QueueName: 'Q'\n" + "  1505: 7\n" * (n // 10), 20_000),
    "amqsmon: one channel statistics record with many channel groups": (
        lambda t: parse_amqsmon_text(t, "x"),
        lambda n: _CHANNEL_HEAD + "".join(
            f"ChannelStatistics: {i}\n  ChannelName: 'TO.QM{i}'\n  ChannelType: ClusSdr\n  RemoteQMgr: 'QM{i}'\n"
            f"  MsgCount: {i}\n  NetMinAverage: 655\n" for i in range(n // 120)), 20_000),
    "amqsact: a channel agent's MQGETs with transmission headers in one trace message": (
        lambda t: parse_activity_trace_text(t, "x"), _mca_gets, 20_000),
    "amqsact: a transmission header Msg_id dump of many lines": (
        lambda t: parse_activity_trace_text(t, "x"),
        lambda n: _MCA_HEAD + _mca_get(0).split("  Transmit Header Msg_id:")[0] + "  Transmit Header Msg_id:\n"
        + "".join(f"  {16 * k:08X}:  0000 0000 0000 0000 0000 0000 0000 0000  '................'\n"
                  for k in range(n // 72)), 20_000),
    "observed timeline: a channel agent's MQGETs in one open unit of work": (
        lambda t: observed_timeline(parse_activity_trace_text(t, "x").operations), _mca_gets, 20_000),
    "puts CSV: a long quoted field": (
        lambda t: parse_puts_csv_text(t, "x"), lambda n: _PUTS_HEADER + '"' + "a" * n + '"\n', 100_000),
    "amqsevt JSON: many objects, each cut (every one skipped to the next object start)": (
        lambda t: parse_amqsevt_json_text(t, "x"),
        lambda n: _EVT_PRETTY[: len(_EVT_PRETTY) * 2 // 3] * (n // (len(_EVT_PRETTY) * 2 // 3)), 20_000),
    "amqsevt JSON: a cut object whose open list takes in the next object, again and again": (
        lambda t: parse_amqsevt_json_text(t, "x"),
        lambda n: (_EVT_PRETTY.split('"activityTrace" : [')[0] + '"activityTrace" : [\n' + _EVT_PRETTY)
        * (n // (2 * len(_EVT_PRETTY))), 20_000),
    "amqsevt JSON compact: many good lines": (
        lambda t: parse_amqsevt_json_text(t, "x"), lambda n: _EVT_COMPACT * (n // len(_EVT_COMPACT)), 20_000),
    "amqsevt JSON: lines of '{' with no object start after them": (
        lambda t: parse_amqsevt_json_text(t, "x"), lambda n: "{\n" * (n // 2), 20_000),
    **{f"amqsevt JSON: {layout}": (lambda t: parse_amqsevt_json_text(t, "x"),
                                   lambda n, layout=layout: _evts(n, layout), 20_000)
       for layout in ("one line", "one line, blanks between", "one line, a JSON array", "pretty, a JSON array",
                      "pretty, blank lines between, CRLF", "one line, each object cut",
                      "one line, each behind a byte order mark", "one line of values that are not objects")},
    "puts JSON lines: deeply nested line": (
        lambda t: parse_puts_jsonl_text(t, "x"), lambda n: "[" * (n // 2) + "]" * (n // 2) + "\n", 50_000),
}


def _covered_kinds(*args):
    from spark.ingest import covered_kinds  # the parse task's reading of a capture's echoed commands

    return covered_kinds(*args)


def _no_raise(parse, text):
    from clwl.parse.common import InputError

    try:
        return parse(text, "x")
    except InputError:
        return None


#: The 1x input is grown until its parse takes this long, so that the ratio is not that of fixed costs and
#: timer noise. A parser that is slower than linear gets there at a smaller size, which keeps the 8x run short
#: even when the test fails.
SMALL_SECONDS = 0.002
#: ... but the 8x input stays below this many characters: beyond the CPU caches a linear parse still gets
#: slower per character, and that is not what is measured here.
MAX_CHARS = 400_000


#: One measurement repeats the parse until it has taken this much CPU time (and reports the time per parse).
MEASURE_SECONDS = 0.01


def _time(parse: Callable[[str], object], text: str) -> float:
    """CPU seconds of one parse of `text` (process time: other processes on a busy machine do not count)."""
    gc.collect()
    runs, start = 0, time.process_time()
    while True:
        parse(text)
        runs += 1
        spent = time.process_time() - start
        if spent >= MEASURE_SECONDS:
            return spent / runs


def _median_time(parse: Callable[[str], object], text: str, runs: int) -> float:
    return statistics.median(_time(parse, text) for _ in range(runs))


def time_ratio(parse: Callable[[str], object], make: Callable[[int], str], n: int) -> float:
    parse(make(n))  # warm-up (imports, caches)
    while len(make(2 * n)) * FACTOR <= MAX_CHARS and _time(parse, make(n)) < SMALL_SECONDS:
        n *= 2
    small, big = make(n), make(FACTOR * n)
    return _median_time(parse, big, 3) / _median_time(parse, small, 3)


@pytest.mark.parametrize("case", sorted(CASES))
def test_parse_time_grows_linearly_with_the_input(case):
    parse, make, n = CASES[case]
    ratio = time_ratio(parse, make, n)
    if ratio > MAX_RATIO:  # one retry: a busy machine can spoil one measurement, not two
        ratio = min(ratio, time_ratio(parse, make, n))
    assert ratio < MAX_RATIO, f"{case}: time({FACTOR}x input) / time(1x input) = {ratio:.1f}"
