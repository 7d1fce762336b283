"""Transmission-queue browses: amqsbcg output and dmpmqmsg files."""

from __future__ import annotations

import dataclasses
import re
import shutil
import struct
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from clwl.parse.common import InputError, ParseProblem
from clwl.parse.xmitq import (
    XmitqMessage,
    parse_amqsbcg_text,
    parse_dmpmqmsg_text,
    parse_xmitq_file,
    read_xmitq_payload,
)

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "xmitq"
UTC = timezone.utc
ZERO = "0" * 64
TOK1001 = "0431303031" + "00" * 26 + "06"
TOKAPP = "03617070" + "00" * 27 + "06"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"


def _units(path: Path) -> int:
    """Messages in a fixture, counted independently of the parser."""
    text = path.read_text()
    if "MQGET of message number" in text:
        return len(re.findall(r"MQGET of message number \d+", text))
    n = len(re.findall(r"^N$", text, re.M))
    return n or len(re.findall(r"^A VER ", text, re.M))


@pytest.mark.parametrize(
    "name", ["amqsbcg_sctq.txt", "amqsbcg_cut_dump.txt", "dmpmqmsg_sctq.txt", "dmpmqmsg_no_markers.txt",
             "dmpmqmsg_da_sctq.txt", "dmpmqmsg_dA_sctq.txt"]
)
def test_every_message_is_a_record_or_a_problem(name):
    records, problems = parse_xmitq_file(FIX / name)
    assert len(records) + len(problems) == _units(FIX / name)
    assert all(isinstance(r, XmitqMessage) for r in records)
    assert all(isinstance(p, ParseProblem) and p.source == str(FIX / name) for p in problems)
    assert all(p.raw for p in problems)


def test_amqsbcg_records():
    records, _ = parse_xmitq_file(FIX / "amqsbcg_sctq.txt")
    by_pos = {r.position: r for r in records}
    assert sorted(by_pos) == [1, 2, 3, 4, 5]

    m1 = by_pos[1]
    assert m1.source == str(FIX / "amqsbcg_sctq.txt")
    assert m1.line == 8
    assert m1.queue == SCTQ
    assert m1.msg_id == "414D5120514D312020202020202020205A45396A02290001"
    assert m1.correl_id == "TO.QM2".ljust(24).encode().hex().upper()
    assert m1.accounting_token == ZERO and m1.accounting_token_zero is True
    assert m1.put_datetime == datetime(2026, 6, 22, 14, 24, 54, 610000, tzinfo=UTC)
    assert m1.format == "MQXMIT"
    assert (m1.priority, m1.persistence) == (0, 1)
    assert m1.group_id == "0" * 48 and m1.msg_seq_number == 1
    assert m1.length == 464
    assert (m1.remote_q_name, m1.remote_qmgr_name) == ("APP.ORDERS", "QM2")
    assert m1.inner_accounting_token == TOK1001
    assert m1.inner_put_datetime == datetime(2026, 6, 22, 14, 24, 54, 100000, tzinfo=UTC)

    m2 = by_pos[2]
    assert m2.accounting_token == TOK1001 and m2.accounting_token_zero is False
    assert (m2.priority, m2.remote_qmgr_name) == (4, "QM3")


def test_amqsbcg_byte_order_from_the_xqh_and_from_encoding():
    records, _ = parse_xmitq_file(FIX / "amqsbcg_sctq.txt")
    by_pos = {r.position: r for r in records}
    # Encoding 546 but the MQXQH Version printed big-endian (a shape seen in real dmpmqmsg output)
    assert (by_pos[3].remote_q_name, by_pos[3].remote_qmgr_name) == ("APP.PAYMENTS", "QM2")
    assert by_pos[3].inner_accounting_token == TOKAPP
    assert by_pos[3].persistence == 0
    # a big-endian sender (Encoding 273), zero inner token
    assert by_pos[4].remote_qmgr_name == "QM4"
    assert by_pos[4].inner_accounting_token == ZERO
    assert by_pos[4].inner_put_datetime == datetime(2026, 6, 22, 14, 25, 20, tzinfo=UTC)


