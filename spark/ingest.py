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

``HHMMSS`` is the capture time (UTC) on the run date. Files whose name starts with ``.`` are ignored. Links
leaving the landing folder, folder links, pipes, and folders or files of the landing folder itself that are not
run date folders are skipped without being opened, printed and recorded (:func:`discover_landing`). A file
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
2. parse the new or changed files in Spark tasks (``parallelize(tasks, len(tasks)).mapPartitions``, small files
   packed together up to :data:`TASK_BYTES` a task, at least one task per core), calling the ``clwl``
   parsers in the executors; each task writes the rows of every table it fed as a Parquet file to the run's
   scratch folder ``<lake>/_ingest/<run_id>/`` (Arrow columns, no per-row crossing into the JVM) and returns
   the files' summaries; the tables are then written side by side from those files, and the folder removed;
3. replace, in every table the files feed, the rows of exactly those files (Delta ``replaceWhere`` on
   ``run_date`` and ``source_file``): a corrected file replaces only its own rows, and ingesting the same dates
   again changes nothing (nothing is rewritten); ``silver.message_events`` is not written from the files but in
   step 4;
4. rebuild ``silver.message_events`` of every (run date, sending queue manager) that a new, changed or removed
   put file has rows of (before or after the change), from all bronze put rows of that sender and date, with
   ``replaceWhere`` on those partitions (see *Message events* below); and, side by side, rebuild
   ``silver.config_history`` and ``silver.channel_status`` of every observing queue manager whose
   captures changed, from all of its bronze captures ordered by capture time: Spark groups bronze by
   ``observing_qmgr`` (``cogroup(...).applyInArrow``) and :func:`qmgr_history` replays each queue manager's
   captures; written with ``replaceWhere`` on ``observing_qmgr``. Out-of-order arrival gives the same history
   as in-order arrival;
5. append the run's per-file counts to ``silver.ingest_files`` (last: a run that dies before this is redone).

Message events (:func:`_message_jobs`): bronze keeps every put record a parser accepted (bronze is raw);
``silver.message_events`` -- what the replay routes -- takes each message once, on its own run date. A bronze put
row is *held back* from it, as one ``silver.quarantine`` row with ``level = 'message'`` (:data:`MESSAGE_LEVEL`)
whose ``raw`` is the record as a put CSV row, when:

* its put time (UTC) is not on its folder's run date. Such a row is not given to its own date: that date may
  have no folder, no captures or no run at all (the row would never be replayed, or be replayed without the
  replay of its own day being run again), and the run date's configuration must not route it either. The reason
  names both dates and the folder to file it in: ``put time 2026-11-21T00:00:03.000Z is not in run date
  2026-11-20 (file 2026-11-20/QM1/puts.csv line 5): not replayed, so that it is not routed with 2026-11-20's
  configuration; put the row in a put file of the 2026-11-21/QM1/ folder``. A put file that spans midnight is
  therefore split by its administrator: its rows of the next day (their ``raw`` under the CSV header) go to a
  file of the next day's folder, where they are replayed with that day's configuration (the copies in the first
  file stay quarantined). This matches the replay, which reads one run date's partition of
  ``silver.message_events`` (``spark.replay.sender_inputs``) and routes with the configuration timeline of that
  day (``spark.replay.day_bounds``);
