"""runmqsc text parser: every quirk of the runmqsc captures (docs/formats.md), the malformed cases, the banner heuristic."""

from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clwl.parse.common import InputError, MqscRecord, ParsedCapture
from clwl.parse.mqsc import classify, parse_mqsc_file, parse_mqsc_text

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mqsc"
BANNER = "5724-H72 (C) Copyright IBM Corp. 1994, 2025.\nStarting MQSC for queue manager QM1.\n\n\n"
CLOSING = "One MQSC command read.\nNo commands have a syntax error.\nAll valid MQSC commands were processed.\n"


def capture(body: str, command: str = "DISPLAY CLUSQMGR(*) ALL") -> ParsedCapture:
    return parse_mqsc_text(BANNER + f"     1 : {command}\n" + body + CLOSING, "inline.txt")


def only(cap: ParsedCapture) -> MqscRecord:
    assert not cap.problems, cap.problems
    assert len(cap.records) == 1, cap.records
    return cap.records[0]


def by_kind(cap: ParsedCapture, kind: str) -> list[MqscRecord]:
    return [r for r in cap.records if r.kind == kind]


# --------------------------------------------------------------------------------------------------------------
# A realistic multi-command capture


def test_full_capture_of_one_queue_manager():
    path = FIX / "qm1_full_capture.txt"
    cap = parse_mqsc_file(path)
    assert cap.fmt == "mqsc" and cap.source == str(path)
    assert cap.banner_qmgr == "QM1"
    assert cap.problems == []
    assert [r.kind for r in cap.records] == (
        ["QMGR"] + ["CLUSQMGR"] * 5 + ["QCLUSTER"] * 4 + ["QLOCAL"] * 3 + ["QALIAS", "QREMOTE"] + ["CHSTATUS"] * 2
    )
    assert all(r.source == str(path) for r in cap.records)

    qmgr = by_kind(cap, "QMGR")[0]
    assert (qmgr.line, qmgr.message_id) == (6, "AMQ8408I")
    assert qmgr.get("QMNAME") == "QM1" and qmgr.get("CLWLUSEQ") == "LOCAL" and qmgr.get("DEFCLXQ") == "SCTQ"
    assert "SYNCPT" in qmgr.attrs and qmgr.get("SYNCPT") is None  # bare keyword
    assert qmgr.get("CLWLMRUC") == "999999999" and qmgr.get("DESCR") == ""

    clusqmgrs = {r.get("CLUSQMGR"): r for r in by_kind(cap, "CLUSQMGR")}
    assert list(clusqmgrs) == ["QM1", "QM2", "QM3", "QM4", "SALES.QM5"]
    local = clusqmgrs["QM1"]
    assert (local.line, local.get("DEFTYPE"), local.get("XMITQ")) == (58, "CLUSRCVR", "")
    assert local.get("CONNAME") == "qm1.example.com(1414)"
    assert clusqmgrs["QM2"].get("QMTYPE") == "REPOS" and clusqmgrs["QM2"].get("DEFTYPE") == "CLUSSDRB"
    assert clusqmgrs["QM3"].get("STATUS") == "INACTIVE"
    assert clusqmgrs["QM3"].get("DESCR") == "Auto-defined by QM3"
    qm4 = clusqmgrs["QM4"]
    assert qm4.get("CONNAME") == "10.1.1.4(1414),10.1.1.5(1414)"
    assert (qm4.get("STATUS"), qm4.get("CLWLWGHT"), qm4.get("CLWLPRTY")) == ("RETRYING", "20", "1")
    assert qm4.get("CLUSTIME") == "10.15.07" and qm4.get("QMID") == "QM4_2025-04-22_03.01.05"
    assert clusqmgrs["SALES.QM5"].get("XMITQ") == "XMITQ.SALES"

    instances = by_kind(cap, "QCLUSTER")
    assert [(q.get("QUEUE"), q.get("CLUSQMGR"), q.get("PUT")) for q in instances] == [
        ("APP.IN", "QM1", "ENABLED"),
        ("APP.IN", "QM2", "ENABLED"),
        ("APP.IN", "QM4", "DISABLED"),
        ("QM3.ALIAS", "QM2", "ENABLED"),
    ]
    assert instances[3].get("CLUSQT") == "QMGR" and instances[0].get("CLUSNL") == ""

    xmitqs = {q.get("QUEUE"): q for q in by_kind(cap, "QLOCAL") if q.get("USAGE") == "XMITQ"}
    assert xmitqs["XMITQ.SALES"].get("CLCHNAME") == "SALES.*"  # quoted in the capture
    assert xmitqs["SYSTEM.CLUSTER.TRANSMIT.QUEUE"].get("CLCHNAME") == ""
    app_in = by_kind(cap, "QLOCAL")[0]
    assert app_in.get("CLUSTER") == "CL1" and app_in.get("NOTRIGGER", "missing") is None

    alias = by_kind(cap, "QALIAS")[0]
    assert (alias.get("TARGET"), alias.get("DEFBIND"), alias.get("DESCR")) == (
        "APP.IN",
        "NOTFIXED",
        "Alias for the cluster queue",
    )
    remote = by_kind(cap, "QREMOTE")[0]
    assert (remote.get("QUEUE"), remote.get("RQMNAME"), remote.get("RNAME"), remote.get("XMITQ")) == (
        "QM3.ALIAS",
        "QM3",
        "",
        "",
    )

    sdr, retrying = by_kind(cap, "CHSTATUS")
    assert (sdr.get("CHANNEL"), sdr.get("STATUS"), sdr.get("SUBSTATE"), sdr.get("MSGS")) == (
        "TO.QM2",
        "RUNNING",
        "MQGET",
        "1042",
    )
    assert "CURRENT" in sdr.attrs and sdr.get("CURRENT") is None
    assert sdr.get("NETTIME") == "0,0" and sdr.get("CHSTATI") == "10.16.01"
    assert sdr.get("LOCLADDR") == "10.1.1.1(51234)"
    assert (retrying.get("STATUS"), retrying.get("SUBSTATE")) == ("RETRYING", "")


