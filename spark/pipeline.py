"""The main job: ingest -> replay -> detect -> validate -> publish -> report, for one or more run dates.

Each stage is a function of (spark, config, run_date, ...) that reads its inputs from the lake and writes its
outputs there, so the Airflow DAG can run the stages as separate tasks and `clwl run` can run them in one
process. Write-audit-publish: replay and detection write to `<lake>/staging/`, the quality gate validates the
staged tables, and only then are they published to `<lake>/gold/` (spark/publish.py).

What-if runs (Airflow params or `clwl run --what-if`) read the same silver tables but write everything they
produce under `<lake>/whatif/<name>/`: the published tables are never touched.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from clwl.whatif import WhatIf  # noqa: F401 - re-exported: the overrides are pure Python, one schema for all
from spark.config import PipelineConfig
from spark.detect import distribution, stuck_messages
from spark.replay import ROUTING_REPLAY_OPTIONS, load_timelines, replay_messages
from spark.tables import path as table_path

UTC = timezone.utc
GOLD_TABLES = ("routing_replay", "stuck_messages", "distribution", "run_summary")
SILVER_INPUTS = ("silver.config_history", "silver.channel_status", "silver.message_events",
                 "silver.xmitq_contents", "silver.queue_accounting", "silver.quarantine", "silver.ingest_files")

Progress = Callable[[str], None]


@dataclass
class DateOutcome:
    run_date: str
    published: bool
    messages: int = 0
    stuck: int = 0
    unexpected: int = 0
    failures: list[str] = field(default_factory=list)
    validation_result: Optional[str] = None
    report_html: Optional[str] = None
    report_md: Optional[str] = None
    warnings: list[str] = field(default_factory=list)  # gold.run_summary.warnings (e.g. a day with no put record)


@dataclass
class RunOutcome:
    run_id: str
    dates: list[DateOutcome]
    ingest: object = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 0 if all(d.published for d in self.dates) else 4


def output_config(config: PipelineConfig, whatif: Optional[WhatIf]) -> PipelineConfig:
    if whatif is None:
        return config
    return replace(config, lake=config.lake / "whatif" / whatif.name,
                   reports=config.lake / "whatif" / whatif.name / "reports")


def _staging(config: PipelineConfig, table: str) -> str:
    return str(config.lake / "staging" / table)


def _write_date(df: DataFrame, path: str, run_date: str, options: Optional[dict] = None) -> None:
    from spark.publish import write_run_date  # staging and gold are written the same way

    write_run_date(df, path, date.fromisoformat(run_date), options)


def delta_version(path: str) -> int:
    from deltalake import DeltaTable

    return DeltaTable(path).version()


def rows_written(path: str, run_date: str) -> int:
    """Rows the latest write of ``run_date`` put into the table at ``path``, from its Delta commit metrics:
    counting them again would read the table back."""
    from deltalake import DeltaTable

    for commit in DeltaTable(path).history(10):
        params = commit.get("operationParameters") or {}
        metrics = commit.get("operationMetrics") or {}
        if run_date in str(params.get("predicate", "")) and commit.get("operation") == "WRITE":
            # A write of no rows adds no files, and Delta then records no numOutputRows at all.
            return int(metrics.get("numOutputRows", 0))
    raise LookupError(f"{path}: no recent write of run date {run_date} in the Delta history")


# -- stages ----------------------------------------------------------------------------------------------------
def replay_stage(spark: SparkSession, config: PipelineConfig, run_date: str, profile: str = "default",
                 whatif: Optional[WhatIf] = None, senders: Optional[list[str]] = None,
                 cluster: Optional[str] = None) -> int:
    """Replay ``run_date`` into ``<out>/staging/routing_replay``; returns the number of messages replayed.

    ``senders`` / ``cluster`` narrow the replay to some sending queue managers / the queues of one cluster;
    a narrowed run is a what-if run (it must not replace the published day with a part of it)."""
    if (senders or cluster) and whatif is None:
        raise ValueError("a run narrowed to some senders or a cluster must be a what-if run (give it a name)")
    out = output_config(config, whatif)
    timelines = load_timelines(config, run_date, whatif.apply if whatif else None)
    queues = None
    if cluster:
        queues = sorted({i.queue for tl in timelines.values() for snap in tl for i in snap.view.instances
                         if cluster in i.clusters})
    replayed = replay_messages(spark, config, run_date, profile, timelines, senders, queues)
    _write_date(replayed, _staging(out, "routing_replay"), run_date, ROUTING_REPLAY_OPTIONS)
    return rows_written(_staging(out, "routing_replay"), run_date)


def detect_stage(spark: SparkSession, config: PipelineConfig, run_date: str, run_id: str,
                 whatif: Optional[WhatIf] = None, ingest_counts: Optional[dict] = None,
                 started_at: Optional[datetime] = None) -> dict[str, int]:
    """Stage the gold tables of ``run_date`` (routing_replay, stuck_messages, distribution, run_summary)."""
    out = output_config(config, whatif)
    # Not cached: each use reads only the columns it needs from the staged table.
    replayed = (spark.read.format("delta").load(_staging(out, "routing_replay"))
                .where(F.col("run_date") == F.lit(run_date).cast("date")))
    timelines = load_timelines(config, run_date, whatif.apply if whatif else None)
    stuck = stuck_messages(spark, config, run_date, replayed)
    dist = distribution(spark, config, run_date, replayed, timelines)
    _write_date(stuck, _staging(out, "stuck_messages"), run_date)
    _write_date(dist, _staging(out, "distribution"), run_date)
    n_msgs = replayed.count()
    n_stuck = rows_written(_staging(out, "stuck_messages"), run_date)
    n_unexp = spark.read.format("delta").load(_staging(out, "distribution")).where(
        (F.col("run_date") == F.lit(run_date).cast("date")) & (F.col("verdict") == "unexpected")).count()
    counts = ingest_counts or _ingest_counts(spark, config, run_date)
    versions = {t: delta_version(table_path(config, t)) for t in SILVER_INPUTS if _exists(table_path(config, t))}
    warnings = day_warnings(spark, config, run_date, n_msgs)
    summary = spark.createDataFrame([(
        run_id, datetime.fromisoformat(run_date).date(), started_at or datetime.now(UTC), datetime.now(UTC),
        int(counts.get("read", 0)), int(counts.get("accepted", 0)), int(counts.get("quarantined", 0)),
        n_msgs, n_stuck, n_unexp, versions, "staged", None, "; ".join(warnings) or None)],
        "run_id string, run_date date, started_at timestamp, finished_at timestamp, rows_read long, "
        "rows_accepted long, rows_quarantined long, messages_replayed long, messages_stuck long, "
        "distribution_unexpected long, table_versions map<string,long>, status string, validation_result string, "
        "warnings string")
    _write_date(summary, _staging(out, "run_summary"), run_date)
    return {"messages": n_msgs, "stuck": n_stuck, "unexpected": n_unexp, "warnings": warnings}


def day_warnings(spark: SparkSession, config: PipelineConfig, run_date: str, messages: int) -> list[str]:
    """What is wrong with the run date's input as a whole, though every file of it was fine: today, a day with
    no put record at all (nothing to replay), with or without configuration captures. Published all the same
    (an empty day is a valid day), but said in the progress output, gold.run_summary.warnings and the report.

    ``messages``: the messages replayed; the silver tables are read only when it is 0 (a narrowed what-if run can
    replay none of a day that has put records)."""
    if messages:
        return []
    day = F.col("run_date") == F.lit(run_date).cast("date")
    events = table_path(config, "silver.message_events")
    if _exists(events) and spark.read.format("delta").load(events).where(day).limit(1).count():
        return []
    captures = table_path(config, "bronze.capture_files")
    qmgrs = ([r[0] for r in spark.read.format("delta").load(captures).where(day)
              .select("observing_qmgr").distinct().orderBy("observing_qmgr").collect()]
             if _exists(captures) else [])
    if qmgrs:
        return [f"no put records for {run_date}: configuration captures from {len(qmgrs)} queue manager(s) "
                f"({', '.join(q or '?' for q in qmgrs)}) but not one put record (no puts*.csv|jsonl|json file, or "
                "every record of it quarantined): the day is published with no messages"]
    return [f"no put records and no configuration captures for {run_date}: the day is published empty"]


def publish_stage(spark: SparkSession, config: PipelineConfig, run_date: str, run_id: str,
                  whatif: Optional[WhatIf] = None):
    """Validate the staged tables of ``run_date`` and publish them to gold only if every suite passes.

    Holds the lake lock (re-entrant: `clwl run` already holds it; publish also locks a what-if output lake), and
    the publish is all or nothing for readers (`<out>/gold/_published.json`, see spark/publish.py)."""
    from clwl.lakelock import lake_lock
    from spark.publish import publish

    out = output_config(config, whatif)
    with lake_lock(config.lake, purpose=f"publish {run_id} {run_date}"):
        # Each table is read at the version it has now, so the gate validates exactly what publish then writes,
        # and the two per-message tables are not cached for it (see publish's `uncached`).
        staged = {t: _pinned(spark, _staging(out, t), run_date) for t in GOLD_TABLES}
        staged["run_summary"] = staged["run_summary"].withColumn("status", F.lit("published"))
        silver_events = _pinned(spark, table_path(config, "silver.message_events"), run_date)
        return publish(spark, out, run_date, run_id, staged,
                       extra_checks={"silver_message_events": silver_events},
                       uncached=("routing_replay", "silver.message_events"))


def _pinned(spark: SparkSession, path: str, run_date: str) -> DataFrame:
    """``run_date``'s rows of the Delta table at ``path``, as of its current version."""
    return (spark.read.format("delta").option("versionAsOf", delta_version(path)).load(path)
            .where(F.col("run_date") == F.lit(run_date).cast("date")))


