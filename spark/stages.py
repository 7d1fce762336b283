"""The stages of one run date: replay, detect, validate+publish, report (spark/pipeline.py runs them in order).

Each reads its inputs from the lake and writes its outputs there, so the Airflow DAG runs them as separate tasks
and `clwl run` in one process. Replay and detect write ``<lake>/staging/`` (:func:`replay_stage`,
:func:`detect_stage`); :func:`publish_stage` has the quality gate validate the staged tables and publishes them to
``<lake>/gold/`` only if every suite passes (spark/publish.py); :func:`report_stage` writes the date's report.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from clwl.analyses.observed_columns import observed_day
from clwl.analyses.trend_facts import put_spans
from clwl.days import UTC, RunDate
from clwl.lake.door import GOLD_TABLES, RUN_INPUTS, STAGING_KEYS, Lake
from clwl.lake.lineage_stages import lineage_stage
from spark.config import PipelineConfig
from spark.detect import distribution, stuck_messages
from spark.replay import ROUTING_REPLAY_OPTIONS, ReplayScope, load_timelines, replay_messages
from spark.run import PipelineRun
from spark.tables import TABLES, on_date, read_table

RUN_SUMMARY = TABLES["gold.run_summary"]
GOLD_KEYS = tuple(f"gold.{t}" for t in GOLD_TABLES)


def _staging(run: PipelineRun, table: str) -> str:
    """``<out>/staging/<table>``, created first when missing, as the registry has the gold table but without its
    CHECK constraints (and change data feed): a wrong row is staged, and the quality gate says what is wrong with
    it (gold would refuse it).
    Staging and gold then have one schema, so gold can take the staged files themselves (spark/publish.py)."""
    from clwl.lake.door import is_delta_table
    from spark.tables import create_empty

    location = run.staging(table)
    if not is_delta_table(location):
        create_empty(TABLES[f"gold.{table}"], location, staged=True)
    return location


def _write_date(run: PipelineRun, df: DataFrame, table: str, run_date: RunDate, options: Optional[dict] = None) -> None:
    from spark.publish import write_run_date  # staging and gold are written the same way

    write_run_date(df, _staging(run, table), RunDate(run_date).day, options)


def _write_staged(run: PipelineRun, df: DataFrame, table: str, run_date: RunDate, options: Optional[dict] = None) -> int:
    """Write ``run_date``'s rows of the staging table and return how many were written, from the commit's metrics
    (ours: the lake lock is held; counting them would read them back). A write that replaces nothing with
    nothing makes no commit at all: the latest commit is then another date's, so no new version means 0 rows."""
    key = f"staging.{table}"
    _staging(run, table)  # created first: its empty version 0 is not a write of rows
    before = run.out_lake.version(key)
    _write_date(run, df, table, run_date, options)
    return 0 if run.out_lake.version(key) == before else run.out_lake.rows_committed(key)


@lineage_stage("replay", RUN_INPUTS, ("staging.routing_replay",))
def replay_stage(spark: SparkSession, run: PipelineRun, run_date: RunDate) -> int:
    """Replay ``run_date`` into ``<out>/staging/routing_replay``; returns the number of messages replayed."""
    run_date = RunDate(run_date)  # a DAG task hands the text of its param
    timelines = load_timelines(run.config, run_date, run.overrides)
    queues = None
    if run.cluster:
        queues = sorted({i.queue for tl in timelines.values() for snap in tl for i in snap.view.instances
                         if run.cluster in i.clusters})
    # The channel agents' trace, once per date on the driver (clwl.analyses.observed: a few rows per traced message,
    # read with pyarrow), broadcast to the replay's tasks, which stamp the timing columns on the rows it saw.
    observed = observed_day(run.config.lake, run_date)
    scope = ReplayScope(list(run.senders) if run.senders else None, queues)
    replayed = replay_messages(spark, run.config, run_date, run.profile, timelines, scope, observed=observed)
    return _write_staged(run, replayed, "routing_replay", run_date, ROUTING_REPLAY_OPTIONS)