* its msg_id was put before by the same sending queue manager on the same run date, in another put file (a
  re-sent or late file; repeats within one file are found by the parser). The copy kept is the one in the file
  ingested first (the earliest run-log row since the file last appeared in the landing folder), then, among
  files first ingested in the same run, the first by name, then the first by position; each later copy is held
  back with a reason naming both files and lines, and the columns it differs in, if any. So a file that was
  already ingested keeps its rows when another file repeats them. (A lake rebuilt from the landing folder sees
  every file first in one run, so it keeps the copy of the first file by name: the same messages are replayed,
  only the quarantined copies may be others'.)

Held-back rows count as quarantined records of their file in ``silver.ingest_files`` (records read = accepted +
quarantined still holds per file). The decision is remade whenever a put file of that sender and date is new,
changed or removed, also for files that did not change themselves (their run-log row of that run says so).

History semantics (both history tables): for one observing queue manager, the captures that cover a kind
(``bronze.capture_files``) are ordered by (capture time, file). In each, an object is present (its attribute
hash), absent (the capture asked for the whole kind with ``DISPLAY <kind>(*)`` and had no quarantined
record), or unknown (anything else: its state carries over). A version opens where the state changes
(``valid_from`` = that capture time) and is closed by the next change or absence (``valid_to``); an unchanged
capture changes nothing. A channel is followed from the first capture that shows it (a CHSTATUS record, or a
DISPLAY CLUSQMGR record naming it); a full, clean CHSTATUS capture without a current record of it says
``INACTIVE`` (mq-domain-notes 2a: inactive channels have no CHSTATUS record). ``attrs_hash`` leaves out the
attributes in :data:`VOLATILE_ATTRIBUTES` (queue depth and handle counts), so they make no versions; the
stored ``attrs`` are the opening capture's. CLUSQMGR's STATUS stays in the hash: it is the channel state
``clwl route`` falls back to when there is no CHSTATUS record.
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
    "build_histories",
    "classify_name",
    "code_version",
    "discover_landing",
    "ingest",
    "parse_landing_file",
    "plan_tasks",
    "qmgr_history",
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
    # True: an item of the landing that is not read at all (a link leaving the landing folder, a folder link, a
    # folder that is not a run date, ...): its quarantine row has no raw text, ``path`` is empty, and
    # ``content_sha256`` is a digest of its name and reason (not of any content), so that it is "unchanged"
    # while it stays as it is.
    skipped: bool = False


def _skip(source_file: str, run_date: str, qmgr: str | None, reason: str) -> LandingFile:
    """A landing item recorded (one quarantine row, one run-log row) but never opened."""
    digest = hashlib.sha256(f"skipped\0{source_file}\0{reason}".encode()).hexdigest()
    return LandingFile(path="", source_file=source_file, run_date=run_date, observing_qmgr=qmgr, parser="unknown",
                       capture_type=None, capture_time=None, reject=f"skipped, not read: {reason}", size_bytes=0,
                       content_sha256=digest, skipped=True)


def _link_reason(p: Path, real_root: Path, folder: bool) -> str:
    """Why a symbolic link is not followed (its target as written in the link, never its content)."""
    try:
        shown = os.readlink(p)
    except OSError:
        shown = "?"
    target = Path(os.path.realpath(p))
    if not target.is_relative_to(real_root):
        return (f"symbolic link to a {'folder' if folder else 'file'} outside the landing folder (-> {shown}); "
                "links that leave the landing folder are not followed")
    if folder:
        return (f"symbolic link to a folder (-> {shown}); folder links are not followed (their files would be read "
                "a second time, under another run date or queue manager)")
    return f"symbolic link (-> {shown}) to no regular file in the landing folder (broken, a loop, or not a file)"


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
    no folder. Notes: one line per item left out (``skipped <item>: <reason>``), for the progress output.

    What is left out, never opened, and recorded as a *skipped* entry of ``files`` (``skipped=True``: one
    ``silver.quarantine`` row, ``level = 'file'``, no raw text, and one ``silver.ingest_files`` row, status
    ``rejected``, both with the reason ``skipped, not read: ...``):

    * a symbolic link to a file that resolves outside the landing folder (or to nothing, or to no regular
      file). A link to a file *inside* the landing folder is followed: the file it resolves to is read (and its
      content hashed), under the link's own name. The landing folder itself may be a link;
    * every symbolic link to a folder, inside the landing folder or not (a queue manager folder, a run date
      folder, a nested folder): its files would be read a second time under another date or queue manager,
      or come from outside;
    * a named pipe, socket or device file (opening a pipe would wait for ever);
    * in the landing folder itself: a folder whose name is not a valid ``YYYY-MM-DD`` date (``notadate/``,
      ``2026-13-45/``), a file, a link. These have no run date of their own: each is recorded once, under the
      latest run date of this discovery (a later run moves it to its own latest date), and only printed when
      there is no run date at all.

    Names starting with ``.`` (files and folders, at any level) are ignored without a note and never opened:
    editors' swap and backup files (``.config_060000.mqsc.swp``), transfer tools' partial files (rsync's
    ``.puts.csv.XXXXXX``), ``.DS_Store``. Files that are read but in no ``<date>/<QM>/`` place (directly in
    the date folder, in a nested folder) are not skipped: they are rejected as a whole as before, with the
    first 4 KiB of their content in ``raw``.
    """
    root = Path(landing)
    if not root.is_dir():
        raise LandingError(f"landing folder {root} does not exist" if not root.exists()
                           else f"landing {root} is not a folder")
    real_root = root.resolve()
    notes: list[str] = []
    if run_dates is None:
        dates = []
    else:
        dates = sorted(set(run_dates))
        for d in dates:
            if not _valid_date(d):
                raise LandingError(f"bad run date {d!r}: expected YYYY-MM-DD")
            if not (root / d).is_dir():
                raise LandingError(f"no folder for run date {d} in {root}")
    # The landing folder's own entries: run date folders, and everything else (skipped), in any case.
    top: list[tuple[str, str]] = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_symlink():
            if name not in dates:  # a requested run date that is a link: recorded under that date below
                folder = entry.is_dir()
                inside = Path(os.path.realpath(entry)).is_relative_to(real_root)
                top.append((name + "/" if folder else name, _link_reason(entry, real_root, folder)
                            if folder or not inside or not entry.is_file() else
                            f"a symbolic link (-> {os.readlink(entry)}) in the landing folder itself: expected "
                            "<YYYY-MM-DD>/<QM>/<file>"))
        elif entry.is_dir():
            if _valid_date(name):
                if run_dates is None:
                    dates.append(name)
            elif _DATE.match(name):
                top.append((name + "/", f"not a run date folder: {name} is not a valid date"))
            else:
                top.append((name + "/", "not a run date folder: the name is not a YYYY-MM-DD date"))
        elif entry.is_file():
            top.append((name, "a file in the landing folder itself: expected <YYYY-MM-DD>/<QM>/<file>"))
        else:
            top.append((name, "not a regular file or folder (a named pipe, socket or device)"))
    files: list[LandingFile] = []
    where = dates[-1] if dates else None
    for name, reason in top:
        if where is not None:
            files.append(_skip(name, where, None, reason))
        notes.append(f"skipped {name}: {reason}" + (f" (recorded under run date {where})" if where else
                                                    " (not recorded: no run date in this run)"))

    def skip(source_file: str, d: str, qmgr: str | None, reason: str) -> None:
        files.append(_skip(source_file, d, qmgr, reason))
        notes.append(f"skipped {source_file}: {reason}")

    for d in dates:
        base = root / d
        if base.is_symlink():
            skip(d + "/", d, None, "the run date folder is a " + _link_reason(base, real_root, True))
            continue

        def unlistable(err: OSError, d: str = d, base: Path = base) -> None:
            p = Path(err.filename)
            parts = p.relative_to(base).parts if p.is_relative_to(base) else ()
            skip(p.relative_to(root).as_posix() + "/", d, parts[0] if parts else None,
                 f"the folder cannot be listed: {err.strerror or err}")

        # Folder links are listed, never walked into; a folder that cannot be listed is recorded, not left out.
        for dirpath, dirnames, filenames in os.walk(base, onerror=unlistable):
            here = Path(dirpath)
            keep = []
            for name in sorted(dirnames):
                if name.startswith("."):
                    continue
                p = here / name
                if p.is_symlink():
                    parts = p.relative_to(base).parts
                    skip(p.relative_to(root).as_posix() + "/", d, parts[0], _link_reason(p, real_root, True))
                else:
                    keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                p = here / name
                parts = p.relative_to(base).parts
                qmgr = parts[0] if len(parts) > 1 else None
                source_file = p.relative_to(root).as_posix()
                read_from = p
                if p.is_symlink():
                    target = Path(os.path.realpath(p))
                    if not (target.is_relative_to(real_root) and target.is_file()):
                        skip(source_file, d, qmgr, _link_reason(p, real_root, False))
                        continue
                    read_from = target  # the parse task opens the target checked here, not the link again
                elif not p.is_file():
                    skip(source_file, d, qmgr, "not a regular file (a named pipe, socket or device)")
                    continue
                parser, ctype, ctime, reject = classify_name(name, d)
                if len(parts) == 1:
                    reject = f"not in a queue manager folder: expected {d}/<QM>/{name}"
                elif len(parts) > 2:
                    reject = f"in a nested folder: expected {d}/<QM>/<file>, found {'/'.join(parts)}"
                try:
                    size, digest = _sha256(read_from)
                except OSError as exc:
                    skip(source_file, d, qmgr, f"the file cannot be read: {exc.strerror or exc}")
                    continue
                files.append(LandingFile(
                    path=str(read_from.absolute()), source_file=source_file, run_date=d,
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


class _Out:
    """Rows and counts of one file while it is parsed."""

    def __init__(self, spec: LandingFile, run_id: str,
                 spill: Callable[[str, list[tuple]], str] | None = None):
        self.spec = spec
        self.run_id = run_id
        self.spill = spill  # writes rows out as the file is parsed; returns the file written
        self.spilled: dict[str, int] = {}
        self.spilled_files: list[str] = []
        self.run_date = date.fromisoformat(spec.run_date)
        self.format = _format_from_name(spec)
        self.rows: dict[str, list[tuple]] = {}
        self.read = self.accepted = self.quarantined = self.skipped = 0
        self.status = "ingested"
        self.reason: str | None = None

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
        seq = len(self.rows.get(_QUARANTINE, ()))
        position = int(position or 0)
        # The quarantine row must be storable whatever the record held: a lone surrogate is written as its
        # escape, a position beyond the column as 0.
        self.add(_QUARANTINE, TABLES[_QUARANTINE].row(
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
            Path(written).unlink(missing_ok=True)
        self.spilled, self.spilled_files = {}, []
        self.read, self.accepted, self.quarantined, self.skipped = 1, 0, 1, 0
        self.status, self.reason = "rejected", reason
        self.problem(0, reason, None if self.spec.skipped else _head(self.spec.path), level="file")

    def finish(self) -> tuple[dict, dict[str, list[tuple]]]:
        s = self.spec
        counts = {k: len(v) + self.spilled.get(k, 0) for k, v in self.rows.items()}
        counts.update((k, n) for k, n in self.spilled.items() if k not in counts)
        data_rows = sum(n for k, n in counts.items() if k not in (_QUARANTINE, "bronze.capture_files"))
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
            "records_skipped": self.skipped, "rows": counts,
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


@functools.lru_cache(maxsize=None)
def _column_checks(key: str) -> tuple[tuple[int, str, str, int, int], ...]:
    """(index, column, what, lo, hi) of the columns of a table whose values Arrow may refuse: integers beyond the
    column's range, text with a lone surrogate (in strings, string maps and string arrays)."""
    from pyspark.sql.types import ArrayType, IntegerType, LongType, MapType, StringType

    from clwl.parse.common import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

    checks = []
    for index, f in enumerate(TABLES[key].schema.fields):
        t = f.dataType
        if isinstance(t, IntegerType):
            checks.append((index, f.name, "int", INT32_MIN, INT32_MAX))
        elif isinstance(t, LongType):
            checks.append((index, f.name, "int", INT64_MIN, INT64_MAX))
        elif isinstance(t, (StringType, MapType, ArrayType)):
            checks.append((index, f.name, "text", 0, 0))
    return tuple(checks)


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
    from clwl.parse.common import escape_surrogates, has_surrogate

    for index, column, what, lo, hi in _column_checks(key):
        value = row[index]
        if value is None:
            continue
        if what == "int":
            if not lo <= value <= hi:
                return f"{column} is out of range for its column ({lo}..{hi})"
        elif any(has_surrogate(text) for text in _texts(value)):
            bad = next(text for text in _texts(value) if has_surrogate(text))
            return f"lone surrogate in {column}: {escape_surrogates(bad)[:60]!r} is not valid Unicode"
    return None


def _row_raw(key: str, row: tuple) -> str:
    from clwl.parse.common import escape_surrogates

    skip = {"ingest_run_id", "run_date", "observing_qmgr", "source_file", "capture_time"}
    shown = {c: v for c, v in zip(TABLES[key].columns, row) if c not in skip}
    return escape_surrogates(json.dumps(shown, default=str, ensure_ascii=False))


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
    if out.format == "xmitq":  # a .txt browse: which tool printed it
        out.format = "amqsbcg" if "MQGET of message number" in _head(s.path) else "dmpmqmsg"
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
    from clwl.parse.amqsmon import parse_amqsmon_file
    from clwl.parse.common import ParseProblem

    s = out.spec
    records, problems, skipped = parse_amqsmon_file(s.path)
    t = TABLES["bronze.queue_accounting"]
    refused = 0
    for r in records:
        row = t.row(
            ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
            source_file=s.source_file, position=int(r.line), format="amqsmon", monitoring_type=r.monitoring_type,
            qmgr=r.qmgr, interval_start=r.interval_start, interval_end=r.interval_end, queue=r.queue,
            queue_type=r.queue_type, put_count_nonpersistent=r.put_count_nonpersistent,
            put_count_persistent=r.put_count_persistent, put1_count_nonpersistent=r.put1_count_nonpersistent,
            put1_count_persistent=r.put1_count_persistent, put_fail_count=r.put_fail_count,
            put_bytes_nonpersistent=r.put_bytes_nonpersistent, put_bytes_persistent=r.put_bytes_persistent,
            application_name=r.application_name, connection_id=r.connection_id)
        reason = _row_problem(t.key, row)
        if reason is None:
            out.add(t.key, row)
        else:  # a value Arrow would refuse costs its queue row only
            refused += 1
            problems.append(ParseProblem(s.path, r.line, reason, _row_raw(t.key, row)))
    for p in problems:
        out.problem(p.line, p.reason, p.raw)
    # MQI/channel records are recognised and left out by design: they count as accepted (and skipped).
    out.read = len(records) + len(problems) + skipped - refused
    out.accepted, out.quarantined, out.skipped = len(records) - refused + skipped, len(problems), skipped


_PARSERS = {"capture": _parse_capture, "puts": _parse_puts, "xmitq": _parse_xmitq, "amqsmon": _parse_amqsmon}


#: Lines of a CSV puts file parsed between two writes of its rows, when the parse task writes as it goes.
PUTS_CHUNK_ROWS = 250_000


def parse_landing_file(spec: LandingFile, run_id: str, spill: Callable[[str, list[tuple]], str] | None = None
                       ) -> tuple[dict, dict[str, list[tuple]]]:
    """Parse one landing file: ``(summary, rows by table key)``. Never raises for bad input.

    spill: ``spill(table key, rows) -> file written``, for rows written out while a large file is parsed;
    they are counted in the summary's rows but not returned (and removed again if the file is rejected)."""
    from clwl.parse.common import InputError

    out = _Out(spec, run_id, spill)
    if spec.reject:
        out.reject(spec.reject)
    elif spec.parser == "unknown":
        out.reject(_unknown_reason(spec.source_file.rsplit("/", 1)[-1], _head(spec.path)))
    else:
        try:
            _PARSERS[spec.parser](out)
        except InputError as exc:
            out.reject(exc.reason)
        except Exception as exc:  # noqa: BLE001 - the last resort, never the way bad input is handled
            # A parser bug on odd input must lose neither the run nor the other files of the task: the file is
            # quarantined with the error (tests/unit/test_parser_fuzz.py checks no mutated input gets here).
            out.reject(f"parser failed: {type(exc).__name__}: {str(exc)[:300]}")
    return out.finish()


# The parse output: each parse task writes the rows of every table it fed as one Parquet file per table under
# the run's scratch folder (``<lake>/_ingest/<run_id>/<table>/``, on the lake's storage so that executors on
# other hosts can write it), and returns only the per-file summaries. Spark then reads each table's files with
# the table's schema and writes it to Delta: the rows cross from Python to the JVM as Arrow columns, not as
# pickled tuples. The scratch folder is removed after the writes.
_PARSED_TABLES = ("bronze.capture_files", "bronze.mqsc_objects", "bronze.put_records", "bronze.xmitq_messages",
                  "bronze.queue_accounting", _QUARANTINE)


SCRATCH_STALE_SECONDS = 24 * 3600  # a scratch folder of another host's run this old is taken as abandoned


def _scratch(config: PipelineConfig, run_id: str) -> Path:
    """Create the run's scratch folder (with ``_owner.json``: pid, host, start), first removing the scratch
    folders of runs that are no longer running (a killed ingest never reaches its ``finally``)."""
    import socket

    root = Path(config.lake) / "_ingest"
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name != run_id):
            if _scratch_is_stale(config, folder):
                _remove_scratch(folder)
    scratch = root / run_id
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "_owner.json").write_text(json.dumps({
        "pid": os.getpid(), "host": socket.gethostname(), "run_id": run_id,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}) + "\n", encoding="utf-8")
    return scratch