def report_stage(spark: Optional[SparkSession], config: PipelineConfig, run_date: str, run_id: str,
                 whatif: Optional[WhatIf] = None) -> tuple[str, str]:
    from spark.report import write_report

    # A what-if folder has no silver of its own: the channel timeline is the main lake's.
    html, md = write_report(spark, output_config(config, whatif), run_date, run_id,
                            channel_status=config.table_path("silver", "channel_status"), whatif=whatif,
                            published=config if whatif is not None else None)
    return str(html), str(md)


def _exists(path: str) -> bool:
    return (Path(path) / "_delta_log").is_dir()


def _ingest_counts(spark: SparkSession, config: PipelineConfig, run_date: str) -> dict:
    p = table_path(config, "silver.ingest_files")
    if not _exists(p):
        return {}
    from pyspark.sql import Window

    # The log gains a row per file at every run (unchanged files included): the date's counts are those of each
    # file's latest row, and a file removed since is not counted, so a re-run reports what the first run did.
    latest = Window.partitionBy("source_file").orderBy(F.col("ingested_at").desc(), F.col("ingest_run_id").desc())
    r = (spark.read.format("delta").load(p).where(F.col("run_date") == F.lit(run_date).cast("date"))
         .withColumn("_n", F.row_number().over(latest)).where((F.col("_n") == 1) & (F.col("status") != "removed"))
         .agg(F.sum("records_read").alias("read"), F.sum("records_accepted").alias("accepted"),
              F.sum("records_quarantined").alias("quarantined")).collect()[0])
    return {"read": r.read or 0, "accepted": r.accepted or 0, "quarantined": r.quarantined or 0}


