"""The project's message put records: one row per message an application put (CSV or JSONL).

The schema is :data:`PUT_COLUMNS` (ordered; also the documentation's table). A CSV file has a header row
naming the columns (any order; extra columns are ignored; a missing required column makes the whole file
unusable, :class:`InputError`). A JSONL file holds one JSON object per line with the same names; a
``.json`` file is either JSONL or one JSON array of such objects.

Every data row becomes a :class:`PutRecord` or one :class:`ParseProblem` (the first thing wrong with it),
so ``len(records) + len(problems)`` is the number of non-blank data rows. A msg_id seen again in an
already accepted row of the same file is a problem (``duplicate msg_id``); the first one stays.

Reading of values: booleans are ``true``/``false`` in any letter case (JSON ``true``/``false`` too);
put_time is ISO-8601 and is converted to UTC (``Z``, an offset, or no zone, which is read as UTC because
the schema says UTC); hex is returned upper case; an empty optional value is ``None``. MQ names
(sending_qmgr, queue, target_qmgr, observed_qmgr, observed_xmitq: at most 48 characters; observed_channel:
at most 20) may hold only ``A-Z a-z 0-9 . / _ %``. open_handle and group_id are kept as given.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, fields, make_dataclass
from datetime import datetime, timezone
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Iterator

from clwl.parse.common import (
    INT64_MAX,
    JSON_DECODER,
    MAX_JSON_DEPTH,
    InputError,
    ParseProblem,
    clip,
    has_surrogate,
    json_array_elements,
    json_depth,
    too_deep_reason,
)

__all__ = [
    "PUT_COLUMNS",
    "PutColumn",
    "PutRecord",
    "is_zero_token",
    "parse_puts_csv_text",
    "parse_puts_file",
    "parse_puts_jsonl_text",
]


@dataclass(frozen=True)
class PutColumn:
    name: str
    type: str  # timestamp | string | boolean | long (Spark SQL type names)
    required: bool  # the column must be present (in a CSV header)
    nullable: bool  # the value may be empty
    description: str


PUT_COLUMNS: tuple[PutColumn, ...] = (
    PutColumn("put_time", "timestamp", True, False,
              "When the application put the message, ISO-8601 UTC, e.g. 2026-11-20T10:15:30.120Z."),
    PutColumn("sending_qmgr", "string", True, False,
              "Queue manager the putting application is connected to (where the CLWL choice is made)."),
    PutColumn("queue", "string", True, False,
              "Queue the application opened: cluster queue, alias or queue manager alias (MQ name, max 48)."),
    PutColumn("target_qmgr", "string", True, True,
              "ObjectQMgrName the application named; empty = not named, so CLWL chooses."),
    PutColumn("bind", "string", True, False,
              "Bind option in effect: notfixed, open or group (DEFBIND when the application used AS_Q_DEF)."),
    PutColumn("open_handle", "string", True, True,
              "Identifier of the MQOPEN handle the put used (bind on open: one choice per handle)."),
    PutColumn("group_id", "string", True, True,
              "GroupId (hex) of the message group the message belongs to; empty if none."),
    PutColumn("logical_order", "boolean", True, False,
              "MQPMO_LOGICAL_ORDER was used (with bind group: the whole group goes to one queue manager)."),
    PutColumn("from_cluster_channel", "boolean", True, False,
              "The message arrived over a cluster channel instead of being put by a local application."),
    PutColumn("pcf", "boolean", True, False, "The message is a cluster PCF (repository) message."),
    PutColumn("length", "long", True, False, "Message length in bytes (a non-negative integer)."),
    PutColumn("persistent", "boolean", True, False, "The message is persistent."),
    PutColumn("accounting_token", "string", True, False,
              "MQMD AccountingToken, 64 hex digits; all zeros = the message cannot be re-allocated."),
    PutColumn("msg_id", "string", True, False, "MQMD MsgId, 48 hex digits; unique within a file."),
    PutColumn("observed_qmgr", "string", False, True,
              "Queue manager the message was observed to arrive at (optional)."),
    PutColumn("observed_channel", "string", False, True,
              "Cluster-sender channel the message was observed to leave by (optional)."),
    PutColumn("observed_xmitq", "string", False, True,
              "Transmission queue the message was observed on (optional)."),
)

_NAMES = tuple(c.name for c in PUT_COLUMNS)
_REQUIRED = tuple(c.name for c in PUT_COLUMNS if c.required)
BINDS = ("notfixed", "open", "group")
_BIND_SET = frozenset(BINDS)


@dataclass(frozen=True, slots=True)
class PutRecord:
    """One message put, typed."""

    source: str
    line: int
    put_time: datetime  # aware, UTC
    sending_qmgr: str
    queue: str
    target_qmgr: str | None
    bind: str  # notfixed | open | group
    open_handle: str | None
    group_id: str | None
    logical_order: bool
    from_cluster_channel: bool
    pcf: bool
    length: int
    persistent: bool
    accounting_token: str  # 64 hex digits, upper case
    accounting_token_zero: bool  # all zeros: not eligible for re-allocation
    msg_id: str  # 48 hex digits, upper case
    observed_qmgr: str | None
    observed_channel: str | None
    observed_xmitq: str | None


# Building millions of frozen records through the generated __init__ costs one object.__setattr__ per
# field. Rows are built instead as a mutable slots twin with the same layout and then given the frozen
# class; the result is an ordinary PutRecord (immutable, equal to one built the normal way). Verified
# once at import, with the normal constructor as fallback.
_PutRecordRow = make_dataclass(
    "_PutRecordRow", [(f.name, f.type) for f in fields(PutRecord)], slots=True, eq=False, repr=False
)


def _make_fast(*values) -> PutRecord:
    row = _PutRecordRow(*values)
    object.__setattr__(row, "__class__", PutRecord)
    return row


def _choose_maker():
    values = range(len(fields(PutRecord)))
    try:
        probe = _make_fast(*values)
    except TypeError:  # pragma: no cover - a Python where the layouts are not compatible
        return PutRecord
    if type(probe) is PutRecord and probe == PutRecord(*values):
        return _make_fast
    return PutRecord  # pragma: no cover


_make_record = _choose_maker()


def is_zero_token(hex_token: str | None) -> bool:
    """True when an AccountingToken (hex) is all zeros: the message is not eligible for re-allocation.

    An empty or missing token is not "all zeros" (it is unknown), and neither is text that is not hex.
    """
    if not hex_token:
        return False
    return hex_token.count("0") == len(hex_token)


# --------------------------------------------------------------------------------------------------
# validation of one row (values as text, in PUT_COLUMNS order)

_MQ_NAME = re.compile(r"[A-Za-z0-9._/%]+")
_HEX = re.compile(r"[0-9A-Fa-f]*")
_BOOLS = {"true": True, "false": False, "True": True, "False": False, "TRUE": True, "FALSE": False}
_UTC = timezone.utc
_NAME_MAX = {"sending_qmgr": 48, "queue": 48, "target_qmgr": 48, "observed_qmgr": 48,
             "observed_xmitq": 48, "observed_channel": 20}


class _Reject(Exception):
    pass


def _name_problem(column: str, value: str) -> str:
    limit = _NAME_MAX[column]
    if len(value) > limit:
        return f"{column} {value!r} is longer than {limit} characters"
    for ch in value:
        if not _MQ_NAME.fullmatch(ch):
            return f"invalid character {ch!r} in {column} {value!r}"
    return f"invalid {column} {value!r}"  # not reached


class _Validator:
    """Turns rows of text into PutRecords; keeps the per-file state (duplicate msg_ids, caches)."""

    def __init__(self, source: str):
        self.source = source
        self.seen: dict[str, int] = {}  # msg_id -> line
        self.names48: set[str] = set()  # known-good names, so repeated names are checked once
        self.names20: set[str] = set()
        self.tokens: dict[str, bool] = {}  # upper-case token -> all zeros
        self._row = self._fast_row()

    def name(self, column: str, value: str, required: bool) -> str | None:
        if not value:
            if required:
                raise _Reject(f"missing {column}")
            return None
        known = self.names20 if column == "observed_channel" else self.names48
        if value in known:
            return value
        if len(value) <= _NAME_MAX[column] and _MQ_NAME.fullmatch(value):
            known.add(value)
            return value
        raise _Reject(_name_problem(column, value))

    def row(self, line: int, v: list[str]) -> PutRecord:
        """One row (values stripped, in PUT_COLUMNS order) -> PutRecord; raises _Reject."""
        return self._row(line, v)

    def _fast_row(self):
        # The common case (names already seen, canonical values) touches only locals; everything else
        # falls through to the checking helpers, which produce the problem texts.
        source = self.source
        seen = self.seen
        names48 = self.names48
        names20 = self.names20
        tokens = self.tokens
        name = self.name
        fromiso = datetime.fromisoformat
        utc = _UTC
        bools = _BOOLS
        binds = _BIND_SET
        hex_ok = _HEX.fullmatch
        make = _make_record

        def row(line: int, v: list[str]) -> PutRecord:
            text = v[0]
            try:
                if len(text) < 11:
                    raise ValueError
                ts = fromiso(text)
            except ValueError:
                raise _Reject(f"bad timestamp in put_time: {text!r}" if text else "missing put_time") from None
            if ts.tzinfo is not utc:
                ts = ts.replace(tzinfo=utc) if ts.tzinfo is None else _to_utc(ts, text)
            sending = v[1]
            if sending not in names48:
                name("sending_qmgr", sending, True)
            queue = v[2]
            if queue not in names48:
                name("queue", queue, True)
            target = v[3]
            if not target:
                target = None
            elif target not in names48:
                name("target_qmgr", target, False)
            bind = v[4]
            if bind not in binds:
                bind = _bind(bind)
            logical = bools.get(v[7])
            if logical is None:
                logical = _bool("logical_order", v[7])
            from_chl = bools.get(v[8])
            if from_chl is None:
                from_chl = _bool("from_cluster_channel", v[8])
            pcf = bools.get(v[9])
            if pcf is None:
                pcf = _bool("pcf", v[9])
            text = v[10]
            if len(text) < 19 and text.isdigit() and text.isascii():  # below 10**18: fits a long
                length = int(text)
            else:
                length = _length(text)
            persistent = bools.get(v[11])
            if persistent is None:
                persistent = _bool("persistent", v[11])
            token = v[12]
            zero = tokens.get(token)  # keyed by the upper-case form: a hit means the text is that form
            if zero is None:
                token = _hex("accounting_token", token, 32)
                zero = tokens[token] = token.count("0") == 64
            msg_id = v[13]
            if len(msg_id) == 48 and hex_ok(msg_id):
                msg_id = msg_id.upper()
            else:
                msg_id = _hex("msg_id", msg_id, 24)
            first = seen.get(msg_id)
            if first is not None:
                raise _Reject(f"duplicate msg_id (first at line {first})")
            obs_q = v[14] or None
            if obs_q is not None and obs_q not in names48:
                name("observed_qmgr", obs_q, False)
            obs_c = v[15] or None
            if obs_c is not None and obs_c not in names20:
                name("observed_channel", obs_c, False)
            obs_x = v[16] or None
            if obs_x is not None and obs_x not in names48:
                name("observed_xmitq", obs_x, False)
            seen[msg_id] = line
            return make(source, line, ts, sending, queue, target, bind, v[5] or None, v[6] or None, logical,
                        from_chl, pcf, length, persistent, token, zero, msg_id, obs_q, obs_c, obs_x)

        return row


def _bind(text: str) -> str:
    low = text.lower()
    if low in _BIND_SET:
        return low
    if not text:
        raise _Reject("missing bind")
    raise _Reject(f"unknown bind value {text!r} (expected notfixed, open or group)")


def _length(text: str) -> int:
    if not text:
        raise _Reject("missing length")
    if text.isdigit() and text.isascii():
        digits = text.lstrip("0") or "0"
        if len(digits) <= 19 and int(digits) <= INT64_MAX:
            return int(digits)
        raise _Reject(f"length {clip(text)} is out of range (at most {INT64_MAX})")
    if text[0] == "-" and text[1:].isdigit() and text[1:].isascii():
        raise _Reject(f"negative length {clip(text)}")
    raise _Reject(f"non-integer length {clip(text)!r}")


def _to_utc(ts: datetime, text: str) -> datetime:
    try:
        return ts.astimezone(_UTC)
    except OverflowError:  # 0001-01-01T00:00+05:00 is before year 1 in UTC
        raise _Reject(f"put_time {text!r} is out of range in UTC") from None


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


def _bool(column: str, text: str) -> bool:
    value = _BOOLS.get(text)
    if value is None:
        low = text.lower()
        if low in _BOOLS:
            return _BOOLS[low]
        if not text:
            raise _Reject(f"missing {column}")
        raise _Reject(f"bad boolean in {column}: {text!r} (expected true or false)")
    return value


def _hex(column: str, text: str, size: int) -> str:
    if not text:
        raise _Reject(f"missing {column}")
    if len(text) % 2 or not _HEX.fullmatch(text):
        raise _Reject(f"bad hex in {column}")
    if len(text) != 2 * size:
        raise _Reject(f"{column} is not {size} bytes ({2 * size} hex digits)")
    return text.upper()


# --------------------------------------------------------------------------------------------------
# CSV


def _csv_raw(row: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(row)
    return out.getvalue()


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
    identity = index == list(range(len(_NAMES))) and width == len(_NAMES)
    row_fn = _Validator(source)._row
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
        except _Reject as exc:
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
                raise _Reject(f"lone surrogate in {name}: not valid Unicode (a \\uXXXX escape of half a character)")
            values.append(x.strip())
        elif isinstance(x, bool):
            values.append("true" if x else "false")
        elif isinstance(x, int):
            values.append(str(x))
        elif isinstance(x, float):
            values.append(repr(x))
        else:
            raise _Reject(f"bad value type for {name}: {type(x).__name__}")
    return values


def _parse_objects(
    items: Iterator[tuple[int, str, object]], source: str
) -> tuple[list[PutRecord], list[ParseProblem]]:
    row = _Validator(source)._row
    records: list[PutRecord] = []
    problems: list[ParseProblem] = []
    with _gc_paused():
        for line, raw, obj in items:
            try:
                if isinstance(obj, _BadJson):
                    raise _Reject(f"bad JSON: {obj.message}")
                if not isinstance(obj, dict):
                    raise _Reject("not a JSON object")
                records.append(row(line, _json_values(obj)))
            except _Reject as exc:
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
            with p.open(encoding="utf-8-sig", newline="") as handle:
                return _parse_csv(handle, source, on_chunk, chunk_rows)
        with p.open(encoding="utf-8-sig") as handle:
            first = ""
            for first in iter(lambda: handle.read(1), ""):
                if not first.isspace():
                    break
            handle.seek(0)
            if first == "[":
                return _parse_objects(_json_array_items(handle.read(), source), source)
            return _parse_objects(_jsonl_items(handle), source)
    except FileNotFoundError:
        raise InputError(source, "file not found") from None
    except IsADirectoryError:
        raise InputError(source, "is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise InputError(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise InputError(source, f"unreadable CSV: {exc}") from None
    except OSError as exc:
        raise InputError(source, f"cannot read: {exc.strerror or exc}") from None