def _scratch_is_stale(config: PipelineConfig, folder: Path) -> bool:
    """Whether the scratch folder belongs to a run that is no longer running: any other run's, when this process
    holds the lake lock (every writer of the lake takes it, so no other ingest can be running); else one whose
    owner ran on this host and whose process is gone; else one older than SCRATCH_STALE_SECONDS."""
    import socket

    from clwl.lakelock import holds_lock

    if holds_lock(config.lake):
        return True
    try:
        owner = json.loads((folder / "_owner.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        owner = {}
    if isinstance(owner, dict) and owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int):
        try:
            os.kill(owner["pid"], 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive, someone else's
            return False
        return False
    try:
        return time.time() - folder.stat().st_mtime > SCRATCH_STALE_SECONDS
    except OSError:
        return False


def _remove_scratch(scratch: Path) -> None:
    """Remove a scratch folder, and ``<lake>/_ingest`` when it is left empty."""
    import shutil

    shutil.rmtree(scratch, ignore_errors=True)
    try:
        scratch.parent.rmdir()  # only when empty
    except OSError:
        pass


def _arrow_table(key: str, rows: list[tuple]):
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(TABLES[key].schema)
    columns = list(zip(*rows))
    return pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema)], schema=schema)


def _parse_partition(tasks: Iterator[tuple[int, list[LandingFile]]], run_id: str, scratch: str) -> Iterator[str]:
    """Parse task: parse each file of its task(s), write the rows of every table as one Parquet file per table
    (``<scratch>/<table>/part-<task>.parquet``) and yield each file's summary as JSON."""
    import itertools

    import pyarrow.parquet as pq

    for number, task in tasks:
        rows: dict[str, list[tuple]] = {}
        summaries = []
        chunks = itertools.count()

        def spill(key: str, some: list[tuple]) -> str:
            folder = Path(scratch) / key
            folder.mkdir(parents=True, exist_ok=True)
            written = str(folder / f"part-{number:05d}-c{next(chunks):05d}.parquet")
            pq.write_table(_arrow_table(key, some), written)
            return written

        for spec in task:
            summary, table_rows = parse_landing_file(spec, run_id, spill)
            summaries.append(json.dumps(summary))
            for key, some in table_rows.items():
                rows.setdefault(key, []).extend(some)
        for key, some in rows.items():
            if some:
                folder = Path(scratch) / key
                folder.mkdir(parents=True, exist_ok=True)
                pq.write_table(_arrow_table(key, some), str(folder / f"part-{number:05d}.parquet"))
        yield from summaries


