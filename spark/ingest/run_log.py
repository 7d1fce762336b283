"""The run log ``silver.ingest_files``: which files are new, changed, unchanged or gone since their last ingest
(and so are read again or not), the per-file results of a run, and the run log rows appended last."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from clwl.days import RunDate
from clwl.lake.door import Lake
from clwl.landing import formats
from clwl.landing.discovery import LandingFile
from clwl.landing.totals import RecordTotals
from clwl.terminal import printable
from spark.ingest.context import IngestRun
from spark.tables import TABLES, path


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
class IngestSummary(RecordTotals):
    run_id: str
    run_dates: list[str]
    landing: str
    lake: str
    files: list[FileResult] = field(default_factory=list)
    rows_written: dict[str, int] = field(default_factory=dict)  # table key -> rows written by this run
    seconds: float = 0.0

    @property
    def files_rejected(self) -> int:
        return sum(1 for f in self.files if f.reason)  # rejected now, or before and unchanged since

    def format_table(self) -> str:
        """Per file: read / accepted / quarantined, status and reason; then the totals. File names and reasons
        with their control characters escaped (:func:`clwl.terminal.printable`): the table goes to a terminal."""
        files = [f for f in self.files if f.status != "removed"]
        removed = [f for f in self.files if f.status == "removed"]
        shown = {id(f): printable(f.source_file) for f in self.files}
        width = max([len("file")] + list(map(len, shown.values())))
        head = f"{'file':<{width}}  {'format':<8}  {'status':<9}  {'read':>7}  {'accepted':>8}  {'quarantined':>11}"
        lines = [head, "-" * len(head)]
        for f in files:
            line = (f"{shown[id(f)]:<{width}}  {f.format:<8}  {f.status:<9}  {f.records_read:>7}  "
                    f"{f.records_accepted:>8}  {f.records_quarantined:>11}")
            if f.reason:
                reason = printable(f.reason)
                reason = reason if len(reason) <= 100 else reason[:97] + "..."
                line += f"  {reason}"
            lines.append(line)
        for f in removed:
            lines.append(f"{shown[id(f)]:<{width}}  {f.format:<8}  removed    (no longer in the landing folder)")
        lines.append("-" * len(head))
        lines.append(f"{'total (' + str(len(files)) + ' files)':<{width}}  {'':<8}  {'':<9}  {self.records_read:>7}  "
                     f"{self.records_accepted:>8}  {self.records_quarantined:>11}")
        lines.append(f"run {self.run_id}: {self.files_rejected} file(s) rejected, lake {self.lake}, "
                     f"{self.seconds:.1f}s")
        return "\n".join(lines)


# The code that turns files into rows: the parsers (every module under clwl/parse/, the format registry and every
# module a format names (clwl.landing.formats.modules: clwl.engine.view, ...), with every clwl module they import, found from
# their source: a hand-kept list once missed clwl/parse/zos.py), spark.tables and every module of this package
# (spark/ingest/*.py). A change to any of them reads every file again.
@functools.lru_cache(maxsize=1)
def _code_modules() -> tuple[str, ...]:
    from clwl.parse import parser_modules

    named = formats.modules()
    ingest = tuple("spark.ingest" if p.stem == "__init__" else f"spark.ingest.{p.stem}"
                   for p in sorted(Path(__file__).parent.glob("*.py")))
    other = tuple(m for m in named if not m.startswith("clwl.") and m not in ingest)
    return (*parser_modules("clwl.landing.formats", *(m for m in named if m.startswith("clwl."))), "spark.tables",
            *other, *ingest)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Fingerprint of the code that turns files into rows: a file is read again when it changes."""
    import importlib

    h = hashlib.sha256()
    for name in _code_modules():
        module = importlib.import_module(name)
        h.update(name.encode())
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()[:16]


def latest_log_rows(lake: Lake, dates: list[str]) -> dict[str, dict]:
    """Latest run-log row per source_file of these run dates (the latest ``ingested_at``, then run id), read on
    the driver without the JVM: the log is small (a row per file per run), and a Spark read of it was the fresh
    JVM's first Delta read, seconds before anything else could start."""
    if not dates:
        return {}
    rows = lake.rows("silver.ingest_files", filters=[
        ("run_date", "in", [RunDate(d).day for d in sorted(set(dates))])]).to_pylist()
    latest: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: (r["ingested_at"], r["ingest_run_id"])):
        latest[r["source_file"]] = r
    return latest


def file_version(f: LandingFile, version: str, trace_tz: str | None = None) -> str:
    """The run log's ``code_version`` of a file: the code's fingerprint, and for an activity trace the zone its
    local times were read in (``CLWL_TRACE_TZ``), so that a changed zone reads the traces again."""
    return f"{version}/tz={trace_tz or 'UTC'}" if formats.local_times(f.parser) else version