def test_message_ids_without_severity_letter_mq90():
    cap = parse_mqsc_file(FIX / "v90_clusqmgr_no_severity.txt")
    assert cap.banner_qmgr == "A" and cap.problems == []
    assert [(r.kind, r.message_id, r.get("CLUSQMGR")) for r in cap.records] == [
        ("CLUSQMGR", "AMQ8441", name) for name in "ABCD"
    ]
    first = cap.records[0]
    assert (first.get("CONNAME"), first.get("QMTYPE"), first.get("DEFTYPE")) == ("LOCALHOST(3131)", "REPOS", "CLUSRCVR")
    assert first.get("QMID") == "A_2019-01-25_09.17.12" and first.get("ALTTIME") == "09.17.13"
    assert cap.records[2].get("DESCR") == "Auto-defined by"
    assert first.get("VERSION") == "09000000"


def test_japanese_banner_record_text_and_closing_lines():
    cap = parse_mqsc_file(FIX / "japanese_chstatus.txt")
    assert cap.banner_qmgr == "QM_GK01"
    assert cap.problems == []
    assert [r.kind for r in cap.records] == ["CHSTATUS"] * 4
    assert [r.line for r in cap.records] == [6, 11, 16, 21]
    assert cap.records[0].message_id == "AMQ8417"
    assert cap.records[0].get("CONNAME") == "10.40.1.12"
    assert cap.records[-1].get("CONNAME") == "10.40.1.21(1414)"
    assert cap.records[-1].get("XMITQ") == "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
    assert cap.records[-1].get("CURRENT") is None


def test_colon_and_dot_times_are_kept_as_text_and_qmstatus_is_other():
    cap = parse_mqsc_file(FIX / "qmstatus_colon_times.txt")
    assert cap.problems == []
    status, qmgr = cap.records
    assert (status.kind, status.message_id) == ("OTHER", "AMQ8705I")
    assert status.get("LOGSTRTI") == "11:32:56" and status.get("STARTTI") == "11.32.55"
    assert status.get("LOGPATH") == "/var/mqm/log/QM1/active/"
    assert (qmgr.kind, qmgr.get("ALTTIME"), qmgr.get("REPOS")) == ("QMGR", "03.01.09", "")


def test_not_found_and_syntax_error_messages_are_neither_records_nor_problems():
    cap = parse_mqsc_file(FIX / "not_found_messages.txt")
    assert cap.problems == []
    (namelist,) = cap.records
    assert (namelist.kind, namelist.message_id, namelist.line) == ("NAMELIST", "AMQ8550I", 24)
    assert namelist.get("NAMES") == "CL1,CL2,SALES" and namelist.get("NAMCOUNT") == "3"


def test_long_values_pushed_right_or_continued_on_the_next_line():
    cap = parse_mqsc_file(FIX / "long_values.txt")
    assert cap.problems == []
    qm7, qm8 = cap.records
    assert qm7.get("CONNAME") == (
        "mqhost-primary.datacentre-one.example.com(1414),mqhost-standby.datacentre-two.example.com(1414)"
    )
    assert qm7.get("DESCR") == "Cluster receiver of QM7, primary and standby hosts, owned by the integration team"
    assert qm7.get("DISCINT") == "6000" and qm7.get("CONVERT") == "NO"
    assert qm8.get("CONNAME") == "10.1.1.8(1414),10.1.1.9(1414)"
    assert qm8.get("DESCR") == "Cluster receiver of QM8, which spans two lines of output"
    assert (qm8.get("DEFTYPE"), qm8.get("QMTYPE"), qm8.line) == ("CLUSSDRA", "NORMAL", 17)