# ----------------------------------------------------------------------------------------------------------
# History: rebuilt per observing queue manager from all of its captures (pure Python per queue manager, run by
# Spark grouped by observing_qmgr: the window/join formulation took three times the jobs and stages)

_ABSENT = "<absent>"
_NOT_CONFIG = frozenset({"CHSTATUS", "OTHER"})
_INACTIVE = ("INACTIVE", None, None)


def _text_or_none(value) -> str | None:
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def qmgr_history(objects: Iterable[dict], captures: Iterable[dict]) -> tuple[list[dict], list[dict]]:
    """``(config versions, channel status intervals)`` of one observing queue manager.

    objects: its bronze.mqsc_objects rows (kind, object_key, source_file, seq, attrs_hash; for CHSTATUS and
    CLUSQMGR records also channel, chltype, status, xmitq, substate, deftype from the attributes).
    captures: its bronze.capture_files rows (source_file, capture_time, run_date, kinds_covered, kinds_present,
    complete).

    Captures are taken in (capture_time, source_file) order; an object (a channel) is followed from the first
    capture time it is seen at (for a channel: in a CHSTATUS record or named by a CLUSQMGR record). In a capture
    that covers its kind it is present (its state), absent (the capture asked for the whole kind and lost no
    record: gone, or INACTIVE for a channel) or unknown (the state carries over). A new version opens where the
    state changes; the open one is closed then (valid_to). Versions carry the opening capture's source_file,
    run_date and, for configuration, the record's seq (to fetch its attributes).
    """
    import itertools

    caps = sorted(captures, key=lambda c: (c["capture_time"], c["source_file"]))
    records: dict[str, dict[tuple[str, str], dict]] = {}
    for o in sorted(objects, key=lambda o: (o["source_file"], o["seq"])):
        records.setdefault(o["source_file"], {})[(o["kind"], o["object_key"])] = o  # the last of an object wins
    config: list[dict] = []
    channels: list[dict] = []
    known: dict[str, list[str]] = {}  # kind -> object keys, in order of first sighting
    seen: set[tuple[str, str]] = set()
    state: dict[tuple[str, str], str] = {}
    opened: dict[tuple[str, str], dict] = {}
    ch_known: list[str] = []
    ch_state: dict[str, tuple] = {}
    ch_open: dict[str, dict] = {}
    ch_type: dict[str, str] = {}
    ch_deftype: dict[str, str] = {}

    for when, group in itertools.groupby(caps, key=lambda c: c["capture_time"]):
        group = list(group)
        for c in group:  # sightings first: a capture at the same time but earlier in name order sees them too
            for (kind, key), o in records.get(c["source_file"], {}).items():
                if kind == "CHSTATUS" or kind == "CLUSQMGR":
                    ch = _text_or_none(o.get("channel"))
                    if ch and ch not in ch_known and (kind == "CLUSQMGR" or key.endswith("|CURRENT")):
                        ch_known.append(ch)
                    if ch and kind == "CLUSQMGR":
                        ch_deftype[ch] = "CLUSRCVR" if _text_or_none(o.get("deftype")) == "CLUSRCVR" else "CLUSSDR"
                if kind not in _NOT_CONFIG and (kind, key) not in seen:
                    seen.add((kind, key))
                    known.setdefault(kind, []).append(key)
        for c in group:
            recs = records.get(c["source_file"], {})
            covered = set(c["kinds_covered"])
            kinds = covered | set(c["kinds_present"])
            for kind in sorted(kinds - _NOT_CONFIG):
                full = bool(c["complete"]) and kind in covered
                for key in known.get(kind, ()):
                    o = recs.get((kind, key))
                    new = o["attrs_hash"] if o is not None else (_ABSENT if full else None)
                    ident = (kind, key)
                    if new is None or new == state.get(ident):
                        continue
                    state[ident] = new
                    if ident in opened:
                        opened.pop(ident)["valid_to"] = when
                    if new != _ABSENT:
                        row = {"kind": kind, "object_key": key, "attrs_hash": new, "seq": int(o["seq"]),
                               "valid_from": when, "valid_to": None, "source_file": c["source_file"],
                               "run_date": c["run_date"]}
                        opened[ident] = row
                        config.append(row)
            if "CHSTATUS" not in kinds:
                continue
            full = bool(c["complete"]) and "CHSTATUS" in covered
            current = {}
            for (kind, key), o in recs.items():
                if kind == "CHSTATUS" and key.endswith("|CURRENT"):
                    current[_text_or_none(o.get("channel"))] = o
            for ch in ch_known:
                o = current.get(ch)
                if o is not None:
                    status = (_text_or_none(o.get("status")) or "UNKNOWN").upper()
                    substate = _text_or_none(o.get("substate"))
                    new = (status, _text_or_none(o.get("xmitq")), substate.upper() if substate else None)
                    chltype = _text_or_none(o.get("chltype"))
                    if chltype:
                        ch_type[ch] = chltype.upper()
                elif full:
                    new = _INACTIVE
                else:
                    continue
                if new == ch_state.get(ch):
                    continue
                ch_state[ch] = new
                if ch in ch_open:
                    ch_open.pop(ch)["valid_to"] = when
                row = {"channel": ch, "chltype": ch_type.get(ch) or ch_deftype.get(ch), "status": new[0],
                       "xmitq": new[1], "substate": new[2], "valid_from": when, "valid_to": None,
                       "source_file": c["source_file"], "run_date": c["run_date"]}
                ch_open[ch] = row
                channels.append(row)
    return config, channels


