"""The activity trace as amqsevt prints it in JSON (``-o json``, ``-o json_compact``) gives the rows amqsact's output
of the same trace messages gives (issue 29 item 4).

The JSON is rendered from the amqsact fixtures by tests/unit/amqsevt_render.py, which writes amqsevta.c's printing
rules apart from the parser (tests/fixtures/amqsevt_json holds three of them, rendered once); the strongest check
of the key and value mapping is that every operation record and put event is then the same, field for field.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from amqsevt_render import amqsevt_objects, render

from clwl.parse.activity_trace import parse_activity_trace_text
from clwl.parse.activity_trace_json import (
    amqsevt_key,
    looks_like_amqsevt_trace,
    parse_amqsevt_json_file,
    parse_amqsevt_json_text,
)
from clwl.parse.common import InputError

ROOT = Path(__file__).resolve().parents[2]
AMQSACT = ROOT / "tests" / "fixtures" / "amqsact_trace"
JSON_FIX = ROOT / "tests" / "fixtures" / "amqsevt_json"
VERBOSE = ("notfixed_medium", "seq_interleaved", "out_of_order", "low_level", "high_mqmd")
ZONE = {"low_level": "Europe/London"}
# The labels amqsevt prints a value of in its own way (a name for amqsact's, a number for amqsact's name) are the
# same after reading; the header lines it has no key for here (Application Type, Platform, ...) are not rendered.
_NOT_RENDERED = {"Correl_id"}


def _op(o) -> dict:
    d = {f.name: getattr(o, f.name) for f in dataclasses.fields(o) if f.name not in ("source", "line", "fields")}
    return d


def _put(p) -> dict:
    d = {f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "put"}
    d["put"] = {f.name: getattr(p.put, f.name) for f in dataclasses.fields(p.put) if f.name not in ("source", "line")}
    return d


@pytest.mark.parametrize("compact", [False, True], ids=["json", "json_compact"])
@pytest.mark.parametrize("name", VERBOSE)
def test_the_json_of_a_trace_gives_the_rows_of_its_amqsact_output(name, compact):
    text = (AMQSACT / f"{name}.amqsact").read_text()
    a = parse_activity_trace_text(text, "t", tz=ZONE.get(name))
    j = parse_amqsevt_json_text(render(text, compact), "t", tz=ZONE.get(name))
    assert a.problems == [] and j.problems == []
    assert [_op(o) for o in j.operations] == [_op(o) for o in a.operations]
    assert [_put(p) for p in j.puts] == [_put(p) for p in a.puts]
    assert j.counts == a.counts and j.trace_messages == a.trace_messages and j.failed_puts == a.failed_puts
    # every field amqsevt prints comes back as the text amqsact prints
    for oa, oj in zip(a.operations, j.operations):
        assert {k: v for k, v in oj.fields.items()} == {k: v for k, v in oa.fields.items() if k in oj.fields}
    assert len(a.puts) > 0


@pytest.mark.parametrize("path", sorted(JSON_FIX.glob("*.amqsevt.json*")), ids=lambda p: p.name)
def test_the_fixture_files_are_read_as_their_amqsact_twins(path):
    twin = AMQSACT / (path.name.split(".")[2] + ".amqsact")
    a = parse_activity_trace_text(twin.read_text(), "t")
    j = parse_amqsevt_json_file(path)
    assert j.problems == [] and [_op(o) for o in j.operations] == [_op(o) for o in a.operations]
    assert [_put(p) for p in j.puts] == [_put(p) for p in a.puts]
    assert path.read_text() == render(twin.read_text(), path.suffix == ".jsonl")  # rendered by the same rules


def test_keys_follow_amqsevts_naming_rule():
    """amqsevta.c prints a parameter's constant through lookup() (the first ``_Q_`` becomes ``_QUEUE_``, a final
    ``_Q`` ``_QUEUE``), formatConstant() (prefix dropped, words mixed case, joined by blanks) and jsonFormatAttr()
    (blanks dropped, camel case). By hand: MQCACF_APPL_NAME -> "Appl Name" -> applName; MQCA_Q_MGR_NAME ->
    MQCA_QUEUE_MGR_NAME -> "Queue Mgr Name" -> queueMgrName; MQCACF_OBJECT_Q_MGR_NAME -> objectQueueMgrName;
    MQCACF_RESOLVED_Q_MGR -> resolvedQueueMgr; MQIACF_HOBJ -> "Hobj" -> hobj; MQIAMO64_HIGHRES_TIME ->
    "Highres Time" -> highresTime; MQGACF_ACTIVITY_TRACE -> activityTrace; MQBACF_XQH_MSG_ID -> xqhMsgId;
    MQCACF_REPLY_TO_Q -> MQCACF_REPLY_TO_QUEUE -> replyToQueue; a word without "_" is only lower-cased."""
    expected = {
        "MQCACF_APPL_NAME": "applName", "MQCA_Q_MGR_NAME": "queueMgrName",
        "MQCACF_OBJECT_Q_MGR_NAME": "objectQueueMgrName", "MQCACF_RESOLVED_Q_MGR": "resolvedQueueMgr",
        "MQIACF_HOBJ": "hobj", "MQIAMO64_HIGHRES_TIME": "highresTime", "MQGACF_ACTIVITY_TRACE": "activityTrace",
        "MQBACF_XQH_MSG_ID": "xqhMsgId", "MQCACF_REPLY_TO_Q": "replyToQueue", "MQIACF_COMP_CODE": "compCode",
        "MQBACF_MQMD_STRUCT": "mqmdStruct", "Filter": "filter",
    }
    assert {c: amqsevt_key(c) for c in expected} == expected


def _two_messages() -> list[str]:
    text = (AMQSACT / "seq_interleaved.amqsact").read_text()
    return [json.dumps(o, indent=2, separators=(",", " : ")) + "\n" for o in amqsevt_objects(text)]


def test_an_object_that_is_not_json_costs_itself_only():
    objects = _two_messages()
    good = parse_amqsevt_json_text("".join(objects), "t")
    cut = objects[1][: len(objects[1]) // 2]  # the second message cut in the middle (output stopped)
    text = objects[0] + cut + "".join(objects[2:])
    got = parse_amqsevt_json_text(text, "t")
    [problem] = [p for p in got.problems if p.reason.startswith("not a JSON object")]
    assert problem.line == objects[0].count("\n") + 1  # the broken object's first line
    assert problem.raw.rstrip() == cut.rstrip()  # (the next object's line starts where the cut stopped)
    lost = parse_amqsevt_json_text(objects[1], "t")
    assert len(got.operations) == len(good.operations) - len(lost.operations)
    assert got.trace_messages == good.trace_messages - 1


def test_compact_lines_resume_at_the_next_line():
    text = (AMQSACT / "notfixed_medium.amqsact").read_text()
    lines = render(text, compact=True).splitlines(keepends=True) * 3
    broken = lines[0] + lines[1][:40] + "\n" + "".join(lines[2:])
    got = parse_amqsevt_json_text(broken, "t")
    assert [p.line for p in got.problems if p.reason.startswith("not a JSON")] == [2]
    assert got.trace_messages == 2


def test_values_amqsevt_prints_its_own_way():
    """Put options as "0x%08X" (a value past 0x7FFFFFFF is a negative MQLONG), a negative integer as a string
    (isNumeric takes digits only), a byte string of digits without a leading zero as a bare number, an operation
    id the sample has no name for as "Unknown [n]" (amqsact prints the number: unknown:<n>)."""
    obj = amqsevt_objects((AMQSACT / "notfixed_medium.amqsact").read_text())[0]
    ops = obj["eventData"]["activityTrace"]
    put = next(o for o in ops if o["operationId"] == "Put")
    put["putOptions"] = "0xFFFFFFFF"
    put["msgId"] = int("1" * 48)
    ops.append({"operationId": "Unknown [77]", "threadId": "-1", "compCode": {"name": "Ok", "value": 0},
                "reasonCode": {"name": "None", "value": 0}})
    got = parse_amqsevt_json_text(json.dumps(obj), "t")
    rec = next(o for o in got.operations if o.operation == "MQPUT")
    assert rec.options == -1 and rec.fields["Msg_id"] == "1" * 48
    unknown = got.operations[-1]
    assert (unknown.operation, unknown.thread_id) == ("unknown:77", -1)


def test_bad_values_are_their_operations_problems():
    obj = amqsevt_objects((AMQSACT / "notfixed_medium.amqsact").read_text())[0]
    ops = obj["eventData"]["activityTrace"]
    ops[2]["msgId"] = "not hex"
    ops[3]["hobj"] = 1.5
    ops[4]["putOptions"] = "0x12345678901"
    got = parse_amqsevt_json_text(json.dumps(obj), "t")
    reasons = sorted(p.reason for p in got.problems)
    assert len(reasons) >= 3
    assert any("Msg_id" in r and "hex" in r for r in reasons)
    assert any(r.startswith("Hobj '1.5' is not an integer") for r in reasons)
    assert len(got.operations) == len(ops) - 3


def test_other_events_and_stray_values():
    event = {"eventSource": {"objectName": "SYSTEM.ADMIN.QMGR.EVENT", "objectType": "Queue"},
             "eventType": {"name": "Queue Mgr Event", "value": 44}, "eventData": {"queueMgrName": "QM1"}}
    got = parse_amqsevt_json_text(json.dumps(event) + "\n[1, 2]\n\"x\"\n", "t")
    assert got.trace_messages == 0 and len(got.problems) == 2
    assert any("not activity trace messages" in n.text for n in got.notes)
    assert parse_amqsevt_json_text("", "t").operations == []
    assert parse_amqsevt_json_text("[" * 100_000, "t").problems  # deep nesting: a problem, not an exception


def test_header_numbers_refused_are_unknown_and_the_operations_still_read():
    obj = amqsevt_objects((AMQSACT / "notfixed_medium.amqsact").read_text())[0]
    obj["eventData"]["sequenceNumber"] = "x"
    got = parse_amqsevt_json_text(json.dumps(obj), "t")
    assert [p.reason for p in got.problems] == ["SeqNumber 'x' is not an integer (at most 20 ASCII digits, "
                                                "optionally after a minus): taken as not printed"]
    assert got.operations and got.operations[0].seq_number is None


def test_sniff_and_missing_file(tmp_path):
    text = render((AMQSACT / "notfixed_medium.amqsact").read_text())
    assert looks_like_amqsevt_trace(text[:4096]) and not looks_like_amqsevt_trace('{"eventData": {}}')
    with pytest.raises(InputError):
        parse_amqsevt_json_file(tmp_path / "none.amqsevt.json")


def test_an_integer_too_long_for_int_costs_its_operation_only():
    """Python refuses to read an integer of more than 4,300 digits (ValueError): the object was lost whole; the
    decoder keeps it as its digits for the value's own check (issue 40 item 2)."""
    obj = amqsevt_objects((AMQSACT / "notfixed_medium.amqsact").read_text())[0]
    ops = obj["eventData"]["activityTrace"]
    ops[3]["hobj"] = "@@big@@"
    text = json.dumps(obj).replace('"@@big@@"', "9" * 5_000)
    got = parse_amqsevt_json_text(text, "t")
    [problem] = got.problems
    assert problem.reason.startswith("Hobj") and "(5000 characters)" in problem.reason, problem.reason
    assert got.trace_messages == 1 and len(got.operations) == len(ops) - 1