# --------------------------------------------------------------------------------------------------------------
# Malformed records: quarantined with file, line and a specific reason; the good ones around them survive

MALFORMED = [
    (10, "unbalanced parenthesis: unclosed '(' in 'CONNAME(qm2.example.com(1414) DEFTYPE(CLUSSDRA)", "line 12"),
    (14, "not KEY(value) or a keyword: '50' in 'CLUSTER(CL1) CLWLWGHT 50'", "line 16"),
    (18, "unbalanced parenthesis: stray ')' in 'CLUSTER(CL1) CLWLRANK(0))'", "line 20"),
    (22, "missing key attribute: CLUSQMGR record without CHANNEL", ""),
    (26, "duplicate attribute: CLWLWGHT given twice with different values ('50', '20')", ""),
    (35, "missing key attribute: QCLUSTER record without CLUSQMGR", ""),
    (43, "attributes outside a record: no AMQnnnn message before 'QUEUE(APP.IN) TYPE(QLOCAL)'", ""),
    (46, "not KEY(value) or a keyword: text after the closing quote in \"DESCR('quoted' and more)", "line 48"),
    (49, "unclosed quote: \"DESCR('never closed) TARGET(APP.IN)\"", "line 51"),
]


def test_malformed_records_become_problems_with_line_and_reason():
    path = FIX / "malformed.txt"
    cap = parse_mqsc_file(path)
    assert len(cap.problems) == len(MALFORMED)
    for problem, (line, prefix, where) in zip(cap.problems, MALFORMED):
        assert problem.line == line, problem
        assert problem.reason.startswith(prefix), problem.reason
        assert where in problem.reason, problem.reason
    assert all(p.source == str(path) for p in cap.problems)
    # raw is the record's own text, from its AMQ line
    assert cap.problems[0].raw.splitlines() == [
        "AMQ8441I: Display Cluster Queue Manager details.",
        "   CLUSQMGR(QM2)                           CHANNEL(TO.QM2)",
        "   CLUSTER(CL1)                            CONNAME(qm2.example.com(1414)",
        "   DEFTYPE(CLUSSDRA)                       STATUS(RUNNING)",
    ]
    assert cap.problems[6].raw.splitlines()[0].strip().startswith("QUEUE(APP.IN)")
    # the good records: QM1, QM7 (same value twice is fine) and the QCLUSTER instance on QM2
    assert [(r.kind, r.line) for r in cap.records] == [("CLUSQMGR", 6), ("CLUSQMGR", 30), ("QCLUSTER", 38)]
    assert cap.records[1].get("CLWLWGHT") == "50"


def test_record_truncated_at_end_of_file():
    cap = parse_mqsc_file(FIX / "truncated.txt")
    assert [r.get("CLUSQMGR") for r in cap.records] == ["QM9"]
    (problem,) = cap.problems
    assert problem.line == 9
    assert problem.reason == (
        "record truncated at end of file: unclosed '(' in 'CONNAME(qm2.example.com(14' at line 11"
    )
    assert problem.raw.endswith("CONNAME(qm2.example.com(14")


def test_open_parenthesis_is_continued_only_while_the_record_goes_on():
    cap = capture(
        "AMQ8441I: Display Cluster Queue Manager details.\n"
        "   CLUSQMGR(QM2)                           CHANNEL(TO.QM2)\n"
        "   CLUSTER(CL1)                            CONNAME(qm2.example.com(1414)\n"
        "AMQ8441I: Display Cluster Queue Manager details.\n"
        "   CLUSQMGR(QM3)                           CHANNEL(TO.QM3)\n"
        "   CLUSTER(CL1)                            CONNAME(qm3(1414))\n"
    )
    assert [r.get("CLUSQMGR") for r in cap.records] == ["QM3"]
    (problem,) = cap.problems
    assert (problem.line, problem.reason) == (
        6,
        "unbalanced parenthesis: unclosed '(' in 'CONNAME(qm2.example.com(1414)' at line 8",
    )


def test_truncated_right_after_the_header():
    text = BANNER + "     1 : DISPLAY CLUSQMGR(*) ALL\nAMQ8441I: Display Cluster Queue Manager details.\n"
    cap = parse_mqsc_text(text, "t")
    assert cap.records == []
    assert [(p.line, p.reason) for p in cap.problems] == [
        (6, "record truncated at end of file: AMQ8441I message without attributes")
    ]


