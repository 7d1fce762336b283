"""Parsing one landing file, in a Spark task: the ``clwl`` parser its name chose, its rows for every bronze
table it feeds, its quarantine rows, and its counts (records read = accepted + quarantined, checked here);
:func:`parse_partition` is the task body, writing the rows of each table as Parquet to the run's scratch folder.
Pure Python apart from the schema objects: ``clwl`` and pyspark are imported inside the functions, in the
executors."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Callable, Iterable, Iterator

from clwl.days import RunDate
from clwl.landing import formats
from clwl.landing.discovery import LandingFile, unknown_format_reason
from clwl.landing.formats import TRACE_FORMAT as TRACE_FORMAT
from spark.ingest.scratch import QUARANTINE_TABLE, remove_scratch_file, write_scratch_file
from spark.tables import TABLES


class ReconciliationError(RuntimeError):
    """records read != records accepted + records quarantined for a file: a bug, never bad input."""


#: Attributes left out of attrs_hash: runtime counters shown by DISPLAY ... ALL that are not configuration.
VOLATILE_ATTRIBUTES: dict[str, frozenset[str]] = {
    "QLOCAL": frozenset({"CURDEPTH", "IPPROCS", "OPPROCS"}),
    "QMODEL": frozenset({"CURDEPTH", "IPPROCS", "OPPROCS"}),
}

# DISPLAY <word>(*) in an echoed command -> the kinds it asks for in full.
_DISPLAY_KINDS = {
    "CLUSQMGR": ("CLUSQMGR",),
    "QCLUSTER": ("QCLUSTER",), "QC": ("QCLUSTER",),
    "QMGR": ("QMGR",),
    "QLOCAL": ("QLOCAL",), "QL": ("QLOCAL",),
    "QALIAS": ("QALIAS",), "QA": ("QALIAS",),
    "QREMOTE": ("QREMOTE",), "QR": ("QREMOTE",),
    "QMODEL": ("QMODEL",), "QM": ("QMODEL",),
    "QUEUE": ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL"), "Q": ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL"),
    "CHSTATUS": ("CHSTATUS",), "CHS": ("CHSTATUS",),
    "CHANNEL": ("CHANNEL",), "CHL": ("CHANNEL",),
    "NAMELIST": ("NAMELIST",), "NL": ("NAMELIST",),
    "GROUP": ("QSGMEMBER",), "CFSTRUCT": ("CFSTRUCT",),
}
_ECHO_DISPLAY = re.compile(
    r"^[ \t]*\d+[ \t]*:[ \t]*(?:DISPLAY|DIS)[ \t]+([A-Za-z]+)[ \t]*(?:\(([^)\n]*)\))?([^\n]*)$", re.M | re.I)
_ECHO_ANY = re.compile(r"^[ \t]*\d+[ \t]*:[ \t]*\S", re.M)
_TYPE_FILTER = re.compile(r"\bTYPE\s*\(\s*([A-Za-z]+)\s*\)", re.I)


def covered_kinds(text: str | None, capture_type: str | None, kinds_present: Iterable[str]) -> list[str]:
    """Kinds a capture asked for in full, so that an object of that kind missing from it no longer exists.

    runmqsc text with echoed commands: the kinds of ``DISPLAY <kind>(*)`` (``DISPLAY QMGR``), without ``WHERE``.
    Otherwise (REST, or text without echoed commands): the kinds it holds records of, plus CHSTATUS for a
    ``chstatus_`` capture (an all-inactive answer has no record at all).
    """
    if text is not None and _ECHO_ANY.search(text):
        kinds: set[str] = set()
        for word, arg, rest in _ECHO_DISPLAY.findall(text):
            wanted = _DISPLAY_KINDS.get(word.upper())
            if not wanted or re.search(r"\bWHERE\b", rest, re.I):
                continue
            if wanted not in (("QMGR",), ("QSGMEMBER",)) and (arg is None or arg.strip() != "*"):
                continue
            typed = _TYPE_FILTER.search(rest)
            if typed and wanted[0] in ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL") and len(wanted) > 1:
                only = _DISPLAY_KINDS.get(typed.group(1).upper(), ())
                wanted = tuple(k for k in wanted if k in only) if typed.group(1).upper() != "ALL" else wanted
            kinds.update(wanted)
        return sorted(kinds)
    kinds = set(kinds_present)
    if capture_type == "chstatus":
        kinds.add("CHSTATUS")
    return sorted(kinds)


def attrs_hash(kind: str, attrs: dict[str, str | None]) -> str:
    """sha256 of a record's attributes without the volatile ones: equal hashes = unchanged configuration."""
    volatile = VOLATILE_ATTRIBUTES.get(kind, frozenset())
    items = sorted((k, v) for k, v in attrs.items() if k not in volatile)
    return hashlib.sha256(json.dumps(items, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def object_key(record) -> str:
    """A stable text key of the object a record describes: ``clwl.engine.view.record_identity`` without source and line."""
    from clwl.engine.view import record_identity

    ident = record_identity(record)
    if record.kind not in ("CLUSQMGR", "QCLUSTER", "QMGR", "QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "CHSTATUS",
                           "NAMELIST", "CHANNEL", "CFSTRUCT", "QSGMEMBER"):
        ident = (record.kind,) + tuple(ident[1:-2])  # (kind, source, line) -> (kind,)
    return "|".join(str(part) for part in ident)


_HEAD_BYTES = 4096


def _head(p: str) -> str:
    try:
        with open(p, "rb") as fh:
            data = fh.read(_HEAD_BYTES + 1)
    except OSError as exc:
        return f"<unreadable: {exc.strerror or exc}>"
    from clwl.parse.mqsc import decode_bytes

    text = decode_bytes(data[:_HEAD_BYTES])
    return text + ("\n[... cut at 4096 bytes]" if len(data) > _HEAD_BYTES else "")


class _Out:
    """Rows and counts of one file while it is parsed."""

    def __init__(self, spec: LandingFile, run_id: str,
                 spill: Callable[[str, list[tuple]], str] | None = None):
        self.spec = spec
        self.run_id = run_id
        self.spill = spill  # writes rows out as the file is parsed; returns the file written
        self.spilled: dict[str, int] = {}
        self.spilled_files: list[str] = []
        self.run_date = RunDate(spec.run_date).day
        self.format = formats.logged_format(spec.parser, spec.source_file)  # until the parser knows better
        self.rows: dict[str, list[tuple]] = {}
        self.read = self.accepted = self.quarantined = self.skipped = 0
        self.status = "ingested"
        self.reason: str | None = None
        self.notes: list[str] = []  # file-level remarks of a parser (activity trace): printed, not quarantined

    def add(self, key: str, row: tuple) -> None:
        self.rows.setdefault(key, []).append(row)

    def write_out(self, key: str, rows: list[tuple]) -> None:
        """Rows of `key` written out now (by `spill`) instead of kept; counted as rows of the file all the same."""
        if rows:
            self.spilled_files.append(self.spill(key, rows))
            self.spilled[key] = self.spilled.get(key, 0) + len(rows)

    def problem(self, position: int, reason: str, raw: str | None, level: str = "record") -> None:
        from clwl.parse.common import INT32_MAX, escape_surrogates

        s = self.spec
        seq = len(self.rows.get(QUARANTINE_TABLE, ()))
        position = int(position or 0)
        # The quarantine row must be storable whatever the record held: a lone surrogate is written as its
        # escape, a position beyond the column as 0.
        self.add(QUARANTINE_TABLE, TABLES[QUARANTINE_TABLE].row(
            ingest_run_id=self.run_id, run_date=self.run_date, observing_qmgr=s.observing_qmgr,
            source_file=s.source_file, seq=seq, position=position if 0 <= position <= INT32_MAX else 0,
            format=self.format, level=level, reason=escape_surrogates(reason),
            raw=None if raw is None else escape_surrogates(raw)))

    def reject(self, reason: str) -> None:
        """The whole file to quarantine, as one row; whatever was read from it is dropped."""
        from clwl.parse.common import escape_surrogates

        reason = escape_surrogates(reason)
        self.rows = {}
        for written in self.spilled_files:
            remove_scratch_file(written)
        self.spilled, self.spilled_files = {}, []
        self.read, self.accepted, self.quarantined, self.skipped = 1, 0, 1, 0
        self.status, self.reason = "rejected", reason
        self.problem(0, reason, None if self.spec.skipped else _head(self.spec.path), level="file")

    def finish(self) -> tuple[dict, dict[str, list[tuple]]]:
        s = self.spec
        counts = {k: len(v) + self.spilled.get(k, 0) for k, v in self.rows.items()}
        counts.update((k, n) for k, n in self.spilled.items() if k not in counts)
        data_rows = sum(n for k, n in counts.items() if k not in (QUARANTINE_TABLE, "bronze.capture_files"))
        quarantine_rows = len(self.rows.get(QUARANTINE_TABLE, ()))
        if (self.read != self.accepted + self.quarantined or quarantine_rows != self.quarantined
                or data_rows != self.accepted - self.skipped):
            raise ReconciliationError(
                f"{s.source_file}: read {self.read} != accepted {self.accepted} + quarantined {self.quarantined}, "
                f"or rows (data {data_rows}, quarantine {quarantine_rows}, skipped {self.skipped}) disagree")
        summary = {
            "source_file": s.source_file, "run_date": s.run_date, "observing_qmgr": s.observing_qmgr,
            "format": self.format, "status": self.status, "reason": self.reason, "records_read": self.read,
            "records_accepted": self.accepted, "records_quarantined": self.quarantined,
            "records_skipped": self.skipped, "rows": counts, "notes": self.notes,
        }
        return summary, self.rows


@functools.lru_cache(maxsize=None)
def _column_checks(key: str) -> tuple[tuple[int, str, str, int, int], ...]:
    """(index, column, what, lo, hi) of the columns of a table whose values Arrow may refuse: integers beyond the
    column's range, text with a lone surrogate (in strings, string maps and string arrays). From the registry, not
    Spark's types: clwl check runs this parse body without pyspark."""
    from clwl.lake.registry import spec

    return spec(key).value_checks()


def _texts(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(k)
            yield from _texts(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _texts(v)


def _row_problem(key: str, row: tuple) -> str | None:
    """Why Arrow would refuse `row` for the table's schema (checked per record, so that a value beyond its
    column costs its record only, not the file's or the task's Parquet file), or None."""
    for index, column, what, lo, hi in _column_checks(key):
        value = row[index]
        if value is None:
            continue
        if what == "int":
            if not lo <= value <= hi:
                return f"{column} is out of range for its column ({lo}..{hi})"
        elif not _all_ascii(value):  # isascii is a flag lookup: the common row costs no scan at all
            from clwl.parse.common import escape_surrogates, has_surrogate

            bad = next((text for text in _texts(value) if has_surrogate(text)), None)
            if bad is not None:
                return f"lone surrogate in {column}: {escape_surrogates(bad)[:60]!r} is not valid Unicode"
    return None


def _all_ascii(value) -> bool:
    """A string, or a string map or array, holds ASCII text only (so no lone surrogate either). False may also
    mean "not only strings": the caller then looks at each text."""
    if isinstance(value, str):
        return value.isascii()
    try:  # one join in C instead of a call per string
        if isinstance(value, dict):
            return "".join(value).isascii() and "".join(value.values()).isascii()
        return "".join(value).isascii()
    except TypeError:  # a None (or another type) among them
        return False


def _row_raw(key: str, row: tuple) -> str:
    from clwl.parse.common import escape_surrogates

    skip = {"ingest_run_id", "run_date", "observing_qmgr", "source_file", "capture_time"}
    shown = {c: v for c, v in zip(TABLES[key].columns, row) if c not in skip}
    return escape_surrogates(json.dumps(shown, default=str, ensure_ascii=False))


def _parse_capture(out: _Out) -> None:
    from clwl.engine.view import parse_capture_file
    from clwl.parse.mqsc import read_text_file

    s = out.spec
    cap = parse_capture_file(s.path)
    out.format = cap.fmt
    qmgr = s.observing_qmgr
    names = [("banner", cap.banner_qmgr)] + [("QMNAME", r.get("QMNAME")) for r in cap.records if r.kind == "QMGR"]
    for where, name in names:
        if qmgr and name and name != qmgr:
            out.reject(f"capture is of queue manager {name} ({where}), but it is in the folder of {qmgr}")
            return
    text = read_text_file(s.path)[1] if cap.fmt == formats.ECHOED_COMMANDS else None
    t_objects = TABLES["bronze.mqsc_objects"]
    kept, refused = [], []  # a record whose row Arrow would refuse is quarantined, on its own
    for r in cap.records:
        attrs = dict(r.attrs)
        try:
            digest, key = attrs_hash(r.kind, attrs), object_key(r)
        except UnicodeEncodeError:  # a lone surrogate: _row_problem names it
            digest = key = ""
        row = t_objects.row(
            ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=qmgr, capture_time=s.capture_time,
            source_file=s.source_file, seq=len(kept), position=int(r.line), format=cap.fmt,
            message_id=r.message_id, kind=r.kind, object_key=key, attrs=attrs, attrs_hash=digest)
        reason = _row_problem(t_objects.key, row) or (None if digest else "attributes are not valid Unicode")
        if reason is None:
            kept.append(r)
            out.add(t_objects.key, row)
        else:
            refused.append((r.line, reason, _row_raw(t_objects.key, row)))
    for p in cap.problems:
        out.problem(p.line, p.reason, p.raw)
    for line, reason, raw in refused:
        out.problem(line, reason, raw)
    problems = len(cap.problems) + len(refused)
    out.read = len(cap.records) + len(cap.problems)
    out.accepted, out.quarantined = len(kept), problems
    present = sorted({r.kind for r in kept})
    covered = covered_kinds(text, s.capture_type, present)
    t_caps = TABLES["bronze.capture_files"]
    row = t_caps.row(
        ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=qmgr, capture_time=s.capture_time,
        source_file=s.source_file, format=cap.fmt, capture_type=s.capture_type, kinds_covered=covered,
        kinds_present=present, complete=not problems, banner_qmgr=cap.banner_qmgr,
        records=len(kept), problems=problems)
    reason = _row_problem(t_caps.key, row)
    if reason is not None:
        out.reject(f"capture cannot be stored: {reason}")
        return
    out.add(t_caps.key, row)


def _parse_puts(out: _Out) -> None:
    from clwl.parse.puts import parse_puts_file

    s = out.spec
    t = TABLES["bronze.put_records"]
    fields = t.columns[t.columns.index("format") + 1:]
    head = (out.run_id, out.run_date, s.observing_qmgr, s.source_file)

    def rows(records) -> list[tuple]:
        return [head + (int(r.line), out.format) + tuple(getattr(r, f) for f in fields) for r in records]

    # A large file is written out in chunks as it is parsed: held whole, a 325 MB puts file took a parse
    # worker to about 4 GiB.
    records, problems = parse_puts_file(
        s.path, on_chunk=(lambda chunk: out.write_out(t.key, rows(chunk))) if out.spill else None,
        chunk_rows=PUTS_CHUNK_ROWS)
    for row in rows(records):
        out.add(t.key, row)
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    accepted = len(records) + out.spilled.get(t.key, 0)
    out.read, out.accepted, out.quarantined = accepted + len(problems), accepted, len(problems)


def _parse_xmitq(out: _Out) -> None:
    from clwl.parse.common import ParseProblem
    from clwl.parse.xmitq import parse_xmitq_file

    s = out.spec
    records, problems = parse_xmitq_file(s.path)
    if out.format == s.parser:  # the name does not tell (a .txt browse): which tool printed it
        out.format = formats.browse_tool(_head(s.path))
    t = TABLES["bronze.xmitq_messages"]
    refused = 0
    for r in records:
        row = t.row(
            ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
            capture_time=s.capture_time, source_file=s.source_file, position=int(r.line), format=out.format,
            message_number=r.position, xmitq=r.queue, msg_id=r.msg_id, correl_id=r.correl_id,
            accounting_token=r.accounting_token, accounting_token_zero=r.accounting_token_zero,
            put_time=r.put_datetime, md_format=r.format, persistence=r.persistence, priority=r.priority,
            group_id=r.group_id, msg_seq_number=r.msg_seq_number, length=r.length, remote_q_name=r.remote_q_name,
            remote_qmgr_name=r.remote_qmgr_name, inner_accounting_token=r.inner_accounting_token,
            inner_put_time=r.inner_put_datetime)
        reason = _row_problem(t.key, row)
        if reason is None:
            out.add(t.key, row)
        else:  # a value Arrow would refuse costs its message only
            refused += 1
            problems.append(ParseProblem(s.path, r.line, reason, _row_raw(t.key, row)))
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    out.read = len(records) + len(problems) - refused
    out.accepted, out.quarantined = len(records) - refused, len(problems)


def _parse_amqsmon(out: _Out) -> None:
    """Queue rows to bronze.queue_accounting, channel rows (ChannelStatistics) to bronze.channel_statistics."""
    from clwl.parse.amqsmon import ChannelStatisticsRecord, parse_amqsmon_file
    from clwl.parse.common import ParseProblem

    s = out.spec
    records, problems, skipped = parse_amqsmon_file(s.path)
    t, t_chl = TABLES["bronze.queue_accounting"], TABLES["bronze.channel_statistics"]
    counters = t_chl.columns[t_chl.columns.index("interval_end") + 1:]  # named as the record's fields
    refused = 0
    for r in records:
        if isinstance(r, ChannelStatisticsRecord):
            key = t_chl.key
            row = t_chl.row(
                ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
                source_file=s.source_file, position=int(r.line), format=out.format, qmgr=r.qmgr,
                interval_start=r.interval_start, interval_end=r.interval_end,
                **{c: getattr(r, c) for c in counters})
        else:
            key = t.key
            row = t.row(
                ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
                source_file=s.source_file, position=int(r.line), format=out.format, monitoring_type=r.monitoring_type,
                qmgr=r.qmgr, interval_start=r.interval_start, interval_end=r.interval_end, queue=r.queue,
                queue_type=r.queue_type, put_count_nonpersistent=r.put_count_nonpersistent,
                put_count_persistent=r.put_count_persistent, put1_count_nonpersistent=r.put1_count_nonpersistent,
                put1_count_persistent=r.put1_count_persistent, put_fail_count=r.put_fail_count,
                put_bytes_nonpersistent=r.put_bytes_nonpersistent, put_bytes_persistent=r.put_bytes_persistent,
                application_name=r.application_name, connection_id=r.connection_id, q_min_depth=r.q_min_depth,
                q_max_depth=r.q_max_depth)
        reason = _row_problem(key, row)
        if reason is None:
            out.add(key, row)
        else:  # a value Arrow would refuse costs its queue or channel row only
            refused += 1
            problems.append(ParseProblem(s.path, r.line, reason, _row_raw(key, row)))
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    # MQI records are recognised and left out by design: they count as accepted (and skipped).
    out.read = len(records) + len(problems) + skipped - refused
    out.accepted, out.quarantined, out.skipped = len(records) - refused + skipped, len(problems), skipped


#: Operations of an activity trace parsed between two writes of its rows, when the parse task writes as it goes.
TRACE_CHUNK_OPS = 50_000


def _parse_activity_trace(out: _Out, tz: str | None = None, state=None, parse_lines=None) -> None:
    """An amqsact output file (``clwl.parse.activity_trace``): every MQI operation to
    bronze.activity_operations, every traced put's PutRecord to bronze.put_records (format ``amqsact``, so that
    silver.message_events is rebuilt from it exactly as from a put CSV file).

    Records of a trace file: its operations and the put events made from them (a successful MQPUT is two: its
    operation row and its put row), plus whatever the parser could not use (one quarantine row each, a put
    event refused after its operation was accepted among them). So records read = accepted + quarantined holds
    as for every file. ``state``: the open handles left by the previous trace file of the same queue manager and
    run date (``TraceState``), updated in place for the next one. ``parse_lines``: the reader of the file's text
    (default amqsact's; amqsevt's JSON reader gives the same records: :func:`_parse_amqsevt_json`)."""
    from clwl.parse.activity_trace import parse_activity_trace_lines
    from clwl.parse.common import InputError

    parse_lines = parse_lines or parse_activity_trace_lines

    s = out.spec
    t_ops, t_puts = TABLES["bronze.activity_operations"], TABLES["bronze.put_records"]
    put_fields = t_puts.columns[t_puts.columns.index("format") + 1:]
    head = (out.run_id, out.run_date, s.observing_qmgr, s.source_file)
    op_row = t_ops.row_from(ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
                            source_file=s.source_file, position=None, format=TRACE_FORMAT, operation_index=None,
                            fields=None)
    position, index = t_ops.columns.index("position"), t_ops.columns.index("operation_index")
    fields_at = t_ops.columns.index("fields")
    taken = {"rows": 0}

    def rows_of(key: str, build, records) -> list[tuple]:
        kept = []
        for r in records:
            row = build(r)
            reason = _row_problem(key, row)
            if reason is None:
                kept.append(row)
            else:  # a value Arrow would refuse costs its record only
                out.problem(int(r.line) if key == t_ops.key else int(r.put.line), reason, _row_raw(key, row))
        taken["rows"] += len(kept)
        return kept

    def op(r) -> tuple:
        row = list(op_row(r))
        row[position], row[index], row[fields_at] = int(r.line), int(r.index), dict(r.fields)
        return tuple(row)

    def put(p) -> tuple:
        r = p.put
        return head + (int(r.line), TRACE_FORMAT) + tuple(getattr(r, f) for f in put_fields)

    def take(operations, puts, problems, spill: bool) -> None:
        for key, some in ((t_ops.key, rows_of(t_ops.key, op, operations)), (t_puts.key, rows_of(t_puts.key, put, puts))):
            if spill:
                out.write_out(key, some)
            else:
                for row in some:
                    out.add(key, row)
        for p in problems:
            out.problem(p.line, p.reason, p.raw)

    # Opened here rather than by parse_activity_trace_file: records name the file relative to the landing root,
    # so that the ids the parser synthesizes (LOW level) do not change when the landing folder moves.
    try:
        with open(s.path, encoding="utf-8", errors="replace", newline="") as fh:
            result = parse_lines(
                fh, s.source_file, tz=tz or "UTC", state=state,
                on_chunk=(lambda c: take(c.operations, c.puts, c.problems, True)) if out.spill else None,
                chunk_ops=TRACE_CHUNK_OPS if out.spill else 0)
    except OSError as exc:
        raise InputError(s.source_file, f"cannot read: {exc.strerror or exc}") from None
    take(result.operations, result.puts, result.problems, False)
    out.notes = [f"line {n.line}: {n.text}" if n.line else n.text for n in result.notes]
    quarantined = len(out.rows.get(QUARANTINE_TABLE, ()))
    out.read, out.accepted, out.quarantined = taken["rows"] + quarantined, taken["rows"], quarantined


def _parse_amqsevt_json(out: _Out, tz: str | None = None, state=None) -> None:
    """An amqsevt JSON file of activity trace messages (``clwl.parse.activity_trace_json``): its records are the
    amqsact reader's, so its rows are built exactly as :func:`_parse_activity_trace` builds them (``format``
    the trace's, so that silver.message_events takes them as activity trace events)."""
    from clwl.parse.activity_trace_json import parse_amqsevt_json_lines

    _parse_activity_trace(out, tz, state, parse_lines=parse_amqsevt_json_lines)


@functools.lru_cache(maxsize=None)
def _entry_point(name: str) -> Callable:
    """A format's parse entry point (``clwl.landing.formats.Format.parse``, ``"module:function"``), imported once."""
    import importlib

    module, _, function = formats.get(name).parse.partition(":")
    return getattr(importlib.import_module(module), function)


#: Lines of a CSV puts file parsed between two writes of its rows, when the parse task writes as it goes.
PUTS_CHUNK_ROWS = 250_000


def parse_landing_file(spec: LandingFile, run_id: str, spill: Callable[[str, list[tuple]], str] | None = None,
                       trace_tz: str | None = None, trace_state=None) -> tuple[dict, dict[str, list[tuple]]]:
    """Parse one landing file: ``(summary, rows by table key)``. Never raises for bad input.

    spill: ``spill(table key, rows) -> file written``, for rows written out while a large file is parsed;
    they are counted in the summary's rows but not returned (and removed again if the file is rejected).
    trace_tz / trace_state: for an activity trace, the zone its local times are read in and the handles left
    open by the previous trace file of its queue manager and run date (see :func:`_parse_activity_trace`)."""
    from clwl.parse.common import InputError

    out = _Out(spec, run_id, spill)
    if spec.reject:
        out.reject(spec.reject)
    elif formats.get(spec.parser) is None:
        out.reject(unknown_format_reason(spec.source_file.rsplit("/", 1)[-1], _head(spec.path)))
    else:
        try:
            if formats.unit(spec.parser) == formats.QMGR_DAY:
                _entry_point(spec.parser)(out, trace_tz, trace_state)
            else:
                _entry_point(spec.parser)(out)
        except InputError as exc:
            out.reject(exc.reason)
        except Exception as exc:  # noqa: BLE001 - the last resort, never the way bad input is handled
            # A parser bug on odd input must lose neither the run nor the other files of the task: the file is
            # quarantined with the error (tests/unit/test_parser_fuzz.py checks no mutated input gets here).
            out.reject(f"parser failed: {type(exc).__name__}: {str(exc)[:300]}")
    return out.finish()


def arrow_table(key: str, rows: list[tuple]):
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(TABLES[key].schema)
    columns = list(zip(*rows))
    return pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema)], schema=schema)


def parse_partition(tasks: Iterator[tuple[int, list[LandingFile]]], run_id: str, scratch: str,
                     trace_tz: str | None = None) -> Iterator[str]:
    """Parse task: parse each file of its task(s), write the rows of every table as one Parquet file per table
    (``<scratch>/<table>/part-<task>.parquet``) and yield each file's summary as JSON.

    The activity trace files of one queue manager and run date are in one task, in name order
    (:func:`spark.ingest.parse_step.plan_tasks`): each is parsed with the handles the previous one left open."""
    import itertools

    from clwl.parse.activity_trace import TraceState
    from spark.ingest.landing_stage import readable_here

    for number, task in tasks:
        states: dict[tuple[str, str | None], TraceState] = {}
        rows: dict[str, list[tuple]] = {}
        summaries = []
        chunks = itertools.count()

        def spill(key: str, some: list[tuple]) -> str:
            return write_scratch_file(scratch, key, f"part-{number:05d}-c{next(chunks):05d}.parquet",
                                  arrow_table(key, some))

        for spec in task:
            state = (states.setdefault((spec.run_date, spec.observing_qmgr), TraceState())
                     if formats.unit(spec.parser) == formats.QMGR_DAY else None)
            with readable_here(spec) as here:
                summary, table_rows = parse_landing_file(here, run_id, spill, trace_tz, state)
            summaries.append(json.dumps(summary))
            for key, some in table_rows.items():
                rows.setdefault(key, []).extend(some)
        for key, some in rows.items():
            if some:
                write_scratch_file(scratch, key, f"part-{number:05d}.parquet", arrow_table(key, some))
        yield from summaries
