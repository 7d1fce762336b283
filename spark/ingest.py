"""Ingest: the landing folder's MQ exports -> bronze -> silver (Delta), nothing lost.

Landing layout (what a user drops; ``samples/landing`` is an example)::

    <landing>/<YYYY-MM-DD>/<QM>/<file>

``<YYYY-MM-DD>`` is the run date, ``<QM>`` the queue manager whose view the files hold (the observing queue
manager). A file's parser is chosen by its name (letter case ignored), then by its content:

=====================================================  ======================================================
``config_HHMMSS.mqsc|.txt|.json|.jsonl``               runmqsc output or MQ REST runCommandJSON (told apart by
``chstatus_HHMMSS.mqsc|.txt|.json|.jsonl``             content: ``clwl.view.parse_capture_file``)
``puts*.csv|.jsonl|.json``                             put records (``clwl.parse.puts``)
``xmitq_HHMMSS.amqsbcg|.dmpmqmsg|.txt``                transmission queue browse (``clwl.parse.xmitq``)
``*.amqsmon``                                          amqsmon queue accounting / statistics
=====================================================  ======================================================

``HHMMSS`` is the capture time (UTC) on the run date. Files whose name starts with ``.`` are ignored. A file
that matches none of these, whose capture time is not a valid ``HHMMSS``, that is not in a
``<date>/<QM>/`` folder, that a parser rejects as a whole (``InputError``), or whose banner / ``QMNAME`` names
another queue manager than its folder, becomes one ``silver.quarantine`` row (``level = 'file'``) with the
reason; the run goes on. Every record a parser cannot accept becomes one quarantine row (``level =
'record'``). Per file, records read = records accepted + records quarantined, checked in the parse task and
again in the driver (:class:`ReconciliationError`), and logged in ``silver.ingest_files``.

How a run works (:func:`ingest`):

1. discover the files of the run dates, hash their content (sha256) and compare with the run log
   (``silver.ingest_files``): a file whose content and reading code (``code_version``) are unchanged since it
   was last ingested is not read again (``force=True`` reads everything); a file that was ingested before and
   is gone from its date folder is removed from the tables;
2. parse the new or changed files in Spark tasks, one task per file
   (``parallelize(files, len(files)).mapPartitions``), calling the ``clwl`` parsers; the tagged rows of every
   target table come out of that one pass, which is cached (``persist``) while the tables are written;
3. replace, in every table the files feed, the rows of exactly those files (Delta ``replaceWhere`` on
   ``run_date`` and ``source_file``): a corrected file replaces only its own rows, and ingesting the same dates
   again changes nothing (nothing is rewritten);
4. rebuild ``silver.config_history`` and ``silver.channel_status`` of every observing queue manager whose
   captures changed, from all of its bronze captures ordered by capture time (``replaceWhere`` on
   ``observing_qmgr``): out-of-order arrival gives the same history as in-order arrival;
5. append the run's per-file counts to ``silver.ingest_files`` (last: a run that dies before this is redone).

History semantics (both history tables): for one observing queue manager, the captures that cover a kind
(``bronze.capture_files``) are ordered by (capture time, file). In each, an object is present (its attribute
hash), absent (the capture asked for the whole kind with ``DISPLAY <kind>(*)`` and had no quarantined
record), or unknown (anything else: its state carries over). A version opens where the state changes
(``valid_from`` = that capture time) and is closed by the next change or absence (``valid_to``); an unchanged
capture changes nothing. A channel absent from a full, clean CHSTATUS capture is ``INACTIVE`` from then
(mq-domain-notes 2a: inactive channels have no CHSTATUS record). ``attrs_hash`` leaves out the attributes in
:data:`VOLATILE_ATTRIBUTES` (queue depth and handle counts), so they do not make versions; the stored
``attrs`` are the opening capture's.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator

from spark.config import PipelineConfig
from spark.tables import TABLES, ensure_tables, path, read

__all__ = [
    "FileResult",
    "IngestSummary",
    "LandingError",
    "LandingFile",
    "ReconciliationError",
    "VOLATILE_ATTRIBUTES",
    "attrs_hash",
    "build_channel_status",
    "build_config_history",
    "classify_name",
    "code_version",
    "discover_landing",
    "ingest",
    "parse_landing_file",
]


class LandingError(ValueError):
    """The landing folder, or a requested run date's folder, cannot be used at all (the CLI exits 2)."""


class ReconciliationError(RuntimeError):
    """records read != records accepted + records quarantined for a file: a bug, never bad input."""