def test_attribute_lines_without_a_header_before_the_first_record():
    text = BANNER + "     1 : DISPLAY CLUSQMGR(*) ALL\n   CLUSQMGR(QM2)      CHANNEL(TO.QM2)\n" + CLOSING
    cap = parse_mqsc_text(text, "t")
    assert cap.records == []
    assert [(p.line, p.reason.split(":")[0]) for p in cap.problems] == [(6, "attributes outside a record")]


# --------------------------------------------------------------------------------------------------------------
# Tokeniser


def test_nested_parentheses_and_empty_values():
    rec = only(
        capture(
            "AMQ8441I: Display Cluster Queue Manager details.\n"
            "   CLUSQMGR(QM2)                           CHANNEL(TO.QM2)\n"
            "   CLUSTER(CL1)                            CONNAME(host(1414))\n"
            "   DESCR( )                                XMITQ( )\n"
            "   LOCLADDR(10.0.0.1(1000,1010))           MRDATA()\n"
            "   SSLPEER(CN=a(b(c)),O=x)\n"
        )
    )
    assert rec.get("CONNAME") == "host(1414)"
    assert rec.get("DESCR") == "" and rec.get("XMITQ") == "" and rec.get("MRDATA") == ""
    assert rec.get("LOCLADDR") == "10.0.0.1(1000,1010)"
    assert rec.get("SSLPEER") == "CN=a(b(c)),O=x"  # deeper nesting: the exact scanner


def test_quoted_values_bare_keywords_blanks_and_case():
    rec = only(
        capture(
            "AMQ8409I: Display Queue details.\n"
            "   queue(APP.IN)                           type(QLOCAL)\n"
            "   DESCR('it''s a (test) queue')           CLCHNAME('SALES.*')\n"
            "   TRIGDATA(  padded value  )              NOTRIGGER\n"
            "   SHARE                                   NEWATTR2030(some future value)\n"
            "\tBOQNAME(tab.separated)\tUSAGE(NORMAL)\n",
            "DISPLAY QLOCAL(APP.IN) ALL",
        )
    )
    assert rec.kind == "QLOCAL"
    assert rec.get("QUEUE") == "APP.IN" and rec.get("TYPE") == "QLOCAL"  # keys upper-cased
    assert rec.get("DESCR") == "it's a (test) queue"
    assert rec.get("CLCHNAME") == "SALES.*"
    assert rec.get("TRIGDATA") == "padded value"
    assert rec.attrs["NOTRIGGER"] is None and rec.attrs["SHARE"] is None
    assert rec.get("NEWATTR2030") == "some future value"  # unknown attributes are kept
    assert rec.get("BOQNAME") == "tab.separated" and rec.get("USAGE") == "NORMAL"


def test_apostrophe_inside_an_unquoted_value_is_literal():
    rec = only(
        capture(
            "AMQ8409I: Display Queue details.\n"
            "   QUEUE(APP.IN)                           TYPE(QLOCAL)\n"
            "   DESCR(Bob's queue)\n",
            "DISPLAY QLOCAL(APP.IN) ALL",
        )
    )
    assert rec.get("DESCR") == "Bob's queue"


def test_several_items_per_line_at_any_column_and_adjacent_items():
    rec = only(
        capture(
            "AMQ8417I: Display Channel Status details.\n"
            " CHANNEL(TO.QM2) CHLTYPE(CLUSSDR)  CONNAME(h(1))   CURRENT STATUS(RUNNING)\n"
            "          RQMNAME(QM2)SUBSTATE(MQGET)\n",
            "DISPLAY CHSTATUS(*) ALL",
        )
    )
    assert rec.kind == "CHSTATUS"
    assert dict(rec.attrs) == {
        "CHANNEL": "TO.QM2",
        "CHLTYPE": "CLUSSDR",
        "CONNAME": "h(1)",
        "CURRENT": None,
        "STATUS": "RUNNING",
        "RQMNAME": "QM2",
        "SUBSTATE": "MQGET",
    }


