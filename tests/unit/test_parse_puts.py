"""The project's message put records (CSV, JSON lines, JSON array)."""

from __future__ import annotations

import dataclasses
import gc
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clwl.parse.common import InputError
from clwl.parse.put_record import PUT_COLUMNS, PutRecord, is_zero_token
from clwl.parse.puts import parse_puts_csv_text, parse_puts_file, parse_puts_jsonl_text

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "puts"
UTC = timezone.utc
ZERO = "0" * 64
TOK = "0431303031" + "00" * 26 + "06"
# The header of a put file without the optional application column (the samples' and most files'), and with it.
HEADER = ",".join(c.name for c in PUT_COLUMNS if c.name != "application")
FULL_HEADER = ",".join(c.name for c in PUT_COLUMNS)


def _mid(n: int) -> str:
    return "414D5120514D312020202020202020205A45396A0229" + f"{n:04X}"


def _data_rows(path: Path) -> int:
    """Non-blank data rows / JSON values, counted independently of the parser."""
    text = path.read_text()
    if path.suffix == ".csv":
        return sum(1 for line in text.splitlines()[1:] if line.strip())
    if text.lstrip().startswith("["):
        return len(json.loads(text))
    return sum(1 for line in text.splitlines() if line.strip())


@pytest.mark.parametrize("name", ["puts_qm1.csv", "puts_qm2.jsonl", "puts_qm4.json"])
def test_every_row_is_a_record_or_a_problem(name):
    records, problems = parse_puts_file(FIX / name)
    assert len(records) + len(problems) == _data_rows(FIX / name)
    assert all(type(r) is PutRecord for r in records)
    assert all(p.source == str(FIX / name) and p.raw for p in problems)
    assert len({r.msg_id for r in records}) == len(records)


def test_csv_records():
    records, _ = parse_puts_file(FIX / "puts_qm1.csv")
    first = records[0]
    assert first == PutRecord(
        source=str(FIX / "puts_qm1.csv"), line=2,
        put_time=datetime(2026, 11, 20, 10, 15, 30, 120000, tzinfo=UTC),
        sending_qmgr="QM1", queue="APP.ORDERS", target_qmgr=None, bind="notfixed", open_handle="h1",
        group_id=None, logical_order=False, from_cluster_channel=False, pcf=False, length=1024,
        persistent=True, accounting_token=TOK, accounting_token_zero=False, msg_id=_mid(1),
        observed_qmgr="QM2", observed_channel="TO.QM2", observed_xmitq="SYSTEM.CLUSTER.TRANSMIT.QUEUE",
    )
    by_line = {r.line: r for r in records}
    assert by_line[4].bind == "open" and by_line[4].accounting_token_zero
    assert by_line[5].observed_qmgr is None and by_line[5].observed_xmitq is None
    group = by_line[6]
    assert (group.bind, group.group_id, group.logical_order, group.persistent) == (
        "group", "414D5120514D312020202020202020205A45396A02300001", True, False)
    assert by_line[7].target_qmgr == "QM3"
    assert by_line[8].from_cluster_channel is True
    assert by_line[9].pcf is True and by_line[9].queue == "SYSTEM.CLUSTER.COMMAND.QUEUE"
    # letter case, a quoted field holding a comma, an offset converted to UTC, lower-case hex
    odd = by_line[10]
    assert (odd.bind, odd.open_handle, odd.logical_order, odd.persistent) == ("notfixed", "h5,batch", False, True)
    assert odd.put_time == datetime(2026, 11, 20, 10, 15, 35, 250000, tzinfo=UTC)
    assert odd.length == 0
    assert odd.accounting_token == TOK and odd.msg_id == _mid(9)


def test_csv_problem_reasons():
    _, problems = parse_puts_file(FIX / "puts_qm1.csv")
    assert [(p.line, p.reason) for p in problems] == [
        (12, "bad timestamp in put_time: '2026-11-31T10:15:36.000Z'"),
        (13, "unknown bind value 'sticky' (expected notfixed, open or group)"),
        (14, "bad boolean in logical_order: 'yes' (expected true or false)"),
        (15, "negative length -5"),
        (16, "non-integer length '12.5'"),
        (17, "bad hex in accounting_token"),
        (18, "accounting_token is not 32 bytes (64 hex digits)"),
        (19, "missing msg_id"),
        (20, "duplicate msg_id (first at line 3)"),
        (21, "queue 'APP.ORDERS.XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' is longer than 48 characters"),
        (22, "invalid character '#' in queue 'APP#ORDERS'"),
        (23, "row has 14 fields, header has 17"),
        (24, "observed_channel 'TO.QM2.VIA.THE.LONG.ROUTE' is longer than 20 characters"),
        (25, "bad timestamp in put_time: 'yesterday'"),
    ]
    assert problems[0].raw.startswith("2026-11-31T10:15:36.000Z,QM1,APP.ORDERS,,notfixed")