# ----------------------------------------------------------------------------------------------------------
# File names

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NAME_PATTERNS = (
    ("capture", re.compile(r"^(config|chstatus)_([^.]*)\.(mqsc|txt|json|jsonl)$", re.I)),
    ("xmitq", re.compile(r"^(xmitq)_([^.]*)\.(amqsbcg|dmpmqmsg|txt)$", re.I)),
    ("puts", re.compile(r"^(puts)[^/]*\.(csv|jsonl|json)$", re.I)),
    ("amqsmon", re.compile(r"^(.*)\.(amqsmon)$", re.I)),
)
EXPECTED_NAMES = (
    "config_HHMMSS.mqsc|json, chstatus_HHMMSS.mqsc|json, puts*.csv|jsonl|json, "
    "xmitq_HHMMSS.amqsbcg|dmpmqmsg, *.amqsmon"
)
# Content sniffing, only to make the reason for an unknown file name helpful.
_SNIFF = (
    (re.compile(r"^MonitoringType\s*:", re.M), "amqsmon output", "*.amqsmon"),
    (re.compile(r"MQGET of message number|^A VER |^\* (Dumper|QLOAD) Version", re.M),
     "a transmission queue browse", "xmitq_HHMMSS.amqsbcg|dmpmqmsg"),
    (re.compile(r"^\s*AMQ\d{4}[IEWS]?:|Starting MQSC for queue manager", re.M), "runmqsc output",
     "config_HHMMSS.mqsc or chstatus_HHMMSS.mqsc"),
    (re.compile(r'"commandResponse"'), "an MQ REST response", "config_HHMMSS.json or chstatus_HHMMSS.json"),
    (re.compile(r"^\ufeff?put_time\s*,", re.M), "put records (CSV)", "puts*.csv"),
)
# Table groups a file of each parser feeds (silver.quarantine is fed by every file).
_FEEDS = {
    "capture": ("bronze.capture_files", "bronze.mqsc_objects"),
    "puts": ("bronze.put_records", "silver.message_events"),
    "xmitq": ("bronze.xmitq_messages", "silver.xmitq_contents"),
    "amqsmon": ("bronze.queue_accounting", "silver.queue_accounting"),
    "unknown": (),
}


def _valid_date(text: str) -> bool:
    if not _DATE.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def classify_name(name: str, run_date: str) -> tuple[str, str | None, datetime | None, str | None]:
    """``(parser, capture_type, capture_time, reject_reason)`` of a landing file name.

    parser: capture | puts | xmitq | amqsmon | unknown. capture_type: config | chstatus for captures, xmitq for
    browses. capture_time: the run date + ``HHMMSS`` of the name, UTC (captures and browses). reject_reason is
    set when the name matches no known pattern or its ``HHMMSS`` is not a time of day.
    """
    for parser, pattern in _NAME_PATTERNS:
        m = pattern.match(name)
        if not m:
            continue
        if parser not in ("capture", "xmitq"):
            return parser, None, None, None
        what, stamp = m.group(1).lower(), m.group(2)
        if not (len(stamp) == 6 and stamp.isdigit() and stamp.isascii()):
            return parser, what, None, (
                f"bad capture time in file name {name!r}: {stamp!r} is not HHMMSS (6 digits)")
        hh, mm, ss = int(stamp[:2]), int(stamp[2:4]), int(stamp[4:])
        if hh > 23 or mm > 59 or ss > 59:
            return parser, what, None, f"bad capture time in file name {name!r}: {stamp!r} is not a time of day"
        day = date.fromisoformat(run_date)
        return parser, what, datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=timezone.utc), None
    return "unknown", None, None, None


def _unknown_reason(name: str, head: str) -> str:
    for pattern, what, expected in _SNIFF:
        if pattern.search(head):
            return f"no known format: file name {name!r} matches no landing pattern (content looks like {what}; " \
                   f"name it {expected})"
    return f"no known format: file name {name!r} matches none of {EXPECTED_NAMES}"


# ----------------------------------------------------------------------------------------------------------
# Discovery


@dataclass(frozen=True)
class LandingFile:
    """One file of the landing folder, as sent to a parse task (picklable, paths absolute)."""

    path: str
    source_file: str  # relative to the landing root, "/"-separated
    run_date: str  # YYYY-MM-DD
    observing_qmgr: str | None
    parser: str  # capture | puts | xmitq | amqsmon | unknown
    capture_type: str | None
    capture_time: datetime | None
    reject: str | None  # set: the whole file goes to quarantine without being parsed
    size_bytes: int
    content_sha256: str