def test_windows_line_endings_bom_utf16_and_latin1(tmp_path):
    text = (FIX / "v90_clusqmgr_no_severity.txt").read_text(encoding="utf-8")
    expected = parse_mqsc_text(text, "x")
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes(codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le"))
    bom = tmp_path / "bom.txt"
    bom.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    for path in (crlf, utf16, bom):
        cap = parse_mqsc_file(path)
        assert cap.problems == [] and cap.banner_qmgr == "A"
        assert [(r.line, dict(r.attrs)) for r in cap.records] == [(r.line, dict(r.attrs)) for r in expected.records]
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(
        (BANNER + "     1 : DISPLAY QLOCAL(Q) ALL\nAMQ8409I: Display Queue details.\n"
         "   QUEUE(Q)    TYPE(QLOCAL)\n   DESCR(File d'entrée)\n").encode("latin-1")
    )
    assert only(parse_mqsc_file(latin1)).get("DESCR") == "File d'entrée"


# --------------------------------------------------------------------------------------------------------------
# Inputs that cannot be used at all


def test_missing_directory_empty_and_foreign_files_raise_input_error(tmp_path):
    with pytest.raises(InputError) as missing:
        parse_mqsc_file(tmp_path / "nope.txt")
    assert missing.value.path == str(tmp_path / "nope.txt") and "no such file" in str(missing.value)
    with pytest.raises(InputError, match="directory"):
        parse_mqsc_file(tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match="empty file"):
        parse_mqsc_file(empty)
    with pytest.raises(InputError) as foreign:
        parse_mqsc_file(FIX / "not_runmqsc.txt")
    assert str(foreign.value).startswith(str(FIX / "not_runmqsc.txt") + ": not runmqsc output")
    with pytest.raises(InputError):
        parse_mqsc_file(Path(__file__).resolve().parent.parent / "fixtures" / "rest" / "clusqmgr_qm1.json")


def test_output_without_banner_is_still_runmqsc():
    text = "AMQ8441I: Display Cluster Queue Manager details.\n   CLUSQMGR(QM2) CHANNEL(TO.QM2) CLUSTER(CL1)\n"
    cap = parse_mqsc_text(text, "x")
    assert cap.banner_qmgr is None and [r.get("CLUSQMGR") for r in cap.records] == ["QM2"]
    cap = parse_mqsc_text("     1 : DISPLAY CHSTATUS(X)\nAMQ8420I: Channel Status not found.\n", "x")
    assert (cap.records, cap.problems, cap.banner_qmgr) == ([], [], None)


# --------------------------------------------------------------------------------------------------------------
# Banner queue manager


@pytest.mark.parametrize(
    ("banner", "expected"),
    [
        ("Starting MQSC for queue manager QM1.", "QM1"),
        ("Starting MQSC for queue manager qm.lower.case.", "qm.lower.case"),
        ("Démarrage de MQSC pour le gestionnaire de files d'attente QMFR1.", "QMFR1"),
        ("MQSC für Warteschlangenmanager QM_DE wird gestartet.", "QM_DE"),
        ("キュー・マネージャー QMJP の MQSC を開始しています。", "QMJP"),
        ("队列管理器 QM.CN1 启动 MQSC。", "QM.CN1"),
        ("Iniciando MQSC para el gestor de colas QM%ES/1.", "QM%ES/1"),
        ("Avvio di MQSC per il gestore code qmitalia.", "qmitalia"),
        ("", None),
    ],
)
def test_banner_queue_manager_in_any_language(banner, expected):
    text = "5724-H72 (C) Copyright IBM Corp. 1994, 2025.  ALL RIGHTS RESERVED.\n" + banner + "\n\n\n"
    text += "     1 : DISPLAY QMGR QMNAME\nAMQ8408I: Display Queue Manager details.\n   QMNAME(QMX)\n"
    assert parse_mqsc_text(text, "x").banner_qmgr == expected


def test_banner_is_only_read_before_the_first_command():
    text = "     1 : DISPLAY QMGR QMNAME\nAMQ8408I: Display Queue Manager details.\n   QMNAME(QMX)\n"
    text += "Starting MQSC for queue manager QM1.\n"
    assert parse_mqsc_text(text, "x").banner_qmgr is None


# --------------------------------------------------------------------------------------------------------------
# Classifier (shared with the REST parser)


@pytest.mark.parametrize(
    ("attrs", "message_id", "kind"),
    [
        ({"CLUSQMGR": "QM2", "CHANNEL": "TO.QM2", "CLUSTER": "CL1", "STATUS": "RUNNING"}, "", "CLUSQMGR"),
        ({"QUEUE": "Q", "TYPE": "QCLUSTER", "CLUSQMGR": "QM2"}, "AMQ8409I", "QCLUSTER"),
        ({"QUEUE": "Q", "CLUSQMGR": "QM2"}, "", "QCLUSTER"),
        ({"QUEUE": "Q", "TYPE": "QLOCAL"}, "", "QLOCAL"),
        ({"QUEUE": "Q", "TYPE": "QALIAS"}, "", "QALIAS"),
        ({"QUEUE": "Q", "TYPE": "QREMOTE"}, "", "QREMOTE"),
        ({"QUEUE": "Q", "TYPE": "QMODEL"}, "", "QMODEL"),
        ({"QUEUE": "Q", "TYPE": "QUEUE", "CURDEPTH": "0"}, "AMQ8450I", "OTHER"),  # DISPLAY QSTATUS
        ({"QUEUE": "Q"}, "AMQ8409I", "QUEUE"),  # queue without TYPE: a problem later
        ({"QUEUE": "Q"}, "", "OTHER"),
        ({"QMNAME": "QM1", "DEADQ": "DLQ"}, "", "QMGR"),
        ({"QMNAME": "QM1", "STATUS": "RUNNING"}, "AMQ8705I", "OTHER"),
        ({"QMNAME": "QM1", "STATUS": "RUNNING"}, "AMQ8408I", "QMGR"),
        ({"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR", "STATUS": "RUNNING"}, "", "CHSTATUS"),
        ({"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR", "CURRENT": None}, "", "CHSTATUS"),
        ({"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR", "SAVED": None}, "", "CHSTATUS"),
        ({"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR", "MSGS": "0"}, "", "CHSTATUS"),
        ({"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR", "CONNAME": "h(1)"}, "", "CHANNEL"),
        ({"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR", "CONNAME": "h(1)"}, "AMQ8417", "CHSTATUS"),
        ({"CHANNEL": "TO.QM2", "CONNAME": "h(1)"}, "AMQ8417I", "CHSTATUS"),  # missing CHLTYPE: a problem later
        ({"CHANNEL": "TO.QM2", "CLUSTER": "CL1"}, "AMQ8441I", "CLUSQMGR"),  # missing CLUSQMGR: a problem later
        ({"CHANNEL": "", "CONN": "A1B2", "TYPE": "HANDLE"}, "", "OTHER"),
        ({"NAMELIST": "NL", "NAMES": "A,B,C"}, "", "NAMELIST"),
        ({"TOPIC": "T", "TOPICSTR": "a/b"}, "AMQ8633I", "OTHER"),
        ({"DESCR": "x"}, "AMQ8550I", "NAMELIST"),  # missing NAMELIST: a problem later
    ],
)
def test_classifier_decides_from_attributes_and_breaks_ties_with_the_message_id(attrs, message_id, kind):
    assert classify(attrs, message_id) == kind


def test_known_kind_missing_its_key_attribute_is_a_problem():
    cap = capture(
        "AMQ8409I: Display Queue details.\n   QUEUE(APP.IN)     DESCR(no type)\n"
        "AMQ8417I: Display Channel Status details.\n   CHANNEL(TO.QM2)   STATUS(RUNNING)\n"
        "AMQ8408I: Display Queue Manager details.\n   QMNAME( )    DEADQ(DLQ)\n"
    )
    assert cap.records == []
    assert [(p.line, p.reason) for p in cap.problems] == [
        (6, "missing key attribute: queue record without TYPE"),
        (8, "missing key attribute: CHSTATUS record without CHLTYPE"),
        (10, "missing key attribute: QMGR record with empty QMNAME"),
    ]


# --------------------------------------------------------------------------------------------------------------
# Properties, speed, purity

_KEYS = st.from_regex(r"[A-Z][A-Z0-9]{0,9}", fullmatch=True)
_WORD = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcxyz0123456789._/%-*,=:", min_size=1, max_size=12)
_VALUES = st.lists(
    st.one_of(_WORD, _WORD.map(lambda w: f"{w}({w})"), _WORD.map(lambda w: f"h({w}(1))")), min_size=1, max_size=4
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        _KEYS, st.one_of(st.none(), st.just(""), _VALUES, _VALUES.map(lambda v: v + "'s")), min_size=1, max_size=12
    ),
    st.integers(min_value=0, max_value=2),
    st.booleans(),
)
def test_rendered_records_parse_back_exactly(attrs, layout, quote):
    attrs = {"CLUSQMGR": "QM2", "CHANNEL": "TO.QM2", "CLUSTER": "CL1", **attrs}

    def item(key, value):
        if value is None:
            return key
        if value == "":
            return f"{key}( )"
        if quote:
            return f"{key}('" + value.replace("'", "''") + "')"
        return f"{key}({value})"

    items = [item(k, v) for k, v in attrs.items()]
    if layout == 0:  # two per line at column 43, long ones pushing the next right
        lines = ["   " + a.ljust(40) + b for a, b in zip(items[::2], items[1::2] + [""])]
    elif layout == 1:  # one per line
        lines = ["   " + a for a in items]
    else:  # all on one line
        lines = ["   " + " ".join(items)]
    body = "AMQ8441I: Display Cluster Queue Manager details.\n" + "\n".join(lines) + "\n"
    rec = only(capture(body))
    assert dict(rec.attrs) == attrs


