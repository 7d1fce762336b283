"""The project's message put records: one row per message an application put (CSV or JSONL).

The schema is :data:`~clwl.parse.put_record.PUT_COLUMNS` (ordered; also the documentation's table) and an
accepted row a :class:`~clwl.parse.put_record.PutRecord`, both clwl.parse.put_record's. This module reads the
files; each row's values are read by :mod:`clwl.parse.put_rows`. A CSV file has a header row naming the columns
(any order; extra columns are ignored; a missing required column makes the whole file unusable,
:class:`InputError`). A JSONL file holds one JSON object per line with the same names; a ``.json`` file is either
JSONL or one JSON array of such objects.

Every data row becomes a :class:`PutRecord` or one :class:`ParseProblem` (the first thing wrong with it),
so ``len(records) + len(problems)`` is the number of non-blank data rows. A msg_id seen again in an
already accepted row of the same file is a problem (``duplicate msg_id``); the first one stays.

Reading of values (:mod:`clwl.parse.put_rows`): booleans are ``true``/``false`` in any letter case (JSON
``true``/``false`` too); put_time is ISO-8601 and is converted to UTC (``Z``, an offset, or no zone, which is read
as UTC because the schema says UTC); hex is returned upper case; an empty optional value is ``None``. MQ names
(sending_qmgr, queue, target_qmgr, observed_qmgr, observed_xmitq: at most 48 characters; observed_channel:
at most 20) may hold only ``A-Z a-z 0-9 . / _ %``. open_handle and group_id are kept as given. The optional
application column is printable text of at most 128 characters; a file without it reads as before (no
application: the open handle's ``application:pid:handle`` form names it where the lake needs one).
"""

from __future__ import annotations

import csv
import gc
import io
import json
import re
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

from clwl.parse.common import (
    JSON_DECODER,
    MAX_JSON_DEPTH,
    InputError,
    ParseProblem,
    has_surrogate,
    json_array_elements,
    json_depth,
    open_input,
    too_deep_reason,
)
from clwl.parse.put_record import PUT_COLUMNS, PutRecord
from clwl.parse.put_rows import APPLICATION_AT, BadRow, RowValidator

__all__ = [
    "PUT_COLUMNS",  # defined in clwl.parse.put_record; imported from here by spark.ingest.message_events
    "CsvHeader",
    "csv_header",  # also how spark.ingest.put_csv lays out the rows Spark's CSV reader reads
    "parse_puts_csv_text",
    "parse_puts_file",
    "parse_puts_jsonl_text",
]

_NAMES = tuple(c.name for c in PUT_COLUMNS)
_REQUIRED = tuple(c.name for c in PUT_COLUMNS if c.required)


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while millions of acyclic records are built (its repeated
    passes over the growing list cost a third of the time); its previous state comes back after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --------------------------------------------------------------------------------------------------
# CSV