def test_amqsbcg_dump_shorter_than_the_message():
    records, _ = parse_xmitq_file(FIX / "amqsbcg_sctq.txt")
    m5 = next(r for r in records if r.position == 5)
    assert m5.length == 2048  # "length - 120 of 2048 bytes"
    assert (m5.remote_q_name, m5.remote_qmgr_name) == ("APP.ORDERS", "QM2")
    assert m5.inner_accounting_token is None and m5.inner_put_datetime is None


def test_amqsbcg_problems():
    _, problems = parse_xmitq_file(FIX / "amqsbcg_sctq.txt")
    assert [(p.line, p.reason) for p in problems] == [
        (322, "bad hex in AccountingToken"),
        (389, "AccountingToken is not 32 bytes (16 bytes)"),
        (456, "missing PutTime"),
        (523, "bad hex in MsgId"),
        (590, "message cut off before its data"),
    ]
    assert problems[0].raw.startswith(" MQGET of message number 6")
    assert "X'0431303031G" in problems[0].raw


def test_amqsbcg_ebcdic_message_and_a_dump_cut_off():
    records, problems = parse_xmitq_file(FIX / "amqsbcg_cut_dump.txt")
    assert [r.queue for r in records] == ["SYSTEM.CLUSTER.TRANSMIT.TO.QM2"] * 2
    zos = records[1]
    assert (zos.remote_q_name, zos.remote_qmgr_name) == ("APP.ORDERS", "QMZ1")
    assert zos.inner_accounting_token == TOKAPP
    assert zos.inner_put_datetime == datetime(2026, 6, 23, 8, 59, 59, 900000, tzinfo=UTC)
    assert [(p.line, p.reason) for p in problems] == [(142, "message data cut off: 64 of 464 bytes")]


def test_dmpmqmsg_records_and_problems():
    records, problems = parse_xmitq_file(FIX / "dmpmqmsg_sctq.txt")
    assert [r.position for r in records] == [1, 2, 3, 7]
    assert [r.line for r in records] == [5, 49, 93, 253]
    first = records[0]
    assert first.queue == SCTQ
    assert first.accounting_token_zero and first.format == "MQXMIT"
    assert first.put_datetime == datetime(2026, 6, 22, 14, 24, 54, 610000, tzinfo=UTC)
    assert (first.remote_q_name, first.remote_qmgr_name, first.length) == ("APP.ORDERS", "QM2", 464)
    assert first.inner_accounting_token == TOK1001
    # X lines for the headers, an S line for the application data
    assert records[1].length == 464 and records[1].remote_qmgr_name == "QM3"
    assert records[1].inner_put_datetime == datetime(2026, 6, 22, 14, 25, 0, 20000, tzinfo=UTC)
    assert records[2].accounting_token == TOKAPP and records[2].remote_qmgr_name == "QM4"
    assert [(p.line, p.reason) for p in problems] == [
        (137, "bad hex in AccountingToken"),
        (181, "missing PutDate"),
        (224, "message cut off before its data"),
    ]
    assert problems[0].raw.startswith("N\nA VER 2")


def test_dmpmqmsg_without_n_markers():
    records, problems = parse_xmitq_file(FIX / "dmpmqmsg_no_markers.txt")
    assert problems == []
    assert [(r.position, r.line, r.accounting_token_zero) for r in records] == [(1, 5, False), (2, 48, True)]
    assert {r.queue for r in records} == {"SYSTEM.CLUSTER.TRANSMIT.TO.QM3"}


def test_file_format_is_chosen_by_content(tmp_path):
    for name in ("amqsbcg_sctq.txt", "dmpmqmsg_sctq.txt"):
        target = tmp_path / (name.split("_")[0] + ".out")
        shutil.copy(FIX / name, target)
        records, problems = parse_xmitq_file(target)
        expected, _ = parse_xmitq_file(FIX / name)
        assert [r.msg_id for r in records] == [r.msg_id for r in expected]
        assert all(r.source == str(target) for r in records)