_HISTORY_COLUMNS = ("_table", "observing_qmgr", "kind", "object_key", "attrs_hash", "seq", "channel", "chltype",
                    "status", "xmitq", "substate", "valid_from", "valid_to", "source_file", "run_date")


def _history_schema():
    from pyspark.sql.types import DateType, IntegerType, StringType, StructField, StructType, TimestampType

    types = {"seq": IntegerType(), "valid_from": TimestampType(), "valid_to": TimestampType(),
             "run_date": DateType()}
    return StructType([StructField(c, types.get(c, StringType()), True) for c in _HISTORY_COLUMNS])


def _history_group(key, objects, captures):
    """cogroup.applyInArrow body: one observing queue manager's history rows (both tables, tagged)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    qmgr = key[0].as_py() if hasattr(key[0], "as_py") else key[0]
    config, channels = qmgr_history(objects.to_pylist(), captures.to_pylist())
    rows = [{"_table": "config", "observing_qmgr": qmgr, **r} for r in config]
    rows += [{"_table": "channel", "observing_qmgr": qmgr, **r} for r in channels]
    return pa.Table.from_pylist(rows, schema=to_arrow_schema(_history_schema()))


def build_histories(mqsc_objects, capture_files):
    """``(config_history, channel_status)`` DataFrames from bronze.mqsc_objects and bronze.capture_files rows
    (any set of observing queue managers; each is rebuilt from all the rows given for it)."""
    from pyspark.sql import functions as F

    def attr(name: str):
        return F.col("attrs").getItem(name)

    objects = mqsc_objects.where(F.col("kind") != "OTHER")
    slim = objects.select(
        "observing_qmgr", "kind", "object_key", "source_file", "seq", "attrs_hash",
        *[F.when(F.col("kind").isin("CHSTATUS", "CLUSQMGR"), attr(a)).alias(c)
          for a, c in (("CHANNEL", "channel"), ("CHLTYPE", "chltype"), ("STATUS", "status"), ("XMITQ", "xmitq"),
                       ("SUBSTATE", "substate"), ("DEFTYPE", "deftype"))])
    caps = capture_files.select("observing_qmgr", "source_file", "capture_time", "run_date", "kinds_covered",
                                "kinds_present", "complete")
    tagged = (slim.groupBy("observing_qmgr").cogroup(caps.groupBy("observing_qmgr"))
              .applyInArrow(_history_group, _history_schema()))
    return tagged


def _split_histories(tagged, mqsc_objects):
    from pyspark.sql import functions as F

    attrs = mqsc_objects.select("source_file", "seq", "attrs")
    config = (tagged.where(F.col("_table") == "config")
              .join(attrs, ["source_file", "seq"], "left")
              .select(*TABLES["silver.config_history"].columns))
    channels = tagged.where(F.col("_table") == "channel").select(*TABLES["silver.channel_status"].columns)
    return config, channels


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
        return sum(1 for f in self.files if f.reason)  # rejected now, or before and unchanged since

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


def _write(spark, config, key: str, df, predicate: str, count: bool = False) -> int:
    """Replace the rows matching ``predicate`` with ``df``; rows written (-1 unless ``count``)."""
    from delta.tables import DeltaTable

    t = TABLES[key]
    location = path(config, key)
    writer = df.select(*t.columns).write.format("delta").mode("overwrite").option("replaceWhere", predicate)
    if t.partition_by:
        writer = writer.partitionBy(*t.partition_by)
    writer.save(location)
    if not count:
        return -1
    metrics = DeltaTable.forPath(spark, location).history(1).collect()[0]["operationMetrics"] or {}
    return int(metrics.get("numOutputRows", 0))


#: Parse tasks take files up to this many bytes together (0: one task per file). Measured on the 2-core target
#: with the samples (73 files, 5 MB): a Python task costs ~0.13 CPU-s of its own, so one task per file spent
#: ~10 CPU-s and ~10 s in parse tasks where two tasks spend 0.4 s. A file larger than this has a task of its own.
TASK_BYTES = 32 << 20


def plan_tasks(files: list[LandingFile], parallelism: int, task_bytes: int = TASK_BYTES) -> list[list[LandingFile]]:
    """The files of each parse task: at least ``parallelism`` tasks (if there are that many files), more when
    the bytes call for it; biggest files first, each to the task with the fewest bytes so far."""
    if not files:
        return []
    if task_bytes <= 0:
        return [[f] for f in files]
    total = sum(f.size_bytes for f in files)
    n = min(len(files), max(parallelism, -(-total // task_bytes)))
    tasks: list[list[LandingFile]] = [[] for _ in range(n)]
    loads = [0] * n
    for f in sorted(files, key=lambda f: (-f.size_bytes, f.source_file)):
        i = loads.index(min(loads))
        tasks[i].append(f)
        loads[i] += max(f.size_bytes, 1)
    return [t for t in tasks if t]


def ingest(config: PipelineConfig, run_dates: list[str] | None = None, spark=None,
           progress: Callable[[str], object] = print, force: bool = False,
           task_bytes: int = TASK_BYTES) -> IngestSummary:
    """Ingest the landing folder's run dates (default: all) into the lake; see the module documentation.

    ``force``: read every file again, changed or not. ``task_bytes``: see :data:`TASK_BYTES` (0: one parse task
    per file). :class:`LandingError` when the landing folder or a requested date folder does not exist. Bad
    files and records never raise: they go to ``silver.quarantine``.
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

    # -- parse in Spark tasks ------------------------------------------------------------------------------------
    results: list[dict] = []
    frames: dict[str, object] = {}
    scratch = _scratch(config, run_id)
    try:
        if todo:
            t0 = time.monotonic()
            sc = spark.sparkContext
            _ship_code(sc, sc.master)
            tasks = plan_tasks(todo, sc.defaultParallelism, task_bytes)
            results = [json.loads(r) for r in sc.parallelize(list(enumerate(tasks)), len(tasks)).mapPartitions(
                functools.partial(_parse_partition, run_id=run_id, scratch=str(scratch))).collect()]
            if sorted(r["source_file"] for r in results) != sorted(f.source_file for f in todo):
                raise ReconciliationError(f"parse returned {len(results)} file summaries for {len(todo)} files")
            for r in results:  # checked in the task too; a mismatch here means rows were lost on the way
                if r["records_read"] != r["records_accepted"] + r["records_quarantined"]:
                    raise ReconciliationError(f"{r['source_file']}: read {r['records_read']} != accepted "
                                              f"{r['records_accepted']} + quarantined {r['records_quarantined']}")
            for key in _PARSED_TABLES:
                if any(r["rows"].get(key) for r in results):
                    frames[key] = spark.read.schema(TABLES[key].schema).parquet(str(scratch / key))
            for d in dates:
                rs = [r for r in results if r["run_date"] == d]
                if rs:
                    progress(f"parse {d}: {len(rs)} files ({len(tasks)} tasks in all), "
                             f"{sum(r['records_read'] for r in rs)} records read, "
                             f"{sum(r['records_accepted'] for r in rs)} accepted, "
                             f"{sum(r['records_quarantined'] for r in rs)} quarantined, "
                             f"{sum(1 for r in rs if r['status'] == 'rejected')} files rejected "
                             f"({time.monotonic() - t0:.1f}s)")
        written, held = _write_tables(spark, config, frames, todo, removed, results, progress, run_id, ingested_at)
    finally:
        _remove_scratch(scratch)  # also when parsing or writing failed

    # -- the run log, last ------------------------------------------------------------------------------------
    # held: per put file, the change in its records held back from silver.message_events (duplicates, put times
    # outside the run date) that this run decided: accepted by the parser, quarantined now.
    by_name = {r["source_file"]: r for r in results}
    for name, n in held.items():
        if name in by_name:
            r = by_name[name]
            r["records_accepted"], r["records_quarantined"] = r["records_accepted"] - n, r["records_quarantined"] + n
    unchanged = [(f, prev if not held.get(f.source_file) else {
        **prev, "records_accepted": prev["records_accepted"] - held[f.source_file],
        "records_quarantined": prev["records_quarantined"] + held[f.source_file]}) for f, prev in unchanged]
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