def _csv_raw(row: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(row)
    return out.getvalue()


class CsvHeader(NamedTuple):
    """How a CSV file's rows are read, from its header row."""

    width: int  # fields a row must have
    index: list[int]  # for each of PUT_COLUMNS, the field of a row that holds it (-1: the file has no such column)
    identity: bool  # the fields are PUT_COLUMNS in order (without the optional application or with it)


def csv_header(header: list[str], source: str) -> CsvHeader:
    """The layout of the rows under a header row (its fields as the csv module reads them): names compared
    without blanks, a byte order mark or letter case, in any order, extra columns ignored. InputError (the whole
    file is unusable) for a repeated column or a missing required one."""
    names = [h.strip().lstrip("\ufeff").lower() for h in header]
    seen: set[str] = set()
    for n in names:
        if n and n in seen:
            raise InputError(source, f"duplicate column {n!r} in header")
        seen.add(n)
    missing = [c for c in _REQUIRED if c not in seen]
    if missing:
        raise InputError(source, "missing required column(s) in header: " + ", ".join(missing))
    width = len(names)
    index = [names.index(c) if c in seen else -1 for c in _NAMES]
    # Rows taken as they are: the header is the columns in their order, with or without the last, optional
    # application (the row reader finds it missing in a shorter row).
    identity = names == list(_NAMES[:width]) and width >= APPLICATION_AT
    return CsvHeader(width, index, identity)


def _parse_csv(lines: Iterable[str], source: str, on_chunk: Callable[[list[PutRecord]], None] | None = None,
               chunk_rows: int = 0) -> tuple[list[PutRecord], list[ParseProblem]]:
    """Rows of CSV text. A line without a double quote is split on commas (fast); a line with one goes
    through the csv module, which may take more lines (a quoted field can hold a newline).

    on_chunk: called with the records so far each time about `chunk_rows` lines have been read, after which
    they are dropped here (a caller that writes them as it goes holds one chunk, not the file); the records
    returned are those after the last chunk."""
    it = iter(lines)
    lineno = 0
    header: list[str] | None = None
    for line in it:
        lineno += 1
        if line.strip():
            reader = csv.reader(chain((line,), it))
            header = next(reader)
            lineno += reader.line_num - 1
            break
    if header is None:
        raise InputError(source, "empty file (no header row)")
    width, index, identity = csv_header(header, source)
    row_fn = RowValidator(source).row
    records: list[PutRecord] = []
    problems: list[ParseProblem] = []
    append = records.append
    flush = None
    if on_chunk is not None and chunk_rows > 0:
        def flush() -> None:
            if records:
                on_chunk(records[:])
                records.clear()  # the same list: `append` stays bound to it
    with _gc_paused():
        _csv_rows(it, lineno, source, width, identity, index, row_fn, append, problems, flush, chunk_rows)
    return records, problems


def _csv_rows(it, lineno, source, width, identity, index, row_fn, append, problems, flush=None,
              chunk_rows: int = 0) -> None:
    flush_at = lineno + chunk_rows if flush is not None else -1
    for line in it:
        lineno += 1
        if flush_at >= 0 and lineno >= flush_at:
            flush()
            flush_at = lineno + chunk_rows
        start = lineno
        if '"' in line:
            reader = csv.reader(chain((line,), it))
            try:
                row = next(reader, [])
            except csv.Error as exc:  # e.g. a field over the csv module's limit: this row only
                lineno += max(reader.line_num - 1, 0)
                problems.append(ParseProblem(source, start, f"unreadable CSV row: {exc}", line.rstrip("\r\n")))
                continue
            lineno += reader.line_num - 1
            raw = _csv_raw(row)
            row = [x.strip() for x in row]
        else:
            raw = line.rstrip("\r\n")
            row = raw.split(",")
            if " " in raw or "\t" in raw:
                row = [x.strip() for x in row]
        if len(row) != width:
            if len(row) == 1 and not row[0]:
                continue  # blank line
            problems.append(ParseProblem(source, start, f"row has {len(row)} fields, header has {width}", raw))
            continue
        values = row if identity else [row[i] if i >= 0 else "" for i in index]
        try:
            append(row_fn(start, values))
        except BadRow as exc:
            problems.append(ParseProblem(source, start, str(exc), raw))


def parse_puts_csv_text(text: str, source: str) -> tuple[list[PutRecord], list[ParseProblem]]:
    """Put records from CSV text with a header row."""
    return _parse_csv(io.StringIO(text, newline=""), source)


# --------------------------------------------------------------------------------------------------
# JSON lines


def _json_values(obj: dict) -> list[str]:
    values = []
    for name in _NAMES:
        x = obj.get(name)
        if x is None:
            values.append("")
        elif isinstance(x, str):
            if not x.isascii() and has_surrogate(x):
                raise BadRow(f"lone surrogate in {name}: not valid Unicode (a \\uXXXX escape of half a character)")
            values.append(x.strip())
        elif isinstance(x, bool):
            values.append("true" if x else "false")
        elif isinstance(x, int):
            values.append(str(x))
        elif isinstance(x, float):
            values.append(repr(x))
        else:
            raise BadRow(f"bad value type for {name}: {type(x).__name__}")
    return values


def _parse_objects(
    items: Iterator[tuple[int, str, object]], source: str
) -> tuple[list[PutRecord], list[ParseProblem]]:
    row = RowValidator(source).row
    records: list[PutRecord] = []
    problems: list[ParseProblem] = []
    with _gc_paused():
        for line, raw, obj in items:
            try:
                if isinstance(obj, _BadJson):
                    raise BadRow(f"bad JSON: {obj.message}")
                if not isinstance(obj, dict):
                    raise BadRow("not a JSON object")
                records.append(row(line, _json_values(obj)))
            except BadRow as exc:
                problems.append(ParseProblem(source, line, str(exc), raw))
    return records, problems


class _BadJson:
    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _jsonl_items(lines: Iterable[str]) -> Iterator[tuple[int, str, object]]:
    loads = JSON_DECODER.decode
    for lineno, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if text.count("[") + text.count("{") > MAX_JSON_DEPTH:  # cheap; the exact check only then
            too_deep = too_deep_reason(text)
            if too_deep is not None:
                yield lineno, text, _BadJson(too_deep)
                continue
        try:
            yield lineno, text, loads(text)
        except ValueError as exc:
            yield lineno, text, _BadJson(exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc))