def test_unusable_files(tmp_path):
    with pytest.raises(InputError, match="not amqsbcg or dmpmqmsg output"):
        parse_xmitq_file(FIX / "not_a_browse.txt")
    with pytest.raises(InputError, match="file not found") as info:
        parse_xmitq_file(tmp_path / "missing.txt")
    assert info.value.path == str(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="directory"):
        parse_xmitq_file(tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError):
        parse_xmitq_file(empty)


def test_amqsbcg_empty_queue_is_not_a_problem():
    text = " \nAMQSBCG0 - starts here\n**********************\n \n MQOPEN - 'SYSTEM.CLUSTER.TRANSMIT.QUEUE'\n \n \n No more messages \n MQCLOSE\n MQDISC\n"
    assert parse_amqsbcg_text(text, "x") == ([], [])


NOTES_SHAPE = """\
 MQGET of message number 1, CompCode:0 Reason:0
****Message descriptor****

  StrucId  : 'MD  '  Version : 2
  Report   : 0  MsgType : 8
  Expiry   : -1  Feedback : 0
  Encoding : 546  CodedCharSetId : 1208
  Format : 'MQXMIT  '                 <- cluster xmitq messages: [K] value; app msgs show 'MQSTR   '
  Priority : 0  Persistence : 1
  MsgId : X'414D5120514D312020202020202020205A45396A02290040'
  CorrelId : X'{correl}'         <- identifies the cluster-sender channel (SCTQ)
  BackoutCount : 0
  ReplyToQ       : '                                                '
  ReplyToQMgr    : 'QM1                                             '
  ** Identity Context
  UserIdentifier : 'mqm         '
  AccountingToken :
   X'0000000000000000000000000000000000000000000000000000000000000000'   <- all zeros = NOT re-allocatable
  ApplIdentityData : '                                '
  ** Origin Context
  PutApplType    : '6'
  PutApplName    : 'amqsput                     '
  PutDate  : '20260622'    PutTime  : '14245461'
  ApplOriginData : '    '
  GroupId : X'000000000000000000000000000000000000000000000000'
  MsgSeqNumber   : '1'
  Offset         : '0'
  MsgFlags       : '0'
  OriginalLength : '-1'
****   Message      ****
 length - 856 bytes
{dump}
"""


def _dump(data: bytes) -> str:
    lines = []
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        groups = " ".join(chunk[i:i + 2].hex().upper() for i in range(0, len(chunk), 2))
        text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append(f"{off:08X}:  {groups:<39} '{text:<16}'")
    return "\n".join(lines)


def _xqh(order: str, qname: str, qmgr: str, total: int) -> bytes:
    fmt = "<i" if order == "little" else ">i"
    md = b"MD  " + b"\x00" * 204 + bytes.fromhex(TOK1001) + b" " * 64 + b"20260622" + b"14245400" + b"    "
    assert len(md) == 324
    head = b"XQH " + struct.pack(fmt, 1) + qname.ljust(48).encode() + qmgr.ljust(48).encode() + md
    return head + b"x" * (total - len(head))


def test_the_shape_printed_in_the_domain_notes():
    correl = "TO.QM2".ljust(24).encode().hex().upper()
    text = NOTES_SHAPE.format(correl=correl, dump=_dump(_xqh("big", "APP.ORDERS", "QM2", 856)))
    records, problems = parse_amqsbcg_text(text, "notes.txt")
    assert problems == []
    (m,) = records
    assert (m.position, m.line, m.queue, m.length) == (1, 1, None, 856)
    assert m.accounting_token_zero and m.format == "MQXMIT"
    assert (m.remote_q_name, m.remote_qmgr_name) == ("APP.ORDERS", "QM2")
    assert m.inner_accounting_token == TOK1001
    assert m.inner_put_datetime == datetime(2026, 6, 22, 14, 24, 54, tzinfo=UTC)


def test_placeholder_correl_id_is_bad_hex():
    text = NOTES_SHAPE.format(correl="...24 bytes...", dump=_dump(_xqh("little", "Q", "QM2", 856)))
    records, problems = parse_amqsbcg_text(text, "notes.txt")
    assert records == [] and [p.reason for p in problems] == ["bad hex in CorrelId"]