@lineage_stage("detect", ("staging.routing_replay", *RUN_INPUTS), STAGING_KEYS)
def detect_stage(spark: SparkSession, run: PipelineRun, run_date: RunDate, ingest_counts: Optional[dict] = None,
                 started_at: Optional[datetime] = None) -> dict[str, int]:
    """Stage the gold tables of ``run_date`` (routing_replay, stuck_messages, distribution, run_summary)."""
    # Not cached: each use reads only the columns it needs from the staged table (persisting it whole for the
    # stage saves 4 small jobs a date on the samples, but holds every column of a 10M-message day in memory).
    run_date = RunDate(run_date)
    replayed = on_date(read_table(spark, run.out_lake, "staging.routing_replay"), run_date)
    timelines = load_timelines(run.config, run_date, run.overrides)
    stuck = stuck_messages(spark, run.lake, run_date, replayed)
    dist = distribution(spark, run.lake, run_date, replayed, timelines)
    n_stuck = _write_staged(run, stuck, "stuck_messages", run_date)
    _write_date(run, dist, "distribution", run_date)
    # MQ's answer beside the replay's: traced = messages with an observed destination; agreed / disagreed by
    # `agrees` (null exactly when there is no observed destination). A disagreement is a finding, not a failure.
    # Counted per sender, with each sender's first and last put (the trend facts' put spans): one aggregate for
    # both, the counts summed here.
    per_sender = replayed.groupBy("sending_qmgr").agg(
        F.count(F.lit(1)).alias("n"),
        F.count("observed_qmgr").alias("traced"),
        F.count(F.when(F.col("agrees"), 1)).alias("agreed"),
        F.count(F.when(~F.col("agrees"), 1)).alias("disagreed"),
        # The replay's wait against the channel agents' trace (timing_agrees: null when untraced).
        F.count("timing_agrees").alias("timing_observed"),
        F.count(F.when(F.col("timing_agrees"), 1)).alias("timing_agreed"),
        F.count(F.when(~F.col("timing_agrees"), 1)).alias("timing_disagreed"),
        F.min("put_time").alias("first"), F.max("put_time").alias("last")).collect()
    seen = {k: sum(int(r[k]) for r in per_sender) for k in (
        "n", "traced", "agreed", "disagreed", "timing_observed", "timing_agreed", "timing_disagreed")}
    n_msgs = int(seen["n"])
    # The staged distribution is small: read on the driver without the JVM (a Spark read costs a few jobs,
    # seconds in a fresh session, as load_timelines says).
    verdicts = run.out_lake.rows("staging.distribution", ["verdict"],
                                 filters=[("run_date", "=", run_date.day)])
    n_unexp = sum(v == "unexpected" for v in verdicts.column("verdict").to_pylist())
    counts = ingest_counts or _ingest_counts(run.lake, run_date)
    versions = {t: run.lake.version(t) for t in RUN_INPUTS if run.lake.exists(t)}
    warnings = day_warnings(spark, run.lake, run_date, n_msgs)
    summary = spark.createDataFrame([RUN_SUMMARY.row(
        run_id=run.run_id, run_date=run_date.day, started_at=started_at or datetime.now(UTC),
        finished_at=datetime.now(UTC), rows_read=int(counts.get("read", 0)),
        rows_accepted=int(counts.get("accepted", 0)), rows_quarantined=int(counts.get("quarantined", 0)),
        messages_replayed=n_msgs, messages_stuck=n_stuck, distribution_unexpected=n_unexp,
        traced=int(seen["traced"]), agreed=int(seen["agreed"]), disagreed=int(seen["disagreed"]),
        timing_observed=int(seen["timing_observed"]), timing_agreed=int(seen["timing_agreed"]),
        timing_disagreed=int(seen["timing_disagreed"]), table_versions=versions,
        status="staged", validation_result=None, warnings="; ".join(warnings) or None)], RUN_SUMMARY.schema)
    _write_date(run, summary, "run_summary", run_date)
    # The day's numbers for the trends across days: staged here, published with the others or not at all.
    from spark.trend_facts import facts_frame, gather_facts

    facts = gather_facts(spark, run, run_date, replayed, timelines, int(seen["traced"]), int(seen["agreed"]),
                         put_spans(r.asDict() for r in per_sender))
    _staging(run, "trend_facts")  # created first: a day without facts still has its (empty) staging table
    _write_date(run, facts_frame(spark, run_date, facts), "trend_facts", run_date)
    # Every queue's depth rebuilt from the day's activity trace (issue 44): staged here, published with the others.
    from spark.queue_depth import depth_frame

    _staging(run, "queue_depth")  # created first: a day without a trace still has its (empty) staging table
    _write_date(run, depth_frame(spark, run, run_date), "queue_depth", run_date)
    return {"messages": n_msgs, "stuck": n_stuck, "unexpected": n_unexp, "warnings": warnings}


