"""Steps 3 and 4 of a run: replace the rows of the new, changed and removed files in every table they feed, then
rebuild silver.message_events of the affected senders and days and the histories of the affected observing
queue managers, side by side."""

from __future__ import annotations

import time

from clwl.landing import formats
from clwl.landing.discovery import LandingFile, classify_name
from spark.ingest.context import IngestRun
from spark.ingest.history import build_histories, split_histories
from spark.ingest.message_events import MessageScope, message_jobs, message_scope, write_phases
from spark.ingest.scratch import QUARANTINE_TABLE
from spark.ingest.writes import holds_rows, run_writes, sql_in
from spark.tables import TABLES, read

# The tables a file of each format feeds: clwl.landing.formats.feeds (silver.quarantine is fed by every file). A file
# feeding these has the history of its observing queue manager rebuilt.
_HISTORY_SOURCES = ("bronze.capture_files", "bronze.mqsc_objects")


def _parser_of_removed(prev: dict) -> str:
    """The format a file gone from the landing folder was read as: from its run-log format where the name may
    not tell (a format found by content, such as amqsact output under another name)."""
    logged = formats.of_logged(prev.get("format"))
    if logged is not None and logged.sniff is not None:
        return logged.name
    name = prev["source_file"].rsplit("/", 1)[-1]
    return classify_name(name, str(prev["run_date"]))[0]


def write_tables(ingest: IngestRun, frames: dict, todo: list[LandingFile], removed: list[dict], results: list[dict]
                 ) -> tuple[dict[str, int], dict[str, int]]:
    """Replace the touched files' rows in every table they feed, then rebuild the message events of the affected
    senders and days (:func:`message_jobs`) and the affected histories. ``(rows written per table, held)``:
    held is, per put file whose held-back records were recomputed, how many more of its records than before
    are held back from silver.message_events (for a file read in this run: how many of what its parser
    accepted)."""
    touched: list[tuple[str, str, str]] = [(f.source_file, f.run_date, f.parser) for f in todo]
    for prev in removed:
        touched.append((prev["source_file"], str(prev["run_date"]), _parser_of_removed(prev)))
    if not touched:
        ingest.progress("write: nothing new or changed, no table rewritten")
        return {}, {}
    t0 = time.monotonic()
    scope = message_scope(ingest, frames, touched)
    # Before step 3 writes: whether the history's sources hold rows of files other than this run's.
    history_in_lake = any(holds_rows(ingest.lake, k) for k in _HISTORY_SOURCES)
    written = _replace_file_rows(ingest, frames, touched, results)
    ingest.progress("write bronze/silver: " + ", ".join(f"{k} {n}" for k, n in written.items())
             + f" rows ({time.monotonic() - t0:.1f}s)")

    qmgr_of = {f.source_file: f.observing_qmgr for f in todo}
    qmgr_of.update((p["source_file"], p["observing_qmgr"]) for p in removed)
    qmgrs = sorted({qmgr_of[s] for s, _, parser in touched
                    if set(formats.feeds(parser)) & set(_HISTORY_SOURCES) and qmgr_of[s]})
    held = _rebuild_events_and_histories(ingest, frames, written, scope, qmgrs, history_in_lake)
    return written, held