def test_bad_hex_in_message_data():
    correl = "TO.QM2".ljust(24).encode().hex().upper()
    dump = _dump(_xqh("little", "Q", "QM2", 856)).replace("5851 4820", "5851 48ZZ", 1)
    records, problems = parse_amqsbcg_text(NOTES_SHAPE.format(correl=correl, dump=dump), "n")
    assert [p.reason for p in problems] == ["bad hex in message data at offset 00000000"]


def test_bad_put_date_and_time():
    correl = "TO.QM2".ljust(24).encode().hex().upper()
    good = NOTES_SHAPE.format(correl=correl, dump=_dump(_xqh("little", "Q", "QM2", 856)))
    _, p1 = parse_amqsbcg_text(good.replace("'20260622'", "'20261322'"), "n")
    _, p2 = parse_amqsbcg_text(good.replace("'14245461'", "'14256161'"), "n")
    _, p3 = parse_amqsbcg_text(good.replace("  PutDate  : '20260622'    PutTime", "  PutTime"), "n")
    assert [p.reason for p in p1 + p2 + p3] == ["bad PutDate '20261322'", "bad PutTime '14256161'",
                                                "missing PutDate"]


DMP = """\
* Dumper Version:9.4.0 Created:Mon Jun 22 14:30:02 2026
* Qmgr  = QM1
* Queue = SYSTEM.CLUSTER.TRANSMIT.QUEUE

N
A VER 2
A ENC 546
A FMT MQXMIT
A PRI 0
A PER 1
A MSI 414D5120514D312020202020202020205A45396A02290040
A COI 544F2E514D322020202020202020202020202020202020202020
A ACC 0000000000000000000000000000000000000000000000000000000000000000
A PTD 20250501
A PTT 10153012
X {data}
"""


def test_dmpmqmsg_fragment_from_the_notes():
    data = _xqh("little", "APP.INVOICES", "QM2", 500).hex().upper()
    records, problems = parse_dmpmqmsg_text(DMP.format(data=data), "d.txt")
    assert problems == []
    (m,) = records
    assert m.correl_id == "544F2E514D322020202020202020202020202020202020202020"  # 26 bytes, kept as is
    assert m.put_datetime == datetime(2025, 5, 1, 10, 15, 30, 120000, tzinfo=UTC)
    assert (m.remote_q_name, m.remote_qmgr_name, m.length) == ("APP.INVOICES", "QM2", 500)
    assert m.group_id is None and m.msg_seq_number is None


def test_dmpmqmsg_bad_lines():
    data = _xqh("little", "APP.INVOICES", "QM2", 500).hex().upper()
    text = DMP.format(data=data)
    # the notes' "X 5851...494E..." fragment: not hex
    _, p1 = parse_dmpmqmsg_text(text.replace("X " + data, "X 58514820000000014150502E494E..."), "d")
    # a line that is not "<letter> <text>"
    _, p2 = parse_dmpmqmsg_text(text.replace("A PTT 10153012", "A PTT 10153012\nGARBAGE"), "d")
    # data before any message
    r3, p3 = parse_dmpmqmsg_text("* Queue = Q\nX 00FF\n" + text[text.index("N\n"):], "d")
    assert [p.reason for p in p1] == ["bad hex in message data at line 16"]
    assert [p.reason for p in p2] == ["unrecognised line 'GARBAGE'"]
    assert [(p.line, p.reason) for p in p3] == [(2, "line outside any message")] and len(r3) == 1