def landing_dates(config: PipelineConfig) -> list[str]:
    from spark.ingest import discover_landing

    dates, _, _ = discover_landing(config.landing)
    return dates


def run_pipeline(config: PipelineConfig, run_dates: Optional[list[str]] = None, profile: str = "default",
                 whatif: Optional[WhatIf] = None, spark: Optional[SparkSession] = None,
                 progress: Progress = print, ingest_first: bool = True, senders: Optional[list[str]] = None,
                 cluster: Optional[str] = None) -> RunOutcome:
    """`clwl run`: every stage for every run date (default: every date in the landing folder).

    The whole run holds the lake lock `<lake>/_lock` (clwl/lakelock.py), taken before Spark starts: when another
    writer holds it, clwl.lakelock.LakeBusy is raised at once (after $CLWL_LOCK_WAIT seconds, when set)."""
    from clwl.lakelock import lake_lock

    t0 = _time.perf_counter()
    run_id = new_run_id()
    with lake_lock(config.lake, purpose=f"clwl run {run_id}", progress=progress):
        return _run_pipeline(config, run_dates, profile, whatif, spark, progress, ingest_first, senders, cluster,
                             run_id, t0)


def _run_pipeline(config: PipelineConfig, run_dates: Optional[list[str]], profile: str, whatif: Optional[WhatIf],
                  spark: Optional[SparkSession], progress: Progress, ingest_first: bool,
                  senders: Optional[list[str]], cluster: Optional[str], run_id: str, t0: float) -> RunOutcome:
    from spark.ingest import ingest
    from spark.session import get_spark

    dates = run_dates or landing_dates(config)
    if whatif is not None:
        # Before Spark starts: overrides naming what the day does not know are refused (WhatIfError), and a
        # what-if never ingests, so it writes nothing outside <lake>/whatif/<name>/ (output_config).
        check_whatif(config, dates, whatif)
        ingest_first = False
    spark = spark or get_spark(config.master)
    seconds: dict[str, float] = {}
    summary = None
    if ingest_first:
        progress(f"[1/5] ingest {len(dates)} date(s) from {config.landing}")
        t = _time.perf_counter()
        summary = ingest(config, dates, spark=spark, progress=lambda m: progress("      " + m))
        seconds["ingest"] = _time.perf_counter() - t
    outcomes = []
    for d in dates:
        started = datetime.now(UTC)
        t = _time.perf_counter()
        progress(f"[2/5] {d}: replay (profile {profile}{', what-if ' + whatif.name if whatif else ''})")
        n = replay_stage(spark, config, d, profile, whatif, senders, cluster)
        seconds["replay"] = seconds.get("replay", 0) + _time.perf_counter() - t
        progress(f"      {n} messages replayed")
        t = _time.perf_counter()
        progress(f"[3/5] {d}: detect stuck messages and distribution")
        counts = detect_stage(spark, config, d, run_id, whatif, None, started)
        seconds["detect"] = seconds.get("detect", 0) + _time.perf_counter() - t
        progress(f"      {counts['stuck']} stuck, {counts['unexpected']} unexpected distribution rows")
        for warning in counts.get("warnings", ()):
            progress(f"      WARNING: {warning}")
        progress(f"[4/5] {d}: validate and publish")
        res = publish_stage(spark, config, d, run_id, whatif)
        for stage, key in (("validate", "validate"), ("publish", "write")):
            seconds[stage] = seconds.get(stage, 0) + res.seconds.get(key, 0)
        out = DateOutcome(d, bool(res.published), counts["messages"], counts["stuck"], counts["unexpected"],
                          list(res.failures), str(res.result_path) if res.result_path else None)
        out.warnings = list(counts.get("warnings", ()))
        if res.published:
            t = _time.perf_counter()
            progress(f"[5/5] {d}: report")
            out.report_html, out.report_md = report_stage(spark, config, d, run_id, whatif)
            seconds["report"] = seconds.get("report", 0) + _time.perf_counter() - t
        else:
            progress(f"      quality gate blocked publishing {d}: {'; '.join(res.failures)[:500]}")
        outcomes.append(out)
    seconds["total"] = _time.perf_counter() - t0
    return RunOutcome(run_id, outcomes, summary, seconds)


