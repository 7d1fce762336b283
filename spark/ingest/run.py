"""A run of the ingest stage, :func:`ingest`: its steps in order (the ``spark.ingest`` package documentation)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Callable

from clwl.lake.door import Lake
from clwl.landing.discovery import TRACE_TZ_ENV as TRACE_TZ_ENV
from clwl.landing.discovery import discover_landing, trace_zone
from clwl.terminal import printable
from spark.config import PipelineConfig
from spark.ingest.context import IngestRun
from spark.ingest.parse_step import TASK_BYTES, parse_files
from spark.ingest.parse_tasks import ReconciliationError
from spark.ingest.put_layout import migrate_put_records
from spark.ingest.run_log import (
    IngestSummary,
    code_version,
    latest_log_rows,
    log_run,
    plan_files,
    report_plan,
)
from spark.ingest.scratch import make_scratch, remove_scratch
from spark.ingest.write_step import write_tables
from spark.run import new_run_id
from spark.tables import ensure_tables


def ingest_pending(config: PipelineConfig, run_dates: list[str] | None = None, trace_tz: str | None = None, *,
                   lake: Lake) -> bool:
    """Whether :func:`ingest` of these run dates would read or remove any file (a new, changed or gone file, or
    code that reads files differently), decided as the ingest decides it, without Spark: the landing folder's
    files and the run log read with deltalake. A lake without the run log has everything to ingest. ``lake``: the
    run's (PipelineRun.lake), the one ``config`` names."""
    if not lake.exists("silver.ingest_files"):
        return True
    dates, files, _ = discover_landing(config.landing, run_dates)
    previous = {} if not files and not dates else latest_log_rows(lake, dates)
    todo, _, removed = plan_files(files, previous, code_version(), False, trace_zone(trace_tz or config.trace_tz))
    return bool(todo or removed)


def ingest(config: PipelineConfig, run_dates: list[str] | None = None, spark=None,
           progress: Callable[[str], object] = print, force: bool = False,
           task_bytes: int = TASK_BYTES, trace_tz: str | None = None) -> IngestSummary:
    """Ingest the landing folder's run dates (default: all) into the lake (see the ``spark.ingest`` documentation).

    ``force``: read every file again, changed or not. ``task_bytes``: see :data:`TASK_BYTES` (0: one parse task
    per file). ``trace_tz``: see :func:`trace_zone` (default $CLWL_TRACE_TZ, else UTC). :class:`LandingError`
    when the landing folder or a requested date folder does not exist. Bad files and records never raise: they
    go to ``silver.quarantine``. Every ``progress`` line has its control characters escaped
    (:func:`clwl.terminal.printable`): file names and record values reach the terminal or the task log.
    """
    started = time.monotonic()
    trace_tz = trace_zone(trace_tz or config.trace_tz)
    say = progress

    def progress(line: str) -> object:  # every line may name landing files: never their raw controls
        return say(printable(line))

    dates, files, notes = discover_landing(config.landing, run_dates)
    run_id = new_run_id("ingest")
    ingested_at = datetime.now(timezone.utc)
    summary = IngestSummary(run_id=run_id, run_dates=dates, landing=str(config.landing), lake=str(config.lake))
    progress(f"ingest {run_id}: {len(files)} files in {len(dates)} run date(s) from {config.landing}")
    for note in notes:
        progress(f"  {note}")

    if spark is None:
        from spark.session import get_spark

        spark = get_spark(config.master, app_name="clwl-ingest", shown_output=config.verbose, lake=config.lake)
    from spark.publish import settle_before_writing  # here, not at the top: spark.publish imports the ingest's users

    run = IngestRun(spark, config, Lake(config.lake), run_id, ingested_at, progress, trace_tz, code_version())
    settle_before_writing(run.lake, lambda: spark, progress)  # a killed publish is rolled back at the next write
    ensure_tables(spark, config)
    migrate_put_records(run)  # once, on a lake of the earlier layout
    previous = {} if not files and not dates else latest_log_rows(run.lake, dates)

    # 1. which files to read, which are unchanged, which are gone
    todo, unchanged, removed = plan_files(files, previous, run.version, force, trace_tz)
    report_plan(progress, dates, files, todo, unchanged, removed)

    # 2-4. parse in Spark tasks, replace the files' rows, rebuild message events and histories
    scratch = make_scratch(config, run_id)
    try:
        results, frames = parse_files(run, todo, dates, scratch, task_bytes)
        written, held = write_tables(run, frames, todo, removed, results)
    finally:
        remove_scratch(scratch)  # also when parsing or writing failed

    # 5. the run log, last
    logged = log_run(run, summary, todo, unchanged, removed, results, held)
    if logged:
        written["silver.ingest_files"] = logged
    if summary.records_read != summary.records_accepted + summary.records_quarantined:
        raise ReconciliationError(f"run {run_id}: read {summary.records_read} != accepted "
                                  f"{summary.records_accepted} + quarantined {summary.records_quarantined}")
    summary.rows_written = written
    summary.seconds = time.monotonic() - started
    progress(f"done {run_id}: {len(summary.files)} files, {summary.records_read} records read, "
             f"{summary.records_accepted} accepted, {summary.records_quarantined} quarantined "
             f"({summary.seconds:.1f}s)")
    return summary