def test_jsonl():
    records, problems = parse_puts_file(FIX / "puts_qm2.jsonl")
    assert [r.line for r in records] == [1, 2, 3, 4]
    assert records[1].observed_channel == "TO.QM3"
    assert records[2].target_qmgr is None and records[2].group_id is None and records[2].accounting_token_zero
    # strings for booleans and length are accepted in JSON too
    assert (records[3].logical_order, records[3].persistent, records[3].length) == (True, False, 2048)
    assert [(p.line, p.reason) for p in problems] == [
        (6, "bad JSON: Expecting value"),
        (7, "not a JSON object"),
        (8, "non-integer length 'true'"),
        (9, "non-integer length '10.5'"),
        (10, "bad boolean in pcf: 'maybe' (expected true or false)"),
        (11, "missing accounting_token"),
        (12, "bad value type for queue: dict"),
        (13, "duplicate msg_id (first at line 1)"),
    ]


def test_json_array_with_line_numbers():
    records, problems = parse_puts_file(FIX / "puts_qm4.json")
    assert problems == []
    assert [r.line for r in records] == [2, 18, 34]
    assert records[1].bind == "group" and records[1].logical_order is True
    assert records[2].put_time == datetime(2026, 11, 20, 12, 0, 23, tzinfo=UTC)  # no zone: read as UTC


def test_missing_required_column_is_an_input_error():
    with pytest.raises(InputError, match="missing required column\\(s\\) in header: msg_id"):
        parse_puts_file(FIX / "puts_missing_column.csv")


def test_optional_columns_and_column_order():
    names = [c.name for c in PUT_COLUMNS]
    reordered = [names[13], *names[:13]]  # msg_id first, no observed_* columns
    row = dict(zip(names, ["2026-11-20T10:00:00Z", "QM1", "Q1", "", "open", "h", "", "false", "false",
                           "false", "10", "false", ZERO, _mid(1)]))
    text = ",".join(reordered) + ",comment\n" + ",".join(row[n] for n in reordered) + ",anything\n"
    (rec,), problems = parse_puts_csv_text(text, "t.csv")
    assert problems == [] and rec.msg_id == _mid(1) and rec.bind == "open"
    assert rec.observed_qmgr is rec.observed_channel is rec.observed_xmitq is None


def test_missing_values():
    base = ["2026-11-20T10:00:00Z", "QM1", "Q1", "", "open", "h", "", "false", "false", "false", "10",
            "false", ZERO, _mid(1), "", "", ""]
    expected = {0: "missing put_time", 1: "missing sending_qmgr", 2: "missing queue", 4: "missing bind",
                7: "missing logical_order", 10: "missing length", 12: "missing accounting_token"}
    for i, reason in expected.items():
        row = list(base)
        row[i] = ""
        _, problems = parse_puts_csv_text(HEADER + "\n" + ",".join(row) + "\n", "t")
        assert [p.reason for p in problems] == [reason]


@pytest.mark.parametrize(
    "column,value,reason",
    [
        ("msg_id", "414D51", "msg_id is not 24 bytes (48 hex digits)"),
        ("msg_id", "XY" * 24, "bad hex in msg_id"),
        ("accounting_token", "0" * 63, "bad hex in accounting_token"),
        ("target_qmgr", "QM 3", "invalid character ' ' in target_qmgr 'QM 3'"),
        ("sending_qmgr", "Q" * 49, f"sending_qmgr '{'Q' * 49}' is longer than 48 characters"),
        ("observed_xmitq", "SYSTEM.CLUSTER.TRANSMIT.*", "invalid character '*' in observed_xmitq 'SYSTEM.CLUSTER.TRANSMIT.*'"),
        ("length", "1e3", "non-integer length '1e3'"),
        ("put_time", "2026-11-20", "bad timestamp in put_time: '2026-11-20'"),
        ("pcf", "1", "bad boolean in pcf: '1' (expected true or false)"),
    ],
)
def test_value_reasons(column, value, reason):
    row = {c.name: "" for c in PUT_COLUMNS}
    row.update(put_time="2026-11-20T10:00:00Z", sending_qmgr="QM1", queue="Q1", bind="notfixed",
               logical_order="false", from_cluster_channel="false", pcf="false", length="1",
               persistent="true", accounting_token=TOK, msg_id=_mid(1))
    row[column] = value
    records, problems = parse_puts_jsonl_text(json.dumps(row), "t.jsonl")
    assert records == [] and [p.reason for p in problems] == [reason]