def _replace_file_rows(ingest: IngestRun, frames: dict, touched: list[tuple[str, str, str]], results: list[dict]
                       ) -> dict[str, int]:
    """Step 3: replace the touched files' rows in bronze, the silver tables made from one file's rows, and
    silver.quarantine; rows written per table (as the parse tasks counted them)."""
    spark = ingest.spark
    rows = {key: sum(r["rows"].get(key, 0) for r in results) for key in TABLES}

    def frame(key: str):
        if key in frames:
            return frames[key]
        return spark.createDataFrame([], TABLES[key].schema)

    def predicate(key: str) -> str | None:
        mine = [(s, d) for s, d, p in touched if key == QUARANTINE_TABLE or key in formats.feeds(p)]
        if not mine:
            return None
        where = sql_in("source_file", [s for s, _ in mine])
        if "run_date" in TABLES[key].partition_by:
            where = sql_in("run_date", [d for _, d in mine]) + " AND " + where
        return where

    sources = {
        "silver.xmitq_contents": ("bronze.xmitq_messages", lambda df: df),
        "silver.queue_accounting": ("bronze.queue_accounting", _silver_accounting),
        "silver.channel_statistics": ("bronze.channel_statistics", _silver_channel_statistics),
    }
    jobs = []
    # bronze.put_records stores only the rows held back from silver.message_events: both are written in step 4
    # (_rebuild_events_and_histories); its rows written here are the files' accepted put rows, counted.
    for key in ("bronze.capture_files", "bronze.mqsc_objects", "bronze.put_records", "bronze.xmitq_messages",
                "bronze.queue_accounting", "bronze.activity_operations", "bronze.channel_statistics",
                "silver.xmitq_contents", "silver.queue_accounting", "silver.channel_statistics", QUARANTINE_TABLE):
        where = predicate(key)
        if where is None:
            continue
        if key == "bronze.put_records":  # counted only: written in step 4
            jobs.append((key, None, where))
            continue
        if rows[sources[key][0] if key in sources else key] == 0 and ingest.lake.version(key) == 0:
            jobs.append((key, None, where))  # nothing to write or replace: the table is as ensure_tables made it
            continue
        if key in sources:
            source, transform = sources[key]
            df = transform(frame(source))
        else:
            df = frame(key)
        jobs.append((key, df, where))
    run_writes(spark, ingest.config, [job for job in jobs if job[1] is not None])
    return {key: rows[key if key not in sources else sources[key][0]] for key, _, _ in jobs}


def _rebuild_events_and_histories(ingest: IngestRun, frames: dict, written: dict[str, int], scope: MessageScope,
                                  qmgrs: list[str], history_in_lake: bool) -> dict[str, int]:
    """Step 4: message events, rebuilt per (run date, sending queue manager) of ``scope`` from all of its
    accepted put rows, and history, rebuilt per observing queue manager of ``qmgrs`` from all of its captures:
    written side by side (the put rows held back are written to bronze before and after, see
    ``message_events._phases``). Adds the rows written to ``written``; returns held (see :func:`write_tables`).
    ``history_in_lake``: whether the history's bronze tables held rows before this run wrote; when not, their
    rows now are this run's, in hand, and are not read back from the tables just written."""
    from pyspark.sql import functions as F

    spark, config, progress = ingest.spark, ingest.config, ingest.progress
    pairs = scope.pairs
    held: dict[str, int] = {}
    cached = []
    later: list[tuple[str, object, str]] = []
    phases: list[list[tuple[str, object, str]]] = []
    t0 = time.monotonic()
    try:
        if pairs:
            phases, held, kinds, losers = message_jobs(ingest, scope, frames)
            cached.append(losers)
        if qmgrs:
            def source(key: str):
                rows = frames.get(key) if not history_in_lake else None
                rows = read(spark, config, key) if rows is None else rows
                return rows.where(F.col("observing_qmgr").isin(qmgrs))

            objs, caps = source("bronze.mqsc_objects"), source("bronze.capture_files")
            where = sql_in("observing_qmgr", qmgrs)
            tagged = build_histories(objs, caps).persist()
            cached.append(tagged)
            history, channels = split_histories(tagged, objs)
            later += [("silver.config_history", history, where), ("silver.channel_status", channels, where)]
        counts = (write_phases(spark, config, phases, later) if phases
                  else run_writes(spark, config, later, count=True))
    finally:
        for df in cached:
            df.unpersist()
    seconds = time.monotonic() - t0
    if pairs:
        written["silver.message_events"] = counts["silver.message_events"]
        if QUARANTINE_TABLE in counts:
            written[QUARANTINE_TABLE] = written.get(QUARANTINE_TABLE, 0) + counts[QUARANTINE_TABLE]
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
    return held


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


def _silver_channel_statistics(df):
    from pyspark.sql import functions as F

    return df.select(
        "run_date", "observing_qmgr", "qmgr",
        F.col("interval_start").cast("timestamp").alias("interval_start"),  # session time zone is UTC
        F.col("interval_end").cast("timestamp").alias("interval_end"),
        *[c for c in TABLES["silver.channel_statistics"].columns
          if c in df.columns and c not in ("run_date", "observing_qmgr", "qmgr", "interval_start", "interval_end")])
