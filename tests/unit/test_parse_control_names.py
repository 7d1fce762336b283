"""An object name with a control character is no MQ name (issue 40 item 4): the DISPLAY readers (runmqsc, z/OS,
MQ REST; clwl.parse.record_kinds.record_reason) quarantine that record with its reason, the value quoted escaped,
and keep every other record of the file. Printed raw, ``QUEUE(APP.<ESC>]0;PWNED<BEL>AUDIT)`` would set the
terminal's title from a lint finding or a runmqsc remedy line.
"""

from __future__ import annotations

import json

import pytest

from clwl.parse.mqsc import parse_mqsc_file
from clwl.parse.rest import parse_rest_file

TITLE = "\x1b]0;PWNED\x07"  # ESC ] 0 ; PWNED BEL: sets the terminal's title
BAD = f"APP.{TITLE}AUDIT"
REASON = ("control character in a name: QUEUE(APP.\\x1b]0;PWNED\\x07AUDIT) holds U+001B, not a valid MQ name")
BANNER = "5724-H72 (C) Copyright IBM Corp. 1994, 2025.\nStarting MQSC for queue manager QM1.\n\n\n"
CLOSING = "One MQSC command read.\nNo commands have a syntax error.\nAll valid MQSC commands were processed.\n"


def _queue(name: str, extra: str = "") -> str:
    return (f"AMQ8409I: Display Queue details.\n   QUEUE({name})   TYPE(QCLUSTER)\n   CLUSTER(CL1)   CLUSQMGR(QM2)\n"
            f"{extra}")


def _runmqsc(tmp_path, *records: str):
    path = tmp_path / "config.mqsc"
    path.write_text(BANNER + "     1 : DISPLAY QCLUSTER(*) ALL\n" + "".join(records) + CLOSING, encoding="utf-8")
    return parse_mqsc_file(path)


def _assert_quarantined(cap, reason: str = REASON, raw: str = TITLE) -> None:
    assert [r.get("QUEUE") for r in cap.records] == ["APP.BEFORE", "APP.AFTER"]  # the rest of the file is kept
    [problem] = cap.problems
    assert problem.reason == reason
    assert "\x1b" not in problem.reason and "\x07" not in problem.reason
    assert raw in problem.raw  # quarantine keeps the record as it was written


@pytest.mark.parametrize("extra", ["", "   DESCR('quoted, so the exact scanner reads it')\n"],
                         ids=["fast-path", "exact-scanner"])
def test_runmqsc_record_with_a_control_character_in_its_name_is_quarantined(tmp_path, extra):
    cap = _runmqsc(tmp_path, _queue("APP.BEFORE"), _queue(BAD, extra), _queue("APP.AFTER"))
    _assert_quarantined(cap)
    assert cap.problems[0].line == 9  # its AMQ8409I line


@pytest.mark.parametrize("key, value, code", [("CLUSTER", "CL\t1", "0009"), ("CLUSQMGR", "QM\u202e2", "202E"),
                                              ("CLUSQMGR", "QM\x9b2", "009B")])
def test_every_name_attribute_counts_tabs_bidi_and_c1_controls_too(tmp_path, key, value, code):
    attrs = {"QUEUE": "APP.MID", "TYPE": "QCLUSTER", "CLUSTER": "CL1", "CLUSQMGR": "QM2", key: value}
    record = "AMQ8409I: Display Queue details.\n" + "".join(f"   {k}({v})\n" for k, v in attrs.items())
    cap = _runmqsc(tmp_path, _queue("APP.BEFORE"), record, _queue("APP.AFTER"))
    assert [r.get("QUEUE") for r in cap.records] == ["APP.BEFORE", "APP.AFTER"]
    [problem] = cap.problems
    assert problem.reason.startswith(f"control character in a name: {key}(") and f"holds U+{code}," in problem.reason
    assert problem.reason.isprintable()


def test_a_control_character_outside_a_name_costs_nothing(tmp_path):
    # DESCR is free text, no object name: the record is kept, and printing escapes it (clwl.terminal.printable)
    cap = _runmqsc(tmp_path, _queue("APP.BEFORE"), _queue("APP.MID", f"   DESCR({TITLE})\n"), _queue("APP.AFTER"))
    assert cap.problems == []
    assert [(r.get("QUEUE"), r.get("DESCR")) for r in cap.records] == [
        ("APP.BEFORE", None), ("APP.MID", TITLE), ("APP.AFTER", None)]


def test_zos_record_with_a_control_character_in_its_name_is_quarantined(tmp_path):
    def block(name: str) -> str:
        return ("CSQM201I +MQ1A CSQMDRTC  DISPLAY QCLUSTER DETAILS\n"
                f"QUEUE({name})\nTYPE(QCLUSTER)\nCLUSTER(CL1)\nCLUSQMGR(MQ2A)\nEND QCLUSTER DETAILS\n")

    path = tmp_path / "config.txt"
    path.write_text(block("APP.BEFORE") + block(BAD) + block("APP.AFTER"), encoding="utf-8")
    cap = parse_mqsc_file(path)  # z/OS output lands under the same names, and is told apart by its messages
    assert cap.fmt == "zos"
    _assert_quarantined(cap)


def _parameters(name: str) -> dict:
    return {"queue": name, "type": "QCLUSTER", "cluster": "CL1", "clusqmgr": "QM2"}


def test_rest_run_command_json_record_with_a_control_character_in_its_name_is_quarantined(tmp_path):
    doc = {"commandResponse": [{"completionCode": 0, "reasonCode": 0, "parameters": _parameters(name)}
                               for name in ("APP.BEFORE", BAD, "APP.AFTER")],
           "overallCompletionCode": 0, "overallReasonCode": 0}
    path = tmp_path / "qcluster.json"
    path.write_text(json.dumps(doc), encoding="utf-8")  # JSON writes ESC as \u001b; the reader decodes it
    cap = parse_rest_file(path)
    _assert_quarantined(cap, raw=json.dumps(BAD))


def test_rest_resource_get_queue_and_qmgr_with_a_control_character_in_a_name(tmp_path):
    queues = {"queue": [{"name": name, "type": "local", "cluster": {"name": "CL1"}}
                        for name in ("APP.BEFORE", BAD, "APP.AFTER")]}
    path = tmp_path / "queues.json"
    path.write_text(json.dumps(queues), encoding="utf-8")
    cap = parse_rest_file(path)
    assert [r.get("QUEUE") for r in cap.records] == ["APP.BEFORE", "APP.AFTER"]
    assert [p.reason for p in cap.problems] == [REASON]
    qmgr = tmp_path / "qmgr.json"
    qmgr.write_text(json.dumps({"qmgr": [{"name": f"QM1{TITLE}", "state": "running"}]}), encoding="utf-8")
    cap = parse_rest_file(qmgr)
    assert cap.records == [] and cap.banner_qmgr is None  # nor is it taken for the queue manager's name
    assert [p.reason for p in cap.problems] == [
        "control character in a name: QMNAME(QM1\\x1b]0;PWNED\\x07) holds U+001B, not a valid MQ name"]
