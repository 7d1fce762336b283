"""Landing discovery: the files under ``<landing>/<YYYY-MM-DD>/<QM>/``, each given its format by name and content
(the format registry, clwl.landing.formats), and the items that are skipped without being opened (links leaving the
landing folder, folder links, pipes, folders that are not run dates). The file-name patterns: the ``spark.ingest``
package documentation."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable

from clwl.landing import formats
from clwl.landing.formats import EXPECTED_NAMES as EXPECTED_NAMES
from clwl.landing.formats import UNKNOWN, classify_content, classify_name
from clwl.landing.formats import unknown_format_reason as unknown_format_reason
from clwl.landing.layout import MQ_NAME_RULE, RUN_DATE_NAME, is_mq_name, is_run_date


class LandingError(ValueError):
    """The landing folder, or a requested run date's folder, cannot be used at all (the CLI exits 2)."""


# ----------------------------------------------------------------------------------------------------------
# File names: the format registry's (clwl.landing.formats), re-exported here for the ingest's callers.

#: Bytes of a file's beginning that the content check reads (amqsact's first record header is within them).
HEAD_BYTES = 4096


# ----------------------------------------------------------------------------------------------------------
# Discovery


@dataclass(frozen=True)
class LandingFile:
    """One file of the landing folder, as sent to a parse task (picklable, paths absolute)."""

    path: str
    source_file: str  # relative to the landing root, "/"-separated
    run_date: str  # YYYY-MM-DD
    observing_qmgr: str | None
    parser: str  # the name of its format (clwl.landing.formats.FORMATS), or clwl.landing.formats.UNKNOWN
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
    return LandingFile(path="", source_file=source_file, run_date=run_date, observing_qmgr=qmgr, parser=UNKNOWN,
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


def _qmgr_name_reason(name: str) -> str:
    """Why a folder of a run date folder is not taken as a queue manager (its name is not an MQ name)."""
    odd = sorted({ch for ch in name if not is_mq_name(ch)})
    what = (f"it has {', '.join(f'U+{ord(ch):04X}' for ch in odd[:5])}{', ...' if len(odd) > 5 else ''}" if odd
            else f"it is {len(name)} characters long")
    return (f"not a queue manager folder: the name is not a valid MQ queue manager name ({MQ_NAME_RULE}; {what}); "
            "its files are not read")


def _sha256(p: Path) -> tuple[int, str, bytes]:
    """Size, sha256 and the first :data:`HEAD_BYTES` bytes (for :func:`classify_content`), in one read."""
    h = hashlib.sha256()
    size = 0
    head = b""
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            if not size:
                head = chunk[:HEAD_BYTES]
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest(), head


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
    * in a run date folder: a folder whose name is not a valid MQ queue manager name (:func:`clwl.landing.layout.is_mq_name`:
      1-48 of A-Z a-z 0-9 . _ / %, ASCII only), with what it holds: a lookalike (``QＭ5``, a fullwidth M) or a
      name with control characters is no queue manager, and its put records must not count beside a real one's;
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
            if not is_run_date(d):
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
            if is_run_date(name):
                if run_dates is None:
                    dates.append(name)
            elif RUN_DATE_NAME.match(name):
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
                if here == base and not is_mq_name(name):
                    # Never read as a queue manager: a lookalike (QＭ5) or a name with control characters would
                    # put its files under a queue manager that does not exist, or beside a real one's.
                    skip(p.relative_to(root).as_posix() + "/", d, None, _qmgr_name_reason(name))
                elif p.is_symlink():
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
                    size, digest, head = _sha256(read_from)
                except OSError as exc:
                    skip(source_file, d, qmgr, f"the file cannot be read: {exc.strerror or exc}")
                    continue
                parser = classify_content(parser, head)
                files.append(LandingFile(
                    path=str(read_from.absolute()), source_file=source_file, run_date=d,
                    observing_qmgr=qmgr, parser=parser, capture_type=ctype, capture_time=ctime, reject=reject,
                    size_bytes=size, content_sha256=digest))
    return dates, files, notes


#: Environment variable: the time zone (IANA name, e.g. ``Europe/London``) in which the local OperationDate /
#: OperationTime of activity traces are read, when a put has no High Res Time (LOW level). Default UTC.
TRACE_TZ_ENV = "CLWL_TRACE_TZ"


def trace_zone(trace_tz: str | None = None) -> str:
    """The zone activity traces are read in: ``trace_tz``, else $CLWL_TRACE_TZ, else UTC. ValueError for a name
    that is no known zone (before anything is read)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    zone = (trace_tz or os.environ.get(TRACE_TZ_ENV) or "UTC").strip()
    if zone.upper() == "UTC":
        return "UTC"
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {zone!r} for activity traces ({TRACE_TZ_ENV} or trace_tz): expected "
                         "an IANA name such as Europe/London, or UTC") from None
    return zone


#: Parse tasks take files up to this many bytes together (0: one task per file). Measured on the 2-core target
#: with the samples (73 files, 5 MB): a Python task costs ~0.13 CPU-s of its own, so one task per file spent
#: ~10 CPU-s and ~10 s in parse tasks where two tasks spend 0.4 s. A file larger than this has a task of its own.
TASK_BYTES = 32 << 20


def _units(files: list[LandingFile]) -> list[list[LandingFile]]:
    """Files that must be parsed together, in order: the activity trace files of one run date and queue manager
    (a handle opened in one is used in the next: the parser's TraceState is handed on, in name order, so name
    them so that name order is time order); every other file alone."""
    traces: dict[tuple[str, str | None], list[LandingFile]] = {}
    units: list[list[LandingFile]] = []
    for f in files:
        if formats.unit(f.parser) == formats.QMGR_DAY and not f.reject:
            traces.setdefault((f.run_date, f.observing_qmgr), []).append(f)
        else:
            units.append([f])
    units += [sorted(fs, key=lambda f: f.source_file) for fs in traces.values()]
    return units


def plan_tasks(files: list[LandingFile], parallelism: int, task_bytes: int = TASK_BYTES) -> list[list[LandingFile]]:
    """The files of each parse task: at least ``parallelism`` tasks (if there are that many units), more when
    the bytes call for it; biggest first, each to the task with the fewest bytes so far. A unit is one file, or
    the activity trace files of one run date and queue manager, which stay together in name order
    (:func:`_units`)."""
    if not files:
        return []
    units = _units(files)
    if task_bytes <= 0:
        return units
    size = {id(u): sum(max(f.size_bytes, 1) for f in u) for u in units}
    total = sum(f.size_bytes for f in files)
    n = min(len(units), max(parallelism, -(-total // task_bytes)))
    tasks: list[list[LandingFile]] = [[] for _ in range(n)]
    loads = [0] * n
    for u in sorted(units, key=lambda u: (-size[id(u)], u[0].source_file)):
        i = loads.index(min(loads))
        tasks[i].extend(u)
        loads[i] += size[id(u)]
    return [t for t in tasks if t]