def _write_tables(spark, config, frames: dict, todo: list[LandingFile], removed: list[dict], results: list[dict],
                  progress, run_id: str, ingested_at: datetime) -> tuple[dict[str, int], dict[str, int]]:
    """Replace the touched files' rows in every table they feed, then rebuild the message events of the affected
    senders and days (:func:`_message_jobs`) and the affected histories. ``(rows written per table, held)``:
    held is, per put file whose held-back records were recomputed, how many more of its records than before
    are held back from silver.message_events (for a file read in this run: how many of what its parser
    accepted)."""
    from pyspark.sql import functions as F

    touched: list[tuple[str, str, str]] = [(f.source_file, f.run_date, f.parser) for f in todo]
    for prev in removed:
        name = prev["source_file"].rsplit("/", 1)[-1]
        touched.append((prev["source_file"], str(prev["run_date"]), classify_name(name, str(prev["run_date"]))[0]))
    if not touched:
        progress("write: nothing new or changed, no table rewritten")
        return {}, {}
    t0 = time.monotonic()
    pairs, put_files, order_files = _message_scope(spark, config, frames, touched)
    rows = {key: sum(r["rows"].get(key, 0) for r in results) for key in TABLES}

    def frame(key: str):
        if key in frames:
            return frames[key]
        return spark.createDataFrame([], TABLES[key].schema)

    def predicate(key: str) -> str | None:
        parsers = [p for p, keys in _FEEDS.items() if key in keys]
        mine = [(s, d) for s, d, p in touched if key == _QUARANTINE or p in parsers]
        if not mine:
            return None
        where = _in("source_file", [s for s, _ in mine])
        if "run_date" in TABLES[key].partition_by:
            where = _in("run_date", [d for _, d in mine]) + " AND " + where
        return where

    sources = {
        "silver.xmitq_contents": ("bronze.xmitq_messages", lambda df: df),
        "silver.queue_accounting": ("bronze.queue_accounting", _silver_accounting),
    }
    jobs = []
    # silver.message_events is written after bronze, from it (below)
    for key in ("bronze.capture_files", "bronze.mqsc_objects", "bronze.put_records", "bronze.xmitq_messages",
                "bronze.queue_accounting", "silver.xmitq_contents", "silver.queue_accounting", _QUARANTINE):
        where = predicate(key)
        if where is None:
            continue
        if key in sources:
            source, transform = sources[key]
            df = transform(frame(source))
        else:
            df = frame(key)
        jobs.append((key, df, where))
    _run_writes(spark, config, jobs)
    written = {key: rows[key if key not in sources else sources[key][0]] for key, _, _ in jobs}
    progress("write bronze/silver: " + ", ".join(f"{k} {n}" for k, n in written.items())
             + f" rows ({time.monotonic() - t0:.1f}s)")

    # -- message events, rebuilt per (run date, sending queue manager) from all of its bronze put rows, and ---
    # -- history, rebuilt per observing queue manager from all of its captures: written side by side ----------
    qmgr_of = {f.source_file: f.observing_qmgr for f in todo}
    qmgr_of.update((p["source_file"], p["observing_qmgr"]) for p in removed)
    qmgrs = sorted({qmgr_of[s] for s, _, parser in touched if parser == "capture" and qmgr_of[s]})
    held: dict[str, int] = {}
    cached = []
    later: list[tuple[str, object, str]] = []
    t0 = time.monotonic()
    try:
        if pairs:
            message_jobs, held, kinds, losers = _message_jobs(
                spark, config, pairs, put_files, _file_order(config, order_files, ingested_at), run_id)
            cached.append(losers)
            later += message_jobs
        if qmgrs:
            objs = read(spark, config, "bronze.mqsc_objects").where(F.col("observing_qmgr").isin(qmgrs))
            caps = read(spark, config, "bronze.capture_files").where(F.col("observing_qmgr").isin(qmgrs))
            where = _in("observing_qmgr", qmgrs)
            tagged = build_histories(objs, caps).persist()
            cached.append(tagged)
            history, channels = _split_histories(tagged, objs)
            later += [("silver.config_history", history, where), ("silver.channel_status", channels, where)]
        counts = _run_writes(spark, config, later, count=True)
    finally:
        for df in cached:
            df.unpersist()
    seconds = time.monotonic() - t0
    if pairs:
        written["silver.message_events"] = counts["silver.message_events"]
        if _QUARANTINE in counts:
            written[_QUARANTINE] = written.get(_QUARANTINE, 0) + counts[_QUARANTINE]
        senders = sorted({q for _, q in pairs})
        progress(f"message events of {len(senders)} sending queue managers ({', '.join(senders)}) on "
                 f"{len({d for d, _ in pairs})} run date(s): {counts['silver.message_events']} events; held back "
                 f"(quarantined): {kinds.get('duplicate', 0)} duplicate msg_ids, {kinds.get('date', 0)} put times "
                 f"outside the run date ({seconds:.1f}s)")
    if qmgrs:
        written["silver.config_history"] = counts["silver.config_history"]
        written["silver.channel_status"] = counts["silver.channel_status"]
        progress(f"history of {len(qmgrs)} queue managers ({', '.join(qmgrs)}): config_history "
                 f"{counts['silver.config_history']} versions, channel_status {counts['silver.channel_status']} "
                 f"intervals ({seconds:.1f}s)")
    return written, held