def _json_array_items(text: str, source: str) -> Iterator[tuple[int, str, object]]:
    """Elements of a JSON array, each with the line it starts on."""
    decoder = JSON_DECODER
    ws = re.compile(r"[ \t\r\n]*")
    pos = ws.match(text, 0).end()
    if text[pos:pos + 1] != "[":
        raise InputError(source, "not a JSON array or JSON lines")
    if json_depth(text) > MAX_JSON_DEPTH + 1:  # the array and its records: an element too deep to decode
        yield from _json_array_elements_one_by_one(text, pos)
        return
    pos = ws.match(text, pos + 1).end()
    line, counted = 1, 0
    if text[pos:pos + 1] == "]":
        return
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(source, f"bad JSON array: {exc.msg} at line {exc.lineno}") from None
        yield line, text[pos:end], obj
        pos = ws.match(text, end).end()
        if text[pos:pos + 1] == ",":
            pos = ws.match(text, pos + 1).end()
        elif text[pos:pos + 1] == "]":
            return
        else:
            raise InputError(source, f"bad JSON array: expected ',' or ']' at offset {pos}")


def _json_array_elements_one_by_one(text: str, pos: int) -> Iterator[tuple[int, str, object]]:
    """Elements of a JSON array some element of which nests too deep to be decoded: the array is cut into its
    elements without decoding it, and each element is decoded, or refused, alone."""
    line, counted = 1, 0
    for start, end, depth in json_array_elements(text, pos):
        raw = text[start:end].strip()
        start += len(text[start:end]) - len(text[start:end].lstrip())
        line += text.count("\n", counted, start)
        counted = start
        if depth > MAX_JSON_DEPTH:
            yield line, raw, _BadJson(f"JSON nested deeper than {MAX_JSON_DEPTH} levels ({depth})")
            continue
        try:
            yield line, raw, JSON_DECODER.decode(raw)
        except ValueError as exc:
            yield line, raw, _BadJson(exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc))


def parse_puts_jsonl_text(text: str, source: str) -> tuple[list[PutRecord], list[ParseProblem]]:
    """Put records from JSON lines (one object per line) or from one JSON array of objects."""
    if text.lstrip()[:1] == "[":
        return _parse_objects(_json_array_items(text, source), source)
    return _parse_objects(_jsonl_items(text.splitlines()), source)


# --------------------------------------------------------------------------------------------------
# files


def parse_puts_file(path: str | Path, on_chunk: Callable[[list[PutRecord]], None] | None = None,
                    chunk_rows: int = 0) -> tuple[list[PutRecord], list[ParseProblem]]:
    """A put-record file, by extension: ``.csv``, ``.jsonl`` or ``.json``.

    on_chunk / chunk_rows: for CSV, the records in chunks as they are parsed (see `_parse_csv`); JSON files are
    parsed whole."""
    p = Path(path)
    source = str(path)
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".json"):
        raise InputError(source, f"unknown put-record file type {p.suffix!r} (expected .csv, .jsonl or .json)")
    try:
        if suffix == ".csv":
            with open_input(p, source=source, encoding="utf-8-sig", newline="") as handle:
                return _parse_csv(handle, source, on_chunk, chunk_rows)
        with open_input(p, source=source, encoding="utf-8-sig") as handle:
            first = ""
            for first in iter(lambda: handle.read(1), ""):
                if not first.isspace():
                    break
            handle.seek(0)
            if first == "[":
                return _parse_objects(_json_array_items(handle.read(), source), source)
            return _parse_objects(_jsonl_items(handle), source)
    except UnicodeDecodeError as exc:
        raise InputError(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise InputError(source, f"unreadable CSV: {exc}") from None