# -- the optional application column ---------------------------------------------------------------------------

_ROW = ["2026-11-20T10:00:00Z", "QM1", "Q1", "", "notfixed", "orders-api:2831:1", "", "false", "false", "false", "10",
        "false", TOK]


def _csv_row(n: int, application: str | None = None) -> str:
    """A good data row (msg_id n), with an application field when one is given."""
    return ",".join([*_ROW, _mid(n), "", "", "", *([] if application is None else [application])])


def test_application_column_in_csv():
    text = "\n".join([FULL_HEADER, _csv_row(1, "billing-svc"), _csv_row(2, ""), _csv_row(3, '"Order Entry, EU"'),
                      _csv_row(4, "  padded  "), _csv_row(5, "x" * 128)]) + "\n"
    records, problems = parse_puts_csv_text(text, "t.csv")
    assert problems == []
    assert [r.application for r in records] == ["billing-svc", None, "Order Entry, EU", "padded", "x" * 128]
    assert records[0].open_handle == "orders-api:2831:1"  # the handle stays as given beside the column


def test_a_file_without_the_application_column_reads_as_before():
    text = HEADER + "\n" + _csv_row(1) + "\n"
    (rec,), problems = parse_puts_csv_text(text, "t.csv")
    assert problems == [] and rec.application is None
    # the same row under the header with the column, its field empty: the same record
    (same,), _ = parse_puts_csv_text(FULL_HEADER + "\n" + _csv_row(1, "") + "\n", "t.csv")
    assert same == rec
    (fixture, *_), _ = parse_puts_file(FIX / "puts_qm1.csv")
    assert fixture.application is None


def test_application_column_anywhere_in_the_header():
    names = HEADER.split(",")
    header = ",".join(["application", *reversed(names)])
    values = dict(zip(names, _csv_row(1).split(",")))
    text = header + "\n" + ",".join(["payments", *(values[n] for n in reversed(names))]) + "\n"
    (rec,), problems = parse_puts_csv_text(text, "t.csv")
    assert problems == [] and rec.application == "payments" and rec.msg_id == _mid(1)


def test_application_in_json_lines_and_array():
    base = dict(zip(HEADER.split(","), _csv_row(0).split(",")))
    lines = [{**base, "msg_id": _mid(1), "application": "billing-svc"}, {**base, "msg_id": _mid(2)},
             {**base, "msg_id": _mid(3), "application": None}, {**base, "msg_id": _mid(4), "application": 42}]
    records, problems = parse_puts_jsonl_text("\n".join(json.dumps(x) for x in lines), "t.jsonl")
    assert problems == [] and [r.application for r in records] == ["billing-svc", None, None, "42"]
    records, problems = parse_puts_jsonl_text(json.dumps(lines), "t.json")
    assert problems == [] and [r.application for r in records] == ["billing-svc", None, None, "42"]


@pytest.mark.parametrize("value,reason", [
    ("x" * 129, f"application '{'x' * 40}... (129 characters)' is longer than 128 characters"),
    ("orders\napi", "invalid character '\\n' in application 'orders\\napi'"),
    ("orders\tapi", "invalid character '\\t' in application 'orders\\tapi'"),
    ("orders\x00api", "invalid character '\\x00' in application 'orders\\x00api'"),
    ("orders\u2028api", "invalid character '\\u2028' in application 'orders\\u2028api'"),
    (["a"], "bad value type for application: list"),
])
def test_a_bad_application_quarantines_its_record_only(value, reason):
    base = dict(zip(HEADER.split(","), _csv_row(0).split(",")))
    lines = [{**base, "msg_id": _mid(1)}, {**base, "msg_id": _mid(2), "application": value},
             {**base, "msg_id": _mid(3), "application": "ok"}]
    records, problems = parse_puts_jsonl_text("\n".join(json.dumps(x) for x in lines), "t.jsonl")
    assert [(r.line, r.application) for r in records] == [(1, None), (3, "ok")]
    assert [(p.line, p.reason) for p in problems] == [(2, reason)]