def _run_writes(spark, config, jobs: list[tuple[str, object, str]], count: bool = False) -> dict[str, int]:
    """Run independent table writes side by side (Spark schedules the jobs of several threads; the time of a
    small write is mostly Delta's commit, not work). Rows written per table when ``count``."""
    from concurrent.futures import ThreadPoolExecutor

    if not jobs:
        return {}
    with ThreadPoolExecutor(max_workers=min(4, len(jobs))) as pool:
        futures = {key: pool.submit(_write, spark, config, key, df, where, count) for key, df, where in jobs}
        return {key: future.result() for key, future in futures.items()}


# ----------------------------------------------------------------------------------------------------------
# Message events: bronze put rows -> silver.message_events, once per message of its own run date

#: ``silver.quarantine.level`` of a put record its parser accepted (it is in bronze) but that silver.message_events
#: does not take: a msg_id already put in an earlier file of the sender and day, or a put time outside the run
#: date. These rows are recomputed with the message events; ``raw`` is the record as a put CSV row.
MESSAGE_LEVEL = "message"


def _message_scope(spark, config, frames: dict, touched: list[tuple[str, str, str]]
                   ) -> tuple[tuple[tuple[str, str], ...], frozenset[str], frozenset[str]]:
    """``(pairs, files, order_files)`` of a run's put files (one Spark job, before bronze is written).

    pairs: the (run date, sending queue manager) whose message events are rebuilt: every pair with a row in a
    touched put file, before or after this run, and every pair of the files that hold rows of those (so that
    each file in ``files`` has all of its senders rebuilt). files: the put files, after this run, that hold rows
    of a touched pair: their held-back quarantine rows are rebuilt. order_files: every put file of the pairs."""
    from pyspark.sql import functions as F

    puts = {s: d for s, d, p in touched if p == "puts"}
    if not puts:
        return (), frozenset(), frozenset()
    cols = ("run_date", "source_file", "sending_qmgr")
    before = (read(spark, config, "bronze.put_records")
              .where(F.col("run_date").isin([date.fromisoformat(d) for d in sorted(set(puts.values()))]))
              .select(*cols, F.lit(False).alias("new")))
    if "bronze.put_records" in frames:
        before = before.unionByName(frames["bronze.put_records"].select(*cols, F.lit(True).alias("new")))
    found = {(r["run_date"].isoformat(), r["source_file"], r["sending_qmgr"], r["new"])
             for r in before.distinct().collect()}
    changed = {(d, q) for d, s, q, _ in found if s in puts}
    after = {(d, s, q) for d, s, q, new in found if new or s not in puts}
    files = frozenset(s for d, s, q in after if (d, q) in changed)
    pairs = changed | {(d, q) for d, s, q in after if s in files}
    return tuple(sorted(pairs)), files, frozenset(s for d, s, q in after if (d, q) in pairs)