def check_whatif(config: PipelineConfig, run_dates: list[str], whatif: WhatIf) -> None:
    """:class:`clwl.whatif.WhatIfError` when ``whatif`` cannot run on ``run_dates``: a date with nothing ingested
    (a what-if replays silver as it is), or a channel, queue manager or queue instance that no sending queue
    manager's configuration of that day knows. Reads silver history with deltalake: no Spark."""
    from clwl.whatif import WhatIfError, unknown_names

    for d in run_dates:
        if not _exists(table_path(config, "silver.config_history")):
            raise WhatIfError(f"what-if {whatif.name}: nothing ingested in {config.lake}; run `clwl run --date {d}` "
                              f"first (a what-if replays the ingested day)")
        timelines = load_timelines(config, d)
        if not timelines:
            raise WhatIfError(f"what-if {whatif.name}: no configuration ingested for {d}; run `clwl run --date "
                              f"{d}` first (a what-if replays the ingested day)")
        views = [snap.view for tl in timelines.values() for snap in tl]
        channels = {c.name for v in views for c in (*v.channels, *v.local_receivers)}
        qmgrs = ({v.qmgr.name for v in views} | {c.qmgr for v in views for c in v.channels}
                 | {i.qmgr for v in views for i in v.instances})
        instances = {f"{i.queue}@{i.qmgr}" for v in views for i in v.instances}
        unknown = unknown_names(whatif, channels, qmgrs, instances)
        if unknown:
            raise WhatIfError(f"what-if {whatif.name}: not in the configuration of {d}: {', '.join(unknown)}")


def new_run_id() -> str:
    import uuid

    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"