def test_a_bad_application_in_csv():
    text = "\n".join([FULL_HEADER, _csv_row(1, "a" * 129), _csv_row(2, '"two\nlines"'), _csv_row(3, "fine")]) + "\n"
    records, problems = parse_puts_csv_text(text, "t.csv")
    assert [(r.line, r.application) for r in records] == [(5, "fine")]
    assert [(p.line, p.reason.split(" in ")[0] if "invalid" in p.reason else p.reason) for p in problems] == [
        (2, f"application '{'a' * 40}... (129 characters)' is longer than 128 characters"),
        (3, "invalid character '\\n'")]
    # a row of the old width under the header with the column is one field short: refused as any such row
    _, problems = parse_puts_csv_text(FULL_HEADER + "\n" + _csv_row(1) + "\n", "t.csv")
    assert [p.reason for p in problems] == ["row has 17 fields, header has 18"]


def test_multiline_quoted_field_keeps_line_numbers():
    names = HEADER.split(",")
    good = ["2026-11-20T10:00:00Z", "QM1", "Q1", "", "open", "h", "", "false", "false", "false", "10",
            "false", ZERO, "", "", "", ""]
    rows = []
    for i, handle in enumerate(['"multi\nline"', "h2", "h3"]):
        row = list(good)
        row[5], row[13] = handle, _mid(i)
        rows.append(",".join(row))
    text = ",".join(names) + "\n" + "\n".join(rows) + "\n"
    records, problems = parse_puts_csv_text(text, "t")
    assert problems == [] and [r.line for r in records] == [2, 4, 5]
    assert records[0].open_handle == "multi\nline"


def test_unusable_files(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        parse_puts_file(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="unknown put-record file type '.txt'"):
        parse_puts_file(tmp_path / "puts.txt")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no header"):
        parse_puts_file(empty)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(HEADER.encode() + b"\n\xff\xfe,QM1\n")
    with pytest.raises(InputError, match="not UTF-8"):
        parse_puts_file(latin)
    assert parse_puts_jsonl_text("\n\n", "t.jsonl") == ([], [])


def test_is_zero_token():
    assert is_zero_token(ZERO)
    assert not is_zero_token(TOK)
    assert not is_zero_token("")
    assert not is_zero_token(None)


def test_put_columns_document_the_record():
    record_fields = [f.name for f in dataclasses.fields(PutRecord)]
    names = [c.name for c in PUT_COLUMNS]
    assert names == [n for n in record_fields if n in names]
    assert set(record_fields) - set(names) == {"source", "line", "accounting_token_zero"}
    assert all(c.type in ("timestamp", "string", "boolean", "long") and c.description for c in PUT_COLUMNS)
    assert [c.name for c in PUT_COLUMNS if not c.required] == ["observed_qmgr", "observed_channel", "observed_xmitq",
                                                               "application"]


def test_records_are_ordinary_frozen_put_records():
    (rec, *_), _ = parse_puts_file(FIX / "puts_qm1.csv")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.queue = "X"  # type: ignore[misc]
    assert rec == dataclasses.replace(rec) and hash(rec) == hash(dataclasses.replace(rec))
    assert "PutRecord(" in repr(rec)


def test_garbage_collector_state_is_restored():
    assert gc.isenabled()
    parse_puts_file(FIX / "puts_qm1.csv")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_puts_file(FIX / "puts_qm2.jsonl")
        assert not gc.isenabled()
    finally:
        gc.enable()


_field = st.text(alphabet="abcXYZ019.,-: \"tf", max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_field, min_size=0, max_size=19), max_size=8))
def test_nothing_is_dropped_from_arbitrary_csv(rows):
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c.name for c in PUT_COLUMNS])
    for row in rows:
        writer.writerow(row)
    text = out.getvalue()
    # a blank line (no field, or one blank field) is not a row; anything else is one
    expected = sum(1 for row in csv.reader(io.StringIO(text)) if len(row) > 1 or (row and row[0].strip())) - 1
    records, problems = parse_puts_csv_text(text, "h.csv")
    assert len(records) + len(problems) == expected
