"""MQ REST API (runCommandJSON) response parser: envelopes, arrays, JSON Lines, not-found, errors (notes 2b)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clwl.parse import mqsc, rest
from clwl.parse.common import InputError
from clwl.parse.rest import parse_rest_file, parse_rest_text

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "rest"


def envelope(*parameters, overall_cc=0, overall_rc=0):
    return {
        "commandResponse": [{"completionCode": 0, "reasonCode": 0, "parameters": p} for p in parameters],
        "overallCompletionCode": overall_cc,
        "overallReasonCode": overall_rc,
    }


def test_clusqmgr_envelope():
    path = FIX / "clusqmgr_qm1.json"
    cap = parse_rest_file(path)
    assert (cap.fmt, cap.source, cap.banner_qmgr, cap.problems) == ("rest", str(path), None, [])
    assert [(r.kind, r.get("CLUSQMGR")) for r in cap.records] == [("CLUSQMGR", f"QM{i}") for i in range(1, 5)]
    local, _, qm3, qm4 = cap.records
    assert (local.get("DEFTYPE"), local.get("XMITQ"), local.get("DESCR")) == ("CLUSRCVR", "", "")
    assert (local.message_id, local.line, local.source) == ("", 0, str(path))
    assert qm3.get("DESCR") == "Auto-defined by QM3" and qm3.get("STATUS") == "INACTIVE"
    # integers become decimal text, blank strings are stripped, lower-case keys become MQSC keywords
    assert (qm4.get("CLWLWGHT"), qm4.get("CLWLPRTY"), qm4.get("NETPRTY"), qm4.get("DESCR")) == ("20", "1", "0", "")
    assert qm4.get("CONNAME") == "10.1.1.4(1414),10.1.1.5(1414)" and qm4.get("SUSPEND") == "YES"
    assert all(key == key.upper() for r in cap.records for key in r.attrs)


def test_array_of_envelopes_all_kinds():
    cap = parse_rest_file(FIX / "estate_qm1_array.json")
    assert cap.problems == []
    assert [r.kind for r in cap.records] == [
        "QMGR", "QCLUSTER", "QCLUSTER", "QLOCAL", "QALIAS", "QREMOTE", "CHSTATUS", "NAMELIST",
    ]
    qmgr, _, disabled, xmitq, alias, remote, chstatus, namelist = cap.records
    assert (qmgr.get("QMNAME"), qmgr.get("CLWLMRUC"), qmgr.get("DEFCLXQ")) == ("QM1", "999999999", "SCTQ")
    assert (disabled.get("CLUSQMGR"), disabled.get("PUT")) == ("QM4", "DISABLED")
    assert (xmitq.get("USAGE"), xmitq.get("CLCHNAME"), xmitq.get("CURDEPTH")) == ("XMITQ", "SALES.*", "0")
    assert alias.get("TARGET") == "APP.IN"
    assert (remote.get("RQMNAME"), remote.get("RNAME")) == ("QM3", "")
    assert chstatus.get("CURRENT") is None and "CURRENT" in chstatus.attrs  # null: like a bare keyword
    assert (chstatus.get("NETTIME"), chstatus.get("MSGS"), chstatus.get("CHSTATI")) == ("0,0", "1042", "10.16.01")
    assert (namelist.get("NAMES"), namelist.get("NAMCOUNT")) == ("CL1,CL2,SALES", "3")


@pytest.mark.parametrize("name", ["qcluster_not_found.json", "chstatus_not_found.json"])
def test_nothing_found_yields_nothing_and_no_problem(name):
    cap = parse_rest_file(FIX / name)
    assert (cap.records, cap.problems) == ([], [])


def test_failed_items_are_problems_with_their_reason_code():
    cap = parse_rest_file(FIX / "mixed_failures.json")
    assert [(r.kind, r.get("QUEUE")) for r in cap.records] == [("QLOCAL", "APP.IN")]
    assert [p.reason for p in cap.problems] == [
        "command failed: completionCode 2, reasonCode 2035: AMQ8135E: Not authorized.",
        "missing key attribute: QCLUSTER record without CLUSQMGR",
    ]
    assert json.loads(cap.problems[0].raw)["reasonCode"] == 2035
    assert json.loads(cap.problems[1].raw) == {"queue": "APP.CL", "type": "QCLUSTER", "cluster": "CL1"}
    # 2085 outside the "nothing found" envelope (overallReasonCode 3008) is a failure like any other
    text = json.dumps(
        {"commandResponse": [{"completionCode": 2, "reasonCode": 2085}], "overallCompletionCode": 2,
         "overallReasonCode": 2085}
    )
    (problem,) = parse_rest_text(text, "x.json").problems
    assert problem.reason == "command failed: completionCode 2, reasonCode 2085" and problem.line == 0
    # an empty commandResponse with a failing overall code
    text = json.dumps({"commandResponse": [], "overallCompletionCode": 2, "overallReasonCode": 2058})
    assert [p.reason for p in parse_rest_text(text, "x").problems] == [
        "command failed: overallCompletionCode 2, overallReasonCode 2058"
    ]


def test_wrapper_names_the_queue_manager():
    cap = parse_rest_file(FIX / "wrapped_qm2.json")
    assert cap.banner_qmgr == "QM2"
    assert [(r.kind, r.get("CLUSQMGR"), r.get("CLWLWGHT")) for r in cap.records] == [("CLUSQMGR", "QM2", "50")]


def test_json_lines_with_a_broken_line():
    path = FIX / "responses.jsonl"
    cap = parse_rest_file(path)
    assert cap.banner_qmgr == "QM3"
    assert [(r.kind, r.line, r.get("CHANNEL")) for r in cap.records] == [
        ("CLUSQMGR", 1, "TO.QM3"),
        ("CLUSQMGR", 2, "TO.QM2"),
        ("CHSTATUS", 5, "TO.QM2"),
    ]
    (problem,) = cap.problems
    assert (problem.source, problem.line) == (str(path), 3)
    assert problem.reason.startswith("invalid JSON: Expecting ',' delimiter at column ")
    assert problem.raw.startswith('{"commandResponse"') and '"TO.QM4"' in problem.raw


def test_nested_objects_are_flattened_as_pymqrest_does():
    cap = parse_rest_file(FIX / "conn_handles.json")
    assert cap.problems == []
    assert [dict(r.attrs) for r in cap.records] == [
        {"CONN": "A1B2C3D4E5F60001", "TYPE": "HANDLE", "APPLTAG": "amqsput", "CHANNEL": "", "OBJNAME": "APP.IN",
         "OBJTYPE": "QUEUE", "HSTATE": "ACTIVE", "OPENOPTS": "MQOO_OUTPUT,MQOO_BIND_NOT_FIXED"},
        {"CONN": "A1B2C3D4E5F60001", "TYPE": "HANDLE", "APPLTAG": "amqsput", "CHANNEL": "", "OBJNAME": "QM1",
         "OBJTYPE": "QMGR", "HSTATE": "INACTIVE", "OPENOPTS": "MQOO_INQUIRE"},
    ]
    assert {r.kind for r in cap.records} == {"OTHER"}
    # the nested object's keys win over the parent's
    text = json.dumps(envelope({"queue": "Q", "type": "QLOCAL", "objects": [{"type": "QALIAS", "target": "T"}]}))
    (record,) = parse_rest_text(text, "x").records
    assert (record.kind, record.get("TARGET")) == ("QALIAS", "T")


def test_mqweb_error_body_is_a_problem():
    (problem,) = parse_rest_file(FIX / "mqweb_error.json").problems
    assert problem.reason == (
        "REST error: MQWB0009E: Could not query the queue manager 'QM9'. (completionCode 2, reasonCode 2058)"
    )
    assert json.loads(problem.raw)["messageId"] == "MQWB0009E"


def test_value_conversions_and_duplicate_keys():
    text = json.dumps(
        envelope(
            {"queue": "Q", "type": "QLOCAL", "flag": True, "off": False, "ratio": 1.5, "whole": 2.0,
             "nested": {"b": 1, "a": "x"}, "mixed": ["A", 1, None]},
            {"Queue": "Q2", "queue": "Q3", "type": "QLOCAL"},
            {"QUEUE": "Q4", "queue": "Q4", "type": "QLOCAL"},
        )
    )
    cap = parse_rest_text(text, "x.json")
    first, same = cap.records
    assert (first.get("FLAG"), first.get("OFF"), first.get("RATIO"), first.get("WHOLE")) == ("YES", "NO", "1.5", "2")
    assert (first.get("NESTED"), first.get("MIXED")) == ('{"a":"x","b":1}', "A,1,")
    assert same.get("QUEUE") == "Q4"
    assert [p.reason for p in cap.problems] == [
        "duplicate attribute: QUEUE given twice with different values ('Q2', 'Q3')"
    ]


def test_odd_items_are_problems_not_crashes():
    text = json.dumps(
        [
            {"commandResponse": [{"completionCode": 0, "reasonCode": 0, "parameters": ["not", "an", "object"]},
                                 "not an item",
                                 {"completionCode": 0, "reasonCode": 0}],
             "overallCompletionCode": 0, "overallReasonCode": 0},
            42,
            {"unrelated": True},
        ]
    )
    cap = parse_rest_text(text, "x.json")
    assert cap.records == []
    assert [p.reason for p in cap.problems] == [
        "not a command response: parameters is not an object",
        "not a command response: commandResponse item is not an object",
        "not a command response: a JSON int",
        "not a command response: no commandResponse",
    ]


def test_invalid_json_names_file_and_position():
    path = FIX / "broken.json"
    with pytest.raises(InputError) as error:
        parse_rest_file(path)
    assert error.value.path == str(path)
    assert str(error.value) == (
        f"{path}: invalid JSON at line 4 column 78: Expecting property name enclosed in double quotes"
    )


def test_unusable_files_raise_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        parse_rest_file(tmp_path / "missing.json")
    with pytest.raises(InputError, match="not an MQ REST runCommandJSON response"):
        parse_rest_file(FIX / "not_a_response.json")
    with pytest.raises(InputError, match="invalid JSON at line 1 column 5: Extra data"):
        parse_rest_file(Path(__file__).resolve().parent.parent / "fixtures" / "mqsc" / "qm1_full_capture.txt")
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(InputError, match="empty file"):
        parse_rest_file(empty)


def test_rest_and_mqsc_share_the_classifier_and_agree():
    assert rest.classify is mqsc.classify
    rest_cap = parse_rest_file(FIX / "clusqmgr_qm1.json")
    mqsc_cap = mqsc.parse_mqsc_file(FIX.parent / "mqsc" / "qm1_full_capture.txt")
    mqsc_local = next(r for r in mqsc_cap.records if r.kind == "CLUSQMGR" and r.get("CLUSQMGR") == "QM1")
    rest_local = rest_cap.records[0]
    for key in ("CLUSQMGR", "CHANNEL", "CLUSTER", "DEFTYPE", "QMTYPE", "CLWLWGHT", "CONNAME", "XMITQ", "DESCR"):
        assert rest_local.get(key) == mqsc_local.get(key), key


def test_plain_run_command_text_answer_is_read_as_runmqsc_output():
    text = json.dumps(
        {
            "commandResponse": [
                {
                    "completionCode": 0,
                    "reasonCode": 0,
                    "text": [
                        "AMQ8441I: Display Cluster Queue Manager details.",
                        "   CLUSQMGR(QM2)                           CHANNEL(TO.QM2)",
                        "   CLUSTER(CL1)                            CONNAME(qm2.example.com(1414))",
                        "AMQ8441I: Display Cluster Queue Manager details.",
                        "   CLUSQMGR(QM3)                           CHANNEL(TO.QM3)",
                        "   CLUSTER(CL1)                            CLWLWGHT 50",
                    ],
                }
            ],
            "overallCompletionCode": 0,
            "overallReasonCode": 0,
        }
    )
    cap = parse_rest_text(text, "plain.json")
    assert [(r.kind, r.get("CLUSQMGR"), r.get("CONNAME"), r.message_id, r.line) for r in cap.records] == [
        ("CLUSQMGR", "QM2", "qm2.example.com(1414)", "AMQ8441I", 0)
    ]
    assert [(p.line, p.reason.split(":")[0]) for p in cap.problems] == [(0, "not KEY(value) or a keyword")]


# ------------------------------------------------------------------------------------------------------------
# Issue 17 item 2: resource GETs (GET /ibmmq/rest/v1|v2/admin/qmgr/{qmgr}/queue?attributes=*, .../channel, qmgr)


def test_queue_resource_get_gives_queue_records_with_mqsc_keywords():
    cap = parse_rest_file(FIX / "queue_get_v2.json")
    assert cap.fmt == "rest" and cap.problems == []
    assert [(r.kind, r.get("QUEUE")) for r in cap.records] == [
        ("QLOCAL", "APP.ORDERS"), ("QLOCAL", "SYSTEM.CLUSTER.TRANSMIT.QUEUE"), ("QLOCAL", "XMITQ.SALES"),
        ("QALIAS", "APP.ORDERS.ALIAS"), ("QREMOTE", "TO.BILLING")]
    orders, sctq, sales, alias, remote = cap.records
    # REST spells values its own way; the record spells them as runmqsc does
    assert (orders.get("CLUSTER"), orders.get("CLWLUSEQ"), orders.get("DEFBIND"), orders.get("PUT"),
            orders.get("USAGE")) == ("CL1", "ANY", "NOTFIXED", "ENABLED", "NORMAL")
    assert (sctq.get("USAGE"), sctq.get("CLWLUSEQ"), sctq.get("DEFBIND")) == ("XMITQ", "QMGR", "OPEN")
    assert (sales.get("USAGE"), sales.get("CLCHNAME")) == ("XMITQ", "SALES.*")
    assert (alias.get("PUT"), alias.get("TARGET"), alias.get("TARGTYPE"), alias.get("CLWLPRTY"),
            alias.get("CLWLRANK"), alias.get("DEFBIND")) == ("DISABLED", "APP.ORDERS", "QUEUE", "3", "1", "GROUP")
    assert (remote.get("RNAME"), remote.get("RQMNAME")) == ("BILLING.IN", "QM3")
    # attributes without an MQSC keyword of their own are kept under their path
    assert orders.get("STORAGE.MAXIMUMDEPTH") == "5000"


def test_channel_and_qmgr_resource_gets():
    channels = parse_rest_file(FIX / "channel_get_v1.json")
    assert channels.problems == []
    assert [(r.kind, r.get("CHANNEL"), r.get("CHLTYPE")) for r in channels.records] == [
        ("CHANNEL", "TO.QM1", "CLUSRCVR"), ("CHANNEL", "TO.QM2", "CLUSSDR"), ("CHANNEL", "APP.SVRCONN", "SVRCONN")]
    assert (channels.records[0].get("CLWLWGHT"), channels.records[0].get("NETPRTY")) == ("80", "0")
    qmgr = parse_rest_file(FIX / "qmgr_get_v2.json")
    # The qmgr resource is dspmq-like status, none of DISPLAY QMGR's cluster attributes (CLWLUSEQ, DEFCLXQ, ...):
    # a QMGR record would replace the real one with defaults, so it is OTHER; its name is the banner.
    assert qmgr.problems == [] and [r.kind for r in qmgr.records] == ["OTHER"]
    assert qmgr.banner_qmgr == "QM1" and qmgr.records[0].get("STATUS.CONNECTIONCOUNT") == "23"


def test_resource_get_records_without_type_or_cluster_qmgr_are_problems():
    cap = parse_rest_file(FIX / "queue_get_missing_type.json")
    assert [r.get("QUEUE") for r in cap.records] == ["APP.ORDERS"]
    # a cluster queue from the queue resource does not say which queue manager hosts the instance: DISPLAY
    # QCLUSTER (runCommandJSON) is the only source of a partial repository's cluster queue instances
    assert [p.reason for p in cap.problems] == [
        "missing key attribute: queue record without TYPE",
        "missing key attribute: QCLUSTER record without CLUSQMGR"]
    assert '"APP.INVOICES"' in cap.problems[0].raw


# Issue 17 item 6: a runCommandJSON queue record without "type" is a problem, as on the runmqsc path


def test_run_command_json_queue_record_without_type_is_a_problem():
    cap = parse_rest_file(FIX / "command_missing_type.json")
    assert [r.get("QUEUE") for r in cap.records] == ["APP.ORDERS"]
    assert [p.reason for p in cap.problems] == ["missing key attribute: queue record without TYPE"]
    # the runmqsc path says the same for the same record
    text = ("AMQ8409I: Display Queue details.\n   QUEUE(APP.INVOICES)   CLUSTER(CL1)\n   DEFBIND(NOTFIXED)\n")
    assert [p.reason for p in mqsc.parse_mqsc_text(text, "t").problems] == [cap.problems[0].reason]


# Issue 17 item 5: the REST plain-text answer of a z/OS queue manager


def test_zos_run_command_text_answer_is_read_as_zos_output():
    cap = parse_rest_file(FIX / "zos_runcommand_text.json")
    assert cap.problems == []
    [qmgr] = cap.records
    assert (qmgr.kind, qmgr.message_id) == ("QMGR", "CSQM201I")
    assert (qmgr.get("QMNAME"), qmgr.get("QSGNAME"), qmgr.get("IGQ")) == ("MQ1A", "QSG1", "ENABLED")