def test_many_records_keep_their_line_numbers():
    record = (
        "AMQ8417I: Display Channel Status details.\n"
        "   CHANNEL(TO.QM{i})                        CHLTYPE(CLUSSDR)\n"
        "   CONNAME(10.1.1.{i}(1414))                CURRENT\n"
        "   RQMNAME(QM{i})                           STATUS(RUNNING)\n"
        "   SUBSTATE(MQGET)                         XMITQ(SYSTEM.CLUSTER.TRANSMIT.QUEUE)\n"
    )
    n = 20000
    text = BANNER + "     1 : DISPLAY CHSTATUS(*) ALL\n" + "".join(record.format(i=i) for i in range(n)) + CLOSING
    cap = parse_mqsc_text(text, "big.txt")
    assert len(cap.records) == n and not cap.problems
    assert cap.records[-1].line == 6 + 5 * (n - 1)


def test_parsers_import_neither_pyspark_nor_airflow():
    code = (
        "import sys, clwl.parse.mqsc, clwl.parse.rest; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'airflow')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------------------------------------------
# Issue 17 item 1: runmqsc copied from an interactive terminal (typed command at column 0, then its echo)


def test_interactive_terminal_copy_skips_the_typed_commands():
    path = FIX / "interactive_terminal_copy.txt"
    cap = parse_mqsc_file(path)
    # Before: the typed "DIS QC(*) CLUSQMGR" was read as attributes of the CLUSQMGR(QM2) record above it
    # (CLUSQMGR twice, different values: quarantined -- a CLUSQMGR record lost), the typed DISPLAY CLUSQMGR
    # cost the QMGR record its key attributes, and "DIS Q(APP.*) TYPE(QLOCAL) ..." repeated TYPE.
    assert cap.problems == []
    assert [(r.kind, r.line) for r in cap.records] == [
        ("QMGR", 7), ("CLUSQMGR", 12), ("CLUSQMGR", 16), ("QCLUSTER", 22), ("QCLUSTER", 25), ("QLOCAL", 30),
        ("CHSTATUS", 35), ("CLUSQMGR", 44)]
    qm2 = cap.records[2]
    assert dict(qm2.attrs) == {"CLUSQMGR": "QM2", "CHANNEL": "TO.QM2", "CLUSTER": "CL1", "DEFTYPE": "CLUSSDRA",
                               "STATUS": "RUNNING"}
    assert dict(cap.records[0].attrs) == {"QMNAME": "QM1", "CLWLUSEQ": "LOCAL", "DEFCLXQ": "SCTQ"}
    # a command typed over two lines ("+" continuation) and echoed over two lines is skipped as a whole
    assert dict(cap.records[6].attrs)["XMITQ"] == "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
    assert cap.banner_qmgr == "QM1"


def test_a_column_0_line_that_no_echo_repeats_is_still_read():
    # Not typed input: the echo below says something else, so the line stays an attribute line of the record
    # (and its CLUSQMGR differs: the duplicate is still reported).
    body = ("AMQ8441I: Display Cluster Queue Manager details.\n"
            "   CLUSQMGR(QM2)                           CHANNEL(TO.QM2)\n"
            "   CLUSTER(CL1)\n"
            "DIS QC(*) CLUSQMGR\n"
            "     2 : DIS QCLUSTER(*) ALL\n")
    cap = capture(body)
    assert cap.records == []
    assert [p.reason.split(":")[0] for p in cap.problems] == ["duplicate attribute"]


def test_typed_command_before_the_first_record_is_not_a_banner_or_orphan():
    text = ("5724-H72 (C) Copyright IBM Corp. 1994, 2025.\nStarting MQSC for queue manager QM1.\n\n\n"
            "DIS QL(APP.ORDERS) CLUSTER(CL1)\n"
            "     1 : DIS QL(APP.ORDERS) CLUSTER(CL1)\n"
            "AMQ8409I: Display Queue details.\n   QUEUE(APP.ORDERS)    TYPE(QLOCAL)\n   CLUSTER(CL1)\n" + CLOSING)
    cap = parse_mqsc_text(text, "t.txt")
    assert cap.problems == [] and [r.kind for r in cap.records] == ["QLOCAL"] and cap.banner_qmgr == "QM1"


# --------------------------------------------------------------------------------------------------------------
# Issue 17 item 5: z/OS command output (CSQUTIL COMMAND, console, REST plain text), under runmqsc file names

ZOS = FIX.parent / "zos"


def test_csqutil_command_output_gives_the_qsg_attributes_and_cluster_records():
    path = ZOS / "csqutil_mq1a.txt"
    cap = parse_mqsc_file(path)  # the runmqsc entry point: a z/OS capture lands under the same file names
    assert cap.fmt == "zos" and cap.problems == [] and cap.banner_qmgr == "MQ1A"
    assert [(r.kind, r.message_id, r.line) for r in cap.records] == [
        ("QMGR", "CSQM409I", 10), ("CLUSQMGR", "CSQM201I", 20), ("CLUSQMGR", "CSQM201I", 36),
        ("CLUSQMGR", "CSQM201I", 52), ("QCLUSTER", "CSQM201I", 71), ("QCLUSTER", "CSQM201I", 84),
        ("CHSTATUS", "CSQM201I", 100)]
    qmgr = cap.records[0]
    # z/OS pads values to the field length: QMNAME(MQ1A<44 blanks>) is MQ1A
    assert (qmgr.get("QMNAME"), qmgr.get("QSGNAME"), qmgr.get("IGQ")) == ("MQ1A", "QSG1", "ENABLED")
    chstatus = cap.records[-1]
    # z/OS names the channel CHSTATUS(...); it is given as CHANNEL, as runmqsc prints it; CURRENT at column 0
    assert chstatus.get("CHANNEL") == "TO.MQ2A" and "CHSTATUS" not in chstatus.attrs
    assert "CURRENT" in chstatus.attrs and chstatus.get("STATUS") == "RUNNING"
    assert {r.get("CLUSQMGR") for r in cap.records if r.kind == "QCLUSTER"} == {"MQ2A", "QM4"}


def test_zos_capture_feeds_the_igq_path():
    from clwl.engine.view import build_view

    cap = parse_mqsc_file(ZOS / "csqutil_mq1a.txt")
    view, problems = build_view(cap.records, "MQ1A")
    assert problems == []
    assert (view.qmgr.qsgname, view.qmgr.igq) == ("QSG1", True)


def test_zos_console_output_indented_details_and_problems():
    cap = parse_mqsc_file(ZOS / "console_mq2a.txt")
    assert cap.fmt == "zos" and cap.banner_qmgr is None
    assert [(r.kind, r.line) for r in cap.records] == [("QMGR", 2), ("CLUSQMGR", 16)]
    assert cap.records[0].get("DEFCLXQ") == "CHANNEL" and cap.records[0].get("DESCR") == (
        "Payments queue manager, LPAR SYSB")
    # CSQM297I "NO CHSTATUS FOUND" is an answer, not a record; the CLUSQMGR block without CLUSTER is a problem
    assert [(p.line, p.reason) for p in cap.problems] == [
        (24, "missing key attribute: CLUSQMGR record without CLUSTER")]
    assert cap.problems[0].raw.startswith("CSQM201I -MQ2A CSQMDRTC  DIS CLUSQMGR DETAILS")


def test_zos_bad_records_cost_only_themselves():
    from clwl.parse.zos import parse_zos_text

    text = ("CSQM409I +MQ1A QMNAME(MQ1A) IGQ(ENABLED\n"
            "CSQ9022I +MQ1A CSQMDRTS ' DISPLAY QMGR' NORMAL COMPLETION\n"
            "CSQM201I +MQ1A CSQMDRTC  DISPLAY CLUSQMGR DETAILS\n"
            "END CLUSQMGR DETAILS\n"
            "CSQM201I +MQ1A CSQMDRTC  DISPLAY CHSTATUS DETAILS\n"
            "CHSTATUS(TO.MQ2A)\nCHLTYPE(CLUSSDR)\nSTATUS(RUNNING)\nSTATUS(STOPPED)\n"
            "END CHSTATUS DETAILS\n"
            "   QMNAME(ORPHAN)\n"
            "CSQM201I +MQ1A CSQMDRTC  DISPLAY QCLUSTER DETAILS\n"
            "QUEUE(APP.ORDERS)\nTYPE(QCLUSTER)\nCLUSQMGR(MQ2A)\n")
    cap = parse_zos_text(text, "z.txt")
    reasons = [(p.line, p.reason.split(":")[0]) for p in cap.problems]
    assert reasons == [(1, "unbalanced parenthesis"), (3, "missing key attribute"), (5, "duplicate attribute"),
                       (11, "attributes outside a record")]
    # the last block has no END (the file was cut after its attributes): its attributes are complete
    assert [(r.kind, r.line) for r in cap.records] == [("QCLUSTER", 12)]
    with pytest.raises(InputError, match="not z/OS command output"):
        parse_zos_text("hello\n", "z.txt")


def test_zos_text_is_not_taken_for_runmqsc_when_amq_messages_are_present():
    # A runmqsc capture that merely mentions a CSQ message in a value stays runmqsc.
    cap = capture("AMQ8409I: Display Queue details.\n   QUEUE(Q1)   TYPE(QLOCAL)\n   DESCR(see CSQM409I text)\n"
                  "CSQM409I +MQ1A QMNAME(MQ1A)\n")
    assert cap.fmt == "mqsc" and [r.kind for r in cap.records] == ["QLOCAL"]