def day_warnings(spark: SparkSession, lake: Lake, run_date: RunDate, messages: int) -> list[str]:
    """What is wrong with the run date's input as a whole, though every file of it was fine: today, a day with
    no put record at all (nothing to replay), with or without configuration captures. Published all the same
    (an empty day is a valid day), but said in the progress output, gold.run_summary.warnings and the report.

    ``messages``: the messages replayed; the silver tables are read only when it is 0 (a narrowed what-if run can
    replay none of a day that has put records)."""
    if messages:
        return []
    if lake.exists("silver.message_events") and on_date(read_table(spark, lake, "silver.message_events"),
                                                        run_date).limit(1).count():
        return []
    qmgrs = ([r[0] for r in on_date(read_table(spark, lake, "bronze.capture_files"), run_date)
              .select("observing_qmgr").distinct().orderBy("observing_qmgr").collect()]
             if lake.exists("bronze.capture_files") else [])
    if qmgrs:
        return [f"no put records for {run_date}: configuration captures from {len(qmgrs)} queue manager(s) "
                f"({', '.join(q or '?' for q in qmgrs)}) but not one put record (no puts*.csv|jsonl|json or *.amqsact file, or "
                "every record of it quarantined): the day is published with no messages"]
    return [f"no put records and no configuration captures for {run_date}: the day is published empty"]


@lineage_stage("publish", (*STAGING_KEYS, *RUN_INPUTS), GOLD_KEYS)  # with the gate's assertions and verdict
def publish_stage(spark: SparkSession, run: PipelineRun, run_date: RunDate, inputs: Optional[dict] = None):
    """Validate the staged tables of ``run_date`` and publish them to gold only if every suite passes.

    The caller holds the run's lake lock (`clwl run`, a DAG task's lake_writer); publish takes the lock of the lake
    it writes once (re-entrant on the run's; a what-if output lake's own), and is all or nothing for readers
    (`<out>/gold/_published.json`, see spark/publish.py)."""
    from spark.publish import PublishRequest, publish

    run_date = RunDate(run_date)
    # Each table is read at the version it has now, so the gate validates exactly what publish then writes,
    # and the two per-message tables are not cached for it (see PublishRequest's `uncached`).
    versions = {t: run.out_lake.version(f"staging.{t}") for t in GOLD_TABLES}
    staged = {t: _pinned(spark, run.out_lake, f"staging.{t}", run_date, versions[t]) for t in GOLD_TABLES}
    staged["run_summary"] = staged["run_summary"].withColumn("status", F.lit("published"))
    silver_events = _pinned(spark, run.lake, "silver.message_events", run_date)
    # Gold may take the staged files of the tables published as they are (not run_summary: it changes).
    return publish(spark, run.out_lake, run_date, run.run_id, PublishRequest(
        staged, silver={"message_events": silver_events}, uncached=("routing_replay", "silver.message_events"),
        staged={t: (run.staging(t), versions[t]) for t in GOLD_TABLES if t != "run_summary"}, made_from=inputs))


def _pinned(spark: SparkSession, lake: Lake, key: str, run_date: RunDate, version: Optional[int] = None) -> DataFrame:
    """``run_date``'s rows of the table ``key`` of ``lake``, as of ``version`` (default: its current version)."""
    return on_date(read_table(spark, lake, key, lake.version(key) if version is None else version), run_date)