def plan_files(files: list[LandingFile], previous: dict[str, dict], version: str, force: bool,
                trace_tz: str | None = None) -> tuple[list[LandingFile], list[tuple[LandingFile, dict]], list[dict]]:
    """``(todo, unchanged, removed)``: the files to read (new, changed, read by other code, or all when
    ``force``), the files unchanged since their last run-log row (with it), and the run-log rows of the files
    gone from the landing folder.

    The activity trace files of one run date and queue manager are read together: when one of them is read
    (or one is gone), all are, because a handle opened in one is used in the next (the parser's state is handed
    on from file to file within a run only)."""
    todo: list[LandingFile] = []
    unchanged: list[tuple[LandingFile, dict]] = []
    seen = {f.source_file for f in files}
    for f in files:
        prev = previous.get(f.source_file)
        if (not force and prev is not None and prev["status"] != "removed"
                and prev["content_sha256"] == f.content_sha256
                and prev["code_version"] == file_version(f, version, trace_tz)):
            unchanged.append((f, prev))
        else:
            todo.append(f)
    removed = [prev for name, prev in sorted(previous.items()) if name not in seen and prev["status"] != "removed"]
    together = {f.name for f in formats.FORMATS if f.unit == formats.QMGR_DAY}
    groups = {(f.run_date, f.observing_qmgr) for f in todo if f.parser in together}
    groups |= {(str(p["run_date"]), p["observing_qmgr"]) for p in removed
               if getattr(formats.of_logged(p.get("format")), "name", None) in together}
    if groups:
        again = [f for f, _ in unchanged if f.parser in together and (f.run_date, f.observing_qmgr) in groups]
        todo += again
        unchanged = [(f, p) for f, p in unchanged if f not in again]
    return todo, unchanged, removed


def report_plan(progress, dates: list[str], files: list[LandingFile], todo: list[LandingFile],
                   unchanged: list[tuple[LandingFile, dict]], removed: list[dict]) -> None:
    for d in dates:
        n_new = sum(1 for f in todo if f.run_date == d)
        n_same = sum(1 for f, _ in unchanged if f.run_date == d)
        n_gone = sum(1 for p in removed if str(p["run_date"]) == d)
        qms = {f.observing_qmgr for f in files if f.run_date == d and f.observing_qmgr}
        progress(f"discover {d}: {n_new + n_same} files from {len(qms)} queue managers: {n_new} new or changed, "
                 f"{n_same} unchanged" + (f", {n_gone} removed" if n_gone else ""))
        for line in chstatus_notes(d, [f for f in files if f.run_date == d]):
            progress(f"  {line}")


def chstatus_notes(run_date: str, files: list[LandingFile]) -> list[str]:
    """The run date's channel status gaps as the plan sees them (clwl.landing.evidence's rule, the one ``clwl check``
    and the report apply): from the chstatus capture files' names, a queue manager with put files counted as a
    sender whose put times are not read yet (so only the stretches between captures, and no capture at all)."""
    from clwl.landing.evidence import chstatus_gaps

    usable = [f for f in files if not f.reject and f.observing_qmgr]
    captures: dict[str, list[datetime]] = {}
    for f in usable:
        if f.capture_type == "chstatus" and f.capture_time is not None:
            captures.setdefault(f.observing_qmgr, []).append(f.capture_time)
    senders = {f.observing_qmgr: None for f in usable if formats.informs(f.parser, formats.PUTS)}
    return [f"gap {g.kind}: {g.detail(run_date)}" for g in chstatus_gaps(run_date, captures, senders)]


def log_run(ingest: IngestRun, summary: IngestSummary, todo: list[LandingFile],
            unchanged: list[tuple[LandingFile, dict]], removed: list[dict], results: list[dict],
            held: dict[str, int]) -> int:
    """Step 5: the run's per-file results into ``summary.files`` and appended to silver.ingest_files; rows
    appended. ``held``: per put file, the change in its records held back from silver.message_events
    (duplicates, put times outside the run date) that this run decided: accepted by the parser, quarantined
    now."""
    run_id, ingested_at, version, trace_tz = summary.run_id, ingest.ingested_at, ingest.version, ingest.trace_tz
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
            ingest_run_id=run_id, ingested_at=ingested_at, run_date=RunDate(f.run_date).day,
            observing_qmgr=f.observing_qmgr, source_file=f.source_file, format=r["format"],
            capture_time=f.capture_time, size_bytes=f.size_bytes, content_sha256=f.content_sha256,
            code_version=file_version(f, version, trace_tz), status=r["status"], reason=r["reason"], records_read=r["records_read"],
            records_accepted=r["records_accepted"], records_quarantined=r["records_quarantined"],
            records_skipped=r["records_skipped"]))
        summary.files.append(FileResult(
            f.source_file, f.run_date, f.observing_qmgr, r["format"], r["status"], r["records_read"],
            r["records_accepted"], r["records_quarantined"], r["records_skipped"], r["reason"]))
    for f, prev in unchanged:
        log_rows.append(t_log.row(
            ingest_run_id=run_id, ingested_at=ingested_at, run_date=RunDate(f.run_date).day,
            observing_qmgr=f.observing_qmgr, source_file=f.source_file, format=prev["format"],
            capture_time=f.capture_time, size_bytes=f.size_bytes, content_sha256=f.content_sha256,
            code_version=file_version(f, version, trace_tz), status="unchanged", reason=prev["reason"], records_read=prev["records_read"],
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
        ingest.spark.createDataFrame(log_rows, t_log.schema).write.format("delta").mode("append").save(
            path(ingest.config, t_log))
    return len(log_rows)