def _file_order(config, files: Iterable[str], ingested_at: datetime) -> list[tuple[str, int]]:
    """``(source_file, rank)``: the put files in the order their copies of a message are kept: by first ingest
    (the earliest run-log row since the file last appeared in the landing folder; ``ingested_at`` for a file new
    in this run), then by name. Read from the run log without a JVM (it is small)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    wanted = sorted(set(files))
    log = DeltaTable(path(config, "silver.ingest_files")).to_pyarrow_table(
        columns=["source_file", "ingested_at", "ingest_run_id", "status"])
    log = log.filter(pc.is_in(log.column("source_file"), value_set=pa.array(wanted, pa.string())))

    def utc(t: datetime) -> datetime:
        return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)

    first: dict[str, datetime] = {}
    for r in sorted(log.to_pylist(), key=lambda r: (utc(r["ingested_at"]), r["ingest_run_id"])):
        if r["status"] == "removed":
            first.pop(r["source_file"], None)
        else:
            first.setdefault(r["source_file"], utc(r["ingested_at"]))
    now = utc(ingested_at)
    return [(s, n) for n, s in enumerate(sorted(wanted, key=lambda s: (first.get(s, now), s)))]


def _put_csv_row():
    """A put record of bronze as a row of the put CSV (columns of ``clwl.parse.puts.PUT_COLUMNS``, in order)."""
    from pyspark.sql import functions as F

    from clwl.parse.puts import PUT_COLUMNS

    def text(name: str):
        if name == "put_time":
            return F.date_format(name, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")  # the session time zone is UTC
        value = F.col(name).cast("string")  # booleans: true / false
        if name in ("open_handle", "group_id"):  # kept as given: may need CSV quotes
            value = F.when(value.rlike('[",\\r\\n]'),
                           F.concat(F.lit('"'), F.regexp_replace(value, '"', '""'), F.lit('"'))).otherwise(value)
        return F.coalesce(value, F.lit(""))

    return F.concat_ws(",", *[text(c.name) for c in PUT_COLUMNS])


def _message_jobs(spark, config, pairs: tuple[tuple[str, str], ...], files: frozenset[str],
                  order: list[tuple[str, int]], run_id: str):
    """The writes of silver.message_events for ``pairs`` (run date, sending queue manager) and of the held-back
    quarantine rows (level :data:`MESSAGE_LEVEL`) of ``files``, from all bronze put rows of those pairs (bronze
    must be written). ``(jobs, held, kinds, losers)``: held per file of ``files`` = held-back rows now - before;
    kinds: held-back rows by kind (duplicate, date); losers: a persisted DataFrame to unpersist after the writes.

    A row is held back when its put time is not on its run date (UTC), or, among the others, when its msg_id was
    put before by the same sending queue manager on the same run date in an earlier copy: by file ``order``
    (first ingest, then name), then position. One aggregation finds the repeated msg_ids; only their rows are
    ranked (a window over msg_id)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_date: dict[str, list[str]] = {}
    for d, q in pairs:
        by_date.setdefault(d, []).append(q)
    where = " OR ".join(f"(run_date = {_sql_str(d)} AND {_in('sending_qmgr', qs)})"
                        for d, qs in sorted(by_date.items()))
    bronze = read(spark, config, "bronze.put_records").where(where)
    in_day = F.to_date("put_time") == F.col("run_date")  # the session time zone is UTC
    line = F.col("position").cast("string")
    day = F.date_format("run_date", "yyyy-MM-dd")
    outside = bronze.where(~in_day).select(
        "run_date", "observing_qmgr", "source_file", "position", "format", _put_csv_row().alias("raw"),
        F.lit("date").alias("kind"),
        F.concat(F.lit("put time "), F.date_format("put_time", "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"),
                 F.lit(" is not in run date "), day, F.lit(" (file "), F.col("source_file"), F.lit(" line "), line,
                 F.lit("): not replayed, so that it is not routed with "), day,
                 F.lit("'s configuration; put the row in a put file of the "), F.date_format("put_time", "yyyy-MM-dd"),
                 F.lit("/"), F.coalesce("observing_qmgr", "sending_qmgr"), F.lit("/ folder")).alias("reason"))

    good = bronze.where(in_day)
    keys = ["run_date", "sending_qmgr", "msg_id"]
    fields = [c for c in TABLES["silver.message_events"].columns[4:] if c not in keys]
    repeated = good.groupBy(*keys).count().where(F.col("count") > 1).drop("count")
    ranks = spark.createDataFrame(order, "source_file string, _order int")
    w = Window.partitionBy(*keys).orderBy("_order", "source_file", "position")
    ranked = (good.join(repeated, keys, "left_semi").join(F.broadcast(ranks), "source_file", "left")
              .withColumn("_order", F.coalesce("_order", F.lit(1 << 30)))
              .withColumn("_n", F.row_number().over(w))
              .withColumn("_kept", F.first(F.struct("source_file", "position", *fields)).over(w))
              .where(F.col("_n") > 1))
    differs = F.concat_ws(", ", *[F.when(~F.col(c).eqNullSafe(F.col(f"_kept.{c}")), F.lit(c)) for c in fields])
    duplicates = ranked.select(
        "run_date", "observing_qmgr", "source_file", "position", "format", _put_csv_row().alias("raw"),
        F.lit("duplicate").alias("kind"),
        F.concat(F.lit("duplicate msg_id "), F.col("msg_id"), F.lit(": already in "), F.col("_kept.source_file"),
                 F.lit(" line "), F.col("_kept.position").cast("string"),
                 F.lit(" (kept there, replayed once); this copy in "), F.col("source_file"), F.lit(" line "), line,
                 F.lit(" is not replayed ("),
                 F.when(differs == "", F.lit("the same record"))
                 .otherwise(F.concat(F.lit("it differs in "), differs, F.lit("; the kept copy is replayed"))),
                 F.lit(")")).alias("reason"))
    losers = outside.unionByName(duplicates).persist()
    found = losers.groupBy("source_file", "kind").count().collect()
    kinds: dict[str, int] = {}
    now: dict[str, int] = {}
    for r in found:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + r["count"]
        if r["source_file"] in files:
            now[r["source_file"]] = now.get(r["source_file"], 0) + r["count"]

    events = good if not found else good.join(losers.select("source_file", "position"),
                                             ["source_file", "position"], "left_anti")
    jobs = [("silver.message_events", events, where)]
    held: dict[str, int] = {}
    if files:
        # The quarantine rows of the files now: their parsers' rows (seq 0..n-1) and the held-back ones before.
        before = (read(spark, config, _QUARANTINE).where(_in("source_file", files))
                  .groupBy("source_file")
                  .agg(F.max(F.when(F.col("level") != MESSAGE_LEVEL, F.col("seq"))).alias("last"),
                       F.sum(F.when(F.col("level") == MESSAGE_LEVEL, 1).otherwise(0)).alias("held"))
                  .collect())
        last = {r["source_file"]: r["last"] for r in before if r["last"] is not None}
        held = {s: now.get(s, 0) - next((r["held"] for r in before if r["source_file"] == s), 0) for s in files}
        offsets = spark.createDataFrame([(s, int(last.get(s, -1)) + 1) for s in sorted(files)],
                                        "source_file string, _first_seq int")
        t = TABLES[_QUARANTINE]
        rows = (losers.where(F.col("source_file").isin(sorted(files)))
                .join(F.broadcast(offsets), "source_file")
                .withColumn("seq", (F.col("_first_seq") + F.row_number().over(
                    Window.partitionBy("source_file").orderBy("position")) - 1).cast("int"))
                .withColumn("ingest_run_id", F.lit(run_id)).withColumn("level", F.lit(MESSAGE_LEVEL))
                .select(*t.columns))
        jobs.append((_QUARANTINE, rows, f"level = {_sql_str(MESSAGE_LEVEL)} AND " + _in("source_file", files)))
    return jobs, {s: n for s, n in held.items() if n}, kinds, losers


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


if __name__ == "__main__":  # python -m spark.ingest / spark-submit spark/ingest.py: the `clwl ingest` options
    import sys

    from clwl.pipeline_cli import ingest_main

    sys.exit(ingest_main())