def _sha256(p: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    size = 0
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def discover_landing(landing: Path | str, run_dates: Iterable[str] | None = None
                     ) -> tuple[list[str], list[LandingFile], list[str]]:
    """``(dates, files, notes)`` of the landing folder for the run dates (default: every date folder).

    :class:`LandingError` when the landing folder does not exist, a requested date is not ``YYYY-MM-DD`` or has
    no folder. Notes: things left out on purpose (folders that are not dates), for the progress output.
    """
    root = Path(landing)
    if not root.is_dir():
        raise LandingError(f"landing folder {root} does not exist" if not root.exists()
                           else f"landing {root} is not a folder")
    notes: list[str] = []
    if run_dates is None:
        dates = []
        for entry in sorted(root.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir() and _valid_date(entry.name):
                dates.append(entry.name)
            else:
                notes.append(f"ignored {entry.name}: not a YYYY-MM-DD run date folder")
    else:
        dates = sorted(set(run_dates))
        for d in dates:
            if not _valid_date(d):
                raise LandingError(f"bad run date {d!r}: expected YYYY-MM-DD")
            if not (root / d).is_dir():
                raise LandingError(f"no folder for run date {d} in {root}")
    files: list[LandingFile] = []
    for d in dates:
        base = root / d
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                p = Path(dirpath) / name
                parts = p.relative_to(base).parts
                qmgr = parts[0] if len(parts) > 1 else None
                parser, ctype, ctime, reject = classify_name(name, d)
                if len(parts) == 1:
                    reject = f"not in a queue manager folder: expected {d}/<QM>/{name}"
                elif len(parts) > 2:
                    reject = f"in a nested folder: expected {d}/<QM>/<file>, found {'/'.join(parts)}"
                size, digest = _sha256(p)
                files.append(LandingFile(
                    path=str(p.absolute()), source_file=p.relative_to(root).as_posix(), run_date=d,
                    observing_qmgr=qmgr, parser=parser, capture_type=ctype, capture_time=ctime, reject=reject,
                    size_bytes=size, content_sha256=digest))
    return dates, files, notes


# ----------------------------------------------------------------------------------------------------------
# Parsing one file (runs in a Spark task; pure Python apart from the schema objects)

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
}
_ECHO_DISPLAY = re.compile(
    r"^[ \t]*\d+[ \t]*:[ \t]*(?:DISPLAY|DIS)[ \t]+([A-Za-z]+)[ \t]*(?:\(([^)]*)\))?([^\n]*)$", re.M | re.I)
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
            if wanted != ("QMGR",) and (arg is None or arg.strip() != "*"):
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
    """A stable text key of the object a record describes: ``clwl.view._identity`` without source and line."""
    from clwl.view import _identity

    ident = _identity(record)
    if record.kind not in ("CLUSQMGR", "QCLUSTER", "QMGR", "QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "CHSTATUS",
                           "NAMELIST"):
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


_QUARANTINE = "silver.quarantine"
_FILE_TAG = "_file"


class _Out:
    """Rows and counts of one file while it is parsed."""

    def __init__(self, spec: LandingFile, run_id: str):
        self.spec = spec
        self.run_id = run_id
        self.run_date = date.fromisoformat(spec.run_date)
        self.format = _format_from_name(spec)
        self.rows: dict[str, list[tuple]] = {}
        self.read = self.accepted = self.quarantined = self.skipped = 0
        self.status = "ingested"
        self.reason: str | None = None

    def add(self, key: str, row: tuple) -> None:
        self.rows.setdefault(key, []).append(row)

    def problem(self, position: int, reason: str, raw: str | None, level: str = "record") -> None:
        s = self.spec
        seq = len(self.rows.get(_QUARANTINE, ()))
        self.add(_QUARANTINE, TABLES[_QUARANTINE].row(
            ingest_run_id=self.run_id, run_date=self.run_date, observing_qmgr=s.observing_qmgr,
            source_file=s.source_file, seq=seq, position=int(position or 0), format=self.format, level=level,
            reason=reason, raw=raw))

    def reject(self, reason: str) -> None:
        """The whole file to quarantine, as one row; whatever was read from it is dropped."""
        self.rows = {}
        self.read, self.accepted, self.quarantined, self.skipped = 1, 0, 1, 0
        self.status, self.reason = "rejected", reason
        self.problem(0, reason, _head(self.spec.path), level="file")

    def finish(self) -> tuple[dict, dict[str, list[tuple]]]:
        s = self.spec
        data_rows = sum(len(v) for k, v in self.rows.items() if k not in (_QUARANTINE, "bronze.capture_files"))
        quarantine_rows = len(self.rows.get(_QUARANTINE, ()))
        if (self.read != self.accepted + self.quarantined or quarantine_rows != self.quarantined
                or data_rows != self.accepted - self.skipped):
            raise ReconciliationError(
                f"{s.source_file}: read {self.read} != accepted {self.accepted} + quarantined {self.quarantined}, "
                f"or rows (data {data_rows}, quarantine {quarantine_rows}, skipped {self.skipped}) disagree")
        summary = {
            "source_file": s.source_file, "run_date": s.run_date, "observing_qmgr": s.observing_qmgr,
            "format": self.format, "status": self.status, "reason": self.reason, "records_read": self.read,
            "records_accepted": self.accepted, "records_quarantined": self.quarantined,
            "records_skipped": self.skipped, "rows": {k: len(v) for k, v in self.rows.items()},
        }
        return summary, self.rows


def _format_from_name(spec: LandingFile) -> str:
    ext = spec.source_file.rsplit(".", 1)[-1].lower() if "." in spec.source_file.rsplit("/", 1)[-1] else ""
    if spec.parser == "capture":
        return "rest" if ext in ("json", "jsonl") else "mqsc"
    if spec.parser == "xmitq":
        return ext if ext in ("amqsbcg", "dmpmqmsg") else "xmitq"
    if spec.parser == "puts":
        return ext
    if spec.parser == "amqsmon":
        return "amqsmon"
    return "unknown"


def _parse_capture(out: _Out) -> None:
    from clwl.parse.mqsc import read_text_file
    from clwl.view import parse_capture_file

    s = out.spec
    cap = parse_capture_file(s.path)
    out.format = cap.fmt
    qmgr = s.observing_qmgr
    names = [("banner", cap.banner_qmgr)] + [("QMNAME", r.get("QMNAME")) for r in cap.records if r.kind == "QMGR"]
    for where, name in names:
        if qmgr and name and name != qmgr:
            out.reject(f"capture is of queue manager {name} ({where}), but it is in the folder of {qmgr}")
            return
    text = read_text_file(s.path)[1] if cap.fmt == "mqsc" else None
    present = sorted({r.kind for r in cap.records})
    covered = covered_kinds(text, s.capture_type, present)
    t_objects = TABLES["bronze.mqsc_objects"]
    for seq, r in enumerate(cap.records):
        attrs = dict(r.attrs)
        out.add(t_objects.key, t_objects.row(
            ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=qmgr, capture_time=s.capture_time,
            source_file=s.source_file, seq=seq, position=int(r.line), format=cap.fmt, message_id=r.message_id,
            kind=r.kind, object_key=object_key(r), attrs=attrs, attrs_hash=attrs_hash(r.kind, attrs)))
    for p in cap.problems:
        out.problem(p.line, p.reason, p.raw)
    out.read = len(cap.records) + len(cap.problems)
    out.accepted, out.quarantined = len(cap.records), len(cap.problems)
    t_caps = TABLES["bronze.capture_files"]
    out.add(t_caps.key, t_caps.row(
        ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=qmgr, capture_time=s.capture_time,
        source_file=s.source_file, format=cap.fmt, capture_type=s.capture_type, kinds_covered=covered,
        kinds_present=present, complete=not cap.problems, banner_qmgr=cap.banner_qmgr,
        records=len(cap.records), problems=len(cap.problems)))


def _parse_puts(out: _Out) -> None:
    from clwl.parse.puts import parse_puts_file

    s = out.spec
    records, problems = parse_puts_file(s.path)
    t = TABLES["bronze.put_records"]
    fields = t.columns[t.columns.index("format") + 1:]
    head = (out.run_id, out.run_date, s.observing_qmgr, s.source_file)
    for r in records:
        out.add(t.key, head + (int(r.line), out.format) + tuple(getattr(r, f) for f in fields))
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    out.read, out.accepted, out.quarantined = len(records) + len(problems), len(records), len(problems)


def _parse_xmitq(out: _Out) -> None:
    from clwl.parse.xmitq import parse_xmitq_file

    s = out.spec
    records, problems = parse_xmitq_file(s.path)
    if out.format == "xmitq":  # a .txt browse: which tool printed it
        out.format = "amqsbcg" if "MQGET of message number" in _head(s.path) else "dmpmqmsg"
    t = TABLES["bronze.xmitq_messages"]
    for r in records:
        out.add(t.key, t.row(
            ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
            capture_time=s.capture_time, source_file=s.source_file, position=int(r.line), format=out.format,
            message_number=r.position, xmitq=r.queue, msg_id=r.msg_id, correl_id=r.correl_id,
            accounting_token=r.accounting_token, accounting_token_zero=r.accounting_token_zero,
            put_time=r.put_datetime, md_format=r.format, persistence=r.persistence, priority=r.priority,
            group_id=r.group_id, msg_seq_number=r.msg_seq_number, length=r.length, remote_q_name=r.remote_q_name,
            remote_qmgr_name=r.remote_qmgr_name, inner_accounting_token=r.inner_accounting_token,
            inner_put_time=r.inner_put_datetime))
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    out.read, out.accepted, out.quarantined = len(records) + len(problems), len(records), len(problems)


def _parse_amqsmon(out: _Out) -> None:
    from clwl.parse.amqsmon import parse_amqsmon_file

    s = out.spec
    records, problems, skipped = parse_amqsmon_file(s.path)
    t = TABLES["bronze.queue_accounting"]
    for r in records:
        out.add(t.key, t.row(
            ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
            source_file=s.source_file, position=int(r.line), format="amqsmon", monitoring_type=r.monitoring_type,
            qmgr=r.qmgr, interval_start=r.interval_start, interval_end=r.interval_end, queue=r.queue,
            queue_type=r.queue_type, put_count_nonpersistent=r.put_count_nonpersistent,
            put_count_persistent=r.put_count_persistent, put1_count_nonpersistent=r.put1_count_nonpersistent,
            put1_count_persistent=r.put1_count_persistent, put_fail_count=r.put_fail_count,
            put_bytes_nonpersistent=r.put_bytes_nonpersistent, put_bytes_persistent=r.put_bytes_persistent,
            application_name=r.application_name, connection_id=r.connection_id))
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    # MQI/channel records are recognised and left out by design: they count as accepted (and skipped).
    out.read = len(records) + len(problems) + skipped
    out.accepted, out.quarantined, out.skipped = len(records) + skipped, len(problems), skipped


_PARSERS = {"capture": _parse_capture, "puts": _parse_puts, "xmitq": _parse_xmitq, "amqsmon": _parse_amqsmon}


def parse_landing_file(spec: LandingFile, run_id: str) -> tuple[dict, dict[str, list[tuple]]]:
    """Parse one landing file: ``(summary, rows by table key)``. Never raises for bad input."""
    from clwl.parse.common import InputError

    out = _Out(spec, run_id)
    if spec.reject:
        out.reject(spec.reject)
    elif spec.parser == "unknown":
        out.reject(_unknown_reason(spec.source_file.rsplit("/", 1)[-1], _head(spec.path)))
    else:
        try:
            _PARSERS[spec.parser](out)
        except InputError as exc:
            out.reject(exc.reason)
        except (ValueError, TypeError, KeyError, IndexError, UnicodeError, OSError) as exc:
            # A parser bug on odd input must not lose the file: it is quarantined with the error.
            out.reject(f"parser failed: {type(exc).__name__}: {exc}")
    return out.finish()


def _parse_partition(specs: Iterator[LandingFile], run_id: str) -> Iterator[tuple[str, object]]:
    for spec in specs:
        summary, rows = parse_landing_file(spec, run_id)
        yield _FILE_TAG, summary
        for key, table_rows in rows.items():
            for row in table_rows:
                yield key, row


# ----------------------------------------------------------------------------------------------------------
# History (DataFrame transformations; pure functions of the bronze tables)

_ABSENT = "<absent>"


def _ordered(*partition: str):
    from pyspark.sql import Window

    return Window.partitionBy(*partition).orderBy("capture_time", "source_file")


def _grid(objects, captures, key_cols: list[str], kind_filter):
    """Every (object, capture covering its kind) from the object's first capture on, with the object's record
    in that capture (or nulls) and whether the capture was full (absence = gone)."""
    from pyspark.sql import functions as F

    cap_kinds = (
        captures.select("observing_qmgr", "capture_time", "source_file", "complete", "kinds_covered",
                        F.explode(F.array_union("kinds_covered", "kinds_present")).alias("kind"))
        .where(kind_filter(F.col("kind")))
        .select("observing_qmgr", "kind", "capture_time", "source_file",
                (F.col("complete") & F.array_contains("kinds_covered", F.col("kind"))).alias("full"))
    )
    group = ["observing_qmgr", "kind"] + [c for c in key_cols if c != "kind"]
    first = objects.groupBy(*group).agg(F.min(F.struct("capture_time", "source_file")).alias("_first"))
    grid = first.join(cap_kinds, ["observing_qmgr", "kind"]).where(
        F.struct("capture_time", "source_file") >= F.col("_first")).drop("_first")
    return grid.join(objects.drop("capture_time"), [*group, "source_file"], "left")


def _versions(grid, key_cols: list[str], state_col, absent_state):
    """Rows where the (carried-over) state changes, with valid_from / valid_to; absences removed."""
    from pyspark.sql import functions as F
    from pyspark.sql import Window

    w = _ordered("observing_qmgr", *key_cols)
    state = F.when(state_col.isNotNull(), state_col).when(F.col("full"), absent_state)
    g = grid.withColumn("_state", state)
    g = g.withColumn("_filled", F.last("_state", ignorenulls=True).over(
        w.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
    g = g.where(F.col("_filled").isNotNull())
    g = g.withColumn("_prev", F.lag("_filled").over(w))
    starts = g.where(F.col("_prev").isNull() | ~F.col("_prev").eqNullSafe(F.col("_filled")))
    starts = starts.withColumn("valid_from", F.col("capture_time")).withColumn(
        "valid_to", F.lead("capture_time").over(_ordered("observing_qmgr", *key_cols)))
    return starts.where(~F.col("_filled").eqNullSafe(absent_state))


def build_config_history(mqsc_objects, capture_files):
    """silver.config_history from bronze.mqsc_objects and bronze.capture_files (any set of observing QMs)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    not_config = ("CHSTATUS", "OTHER")
    objs = mqsc_objects.where(~F.col("kind").isin(*not_config))
    last = F.row_number().over(
        Window.partitionBy("observing_qmgr", "source_file", "kind", "object_key").orderBy(F.desc("seq")))
    objs = (objs.withColumn("_n", last).where("_n = 1")  # the same object twice in one capture: the last wins
            .select("observing_qmgr", "kind", "object_key", "source_file", "capture_time", "run_date", "attrs",
                    "attrs_hash"))
    grid = _grid(objs, capture_files, ["kind", "object_key"], lambda k: ~k.isin(*not_config))
    versions = _versions(grid, ["kind", "object_key"], F.col("attrs_hash"), F.lit(_ABSENT))
    t = TABLES["silver.config_history"]
    return versions.select(*t.columns)


def build_channel_status(mqsc_objects, capture_files):
    """silver.channel_status from bronze.mqsc_objects (CHSTATUS, current status) and bronze.capture_files."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def attr(name):
        v = F.trim(F.col("attrs").getItem(name))
        return F.when(v == "", None).otherwise(v)

    chs = (mqsc_objects.where((F.col("kind") == "CHSTATUS") & ~F.col("object_key").endswith("|SAVED"))
           .select("observing_qmgr", "source_file", "seq", attr("CHANNEL").alias("channel"),
                   F.upper(attr("CHLTYPE")).alias("chltype"), F.upper(attr("STATUS")).alias("status"),
                   attr("XMITQ").alias("xmitq"), F.upper(attr("SUBSTATE")).alias("substate"), "run_date",
                   "capture_time", F.lit("CHSTATUS").alias("kind")))
    last = F.row_number().over(
        Window.partitionBy("observing_qmgr", "source_file", "channel").orderBy(F.desc("seq")))
    chs = chs.withColumn("_n", last).where("_n = 1").drop("_n", "seq")
    chs = chs.withColumn("_st", F.struct(F.coalesce("status", F.lit("UNKNOWN")).alias("status"), "xmitq",
                                         "substate"))
    grid = _grid(chs, capture_files, ["channel"], lambda k: k == "CHSTATUS")
    inactive = F.struct(F.lit("INACTIVE").alias("status"), F.lit(None).cast("string").alias("xmitq"),
                        F.lit(None).cast("string").alias("substate"))
    w = _ordered("observing_qmgr", "channel").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    grid = grid.withColumn("chltype", F.last("chltype", ignorenulls=True).over(w))
    versions = _versions(grid, ["channel"], F.col("_st"), inactive)
    # run_date of an INACTIVE row: the capture's own date (from its path), not the record's.
    run_date = F.to_date(F.substring_index("source_file", "/", 1))
    t = TABLES["silver.channel_status"]
    return versions.select(
        "observing_qmgr", "channel", "chltype", F.col("_filled.status").alias("status"),
        F.col("_filled.xmitq").alias("xmitq"), F.col("_filled.substate").alias("substate"), "valid_from",
        "valid_to", "source_file", run_date.alias("run_date")).select(*t.columns)


# ----------------------------------------------------------------------------------------------------------
# The run


@dataclass(frozen=True)
class FileResult:
    source_file: str
    run_date: str
    observing_qmgr: str | None
    format: str
    status: str  # ingested | rejected | unchanged | removed
    records_read: int
    records_accepted: int
    records_quarantined: int
    records_skipped: int = 0
    reason: str | None = None


@dataclass
class IngestSummary:
    run_id: str
    run_dates: list[str]
    landing: str
    lake: str
    files: list[FileResult] = field(default_factory=list)
    rows_written: dict[str, int] = field(default_factory=dict)  # table key -> rows written by this run
    seconds: float = 0.0

    @property
    def records_read(self) -> int:
        return sum(f.records_read for f in self.files)

    @property
    def records_accepted(self) -> int:
        return sum(f.records_accepted for f in self.files)

    @property
    def records_quarantined(self) -> int:
        return sum(f.records_quarantined for f in self.files)

    @property
    def files_rejected(self) -> int:
        return sum(1 for f in self.files if f.status == "rejected")

    def format_table(self) -> str:
        """Per file: read / accepted / quarantined, status and reason; then the totals."""
        files = [f for f in self.files if f.status != "removed"]
        removed = [f for f in self.files if f.status == "removed"]
        width = max([len("file")] + [len(f.source_file) for f in self.files])
        head = f"{'file':<{width}}  {'format':<8}  {'status':<9}  {'read':>7}  {'accepted':>8}  {'quarantined':>11}"
        lines = [head, "-" * len(head)]
        for f in files:
            line = (f"{f.source_file:<{width}}  {f.format:<8}  {f.status:<9}  {f.records_read:>7}  "
                    f"{f.records_accepted:>8}  {f.records_quarantined:>11}")
            if f.reason:
                reason = f.reason if len(f.reason) <= 100 else f.reason[:97] + "..."
                line += f"  {reason}"
            lines.append(line)
        for f in removed:
            lines.append(f"{f.source_file:<{width}}  {f.format:<8}  removed    (no longer in the landing folder)")
        lines.append("-" * len(head))
        lines.append(f"{'total (' + str(len(files)) + ' files)':<{width}}  {'':<8}  {'':<9}  {self.records_read:>7}  "
                     f"{self.records_accepted:>8}  {self.records_quarantined:>11}")
        lines.append(f"run {self.run_id}: {self.files_rejected} file(s) rejected, lake {self.lake}, "
                     f"{self.seconds:.1f}s")
        return "\n".join(lines)


_CODE_MODULES = ("clwl.parse.common", "clwl.parse.mqsc", "clwl.parse.rest", "clwl.parse.xmitq",
                 "clwl.parse.amqsmon", "clwl.parse.puts", "clwl.view", "spark.tables", "spark.ingest")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Fingerprint of the code that turns files into rows: a file is read again when it changes."""
    import importlib

    h = hashlib.sha256()
    for name in _CODE_MODULES:
        module = importlib.import_module(name)
        h.update(name.encode())
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()[:16]


def new_run_id(now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return f"ingest-{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


def _sql_str(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(_sql_str(v) for v in sorted(set(values)))})"


def _ship_code(sc, master: str) -> None:
    """On a cluster, send the clwl and spark packages to the executors (local mode imports them in place)."""
    if master.startswith("local") or getattr(sc, "_clwl_code_shipped", False):
        return
    import clwl

    roots = [Path(clwl.__file__).parent, Path(__file__).parent]
    fd, zpath = tempfile.mkstemp(prefix="clwl-code-", suffix=".zip")
    os.close(fd)
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
        for root in roots:
            for p in root.rglob("*.py"):
                z.write(p, p.relative_to(root.parent).as_posix())
    sc.addPyFile(zpath)
    sc._clwl_code_shipped = True


def _previous(spark, config: PipelineConfig, dates: list[str]) -> dict[str, dict]:
    """Latest run-log row per source_file of these dates."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not dates:
        return {}
    log = read(spark, config, "silver.ingest_files").where(F.col("run_date").isin([date.fromisoformat(d) for d in dates]))
    w = Window.partitionBy("source_file").orderBy(F.desc("ingested_at"), F.desc("ingest_run_id"))
    latest = log.withColumn("_n", F.row_number().over(w)).where("_n = 1").drop("_n")
    return {r["source_file"]: r.asDict() for r in latest.collect()}


def _write(spark, config, key: str, df, predicate: str) -> int:
    """Replace the rows matching ``predicate`` with ``df``; rows written."""
    from delta.tables import DeltaTable

    t = TABLES[key]
    location = path(config, key)
    writer = df.select(*t.columns).write.format("delta").mode("overwrite").option("replaceWhere", predicate)
    if t.partition_by:
        writer = writer.partitionBy(*t.partition_by)
    writer.save(location)
    metrics = DeltaTable.forPath(spark, location).history(1).collect()[0]["operationMetrics"] or {}
    return int(metrics.get("numOutputRows", 0))


def ingest(config: PipelineConfig, run_dates: list[str] | None = None, spark=None,
           progress: Callable[[str], object] = print, force: bool = False) -> IngestSummary:
    """Ingest the landing folder's run dates (default: all) into the lake; see the module documentation.

    :class:`LandingError` when the landing folder or a requested date folder does not exist. Bad files and
    records never raise: they go to ``silver.quarantine``.
    """
    started = time.monotonic()
    dates, files, notes = discover_landing(config.landing, run_dates)
    run_id = new_run_id()
    ingested_at = datetime.now(timezone.utc)
    summary = IngestSummary(run_id=run_id, run_dates=dates, landing=str(config.landing), lake=str(config.lake))
    progress(f"ingest {run_id}: {len(files)} files in {len(dates)} run date(s) from {config.landing}")
    for note in notes:
        progress(f"  {note}")

    if spark is None:
        from spark.session import get_spark

        spark = get_spark(config.master, app_name="clwl-ingest")
    from pyspark import StorageLevel

    ensure_tables(spark, config)
    version = code_version()
    previous = {} if not files and not dates else _previous(spark, config, dates)

    # -- plan: which files to read, which are unchanged, which are gone ---------------------------------------
    todo: list[LandingFile] = []
    unchanged: list[tuple[LandingFile, dict]] = []
    seen = {f.source_file for f in files}
    for f in files:
        prev = previous.get(f.source_file)
        if (not force and prev is not None and prev["status"] != "removed"
                and prev["content_sha256"] == f.content_sha256 and prev["code_version"] == version):
            unchanged.append((f, prev))
        else:
            todo.append(f)
    removed = [prev for name, prev in sorted(previous.items()) if name not in seen and prev["status"] != "removed"]
    for d in dates:
        n_new = sum(1 for f in todo if f.run_date == d)
        n_same = sum(1 for f, _ in unchanged if f.run_date == d)
        n_gone = sum(1 for p in removed if str(p["run_date"]) == d)
        qms = {f.observing_qmgr for f in files if f.run_date == d and f.observing_qmgr}
        progress(f"discover {d}: {n_new + n_same} files from {len(qms)} queue managers: {n_new} new or changed, "
                 f"{n_same} unchanged" + (f", {n_gone} removed" if n_gone else ""))

    # -- parse, one task per file ---------------------------------------------------------------------------------
    results: list[dict] = []
    rdd = None
    if todo:
        t0 = time.monotonic()
        sc = spark.sparkContext
        _ship_code(sc, sc.master)
        rdd = (sc.parallelize(todo, len(todo))
               .mapPartitions(functools.partial(_parse_partition, run_id=run_id))
               .persist(StorageLevel.MEMORY_AND_DISK))
        results = rdd.filter(lambda t: t[0] == _FILE_TAG).map(lambda t: t[1]).collect()
        for r in results:  # checked in the task too; a mismatch here means rows were lost on the way
            if r["records_read"] != r["records_accepted"] + r["records_quarantined"]:
                raise ReconciliationError(f"{r['source_file']}: read {r['records_read']} != accepted "
                                          f"{r['records_accepted']} + quarantined {r['records_quarantined']}")
        for d in dates:
            rs = [r for r in results if r["run_date"] == d]
            if rs:
                progress(f"parse {d}: {len(rs)} files, {sum(r['records_read'] for r in rs)} records read, "
                         f"{sum(r['records_accepted'] for r in rs)} accepted, "
                         f"{sum(r['records_quarantined'] for r in rs)} quarantined, "
                         f"{sum(1 for r in rs if r['status'] == 'rejected')} files rejected "
                         f"({time.monotonic() - t0:.1f}s)")

    try:
        written = _write_tables(spark, config, rdd, todo, removed, results, progress)
    finally:
        if rdd is not None:
            rdd.unpersist()

    # -- the run log, last ------------------------------------------------------------------------------------
    by_name = {r["source_file"]: r for r in results}
    log_rows = []
    t_log = TABLES["silver.ingest_files"]
    for f in todo:
        r = by_name[f.source_file]
        log_rows.append(t_log.row(
            ingest_run_id=run_id, ingested_at=ingested_at, run_date=date.fromisoformat(f.run_date),
            observing_qmgr=f.observing_qmgr, source_file=f.source_file, format=r["format"],
            capture_time=f.capture_time, size_bytes=f.size_bytes, content_sha256=f.content_sha256,
            code_version=version, status=r["status"], reason=r["reason"], records_read=r["records_read"],
            records_accepted=r["records_accepted"], records_quarantined=r["records_quarantined"],
            records_skipped=r["records_skipped"]))
        summary.files.append(FileResult(
            f.source_file, f.run_date, f.observing_qmgr, r["format"], r["status"], r["records_read"],
            r["records_accepted"], r["records_quarantined"], r["records_skipped"], r["reason"]))
    for f, prev in unchanged:
        log_rows.append(t_log.row(
            ingest_run_id=run_id, ingested_at=ingested_at, run_date=date.fromisoformat(f.run_date),
            observing_qmgr=f.observing_qmgr, source_file=f.source_file, format=prev["format"],
            capture_time=f.capture_time, size_bytes=f.size_bytes, content_sha256=f.content_sha256,
            code_version=version, status="unchanged", reason=prev["reason"], records_read=prev["records_read"],
            records_accepted=prev["records_accepted"], records_quarantined=prev["records_quarantined"],
            records_skipped=prev["records_skipped"]))
        summary.files.append(FileResult(
            f.source_file, f.run_date, f.observing_qmgr, prev["format"], "unchanged", prev["records_read"],
            prev["records_accepted"], prev["records_quarantined"], prev["records_skipped"], prev["reason"]))
    for prev in removed:
        log_rows.append(t_log.row(
            ingest_run_id=run_id, ingested_at=ingested_at, run_date=prev["run_date"],
            observing_qmgr=prev["observing_qmgr"], source_file=prev["source_file"], format=prev["format"],
            capture_time=None, size_bytes=None, content_sha256=None, code_version=version, status="removed",
            reason=None, records_read=0, records_accepted=0, records_quarantined=0, records_skipped=0))
        summary.files.append(FileResult(prev["source_file"], str(prev["run_date"]), prev["observing_qmgr"],
                                        prev["format"], "removed", 0, 0, 0))
    summary.files.sort(key=lambda f: f.source_file)
    if log_rows:
        spark.createDataFrame(log_rows, t_log.schema).write.format("delta").mode("append").save(
            path(config, t_log))
        written["silver.ingest_files"] = len(log_rows)
    if summary.records_read != summary.records_accepted + summary.records_quarantined:
        raise ReconciliationError(f"run {run_id}: read {summary.records_read} != accepted "
                                  f"{summary.records_accepted} + quarantined {summary.records_quarantined}")
    summary.rows_written = written
    summary.seconds = time.monotonic() - started
    progress(f"done {run_id}: {len(summary.files)} files, {summary.records_read} records read, "
             f"{summary.records_accepted} accepted, {summary.records_quarantined} quarantined "
             f"({summary.seconds:.1f}s)")
    return summary


def _write_tables(spark, config, rdd, todo: list[LandingFile], removed: list[dict], results: list[dict],
                  progress) -> dict[str, int]:
    from pyspark.sql import functions as F

    written: dict[str, int] = {}
    touched: list[tuple[str, str, str]] = [(f.source_file, f.run_date, f.parser) for f in todo]
    for prev in removed:
        name = prev["source_file"].rsplit("/", 1)[-1]
        touched.append((prev["source_file"], str(prev["run_date"]), classify_name(name, str(prev["run_date"]))[0]))
    if not touched:
        progress("write: nothing changed, no table rewritten")
        return written

    def frame(key: str):
        t = TABLES[key]
        if rdd is None:
            return spark.createDataFrame([], t.schema)
        return spark.createDataFrame(rdd.filter(lambda r, k=key: r[0] == k).map(lambda r: r[1]), t.schema)

    def predicate(key: str, parsers: Iterable[str] | None) -> str | None:
        mine = [(s, d) for s, d, p in touched if parsers is None or p in parsers]
        if not mine:
            return None
        where = _in("source_file", [s for s, _ in mine])
        if "run_date" in TABLES[key].partition_by:
            where = _in("run_date", [d for _, d in mine]) + " AND " + where
        return where

    def feeders(key: str) -> list[str]:
        return [p for p, keys in _FEEDS.items() if key in keys]

    bronze = {}
    for key in ("bronze.capture_files", "bronze.mqsc_objects", "bronze.put_records", "bronze.xmitq_messages",
                "bronze.queue_accounting"):
        where = predicate(key, feeders(key))
        if where is None:
            continue
        bronze[key] = frame(key)
        written[key] = _write(spark, config, key, bronze[key], where)

    derived = {
        "silver.message_events": ("bronze.put_records", lambda df: df),
        "silver.xmitq_contents": ("bronze.xmitq_messages", lambda df: df),
        "silver.queue_accounting": ("bronze.queue_accounting", _silver_accounting),
    }
    for key, (source, transform) in derived.items():
        where = predicate(key, feeders(key))
        if where is None:
            continue
        written[key] = _write(spark, config, key, transform(bronze[source]), where)
    written["silver.quarantine"] = _write(spark, config, "silver.quarantine", frame("silver.quarantine"),
                                          predicate("silver.quarantine", None))
    progress("write bronze/silver: " + ", ".join(f"{k} {n}" for k, n in written.items()) + " rows")

    # -- history, rebuilt per observing queue manager from all of its captures -------------------------------
    qmgrs = sorted({f.observing_qmgr for f in todo if f.parser == "capture" and f.observing_qmgr}
                   | {p["observing_qmgr"] for p in removed
                      if p["observing_qmgr"] and p["source_file"].rsplit("/", 1)[-1].lower().startswith(
                          ("config_", "chstatus_"))})
    if qmgrs:
        objs = read(spark, config, "bronze.mqsc_objects").where(F.col("observing_qmgr").isin(qmgrs))
        caps = read(spark, config, "bronze.capture_files").where(F.col("observing_qmgr").isin(qmgrs))
        where = _in("observing_qmgr", qmgrs)
        written["silver.config_history"] = _write(spark, config, "silver.config_history",
                                                  build_config_history(objs, caps), where)
        written["silver.channel_status"] = _write(spark, config, "silver.channel_status",
                                                  build_channel_status(objs, caps), where)
        progress(f"history {len(qmgrs)} queue managers ({', '.join(qmgrs)}): config_history "
                 f"{written['silver.config_history']} versions, channel_status "
                 f"{written['silver.channel_status']} intervals")
    return written


def _silver_accounting(df):
    from pyspark.sql import functions as F

    counts = ["put_count_nonpersistent", "put_count_persistent", "put1_count_nonpersistent", "put1_count_persistent"]
    total = F.when(F.coalesce(*[F.col(c) for c in counts]).isNull(), F.lit(None).cast("long")).otherwise(
        sum((F.coalesce(F.col(c), F.lit(0)) for c in counts[1:]), F.coalesce(F.col(counts[0]), F.lit(0))))
    return df.select(
        "run_date", "observing_qmgr", "qmgr", "monitoring_type",
        F.col("interval_start").cast("timestamp").alias("interval_start"),  # session time zone is UTC
        F.col("interval_end").cast("timestamp").alias("interval_end"),
        total.alias("put_count"), *[c for c in TABLES["silver.queue_accounting"].columns
                                    if c in df.columns and c not in ("run_date", "observing_qmgr", "qmgr",
                                                                     "monitoring_type", "interval_start",
                                                                     "interval_end")])