@lineage_stage("report", GOLD_KEYS)
def report_stage(spark: Optional[SparkSession], run: PipelineRun, run_date: RunDate) -> tuple[str, str]:
    from clwl.lake.reports import forget_blocked_quality_docs
    from clwl.report import write_report

    run_date = RunDate(run_date)
    out = run.out
    forget_blocked_quality_docs(out.reports, str(run_date))  # the date is published now
    if reports_on_disk(out.reports):
        return _write_report(write_report, run, out, run_date)
    # A lake on an object store: the report is made in a local folder, then each of its files put under
    # <lake>/reports/<date>/ (the report writer writes files; the store takes whole objects).
    import tempfile
    from dataclasses import replace

    from clwl.lake.storage import delete_prefix
    from clwl.report.quality_docs import QUALITY_DIR

    with tempfile.TemporaryDirectory(prefix="clwl-report-") as tmp:
        html, md = _write_report(write_report, run, replace(out, reports=Path(tmp)), run_date)
        delete_prefix(out.reports / run_date / QUALITY_DIR)  # an earlier run's Data Docs pages: not this report's
        return _upload_report(Path(tmp), out.reports, Path(html), Path(md))


def reports_on_disk(location) -> bool:
    """Whether the report writers (they write files: the report, its charts, the Data Docs) can write at
    ``location`` itself; else they write in a local folder whose files are then put on the lake's object store.
    The one place here that asks which kind the lake is."""
    from clwl.lake.storage import is_object_store

    return not is_object_store(location)


def blocked_quality_docs(run: PipelineRun, run_date: str, validation_folder) -> str:
    """The Data Docs of a run the gate blocked (it has no report), in ``<reports>/<date>/quality-blocked/``
    beside the date's published report, if any (clwl/report/quality_docs.py); the line saying where, or why not."""
    import tempfile

    from clwl.lake.storage import StorageError, delete_prefix, put_object
    from clwl.report.quality_docs import BLOCKED_QUALITY_DIR, QualityDocsError, build_quality_docs

    target = run.out.reports / run_date / BLOCKED_QUALITY_DIR
    try:
        if reports_on_disk(target):
            index = build_quality_docs(validation_folder, Path(target), run.run_id, run_date)
            return f"the gate's results (Great Expectations Data Docs): {index}"
        with tempfile.TemporaryDirectory(prefix="clwl-quality-") as tmp:
            index = build_quality_docs(validation_folder, Path(tmp) / "site", run.run_id, run_date)
            delete_prefix(target)  # the previous blocked run's pages
            for f in sorted(p for p in index.parent.rglob("*") if p.is_file()):
                put_object(target / f.relative_to(index.parent).as_posix(), f.read_bytes())
        return f"the gate's results (Great Expectations Data Docs): {target / 'index.html'}"
    except (QualityDocsError, StorageError, OSError) as exc:  # the verdict stands without its site
        return f"WARNING: no Data Docs of the gate's results: {exc}"


def _write_report(write_report, run: PipelineRun, out: PipelineConfig, run_date: str) -> tuple[str, str]:
    # A what-if folder has no silver of its own: the channel timeline is the main lake's.
    html, md = write_report(out, run_date, run.run_id,
                            channel_status=run.reads("silver.channel_status"), whatif=run.whatif,
                            published=run.config if run.whatif is not None else None)
    return str(html), str(md)


def _upload_report(local: Path, reports, html: Path, md: Path) -> tuple[str, str]:
    """Put every file of the local report folder ``local`` under ``reports`` (a location on the object store);
    where the report and summary are now."""
    from clwl.lake.reports import MARKER
    from clwl.lake.storage import put_object

    # The marker last (clwl/lake/reports.py): a report cut short by a kill is not taken for the run's.
    for f in sorted((p for p in local.rglob("*") if p.is_file()), key=lambda p: (p.name == MARKER, str(p))):
        put_object(reports / f.relative_to(local).as_posix(), f.read_bytes())
    return (str(reports / html.relative_to(local).as_posix()), str(reports / md.relative_to(local).as_posix()))


def _ingest_counts(lake: Lake, run_date: str) -> dict:
    from spark.ingest.run_log import latest_log_rows

    if not lake.exists("silver.ingest_files"):
        return {}
    # The log gains a row per file at every run (unchanged files included): the date's counts are those of each
    # file's latest row, and a file removed since is not counted, so a re-run reports what the first run did.
    kept = [r for r in latest_log_rows(lake, [run_date]).values() if r["status"] != "removed"]
    return {k: sum(r[f"records_{k}"] or 0 for r in kept) for k in ("read", "accepted", "quarantined")}