def test_read_xmitq_payload():
    le = read_xmitq_payload(_xqh("little", "A", "QMA", 500))
    be = read_xmitq_payload(_xqh("big", "A", "QMA", 500))
    assert (le["byte_order"], be["byte_order"]) == ("little", "big")
    assert le["xqh_version"] == be["xqh_version"] == 1
    assert le["remote_qmgr_name"] == be["remote_qmgr_name"] == "QMA"
    # Version not conclusive: the MD Encoding decides
    odd = b"XQH " + b"\x00\x00\x00\x00" + b"Q".ljust(48) + b"QM".ljust(48)
    assert read_xmitq_payload(odd, 546)["byte_order"] == "little"
    assert read_xmitq_payload(odd, 273)["byte_order"] == "big"
    assert read_xmitq_payload(odd)["inner_accounting_token"] is None
    assert read_xmitq_payload(b"MQSTR payload")["remote_q_name"] is None
    assert read_xmitq_payload(b"XQH \x00\x00\x00\x01APP")["remote_q_name"] is None  # too short


def test_records_are_frozen():
    records, _ = parse_xmitq_file(FIX / "dmpmqmsg_no_markers.txt")
    with pytest.raises(dataclasses.FrozenInstanceError):
        records[0].msg_id = "X"  # type: ignore[misc]


def test_package_does_not_import_spark_or_airflow():
    code = (
        "import sys; import clwl.parse.xmitq, clwl.parse.amqsmon, clwl.parse.puts; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'airflow')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


# --------------------------------------------------------------------------------------------------------------
# Issue 17 item 3: every -d style of dmpmqmsg. The -da and -dA fixtures hold the messages of dmpmqmsg_sctq.txt
# (written with -dx) dumped in those styles, so they must give the same messages, byte for byte.


def _same_messages(name):
    records, problems = parse_xmitq_file(FIX / name)
    expected, expected_problems = parse_xmitq_file(FIX / "dmpmqmsg_sctq.txt")
    strip = lambda r: dataclasses.replace(r, source="", line=0)  # noqa: E731
    assert [strip(r) for r in records] == [strip(r) for r in expected]
    assert [p.reason for p in problems] == [p.reason for p in expected_problems]
    return records


def test_dmpmqmsg_hex_with_ascii_column_da():
    records = _same_messages("dmpmqmsg_da_sctq.txt")
    # before: the <...> column was read as hex ("bad hex in message data") and every message was quarantined
    assert [(r.length, r.remote_qmgr_name) for r in records] == [(464, "QM2"), (464, "QM3"), (464, "QM4"),
                                                                 (464, "QM3")]


def test_dmpmqmsg_quoted_text_lines_dA():
    records = _same_messages("dmpmqmsg_dA_sctq.txt")
    # before: the quotes were counted as data: the length was wrong and the MQXQH ('"XQH ') not found
    assert records[0].remote_q_name == "APP.ORDERS" and records[0].inner_accounting_token == TOK1001


@pytest.mark.parametrize("line, data", [
    ("X 58514820", b"XQH "),  # -dx
    ("X 58514820  <XQH >", b"XQH "),  # -da: the character column in angle brackets
    ("X 5851 4820  <XQH >", b"XQH "),  # hex grouped with blanks
    ("X 58514820000000  XQH ....", b"XQH \x00\x00\x00"),  # a column after two blanks
    ('S "XQH "', b"XQH "),  # -dA: quotes are not data
    ('S "say ""hi"""', b'say ""hi""'),  # only the outer quotes are taken off
    ("S XQH", b"XQH"),  # unquoted S line: as it stands
    ("T plain text", b"plain text"),  # -dt
])
def test_dmpmqmsg_data_line_styles(line, data):
    head = ("N\nA VER 2\nA FMT MQSTR\nA MSI 00\nA COI 00\nA ACC " + "00" * 32 + "\nA PTD 20260622\n"
            "A PTT 14245461\n")
    records, problems = parse_dmpmqmsg_text(head + line + "\n", "d")
    assert problems == [] and records[0].length == len(data)


def test_dmpmqmsg_bad_hex_before_the_column_is_still_a_problem():
    head = "N\nA VER 2\nA MSI 00\nA COI 00\nA ACC " + "00" * 32 + "\nA PTD 20260622\nA PTT 14245461\n"
    _, problems = parse_dmpmqmsg_text(head + "X 5851482G  <XQH >\n", "d")
    assert [p.reason for p in problems] == ["bad hex in message data at line 8"]  # N, 6 A lines, X
