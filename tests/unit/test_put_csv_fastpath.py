"""Which put CSV files Spark's CSV reader may take (spark.ingest.put_csv), decided without Spark.

The fast path reads a put CSV file only when the Python parser (clwl.parse.puts) would accept every record of it
unchanged; a file with anything else goes, whole, to the parser. Two of the three checks are pure Python and are
tested here: the driver's look at the bytes (:func:`inspect_put_csv`: header, byte order mark, CRLF, quotes,
non-ASCII, the physical line count) and the decision from Spark's counts (:func:`line_offsets`: every line under
the header a clean record, no repeated msg_id, and each row's line from its block). The third, the per-value
checks as Spark columns, runs in tests/spark/test_put_csv_reader.py on the same hand-made files (:data:`CASES`),
where the whole decision is compared with the expectation written here.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clwl.parse.common import InputError
from clwl.parse.put_record import PUT_COLUMNS
from clwl.parse.puts import csv_header, parse_puts_file
from spark.ingest.put_csv import _PUT_TIME, _READERS, BlockCount, PutCsvShape, inspect_put_csv, line_offsets

HEADER = ",".join(c.name for c in PUT_COLUMNS if c.name != "application")
FULL_HEADER = ",".join(c.name for c in PUT_COLUMNS)
TOKEN = "0431303031" + "00" * 26 + "06"


def row(n: int, put_time: str = "2026-11-20T10:15:30.120Z", msg_id: str | None = None, app: str | None = None) -> str:
    mid = msg_id or f"414D5120514D312020202020202020205A45396A0229{n:04X}"
    fields = [put_time, "QM1", "APP.ORDERS", "", "notfixed", f"orders-api:2831:{n}", "", "false", "false", "false",
              "1024", "true", TOKEN, mid, "QM2", "TO.QM2", "SYSTEM.CLUSTER.TRANSMIT.QUEUE"]
    return ",".join(fields + ([app] if app is not None else []))


def lines(*rows: str, header: str = HEADER, end: str = "\n") -> bytes:
    return (end.join((header,) + rows) + end).encode()


#: (name, file bytes, who reads it: "spark" or "python", where the decision is made: "driver" or "spark").
#: Every file is one the Python parser reads without rejecting it, so both paths give rows to compare.
CASES: tuple[tuple[str, bytes, str, str], ...] = (
    ("clean", lines(row(1), row(2), row(3)), "spark", "spark"),
    ("clean, with the application column", lines(row(1, app="orders-api"), row(2, app=""), header=FULL_HEADER),
     "spark", "spark"),
    ("byte order mark", b"\xef\xbb\xbf" + lines(row(1), row(2)), "spark", "spark"),
    ("CRLF line ends", lines(row(1), row(2), end="\r\n"), "spark", "spark"),
    ("no line end after the last row", lines(row(1), row(2))[:-1], "spark", "spark"),
    ("header in another order and case", lines(
        "QM1," + row(1).replace(",QM1,", ",", 1), header="SENDING_QMGR," + HEADER.replace(",sending_qmgr,", ",")),
     "spark", "spark"),
    ("an offset and a short fraction", lines(row(1, "2026-11-20T10:15:30.1+05:30"), row(2, "2026-11-20T10:15:30")),
     "spark", "spark"),
    ("header only", lines(), "spark", "spark"),
    ("blank line in the middle", lines(row(1), "", row(2)), "python", "spark"),
    ("blank line at the end", lines(row(1), row(2), ""), "python", "spark"),
    ("quoted field with a newline", lines(row(1), row(2).replace("orders-api:2831:2", '"orders\napi"')),
     "python", "driver"),
    ("quoted field", lines(row(1), row(2).replace("orders-api:2831:2", '"orders-api"')), "python", "driver"),
    ("bad timestamp", lines(row(1), row(2, "2026-11-20T25:15:30Z")), "python", "spark"),
    ("day the calendar has not", lines(row(1, "2026-02-29T10:15:30Z"), row(2)), "python", "spark"),
    ("timestamp the parser reads, outside the fast path", lines(row(1, "2026-11-20 10:15:30"), row(2)),
     "python", "spark"),
    ("repeated msg_id", lines(row(1), row(2, msg_id=row(1).split(",")[13])), "python", "spark"),
    ("repeated msg_id in another letter case", lines(row(1), row(2, msg_id=row(1).split(",")[13].lower())),
     "python", "spark"),
    ("a row with a field too many", lines(row(1), row(2) + ",x"), "python", "spark"),
    ("a row with a field too few", lines(row(1), row(2).rsplit(",", 1)[0]), "python", "spark"),
    ("blanks around a value", lines(row(1), row(2).replace(",QM1,", ", QM1 ,")), "python", "spark"),
    ("upper-case boolean and bind", lines(row(1).replace("notfixed,", "NOTFIXED,").replace("false", "FALSE")),
     "spark", "spark"),
    ("lower-case hex", lines(row(1).replace(TOKEN, TOKEN.lower())), "spark", "spark"),
    ("a bad MQ name", lines(row(1), row(2).replace("APP.ORDERS", "APP-ORDERS")), "python", "spark"),
    ("a lone carriage return", lines(row(1), row(2)).replace(b"\n", b"\r", 1), "python", "driver"),
    ("non-ASCII application", lines(row(1, app="caf\u00e9"), header=FULL_HEADER), "python", "driver"),
    ("a tab in a handle", lines(row(1), row(2).replace("orders-api:2831:2", "orders\tapi")), "python", "spark"),
    ("missing length", lines(row(1), row(2).replace(",1024,", ",,")), "python", "spark"),
    ("length of 19 digits", lines(row(1).replace(",1024,", ",1000000000000000000,")), "python", "spark"),
)


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / (re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") + ".csv")
    path.write_bytes(data)
    return str(path)


def test_every_case_is_a_file_the_parser_reads(tmp_path):
    """The cases are read by the Python parser (rows or record problems, never a rejected file)."""
    for name, data, _, _ in CASES:
        parse_puts_file(_write(tmp_path, name, data))


@pytest.mark.parametrize("name,data,reader,decided", CASES, ids=[c[0] for c in CASES])
def test_the_driver_sends_a_file_to_the_parser_or_on_to_spark(tmp_path, name, data, reader, decided):
    """Decided by the driver: the file goes to the parser with a reason. Else it goes on to Spark's reader with
    its layout (the parser's own reading of the header) and its physical line count."""
    shape = inspect_put_csv(_write(tmp_path, name, data))
    if reader == "python" and decided == "driver":
        assert isinstance(shape, str) and shape
        return
    assert isinstance(shape, PutCsvShape), shape
    text = data.decode("utf-8-sig")
    assert shape.lines == len(text.splitlines())  # str.splitlines: no line separator but \n and \r\n here
    header = text.splitlines()[0].split(",")
    assert shape.layout == csv_header(header, "x")


def test_the_driver_gives_the_parsers_reason_for_a_header_it_refuses(tmp_path):
    data = lines(row(1), header=HEADER.replace(",msg_id", ""))
    with pytest.raises(InputError) as refused:
        csv_header(HEADER.replace(",msg_id", "").split(","), "x")
    assert inspect_put_csv(_write(tmp_path, "no msg_id", data)) == refused.value.reason
    assert inspect_put_csv(_write(tmp_path, "empty", b"")) == "empty file"


def test_the_driver_refuses_paths_spark_would_read_as_patterns(tmp_path):
    folder = tmp_path / "a[1]"
    folder.mkdir()
    (folder / "puts.csv").write_bytes(lines(row(1)))
    assert "pattern" in inspect_put_csv(str(folder / "puts.csv"))


def _shape(lines_: int) -> PutCsvShape:
    return PutCsvShape(csv_header(HEADER.split(","), "x"), lines_)


def test_a_clean_file_gets_each_rows_line_from_its_block():
    """A file of 1 + 7 lines read in two blocks: ids 100..103 (block at byte 0, after the header's id 99) and
    ids 8589934592..8589934594 (another task). Lines: header 1, the first block's rows 2-5, the second's 6-8."""
    blocks = [BlockCount(4096, 3, 8589934592), BlockCount(0, 4, 100)]
    offsets = line_offsets(_shape(8), blocks, repeated_id=False)
    assert [100 + offsets[0], 103 + offsets[0]] == [2, 5]
    assert [8589934592 + offsets[4096], 8589934594 + offsets[4096]] == [6, 8]


@pytest.mark.parametrize("lines_,accepted,repeated,why", [
    (8, 6, False, "1 of its 7 lines"),  # a blank line Spark skipped, a corrupt row or a value that fails
    (8, 7, True, "a repeated msg_id"),
])
def test_a_file_that_is_not_clean_goes_to_the_parser(lines_, accepted, repeated, why):
    reason = line_offsets(_shape(lines_), [BlockCount(0, accepted, 0)], repeated_id=repeated)
    assert isinstance(reason, str) and why in reason


def test_a_header_only_file_is_clean_with_no_rows():
    assert line_offsets(_shape(1), [], repeated_id=False) == {}


def test_every_put_column_has_a_reader():
    assert set(_READERS) == {c.name for c in PUT_COLUMNS}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.from_regex(_PUT_TIME, fullmatch=True))
def test_every_put_time_of_the_fast_path_is_one_the_parser_reads(text):
    """The fast path's put time shape is inside what the parser reads: a text of that shape is read by
    datetime.fromisoformat, or refused for a day its month has not (which Spark's cast refuses too), and it is
    an instant in UTC years 1899-3000 (no overflow)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        assert "day is out of range" in str(exc)
        return
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    assert 1899 <= value.astimezone(timezone.utc).year <= 3000


@pytest.mark.parametrize("value,on", [("", False), ("python", False), ("spark", True), (" Spark ", True)])
def test_the_spark_reader_is_on_only_when_the_environment_asks(monkeypatch, value, on):
    from spark.config import PUT_CSV_READER_ENV, PipelineConfig

    monkeypatch.setenv(PUT_CSV_READER_ENV, value)
    assert PipelineConfig.from_env().put_csv_reader is on
